import ByteStreams
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The disk tier's limits: expired entries, the size limit (least recently used first), and
// temporary files left by writers that stopped, removed after a store and at prune.

extension DiskCache {
    /// Applies the limits now: removes expired entries, then least-recently-used entries until
    /// the files fit ``maximumSize``, and temporary files more than an hour old (left by
    /// writers that stopped).
    /// Files another user owns count as entries: they take room, and the directory is ours.
    /// A file that cannot be removed (a directory that may not be written, a file that may
    /// not be changed) stays, is listed in ``PruneResult/failures``, and the next one is tried:
    /// the limits are then unmet (``PruneResult/remainingBytes``,
    /// ``PruneResult/remainingExpiredCount``).
    /// - Throws: ``CacheDirectoryError``; the file system's errors listing the directory.
    @discardableResult
    public func prune() throws -> PruneResult {
        guard let directory = try CacheDirectory.open(directory, creating: false) else { return PruneResult() }
        return try enforceLimits(in: directory, justStored: nil)
    }

    @discardableResult
    func enforceLimits(in directory: CacheDirectory, justStored: String?) throws -> PruneResult {
        var result = PruneResult()
        let now = Date().timeIntervalSince1970
        var live: [(name: String, size: Int64, lastUse: Double, device: UInt, inode: UInt)] = []
        for fileName in try directory.names() {
            let name = fileName.description
            let isEntry = EntryName(fileName: name) != nil
            guard isEntry || TemporaryEntry.isTemporary(name), let info = try directory.status(of: fileName),
                  info.st_mode & S_IFMT == S_IFREG else { continue }
            let size = Int64(info.st_size)
            let lastUse = info.modificationSeconds
            if !isEntry {
                guard now - lastUse > 3600 else { continue }
                do {
                    if try directory.unlink(fileName) {
                        result.abandonedTemporaryCount += 1
                        result.removedBytes += size
                    }
                } catch {
                    result.failures.append(CacheRemovalFailure(path: directory.display(fileName), error: error))
                }
            } else if let maximumAgeSeconds, now - lastUse > maximumAgeSeconds, name != justStored {
                switch Self.removeIfStill(fileName, in: directory, device: UInt(info.st_dev), inode: UInt(info.st_ino),
                                          failures: &result.failures) {
                case .removed:
                    result.expiredCount += 1
                    result.removedBytes += size
                case .replaced: break
                case .failed:
                    result.remainingExpiredCount += 1
                    result.remainingBytes += size
                }
            } else {
                live.append((name, size, lastUse, UInt(info.st_dev), UInt(info.st_ino)))
            }
        }
        var total = live.reduce(Int64(0)) { $0 + $1.size }
        guard let maximumSize = maximumSize.map(Int64.init) else {
            result.remainingBytes += total
            return result
        }
        /// Evicts `entry`; returns whether its room is free now: removed, or since taken by a
        /// newer entry (whose size is not known here, as for one stored after the listing).
        /// One that could not be removed stays and takes its room: the next ones are tried.
        func evict(_ entry: (name: String, size: Int64, lastUse: Double, device: UInt, inode: UInt)) -> Bool {
            switch Self.removeIfStill(Pathname(entry.name), in: directory, device: entry.device, inode: entry.inode,
                                      failures: &result.failures) {
            case .removed:
                result.evictedCount += 1
                result.removedBytes += entry.size
                return true
            case .replaced: return true
            case .failed: return false
            }
        }
        // An entry that alone is over the limit is not kept, and costs no other entry its place.
        if let index = live.firstIndex(where: { $0.name == justStored }), live[index].size > maximumSize {
            let entry = live.remove(at: index)
            if evict(entry) { total -= entry.size }
        }
        // Oldest first. The entry just stored is evicted only when it alone is too large (above):
        // when others that cannot be removed keep the files over the limit, it stays with them.
        live.sort { ($0.lastUse, $0.name) < ($1.lastUse, $1.name) }
        for entry in live where total > maximumSize && entry.name != justStored {
            if evict(entry) { total -= entry.size }
        }
        result.remainingBytes += total
        return result
    }

    /// What became of an entry the limits said to remove.
    private enum Removal {
        case removed
        /// Gone before it was removed, or replaced by a newer entry, which stays.
        case replaced
        /// It could not be removed; the failure was added to the list.
        case failed
    }

    /// Removes the entry `name` only if it is still the file that was listed: another
    /// process's store renamed into place meanwhile is newer, and stays. A failure to remove
    /// it is added to `failures`.
    private static func removeIfStill(_ name: Pathname, in directory: CacheDirectory, device: UInt, inode: UInt,
                                      failures: inout [CacheRemovalFailure]) -> Removal {
        do {
            let removed = try EntryFile.removeOrThrow(name, in: directory) { UInt($0.st_dev) == device && UInt($0.st_ino) == inode }
            return removed ? .removed : .replaced
        } catch {
            failures.append(CacheRemovalFailure(path: directory.display(name), error: error))
            return .failed
        }
    }
}

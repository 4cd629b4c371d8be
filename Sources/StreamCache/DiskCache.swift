import GzipStreams
import SecretStreams
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

/// The disk tier: one file per entry in a directory, written through the streams as plain bytes
/// → `GzipOutputStream` → ``EncryptingOutputStream`` (with a key) → a temporary file, renamed
/// into place when complete. The layout of a file is in the StreamCache documentation ("The cache").
///
/// - An entry's file name is a hash of its key, never the key (keyed by the encryption key
///   when there is one, so that the names reveal nothing without it).
/// - Lookups check everything: the header, the binding of the gzip member to the key, every
///   encrypted chunk, the CRC-32, ISIZE and the plain size. A damaged entry is removed and the
///   lookup is a miss (``CacheMiss/damaged(_:)``), never wrong data.
/// - Limits: ``maximumSize`` (bytes of all entry files) evicts least-recently-used entries
///   after each store and at ``prune()``; ``maximumAge`` makes older entries misses, removed
///   when looked up or pruned. Use is the file's modification time, set at store and at each hit.
///
/// - A directory it can trust: every operation opens the directory once with
///   `O_DIRECTORY | O_NOFOLLOW` and refuses it (``CacheDirectoryError``) unless the effective
///   user owns it and neither group nor others may write it, as ssh's `StrictModes` does;
///   a directory made by a store is made 0700 and then checked the same way. Every name in
///   it is taken relative to that descriptor (`openat(2)`, `renameat(2)`, `linkat(2)`,
///   `unlinkat(2)`, `fstatat(2)`, `fdopendir(3)`). An entry file owned by another user is a
///   miss, never data (``CacheMiss/Damage/foreignOwner(_:)``), and is removed.
/// - With a key, an entry's header (its flags and plain size) is authenticated before it is
///   believed, by lookups and by ``entries()`` (`EntryFormat`'s seal). Without one, nothing
///   is authenticated: the directory's trust is all there is.
///
/// Thread-safe, and safe for several processes sharing the directory: a file appears under its
/// name only complete (`rename(2)`), so a reader never sees a half-written entry, and the last
/// store of a key wins. Memory stays flat whatever the entry size: the streams' fixed buffers.
/// `Sendable` by construction: its properties are constants, and each call opens streams of
/// its own (the streams it hands out are the caller's, not shared).
public final class DiskCache: Sendable {
    /// The directory holding the entries.
    public let directory: Pathname
    /// The most bytes all entry files may hold; `nil` for no limit.
    public let maximumSize: Int?
    /// The longest time since an entry's last use before it expires; `nil` for no limit.
    public let maximumAge: Duration?
    /// The gzip compression level of new entries, `0...12`.
    public let compressionLevel: Int
    /// The deflating threads of a store (`GzipOutputStream`'s `threads`), `1...256`.
    public let compressionThreads: Int
    /// Whether entries are encrypted (a key was given).
    public var isEncrypted: Bool { key != nil }
    private let key: SecretStreamKey?
    private let hashKey: SecretStreamKey?

    /// A disk cache in `directory`, created (mode 0700, parents too) by the first store: a
    /// lookup, listing or prune of a missing directory finds nothing and creates nothing.
    /// Nothing is opened here: each operation opens and checks the directory.
    /// - Parameters:
    ///   - directory: The entries' directory; `nil` for ``defaultDirectory(environment:)``.
    ///   - key: The 32-byte key to encrypt entries with; `nil` stores them compressed only.
    ///   - maximumSize: The most bytes of entry files, `>= 0`; `nil` for no limit.
    ///   - maximumAge: How long an unused entry lives, `> 0`; `nil` for no limit.
    ///   - compressionLevel: The gzip level of new entries, `0...12` (10 to 12: libdeflate's,
    ///     through the chunks engine); default 6.
    ///   - compressionThreads: Deflating threads per store, `1...256`; default 1. A store
    ///     deflates independent chunks on that many worker threads, as `gzstream pack` does
    ///     (`DeflateEngine.chunks`): the entry's bytes do not depend on the thread count.
    /// - Throws: ``ByteStreamError`` `invalidArgument` for a value out of range or an empty
    ///   `directory`, or when there is no directory and no `XDG_CACHE_HOME` or `HOME`.
    public init(directory: String? = nil, key: SecretStreamKey? = nil, maximumSize: Int? = nil,
                maximumAge: Duration? = nil, compressionLevel: Int = 6, compressionThreads: Int = 1) throws {
        let operation = "create DiskCache"
        if let maximumSize {
            try requireArgument(maximumSize >= 0, "maximumSize", "must be 0 or more, not \(maximumSize)", operation: operation)
        }
        if let maximumAge {
            try requireArgument(maximumAge > .zero, "maximumAge", "must be more than zero", operation: operation)
        }
        try requireArgument(compressionLevel, in: extendedCompressionLevels, "compressionLevel", operation: operation)
        try requireArgument(compressionThreads, in: threadCounts, "compressionThreads", operation: operation)
        guard let path = directory ?? Self.defaultDirectory() else {
            throw ByteStreamError(.invalidArgument(name: "directory", message: "none given, and neither XDG_CACHE_HOME nor HOME is set"),
                                  operation: operation)
        }
        // Entry paths are the directory + "/" + a name: "" would put them in "/".
        try requireArgument(!path.isEmpty, "directory", "must not be empty", operation: operation)
        self.directory = Pathname(path)
        self.key = key
        self.hashKey = try key.map(EntryName.hashKey(derivedFrom:))
        self.maximumSize = maximumSize
        self.maximumAge = maximumAge
        self.compressionLevel = compressionLevel
        self.compressionThreads = compressionThreads
    }

    /// `$XDG_CACHE_HOME/gzstream` when that variable holds an absolute path, else
    /// `$HOME/.cache/gzstream` (the XDG Base Directory Specification); `nil` without either.
    /// - Parameter environment: The variables to look in; default: this process's.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") {
            return base + "/gzstream"
        }
        if let home = environment["HOME"], !home.isEmpty {
            return home + "/.cache/gzstream"
        }
        return nil
    }

    // MARK: Storing

    /// Stores everything `input` holds under `key`, replacing any entry, and then applies the
    /// size limit. Nothing changes unless the whole input was read and written: the entry
    /// appears complete or not at all.
    /// - Parameters:
    ///   - input: The plain bytes, read to its end (opened if needed, not closed).
    ///   - key: The entry's key, any string.
    /// - Returns: The stored entry; when the entry alone is larger than ``maximumSize`` it was
    ///   evicted at once, and ``CacheEntryInfo/storedSize`` says how large it was.
    /// - Throws: ``CacheDirectoryError`` for a directory not to trust; `input`'s error, or the
    ///   file system's (``ByteStreamError``), with no file left.
    /// Memory: fixed buffers of the streams, whatever the input's size. Blocks.
    @discardableResult
    public func store(from input: ByteInputStream, forKey key: String) throws -> CacheEntryInfo {
        try storeApplyingLimits(from: input, forKey: key).entry
    }

    /// Stores as ``store(from:forKey:)`` does, and says what applying the size limit then did.
    /// - Returns: The stored entry, and what the size limit removed (`nil` without
    ///   ``maximumSize``). A file it could not remove, or a directory it could not list, is in
    ///   ``PruneResult/failures``, not thrown: the entry is stored all the same, and the limit
    ///   may be unmet (``PruneResult/remainingBytes``).
    /// - Throws: As ``store(from:forKey:)``.
    public func storeApplyingLimits(from input: ByteInputStream, forKey key: String) throws
        -> (entry: CacheEntryInfo, limits: PruneResult?) {
        let name = entryName(for: key)
        guard let directory = try CacheDirectory.open(directory, creating: true) else {
            preconditionFailure("a directory opened with creating: true is there")
        }
        let temporary = try TemporaryEntry(in: directory)
        var published = false
        defer { if !published { temporary.discard() } }
        let file = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: false,
                                    displayName: temporary.path)
        try file.openOrThrow()
        // The seal's place is kept: it is written last, once the plain size is known.
        try file.writeAll(EntryFormat.encode(.init(isEncrypted: isEncrypted, plainSize: 0))
                          + [UInt8](repeating: 0, count: isEncrypted ? EntryFormat.sealByteCount : 0))
        let payload: ByteOutputStream = if let encryptionKey = self.key {
            try EncryptingOutputStream(wrapping: file, key: encryptionKey)
        } else { file }
        let gzip = try GzipOutputStream(wrapping: payload, level: compressionLevel,
                                        header: EntryFormat.gzipHeader(for: name), chunkSize: 64 << 10,
                                        threads: compressionThreads, engine: .chunks)
        let plainSize: Int64
        do {
            plainSize = Int64(try input.copy(to: gzip, chunkSize: 64 << 10))
            try gzip.closeOrThrow()
        } catch {
            (payload as? EncryptingOutputStream)?.abandon()
            gzip.abandon()
            throw error
        }
        var leading = EntryFormat.encode(.init(isEncrypted: isEncrypted, plainSize: plainSize))
        if let encryptionKey = self.key {
            let payloadHead = try readBytes(of: temporary.descriptor, count: EntryFormat.payloadHeadByteCount,
                                            at: Int64(EntryFormat.payloadOffset(isEncrypted: true)), target: temporary.path)
            leading += try EntryFormat.seal(header: leading, name: name, payloadHead: payloadHead, key: encryptionKey)
        }
        try SystemCalls.write(temporary.descriptor, leading, at: 0, target: temporary.path)
        let storedSize = Int64(try SystemCalls.status(of: temporary.descriptor, target: temporary.path).st_size)
        try temporary.publish(as: Pathname(name.fileName))
        published = true
        let info = CacheEntryInfo(name: name.fileName, storedSize: storedSize, plainSize: plainSize,
                                  lastUse: Date().timeIntervalSince1970, isEncrypted: isEncrypted)
        // The entry is stored: a failure to apply the limits now is said in the result, not
        // thrown as a failed store.
        guard maximumSize != nil else { return (info, nil) }
        do {
            return (info, try enforceLimits(in: directory, justStored: name.fileName))
        } catch {
            return (info, PruneResult(failures: [CacheRemovalFailure(path: directory.path.description, error: error)]))
        }
    }

    /// Stores `bytes` under `key`; see ``store(from:forKey:)``.
    @discardableResult
    public func store(_ bytes: some Collection<UInt8>, forKey key: String) throws -> CacheEntryInfo {
        try store(from: MemoryInputStream(bytes: bytes), forKey: key)
    }

    // MARK: Looking up

    /// The entry under `key` as a stream of its plain bytes, or why there is none.
    ///
    /// A hit is open, its first bytes decoded and its binding to `key` checked, and marks the
    /// entry used. An entry found damaged here is removed and reported as a miss. Without
    /// `verifyingFirst`, damage further in (a cut or changed chunk, a CRC-32 mismatch) is the
    /// stream's error when reached (``CacheMiss/damaged(_:)``, entry removed) and the bytes
    /// read before it must be discarded; with it, the whole entry is read and checked once
    /// first, so a hit's stream fails only on I/O errors, at the price of reading twice.
    /// - Throws: ``CacheDirectoryError`` for a directory not to trust; the file system's errors
    ///   other than a missing file (``ByteStreamError``).
    public func inputStream(forKey key: String, verifyingFirst: Bool = false) throws -> CacheLookup<CacheEntryInputStream> {
        let name = entryName(for: key)
        guard let directory = try CacheDirectory.open(directory, creating: false) else { return .miss(.notFound) }
        let fileName = Pathname(name.fileName)
        let file: EntryFile
        do {
            guard let opened = try EntryFile(opening: fileName, in: directory) else { return .miss(.notFound) }
            file = opened
        } catch let found as DamageFound {
            // Not a regular file: a link is removed (not what it points to); a directory stays;
            // a regular file renamed into place since the open is a newer entry, and stays.
            EntryFile.remove(fileName, in: directory) { $0.st_mode & S_IFMT != S_IFREG && $0.st_mode & S_IFMT != S_IFDIR }
            return .miss(.damaged(found.damage))
        }
        // Whoever owns the file could have written any bytes in it, its time included.
        if file.isForeign {
            file.removeIfUnchanged()
            return .miss(.damaged(.foreignOwner(UInt32(file.owner))))
        }
        if let maximumAgeSeconds {
            let age = Date().timeIntervalSince1970 - file.lastUse
            if age > maximumAgeSeconds {
                file.removeIfUnchanged()
                return .miss(.expired(age: Int64(age)))
            }
        }
        let header: EntryFormat.Header
        do {
            let leading = try file.readLeadingBytes()
            header = try EntryFormat.decode(leading)
            guard header.isEncrypted == isEncrypted else {
                throw DamageFound(damage: .encryptionMismatch(entryIsEncrypted: header.isEncrypted))
            }
            if let key = self.key { try EntryFormat.checkSeal(leading, name: name, key: key) }
        } catch let found as DamageFound {
            file.removeIfUnchanged()
            return .miss(.damaged(found.damage))
        }
        do {
            if verifyingFirst {
                let check = try CacheEntryInputStream(file: file, header: header, name: name, key: self.key, closesFile: false)
                defer { check.close() }
                try check.verify()
            }
            let stream = try CacheEntryInputStream(file: file, header: header, name: name, key: self.key)
            try stream.readAhead()
            file.markUsed()
            return .hit(stream, tier: .disk)
        } catch let miss as CacheMiss {
            return .miss(miss)
        }
    }

    /// The plain bytes of the entry under `key`, read and checked whole, or why there are none.
    /// - Parameters:
    ///   - key: The entry's key, any string (only its hash names the file).
    ///   - limit: The most bytes to accept; a larger entry throws (it is not damaged) once
    ///     `limit` bytes are read. The header's plain size is not trusted for this: a size
    ///     changed in it is damage, found by reading.
    /// - Throws: The file system's errors; ``ByteStreamError`` `lengthLimitExceeded` over `limit`.
    public func data(forKey key: String, limit: Int = Int.max) throws -> CacheLookup<Data> {
        let lookup = try inputStream(forKey: key)
        guard case .hit(let stream, _) = lookup else { return .miss(lookup.miss ?? .notFound) }
        defer { stream.close() }
        do {
            return .hit(Data(try stream.readToEnd(limit: limit)), tier: .disk)
        } catch let miss as CacheMiss {
            return .miss(miss)
        }
    }

    // MARK: Removing (the limits, prune among them: DiskCacheLimits.swift)

    /// Removes the entry under `key`. Returns whether there was one.
    /// - Throws: ``CacheDirectoryError``; the `unlinkat(2)` error other than a missing file.
    @discardableResult
    public func removeEntry(forKey key: String) throws -> Bool {
        guard let directory = try CacheDirectory.open(directory, creating: false) else { return false }
        return try directory.unlink(Pathname(entryName(for: key).fileName))
    }

    /// Removes every entry, and every temporary file (including those of writers still at
    /// work, whose stores then fail). Returns the number of entries removed. A directory under
    /// such a name stays, as a lookup leaves it.
    /// - Throws: ``CacheDirectoryError``; the file system's errors.
    @discardableResult
    public func removeAll() throws -> Int {
        guard let directory = try CacheDirectory.open(directory, creating: false) else { return 0 }
        var removed = 0
        for name in try directory.names() {
            let isEntry = EntryName(fileName: name.description) != nil
            guard isEntry || TemporaryEntry.isTemporary(name.description), let info = try directory.status(of: name),
                  info.st_mode & S_IFMT != S_IFDIR else { continue }
            if try directory.unlink(name), isEntry { removed += 1 }
        }
        return removed
    }

    /// The entries, least recently used first. Files that are not entries are left out.
    ///
    /// With a key, an entry's plain size and encryption flag are given only once its header is
    /// authenticated (its seal checked: no more of the entry is decrypted); an entry whose
    /// header is not (changed, another key's, not encrypted, an older format) is listed with
    /// `nil` for both, so that its file's size still shows. Without a key, the header is not
    /// authenticated: its values are what the file says. A file owned by another user is
    /// listed with `nil` for both, its header not read.
    /// - Throws: ``CacheDirectoryError``; the file system's errors reading the directory.
    public func entries() throws -> [CacheEntryInfo] {
        guard let directory = try CacheDirectory.open(directory, creating: false) else { return [] }
        var result: [CacheEntryInfo] = []
        for fileName in try directory.names() {
            guard let name = EntryName(fileName: fileName.description),
                  let file = try? EntryFile(opening: fileName, in: directory) else { continue }
            var header: EntryFormat.Header?
            if !file.isForeign, let leading = try? file.readLeadingBytes(), let decoded = try? EntryFormat.decode(leading) {
                if let key {
                    if decoded.isEncrypted, (try? EntryFormat.checkSeal(leading, name: name, key: key)) != nil { header = decoded }
                } else {
                    header = decoded
                }
            }
            result.append(CacheEntryInfo(name: name.fileName, storedSize: file.size, plainSize: header?.plainSize,
                                         lastUse: file.lastUse, isEncrypted: header?.isEncrypted))
            file.close()
        }
        return result.sorted { ($0.lastUse, $0.name) < ($1.lastUse, $1.name) }
    }

    // MARK: Names

    /// The file name of `key`'s entry: 64 hexadecimal digits.
    public func entryFileName(forKey key: String) -> String { entryName(for: key).fileName }

    private func entryName(for key: String) -> EntryName { EntryName(key: key, hashKey: hashKey) }

    /// ``maximumAge`` in seconds.
    var maximumAgeSeconds: Double? {
        maximumAge.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
    }
}

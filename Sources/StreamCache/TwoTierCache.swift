import GzipStreams
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The classic pair: a ``MemoryCache`` in front of a ``DiskCache``. Lookups try memory, then
/// disk, then report a miss; a disk hit of at most ``promotionLimit`` plain bytes is copied into
/// memory. Stores go to both: to disk always, to memory when the value is at most
/// ``promotionLimit`` bytes (and no other store or removal overlapped it, whose disk change
/// may have come last: then memory is left without the key, for the next lookup to read the
/// disk). When no store or removal is under way, memory agrees with the disk.
///
/// Memory entries cost their size in bytes. Each process has its own memory tier: a value
/// another process stores on disk is seen here once this process's memory copy is evicted or
/// removed (``removeValue(forKey:)``), so processes sharing a directory should store a key
/// once or keep the memory tier small. Thread-safe, and `Sendable` by construction: two
/// `Sendable` tiers and constants, the store bookkeeping behind a lock.
public final class TwoTierCache: Sendable {
    /// The memory tier, keyed by the cache keys; costs are sizes in bytes.
    public let memory: MemoryCache<Data>
    /// The disk tier.
    public let disk: DiskCache
    /// The largest value in bytes kept in memory, and so the most a lookup reads into memory
    /// before handing out a stream.
    public let promotionLimit: Int
    /// Counts the starts and ends of stores and removals, so that a lookup that read the disk
    /// while one of any key was under way does not promote what may be the old value, and a
    /// store that overlapped another does not leave its value in memory over the other's. Stores,
    /// removals and promotions change memory under this lock.
    private let generation = QueueGuarded<UInt64>(0, label: "gzstream.cache.generation")

    /// A cache that looks in `memory`, then in `disk`.
    /// - Parameters:
    ///   - memory: The memory tier; default: 64 MiB of values, any count.
    ///   - disk: The disk tier.
    ///   - promotionLimit: The largest value in bytes copied into memory, `>= 0`; default 1 MiB
    ///     (never more than a nonzero `memory.totalCostLimit` in effect).
    public init(memory: MemoryCache<Data> = MemoryCache(totalCostLimit: 64 << 20), disk: DiskCache,
                promotionLimit: Int = 1 << 20) {
        precondition(promotionLimit >= 0, "promotionLimit must be 0 or more")
        self.memory = memory
        self.disk = disk
        self.promotionLimit = promotionLimit
    }

    /// The value under `key`: from memory, else from disk (copied into memory when small
    /// enough), else why there is none (a damaged disk entry has been removed).
    /// - Parameters:
    ///   - key: The value's key, any string.
    ///   - limit: The most bytes to accept from disk; a larger entry throws.
    /// - Throws: The disk's I/O errors; ``ByteStreamError`` `lengthLimitExceeded` over `limit`.
    public func data(forKey key: String, limit: Int = Int.max) throws -> CacheLookup<Data> {
        if let value = memory.object(forKey: key) { return .hit(value, tier: .memory) }
        let started = generation.withLock { $0 }
        let lookup = try disk.data(forKey: key, limit: limit)
        if case .hit(let value, _) = lookup { promote(value, forKey: key, ifNoStoreSince: started) }
        return lookup
    }

    /// The value under `key` as a stream of plain bytes: a ``MemoryInputStream`` for a memory
    /// hit or a disk entry of at most ``promotionLimit`` bytes (read, checked and copied into
    /// memory first), else the disk entry's ``CacheEntryInputStream`` (see
    /// ``DiskCache/inputStream(forKey:verifyingFirst:)`` for what is checked when).
    /// - Throws: The disk's I/O errors.
    public func inputStream(forKey key: String, verifyingFirst: Bool = false) throws -> CacheLookup<ByteInputStream> {
        if let value = memory.object(forKey: key) { return .hit(MemoryInputStream(data: value), tier: .memory) }
        let started = generation.withLock { $0 }
        let lookup = try disk.inputStream(forKey: key, verifyingFirst: verifyingFirst)
        guard case .hit(let stream, _) = lookup else { return .miss(lookup.miss ?? .notFound) }
        guard stream.plainSize <= Int64(effectivePromotionLimit) else { return .hit(stream, tier: .disk) }
        defer { stream.close() }
        do {
            let value = Data(try stream.readToEnd(limit: effectivePromotionLimit))
            promote(value, forKey: key, ifNoStoreSince: started)
            return .hit(MemoryInputStream(data: value), tier: .disk)
        } catch let miss as CacheMiss {
            return .miss(miss)
        }
    }

    /// Stores `value` under `key` on disk, and in memory when at most ``promotionLimit`` bytes.
    /// - Throws: The disk's errors; then neither tier holds the key.
    public func store(_ value: Data, forKey key: String) throws {
        try store(from: MemoryInputStream(data: value), forKey: key)
    }

    /// Stores everything `input` holds under `key` on disk, streamed; the value is also kept in
    /// memory when it turns out to be at most ``promotionLimit`` bytes (only that many are ever
    /// held while copying).
    /// - Returns: The disk entry.
    /// - Throws: `input`'s or the disk's errors; then neither tier holds the key.
    @discardableResult
    public func store(from input: ByteInputStream, forKey key: String) throws -> CacheEntryInfo {
        let begun = beginStore(forKey: key)
        let recorder = RecordingInputStream(wrapping: input, limit: effectivePromotionLimit)
        let info: CacheEntryInfo
        do {
            info = try disk.store(from: recorder, forKey: key)
        } catch {
            endStore(keeping: nil, forKey: key, begun: begun)
            throw error
        }
        endStore(keeping: recorder.recorded.map { Data($0) }, forKey: key, begun: begun)
        return info
    }

    /// Removes `key` from both tiers. Returns whether the disk held it.
    @discardableResult
    public func removeValue(forKey key: String) throws -> Bool {
        let begun = beginStore(forKey: key)
        defer { endStore(keeping: nil, forKey: key, begun: begun) }
        return try disk.removeEntry(forKey: key)
    }

    /// Empties both tiers. Returns the number of disk entries removed.
    @discardableResult
    public func removeAll() throws -> Int {
        generation.withLock {
            $0 &+= 1
            memory.removeAllObjects()
        }
        // A lookup that read the disk before it was emptied may have promoted since.
        defer {
            generation.withLock {
                $0 &+= 1
                memory.removeAllObjects()
            }
        }
        return try disk.removeAll()
    }

    private var effectivePromotionLimit: Int {
        let costLimit = memory.totalCostLimit
        return costLimit > 0 ? min(promotionLimit, costLimit) : promotionLimit
    }

    /// Drops the memory copy before the disk changes, and marks lookups under way as stale.
    /// - Returns: The generation after this start, for ``endStore(keeping:forKey:begun:)``.
    private func beginStore(forKey key: String) -> UInt64 {
        generation.withLock {
            $0 &+= 1
            memory.removeObject(forKey: key)
            return $0
        }
    }

    /// Ends a store or removal once the disk has changed (or failed to): marks lookups under way
    /// as stale, since one may have promoted the old value meanwhile, and leaves in memory
    /// `value` when given and small enough, else nothing. When another store or removal began
    /// since `begun`, its disk change may come before or after this one's, so memory is left
    /// empty for the key and the next lookup reads whichever the disk holds.
    private func endStore(keeping value: Data?, forKey key: String, begun: UInt64) {
        generation.withLock {
            let overlapped = $0 != begun
            $0 &+= 1
            if !overlapped, let value, value.count <= effectivePromotionLimit {
                memory.setObject(value, forKey: key, cost: value.count)
            } else {
                memory.removeObject(forKey: key)
            }
        }
    }

    /// Copies `value`, read from the disk by a lookup, into memory when small enough and no
    /// store or removal began or ended since the lookup began (`started`).
    private func promote(_ value: Data, forKey key: String, ifNoStoreSince started: UInt64) {
        guard value.count <= effectivePromotionLimit else { return }
        generation.withLock {
            guard $0 == started else { return }
            memory.setObject(value, forKey: key, cost: value.count)
        }
    }
}

/// Passes an input through while keeping a copy of its bytes as long as they total at most
/// `limit`; past that, the copy is dropped and no more are kept.
final class RecordingInputStream: ByteInputStream {
    private let inner: ByteInputStream
    private let limit: Int
    private var copy: [UInt8]? = []

    /// The whole input, once read to its end, when it was at most `limit` bytes.
    var recorded: [UInt8]? { streamStatus == .atEnd ? copy : nil }

    init(wrapping inner: ByteInputStream, limit: Int) {
        self.inner = inner
        self.limit = limit
        super.init()
    }

    override func openBacking() throws {
        if inner.streamStatus == .notOpen { try inner.openOrThrow() }
    }

    override func closeBacking() throws {}

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.read(buffer, maxLength: maxLength)
        if count < 0 { throw inner.streamErrorOrFallback(operation: "read") }
        if copy != nil {
            if copy!.count + count > limit {
                copy = nil
            } else {
                copy!.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
            }
        }
        return count
    }
}

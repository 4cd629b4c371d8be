import GzipStreams
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The classic pair: a ``MemoryCache`` in front of a ``DiskCache``. Lookups try memory, then
/// disk, then report a miss; a disk hit of at most ``promotionLimit`` plain bytes is copied into
/// memory. Stores go to both: to disk always, to memory when the value is at most
/// ``promotionLimit`` bytes.
///
/// Memory entries cost their size in bytes. Each process has its own memory tier: a value
/// another process stores on disk is seen here once this process's memory copy is evicted or
/// removed (``removeValue(forKey:)``), so processes sharing a directory should store a key
/// once or keep the memory tier small. Thread-safe.
public final class TwoTierCache: Sendable {
    /// The memory tier, keyed by the cache keys; costs are sizes in bytes.
    public let memory: MemoryCache<Data>
    /// The disk tier.
    public let disk: DiskCache
    /// The largest value in bytes kept in memory, and so the most a lookup reads into memory
    /// before handing out a stream.
    public let promotionLimit: Int
    /// Counts stores, so that a lookup that read the disk while a store of any key was under way
    /// does not promote what may be the old value over the new one. Store and promotion set
    /// memory under this lock.
    private let generation = QueueGuarded<UInt64>(0, label: "gzstream.cache.generation")

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
    /// - Parameter limit: The most bytes to accept from disk; a larger entry throws.
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
        beginStore(forKey: key)
        try disk.store(value, forKey: key)
        promote(value, forKey: key, ifNoStoreSince: nil)
    }

    /// Stores everything `input` holds under `key` on disk, streamed; the value is also kept in
    /// memory when it turns out to be at most ``promotionLimit`` bytes (only that many are ever
    /// held while copying).
    /// - Returns: The disk entry.
    /// - Throws: `input`'s or the disk's errors; then neither tier holds the key.
    @discardableResult
    public func store(from input: ByteInputStream, forKey key: String) throws -> CacheEntryInfo {
        beginStore(forKey: key)
        let recorder = RecordingInputStream(wrapping: input, limit: effectivePromotionLimit)
        let info = try disk.store(from: recorder, forKey: key)
        if let recorded = recorder.recorded { promote(Data(recorded), forKey: key, ifNoStoreSince: nil) }
        return info
    }

    /// Removes `key` from both tiers. Returns whether the disk held it.
    @discardableResult
    public func removeValue(forKey key: String) throws -> Bool {
        beginStore(forKey: key)
        return try disk.removeEntry(forKey: key)
    }

    /// Empties both tiers. Returns the number of disk entries removed.
    @discardableResult
    public func removeAll() throws -> Int {
        generation.withLock {
            $0 &+= 1
            memory.removeAllObjects()
        }
        return try disk.removeAll()
    }

    private var effectivePromotionLimit: Int {
        let costLimit = memory.totalCostLimit
        return costLimit > 0 ? min(promotionLimit, costLimit) : promotionLimit
    }

    /// Drops the memory copy before the disk changes, and marks lookups under way as stale.
    private func beginStore(forKey key: String) {
        generation.withLock {
            $0 &+= 1
            memory.removeObject(forKey: key)
        }
    }

    /// Copies `value` into memory when small enough; for a lookup (`ifNoStoreSince` set), only
    /// when no store began since it read the disk.
    private func promote(_ value: Data, forKey key: String, ifNoStoreSince started: UInt64?) {
        guard value.count <= effectivePromotionLimit else { return }
        generation.withLock {
            if let started, $0 != started { return }
            if started == nil { $0 &+= 1 }
            memory.setObject(value, forKey: key, cost: value.count)
        }
    }
}

/// Passes an input through while keeping a copy of its bytes as long as they total at most
/// `limit`; past that, the copy is dropped and no more are kept.
final class RecordingInputStream: ByteInputStream, @unchecked Sendable {
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
        if count < 0 { throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
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

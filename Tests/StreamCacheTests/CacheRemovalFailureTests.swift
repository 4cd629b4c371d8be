import Foundation
import StreamCache
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// The limits when a file cannot be removed (an immutable one here, which stops root too; the
// CLI tests take a read-only directory): the file stays, the result says which and why and
// what is left, and the next files are tried.

@Suite("Disk cache: files the limits cannot remove", .onDedicatedThreads)
struct CacheRemovalFailureTests {
    /// Stores `keys` (1000 random bytes each), the first least recently used, a minute apart.
    /// - Returns: Each entry file's size.
    private func storeAged(_ keys: [String], in cache: DiskCache) throws -> [String: Int64] {
        let now = Int(Date().timeIntervalSince1970)
        var sizes: [String: Int64] = [:]
        for (index, key) in keys.enumerated() {
            sizes[key] = try cache.store(randomBytes(count: 1000, seed: UInt64(index)), forKey: key).storedSize
            setFileTime(entryPath(cache, key), seconds: now - 60 * (keys.count - index))
        }
        return sizes
    }

    @Test("prune: an entry that cannot be removed is listed with why, the next ones are still evicted, what is left is said",
          .needsImmutableFiles)
    func pruneUnremovable() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let sizes = try storeAged(["old", "middle", "new"], in: cache)
            let stuck = entryPath(cache, "old")
            #expect(setImmutable(stuck, true))
            defer { _ = setImmutable(stuck, false) }
            // "old" is expired (3 minutes); the size limit leaves room for none.
            let limited = try DiskCache(directory: directory, maximumSize: 0, maximumAge: .seconds(150))
            let result = try limited.prune()
            #expect(result.failures == [CacheRemovalFailure(path: stuck, reason: "Operation not permitted", errno: EPERM)])
            #expect(result.failures.first?.description == stuck + ": Operation not permitted")
            #expect(result.remainingExpiredCount == 1 && result.expiredCount == 0)
            #expect(result.evictedCount == 2 && result.removedBytes == sizes["middle"]! + sizes["new"]!)
            #expect(result.remainingBytes == sizes["old"]!)
            #expect(try cache.entries().map(\.name) == [cache.entryFileName(forKey: "old")])
        }
    }

    @Test("a store with a size limit that an entry it cannot remove leaves unmet: stored, and the result says it",
          .needsImmutableFiles)
    func storeUnremovable() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let sizes = try storeAged(["old", "middle"], in: cache)
            let stuck = entryPath(cache, "old")
            #expect(setImmutable(stuck, true))
            defer { _ = setImmutable(stuck, false) }
            // Room for "new" alone: "old" and "middle" are to go, "old" cannot.
            let limited = try DiskCache(directory: directory, maximumSize: 1500)
            let (entry, limits) = try limited.storeApplyingLimits(from: MemoryInputStream(bytes: randomBytes(count: 1000, seed: 9)),
                                                                  forKey: "new")
            #expect(limits?.failures.map(\.path) == [stuck])
            #expect(limits?.evictedCount == 1 && limits?.remainingBytes == sizes["old"]! + entry.storedSize)
            #expect(Set(try cache.entries().map(\.name)) == [cache.entryFileName(forKey: "old"), cache.entryFileName(forKey: "new")])
            // Without a failure, the result says nothing failed; without a limit there is none.
            #expect(try cache.storeApplyingLimits(from: MemoryInputStream(bytes: [1]), forKey: "k").limits == nil)
            _ = setImmutable(stuck, false)
            let met = try limited.storeApplyingLimits(from: MemoryInputStream(bytes: randomBytes(count: 1000, seed: 10)),
                                                      forKey: "newer").limits
            #expect(met?.failures == [] && met.map { $0.remainingBytes <= 1500 } == true)
        }
    }
}

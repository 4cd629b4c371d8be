import ByteStreams
import Dispatch
import Foundation
import StreamCache
import Testing
import TestSupport

@Suite("Two-tier cache", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct TwoTierCacheTests {
    @Test("a store goes to both tiers; a lookup tries memory, then disk, then misses")
    func lookupOrder() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory, key: testKey()))
            let value = Data(sampleBytes(count: 5_000, seed: 1))
            try cache.store(value, forKey: "k")
            #expect(cache.memory.object(forKey: "k") == value)
            #expect(fileExists(entryPath(cache.disk, "k")))
            let fromMemory = try cache.data(forKey: "k")
            #expect(fromMemory.value == value && fromMemory.tier == .memory)
            cache.memory.removeAllObjects()
            let fromDisk = try cache.data(forKey: "k")
            #expect(fromDisk.value == value && fromDisk.tier == .disk)
            // The disk hit was promoted.
            #expect(cache.memory.object(forKey: "k") == value)
            #expect(try cache.data(forKey: "k").tier == .memory)
            #expect(try cache.removeValue(forKey: "k"))
            #expect(try cache.data(forKey: "k").miss == .notFound)
        }
    }

    @Test("a disk hit is promoted only when it fits the promotion limit and the memory cost limit")
    func promotionLimit() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let disk = try DiskCache(directory: directory)
            let cache = TwoTierCache(memory: MemoryCache(totalCostLimit: 10_000), disk: disk, promotionLimit: 1 << 20)
            try disk.store(sampleBytes(count: 20_000, seed: 2), forKey: "large")
            try disk.store(sampleBytes(count: 2_000, seed: 3), forKey: "small")
            #expect(try cache.data(forKey: "large").value?.count == 20_000)
            #expect(cache.memory.object(forKey: "large") == nil)
            #expect(try cache.data(forKey: "small").value?.count == 2_000)
            #expect(cache.memory.object(forKey: "small") != nil)
            // Streams: a small entry comes from memory after promotion, a large one from disk.
            guard case .hit(let large, let tier) = try cache.inputStream(forKey: "large") else {
                Issue.record("miss")
                return
            }
            #expect(tier == .disk && large is CacheEntryInputStream)
            #expect(try large.readToEnd() == sampleBytes(count: 20_000, seed: 2))
            large.close()
            cache.memory.removeAllObjects()
            guard case .hit(let small, _) = try cache.inputStream(forKey: "small") else {
                Issue.record("miss")
                return
            }
            #expect(small is MemoryInputStream)
            #expect(try small.readToEnd() == sampleBytes(count: 2_000, seed: 3))
            #expect(cache.memory.object(forKey: "small") != nil)
        }
    }

    @Test("a streamed store keeps a small value in memory, and a large one only on disk")
    func streamedStore() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory, key: testKey()), promotionLimit: 4096)
            try cache.store(from: MemoryInputStream(bytes: sampleBytes(count: 4096, seed: 4)), forKey: "small")
            try cache.store(from: MemoryInputStream(bytes: sampleBytes(count: 4097, seed: 5)), forKey: "large")
            #expect(cache.memory.object(forKey: "small") == Data(sampleBytes(count: 4096, seed: 4)))
            #expect(cache.memory.object(forKey: "large") == nil)
            #expect(try cache.data(forKey: "large").value == Data(sampleBytes(count: 4097, seed: 5)))
        }
    }

    @Test("a damaged disk entry is a miss through the two tiers, and removed")
    func damageThroughTiers() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory, key: testKey()))
            try cache.store(Data(sampleBytes(count: 100_000, seed: 6)), forKey: "k")
            cache.memory.removeAllObjects()
            let path = entryPath(cache.disk, "k")
            var bytes = try fileBytes(path)
            bytes[bytes.count / 2] ^= 1
            try writeFileBytes(bytes, to: path)
            guard case .damaged = try cache.inputStream(forKey: "k").miss else {
                Issue.record("expected a damaged miss")
                return
            }
            #expect(!fileExists(path))
            #expect(cache.memory.object(forKey: "k") == nil)
        }
    }

    @Test("concurrent stores and lookups from 8 threads never see a partial or wrong value")
    func concurrentThreads() async throws {
        let result = try await onOwnThread { try Self.storeAndLookUpFromThreads() }
        #expect(result.wrong == 0)
        #expect(result.memoryCount <= 3)
        #expect(result.temporaryFilesLeft == 0)
    }

    /// 8 threads storing and looking up 5 keys: the lookups that were neither a value stored
    /// for the key nor a plain miss, the memory tier's count, and `.tmp-` files left.
    static func storeAndLookUpFromThreads() throws -> (wrong: Int, memoryCount: Int, temporaryFilesLeft: Int) {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = TwoTierCache(memory: MemoryCache(countLimit: 3), disk: try DiskCache(directory: directory, key: testKey()),
                                     promotionLimit: 8_000)
            // Each key has two possible values, one small (kept in memory) and one large.
            @Sendable func value(key: Int, version: Int) -> Data {
                Data(sampleBytes(count: version == 0 ? 3_000 : 60_000, seed: UInt64(key * 10 + version)))
            }
            let wrong = SharedCount()
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                var generator = SplitMix64(seed: UInt64(thread))
                for _ in 0..<60 {
                    let key = Int(generator.next() % 5)
                    let version = Int(generator.next() % 2)
                    do {
                        if generator.next() % 3 == 0 {
                            try cache.store(value(key: key, version: version), forKey: "key \(key)")
                        } else {
                            let lookup = try cache.data(forKey: "key \(key)")
                            if let found = lookup.value {
                                if found != value(key: key, version: 0) && found != value(key: key, version: 1) { wrong.add() }
                            } else if lookup.miss != .notFound {
                                wrong.add()
                            }
                        }
                    } catch {
                        wrong.add()
                    }
                }
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".tmp-") }
            return (wrong.value, cache.memory.count, left.count)
        }
    }
}

/// A counter several threads add to.
final class SharedCount: Sendable {
    private let count = QueueGuarded(0, label: "test.count")
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

import ByteStreams
import Dispatch
import Foundation
import GzipStreams
import StreamCache
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// Hostile situations for the cache: threads racing on one directory.

// MARK: Threads

/// An input that gives `bytes` but waits, before its first byte, until released.
private final class GatedInputStream: ByteInputStream {
    private let bytes: [UInt8]
    private var position = 0
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)

    init(bytes: [UInt8]) {
        self.bytes = bytes
        super.init()
    }

    override func openBacking() throws {}
    override func closeBacking() throws {}

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if position == 0 {
            started.signal()
            release.wait()
        }
        let count = min(maxLength, bytes.count - position)
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + position, count: count) }
        position += count
        return count
    }
}

@Suite("Cache attack: threads", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct CacheAttackThreadTests {
    @Test("a lookup during a store of a large value does not leave the old value in memory once the store is done")
    func lookupDuringLargeStore() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory), promotionLimit: 10_000)
            let old = Data(sampleBytes(count: 1_000, seed: 1)), new = sampleBytes(count: 100_000, seed: 2)
            try cache.store(old, forKey: "k")
            // Read by the storing thread; this thread touches only its semaphores (thread-safe).
            nonisolated(unsafe) let input = GatedInputStream(bytes: new)
            let stored = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = try? cache.store(from: input, forKey: "k")
                stored.signal()
            }
            input.started.wait()
            // The store is under way: the disk still holds the old value, and so may a lookup.
            #expect(try cache.data(forKey: "k").value == old)
            input.release.signal()
            stored.wait()
            let after = try cache.data(forKey: "k")
            #expect(after.value == Data(new), "after the store: \(after.tier.map { "\($0)" } ?? "miss"), \(after.value?.count ?? -1) bytes")
        }
    }

    @Test("stores of one key from 4 threads at once leave memory agreeing with the disk")
    func overlappingStores() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory), promotionLimit: 1 << 20)
            var disagreements = 0
            for round in 0..<150 {
                DispatchQueue.concurrentPerform(iterations: 4) { thread in
                    _ = try? cache.store(Data(sampleBytes(count: 2_000 + 1_000 * thread, seed: UInt64(round * 4 + thread))), forKey: "k")
                }
                if let fromMemory = cache.memory.object(forKey: "k"), fromMemory != (try cache.disk.data(forKey: "k").value) {
                    disagreements += 1
                }
            }
            #expect(disagreements == 0)
        }
    }

    @Test("8 threads store, look up, verify, remove and prune 6 keys through two DiskCaches (one limited) and two TwoTierCaches")
    func manyThreadsOneDirectory() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory, key: testKey())
            let limited = try DiskCache(directory: directory, key: testKey(), maximumSize: 150_000)
            let tiers = [TwoTierCache(memory: MemoryCache(countLimit: 3), disk: unlimited, promotionLimit: 8_000),
                         TwoTierCache(memory: MemoryCache(totalCostLimit: 20_000), disk: limited, promotionLimit: 8_000)]
            // Each key has three values: 3 kB (kept in memory), 30 kB and 90 kB (disk only).
            @Sendable func value(_ key: Int, _ version: Int) -> [UInt8] {
                sampleBytes(count: [3_000, 30_000, 90_000][version], seed: UInt64(key * 10 + version))
            }
            let problems = QueueGuarded([String](), label: "test.problems")
            @Sendable func check(_ found: [UInt8]?, _ miss: CacheMiss?, key: Int, _ what: String) {
                if let found {
                    if !(0..<3).contains(where: { value(key, $0) == found }) { problems.withLock { $0.append("\(what): wrong \(found.count) bytes") } }
                } else if miss != .notFound {
                    problems.withLock { $0.append("\(what): \(miss.map { "\($0)" } ?? "nil")") }
                }
            }
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                var generator = SplitMix64(seed: UInt64(100 + thread))
                for _ in 0..<60 {
                    let key = Int(generator.next() % 6), version = Int(generator.next() % 3)
                    let disk = generator.next() % 2 == 0 ? unlimited : limited
                    let tier = tiers[Int(generator.next() % 2)]
                    do {
                        switch generator.next() % 9 {
                        case 0: try disk.store(value(key, version), forKey: "key \(key)")
                        case 1: try tier.store(Data(value(key, version)), forKey: "key \(key)")
                        case 2: try tier.store(from: MemoryInputStream(bytes: value(key, version)), forKey: "key \(key)")
                        case 3:
                            let lookup = try disk.data(forKey: "key \(key)")
                            check(lookup.value.map(Array.init), lookup.miss, key: key, "disk data")
                        case 4:
                            let lookup = try tier.data(forKey: "key \(key)")
                            check(lookup.value.map(Array.init), lookup.miss, key: key, "tier data")
                        case 5:
                            let lookup = try disk.inputStream(forKey: "key \(key)", verifyingFirst: generator.next() % 2 == 0)
                            if case .hit(let stream, _) = lookup {
                                defer { stream.close() }
                                check(try stream.readToEnd(), nil, key: key, "disk stream")
                            } else {
                                check(nil, lookup.miss, key: key, "disk stream")
                            }
                        case 6:
                            let lookup = try tier.inputStream(forKey: "key \(key)")
                            if case .hit(let stream, _) = lookup {
                                defer { stream.close() }
                                check(try stream.readToEnd(), nil, key: key, "tier stream")
                            } else {
                                check(nil, lookup.miss, key: key, "tier stream")
                            }
                        case 7: try tier.removeValue(forKey: "key \(key)")
                        default:
                            _ = try limited.prune()
                            _ = try unlimited.entries()
                        }
                    } catch {
                        problems.withLock { $0.append("thread \(thread): \(error)") }
                    }
                }
            }
            #expect(problems.withLock { $0 } == [])
            #expect(try directoryNames(directory).allSatisfy { !$0.hasPrefix(".tmp-") })
            // What is left is whole. (Memory need not agree with the disk here: each TwoTierCache
            // has its own memory tier, which the other's stores and the limited disk's
            // evictions do not change, as with two processes.)
            for key in 0..<6 {
                let onDisk = try unlimited.data(forKey: "key \(key)")
                check(onDisk.value.map(Array.init), onDisk.miss, key: key, "after")
            }
            #expect(problems.withLock { $0 } == [])
        }
    }

    @Test("a lookup never removes a valid entry renamed over the link or damaged file it opened", arguments: ["link", "damaged"])
    func removalRace(kind: String) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let plain = sampleBytes(count: 2_000, seed: 4)
            try cache.store(plain, forKey: "k")
            let path = entryPath(cache, "k")
            // Beside the entries (a directory the cache leaves alone): the valid entry, and a
            // damaged copy, each linked under the entry's name by rename(2), as another process's
            // store would put them there.
            let keep = directory + "/keep"
            try #require(mkdir(keep, 0o700) == 0)
            try #require(link(path, keep + "/valid") == 0)
            try writeFileBytes(Array(try fileBytes(path).dropLast()), to: keep + "/damaged")
            let stop = QueueGuarded(false, label: "test.stop")
            let wrong = SharedCount()
            let reader = DispatchGroup()
            DispatchQueue.global().async(group: reader) {
                while !stop.withLock({ $0 }) {
                    if let found = try? cache.data(forKey: "k").value, found != Data(plain) { wrong.add() }
                }
            }
            var lost = 0
            for _ in 0..<10_000 {
                // The thing a lookup removes…
                unlink(keep + "/bad")
                if kind == "link" {
                    symlink("/nonexistent", keep + "/bad")
                } else {
                    link(keep + "/damaged", keep + "/bad")
                }
                rename(keep + "/bad", path)
                usleep(20)
                // …then the valid entry over it.
                unlink(keep + "/good")
                link(keep + "/valid", keep + "/good")
                rename(keep + "/good", path)
                usleep(50)
                // Its names: keep/valid and the entry's (and a removal's temporary name).
                var info = stat()
                if stat(keep + "/valid", &info) == 0, info.st_nlink < 2 { lost += 1 }
            }
            stop.withLock { $0 = true }
            reader.wait()
            #expect(wrong.value == 0)
            #expect(lost == 0, "valid entries removed by lookups that had opened something else")
        }
    }

    @Test("a lookup during a removal does not bring the value back into memory")
    func lookupDuringRemoval() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory), promotionLimit: 1 << 20)
            let value = Data(sampleBytes(count: 200_000, seed: 1))
            var resurrected = 0
            for _ in 0..<300 {
                try cache.store(value, forKey: "k")
                cache.memory.removeAllObjects()
                let group = DispatchGroup()
                DispatchQueue.global().async(group: group) { _ = try? cache.data(forKey: "k") }
                DispatchQueue.global().async(group: group) { _ = try? cache.removeValue(forKey: "k") }
                group.wait()
                if try cache.data(forKey: "k").value != nil { resurrected += 1 }
            }
            #expect(resurrected == 0)
        }
    }
}

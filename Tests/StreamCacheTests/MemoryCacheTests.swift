import ByteStreams
import Dispatch
import StreamCache
import Testing
import TestSupport

/// What an eviction handler (or a `deinit`) was given, in call order, from any thread.
private final class CallLog<Entry: Sendable>: Sendable {
    private let entries = QueueGuarded([Entry](), label: "test.memory-cache.log")

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    var all: [Entry] { entries.withLock { $0 } }
}

/// A cache of `Int`s whose eviction handler logs each evicted key and value.
private func loggedCache(countLimit: Int = 0, totalCostLimit: Int = 0)
    -> (MemoryCache<Int>, CallLog<Evicted>) {
    let cache = MemoryCache<Int>(countLimit: countLimit, totalCostLimit: totalCostLimit)
    let log = CallLog<Evicted>()
    cache.evictionHandler = { key, value in log.append(Evicted(key: key, value: value)) }
    return (cache, log)
}

private struct Evicted: Equatable, Sendable, CustomStringConvertible {
    let key: String
    let value: Int
    var description: String { "\(key)=\(value)" }
}

@Suite("MemoryCache: limits, recency and eviction", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct MemoryCacheTests {
    /// Which limit a test lowers.
    enum Limit: String, CaseIterable, Sendable, CustomStringConvertible {
        case count, totalCost
        var description: String { rawValue }
    }

    @Test("Over countLimit, the least recently stored values are evicted, oldest first")
    func evictionByCount() {
        let (cache, log) = loggedCache(countLimit: 3)
        for (value, key) in ["a", "b", "c", "d", "e", "f"].enumerated() {
            #expect(cache.setObject(value, forKey: key))
            #expect(cache.count == min(value + 1, 3))
        }
        #expect(log.all == [Evicted(key: "a", value: 0), Evicted(key: "b", value: 1), Evicted(key: "c", value: 2)])
        #expect(cache.keys == ["d", "e", "f"])
        #expect(cache.object(forKey: "a") == nil)
        #expect(cache.object(forKey: "d") == 3)
        #expect(cache.totalCost == 0)
    }

    @Test("Over totalCostLimit, the oldest values are evicted until the rest fit; at the limit is within it")
    func evictionByCost() {
        let (cache, log) = loggedCache(totalCostLimit: 10)
        cache.setObject(1, forKey: "a", cost: 4)
        cache.setObject(2, forKey: "b", cost: 4)
        #expect(log.all.isEmpty)
        cache.setObject(3, forKey: "c", cost: 4)
        #expect(log.all.map(\.key) == ["a"])
        #expect(cache.keys == ["b", "c"])
        #expect(cache.totalCost == 8)

        cache.setObject(4, forKey: "d", cost: 9)
        #expect(log.all.map(\.key) == ["a", "b", "c"])
        #expect(cache.keys == ["d"])
        #expect(cache.totalCost == 9)

        cache.setObject(5, forKey: "e", cost: 1)
        #expect(log.all.count == 3, "a total cost equal to the limit evicts nothing")
        #expect(cache.keys == ["d", "e"])
        #expect(cache.totalCost == 10)
    }

    @Test("A hit makes its value the most recently used, so the next eviction takes another",
          arguments: ["a", "b", "c"])
    func hitRefreshesRecency(readKey: String) {
        let (cache, log) = loggedCache(countLimit: 3)
        for (value, key) in ["a", "b", "c"].enumerated() { cache.setObject(value, forKey: key) }
        #expect(cache.object(forKey: readKey) == ["a", "b", "c"].firstIndex(of: readKey))
        #expect(cache.object(forKey: "missing") == nil)
        let others = ["a", "b", "c"].filter { $0 != readKey }
        #expect(cache.keys == others + [readKey])

        cache.setObject(3, forKey: "d")
        #expect(log.all.map(\.key) == [others[0]])
        #expect(cache.keys == [others[1], readKey, "d"])
        #expect(cache.object(forKey: readKey) != nil)
    }

    @Test("keys lists without changing the order; a miss changes nothing")
    func keysDoNotRefresh() {
        let (cache, log) = loggedCache(countLimit: 2)
        cache.setObject(1, forKey: "a")
        cache.setObject(2, forKey: "b")
        #expect(cache.keys == ["a", "b"])
        #expect(cache.keys == ["a", "b"])
        _ = cache.object(forKey: "c")
        cache.setObject(3, forKey: "c")
        #expect(log.all.map(\.key) == ["a"])
    }

    @Test("Storing under a present key replaces its value and its cost, makes it the newest, evicts nothing")
    func replacement() {
        let (cache, log) = loggedCache()
        cache.setObject(1, forKey: "a", cost: 5)
        cache.setObject(2, forKey: "b", cost: 3)
        #expect(cache.totalCost == 8)
        #expect(cache.setObject(10, forKey: "a", cost: 1))
        #expect(cache.totalCost == 4)
        #expect(cache.count == 2)
        #expect(cache.object(forKey: "a") == 10)
        #expect(cache.keys == ["b", "a"])

        // With the old cost of b (3) still counted, 1 + 3 + 9 would exceed 10 and evict a.
        cache.totalCostLimit = 10
        #expect(cache.setObject(20, forKey: "b", cost: 9))
        #expect(cache.totalCost == 10)
        #expect(cache.keys == ["a", "b"])
        #expect(cache.object(forKey: "b") == 20)
        #expect(log.all.isEmpty, "a replaced value is not evicted")
    }

    @Test("A value whose cost alone exceeds totalCostLimit is refused, and the old value for its key removed")
    func oversizeRefused() {
        let (cache, log) = loggedCache(totalCostLimit: 10)
        cache.setObject(1, forKey: "a", cost: 3)
        cache.setObject(2, forKey: "b", cost: 4)
        #expect(!cache.setObject(3, forKey: "a", cost: 11))
        #expect(cache.object(forKey: "a") == nil)
        #expect(cache.count == 1)
        #expect(cache.totalCost == 4)
        #expect(cache.keys == ["b"])

        #expect(!cache.setObject(4, forKey: "c", cost: 11))
        #expect(cache.keys == ["b"])
        #expect(log.all.isEmpty, "a refusal evicts nothing and reports nothing")

        #expect(cache.setObject(5, forKey: "c", cost: 10))
        #expect(log.all == [Evicted(key: "b", value: 2)])
        #expect(cache.keys == ["c"])
        #expect(cache.totalCost == 10)
    }

    @Test("Lowering a limit evicts at once, least recently used first; raising it to 0 lifts it",
          arguments: Limit.allCases)
    func loweringLimit(limit: Limit) {
        let (cache, log) = loggedCache()
        for (value, key) in ["a", "b", "c", "d", "e"].enumerated() { cache.setObject(value, forKey: key, cost: 2) }
        #expect(cache.object(forKey: "a") == 0)  // order now b c d e a

        switch limit {
        case .count:
            cache.countLimit = 2
            #expect(cache.countLimit == 2)
        case .totalCost:
            cache.totalCostLimit = 4
            #expect(cache.totalCostLimit == 4)
        }
        #expect(log.all.map(\.key) == ["b", "c", "d"])
        #expect(cache.keys == ["e", "a"])
        #expect(cache.count == 2)
        #expect(cache.totalCost == 4)

        switch limit {
        case .count: cache.countLimit = 0
        case .totalCost: cache.totalCostLimit = 0
        }
        cache.setObject(5, forKey: "f", cost: 2)
        #expect(cache.keys == ["e", "a", "f"])
        #expect(log.all.count == 3)
    }

    struct UnlimitedCase: Sendable, CustomStringConvertible {
        let countLimit: Int
        let totalCostLimit: Int
        let cost: Int
        var description: String { "countLimit \(countLimit), totalCostLimit \(totalCostLimit), cost \(cost) each" }
    }

    @Test("A limit of 0 is no limit", arguments: [
        UnlimitedCase(countLimit: 0, totalCostLimit: 0, cost: 1_000_000),
        UnlimitedCase(countLimit: 0, totalCostLimit: 100, cost: 0),
        UnlimitedCase(countLimit: 10_000, totalCostLimit: 0, cost: 1 << 40),
    ])
    func zeroIsUnlimited(limits: UnlimitedCase) {
        let (cache, log) = loggedCache(countLimit: limits.countLimit, totalCostLimit: limits.totalCostLimit)
        let entryCount = 10_000
        for value in 0..<entryCount {
            #expect(cache.setObject(value, forKey: "k\(value)", cost: limits.cost))
        }
        #expect(cache.count == entryCount)
        #expect(cache.totalCost == entryCount * limits.cost)
        #expect(log.all.isEmpty)
        #expect(cache.object(forKey: "k0") == 0)
        #expect(cache.keys.count == entryCount)
    }

    @Test("removeObject and removeAllObjects remove without reporting evictions; limits stay")
    func removal() {
        let (cache, log) = loggedCache(countLimit: 3)
        cache.setObject(1, forKey: "a", cost: 1)
        cache.setObject(2, forKey: "b", cost: 2)
        cache.setObject(3, forKey: "c", cost: 3)
        cache.removeObject(forKey: "b")
        #expect(cache.object(forKey: "b") == nil)
        #expect(cache.count == 2)
        #expect(cache.totalCost == 4)
        #expect(cache.keys == ["a", "c"])
        cache.removeObject(forKey: "missing")
        #expect(cache.keys == ["a", "c"])

        // The removed value's place is free: d fits, e evicts a.
        cache.setObject(4, forKey: "d")
        #expect(log.all.isEmpty)
        cache.setObject(5, forKey: "e")
        #expect(log.all.map(\.key) == ["a"])

        cache.removeAllObjects()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache.keys.isEmpty)
        #expect(cache.object(forKey: "c") == nil)
        #expect(log.all.count == 1)

        for (value, key) in ["f", "g", "h", "i"].enumerated() { cache.setObject(value, forKey: key, cost: 1) }
        #expect(cache.countLimit == 3)
        #expect(log.all.map(\.key) == ["a", "f"])
        #expect(cache.keys == ["g", "h", "i"])
        #expect(cache.totalCost == 3)
    }

    @Test("The eviction handler runs in eviction order, after the lock, and may call into the cache")
    func handlerReentrancy() {
        let cache = MemoryCache<Int>(countLimit: 2)
        let order = CallLog<String>()
        let seen = CallLog<String>()
        cache.evictionHandler = { [weak cache] key, value in
            guard let cache else { return }
            order.append(key)
            seen.append("\(key)=\(value) gone \(cache.object(forKey: key) == nil) count \(cache.count) "
                + "limit \(cache.countLimit)")
            if key == "a" { cache.setObject(100, forKey: "echo-a") }  // evicts b, from inside the handler
        }
        cache.setObject(1, forKey: "a")
        cache.setObject(2, forKey: "b")
        cache.setObject(3, forKey: "c")
        #expect(order.all == ["a", "b"])
        #expect(seen.all == ["a=1 gone true count 2 limit 2", "b=2 gone true count 2 limit 2"])
        #expect(cache.keys == ["c", "echo-a"])

        cache.countLimit = 1
        #expect(order.all == ["a", "b", "c"])
        #expect(seen.all.last == "c=3 gone true count 1 limit 1")
        #expect(cache.keys == ["echo-a"])
    }

    @Test("Values leave under the lock but are released after it: a deinit may call into the cache")
    func valuesReleasedOutsideLock() {
        let cache = MemoryCache<Probe>(countLimit: 2, totalCostLimit: 10)
        let released = CallLog<String>()
        func probe(_ name: String) -> Probe { Probe(name: name, cache: cache, released: released) }

        cache.setObject(probe("replaced"), forKey: "a")
        cache.setObject(probe("removed"), forKey: "a")
        cache.removeObject(forKey: "a")
        cache.setObject(probe("removed by a refusal"), forKey: "b", cost: 1)
        #expect(!cache.setObject(probe("refused"), forKey: "b", cost: 11))
        cache.setObject(probe("evicted by a store"), forKey: "c")
        cache.setObject(probe("evicted by a lower limit"), forKey: "d")
        cache.setObject(probe("removed by removeAll"), forKey: "e")
        cache.countLimit = 1
        cache.removeAllObjects()
        #expect(Set(released.all) == [
            "replaced: count 1", "removed: count 0", "removed by a refusal: count 0", "refused: count 0",
            "evicted by a store: count 2", "evicted by a lower limit: count 1", "removed by removeAll: count 0",
        ])
    }

    @Test("Negative limits and costs are preconditions")
    func preconditions() async {
        await #expect(processExitsWith: .failure) { _ = MemoryCache<Int>(countLimit: -1) }
        await #expect(processExitsWith: .failure) { _ = MemoryCache<Int>(totalCostLimit: -1) }
        await #expect(processExitsWith: .failure) { MemoryCache<Int>().countLimit = -1 }
        await #expect(processExitsWith: .failure) { MemoryCache<Int>().totalCostLimit = -1 }
        await #expect(processExitsWith: .failure) { MemoryCache<Int>().setObject(1, forKey: "a", cost: -1) }
    }
}

/// A value that, when released, records its name and the cache's count, read through the cache's lock.
private final class Probe: Sendable {
    let name: String
    weak let cache: MemoryCache<Probe>?
    let released: CallLog<String>

    init(name: String, cache: MemoryCache<Probe>, released: CallLog<String>) {
        self.name = name
        self.cache = cache
        self.released = released
    }

    deinit {
        released.append("\(name): count \(cache?.count ?? -1)")
    }
}

/// The same contract written the obvious O(n) way, to compare the cache with step by step.
private struct ReferenceCache {
    var countLimit: Int
    var totalCostLimit: Int
    /// Least recently used first.
    var entries: [(key: String, value: Int, cost: Int)] = []

    var keys: [String] { entries.map(\.key) }
    var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }

    mutating func object(forKey key: String) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        let entry = entries.remove(at: index)
        entries.append(entry)
        return entry.value
    }

    mutating func setObject(_ value: Int, forKey key: String, cost: Int) -> (stored: Bool, evicted: [String]) {
        entries.removeAll { $0.key == key }
        if totalCostLimit > 0 && cost > totalCostLimit { return (false, []) }
        entries.append((key, value, cost))
        return (true, evict())
    }

    mutating func evict() -> [String] {
        var evicted: [String] = []
        while !entries.isEmpty
            && ((countLimit > 0 && entries.count > countLimit) || (totalCostLimit > 0 && totalCost > totalCostLimit)) {
            evicted.append(entries.removeFirst().key)
        }
        return evicted
    }
}

@Suite("MemoryCache against a reference, and under threads", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct MemoryCacheStressTests {
    struct Limits: Sendable, CustomStringConvertible {
        let countLimit: Int
        let totalCostLimit: Int
        var description: String { "countLimit \(countLimit), totalCostLimit \(totalCostLimit)" }
    }

    @Test("20,000 seeded operations give the same results, order, costs and evictions as the reference",
          arguments: [Limits(countLimit: 3, totalCostLimit: 0), Limits(countLimit: 0, totalCostLimit: 50),
                      Limits(countLimit: 5, totalCostLimit: 40), Limits(countLimit: 0, totalCostLimit: 0)])
    func matchesReference(limits: Limits) {
        let (cache, log) = loggedCache(countLimit: limits.countLimit, totalCostLimit: limits.totalCostLimit)
        var reference = ReferenceCache(countLimit: limits.countLimit, totalCostLimit: limits.totalCostLimit)
        var random = SplitMix64(seed: UInt64(limits.countLimit * 1000 + limits.totalCostLimit))
        var mismatches: [String] = []
        for step in 0..<20_000 {
            let key = "k\(Int.random(in: 0..<12, using: &random))"
            let evictedBefore = log.all.count
            var expectedEvictions: [String] = []
            let operation = Int.random(in: 0..<100, using: &random)
            switch operation {
            case 0..<40:
                let got = cache.object(forKey: key)
                let expected = reference.object(forKey: key)
                if got != expected { mismatches.append("step \(step): get \(key) gave \(String(describing: got))") }
            case 40..<80:
                let cost = Int.random(in: 0...(limits.totalCostLimit > 0 ? limits.totalCostLimit + 5 : 20), using: &random)
                let stored = cache.setObject(step, forKey: key, cost: cost)
                let expected = reference.setObject(step, forKey: key, cost: cost)
                expectedEvictions = expected.evicted
                if stored != expected.stored { mismatches.append("step \(step): set \(key) cost \(cost) gave \(stored)") }
            case 80..<90:
                cache.removeObject(forKey: key)
                reference.entries.removeAll { $0.key == key }
            case 90..<91:
                cache.removeAllObjects()
                reference.entries.removeAll()
            case 91..<94 where limits.countLimit > 0:
                let newLimit = Int.random(in: 1...limits.countLimit, using: &random)
                cache.countLimit = newLimit
                reference.countLimit = newLimit
                expectedEvictions = reference.evict()
            case 94..<97 where limits.totalCostLimit > 0:
                let newLimit = Int.random(in: 1...limits.totalCostLimit, using: &random)
                cache.totalCostLimit = newLimit
                reference.totalCostLimit = newLimit
                expectedEvictions = reference.evict()
            default:
                break
            }
            let evicted = log.all.dropFirst(evictedBefore).map(\.key)
            if evicted != expectedEvictions { mismatches.append("step \(step): evicted \(evicted), not \(expectedEvictions)") }
            if cache.keys != reference.keys { mismatches.append("step \(step): keys \(cache.keys), not \(reference.keys)") }
            if cache.totalCost != reference.totalCost || cache.count != reference.entries.count {
                mismatches.append("step \(step): count \(cache.count) cost \(cache.totalCost)")
            }
            if mismatches.count > 5 { break }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        if limits.countLimit > 0 || limits.totalCostLimit > 0 {
            #expect(log.all.count > 100, "the operations exercise eviction")
        } else {
            #expect(log.all.isEmpty)
        }
    }

    /// A value that names the key, cost and write it was stored with.
    struct Stored: Hashable, Sendable {
        let key: String
        let cost: Int
        let writer: Int
        let sequence: Int
    }

    /// What one thread stored and read.
    struct ThreadRecord: Sendable {
        var stored: [Stored] = []
        var read: [Stored] = []
        var readUnderWrongKey = 0
        var overLimit = 0
    }

    @Test("8 threads reading, storing and removing seeded keys keep every invariant",
          arguments: [Limits(countLimit: 50, totalCostLimit: 0), Limits(countLimit: 0, totalCostLimit: 2000),
                      Limits(countLimit: 40, totalCostLimit: 1000), Limits(countLimit: 0, totalCostLimit: 100)])
    func concurrentReadersAndWriters(limits: Limits) {
        let cache = MemoryCache<Stored>(countLimit: limits.countLimit, totalCostLimit: limits.totalCostLimit)
        let evictions = CallLog<(key: String, value: Stored)>()
        cache.evictionHandler = { [weak cache] key, value in
            evictions.append((key, value))
            _ = cache?.count  // calls back in, from whichever thread evicted
        }
        let threadCount = 8
        let operationsPerThread = 5000
        let records = CallLog<ThreadRecord>()
        DispatchQueue.concurrentPerform(iterations: threadCount) { thread in
            var random = SplitMix64(seed: UInt64(thread + 1) &* 0x5851_F42D_4C95_7F2D)
            var record = ThreadRecord()
            for sequence in 0..<operationsPerThread {
                let key = "k\(Int.random(in: 0..<200, using: &random))"
                switch Int.random(in: 0..<1000, using: &random) {
                case 0..<500:
                    if let value = cache.object(forKey: key) {
                        if value.key != key { record.readUnderWrongKey += 1 }
                        record.read.append(value)
                    }
                case 500..<850:
                    let value = Stored(key: key, cost: Int.random(in: 0...120, using: &random), writer: thread,
                                       sequence: sequence)
                    record.stored.append(value)
                    cache.setObject(value, forKey: key, cost: value.cost)
                case 850..<998:
                    cache.removeObject(forKey: key)
                default:
                    cache.removeAllObjects()
                }
                if sequence % 32 == 0 {
                    if limits.countLimit > 0 && cache.count > limits.countLimit { record.overLimit += 1 }
                    if limits.totalCostLimit > 0 && cache.totalCost > limits.totalCostLimit { record.overLimit += 1 }
                }
            }
            records.append(record)
        }

        let threadRecords = records.all
        #expect(threadRecords.count == threadCount)
        let stored = Set(threadRecords.flatMap(\.stored))
        #expect(stored.count == threadRecords.reduce(0) { $0 + $1.stored.count }, "every stored value is distinct")
        #expect(threadRecords.allSatisfy { $0.readUnderWrongKey == 0 && $0.overLimit == 0 })
        let read = threadRecords.flatMap(\.read)
        #expect(!read.isEmpty)
        #expect(read.allSatisfy { stored.contains($0) }, "every value read is one stored for its key")

        let keys = cache.keys
        #expect(Set(keys).count == keys.count)
        #expect(keys.count == cache.count)
        let present = keys.compactMap { cache.object(forKey: $0) }
        #expect(present.count == keys.count)
        #expect(zip(keys, present).allSatisfy { key, value in value.key == key && stored.contains(value) })
        #expect(present.reduce(0) { $0 + $1.cost } == cache.totalCost, "totalCost is the sum of the present costs")
        if limits.countLimit > 0 { #expect(cache.count <= limits.countLimit) }
        if limits.totalCostLimit > 0 { #expect(cache.totalCost <= limits.totalCostLimit) }

        let evicted = evictions.all
        #expect(!evicted.isEmpty)
        #expect(evicted.allSatisfy { $0.key == $0.value.key && stored.contains($0.value) })
        let evictedValues = Set(evicted.map(\.value))
        #expect(evictedValues.count == evicted.count, "no value is evicted twice")
        #expect(evictedValues.isDisjoint(with: present), "no evicted value is still present")
    }
}

/// The memory tier of the cache: values by `String` key, evicted least recently used first when
/// a limit on their number or on their total cost is exceeded. Foundation's `NSCache`, with a
/// defined eviction order; unlike `NSCache`, it evicts only for its limits, never on memory
/// pressure.
///
/// Keys are compared by their UTF-8 bytes, as `NSCache` compares `NSString` keys (code unit
/// by code unit) and as ``DiskCache`` names entries, not by Swift's `String` equality: "é"
/// (U+00E9) and "e" + U+0301, canonically equivalent and so equal as `String`s, are two keys.
///
/// - A cost is a caller-chosen, non-negative `Int` in the caller's unit (the stream cache uses
///   byte counts); the cache only adds costs up and compares the sum with ``totalCostLimit``.
/// - A limit of `0` means no limit, as in `NSCache`; limits are never negative.
/// - After every call the cache holds at most ``countLimit`` values of at most ``totalCostLimit``
///   total cost: a store or a lowered limit evicts the least recently used values, oldest first,
///   until both limits hold. A store or a hit (``object(forKey:)``) makes its value the most
///   recently used.
/// - Each call is O(1) (amortized), apart from ``keys`` and ``removeAllObjects()``, which are
///   O(*n*) in the values held: a dictionary finds a key's entry, and a doubly linked list,
///   threaded through an array of entries by index, keeps them in recency order. A removed
///   entry's slot is reused by the next store; the array shrinks only in ``removeAllObjects()``.
///
/// Values leave the cache after its lock is released: ``evictionHandler`` is called, and evicted,
/// replaced and removed values are released, outside the lock, so a handler or a value's
/// `deinit` may call back into the cache.
///
/// Thread safety: every call may come from any thread. All state is behind one lock (a
/// `QueueGuarded`, a serial Dispatch queue), taken once per call; calls are atomic and do not
/// block other than on that lock.
///
/// Modelled on Foundation's `NSCache` and `NSCacheDelegate`.
public final class MemoryCache<Value: Sendable>: Sendable {
    /// Called with the key and value of an entry evicted because a limit was exceeded.
    public typealias EvictionHandler = @Sendable (_ key: String, _ value: Value) -> Void

    /// One slot of the entry array: a value in the recency list, or a free slot (`value == nil`).
    private struct Entry {
        var key: String
        var value: Value?
        var cost: Int
        /// The index of the next less recently used entry, or `-1` for the oldest.
        var older: Int
        /// The index of the next more recently used entry, or `-1` for the newest.
        var newer: Int
    }

    private struct State {
        var countLimit: Int
        var totalCostLimit: Int
        var evictionHandler: EvictionHandler?
        var indexByKey: [LiteralKey: Int] = [:]
        var entries: [Entry] = []
        var freeIndices: [Int] = []
        /// The least recently used entry's index, or `-1` when empty.
        var oldest = -1
        /// The most recently used entry's index, or `-1` when empty.
        var newest = -1
        var totalCost = 0

        var exceedsLimits: Bool {
            (countLimit > 0 && indexByKey.count > countLimit) || (totalCostLimit > 0 && totalCost > totalCostLimit)
        }

        /// Links the entry at `index` in as the newest.
        mutating func linkAsNewest(_ index: Int) {
            entries[index].older = newest
            entries[index].newer = -1
            if newest >= 0 { entries[newest].newer = index } else { oldest = index }
            newest = index
        }

        mutating func unlink(_ index: Int) {
            let older = entries[index].older
            let newer = entries[index].newer
            if older >= 0 { entries[older].newer = newer } else { oldest = newer }
            if newer >= 0 { entries[newer].older = older } else { newest = older }
        }

        mutating func insert(_ value: Value, forKey key: String, cost: Int) {
            let entry = Entry(key: key, value: value, cost: cost, older: -1, newer: -1)
            let index: Int
            if let free = freeIndices.popLast() {
                index = free
                entries[index] = entry
            } else {
                index = entries.count
                entries.append(entry)
            }
            linkAsNewest(index)
            indexByKey[LiteralKey(key)] = index
            totalCost += cost
        }

        /// Takes the entry at `index` out of the cache.
        /// - Returns: Its key and value, for the caller to release (or report) outside the lock.
        mutating func remove(at index: Int) -> (key: String, value: Value) {
            unlink(index)
            let entry = entries[index]
            entries[index] = Entry(key: "", value: nil, cost: 0, older: -1, newer: -1)
            freeIndices.append(index)
            indexByKey[LiteralKey(entry.key)] = nil
            totalCost -= entry.cost
            return (entry.key, entry.value!)
        }

        /// Evicts the oldest entries until both limits hold.
        /// - Returns: The evicted entries, oldest first (empty, without allocating, when none).
        mutating func evictToLimits() -> [(key: String, value: Value)] {
            var evicted: [(key: String, value: Value)] = []
            while exceedsLimits && oldest >= 0 {
                evicted.append(remove(at: oldest))
            }
            return evicted
        }
    }

    private let state: QueueGuarded<State>

    /// An empty cache with the given limits.
    /// - Parameters:
    ///   - countLimit: The most values held, `>= 0`; `0` (the default) for no limit.
    ///   - totalCostLimit: The most total cost held, in the unit of the costs given to
    ///     ``setObject(_:forKey:cost:)``, `>= 0`; `0` (the default) for no limit.
    /// - Precondition: Neither limit is negative.
    public init(countLimit: Int = 0, totalCostLimit: Int = 0) {
        precondition(countLimit >= 0, "countLimit must not be negative")
        precondition(totalCostLimit >= 0, "totalCostLimit must not be negative")
        state = QueueGuarded(State(countLimit: countLimit, totalCostLimit: totalCostLimit),
                             label: "gzstream.memory-cache")
    }

    /// The most values held, `>= 0`; `0` for no limit. Lowering it evicts the least recently
    /// used values at once, oldest first, calling ``evictionHandler`` for each after the lock is
    /// released.
    /// - Precondition: The new value is not negative.
    public var countLimit: Int {
        get { state.withLock { $0.countLimit } }
        set {
            precondition(newValue >= 0, "countLimit must not be negative")
            changeLimits { $0.countLimit = newValue }
        }
    }

    /// The most total cost held, in the unit of the costs given to ``setObject(_:forKey:cost:)``,
    /// `>= 0`; `0` for no limit. Lowering it evicts the least recently used values at once, oldest
    /// first, calling ``evictionHandler`` for each after the lock is released.
    /// - Precondition: The new value is not negative.
    public var totalCostLimit: Int {
        get { state.withLock { $0.totalCostLimit } }
        set {
            precondition(newValue >= 0, "totalCostLimit must not be negative")
            changeLimits { $0.totalCostLimit = newValue }
        }
    }

    /// Called once for each entry evicted because a limit was exceeded (by a store or a lowered
    /// limit), in eviction order (least recently used first), on the thread of the call that
    /// evicted it, after the cache's lock is released: the handler may call into the cache.
    /// Not called for ``removeObject(forKey:)``, ``removeAllObjects()``, a replaced value, or the
    /// old value removed when ``setObject(_:forKey:cost:)`` refuses an oversize one. `nil` (the
    /// default) for none.
    ///
    /// Like `NSCacheDelegate`'s `cache(_:willEvictObject:)`, but called after the eviction.
    public var evictionHandler: EvictionHandler? {
        get { state.withLock { $0.evictionHandler } }
        set { state.withLock { $0.evictionHandler = newValue } }
    }

    /// The number of values held.
    public var count: Int {
        state.withLock { $0.indexByKey.count }
    }

    /// The sum of the costs of the values held, in the unit of the costs given to
    /// ``setObject(_:forKey:cost:)``.
    public var totalCost: Int {
        state.withLock { $0.totalCost }
    }

    /// The keys held, least recently used first, most recently used last. O(*n*); for tests and
    /// listings. Does not change the recency order.
    public var keys: [String] {
        state.withLock { state in
            var keys: [String] = []
            keys.reserveCapacity(state.indexByKey.count)
            var index = state.oldest
            while index >= 0 {
                keys.append(state.entries[index].key)
                index = state.entries[index].newer
            }
            return keys
        }
    }

    /// The value stored for `key`, made the most recently used.
    /// - Parameter key: The key the value was stored under.
    /// - Returns: The value, or `nil` when the cache holds none for `key`.
    ///
    /// Corresponds to `NSCache`'s `object(forKey:)`.
    public func object(forKey key: String) -> Value? {
        state.withLock { state in
            guard let index = state.indexByKey[LiteralKey(key)] else { return nil }
            if index != state.newest {
                state.unlink(index)
                state.linkAsNewest(index)
            }
            return state.entries[index].value
        }
    }

    /// Stores `value` for `key` as the most recently used value, replacing any value already
    /// stored for `key` (and its cost), then evicts the least recently used values, oldest first,
    /// until both limits hold. A value whose `cost` alone exceeds a nonzero ``totalCostLimit`` is
    /// refused: nothing is stored, and the old value for `key`, if any, is removed.
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - cost: The value's cost, `>= 0`, in the caller's unit (the one of ``totalCostLimit``);
    ///     `0` by default. The sum of the costs held must fit in an `Int`.
    /// - Returns: `true` when `value` was stored, `false` when it was refused as oversize.
    /// - Precondition: `cost >= 0`.
    ///
    /// ``evictionHandler`` is called for each value evicted, not for the replaced or removed old
    /// value. Corresponds to `NSCache`'s `setObject(_:forKey:cost:)`.
    @discardableResult
    public func setObject(_ value: Value, forKey key: String, cost: Int = 0) -> Bool {
        precondition(cost >= 0, "cost must not be negative")
        // The old value comes out of the lock with the evicted ones, to be released out here.
        let (stored, _, evicted, handler) = state.withLock {
            state -> (Bool, Value?, [(key: String, value: Value)], EvictionHandler?) in
            let old = state.indexByKey[LiteralKey(key)].map { state.remove(at: $0).value }
            if state.totalCostLimit > 0 && cost > state.totalCostLimit {
                return (false, old, [], nil)
            }
            state.insert(value, forKey: key, cost: cost)
            return (true, old, state.evictToLimits(), state.evictionHandler)
        }
        report(evicted, to: handler)
        return stored
    }

    /// Removes the value stored for `key`, if any, without calling ``evictionHandler``.
    /// - Parameter key: The key the value was stored under.
    ///
    /// Corresponds to `NSCache`'s `removeObject(forKey:)`.
    public func removeObject(forKey key: String) {
        // The removed value comes out of the lock, to be released out here.
        _ = state.withLock { state in
            state.indexByKey[LiteralKey(key)].map { state.remove(at: $0) }
        }
    }

    /// Removes every value, without calling ``evictionHandler``; the limits and the handler stay.
    ///
    /// Corresponds to `NSCache`'s `removeAllObjects()`.
    public func removeAllObjects() {
        // The removed values come out of the lock, to be released out here.
        _ = state.withLock { state in
            let entries = state.entries
            state.entries = []
            state.freeIndices = []
            state.indexByKey = [:]
            state.oldest = -1
            state.newest = -1
            state.totalCost = 0
            return entries
        }
    }

    /// Applies `change` to the limits, then evicts until they hold and reports the evictions.
    private func changeLimits(_ change: (inout State) -> Void) {
        let (evicted, handler) = state.withLock { state in
            change(&state)
            return (state.evictToLimits(), state.evictionHandler)
        }
        report(evicted, to: handler)
    }

    /// Calls `handler`, if any, for each evicted entry in order; called outside the lock.
    private func report(_ evicted: [(key: String, value: Value)], to handler: EvictionHandler?) {
        guard let handler else { return }
        for (key, value) in evicted {
            handler(key, value)
        }
    }
}

/// A ``MemoryCache`` key: equal to another only when their UTF-8 bytes are. Swift's `String`
/// equality holds canonically equivalent strings equal, and would let a value stored under
/// one be found under the other, while the disk tier keeps them apart.
struct LiteralKey: Hashable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (left: LiteralKey, right: LiteralKey) -> Bool {
        left.string.utf8.elementsEqual(right.string.utf8)
    }

    func hash(into hasher: inout Hasher) {
        var bytes = string
        bytes.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

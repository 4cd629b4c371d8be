import Dispatch

/// A value shared between threads behind a serial Dispatch queue: the one lock of this package
/// (the thread sanitizer sees Dispatch, not `Synchronization.Mutex`'s futex, and reported the
/// Mutex-guarded state as raced). Do not call ``withLock(_:)`` again from inside `body`.
///
/// Sendable when `Value` is: the queue serializes every access to the stored value, and what
/// goes in or comes out is itself `Sendable`, so no reference escapes the lock unguarded. The
/// conformance is unchecked only because the compiler cannot see that `queue.sync` excludes.
package final class QueueGuarded<Value> {
    private let queue: DispatchQueue
    private var value: Value

    package init(_ value: Value, label: String = "gzstream.guarded") {
        self.value = value
        queue = DispatchQueue(label: label)
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try queue.sync { try body(&value) }
    }
}

extension QueueGuarded: @unchecked Sendable where Value: Sendable {}

import Dispatch

/// A value shared between threads behind a serial Dispatch queue: the one lock of this package
/// (the thread sanitizer sees Dispatch, not `Synchronization.Mutex`'s futex, and reported the
/// Mutex-guarded state as raced). Do not call ``withLock(_:)`` again from inside `body`.
package final class QueueGuarded<Value>: @unchecked Sendable {
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

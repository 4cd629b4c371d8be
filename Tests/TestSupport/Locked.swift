import Foundation

/// A value shared between threads (a test and a delegate, say), every access behind one lock.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    public init(_ value: Value) { stored = value }

    /// The value; each read and each write takes the lock on its own.
    public var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    /// Runs `body` on the value with the lock held: a read-modify-write no other thread splits.
    public func update<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&stored) } }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A wait bounded by an instant rather than by a time per call: what a limit on a whole transfer
// (send and receive's --deadline) needs before each read or write on its connection.
extension SystemCalls {
    /// Waits until `fd` is ready for `events` (`POLLIN`, `POLLOUT`), or has failed or hung up
    /// (the next read or write then reports it).
    /// - Parameters:
    ///   - fd: A descriptor the caller keeps open for the whole call.
    ///   - events: `poll(2)`'s events.
    ///   - deadline: The last instant to wait until.
    ///   - operation: `"read"` or `"write"`, for a `poll` failure's message.
    ///   - target: The peer, for a `poll` failure's message.
    /// - Returns: `false` when `deadline` passed first (also when it had passed at the call).
    /// - Throws: ``ByteStreamError`` with `poll`'s `errno`.
    /// Blocks until then. The corresponding C function is `poll(2)`.
    package static func waitUntilReady(_ fd: Int32, for events: Int16, deadline: ContinuousClock.Instant,
                                       operation: String, target: String) throws -> Bool {
        do {
            try wait(fd, for: events, deadline: deadline, operation: operation, target: target)
            return true
        } catch let error as ByteStreamError where error.errno == ETIMEDOUT {
            return false
        }
    }
}

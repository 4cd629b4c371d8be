#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An I/O failure or a misuse of a stream, as stored in ``ByteStream/streamError`` and thrown
/// by the throwing conveniences.
public struct ByteStreamError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Equatable, Sendable {
        /// Read or write on a stream that is not open (before ``ByteStream/open()`` or after
        /// ``ByteStream/close()``).
        case notOpen
        /// A system call failed with this `errno`.
        case system(errno: Int32)
        /// A fixed-size memory buffer is full; nothing more can be written.
        case noSpaceAvailable
        /// The inner stream of a wrapping stream reported an error with no error value.
        case innerStreamFailed
        /// `readToEnd(limit:)` met more than `limit` bytes.
        case lengthLimitExceeded(limit: Int)
    }

    /// What went wrong.
    public var code: Code
    /// The operation: `"open"`, `"read"`, `"write"`, `"close"`, `"seek"`.
    public var operation: String
    /// The path, or a name such as `"standard input"` or `"descriptor 5"`, or `nil` for memory.
    public var target: String?

    public init(_ code: Code, operation: String, target: String? = nil) {
        self.code = code
        self.operation = operation
        self.target = target
    }

    /// `errno` for system failures, `nil` otherwise.
    public var errno: Int32? {
        if case .system(let number) = code { return number }
        return nil
    }

    /// The system's text for the failure (`strerror(3)`) or our own.
    public var reason: String {
        switch code {
        case .notOpen: "stream is not open"
        case .system(let number): String(cString: strerror(number))
        case .noSpaceAvailable: "no space left in the buffer"
        case .innerStreamFailed: "inner stream failed"
        case .lengthLimitExceeded(let limit): "more than the limit of \(limit) bytes"
        }
    }

    public var description: String {
        if let target { return "\(operation) \(target): \(reason)" }
        return "\(operation): \(reason)"
    }
}

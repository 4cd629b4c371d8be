#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An I/O failure or a misuse of a stream, as stored in ``ByteStream/streamError`` and thrown
/// by the throwing conveniences.
///
/// A size, count, level or limit outside its documented range, given to a public initialiser or
/// a throwing method of ByteStreams or GzipStreams, is thrown as
/// ``Code-swift.enum/invalidArgument(name:message:)`` before anything is allocated or opened,
/// so a value that came from a user cannot crash the process. Only the length of memory a
/// caller lends (`maxLength` of `read` and `write`, the `capacity` of a caller's buffer) is a
/// precondition: a wrong one is a bug in the calling code, and checking it could not make the
/// memory valid.
public struct ByteStreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure: a system call's `errno`, a misuse, or a value out of range.
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
        /// A line read by `lines`, `rawLines` or `forEachLine` is longer than `limit` bytes, its
        /// `\n` or `\r\n` not counted: `lineNumber` counts from 1, `offset` is the byte offset
        /// of the line's first byte from where the reading of lines began.
        case lineTooLong(lineNumber: Int, offset: Int, limit: Int)
        /// A value given to an initialiser or method is outside its documented range: `name` is
        /// the parameter's label (`"level"`, `"chunkSize"`, `"header.fileName"`), `message` says
        /// what it must be and what it was (`"must be 0...9, not 12"`).
        case invalidArgument(name: String, message: String)
        /// The resolver found no address for a host name (no such name, no address of a family
        /// that TCP can use, or the resolver failed): `message` is its text, such as `"Name or
        /// service not known"` (`gai_strerror(3)`). The error's target is `host:port`.
        case hostNotFound(message: String)
        /// A blocking convenience (`readChunk`, `readToEnd`, `copy(to:)`, `writeAll`, `chunks()`)
        /// met a scheduled stream that has nothing to read, or no room, yet: a scheduled stream
        /// over a pipe, socket or terminal (or a gzip stream over one) never blocks. Read or
        /// write it when its delegate is told it has bytes or space, or call
        /// ``ByteStream/removeFromSchedule()`` first.
        case wouldBlock
    }

    /// What went wrong.
    public var code: Code
    /// The operation: `"open"`, `"read"`, `"write"`, `"close"`, `"seek"`.
    public var operation: String
    /// The path, or a name such as `"standard input"` or `"descriptor 5"`, or `nil` for memory.
    public var target: String?

    /// An error of `code` in `operation` on `target` (a path or peer; `nil` for memory).
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
        case .lineTooLong(let lineNumber, let offset, let limit):
            "line \(lineNumber) (at byte offset \(offset)) is longer than \(limit) bytes; give a larger maxLength to read it"
        case .invalidArgument(let name, let message): "invalid \(name): \(message)"
        case .hostNotFound(let message): message
        case .wouldBlock: "nothing to read or no room yet: the stream is scheduled (use its delegate, or remove it from its scheduler)"
        }
    }

    /// The message a user reads: `"open notes.txt: No such file or directory"`.
    public var description: String {
        if let target { return "\(operation) \(target): \(reason)" }
        return "\(operation): \(reason)"
    }
}

/// Throws ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for `operation`
/// unless `isValid`; shared by ByteStreams and GzipStreams so every check reads the same.
package func requireArgument(_ isValid: Bool, _ name: String, _ message: @autoclosure () -> String,
                             operation: String) throws(ByteStreamError) {
    if !isValid {
        throw ByteStreamError(.invalidArgument(name: name, message: message()), operation: operation)
    }
}

/// Checks a size in bytes or a count against `range`, with a message such as
/// `"must be 1...1073741824, not 0"`.
package func requireArgument(_ value: some BinaryInteger, in range: ClosedRange<Int>, _ name: String,
                             operation: String) throws(ByteStreamError) {
    try requireArgument(Int(exactly: value).map(range.contains) ?? false, name,
                        "must be \(describe(range)), not \(value)", operation: operation)
}

/// Checks a ring of `count` buffers of `size` bytes each (`size` already checked): `count` at
/// least 1 and the ring at most ``ByteStream/maximumRingSize`` bytes, so that a count in range
/// cannot ask for more memory than any machine here has.
/// - Returns: The ring's size in bytes.
@discardableResult
package func requireRing(count: Int, of size: Int, operation: String) throws(ByteStreamError) -> Int {
    try requireArgument(count, in: 1...Int.max, "bufferCount", operation: operation)
    let (capacity, overflow) = size.multipliedReportingOverflow(by: count)
    try requireArgument(!overflow && capacity <= ByteStream.maximumRingSize, "bufferCount",
                        "\(count) buffers of \(size) bytes are more than ByteStream.maximumRingSize (4 GiB)",
                        operation: operation)
    return capacity
}

private func describe(_ range: ClosedRange<Int>) -> String {
    range.upperBound == .max ? "at least \(range.lowerBound)" : "\(range.lowerBound)...\(range.upperBound)"
}

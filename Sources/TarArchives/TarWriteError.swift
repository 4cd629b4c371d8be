/// A member that ``TarWriter`` cannot write as given, or content that does not match its
/// header. I/O errors of the output (and of a content stream, under
/// ``TarWriter/append(_:content:)``) are not `TarWriteError`s: they come through unchanged
/// (`ByteStreamError`, `GzipError`).
public struct TarWriteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Equatable, Sendable {
        /// The member has an empty path: no tar reader can name it.
        case emptyPath
        /// The path or link target holds a NUL byte, which no header field or PAX record can
        /// carry (POSIX.1-2001 pax: a record's value ends at its newline, a ustar field at NUL).
        case nulInName
        /// A field fits neither its ustar form nor a PAX record nor GNU base-256: `field` names
        /// it as POSIX does (`devmajor`, `devminor`), or `typeflag` for a kind the writer does
        /// not write (a GNU sparse member).
        case unrepresentable(field: String)
        /// The content stream ended after `actual` bytes, or had more (`actual` is then
        /// `expected + 1`: it was read one byte past the size), while the header said
        /// `expected` bytes.
        case contentSizeMismatch(expected: Int, actual: Int)
        /// ``TarWriter/append(_:content:)`` after ``TarWriter/finish()``.
        case finished
    }

    /// What is wrong.
    public var reason: Reason
    /// The member's path as given (bytes, as tar stores them).
    public var path: [UInt8]

    /// A fault `reason` of the member at `path`.
    public init(_ reason: Reason, path: [UInt8]) {
        self.reason = reason
        self.path = path
    }

    /// The message a user reads, naming the member.
    public var description: String {
        let name = String(decoding: path, as: UTF8.self)
        switch reason {
        case .emptyPath:
            return "a tar member needs a name"
        case .nulInName:
            return "\(name): a tar member's name or link target cannot hold a NUL byte"
        case .unrepresentable(let field):
            return "\(name): the \(field) field cannot be stored in a tar header"
        case .contentSizeMismatch(let expected, let actual):
            return actual > expected
                ? "\(name): the content is longer than the \(expected) bytes its header says"
                : "\(name): the content ended after \(actual) of the \(expected) bytes its header says"
        case .finished:
            return "\(name): the tar archive was finished; nothing can be appended"
        }
    }
}

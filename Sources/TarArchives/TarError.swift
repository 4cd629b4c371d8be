/// A malformed tar archive, or one refused by a limit. Every case names the plain byte offset
/// (in the tar stream) of the header or data where it was found.
///
/// I/O and gzip failures of the stream a tar is read from are not `TarError`s: they come
/// through unchanged (`ByteStreamError`, `GzipError`).
public struct TarError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Equatable, Sendable {
        /// The header's stored checksum is neither its unsigned nor its signed byte sum.
        case badChecksum(stored: Int64?, computed: Int)
        /// A numeric header field (named as POSIX names it: `size`, `mode`, `mtime` …) is
        /// neither octal nor base-256, or out of range.
        case badNumber(field: String)
        /// The archive ended inside a header or inside a member's data.
        case truncated
        /// The data is not a tar archive at all: its first 512-byte block is not a header (its
        /// checksum is wrong), or the data ends before one whole block. Always at offset 0; what
        /// GNU tar calls "This does not look like a tar archive".
        case notTarArchive
        /// A PAX extended header record is malformed (`length keyword=value\n`, POSIX.1-2001
        /// pax "Extended Header Format"); `detail` says how.
        case badExtendedHeader(detail: String)
        /// A path or link target holds a NUL byte (only a PAX record can carry one).
        case nulInName
        /// A long name, link or extended header larger than the reader's cap, in bytes.
        case headerTooLarge(size: Int64, limit: Int)
        /// A sparse map that is not increasing, overlaps, or reaches past the file's size.
        case badSparseMap(detail: String)
    }

    /// What is wrong.
    public var reason: Reason
    /// The plain offset, in bytes, of the header (or data) where it was found.
    public var offset: Int

    /// A fault `reason` at plain offset `offset`.
    public init(_ reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// The message a user reads, naming the offset: `bad tar header checksum at byte 1536 …`.
    public var description: String {
        switch reason {
        case .badChecksum(let stored, let computed):
            let storedText = stored.map { String($0) } ?? "unreadable"
            return "bad tar header checksum at byte \(offset) (stored \(storedText), computed \(computed)): not a tar archive or a damaged one"
        case .badNumber(let field):
            return "bad tar header at byte \(offset): the \(field) field is not a number"
        case .truncated:
            return "the tar archive ends early, inside the member at byte \(offset)"
        case .notTarArchive:
            return "the data is not a tar archive (no tar header at byte \(offset))"
        case .badExtendedHeader(let detail):
            return "bad pax extended header at byte \(offset): \(detail)"
        case .nulInName:
            return "a name with a NUL byte in the tar header at byte \(offset)"
        case .headerTooLarge(let size, let limit):
            return "a tar header at byte \(offset) holds \(size) bytes of names or records, more than the \(limit) allowed"
        case .badSparseMap(let detail):
            return "bad sparse map in the tar member at byte \(offset): \(detail)"
        }
    }
}

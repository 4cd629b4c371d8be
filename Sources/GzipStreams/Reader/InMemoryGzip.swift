// FoundationEssentials gives Data and Date without loading ICU, which keeps the process small.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ByteStreams

// The common case in one line: `try data.gzipped()`, `try data.gunzipped()`, `data.isGzip`,
// the same on `[UInt8]`. They are the streams underneath, so they write and check exactly what
// GzipOutputStream and GzipInputStream do.

extension Data {
    /// These bytes as one gzip member (RFC 1952), deflated at `level`, with the default header
    /// (no name, MTIME 0, OS 3), as ``GzipOutputStream`` writes it.
    ///
    /// Memory: the result, grown in place, and zlib's state (about 256 KiB); the input is read
    /// where it is, not copied.
    /// - Parameter level: Compression level, `0...12` (10 to 12: libdeflate's, through
    ///   ``DeflateEngine/chunks``); default 6.
    /// - Returns: The gzip file's bytes: a 10-byte header, the deflate data, an 8-byte trailer.
    /// - Throws: ``ByteStreamError`` with code `invalidArgument` for a level out of range;
    ///   ``GzipError/zlibFailure(code:message:)`` when zlib cannot allocate its state.
    public func gzipped(level: Int = GzipOutputStream.defaultLevel) throws -> Data {
        let sink = MemoryOutputStream()
        try withUnsafeBytes { try InMemoryGzip.deflate($0, level: level, into: sink) }
        return sink.data
    }

    /// The plain bytes of this gzip data: every member, one after another (RFC 1952 §2.2), each
    /// checked as ``GzipInputStream`` checks it (header, CRC-32 and ISIZE); zero padding after
    /// the last member is skipped, any other byte there is an error.
    ///
    /// Memory: the result, grown in place; the input is read where it is, not copied.
    /// - Parameter maximumOutputSize: The most plain bytes to accept, `>= 0`, so that a small
    ///   input cannot exhaust memory (a deflate stream can expand about 1000 times); default none.
    /// - Returns: The plain bytes.
    /// - Throws: ``GzipError`` for data that is not whole, valid gzip, naming the byte offset:
    ///   `emptyInput`, `notGzip`, `unsupportedMethod`, `reservedFlags`, `headerCRCMismatch`,
    ///   `truncated`, `invalidDeflateData`, `crcMismatch`, `lengthMismatch`, `trailingGarbage`;
    ///   `outputLimitExceeded` past `maximumOutputSize`. ``ByteStreamError`` with code
    ///   `invalidArgument` for a negative `maximumOutputSize`.
    public func gunzipped(maximumOutputSize: Int? = nil) throws -> Data {
        let sink = MemoryOutputStream()
        try InMemoryGzip.inflate(MemoryInputStream(data: self), maximumOutputSize: maximumOutputSize, into: sink)
        return sink.data
    }

    /// Whether these bytes start with a gzip member's fixed header (RFC 1952 §2.3.1): at least
    /// 10 bytes, ID1 ID2 `1f 8b`, CM 8 (deflate) and no reserved FLG bit (5 to 7) set; MTIME,
    /// XFL and OS may hold anything. Nothing past those 10 bytes is looked at (the optional
    /// header fields, the deflate data, the trailer), so `true` does not promise that
    /// ``gunzipped(maximumOutputSize:)`` succeeds; `false` promises that it throws.
    public var isGzip: Bool {
        withUnsafeBytes(InMemoryGzip.startsWithMemberHeader)
    }
}

extension Array where Element == UInt8 {
    /// These bytes as one gzip member; see `Data.gzipped(level:)`.
    ///
    /// Memory: the result, in an array that grows by doubling (up to about twice the result
    /// while it grows); the input is read where it is, not copied.
    /// - Parameter level: Compression level, `0...12` (10 to 12: libdeflate's, through
    ///   ``DeflateEngine/chunks``); default 6.
    /// - Returns: The gzip file's bytes.
    /// - Throws: As `Data.gzipped(level:)`.
    public func gzipped(level: Int = GzipOutputStream.defaultLevel) throws -> [UInt8] {
        let sink = ArrayOutputStream(reservingCapacity: 0)
        try withUnsafeBytes { try InMemoryGzip.deflate($0, level: level, into: sink) }
        return sink.bytes
    }

    /// The plain bytes of this gzip data, every member checked; see
    /// `Data.gunzipped(maximumOutputSize:)`.
    ///
    /// Memory: the result, in an array reserved at the size the last member's ISIZE states
    /// (at most `maximumOutputSize`, and at most 32 times the input, so a forged ISIZE cannot
    /// reserve much), which is exact for a single member under 4 GiB; past it, the array
    /// grows by doubling. The input is read where it is, not copied.
    /// - Parameter maximumOutputSize: The most plain bytes to accept, `>= 0`; default none.
    /// - Returns: The plain bytes.
    /// - Throws: As `Data.gunzipped(maximumOutputSize:)`.
    public func gunzipped(maximumOutputSize: Int? = nil) throws -> [UInt8] {
        let hint = withUnsafeBytes { InMemoryGzip.sizeHint($0, maximumOutputSize: maximumOutputSize) }
        let sink = ArrayOutputStream(reservingCapacity: hint)
        try InMemoryGzip.inflate(MemoryInputStream(bytes: self), maximumOutputSize: maximumOutputSize, into: sink)
        return sink.bytes
    }

    /// Whether these bytes start with a gzip member's fixed header; see `Data.isGzip`.
    public var isGzip: Bool {
        withUnsafeBytes(InMemoryGzip.startsWithMemberHeader)
    }
}

/// The work behind the `Data` and `[UInt8]` helpers.
enum InMemoryGzip {
    /// The chunk the streams pass in one call: 64 KiB, fewer calls than the 4 KiB default.
    static let chunkSize = 64 * 1024

    /// Deflates `input` as one member into `sink`, which it closes.
    static func deflate(_ input: UnsafeRawBufferPointer, level: Int, into sink: ByteOutputStream) throws {
        let gzip = try GzipOutputStream(wrapping: sink, level: level, chunkSize: chunkSize)
        do {
            try gzip.writeAll(input)
        } catch {
            gzip.abandon()
            throw error
        }
        try gzip.closeOrThrow()
    }

    /// Inflates every member of `input` into `sink`, with every check of ``GzipInputStream``.
    static func inflate(_ input: MemoryInputStream, maximumOutputSize: Int?, into sink: ByteOutputStream) throws {
        let gzip = try GzipInputStream(wrapping: input, chunkSize: chunkSize, maximumOutputSize: maximumOutputSize)
        defer { gzip.close() }
        try gzip.copy(to: sink, chunkSize: chunkSize)
    }

    /// RFC 1952 §2.3.1's fixed header: ID1 ID2, CM 8, no reserved FLG bit.
    static func startsWithMemberHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        GzipFormat.startsWithMember(bytes)
    }

    /// The plain size to reserve for `compressed`: the last member's ISIZE (RFC 1952 §2.3.1,
    /// the size modulo 2^32), bounded by the limit and by 32 times the input, since a forged
    /// ISIZE must not reserve gigabytes for a small input; 0 when the input is not gzip.
    static func sizeHint(_ compressed: UnsafeRawBufferPointer, maximumOutputSize: Int?) -> Int {
        guard startsWithMemberHeader(compressed), compressed.count >= GzipFormat.fixedHeaderSize + GzipTrailer.size else {
            return 0
        }
        let isize = Int(GzipTrailer.isize(ofMember: compressed))
        let bound = compressed.count > Int.max / 32 ? Int.max : compressed.count * 32
        return Swift.max(0, Swift.min(isize, maximumOutputSize ?? .max, bound))
    }
}

/// Keeps what is written in one array: the sink of the `[UInt8]` helpers, so that the result
/// is not copied out of a `Data` at the end. Never blocks.
final class ArrayOutputStream: ByteOutputStream {
    private(set) var bytes: [UInt8] = []

    /// - Parameter capacity: Bytes to reserve up front (a hint, not a limit).
    init(reservingCapacity capacity: Int) {
        bytes.reserveCapacity(capacity)
        super.init()
    }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        bytes.append(contentsOf: UnsafeBufferPointer(start: buffer, count: maxLength))
        return maxLength
    }
}

import ByteStreams
import CZlib
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds the GZIDX index (``GzipIndex``, version 1) of any gzip file in one decoding pass:
/// one member or many, from any producer (gzip, pigz, gzstream, bgzip), as zlib's zran.c does.
/// It reads the file through a ``GzipInputStream`` with a ``GzipIndexRecorder``, which places
/// the points (see there), and drops the plain bytes. With ISA-L (the default) a file is taken
/// as that reader takes it: zlib's error for invalid data, except deflate data that only ISA-L
/// decodes (``GzipInputStream/Inflater/isal``), taken when the member's CRC-32 and ISIZE match;
/// with zlib, zlib's verdict alone.
///
/// Every member's header (RFC 1952 §2.3.1), CRC-32 and ISIZE are checked as the sequential
/// reader checks them, with the same errors: an index of a damaged file is refused. Zero
/// padding after the last member is taken, as that reader takes it; other trailing bytes
/// (trailing garbage) are refused, or taken as that reader's
/// ``GzipInputStream/TrailingGarbagePolicy/ignore`` takes them when asked. The index's
/// compressed size is the whole input's either way (indexed_gzip and rapidgzip check it
/// against the file's size).
///
/// Memory stays flat for any input: the windows go to an unlinked temporary file as they are
/// found and are copied after the point table when the index is written; what stays in memory
/// is one 32 KiB window, the input chunk, a 256 KiB buffer for the plain bytes, the inflate
/// state and the table, 18 bytes a point. One ``build(from:into:spillDirectory:chunkSize:ignoresTrailingGarbage:inflater:plainBytes:)``
/// at a time per input and output.
public struct GzipIndexBuilder: Sendable {
    /// The plain distance between points that `gzstream index` uses by default: 16 MiB, so that
    /// a read at any offset decodes at most about 16 MiB before it where the data compresses
    /// less than about 5:1 (beyond, ``defaultCompressedSpan`` spaces the points). Measured on
    /// gzip -6 of the 256 MiB bench corpus (71,457,357 bytes): 16 points, 491,843 bytes (0.69%);
    /// 12 MiB gave 0.96%, 8 MiB 1.42%.
    public static let defaultSpan = 16 << 20
    /// The compressed distance below which the default spacing puts no window after a point:
    /// 3,276,800 bytes, 100 windows of 32 KiB, so that the windows take at most 1% of the gzip
    /// file whatever its compression ratio.
    public static let defaultCompressedSpan = 100 * Int(GzipIndex.defaultWindowSize)
    /// The smallest span: the window size, below which indexed_gzip refuses the index.
    public static let minimumSpan = Int(GzipIndex.defaultWindowSize)

    /// The plain bytes between one point and the next boundary that may become a point.
    public let span: Int
    /// The compressed bytes after a point before which no boundary becomes a point with a
    /// window; 0 for none.
    public let compressedSpan: Int

    /// A builder with the default spacing: a point about every ``defaultSpan`` plain bytes,
    /// each window at least ``defaultCompressedSpan`` compressed bytes after the point before
    /// it, so that the index stays within about 1% of the gzip file on any data.
    public init() {
        span = Self.defaultSpan
        compressedSpan = Self.defaultCompressedSpan
    }

    /// A builder that puts a point about every `span` plain bytes, and a window no nearer than
    /// `compressedSpan` compressed bytes to the point before it.
    /// - Parameters:
    ///   - span: The plain distance in bytes between points, `minimumSpan...UInt32.max` (the
    ///     GZIDX header stores it in 4 bytes).
    ///   - compressedSpan: `0...UInt32.max`; default 0: a point every `span` plain bytes
    ///     whatever they compress to, so that the index (32 KiB a point) grows with the ratio.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a span
    ///   or compressed span out of range.
    public init(span: Int, compressedSpan: Int = 0) throws(ByteStreamError) {
        try requireArgument(span, in: Self.minimumSpan...Int(UInt32.max), "span", operation: "create GzipIndexBuilder")
        try requireArgument(compressedSpan, in: 0...Int(UInt32.max), "compressedSpan",
                            operation: "create GzipIndexBuilder")
        self.span = span
        self.compressedSpan = compressedSpan
    }

    /// What ``build(from:into:spillDirectory:chunkSize:ignoresTrailingGarbage:inflater:plainBytes:)`` found and wrote.
    public struct Summary: Sendable, Equatable {
        /// The gzip file's size in bytes.
        public var compressedSize: Int64
        /// The plain data's size in bytes.
        public var plainSize: Int64
        /// The members, all checked.
        public var memberCount: Int
        /// The points in the index, the first included.
        public var pointCount: Int
        /// The points with a window.
        public var windowCount: Int
        /// The index's size in bytes: `35 + 18 × pointCount + 32768 × windowCount`, then
        /// `24 + 8 × pointCount` (the line table) and 20 (the seal).
        public var indexSize: Int64
        /// The bytes after the last member that are neither zero padding nor a member, when
        /// they were taken (`ignoresTrailingGarbage`); `nil` when there are none.
        public var trailingGarbage: GzipInputStream.TrailingGarbage? = nil
        /// Whether the input ended with zero bytes after the last member (padding, taken).
        public var endedWithZeroPadding = false
        /// The lines in the plain data (``GzipLineTable/lineCount``).
        public var lineCount: UInt64 = 0
    }

    /// Reads a whole gzip file and writes its GZIDX version 1 index to `output`.
    /// - Parameters:
    ///   - input: The gzip file from its first byte; opened if not open, read to its end, not
    ///     closed. Blocking reads: a scheduled stream that has nothing yet is an error.
    ///   - output: Where the index goes, written only once the whole input is checked; opened if
    ///     not open, not closed.
    ///   - spillDirectory: An open directory descriptor (the caller keeps owning it) in which
    ///     the windows' temporary file is made; `nil` for `$TMPDIR`, else `/tmp`.
    ///   - chunkSize: The size in bytes of each read, `1...ByteStream.maximumChunkSize`; default 64 KiB.
    ///   - ignoresTrailingGarbage: Whether trailing garbage is taken (read to the end, counted
    ///     in the compressed size, and told in ``Summary/trailingGarbage``) instead of being an
    ///     error; default `false`.
    ///   - inflater: The decoder: ISA-L (the default, about twice as fast; a boundary before a
    ///     fixed-Huffman block, or after a header it took whole, is passed over, so a point may
    ///     come a block or two later) or zlib (`Z_BLOCK`: the first boundary after each span).
    ///     Either way the errors are zlib's.
    ///   - plainBytes: Called with the plain bytes in order, as they are decoded, each piece
    ///     valid only during the call (`gzstream index` finds a tar's members in them); an
    ///     error it throws ends the build and is thrown. Default none. The index does not depend
    ///     on it.
    /// - Returns: The sizes and counts.
    /// - Throws: The ``GzipError`` the sequential reader gives for the same input
    ///   (``GzipError/emptyInput``, ``GzipError/notGzip(offset:)``, a bad header, invalid
    ///   deflate data with zlib's message, ``GzipError/crcMismatch(member:stored:computed:offset:)``,
    ///   ``GzipError/lengthMismatch(member:stored:computed:offset:)``, ``GzipError/truncated(member:part:offset:)``,
    ///   ``GzipError/trailingGarbage(offset:length:)`` unless `ignoresTrailingGarbage`); the
    ///   input's or output's own errors;
    ///   ``ByteStreamError`` for the temporary file; ``GzipError/zlibFailure(code:message:)``.
    /// Blocks while reading and writing. Wraps ISA-L's `isal_inflate`, or zlib's `inflate` with
    /// `Z_BLOCK`, through ``GzipInputStream``.
    public func build(from input: ByteInputStream, into output: ByteOutputStream, spillDirectory: Int32? = nil,
                      chunkSize: Int = 64 << 10, ignoresTrailingGarbage: Bool = false,
                      inflater: GzipInputStream.Inflater = .isal,
                      plainBytes: ((UnsafeRawBufferPointer) throws -> Void)? = nil) throws -> Summary {
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: "build gzip index")
        let recorder = try GzipIndexRecorder(span: span, compressedSpan: compressedSpan,
                                             spillDirectory: spillDirectory)
        let stream = try GzipInputStream(wrapping: input, chunkSize: chunkSize,
                                         trailingGarbage: ignoresTrailingGarbage ? .ignore : .fail,
                                         inflater: inflater, closesInnerStream: false, indexRecorder: recorder)
        try stream.openOrThrow()
        defer { stream.close() }
        let scratchSize = 256 << 10
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        while true {
            let count = stream.read(scratch, maxLength: scratchSize)
            if count < 0 { throw stream.streamErrorOrFallback(operation: "read") }
            if count == 0 { break }
            try plainBytes?(UnsafeRawBufferPointer(start: scratch, count: count))
        }
        return try recorder.write(to: output)
    }
}

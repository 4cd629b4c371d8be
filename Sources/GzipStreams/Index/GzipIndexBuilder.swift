import ByteStreams
import CZlib
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds the GZIDX index (``GzipIndex``, version 1) of any gzip file in one decoding pass:
/// one member or many, from any producer (gzip, pigz, gzstream, bgzip), as zlib's zran.c does.
///
/// zlib inflates each member's raw deflate data (RFC 1951) with `Z_BLOCK`, which stops at
/// every deflate block boundary and tells in `data_type` how many bits of the last byte read
/// belong to the next block. The points are:
/// - the first at plain offset 0, on the first deflate byte after the first header, without a
///   window (what indexed_gzip and rapidgzip need to read the bytes before the next point);
/// - then one at the first block boundary after every `span` plain bytes since the last point,
///   with the 32 KiB of plain data before it (zeros before the start of the data) and its bit
///   offset (zran's `bits`). A later member's start, where the deflate data refers to nothing
///   before it, becomes a byte-aligned point without window once `span` bytes have passed.
///
/// Every member's header (RFC 1952 §2.3.1), CRC-32 and ISIZE are checked as the sequential
/// reader (``GzipInputStream`` with ``GzipInputStream/Inflater/zlib``) checks them, with the
/// same errors: an index of a damaged file is refused. Zero padding after the last member is
/// taken, as that reader takes it; other trailing bytes (trailing garbage) are refused, or
/// taken as that reader's ``GzipInputStream/TrailingGarbagePolicy/ignore`` takes them when
/// asked. The index's compressed size is the whole input's either way (indexed_gzip and
/// rapidgzip check it against the file's size).
///
/// Memory stays flat for any input: the windows go to an unlinked temporary file as they are
/// found and are copied after the point table when the index is written; what stays in memory
/// is one 32 KiB window being filled, the input chunk, zlib's state and the table, 18 bytes a
/// point. Not thread-safe; one ``build(from:into:spillDirectory:chunkSize:ignoresTrailingGarbage:)`` at a time per
/// input and output.
public struct GzipIndexBuilder: Sendable {
    /// The plain distance between points that `gzstream index` uses: 16 MiB, so that the index
    /// stays under 1% of a well-compressed file while a read at any offset decodes at most
    /// 16 MiB before it. Measured on gzip -6 of the 256 MiB bench corpus (71,457,357 bytes):
    /// 16 points, 491,843 bytes (0.69%); 12 MiB gave 0.96%, 8 MiB 1.42%.
    public static let defaultSpan = 16 << 20
    /// The smallest span: the window size, below which indexed_gzip refuses the index.
    public static let minimumSpan = Int(GzipIndex.defaultWindowSize)

    /// The plain bytes between one point and the next boundary that may become a point.
    public let span: Int

    /// A builder that puts a point about every `span` plain bytes.
    /// - Parameter span: The plain distance in bytes between points,
    ///   `minimumSpan...UInt32.max` (the GZIDX header stores it in 4 bytes); default ``defaultSpan``.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a span out of range.
    public init(span: Int = defaultSpan) throws(ByteStreamError) {
        try requireArgument(span, in: Self.minimumSpan...Int(UInt32.max), "span", operation: "create GzipIndexBuilder")
        self.span = span
    }

    /// What ``build(from:into:spillDirectory:chunkSize:ignoresTrailingGarbage:)`` found and wrote.
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
        /// The index's size in bytes: `35 + 18 × pointCount + 32768 × windowCount + 20` (the seal).
        public var indexSize: Int64
        /// The bytes after the last member that are neither zero padding nor a member, when
        /// they were taken (`ignoresTrailingGarbage`); `nil` when there are none.
        public var trailingGarbage: GzipInputStream.TrailingGarbage? = nil
        /// Whether the input ended with zero bytes after the last member (padding, taken).
        public var endedWithZeroPadding = false
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
    /// - Returns: The sizes and counts.
    /// - Throws: The ``GzipError`` the sequential reader gives for the same input
    ///   (``GzipError/emptyInput``, ``GzipError/notGzip(offset:)``, a bad header, invalid
    ///   deflate data with zlib's message, ``GzipError/crcMismatch(member:stored:computed:offset:)``,
    ///   ``GzipError/lengthMismatch(member:stored:computed:offset:)``, ``GzipError/truncated(member:part:offset:)``,
    ///   ``GzipError/trailingGarbage(offset:length:)`` unless `ignoresTrailingGarbage`); the
    ///   input's or output's own errors;
    ///   ``ByteStreamError`` for the temporary file; ``GzipError/zlibFailure(code:message:)``.
    /// Blocks while reading and writing. Wraps zlib's `inflateInit2`, `inflate` with `Z_BLOCK`
    /// and `inflateEnd`.
    public func build(from input: ByteInputStream, into output: ByteOutputStream, spillDirectory: Int32? = nil,
                      chunkSize: Int = 64 << 10, ignoresTrailingGarbage: Bool = false) throws -> Summary {
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: "build gzip index")
        let spill: WindowSpillFile
        if let spillDirectory {
            spill = try WindowSpillFile(in: spillDirectory)
        } else {
            let variable = getenv("TMPDIR").map { String(cString: $0) } ?? ""
            let path = Pathname(variable.isEmpty ? "/tmp" : variable)
            let directory = try SystemCalls.open(path, flags: O_RDONLY | O_DIRECTORY)
            defer { try? SystemCalls.close(directory, target: path.description) }
            spill = try WindowSpillFile(in: directory)
        }
        defer { spill.close() }
        try input.openUnlessOpened()
        let scan = try IndexScan(input: input, chunkSize: chunkSize, span: span, spill: spill,
                                 ignoresTrailingGarbage: ignoresTrailingGarbage)
        defer { scan.release() }
        try scan.run()
        if output.streamStatus == .notOpen { try output.openOrThrow() }
        var header: [UInt8] = []
        header.reserveCapacity(GzipIndex.headerSize)
        header += GzipIndex.magic
        header += [GzipIndex.version, 0]
        GzipFormat.append(littleEndian: UInt64(scan.position), to: &header)
        GzipFormat.append(littleEndian: UInt64(scan.plainSize), to: &header)
        GzipFormat.append(littleEndian: UInt32(span), to: &header)
        GzipFormat.append(littleEndian: GzipIndex.defaultWindowSize, to: &header)
        GzipFormat.append(littleEndian: UInt32(scan.pointCount), to: &header)
        try output.writeAll(header)
        try output.writeAll(scan.table)
        var crc = header.withUnsafeBytes { crc32(0, $0) }
        crc = scan.table.withUnsafeBytes { crc32(crc, $0) }
        try spill.copy(to: output, chunk: 1 << 20) { crc = crc32(crc, $0) }
        let seal = GzipIndexSeal.encoded(tail: scan.lastBytes, crcBefore: crc)
        try output.writeAll(seal)
        return Summary(compressedSize: scan.position, plainSize: scan.plainSize, memberCount: scan.member,
                       pointCount: scan.pointCount, windowCount: scan.windowCount,
                       indexSize: Int64(header.count + scan.table.count + seal.count) + spill.size,
                       trailingGarbage: scan.trailingGarbage, endedWithZeroPadding: scan.endedWithZeroPadding)
    }
}

/// One pass of ``GzipIndexBuilder``: the member framing over a ``GzipMemberInput``, and
/// inflation with zlib stopping at block boundaries into a 32 KiB ring that always holds the
/// last 32 KiB of plain data.
private final class IndexScan {
    private static let windowSize = Int(GzipIndex.defaultWindowSize)

    private let input: GzipMemberInput
    private let span: Int64
    private let spill: WindowSpillFile
    private let zstream: ZStream
    /// The last `windowSize` plain bytes, the oldest at `ringEnd` (zeros before the data).
    private let ring: UnsafeMutablePointer<UInt8>
    private var ringEnd = 0

    /// The point table as GZIDX stores it, 18 bytes a point.
    private(set) var table: [UInt8] = []
    private(set) var pointCount = 0
    private(set) var windowCount = 0
    private(set) var member = 0
    private(set) var plainSize: Int64 = 0
    private var lastPoint: Int64 = 0
    private let ignoresTrailingGarbage: Bool
    /// What followed the last member, once ``run()`` returned.
    private(set) var trailingGarbage: GzipInputStream.TrailingGarbage?
    private(set) var endedWithZeroPadding = false

    /// The offset in the input of the next byte to read.
    var position: Int64 { input.position }

    /// The last (up to 8) bytes read before ``position``: at the end, the file's last bytes,
    /// which gzstream's seal binds the index to.
    var lastBytes: [UInt8] { input.lastBytes }

    init(input: ByteInputStream, chunkSize: Int, span: Int, spill: WindowSpillFile,
         ignoresTrailingGarbage: Bool) throws(GzipError) {
        // Blocking reads: a read of 0 is the end, even from a scheduled stream.
        self.input = GzipMemberInput(inner: input, chunkSize: chunkSize, followsReadiness: false)
        self.input.keepsLastBytes = true
        self.ignoresTrailingGarbage = ignoresTrailingGarbage
        self.span = Int64(span)
        self.spill = spill
        zstream = try ZStream(inflate: ())
        zstream.stopsAtBlocks = true
        ring = .allocate(capacity: Self.windowSize)
        ring.initialize(repeating: 0, count: Self.windowSize)
    }

    /// Frees the ring and zlib's state (the input's buffer goes with the input).
    func release() {
        zstream.end()
        ring.deallocate()
    }

    /// Reads the whole input: members, then zero padding to the end.
    func run() throws {
        guard try input.peekByte() != nil else { throw GzipError.emptyInput }
        var parser = GzipHeaderParser(member: 1, offset: 0, maximumFieldLength: 0)
        while true {
            member = parser.member
            try input.readHeader(&parser)
            if member == 1 { addPoint(compressedOffset: position, bits: 0, plainOffset: 0) }
            // A later member's start needs no window; it becomes a point once its data gives a
            // byte (not for an empty member, from which there is nothing to read).
            let (crc, size) = try inflateMember(startPoint: member > 1 && plainSize - lastPoint >= span ? position : nil)
            let (stored, trailerOffset) = try input.readTrailer(member: member)
            try stored.check(crc32: crc, plainSize: size, member: member, offset: trailerOffset)
            guard let next = try nextMember() else { return }
            parser = next
        }
    }

    /// What follows a member, as the sequential reader takes it: `nil` at the end (after zero
    /// padding, if any), else a parser that has taken the next member's magic.
    private func nextMember() throws -> GzipHeaderParser? {
        let garbageStart: Int64, leadingBytes: [UInt8]
        switch try input.readFollowing(member: member, maximumFieldLength: 0) {
        case .end:
            return nil
        case .member(let parser):
            return parser
        case .cutHeader(let offset):
            throw GzipError.truncated(member: member + 1, part: .header, offset: offset + 1)
        case .zeroPadding(let offset):
            // Zero padding to the end is taken; anything after it makes it trailing garbage.
            if try input.skipZeroPadding() {
                endedWithZeroPadding = true
                return nil
            }
            (garbageStart, leadingBytes) = (offset, [0])
        case .other(let offset, let lead):
            (garbageStart, leadingBytes) = (offset, lead)
        }
        try input.skipToEnd()
        let garbage = GzipInputStream.TrailingGarbage(offset: garbageStart, length: position - garbageStart,
                                                      leadingBytes: leadingBytes)
        guard ignoresTrailingGarbage else { throw GzipError.trailingGarbage(offset: garbage.offset, length: garbage.length) }
        trailingGarbage = garbage
        return nil
    }

    /// Inflates one member's deflate data, adding points at block boundaries, and at
    /// `startPoint`, the member's first deflate byte, if not `nil`.
    /// - Returns: The member's CRC-32 and plain size.
    private func inflateMember(startPoint: Int64?) throws -> (crc: UInt32, size: Int64) {
        var startPoint = startPoint
        zstream.reset()
        var crc: UInt32 = 0
        var size: Int64 = 0
        while true {
            // At the end of the input zlib is still called: it may end the stream without more
            // (after the final block's end code, with Z_BLOCK it stops before looking further).
            let inputEnded = try !input.hasUnreadBytes && !input.refill()
            if ringEnd == Self.windowSize { ringEnd = 0 }
            let step = zstream.step(input: input.buffer + input.start, inputCount: input.end - input.start,
                                    output: ring + ringEnd, outputCapacity: Self.windowSize - ringEnd)
            let produced = step.produced
            crc = crc32(crc, UnsafeRawBufferPointer(start: ring + ringEnd, count: produced))
            ringEnd += produced
            size += Int64(produced)
            plainSize += Int64(produced)
            input.start += step.consumed
            if let offset = startPoint, produced > 0 {
                addPoint(compressedOffset: offset, bits: 0, plainOffset: plainSize - Int64(produced))
                startPoint = nil
            }
            switch step.outcome {
            case .streamEnd:
                return (crc, size)
            case .progress, .stalled:
                if inputEnded, produced == 0 {
                    throw GzipError.truncated(member: member, part: .deflateData, offset: position)
                }
            case .invalid(let reason):
                throw GzipError.invalidDeflateData(member: member, message: reason, offset: position)
            case .failed(let error):
                throw error
            }
            // Just after a block's end (or a stored block's bytes), and not in the final block,
            // so that a boundary follows inside this member.
            if let bits = zstream.bitsPastBlockBoundary, plainSize - lastPoint >= span {
                addPoint(compressedOffset: position, bits: UInt8(bits), plainOffset: plainSize, windowed: true)
                try spillWindow()
            }
        }
    }

    private func addPoint(compressedOffset: Int64, bits: UInt8, plainOffset: Int64, windowed: Bool = false) {
        GzipFormat.append(littleEndian: UInt64(compressedOffset), to: &table)
        GzipFormat.append(littleEndian: UInt64(plainOffset), to: &table)
        table += [bits, windowed ? 1 : 0]
        pointCount += 1
        if windowed { windowCount += 1 }
        lastPoint = plainOffset
    }

    /// Writes the ring's bytes, oldest first, to the spill file.
    private func spillWindow() throws {
        var window = [UInt8](unsafeUninitializedCapacity: Self.windowSize) { bytes, count in
            let older = Self.windowSize - ringEnd
            (bytes.baseAddress! as UnsafeMutablePointer<UInt8>).update(from: ring + ringEnd, count: older)
            (bytes.baseAddress! + older).update(from: ring, count: ringEnd)
            count = Self.windowSize
        }
        try spill.append(window)
        window.removeAll()
    }
}

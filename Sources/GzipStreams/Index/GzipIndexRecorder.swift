import ByteStreams
import CZlib
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Collects a GZIDX index (``GzipIndex``, version 1) from the decode a ``GzipInputStream`` does
/// anyway: give one to ``GzipInputStream/init(wrapping:chunkSize:trailingGarbage:maximumOutputSize:inflater:closesInnerStream:indexRecorder:trailerChecks:)``,
/// read the stream to its end, then ``write(to:)`` the index. ``GzipIndexBuilder`` is this over
/// a stream whose bytes it drops; `gzstream unpack --write-index` keeps them.
///
/// The points are zran.c's:
/// - the first at plain offset 0, on the first deflate byte after the first header, without a
///   window (what indexed_gzip and rapidgzip need to read the bytes before the next point);
/// - then one at a deflate block boundary (RFC 1951 §3.2.3) soon after every ``span`` plain
///   bytes since the last point, with the 32 KiB of plain data before it (zeros before the
///   start of the data) and its bit offset (zran's `bits`), provided the boundary is also at
///   least ``compressedSpan`` compressed bytes after the last point. A later member's start,
///   where the deflate data refers to nothing before it, becomes a byte-aligned point without
///   window once ``span`` bytes have passed.
///
/// The compressed floor bounds the index's size by the file's: a window is 32 KiB of plain
/// data whatever the compression ratio, so on data that compresses 6:1 points every 16 MiB
/// cost more than 1% of the gzip file, and on data that compresses 100:1 far more. With
/// ``GzipIndexBuilder/defaultCompressedSpan`` (100 windows) the windows take at most 1% of the
/// compressed bytes. A boundary found after ``span`` but before the floor does not become a
/// point: the next search begins where the plain bytes since the last point, at the ratio
/// they compressed at, put the floor (at least 32 KiB and at most one ``span`` on), so that
/// where a search begins depends on the data alone, as it does without the floor.
///
/// zlib (``GzipInputStream/Inflater/zlib``) stops at the first boundary after the span
/// (`Z_BLOCK`). ISA-L decodes across blocks, so once the span has passed it takes its input
/// in pieces of 64 bytes until one piece ends inside a block header: the first boundary
/// before a dynamic-Huffman block or after a stored block, about 1 ms of decoding at a slower
/// pace per point. A boundary before a fixed-Huffman block (a 3-bit header) is passed over;
/// after ``seekLimit`` compressed bytes without a boundary (data of fixed-Huffman blocks
/// only), the search stops until another span has passed. zlib's points depend on the data
/// alone; ISA-L's can also depend on the sizes of the reads, because it decodes ahead into its
/// own buffer as far as its input allows, so that a search may begin a few blocks later.
///
/// The index's compressed size is the whole input's (trailing garbage that the stream's policy
/// takes included; indexed_gzip and rapidgzip check it against the file's size), and its seal
/// binds it to the input's last 8 bytes.
///
/// Memory stays flat: the windows go to an unlinked temporary file as they are found and are
/// copied after the point table by ``write(to:)``; in memory are one 32 KiB window and the
/// table, 18 bytes a point. Plain bytes are copied into the window only from 32 KiB before a
/// point is due. Not thread-safe: the thread that reads the stream uses it, then writes it.
public final class GzipIndexRecorder {
    private static let windowSize = Int(GzipIndex.defaultWindowSize)
    /// The compressed bytes a search for a block boundary may take before it stops until the
    /// next span: 1 MiB, several times the largest block zlib, pigz or libdeflate write.
    public static let seekLimit: Int64 = 1 << 20

    /// The plain distance in bytes between one point and the next boundary that may become one.
    public let span: Int
    /// The compressed distance in bytes from one point below which a boundary does not become a
    /// point with a window; 0 for none.
    public let compressedSpan: Int

    private let spill: WindowSpillFile
    /// The last `windowSize` plain bytes once a point is near, the oldest at `ringEnd`.
    private let ring: UnsafeMutablePointer<UInt8>
    private var ringEnd = 0

    private var table: [UInt8] = []
    private var pointCount = 0
    private var windowCount = 0
    /// The plain offset from which a boundary becomes a point.
    private var nextPointAt: Int64 = 0
    /// The last point's compressed and plain offsets, from which the floor is measured.
    private var lastPoint: (position: Int64, plainOffset: Int64) = (0, 0)
    /// Where the current search began in the compressed input, while one goes on.
    private var seekStart: Int64?
    /// A later member's first deflate byte, which becomes a point once the member gives a byte.
    private var memberStartPoint: Int64?
    private var summary: GzipIndexBuilder.Summary?
    /// The line table's counts (the `\n` bytes before each point), kept here unless
    /// `linesCountedBy` counts them where the bytes are written.
    private var lines = GzipTrailerChecks.LineTally()
    private var lineTable: GzipLineTable?
    /// Where the line table is counted instead, when the bytes are written on another thread.
    private var linesCountedBy: GzipTrailerChecks?

    /// A recorder with the default spacing (``GzipIndexBuilder/defaultSpan`` plain bytes and
    /// ``GzipIndexBuilder/defaultCompressedSpan`` compressed bytes), its windows' temporary file
    /// in `spillDirectory`: the index stays within about 1% of the gzip file.
    /// - Parameter spillDirectory: An open directory descriptor (the caller keeps owning it) in
    ///   which the windows' unnamed temporary file is made; `nil` for `$TMPDIR`, else `/tmp`.
    /// - Throws: ``ByteStreamError`` when the temporary file cannot be made.
    public convenience init(spillDirectory: Int32? = nil) throws {
        try self.init(span: GzipIndexBuilder.defaultSpan, compressedSpan: GzipIndexBuilder.defaultCompressedSpan,
                      spillDirectory: spillDirectory)
    }

    /// A recorder that puts a point about every `span` plain bytes, and a window no nearer than
    /// `compressedSpan` compressed bytes to the point before it, its windows' temporary file in
    /// `spillDirectory`.
    /// - Parameters:
    ///   - span: `GzipIndexBuilder.minimumSpan...UInt32.max` (the GZIDX header stores it in 4
    ///     bytes).
    ///   - compressedSpan: `0...UInt32.max`; default 0, points every `span` plain bytes
    ///     whatever they compress to (the index then grows with the compression ratio).
    ///   - spillDirectory: An open directory descriptor (the caller keeps owning it) in which
    ///     the windows' unnamed temporary file is made; `nil` for `$TMPDIR`, else `/tmp`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a span
    ///   out of range; ``ByteStreamError`` when the temporary file cannot be made.
    public init(span: Int, compressedSpan: Int = 0, spillDirectory: Int32? = nil) throws {
        try requireArgument(span, in: GzipIndexBuilder.minimumSpan...Int(UInt32.max), "span",
                            operation: "create GzipIndexRecorder")
        try requireArgument(compressedSpan, in: 0...Int(UInt32.max), "compressedSpan",
                            operation: "create GzipIndexRecorder")
        self.span = span
        self.compressedSpan = compressedSpan
        if let spillDirectory {
            spill = try WindowSpillFile(in: spillDirectory)
        } else {
            let variable = getenv("TMPDIR").map { String(cString: $0) } ?? ""
            let path = Pathname(variable.isEmpty ? "/tmp" : variable)
            let directory = try SystemCalls.open(path, flags: O_RDONLY | O_DIRECTORY)
            defer { try? SystemCalls.close(directory, target: path.description) }
            spill = try WindowSpillFile(in: directory)
        }
        ring = .allocate(capacity: Self.windowSize)
        ring.initialize(repeating: 0, count: Self.windowSize)
    }

    deinit {
        spill.close()
        ring.deallocate()
    }

    /// What was recorded, once the stream read its whole input (its end returned); `nil` before.
    /// When the stream's trailer checks are made where its bytes are written
    /// (``GzipTrailerChecks``), they count the line table too, and the line count is known
    /// once ``write(to:)`` ran (0 before).
    public var completed: GzipIndexBuilder.Summary? { summary }

    // MARK: Called by the stream that decodes

    /// Leaves the line table to `checks`, which count the bytes where they are written: the
    /// decoding thread then only decodes. Called before the first byte.
    func countLines(through checks: GzipTrailerChecks) {
        checks.countLines()
        linesCountedBy = checks
    }

    /// A member's header was read; its deflate data starts at `position`.
    func memberStarted(_ member: Int, at position: Int64, plainOffset: Int64) {
        if member == 1 {
            addPoint(compressedOffset: position, bits: 0, plainOffset: 0, windowed: false)
        } else if plainOffset >= nextPointAt {
            memberStartPoint = position
            seekStart = nil
        }
    }

    /// Whether the next inflate call should stop at a block boundary: a point is due, and the
    /// search, begun at `position`, has not yet taken ``seekLimit`` bytes.
    func seeksBoundary(plainOffset: Int64, position: Int64) -> Bool {
        guard memberStartPoint == nil, plainOffset >= nextPointAt else { return false }
        guard let start = seekStart else {
            seekStart = position
            return true
        }
        if position - start > Self.seekLimit {
            seekStart = nil
            nextPointAt = plainOffset + Int64(span)
            return false
        }
        return true
    }

    /// The plain bytes from `plainOffset` until a boundary becomes a point, when that is ahead
    /// (a member start waiting to become a point at `plainOffset` puts it a span ahead); `nil`
    /// otherwise.
    func bytesUntilPointDue(plainOffset: Int64) -> Int64? {
        if memberStartPoint != nil { return Int64(span) }
        guard plainOffset < nextPointAt else { return nil }
        return nextPointAt - plainOffset
    }

    /// Takes the `count` plain bytes at `bytes` that one inflate call gave, ending at plain
    /// offset `plainEnd`, and the block boundary it stopped at, if any.
    /// - Throws: ``ByteStreamError`` when a window cannot be written to the temporary file.
    func record(_ bytes: UnsafePointer<UInt8>, count: Int, plainEnd: Int64, boundary: (position: Int64, bits: Int)?) throws {
        if let start = memberStartPoint, count > 0 {
            addPoint(compressedOffset: start, bits: 0, plainOffset: plainEnd - Int64(count), windowed: false)
            memberStartPoint = nil
        }
        if count > 0, linesCountedBy == nil {
            lines.count(UnsafeRawBufferPointer(start: bytes, count: count), from: plainEnd - Int64(count))
        }
        if plainEnd > nextPointAt - Int64(Self.windowSize) {
            keep(bytes, count: count)
        }
        if let boundary, plainEnd >= nextPointAt {
            let compressed = boundary.position - lastPoint.position
            guard compressed >= Int64(compressedSpan) else {
                nextPointAt = plainEnd + plainBytesToFloor(compressed: compressed, plain: plainEnd - lastPoint.plainOffset)
                seekStart = nil
                return
            }
            addPoint(compressedOffset: boundary.position, bits: UInt8(boundary.bits), plainOffset: plainEnd, windowed: true)
            try spill.append(window())
        }
    }

    /// The plain bytes after a boundary `compressed` and `plain` bytes past the last point
    /// that, at the ratio of those bytes, bring the compressed distance to ``compressedSpan``:
    /// at least one window (32 KiB, so that data that compresses better after the boundary
    /// costs few more searches), at most one ``span``, so that data that compresses worse
    /// after it does not carry the point far past the floor (about 1 ms of decoding a search
    /// with ISA-L, one `Z_BLOCK` stop with zlib).
    private func plainBytesToFloor(compressed: Int64, plain: Int64) -> Int64 {
        guard compressed > 0 else { return Int64(Self.windowSize) }
        let estimate = (Int64(compressedSpan) - compressed).multipliedReportingOverflow(by: plain)
        let bytes = estimate.overflow ? Int64(span) : estimate.partialValue / compressed
        return min(max(bytes, Int64(Self.windowSize)), Int64(span))
    }

    /// The stream met the end of its input after its last member and what follows it.
    func finish(compressedSize: Int64, plainSize: Int64, memberCount: Int, lastBytes: [UInt8],
                trailingGarbage: GzipInputStream.TrailingGarbage?, endedWithZeroPadding: Bool) {
        guard summary == nil else { return }
        var header: [UInt8] = []
        header.reserveCapacity(GzipIndex.headerSize + table.count)
        GzipIndex.appendHeader(compressedSize: UInt64(compressedSize), plainSize: UInt64(plainSize),
                               spacing: UInt32(span), windowSize: GzipIndex.defaultWindowSize, pointCount: pointCount,
                               to: &header)
        table = header + table
        self.lastBytes = lastBytes
        summary = GzipIndexBuilder.Summary(
            compressedSize: compressedSize, plainSize: plainSize, memberCount: memberCount, pointCount: pointCount,
            windowCount: windowCount,
            indexSize: Int64(table.count + GzipLineTable.encodedSize(pointCount: pointCount) + GzipIndexSeal.size) + spill.size,
            trailingGarbage: trailingGarbage, endedWithZeroPadding: endedWithZeroPadding)
        if linesCountedBy == nil { tallyLines() }
    }

    /// The line table from the counts, into ``completed``'s line count.
    private func tallyLines() {
        let (newlinesBefore, newlines, lastByte) = linesCountedBy?.lineCounts()
            ?? lines.finish(at: summary?.plainSize ?? 0)
        let table = GzipLineTable(newlinesBefore: newlinesBefore, newlineCount: newlines,
                                  lineCount: newlines + (lastByte.map { $0 == 0x0A ? 0 : 1 } ?? 0))
        lineTable = table
        summary?.lineCount = table.lineCount
    }

    private var lastBytes: [UInt8] = []

    // MARK: Writing

    /// Writes the GZIDX index: header, point table, windows, the line table (``GzipLineTable``:
    /// the `\n` bytes before each point, counted from every plain byte recorded) and gzstream's
    /// seal (the CRC-32 of what precedes it and the input's last 8 bytes),
    /// ``GzipIndexBuilder/Summary/indexSize`` bytes in all.
    /// - Parameter output: Opened if not open, not closed. Blocking writes.
    /// - Returns: The sizes and counts.
    /// - Throws: ``ByteStreamError/Code-swift.enum/notOpen`` (operation "write index") when the
    ///   stream has not read its whole input (a read returned 0); the output's errors;
    ///   ``ByteStreamError`` when the windows cannot be read back from the temporary file.
    @discardableResult
    public func write(to output: ByteOutputStream) throws -> GzipIndexBuilder.Summary {
        guard summary != nil else { throw ByteStreamError(.notOpen, operation: "write index") }
        if lineTable == nil { tallyLines() }
        guard let summary else { throw ByteStreamError(.notOpen, operation: "write index") }
        if output.streamStatus == .notOpen { try output.openOrThrow() }
        try output.writeAll(table)
        var crc = table.withUnsafeBytes { crc32(0, $0) }
        try spill.copy(to: output, chunk: 1 << 20) { crc = crc32(crc, $0) }
        if let lineTable {
            let lines = lineTable.encoded()
            try output.writeAll(lines)
            crc = lines.withUnsafeBytes { crc32(crc, $0) }
        }
        try output.writeAll(GzipIndexSeal.encoded(tail: lastBytes, crcBefore: crc))
        return summary
    }

    // MARK: Points and the window

    private func addPoint(compressedOffset: Int64, bits: UInt8, plainOffset: Int64, windowed: Bool) {
        GzipIndex.appendPoint(compressedOffset: UInt64(compressedOffset), bitOffset: bits,
                              plainOffset: UInt64(plainOffset), hasWindow: windowed, to: &table)
        // Its count is taken when the bytes before it have been counted (here by record, or
        // where they are written).
        if let linesCountedBy {
            linesCountedBy.point(at: plainOffset)
        } else {
            lines.points.append(plainOffset)
        }
        pointCount += 1
        if windowed { windowCount += 1 }
        nextPointAt = plainOffset + Int64(span)
        lastPoint = (compressedOffset, plainOffset)
        seekStart = nil
    }

    /// Adds the last (up to 32 KiB) of `count` bytes to the ring.
    private func keep(_ bytes: UnsafePointer<UInt8>, count: Int) {
        var source = bytes + max(0, count - Self.windowSize)
        var left = min(count, Self.windowSize)
        while left > 0 {
            let piece = min(left, Self.windowSize - ringEnd)
            (ring + ringEnd).update(from: source, count: piece)
            ringEnd = (ringEnd + piece) % Self.windowSize
            source += piece
            left -= piece
        }
    }

    /// The ring's bytes, oldest first.
    private func window() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.windowSize) { bytes, count in
            let older = Self.windowSize - ringEnd
            bytes.baseAddress!.update(from: ring + ringEnd, count: older)
            (bytes.baseAddress! + older).update(from: ring, count: ringEnd)
            count = Self.windowSize
        }
    }
}

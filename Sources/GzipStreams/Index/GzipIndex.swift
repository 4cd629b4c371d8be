/// A place in a gzip file where decoding can start without decoding what comes before: zlib's
/// zran access point, as indexed_gzip stores it in a GZIDX file.
///
/// A point is a deflate block boundary (RFC 1951 §3.2.3), which need not fall on a byte
/// boundary: it starts `bitOffset` bits before the byte at `compressedOffset` (the high
/// `bitOffset` bits of the byte before it, as zlib's `inflatePrime` takes them), and decoding
/// from it needs the `window` of plain bytes before it, to which the deflate data may refer back.
/// A point where the deflate data refers to nothing earlier (the start of a member, or of data
/// compressed independently of what precedes it, such as after a full flush) needs no window.
///
/// indexed_gzip applies `bitOffset` only to points with a window: a point without one must be
/// byte-aligned (`bitOffset` 0), or indexed_gzip decodes from the wrong bit.
public struct GzipAccessPoint: Sendable, Equatable {
    /// The first whole byte of deflate data at the point, in bytes from the start of the
    /// compressed file (the gzip header included).
    public var compressedOffset: UInt64
    /// How many bits, `0...7`, of the byte before `compressedOffset` belong to the point's
    /// deflate data (zran's `bits`); 0 when the point is byte-aligned. The point is at bit
    /// `8 × compressedOffset − bitOffset` of the file.
    public var bitOffset: UInt8
    /// The point's first plain byte, in bytes from the start of the plain data.
    public var plainOffset: UInt64
    /// The ``GzipIndex/windowSize`` plain bytes just before the point, oldest first (zero
    /// bytes fill in before the start of the data); `nil` when the deflate data from the point
    /// on refers to nothing before it.
    public var window: [UInt8]?

    /// A point at `compressedOffset` (and `bitOffset` bits into that byte) in the compressed
    /// file, plain offset `plainOffset`, with its `window` when it needs one.
    public init(compressedOffset: UInt64, bitOffset: UInt8 = 0, plainOffset: UInt64, window: [UInt8]? = nil) {
        self.compressedOffset = compressedOffset
        self.bitOffset = bitOffset
        self.plainOffset = plainOffset
        self.window = window
    }
}

/// The access points of one gzip file and the file's sizes: what indexed_gzip's
/// `IndexedGzipFile.export_index` writes and `import_index` reads (the GZIDX format, version 1),
/// which rapidgzip (`--import-index`, `import_index`) and ratarmount read too. With it a reader
/// decodes from the last point at or before a plain offset instead of from the start.
///
/// The GZIDX layout (indexed_gzip's `zran_export_index`), every integer little-endian:
/// - a 35-byte header: `GZIDX`, the version (1), flags (0, unused), the compressed size (8
///   bytes), the plain size (8), the spacing (4), the window size (4), the number of points (4);
/// - 18 bytes per point: its compressed offset (8), plain offset (8), bit offset (1), and 1 if
///   it has a window, else 0 (1);
/// - the windows of the points that have one, in point order, `windowSize` bytes each;
/// - gzstream's own additions, which the readers below ignore: its line table
///   (``GzipLineTable``) and its 20-byte seal (``compressedTail``).
///
/// What the readers require, found by GZIDXInteropTests with indexed_gzip 1.10.3 and rapidgzip
/// 0.16.2 and read in their sources:
/// - the compressed size is the file's size in bytes: both refuse another;
/// - the window size is 32768: indexed_gzip takes any size from 32768 up, rapidgzip only 32768;
/// - the spacing is at least the window size: indexed_gzip refuses less (rapidgzip ignores it);
/// - the plain size is the true one: rapidgzip refuses 0 (its points lie beyond it) and fails
///   on a larger one; indexed_gzip takes 0 as unknown;
/// - the first point is at plain offset 0, at the first byte of deflate data after the gzip
///   header, without window (what zran itself writes): without it indexed_gzip fails to read
///   the bytes before the first point and rapidgzip silently returns none of them; at byte 0,
///   on the header, rapidgzip fails;
/// - the offsets are right: a point's plain offset a few bytes off gives wrong bytes from
///   indexed_gzip, with no error;
/// - the flags and any bytes after the last window are ignored by both.
///
/// Version 0, indexed_gzip's first, had no window flag in a point: every point but the
/// first had a window. ``init(gzidx:)`` reads both versions; ``gzidxEncoded()`` writes
/// version 1.
///
/// The format of indexed_gzip's `zran_export_index` and `zran_import_index` (zran.c).
public struct GzipIndex: Sendable, Equatable {
    /// The window size every reader takes: 32768 bytes, deflate's longest distance (RFC 1951 §2).
    public static let defaultWindowSize: UInt32 = 32768
    /// The GZIDX header's size: 35 bytes.
    public static let headerSize = 35
    /// The size of one point's entry in a version 1 GZIDX file: 18 bytes.
    public static let pointEntrySize = 18
    /// The first 5 bytes of a GZIDX file: `GZIDX`.
    public static let magic: [UInt8] = Array("GZIDX".utf8)
    /// The version ``gzidxEncoded()`` writes: 1.
    public static let version: UInt8 = 1

    /// The compressed file's size in bytes.
    public var compressedSize: UInt64
    /// The plain data's size in bytes; 0 when unknown (indexed_gzip exports 0 before it has
    /// read to the end of the file).
    public var plainSize: UInt64
    /// The plain distance in bytes that the writer aimed for between points; readers use it
    /// only to size buffers (at least ``windowSize``).
    public var spacing: UInt32
    /// The size in bytes of every point's window, ``defaultWindowSize``.
    public var windowSize: UInt32
    /// The points, ordered by compressed and by plain offset (neither decreasing).
    public var points: [GzipAccessPoint]
    /// The last 8 bytes of the compressed file the index was made from (for a gzip file, its
    /// last member's trailer: CRC-32 and ISIZE), when the index carries gzstream's seal: 20
    /// bytes after the last window holding them and a CRC-32 of the whole index, which
    /// indexed_gzip and rapidgzip ignore. ``gzidxEncoded()`` writes the seal when this is set;
    /// ``IndexedGzipInputStream`` refuses the index for a file whose last bytes differ. `nil`
    /// for an index without a seal (another tool's).
    public var compressedTail: [UInt8]?
    /// The count of lines before each point (``GzipLineTable``), which gzstream's writers record
    /// and keep between the last window and the seal; `nil` for an index without one (another
    /// tool's, or one without a seal). ``gzidxEncoded()`` writes it only with the seal, which
    /// then covers it; its counts must be one per point.
    public var lineTable: GzipLineTable?
    /// Where the windows are when they stayed in the index file (``init(gzidxFile:path:maximumPoints:)``):
    /// the points' own `window` is then `nil`, and ``window(ofPoint:)`` reads them from there.
    var windowFile: GzipIndexWindowFile?

    /// An index of a file of `compressedSize` bytes that decodes to `plainSize` bytes, with
    /// `points` about `spacing` plain bytes apart and windows of `windowSize` bytes.
    public init(compressedSize: UInt64, plainSize: UInt64, spacing: UInt32, windowSize: UInt32 = defaultWindowSize,
                points: [GzipAccessPoint]) {
        self.compressedSize = compressedSize
        self.plainSize = plainSize
        self.spacing = spacing
        self.windowSize = windowSize
        self.points = points
    }

    /// Appends GZIDX version 1's header (``headerSize`` bytes): magic, version, flags 0, then
    /// the sizes, spacing, window size and point count, little-endian.
    static func appendHeader(compressedSize: UInt64, plainSize: UInt64, spacing: UInt32, windowSize: UInt32,
                             pointCount: Int, to bytes: inout [UInt8]) {
        bytes += magic
        bytes += [version, 0]
        GzipFormat.append(littleEndian: compressedSize, to: &bytes)
        GzipFormat.append(littleEndian: plainSize, to: &bytes)
        GzipFormat.append(littleEndian: spacing, to: &bytes)
        GzipFormat.append(littleEndian: windowSize, to: &bytes)
        GzipFormat.append(littleEndian: UInt32(pointCount), to: &bytes)
    }

    /// Appends one entry of GZIDX's point table (``pointEntrySize`` bytes).
    /// - Precondition: `bitOffset` is 0...7.
    static func appendPoint(compressedOffset: UInt64, bitOffset: UInt8, plainOffset: UInt64, hasWindow: Bool,
                            to bytes: inout [UInt8]) {
        precondition(bitOffset <= 7, "a bit offset is 0...7")
        GzipFormat.append(littleEndian: compressedOffset, to: &bytes)
        GzipFormat.append(littleEndian: plainOffset, to: &bytes)
        bytes += [bitOffset, hasWindow ? 1 : 0]
    }

    /// The GZIDX version 1 bytes, as indexed_gzip's `export_index` writes them:
    /// `35 + 18 × points.count + windowSize × (points with a window)` bytes, and when
    /// ``compressedTail`` is set, the ``lineTable`` if there is one (`24 + 8 × points.count`
    /// bytes) and gzstream's 20-byte seal after them.
    /// - Precondition: every window holds exactly ``windowSize`` bytes, every bit offset is at
    ///   most 7, and there are at most 2^32 − 1 points.
    public func gzidxEncoded() -> [UInt8] {
        precondition(windowFile == nil, "an index whose windows stay in its file is written from loadingWindows()")
        precondition(points.count <= Int(UInt32.max), "GZIDX holds at most 2^32 - 1 points")
        let windowCount = points.count(where: { $0.window != nil })
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize + Self.pointEntrySize * points.count + Int(windowSize) * windowCount)
        Self.appendHeader(compressedSize: compressedSize, plainSize: plainSize, spacing: spacing,
                          windowSize: windowSize, pointCount: points.count, to: &bytes)
        for point in points {
            Self.appendPoint(compressedOffset: point.compressedOffset, bitOffset: point.bitOffset,
                             plainOffset: point.plainOffset, hasWindow: point.window != nil, to: &bytes)
        }
        for window in points.lazy.compactMap(\.window) {
            precondition(window.count == Int(windowSize), "every window holds windowSize bytes")
            bytes += window
        }
        if let compressedTail {
            if let lineTable {
                precondition(lineTable.newlinesBefore.count == points.count, "the line table has a count per point")
                bytes += lineTable.encoded()
            }
            bytes += GzipIndexSeal.encoded(tail: compressedTail, crcBefore: bytes.withUnsafeBytes { crc32(0, $0) })
        }
        return bytes
    }

    /// Reads a whole GZIDX file, version 0 or 1, and checks it more strictly than indexed_gzip
    /// does: besides what indexed_gzip checks (magic, version, a window size of at least 32768,
    /// a spacing of at least the window size, no byte missing), the flags must be 0, every
    /// point's bit offset at most 7 and window flag 0 or 1, its offsets at most the sizes (a
    /// plain size of 0 is taken as unknown) and neither less than the previous point's, and
    /// nothing but gzstream's seal may follow the last window (with gzstream's line table
    /// before it, ``lineTable``, checked against the points). Whether the index fits a particular gzip file is not
    /// checked.
    /// - Parameter bytes: The whole index file.
    /// - Throws: ``GzipIndexError``, with the byte offset in `bytes` where the fault is.
    public init(gzidx bytes: [UInt8]) throws(GzipIndexError) {
        // withUnsafeBytes rethrows untyped errors: the typed one comes out through a Result.
        let parsed = bytes.withUnsafeBytes { raw in
            Result { () throws(GzipIndexError) in try GZIDXParser(raw).parse() }
        }
        self = try parsed.get()
    }
}

/// The faults of a GZIDX file, as ``GzipIndexError`` values whose format is GZIDX: `offset` is
/// the byte of the index file where the fault was found; `point` is the point's position in
/// ``GzipIndex/points``, counting from 0.
extension GzipIndexError {
    /// What a GZIDX index ended inside of.
    enum Part: Equatable, Sendable {
        /// The fixed header, from the magic to the point count.
        case header
        /// The 18-byte (version 0: 17-byte) entry of a point.
        case pointEntry(point: Int)
        /// The window of a point whose entry says it has one.
        case window(point: Int)
    }

    private static func gzidx(_ reason: String, _ offset: Int) -> GzipIndexError {
        GzipIndexError(format: .gzidx, reason: reason, offset: offset)
    }

    /// The index ended inside `part`, which starts at `offset`.
    static func truncated(_ part: Part, offset: Int) -> GzipIndexError {
        switch part {
        case .header: gzidx("the index ends inside its 35-byte header", offset)
        case .pointEntry(let point): gzidx("the index ends inside the entry of point \(point)", offset)
        case .window(let point): gzidx("the index ends inside the window of point \(point)", offset)
        }
    }
    /// The first 5 bytes are not `GZIDX`: not a GZIDX file.
    static func badMagic(offset: Int) -> GzipIndexError { gzidx("it does not start with GZIDX", offset) }
    /// A version other than 0 and 1, the ones indexed_gzip has written.
    static func unsupportedVersion(_ version: UInt8, offset: Int) -> GzipIndexError {
        gzidx("version \(version) (known: 0 and 1)", offset)
    }
    /// Flags other than 0: indexed_gzip defines none.
    static func unsupportedFlags(_ flags: UInt8, offset: Int) -> GzipIndexError {
        gzidx("flags \(flags) (none is defined)", offset)
    }
    /// A window size below 32768, which indexed_gzip refuses.
    static func badWindowSize(_ size: UInt32, offset: Int) -> GzipIndexError {
        gzidx("window size \(size), less than 32768", offset)
    }
    /// A spacing below the window size, which indexed_gzip refuses.
    static func badSpacing(_ spacing: UInt32, windowSize: UInt32, offset: Int) -> GzipIndexError {
        gzidx("spacing \(spacing), less than the window size \(windowSize)", offset)
    }
    /// A point's bit offset above 7.
    static func badBitOffset(_ bits: UInt8, point: Int, offset: Int) -> GzipIndexError {
        gzidx("point \(point) has bit offset \(bits), more than 7", offset)
    }
    /// A point's window flag other than 0 and 1.
    static func badWindowFlag(_ flag: UInt8, point: Int, offset: Int) -> GzipIndexError {
        gzidx("point \(point) has window flag \(flag), neither 0 nor 1", offset)
    }
    /// A point's compressed or plain offset is less than the previous point's.
    static func offsetsDecrease(point: Int, offset: Int) -> GzipIndexError {
        gzidx("point \(point) comes before the point ahead of it", offset)
    }
    /// A point's compressed or plain offset is beyond the size in the header.
    static func offsetBeyondEnd(point: Int, offset: Int) -> GzipIndexError {
        gzidx("point \(point) lies beyond the sizes in the header", offset)
    }
    /// `count` bytes follow the last window.
    static func trailingBytes(count: Int, offset: Int) -> GzipIndexError {
        gzidx("\(count) bytes follow the last window", offset)
    }
    /// gzstream's seal, which starts at `offset`, holds a CRC-32 that is not that of the
    /// index's bytes: the index was damaged or changed after it was written.
    static func sealMismatch(offset: Int) -> GzipIndexError {
        gzidx("its checksum does not match its bytes: it was damaged or changed after it was written", offset)
    }
    /// gzstream's line table, at `offset`, does not fit the index's points: `reason`.
    static func badLineTable(_ reason: String, offset: Int) -> GzipIndexError {
        gzidx("its line table is not valid: \(reason)", offset)
    }
    /// The header claims `count` points, more than the `limit` an index of the compressed file
    /// can need (``GzipIndex/maximumPointCount(compressedSize:)``).
    static func tooManyPoints(_ count: Int, limit: Int, offset: Int) -> GzipIndexError {
        gzidx("it claims \(count) access points, more than the \(limit) the file can need", offset)
    }
    /// The window of point `point`, at `offset`, is not the one read when the index was
    /// opened: the index file changed (or shrank) while it was used.
    static func windowChanged(point: Int, offset: Int) -> GzipIndexError {
        gzidx("the window of point \(point) changed while the index was in use", offset)
    }
}

/// One pass over a GZIDX file's bytes for ``GzipIndex/init(gzidx:)``.
struct GZIDXParser {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func parse() throws(GzipIndexError) -> GzipIndex {
        var (index, hasWindow, offset) = try parseTable()
        let windowSize = Int(index.windowSize)
        for point in 0..<index.points.count where hasWindow[point] {
            guard bytes.count - offset >= windowSize else { throw .truncated(.window(point: point), offset: offset) }
            index.points[point].window = Array(bytes[offset..<(offset + windowSize)])
            offset += windowSize
        }
        let lineTableSize = GzipLineTable.encodedSize(pointCount: index.points.count)
        let after = bytes.count - offset
        if after == GzipIndexSeal.size || after == lineTableSize + GzipIndexSeal.size,
           bytes[(bytes.count - GzipIndexSeal.size)...].starts(with: GzipIndexSeal.magic) {
            let sealStart = bytes.count - GzipIndexSeal.size
            let seal = Array(bytes[sealStart...])
            guard GzipIndexSeal.storedCRC(of: seal) == crc32(0, UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 4)])) else {
                throw .sealMismatch(offset: sealStart)
            }
            index.compressedTail = GzipIndexSeal.tail(of: seal)
            if sealStart > offset {
                index.lineTable = try GzipLineTable.parse(UnsafeRawBufferPointer(rebasing: bytes[offset..<sealStart]),
                                                          for: index, offset: offset)
            }
            return index
        }
        guard offset == bytes.count else { throw .trailingBytes(count: bytes.count - offset, offset: offset) }
        return index
    }

    /// The header and the point table, checked, without windows; which points have one; and
    /// where the table ends. `bytes` need hold no more than the header and the table.
    func parseTable() throws(GzipIndexError) -> (index: GzipIndex, hasWindow: [Bool], tableEnd: Int) {
        guard bytes.count >= GzipIndex.headerSize else {
            if !bytes.prefix(5).elementsEqual(GzipIndex.magic.prefix(bytes.count)) { throw .badMagic(offset: 0) }
            throw .truncated(.header, offset: 0)
        }
        guard bytes.prefix(5).elementsEqual(GzipIndex.magic) else { throw .badMagic(offset: 0) }
        let version = bytes[5]
        guard version <= 1 else { throw .unsupportedVersion(version, offset: 5) }
        guard bytes[6] == 0 else { throw .unsupportedFlags(bytes[6], offset: 6) }
        var index = GzipIndex(compressedSize: GzipFormat.loadUInt64(bytes, at: 7),
                              plainSize: GzipFormat.loadUInt64(bytes, at: 15),
                              spacing: GzipFormat.loadUInt32(bytes, at: 23),
                              windowSize: GzipFormat.loadUInt32(bytes, at: 27), points: [])
        guard index.windowSize >= GzipIndex.defaultWindowSize else { throw .badWindowSize(index.windowSize, offset: 27) }
        guard index.spacing >= index.windowSize else {
            throw .badSpacing(index.spacing, windowSize: index.windowSize, offset: 23)
        }
        let count = Int(GzipFormat.loadUInt32(bytes, at: 31))
        let entrySize = version == 0 ? GzipIndex.pointEntrySize - 1 : GzipIndex.pointEntrySize
        let tableEnd = GzipIndex.headerSize + entrySize * count
        guard bytes.count >= tableEnd else {
            let point = (bytes.count - GzipIndex.headerSize) / entrySize
            throw .truncated(.pointEntry(point: point), offset: GzipIndex.headerSize + entrySize * point)
        }
        index.points.reserveCapacity(count)
        var hasWindow: [Bool] = []
        hasWindow.reserveCapacity(count)
        for point in 0..<count {
            let start = GzipIndex.headerSize + entrySize * point
            let entry = try readEntry(point: point, at: start, version: version, index: index)
            index.points.append(entry.point)
            hasWindow.append(entry.hasWindow)
        }
        return (index, hasWindow, tableEnd)
    }

    /// The point whose entry starts at `start`, checked against the header and the point before.
    private func readEntry(point: Int, at start: Int, version: UInt8, index: GzipIndex)
        throws(GzipIndexError) -> (point: GzipAccessPoint, hasWindow: Bool) {
        let entry = GzipAccessPoint(compressedOffset: GzipFormat.loadUInt64(bytes, at: start),
                                    bitOffset: bytes[start + 16],
                                    plainOffset: GzipFormat.loadUInt64(bytes, at: start + 8))
        guard entry.bitOffset <= 7 else { throw .badBitOffset(entry.bitOffset, point: point, offset: start + 16) }
        let hasWindow: Bool
        if version == 0 {
            hasWindow = point > 0
        } else {
            let flag = bytes[start + 17]
            guard flag <= 1 else { throw .badWindowFlag(flag, point: point, offset: start + 17) }
            hasWindow = flag == 1
        }
        // Bit 8 × compressedOffset − bitOffset of the file, compared without overflow.
        if let previous = index.points.last,
           (entry.compressedOffset, previous.bitOffset) < (previous.compressedOffset, entry.bitOffset)
            || entry.plainOffset < previous.plainOffset {
            throw .offsetsDecrease(point: point, offset: start)
        }
        if entry.compressedOffset > index.compressedSize || (index.plainSize > 0 && entry.plainOffset > index.plainSize) {
            throw .offsetBeyondEnd(point: point, offset: start)
        }
        return (entry, hasWindow)
    }
}

extension GzipIndex {
    /// The window of point `point` (an index into ``points``), the ``windowSize`` plain bytes
    /// before it, or `nil` when the point needs none. Decoders ask for windows only through this
    /// call, so that an index read from a file can keep its windows there until they are needed.
    /// - Throws: The error of reading the window from where it is kept.
    public func window(ofPoint point: Int) throws -> [UInt8]? {
        if let windowFile { return try windowFile.window(ofPoint: point) }
        return points[point].window
    }
}

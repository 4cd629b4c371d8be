/// How many lines the plain data holds before each access point of a ``GzipIndex``: what a
/// read of lines N to M (`gzstream unpack --lines N:M`) starts from, as gztool's `-L` starts
/// from the line numbers of its index. A line ends at a `\n` byte (0x0A); a last line without
/// one still counts.
///
/// gzstream keeps the table in the GZIDX file between the last window and its seal, where
/// indexed_gzip and rapidgzip read nothing (they stop after the last window), so that the seal's
/// CRC-32 and its binding to the compressed file cover it as they cover the points. Every
/// integer little-endian:
/// - `GZLINES` and the table's version, 1 (8 bytes);
/// - the number of `\n` bytes in the whole plain data (8 bytes);
/// - the number of lines: that, plus 1 when the data does not end with `\n` (8 bytes);
/// - for each point, in point order, the number of `\n` bytes before its plain offset (8 bytes).
///
/// So `24 + 8 × points` bytes, 8 beside each 32 KiB window: measured on a 107 MiB text, 80
/// bytes beside a 196,789-byte index at the default span (0.04%), 5,456 beside 22 MB at a
/// 64 KiB span (0.025%).
public struct GzipLineTable: Sendable, Equatable {
    /// The table's first 8 bytes: `GZLINES` and its version, 1.
    static let magic: [UInt8] = Array("GZLINES".utf8) + [1]
    /// The size in bytes of the fixed part, before the per-point counts: 24.
    static let headerSize = 24

    /// For each point of the index, the number of `\n` bytes in the plain data before it.
    public var newlinesBefore: [UInt64]
    /// The number of `\n` bytes in the whole plain data.
    public var newlineCount: UInt64
    /// The number of lines: ``newlineCount``, plus 1 when the data is not empty and does not
    /// end with `\n`.
    public var lineCount: UInt64

    /// A table of `newlinesBefore` (one count per point), for data holding `newlineCount` `\n`
    /// bytes and `lineCount` lines.
    public init(newlinesBefore: [UInt64], newlineCount: UInt64, lineCount: UInt64) {
        self.newlinesBefore = newlinesBefore
        self.newlineCount = newlineCount
        self.lineCount = lineCount
    }

    /// The size in bytes of the table of an index of `pointCount` points.
    static func encodedSize(pointCount: Int) -> Int { headerSize + 8 * pointCount }

    /// The table's bytes, as the GZIDX file holds them.
    func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.encodedSize(pointCount: newlinesBefore.count))
        GzipFormat.append(littleEndian: newlineCount, to: &bytes)
        GzipFormat.append(littleEndian: lineCount, to: &bytes)
        for count in newlinesBefore { GzipFormat.append(littleEndian: count, to: &bytes) }
        return bytes
    }

    /// Reads the table in `bytes` (exactly ``encodedSize(pointCount:)`` of them) for `index`'s
    /// points and checks it against them: the first point has no line before it, the counts do
    /// not decrease, no count exceeds the plain bytes before its point (a `\n` is one byte) or
    /// between two points, and the totals fit the plain size. `offset` is where the table starts
    /// in the index file, for errors.
    /// - Throws: ``GzipIndexError`` (badLineTable) with the byte offset of the fault.
    static func parse(_ bytes: UnsafeRawBufferPointer, for index: GzipIndex, offset: Int) throws(GzipIndexError) -> GzipLineTable {
        let count = index.points.count
        guard bytes.count == encodedSize(pointCount: count), bytes.prefix(magic.count).elementsEqual(magic) else {
            throw .badLineTable("it is not a table of \(count) points", offset: offset)
        }
        let newlines = GzipFormat.loadUInt64(bytes, at: 8)
        let lines = GzipFormat.loadUInt64(bytes, at: 16)
        guard lines == newlines || lines == newlines + 1, lines <= index.plainSize, newlines <= index.plainSize else {
            throw .badLineTable("its totals (\(newlines) newlines, \(lines) lines) do not fit \(index.plainSize) plain bytes",
                                offset: offset + 8)
        }
        var before: [UInt64] = []
        before.reserveCapacity(count)
        for point in 0..<count {
            let at = headerSize + 8 * point
            let value = GzipFormat.loadUInt64(bytes, at: at)
            let plain = index.points[point].plainOffset
            let previous: (count: UInt64, plain: UInt64) = point == 0 ? (0, 0) : (before[point - 1], index.points[point - 1].plainOffset)
            guard value >= previous.count, value - previous.count <= plain - previous.plain, value <= newlines,
                  point > 0 || value == 0 else {
                throw .badLineTable("the count before point \(point) does not fit the points", offset: offset + at)
            }
            before.append(value)
        }
        return GzipLineTable(newlinesBefore: before, newlineCount: newlines, lineCount: lines)
    }
}

extension GzipIndex {
    /// The number of lines in the plain data, when the index has a ``lineTable``; else `nil`.
    public var lineCount: UInt64? { lineTable?.lineCount }

    /// Where a read of the plain data from line `line` starts: the last access point before
    /// which fewer than `line − 1` `\n` bytes lie (so that line `line` starts after it), and
    /// how many `\n` bytes to pass from the point before the line starts. `nil` when the index
    /// has no ``lineTable``.
    /// - Parameter line: A line number, from 1.
    /// - Returns: The point (an index into ``points``) and the count of `\n` bytes between it
    ///   and the line's first byte; a line past the end gives the last point whose count is
    ///   below it, and a count that runs past the end of the data.
    /// - Precondition: `line >= 1`.
    public func lineStart(ofLine line: UInt64) -> (point: Int, newlinesToSkip: UInt64)? {
        precondition(line >= 1, "lines are numbered from 1")
        guard let table = lineTable, !points.isEmpty else { return nil }
        // The last point with fewer than line - 1 newlines before it; point 0 has none.
        var low = 0
        var high = points.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if table.newlinesBefore[middle] + 1 < line { low = middle } else { high = middle }
        }
        return (low, line - 1 - table.newlinesBefore[low])
    }
}

/// Counts `\n` bytes fast: eight at a time in 64-bit words, where a byte equal to 0x0A becomes
/// 1 in its lane without carries between lanes, summed lane by lane over up to 255 words and then
/// across lanes with one multiply. Measured in CPU time on a 107 MiB text: about 5 GB/s
/// optimized, twice a per-word `nonzeroBitCount` (a library call without POPCNT in the
/// target), or 0.021 s where ISA-L takes 0.26 s to inflate it; 0.5 GB/s unoptimized.
/// `SIMD16<UInt8>` compares ran at 6.5 GB/s optimized but 9 MB/s unoptimized, which debug
/// builds and their tests could not afford.
enum NewlineCounter {
    /// The number of `\n` bytes in `bytes`.
    static func count(in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let size = bytes.count
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let pattern: UInt64 = 0x0A0A_0A0A_0A0A_0A0A
        let evenBytes: UInt64 = 0x00FF_00FF_00FF_00FF
        var total = 0
        var position = 0
        while size - position >= 8 {
            // At most 255 words, so that no lane's count overflows its byte.
            let words = min(255, (size - position) / 8)
            var lanes: UInt64 = 0
            for word in 0..<words {
                let x = base.loadUnaligned(fromByteOffset: position + 8 * word, as: UInt64.self) ^ pattern
                // A lane's high bit is set unless the lane is zero (the byte was `\n`).
                let nonZero = ((x & low7) &+ low7) | x
                lanes &+= (~nonZero & ~low7) >> 7
            }
            // Pairs of lanes into 16-bit fields (each under 511), then the four fields into the top one.
            let pairs = (lanes & evenBytes) &+ ((lanes >> 8) & evenBytes)
            total += Int((pairs &* 0x0001_0001_0001_0001) >> 48)
            position += 8 * words
        }
        while position < size {
            if base.load(fromByteOffset: position, as: UInt8.self) == 0x0A { total += 1 }
            position += 1
        }
        return total
    }
}

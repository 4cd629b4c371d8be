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

/// Counts `\n` bytes fast: 64 bytes a round in four 16-byte vectors, where each lane equal to
/// 0x0A compares to all ones (-1) and is subtracted from that lane's byte counter, up to 255
/// rounds before the counters are widened and summed. SSE2's compare and subtract, which every
/// x86-64 has: on the 256 MiB text benchmark corpus 0.017-0.024 s optimized against 0.060-0.077 s
/// for eight bytes at a time in 64-bit words (carry-free lane arithmetic), measured in one
/// process, interleaved; unoptimized (debug builds, where the tests run) about as fast as the
/// word version there, a few hundred MB/s. This runs on unpack's writing thread for
/// `--write-index`, beside the CRC-32 and the write.
enum NewlineCounter {
    /// The number of `\n` bytes in `bytes`.
    static func count(in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let size = bytes.count
        let newline = SIMD16<UInt8>(repeating: 0x0A)
        var total = 0
        var position = 0
        while size - position >= 64 {
            // At most 255 rounds, so that no lane's count passes 255.
            let rounds = min(255, (size - position) / 64)
            var first = SIMD16<UInt8>(), second = SIMD16<UInt8>(), third = SIMD16<UInt8>(), fourth = SIMD16<UInt8>()
            for round in 0..<rounds {
                let at = position + 64 * round
                // A true lane of the mask is all ones, -1: subtracting it counts one.
                first &-= unsafeBitCast(base.loadUnaligned(fromByteOffset: at, as: SIMD16<UInt8>.self) .== newline,
                                        to: SIMD16<UInt8>.self)
                second &-= unsafeBitCast(base.loadUnaligned(fromByteOffset: at + 16, as: SIMD16<UInt8>.self) .== newline,
                                         to: SIMD16<UInt8>.self)
                third &-= unsafeBitCast(base.loadUnaligned(fromByteOffset: at + 32, as: SIMD16<UInt8>.self) .== newline,
                                        to: SIMD16<UInt8>.self)
                fourth &-= unsafeBitCast(base.loadUnaligned(fromByteOffset: at + 48, as: SIMD16<UInt8>.self) .== newline,
                                         to: SIMD16<UInt8>.self)
            }
            // Four lanes of at most 255 each fit 16 bits; sixteen such sums fit an Int.
            let widened = SIMD16<UInt16>(truncatingIfNeeded: first) &+ SIMD16<UInt16>(truncatingIfNeeded: second)
                &+ SIMD16<UInt16>(truncatingIfNeeded: third) &+ SIMD16<UInt16>(truncatingIfNeeded: fourth)
            total += Int(widened.wrappedSum())
            position += 64 * rounds
        }
        while position < size {
            if base.load(fromByteOffset: position, as: UInt8.self) == 0x0A { total += 1 }
            position += 1
        }
        return total
    }
}

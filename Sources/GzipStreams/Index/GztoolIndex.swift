import CZlib

extension GzipIndex {
    /// The largest window gztool stores: 32768 bytes.
    private static let gztoolWindowLimit = Int(defaultWindowSize)

    /// The most points of a gztool index that ``init(gztool:compressedSize:)`` reads: 2048 (64 MiB
    /// of windows once inflated).
    public static let maximumPoints = 2048

    /// Reads an index written by gztool (`gztool -i`, its `.gzi` file; versions 0 and 1, the
    /// second with line numbers, which are skipped), with every window in memory.
    ///
    /// gztool's layout (its README, "Index file format"), every integer big-endian: 8 zero
    /// bytes and `gzipindx` (version 0) or `gzipindX` (version 1, then a 4-byte line-number
    /// format); the number of points twice (8 bytes each; 0 and 2^64 − 1 mark an index still
    /// being built); per point its plain offset (8), compressed offset (8, zran's `in`: the
    /// first whole byte), bit offset (4), the length of its window (4; 0 for none) and the
    /// window compressed in the zlib format (RFC 1950), then in version 1 a line number (8);
    /// last the plain size (8) and in version 1 the line count (8). A window shorter than
    /// 32 KiB (a point near the start of the data) is taken as the end of the 32 KiB before
    /// the point, zeros first.
    /// - Parameters:
    ///   - bytes: The whole index file.
    ///   - compressedSize: The size in bytes of the gzip file it indexes (gztool does not store it).
    /// - Throws: ``GzipIndexError`` (format ``GzipIndexFile/Format/gztool``): bad magic, an unfinished index, truncation, a window
    ///   that does not inflate or is longer than 32 KiB, a bit offset above 7, offsets that go
    ///   backwards or beyond the sizes, bytes after the end. Wraps zlib's `uncompress`.
    public init(gztool bytes: [UInt8], compressedSize: UInt64) throws(GzipIndexError) {
        var reader = BigEndianReader(bytes: bytes)
        let magic = try reader.take(16, "header")
        let version: Int
        switch magic {
        case [UInt8](repeating: 0, count: 8) + Array("gzipindx".utf8): version = 0
        case [UInt8](repeating: 0, count: 8) + Array("gzipindX".utf8): version = 1
        default: throw GzipIndexError(format: .gztool, reason: "it does not start with 8 zero bytes and gzipindx or gzipindX", offset: 0)
        }
        if version == 1 { _ = try reader.integer(4, "line-number format") }
        let countOffset = reader.offset
        let count = try reader.integer(8, "point count")
        guard try reader.integer(8, "point count") == count, count != 0 else {
            throw GzipIndexError(format: .gztool, reason: "the index is unfinished (gztool -S still building it)", offset: countOffset)
        }
        // Every point takes at least 24 bytes: a count beyond that is damage, not a size to reserve.
        guard count <= UInt64(bytes.count / 24) else {
            throw GzipIndexError(format: .gztool, reason: "\(count) points cannot fit in \(bytes.count) bytes", offset: countOffset)
        }
        // Its windows are inflated into memory, 32 KiB each: a count bounds what a small file
        // can make this take (gztool's default span of 10 MiB covers 20 GiB of data with them).
        guard count <= UInt64(Self.maximumPoints) else {
            throw GzipIndexError(format: .gztool, reason: "\(count) points, more than the \(Self.maximumPoints) read (windows are held in memory)",
                                   offset: countOffset)
        }
        var points: [GzipAccessPoint] = []
        points.reserveCapacity(Int(count))
        for number in 0..<Int(count) {
            let start = reader.offset
            let plain = try reader.integer(8, "point \(number)")
            let compressed = try reader.integer(8, "point \(number)")
            let bits = try reader.integer(4, "point \(number)")
            let windowLength = Int(try reader.integer(4, "point \(number)"))
            let windowOffset = reader.offset
            let packed = try reader.take(windowLength, "the window of point \(number)")
            if version == 1 { _ = try reader.integer(8, "point \(number)") }
            guard bits <= 7 else { throw GzipIndexError(format: .gztool, reason: "point \(number) has bit offset \(bits)", offset: start + 16) }
            let window = windowLength == 0 ? nil : try Self.inflateWindow(packed, point: number, offset: windowOffset)
            let point = GzipAccessPoint(compressedOffset: compressed, bitOffset: UInt8(bits), plainOffset: plain, window: window)
            if let previous = points.last, (point.compressedOffset, previous.bitOffset) < (previous.compressedOffset, point.bitOffset)
                || point.plainOffset < previous.plainOffset {
                throw GzipIndexError(format: .gztool, reason: "point \(number) comes before the point ahead of it", offset: start)
            }
            guard compressed <= compressedSize else {
                throw GzipIndexError(format: .gztool, reason: "point \(number) lies beyond the gzip file's \(compressedSize) bytes", offset: start + 8)
            }
            points.append(point)
        }
        let sizeOffset = reader.offset
        let plainSize = try reader.integer(8, "plain size")
        if version == 1 { _ = try reader.integer(8, "line count") }
        guard reader.offset == bytes.count else {
            throw GzipIndexError(format: .gztool, reason: "\(bytes.count - reader.offset) bytes follow the end", offset: reader.offset)
        }
        guard points.last.map({ $0.plainOffset <= plainSize }) ?? true else {
            throw GzipIndexError(format: .gztool, reason: "the last point lies beyond the plain size \(plainSize)", offset: sizeOffset)
        }
        // gztool stores no spacing: the widest gap between points stands in for it.
        let gaps = zip(points.dropFirst(), points).map { $0.plainOffset - $1.plainOffset } + [plainSize - points.last!.plainOffset]
        let spacing = UInt32(clamping: max(gaps.max() ?? 0, UInt64(Self.defaultWindowSize)))
        self.init(compressedSize: compressedSize, plainSize: plainSize, spacing: spacing, points: points)
    }

    /// A gztool window: zlib data that inflates to at most 32 KiB, put at the end of 32 KiB.
    private static func inflateWindow(_ packed: [UInt8], point: Int, offset: Int) throws(GzipIndexError) -> [UInt8] {
        var window = [UInt8](repeating: 0, count: gztoolWindowLimit + 1)
        var length = uLongf(window.count)
        let code = window.withUnsafeMutableBufferPointer { out in
            packed.withUnsafeBufferPointer { input in
                uncompress(out.baseAddress, &length, input.baseAddress, uLong(input.count))
            }
        }
        guard code == Z_OK, Int(length) <= gztoolWindowLimit else {
            let reason = code == Z_OK || code == Z_BUF_ERROR && length == uLongf(window.count)
                ? "more than 32768 bytes" : "not zlib data (zlib: \(ZStream.message(for: code, stream: nil)))"
            throw GzipIndexError(format: .gztool, reason: "the window of point \(point) is \(reason)", offset: offset)
        }
        let filled = Int(length)
        return [UInt8](repeating: 0, count: gztoolWindowLimit - filled) + window[0..<filled]
    }
}

/// Big-endian fields read in order from a gztool index, with truncation errors that name the field.
private struct BigEndianReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func take(_ count: Int, _ part: String) throws(GzipIndexError) -> [UInt8] {
        guard count <= bytes.count - offset else {
            throw GzipIndexError(format: .gztool, reason: "the index ends inside \(part)", offset: offset)
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func integer(_ width: Int, _ part: String) throws(GzipIndexError) -> UInt64 {
        try take(width, part).reduce(0) { $0 << 8 | UInt64($1) }
    }
}

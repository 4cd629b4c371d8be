import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension GzipIndex {
    /// The most access points an index of a compressed file of `compressedSize` bytes is read
    /// with: 64, plus one for every 16 bytes of the file. A point is a deflate block boundary
    /// (RFC 1951 §3.2.3), and the writers put one at most every 32 KiB of plain data, which even
    /// data of zeros (about 1000:1) stretches over more than 16 compressed bytes; so a claim of
    /// more is damage or an attack, and the table in memory stays under about 3 bytes per byte
    /// of the compressed file.
    public static func maximumPointCount(compressedSize: Int64) -> Int {
        64 + Int(max(0, compressedSize) / 16)
    }

    /// Reads a GZIDX file (version 0 or 1, checked as ``init(gzidx:)`` checks it) once, whole,
    /// from `descriptor`, keeping in memory the header, the point table and a CRC-32 of each
    /// window, not the windows: ``window(ofPoint:)`` reads a point's window again when a span
    /// needs it and gives it only if its CRC-32 is the one read here, so a file changed while
    /// the index is used changes no output (the error is a ``GzipIndexError``: the window of
    /// point N changed while the index was in use). An index of a huge file so costs about 50
    /// bytes a point in memory, not 32 KiB.
    ///
    /// gzstream's seal after the last window, when there is one, is checked against every byte
    /// before it (``compressedTail`` then holds the compressed file's last bytes it names), and
    /// the line table before the seal, when there is one, against the points (``lineTable``).
    ///
    /// The index keeps a duplicate of `descriptor`, closed when the last copy of the index is
    /// gone; the caller keeps owning `descriptor`. The file's size must be exactly that of its
    /// header, table, windows, line table and seal.
    /// - Parameters:
    ///   - descriptor: An open GZIDX file, read with `pread(2)` (the file offset is not used).
    ///   - path: The file's name for error messages.
    ///   - maximumPoints: The most points taken (see ``maximumPointCount(compressedSize:)``); a
    ///     header claiming more is refused before anything is allocated for them.
    /// - Throws: ``GzipIndexError`` for a file that is not a valid index, with the byte offset;
    ///   ``ByteStreamError`` when reading fails. Blocks while reading the file.
    /// The corresponding C functions are `fcntl(2)` (`F_DUPFD_CLOEXEC`), `fstat(2)` and `pread(2)`.
    public init(gzidxFile descriptor: Int32, path: String, maximumPoints: Int = .max) throws {
        let size = Int(try SystemCalls.status(of: descriptor, target: path).st_size)
        var start = try Self.readBytes(descriptor, count: min(size, Self.headerSize), at: 0, path: path)
        if start.count == Self.headerSize {
            let version = start[5]
            let count = Int(start.withUnsafeBytes { GzipFormat.loadUInt32($0, at: 31) })
            if start.starts(with: Self.magic), version <= 1, count > maximumPoints {
                throw GzipIndexError.tooManyPoints(count, limit: maximumPoints, offset: 31)
            }
            let entrySize = version == 0 ? Self.pointEntrySize - 1 : Self.pointEntrySize
            let tableEnd = min(size, Self.headerSize + entrySize * count)
            start += try Self.readBytes(descriptor, count: tableEnd - Self.headerSize, at: Self.headerSize, path: path)
        }
        let parsed = start.withUnsafeBytes { raw in
            Result { () throws(GzipIndexError) in try GZIDXParser(raw).parseTable() }
        }
        let (index, hasWindow, tableEnd) = try parsed.get()
        var offsets = [Int64](repeating: -1, count: hasWindow.count)
        var offset = tableEnd
        let windowSize = Int(index.windowSize)
        for point in hasWindow.indices where hasWindow[point] {
            guard size - offset >= windowSize else { throw GzipIndexError.truncated(.window(point: point), offset: offset) }
            offsets[point] = Int64(offset)
            offset += windowSize
        }
        var sealed = false
        if offset != size {
            let lineTableSize = GzipLineTable.encodedSize(pointCount: index.points.count)
            guard size - offset == GzipIndexSeal.size || size - offset == lineTableSize + GzipIndexSeal.size else {
                throw GzipIndexError.trailingBytes(count: size - offset, offset: offset)
            }
            sealed = true
        }
        // The one whole read: every window's CRC-32, and the whole file's for the seal.
        let reading = try WindowChecksums(descriptor: descriptor, path: path, offsets: offsets, windowSize: windowSize,
                                          tableBytes: start, end: offset, size: size)
        self = index
        if sealed {
            // What follows the windows: the line table, if any, then the seal.
            let after = reading.sealBytes
            let seal = Array(after.suffix(GzipIndexSeal.size))
            let sealStart = size - GzipIndexSeal.size
            guard seal.starts(with: GzipIndexSeal.magic) else {
                throw GzipIndexError.trailingBytes(count: size - offset, offset: offset)
            }
            guard GzipIndexSeal.storedCRC(of: seal) == reading.crcBeforeSealCRC else {
                throw GzipIndexError.sealMismatch(offset: sealStart)
            }
            compressedTail = GzipIndexSeal.tail(of: seal)
            if after.count > GzipIndexSeal.size {
                let table = after.dropLast(GzipIndexSeal.size)
                let parsed = Array(table).withUnsafeBytes { raw in
                    Result { () throws(GzipIndexError) in try GzipLineTable.parse(raw, for: index, offset: offset) }
                }
                lineTable = try parsed.get()
            }
        }
        windowFile = GzipIndexWindowFile(descriptor: try SystemCalls.duplicate(descriptor, target: path),
                                         offsets: offsets, checksums: reading.windowCRCs, windowSize: windowSize, path: path)
    }

    /// Whether point `point` (an index into ``points``) has a window, wherever it is kept.
    public func hasWindow(ofPoint point: Int) -> Bool {
        if let windowFile { return windowFile.offsets[point] >= 0 }
        return points[point].window != nil
    }

    /// The same index with every window in memory, as ``init(gzidx:)`` gives it: what
    /// ``gzidxEncoded()`` writes from.
    /// - Throws: The error of reading a window from the index file.
    public func loadingWindows() throws -> GzipIndex {
        var index = self
        index.windowFile = nil
        for point in points.indices { index.points[point].window = try window(ofPoint: point) }
        return index
    }

    /// Exactly `count` bytes at `offset`, fewer only at the end of the file.
    static func readBytes(_ descriptor: Int32, count: Int, at offset: Int, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let read = try bytes.withUnsafeMutableBytes { buffer in
                try SystemCalls.read(descriptor, buffer.baseAddress! + done, count - done, at: Int64(offset + done), target: path)
            }
            if read == 0 { break }
            done += read
        }
        bytes.removeSubrange(done...)
        return bytes
    }
}

/// The one pass of ``GzipIndex/init(gzidxFile:path:maximumPoints:)`` over a GZIDX file's
/// windows and seal, 1 MiB at a time: each window's CRC-32, the CRC-32 of every byte before
/// the seal's own CRC field, and the seal's bytes.
private struct WindowChecksums {
    private(set) var windowCRCs: [UInt32]
    private(set) var crcBeforeSealCRC: UInt32 = 0
    private(set) var sealBytes: [UInt8] = []

    init(descriptor: Int32, path: String, offsets: [Int64], windowSize: Int, tableBytes: [UInt8], end: Int, size: Int) throws {
        windowCRCs = [UInt32](repeating: 0, count: offsets.count)
        var whole = tableBytes.withUnsafeBytes { crc32(0, $0) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { buffer.deallocate() }
        // Windows follow each other from the table's end, in point order.
        let windowed = offsets.indices.filter { offsets[$0] >= 0 }
        var nextWindow = 0
        var windowCRC: UInt32 = 0
        var offset = tableBytes.count
        let crcField = size - 4
        while offset < size {
            let wanted = min(chunk, size - offset)
            var got = 0
            while got < wanted {
                let read = try SystemCalls.read(descriptor, buffer.baseAddress! + got, wanted - got,
                                                at: Int64(offset + got), target: path)
                guard read > 0 else {
                    // The file shrank since its size was taken.
                    throw GzipIndexError.truncated(.window(point: windowed.isEmpty ? 0 : windowed[min(nextWindow, windowed.count - 1)]),
                                                   offset: offset + got)
                }
                got += read
            }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<got])
            // The whole file's CRC-32, up to the seal's CRC field when there is a seal.
            let wholeEnd = end == size ? got : max(0, min(got, crcField - offset))
            whole = crc32(whole, UnsafeRawBufferPointer(rebasing: bytes[0..<wholeEnd]))
            var position = 0
            while position < got {
                let absolute = offset + position
                if absolute >= end {
                    sealBytes += bytes[position..<got]
                    break
                }
                let windowEnd = tableBytes.count + (nextWindow + 1) * windowSize
                let take = min(got, windowEnd - offset, end - offset) - position
                windowCRC = crc32(windowCRC, UnsafeRawBufferPointer(rebasing: bytes[position..<(position + take)]))
                position += take
                if offset + position == windowEnd {
                    windowCRCs[windowed[nextWindow]] = windowCRC
                    windowCRC = 0
                    nextWindow += 1
                }
            }
            offset += got
        }
        crcBeforeSealCRC = whole
    }
}

/// gzstream's seal: 20 bytes after the last window of a GZIDX file that gzstream writes,
/// which indexed_gzip and rapidgzip ignore (they read nothing after the last window). `GZSEAL`,
/// a zero byte and the seal's version (1); the last 8 bytes of the compressed file the index
/// was made from (for a gzip file, its last member's trailer: CRC-32 and ISIZE, RFC 1952
/// §2.3.1), which bind the index to that file; and the CRC-32 of every byte of the index before
/// this field, little-endian, which finds damage anywhere in the index.
enum GzipIndexSeal {
    static let magic: [UInt8] = Array("GZSEAL".utf8) + [0, 1]
    static let tailSize = 8
    static let size = 20

    /// The seal for an index whose bytes before it have CRC-32 `crc`, made from a compressed
    /// file ending in `tail` (its last 8 bytes, fewer for a shorter file, zero-filled at the front).
    static func encoded(tail: [UInt8], crcBefore crc: UInt32) -> [UInt8] {
        var seal = magic + [UInt8](repeating: 0, count: tailSize - min(tail.count, tailSize)) + tail.suffix(tailSize)
        let sealCRC = seal.withUnsafeBytes { crc32(crc, $0) }
        GzipFormat.append(littleEndian: sealCRC, to: &seal)
        return seal
    }

    /// The compressed file's last bytes named in `seal`.
    static func tail(of seal: [UInt8]) -> [UInt8] { Array(seal[magic.count..<(magic.count + tailSize)]) }

    /// The CRC-32 stored in `seal`.
    static func storedCRC(of seal: [UInt8]) -> UInt32 {
        seal.withUnsafeBytes { GzipFormat.loadUInt32($0, at: size - 4) }
    }
}

/// The windows of a GZIDX file read by ``GzipIndex/init(gzidxFile:path:maximumPoints:)``,
/// left in the file and read on demand, each checked against the CRC-32 it had when the index
/// was read. Immutable after creation, and `pread(2)` moves no shared file offset, so any
/// number of threads may read windows at once. Owns its descriptor, closed in `deinit`. Two
/// are equal only when they are the same object.
final class GzipIndexWindowFile: Sendable, Equatable {
    let descriptor: Int32
    /// Each point's window's offset in the file, -1 for a point without one.
    let offsets: [Int64]
    /// Each point's window's CRC-32 when the index was read (0 for a point without one).
    let checksums: [UInt32]
    let windowSize: Int
    let path: String

    init(descriptor: Int32, offsets: [Int64], checksums: [UInt32], windowSize: Int, path: String) {
        self.descriptor = descriptor
        self.offsets = offsets
        self.checksums = checksums
        self.windowSize = windowSize
        self.path = path
    }

    /// The window of `point`, or `nil` when it has none.
    /// - Throws: ``GzipIndexError`` (windowChanged) when the window read is not
    ///   the one the index was read with (the file changed or shrank); ``ByteStreamError`` when
    ///   reading fails. The corresponding C function is `pread(2)`.
    func window(ofPoint point: Int) throws -> [UInt8]? {
        let offset = offsets[point]
        guard offset >= 0 else { return nil }
        let window = try GzipIndex.readBytes(descriptor, count: windowSize, at: Int(offset), path: path)
        guard window.count == windowSize, window.withUnsafeBytes({ crc32(0, $0) }) == checksums[point] else {
            throw GzipIndexError.windowChanged(point: point, offset: Int(offset))
        }
        return window
    }

    static func == (left: GzipIndexWindowFile, right: GzipIndexWindowFile) -> Bool { left === right }

    deinit { try? SystemCalls.close(descriptor, target: path) }
}

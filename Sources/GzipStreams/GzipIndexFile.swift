import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension GzipIndex {
    /// Reads a GZIDX file's header and point table (version 0 or 1, checked as
    /// ``init(gzidx:)`` checks them) and leaves the windows in the file: ``window(ofPoint:)``
    /// reads a point's window when asked, so an index of a huge file costs 18 bytes a point in
    /// memory, not 32 KiB. The points' own `window` is `nil`; ``hasWindow(ofPoint:)`` says which
    /// have one.
    ///
    /// The index keeps a duplicate of `descriptor`, closed when the last copy of the index is
    /// gone; the caller keeps owning `descriptor`. The file must not change while the index is
    /// used. The file's size must be exactly that of its header, table and windows.
    /// - Parameters:
    ///   - descriptor: An open GZIDX file, read with `pread(2)` (the file offset is not used).
    ///   - path: The file's name for error messages.
    /// - Throws: ``GzipIndexError`` for a file that is not a valid index, with the byte offset;
    ///   ``ByteStreamError`` when reading fails. Blocks while reading the header and table.
    /// The corresponding C functions are `fcntl(2)` (`F_DUPFD_CLOEXEC`), `fstat(2)` and `pread(2)`.
    public init(gzidxFile descriptor: Int32, path: String) throws {
        let size = Int(try SystemCalls.status(of: descriptor, target: path).st_size)
        var start = try Self.readBytes(descriptor, count: min(size, Self.headerSize), at: 0, path: path)
        if start.count == Self.headerSize {
            let version = start[5]
            let count = Int(start.withUnsafeBytes { GzipFormat.loadUInt32($0, at: 31) })
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
        guard offset == size else { throw GzipIndexError.trailingBytes(count: size - offset, offset: offset) }
        self = index
        windowFile = GzipIndexWindowFile(descriptor: try SystemCalls.duplicate(descriptor, target: path),
                                         offsets: offsets, windowSize: windowSize, path: path)
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
    fileprivate static func readBytes(_ descriptor: Int32, count: Int, at offset: Int, path: String) throws -> [UInt8] {
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

/// The windows of a GZIDX file read by ``GzipIndex/init(gzidxFile:path:)``, left in the file
/// and read on demand. Immutable after creation, and `pread(2)` moves no shared file offset,
/// so any number of threads may read windows at once. Owns its descriptor, closed in `deinit`.
/// Two are equal only when they are the same object.
final class GzipIndexWindowFile: Sendable, Equatable {
    let descriptor: Int32
    /// Each point's window's offset in the file, -1 for a point without one.
    let offsets: [Int64]
    let windowSize: Int
    let path: String

    init(descriptor: Int32, offsets: [Int64], windowSize: Int, path: String) {
        self.descriptor = descriptor
        self.offsets = offsets
        self.windowSize = windowSize
        self.path = path
    }

    /// The window of `point`, or `nil` when it has none.
    /// - Throws: ``ByteStreamError`` when reading fails, or (`EIO`) when the file has become
    ///   shorter than the window. The corresponding C function is `pread(2)`.
    func window(ofPoint point: Int) throws -> [UInt8]? {
        let offset = offsets[point]
        guard offset >= 0 else { return nil }
        let window = try GzipIndex.readBytes(descriptor, count: windowSize, at: Int(offset), path: path)
        guard window.count == windowSize else {
            throw ByteStreamError(.system(errno: EIO), operation: "read window of point \(point)", target: path)
        }
        return window
    }

    static func == (left: GzipIndexWindowFile, right: GzipIndexWindowFile) -> Bool { left === right }

    deinit { try? SystemCalls.close(descriptor, target: path) }
}

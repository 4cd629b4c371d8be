import ByteStreams
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoding stream that can start at any plain offset without decoding what comes before:
/// a gzip file read through an index. ``IndexedGzipInputStream`` (a GZIDX index) and
/// ``IndexedBGZFInputStream`` (BGZF and its `.gzi`) conform.
///
/// Offsets and ranges are plain (uncompressed) byte offsets as `Int`, from 0.
/// ``read(range:)`` reads exactly the range's bytes or throws: a range that ends past the end
/// of the data is ``PlainRangeError``, one that starts before 0
/// ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)``.
///
/// Each call blocks while the bytes are decoded. Not thread-safe: one thread at a time uses
/// the stream, as any stream.
public protocol PlainRangeReading: ByteInputStream {
    /// Moves to plain offset `offset`, opening the stream first if needed: the next read
    /// returns the byte there (at the end of the data, reads return 0).
    /// - Parameter offset: A plain offset in bytes, `0...` the plain size.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   negative offset; ``PlainRangeError`` for an offset past the end, when the stream can
    ///   tell without reading on (see the conforming type); the stream's errors.
    func seek(toPlainOffset offset: Int) throws

    /// Decodes the plain bytes of `range` and lends them to `body` in pieces, in order (each
    /// valid only during its call), opening the stream first if needed; only the part of the
    /// file the range needs is decoded (from the index's point or member at or before its
    /// start). Afterwards reads return nothing until the next seek.
    /// - Parameters:
    ///   - range: Plain offsets in bytes; its start `>= 0`.
    ///   - body: Takes each piece; an error it throws ends the read and is thrown.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   range starting before 0; ``PlainRangeError`` when the range ends past the end of the
    ///   data (the pieces before the end may have been lent); the stream's errors.
    func read(range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> Void) throws
}

extension PlainRangeReading {
    /// The plain bytes of `range`: exactly `range.count` of them. See
    /// ``read(range:_:)``, which lends them without gathering them in memory.
    /// - Throws: As ``read(range:_:)``.
    public func read(range: Range<Int>) throws -> [UInt8] {
        var bytes: [UInt8] = []
        // Not range.count: a range past the end is found only as it is read (BGZF), and a
        // huge one must be an error, not an allocation.
        bytes.reserveCapacity(min(range.count, 1 << 20))
        try read(range: range) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Writes the plain bytes of `range` to `output` (opened if it is not open, not closed):
    /// for a range too large to hold in memory.
    /// - Throws: As ``read(range:_:)``, and `output`'s errors.
    public func read(range: Range<Int>, into output: ByteOutputStream) throws {
        try read(range: range) { try output.writeAll($0) }
    }
}

/// A plain range or offset past the end of the data, which holds `plainSize` bytes.
public struct PlainRangeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was asked: the range, or for a seek an empty range at the offset.
    public var range: Range<Int>
    /// The plain size of the data in bytes.
    public var plainSize: Int

    /// A range `range` past the end of data of `plainSize` bytes.
    public init(range: Range<Int>, plainSize: Int) {
        self.range = range
        self.plainSize = plainSize
    }

    /// The message a user reads: `bytes 100..<200 run past the end of the data (150 bytes)`
    /// for a range that starts inside the data, `bytes 200..<300 are past the end of the data
    /// (150 bytes)` for one that starts at or after its end, `offset 200 is past the end of the
    /// data (150 bytes)` for a seek.
    public var description: String {
        let bytes = "bytes \(range.lowerBound)..<\(range.upperBound)"
        let what = range.isEmpty ? "offset \(range.lowerBound) is" : range.lowerBound < plainSize ? "\(bytes) run" : "\(bytes) are"
        return "\(what) past the end of the data (\(plainSize) bytes)"
    }
}

extension PlainRangeError: LocalizedError, CustomDebugStringConvertible {
    /// ``description``, so that `localizedDescription` says what happened.
    public var errorDescription: String? { description }

    /// The fields: `GzipStreams.PlainRangeError(range: Range(100..<200), plainSize: 150)`.
    public var debugDescription: String { reflectedDescription(of: self) }
}

/// Checks that `range` does not start before 0.
func requirePlainRange(_ range: Range<Int>) throws(ByteStreamError) {
    try requireArgument(range.lowerBound >= 0, "range", "must not start before 0, not \(range)", operation: "read range")
}

/// Checks that `offset` is not negative.
func requirePlainOffset(_ offset: Int) throws(ByteStreamError) {
    try requireArgument(offset >= 0, "offset", "must not be negative, not \(offset)", operation: "seek")
}

extension ByteInputStream {
    /// Reads up to `count` bytes (to the end, if it comes first) and lends them to `body` in
    /// pieces of at most 64 KiB. - Returns: The bytes read.
    func lendPlainBytes(count: Int, to body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        guard count > 0 else { return 0 }
        let size = min(count, 64 << 10)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        var done = 0
        while done < count {
            let read = self.read(buffer, maxLength: min(size, count - done))
            if read < 0 { throw streamErrorOrFallback(operation: "read range") }
            if read == 0 { break }
            try body(UnsafeRawBufferPointer(start: buffer, count: read))
            done += read
        }
        return done
    }
}

extension IndexedGzipInputStream: PlainRangeReading {
    /// ``seek(toPlainOffset:length:)`` with an `Int` offset, opening the stream first if
    /// needed. An offset past the end is ``PlainRangeError`` here when the index knows the
    /// plain size (``plainSize``); otherwise the first read throws
    /// ``IndexedGzipError/offsetPastEnd(offset:size:)``.
    public func seek(toPlainOffset offset: Int) throws {
        try requirePlainOffset(offset)
        if streamStatus == .notOpen { try openOrThrow() }
        if let size = plainSize, offset > size { throw PlainRangeError(range: offset..<offset, plainSize: Int(size)) }
        try seek(toPlainOffset: Int64(offset), length: nil)
    }

    /// Decodes `range` from the last access point at or before its start, the spans it covers
    /// checked as ``seek(toPlainOffset:length:)`` says; see ``PlainRangeReading/read(range:_:)``.
    /// A range past the end is found from ``plainSize`` before anything is decoded when the
    /// index knows it, else by decoding the last span.
    public func read(range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try requirePlainRange(range)
        if streamStatus == .notOpen { try openOrThrow() }
        if let size = plainSize, range.upperBound > size { throw PlainRangeError(range: range, plainSize: Int(size)) }
        try seek(toPlainOffset: Int64(range.lowerBound), length: Int64(range.count))
        let count: Int
        do {
            count = try lendPlainBytes(count: range.count, to: body)
        } catch {
            if case .offsetPastEnd(_, let size)? = error as? IndexedGzipError {
                throw PlainRangeError(range: range, plainSize: Int(size))
            }
            throw error
        }
        if count < range.count { throw PlainRangeError(range: range, plainSize: range.lowerBound + count) }
    }
}

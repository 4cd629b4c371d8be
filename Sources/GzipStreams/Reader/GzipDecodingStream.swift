import ByteStreams

/// What a reader of gzip data tells besides the bytes: the properties ``GzipInputStream``,
/// ``BGZFInputStream`` and ``IndexedGzipInputStream`` share, so that a caller (the `gzstream`
/// command) can use any of them without knowing which.
public protocol GzipDecodingStream: ByteInputStream {
    /// The number of compressed bytes consumed so far.
    var compressedByteCount: Int64 { get }
    /// The number of plain bytes returned so far.
    var uncompressedByteCount: Int64 { get }
    /// The first member's header, once it has been read.
    var header: GzipHeader? { get }
    /// Where trailing garbage was met, if it was.
    var trailingGarbage: GzipInputStream.TrailingGarbage? { get }
    /// The number of members read and checked so far.
    var memberCount: Int { get }
    /// Whether the input ended with zero bytes after the last member (padding, skipped).
    var endedWithZeroPadding: Bool { get }
    /// Whether ``readInPlace(maxLength:_:)`` lends plain bytes where worker threads decoded
    /// them (``BGZFInputStream``, ``IndexedGzipInputStream``), so that writing from them saves
    /// a copy. `false` for ``GzipInputStream``, whose `readInPlace` copies through a temporary
    /// buffer: read it into a buffer of your own instead.
    var lendsPlainBytes: Bool { get }
    /// ``ByteInputStream/read(_:maxLength:)`` without the copy where the stream can: lends
    /// `body` the next `1...maxLength` plain bytes (valid only during `body`) and consumes
    /// them. The status, events and errors are a read's. Blocks as a read does; not
    /// thread-safe.
    /// - Returns: The number of bytes lent; `0` at the end (and for `maxLength` 0), `body` not
    ///   called; `-1` on error, with ``ByteStream/streamError`` set.
    /// - Throws: Only what `body` throws (the bytes count as read).
    func readInPlace(maxLength: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Int
}

extension GzipInputStream: GzipDecodingStream {
    /// `false`: one inflater on the reading thread, no worker's buffer to lend.
    public var lendsPlainBytes: Bool { false }

    /// A read into a temporary buffer of at most 64 KiB, lent to `body`: see
    /// ``GzipDecodingStream/readInPlace(maxLength:_:)``.
    public func readInPlace(maxLength: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Int {
        precondition(maxLength >= 0, "maxLength must not be negative")
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, min(maxLength, 64 * 1024))) { buffer in
            let count = read(buffer.baseAddress!, maxLength: min(maxLength, buffer.count))
            if count > 0 { try body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count)) }
            return count
        }
    }
}

extension BGZFInputStream {
    /// `true`: members are inflated on worker threads into buffers lent as they are.
    public var lendsPlainBytes: Bool { true }
}

extension IndexedGzipInputStream {
    /// `true`: spans are decoded on worker threads into buffers lent as they are.
    public var lendsPlainBytes: Bool { true }
}

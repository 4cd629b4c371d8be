/// An input stream that returns some bytes first, then the rest of an inner stream: the one
/// prefixed-input stream. Made in two ways:
/// - ``init(peeking:length:)`` reads the inner stream's first bytes at creation, to be looked
///   at (is this gzip? BGZF?), and returns them again before the rest: works for pipes, which
///   cannot seek back.
/// - `init(prefix:then:failure:offset:alignment:)` (package access) puts bytes already read
///   from the inner stream (by a reader that stopped part way) back in front of it, in reads
///   that keep a whole-input chunk grid, so that the next reader sees what it would have seen
///   alone.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset`` (peeking only): the inner stream's
/// offset less the peeked bytes not yet returned; setting it seeks the inner stream and drops them.
///
/// Ownership: the peeking initialiser opens `inner` if it is not open yet; neither closes it
/// (its owner does). Creation by peeking blocks until the peeked bytes are there or the input ends.
///
/// Scheduled (``ByteStream/schedule(on:)-(DispatchQueue)``), it does not follow its inner
/// stream's readiness: the delegate is told "has bytes available" after every read, and a read
/// blocks as when polled. Schedule a `GzipInputStream` or `GzipOutputStream` over a pipe or
/// socket, or the pipe or socket itself, for events that never block.
public final class PeekingInputStream: ByteInputStream {
    private let inner: ByteInputStream
    private var peeked: [UInt8] = []
    private var peekedPosition = 0
    /// The error of opening or reading `inner` before this stream was made: the first read
    /// after the prefix throws it, so a reader fails as it would have without the peek.
    private var peekError: (any Error)?
    /// For a spliced stream: reads end at multiples of `alignment`, counted from `offset`, and
    /// fill from `inner` after the prefix within the same read. `nil` when peeking.
    private let alignment: Int?
    private var offset: Int64 = 0

    /// The first bytes of the input: `length` of them, fewer only when the input is shorter
    /// or failed (the failure comes after them on read).
    public var peekedBytes: [UInt8] { peeked }

    /// Reads up to `length` bytes of `inner`, opening it if needed.
    /// - Parameters:
    ///   - inner: The stream to read; opened if it is not open yet, never closed by this stream
    ///     (its owner closes it).
    ///   - length: The bytes to peek, `0...ByteStream.maximumChunkSize`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `length` out of range (then `inner` is neither opened nor read). An error opening or
    ///   reading `inner` is not thrown here: the first read after the peeked bytes reports it.
    public init(peeking inner: ByteInputStream, length: Int) throws(ByteStreamError) {
        try requireArgument(length, in: 0...ByteStream.maximumChunkSize, "length", operation: "create PeekingInputStream")
        self.inner = inner
        alignment = nil
        super.init()
        if inner.streamStatus == .notOpen { inner.open() }
        if let error = inner.streamError {
            peekError = error
            return
        }
        var buffer = [UInt8](repeating: 0, count: length)
        while peeked.count < length {
            let count = buffer.withUnsafeMutableBufferPointer {
                inner.read($0.baseAddress!, maxLength: length - peeked.count)
            }
            if count < 0 {
                peekError = inner.streamErrorOrFallback(operation: "read")
                break
            }
            if count == 0 { break }
            peeked += buffer[0..<count]
        }
    }

    /// `prefix`, then the rest of `inner` (or, once the prefix is used up, `failure`: the
    /// inner stream had already failed), returned in reads that never cross a multiple of
    /// `alignment` counted in offsets of the whole input, so that a reader reading it in
    /// `alignment`-byte chunks sees the same chunk boundaries as one that read the whole input.
    /// Does not open `inner`; has no offset property.
    /// - Parameters:
    ///   - prefix: The bytes read from `inner` and not used yet.
    ///   - inner: The rest of the input, open.
    ///   - failure: The error reading `inner` met, if it failed.
    ///   - offset: The whole input's offset of the prefix's first byte, `>= 0`.
    ///   - alignment: The chunk grid in bytes, `>= 1`.
    package init(prefix: [UInt8], then inner: ByteInputStream, failure: (any Error)?, offset: Int64, alignment: Int) {
        precondition(offset >= 0 && alignment >= 1)
        self.inner = inner
        peeked = prefix
        peekError = failure
        self.offset = offset
        self.alignment = alignment
        super.init()
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        guard let alignment else {
            if peekedPosition < peeked.count { return takePeeked(into: buffer, maxLength: maxLength) }
            if let peekError { throw peekError }
            return try readInner(into: buffer, maxLength: maxLength)
        }
        let room = min(maxLength, alignment - Int(offset % Int64(alignment)))
        var count = takePeeked(into: buffer, maxLength: room)
        if count < room {
            if let peekError {
                if count == 0 { throw peekError }
            } else if count == 0 {
                count = try readInner(into: buffer, maxLength: room)
            } else {
                // The inner stream's failure comes on the next read, after these bytes.
                count += max(inner.read(buffer + count, maxLength: room - count), 0)
            }
        }
        offset += Int64(count)
        return count
    }

    /// Copies up to `maxLength` of the prefix's unread bytes into `buffer`.
    /// - Returns: The bytes copied, `0` once the prefix is used up.
    private func takePeeked(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        let count = min(maxLength, peeked.count - peekedPosition)
        guard count > 0 else { return 0 }
        peeked.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + peekedPosition, count: count) }
        peekedPosition += count
        return count
    }

    /// One read of `inner`; its failure thrown.
    private func readInner(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.read(buffer, maxLength: maxLength)
        if count < 0 { throw inner.streamErrorOrFallback(operation: "read") }
        return count
    }

    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        guard alignment == nil, key == .fileCurrentOffset, let offset = inner.property(forKey: key) as? Int64 else {
            return nil
        }
        return offset - Int64(peeked.count - peekedPosition)
    }

    /// Seeking a stream at its end makes it readable again (peeking only).
    override public func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard alignment == nil, key == .fileCurrentOffset, peekError == nil, inner.setProperty(value, forKey: key) else {
            return false
        }
        peekedPosition = peeked.count
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }
}

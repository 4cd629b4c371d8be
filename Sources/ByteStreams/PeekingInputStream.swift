/// An input stream whose first bytes are read at creation, to be looked at (is this gzip?
/// BGZF?), and returned again before the rest: works for pipes, which cannot seek back.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: the inner stream's offset less the
/// peeked bytes not yet returned; setting it seeks the inner stream and drops them.
///
/// Ownership: opens `inner` at creation if it is not open yet; never closes it (its owner
/// does). Creation blocks until the peeked bytes are there or the input ends.
///
/// Scheduled (``ByteStream/schedule(on:)-(DispatchQueue)``), it does not follow its inner
/// stream's readiness: the delegate is told "has bytes available" after every read, and a read
/// blocks as when polled. Schedule a `GzipInputStream` or `GzipOutputStream` over a pipe or
/// socket, or the pipe or socket itself, for events that never block.
public final class PeekingInputStream: ByteInputStream, @unchecked Sendable {
    private let inner: ByteInputStream
    private var peeked: [UInt8] = []
    private var peekedPosition = 0
    /// The error of opening or reading `inner` while peeking: the first read after the peeked
    /// bytes throws it, so a reader fails as it would have without the peek.
    private var peekError: (any Error)?

    /// The first bytes of the input: `length` of them, fewer only when the input is shorter
    /// or failed (the failure comes after them on read).
    public var peekedBytes: [UInt8] { peeked }

    /// Reads up to `length` bytes of `inner`, opening it if needed.
    /// - Parameter length: The bytes to peek, `0...ByteStream.maximumChunkSize`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `length` out of range (then `inner` is neither opened nor read). An error opening or
    ///   reading `inner` is not thrown here: the first read after the peeked bytes reports it.
    public init(peeking inner: ByteInputStream, length: Int) throws(ByteStreamError) {
        try requireArgument(length, in: 0...ByteStream.maximumChunkSize, "length", operation: "create PeekingInputStream")
        self.inner = inner
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
                peekError = inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read")
                break
            }
            if count == 0 { break }
            peeked += buffer[0..<count]
        }
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if peekedPosition < peeked.count {
            let count = min(maxLength, peeked.count - peekedPosition)
            peeked.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + peekedPosition, count: count) }
            peekedPosition += count
            return count
        }
        if let peekError { throw peekError }
        let count = inner.read(buffer, maxLength: maxLength)
        if count < 0 { throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
        return count
    }

    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        guard key == .fileCurrentOffset, let offset = inner.property(forKey: key) as? Int64 else { return nil }
        return offset - Int64(peeked.count - peekedPosition)
    }

    /// Seeking a stream at its end makes it readable again.
    override public func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffset, peekError == nil, inner.setProperty(value, forKey: key) else { return false }
        peekedPosition = peeked.count
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }
}

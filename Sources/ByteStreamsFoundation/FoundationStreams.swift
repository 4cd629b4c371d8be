import ByteStreams
import Foundation

/// Reads a Foundation `InputStream` (`InputStream(data:)`, `InputStream(url:)`, a socket
/// stream on Darwin) as a `ByteInputStream`, so it can feed a `GzipInputStream`
/// or any of our conveniences. The backing is named first, as in `FileInputStream`.
///
/// Status: `ByteStream.open()` opens the Foundation stream unless it is open
/// already; if the Foundation stream then reports `.error`, this stream fails with its error.
/// A Foundation read of `0` is the end of the stream; `-1` is an error.
///
/// Errors: a ``FoundationStreamError`` that keeps the Foundation stream's `streamError`
/// unchanged (for files an `NSError` in `NSPOSIXErrorDomain`); over a ``BridgedInputStream``,
/// the bridged stream's own error.
///
/// Ownership: closing this stream closes the Foundation stream unless `closesInnerStream` is
/// `false`. Property `ByteStream.PropertyKey.fileCurrentOffset` reads and sets
/// Foundation's `fileCurrentOffsetKey` (an `Int64` here, an `NSNumber` there).
///
/// Blocks when the Foundation stream blocks. Thread safety: as for any stream, one thread at a
/// time; the Foundation stream must not be used elsewhere meanwhile. Wraps `InputStream`'s
/// `open()`, `read(_:maxLength:)`, `hasBytesAvailable`, `getBuffer(_:length:)` and `close()`.
public final class FoundationInputStream: ByteInputStream {
    /// The Foundation stream read.
    public let innerStream: InputStream
    private let backing: FoundationBacking

    /// A stream that reads `inner`.
    /// - Parameters:
    ///   - inner: The Foundation stream, open or not.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    public init(wrapping inner: InputStream, closesInnerStream: Bool = true) {
        innerStream = inner
        backing = FoundationBacking(stream: inner, closesStream: closesInnerStream)
        super.init()
    }

    /// Opens the Foundation stream unless it is open already; throws its error if it fails.
    override public func openBacking() throws { try backing.open() }
    /// Closes the Foundation stream when this stream owns it (`closesInnerStream`).
    override public func closeBacking() throws { try backing.close() }

    /// Reads from the Foundation stream: its `0` is the end, its `-1` a ``FoundationStreamError``.
    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = innerStream.read(buffer, maxLength: maxLength)
        if count < 0 { throw byteStreamError(from: innerStream.streamError, operation: "read") }
        return count
    }

    /// `true` while this stream is open and the Foundation stream says it has bytes (or cannot
    /// tell without reading).
    override public var hasBytesAvailable: Bool {
        streamStatus == .open && innerStream.hasBytesAvailable
    }

    /// Lends the Foundation stream's buffer when it has one; valid until the next read.
    override public func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                   length: UnsafeMutablePointer<Int>) -> Bool {
        streamStatus == .open && innerStream.getBuffer(buffer, length: length)
    }

    /// `.fileCurrentOffset`: the Foundation stream's `fileCurrentOffsetKey` as an `Int64`;
    /// other keys are `nil`.
    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        guard key == .fileCurrentOffset else { return nil }
        return (innerStream.property(forKey: .fileCurrentOffsetKey) as? NSNumber)?.int64Value
    }

    /// Sets `.fileCurrentOffset` (an `Int64` or `Int`) as the Foundation stream's
    /// `fileCurrentOffsetKey`, which seeks; `false` for other keys or when it cannot seek.
    override public func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffset, let offset = value as? Int64 ?? (value as? Int).map(Int64.init) else {
            return false
        }
        guard innerStream.setProperty(NSNumber(value: offset), forKey: .fileCurrentOffsetKey) else { return false }
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }
}

/// Writes a Foundation `OutputStream` (`OutputStream(toMemory:)`, `OutputStream(url:append:)`,
/// `OutputStream(toBuffer:capacity:)`) as a `ByteOutputStream`, so a
/// `GzipOutputStream` or our conveniences can write into it.
///
/// Status: `ByteStream.open()` opens the Foundation stream unless it is open
/// already; if it then reports `.error`, this stream fails with its error. A Foundation write
/// of `-1` is an error: swift-corelibs-foundation reports a full `toBuffer:capacity:` stream
/// so, with `ENOMEM`. A Foundation stream that goes to `.atEnd` instead (Darwin's full buffer)
/// puts this stream at its end, and a further write fails with
/// `ByteStreamError.Code.noSpaceAvailable`.
///
/// Errors: a ``FoundationStreamError`` that keeps the Foundation stream's `streamError`
/// unchanged; over a ``BridgedOutputStream``, the bridged stream's own error.
///
/// Ownership: closing this stream closes the Foundation stream unless `closesInnerStream` is
/// `false`. Property `ByteStream.PropertyKey.dataWrittenToMemoryStream` gives
/// Foundation's `dataWrittenToMemoryStreamKey` as `Data`.
///
/// Blocks when the Foundation stream blocks. Thread safety: one thread at a time. Wraps
/// `OutputStream`'s `open()`, `write(_:maxLength:)`, `hasSpaceAvailable` and `close()`.
public final class FoundationOutputStream: ByteOutputStream {
    /// The Foundation stream written.
    public let innerStream: OutputStream
    private let backing: FoundationBacking

    /// A stream that writes `inner`; the parameters as for ``FoundationInputStream``.
    public init(wrapping inner: OutputStream, closesInnerStream: Bool = true) {
        innerStream = inner
        backing = FoundationBacking(stream: inner, closesStream: closesInnerStream)
        super.init()
    }

    /// Opens the Foundation stream unless it is open already; throws its error if it fails.
    override public func openBacking() throws { try backing.open() }
    /// Closes the Foundation stream when this stream owns it (`closesInnerStream`).
    override public func closeBacking() throws { try backing.close() }

    /// Writes to the Foundation stream: its count, or its `-1` as a ``FoundationStreamError``.
    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = innerStream.write(buffer, maxLength: maxLength)
        if count < 0 { throw byteStreamError(from: innerStream.streamError, operation: "write") }
        return count
    }

    /// `true` while this stream is open and the Foundation stream says it has space.
    override public var hasSpaceAvailable: Bool {
        streamStatus == .open && innerStream.hasSpaceAvailable
    }

    /// `true` once the Foundation stream is at its end (a fixed buffer is full).
    override public var isFull: Bool {
        innerStream.streamStatus == .atEnd
    }

    /// `.dataWrittenToMemoryStream`: the bytes of a Foundation memory stream as `Data`; other
    /// keys are `nil`.
    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        guard key == .dataWrittenToMemoryStream else { return nil }
        let value = innerStream.property(forKey: .dataWrittenToMemoryStreamKey)
        return (value as? Data) ?? (value as? NSData).map { Data($0) }
    }
}

/// The Foundation stream behind ``FoundationInputStream`` and ``FoundationOutputStream``:
/// opened unless already open, closed only when owned.
private struct FoundationBacking {
    let stream: Stream
    let closesStream: Bool

    /// Opens the stream unless it is open already; throws its error if it failed.
    func open() throws {
        if stream.streamStatus == .notOpen { stream.open() }
        if stream.streamStatus == .error { throw byteStreamError(from: stream.streamError, operation: "open") }
    }

    /// Closes an owned stream; throws an error it reports on closing, not one it had before.
    func close() throws {
        guard closesStream else { return }
        let failedBefore = stream.streamStatus == .error
        stream.close()
        if !failedBefore && stream.streamStatus == .error {
            throw byteStreamError(from: stream.streamError, operation: "close")
        }
    }
}

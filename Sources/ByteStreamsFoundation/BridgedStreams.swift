import ByteStreams
import Foundation

/// A Foundation `InputStream` that reads one of our `ByteInputStream`s, so code
/// that takes a Foundation stream can read gunzipped bytes (`BridgedInputStream(gzipInput)`).
/// "Bridged": a Foundation stream in front of a byte stream; ``FoundationInputStream`` is the
/// other way round.
///
/// Overrides everything a Foundation input stream is used through on swift-corelibs-foundation
/// (`open`, `close`, `read(_:maxLength:)`, `hasBytesAvailable`, `getBuffer(_:length:)`,
/// `streamStatus`, `streamError`, `property(forKey:)`, `setProperty(_:forKey:)`,
/// `schedule(in:forMode:)`, `remove(from:forMode:)`) and forwards it to ``byteStream``, whose
/// status it reports (the same eight states).
///
/// Errors: `streamError` is an `NSError` made from the byte stream's error: in
/// `NSPOSIXErrorDomain` with `errno` as its code for a system failure, as Foundation's own
/// file streams report, otherwise in the domain Swift gives the error's type
/// (`"GzipStreams.GzipError"`); its description is ours and `userInfo[NSUnderlyingErrorKey]`
/// is the original error (a ``FoundationStreamError`` gives back its Foundation error).
///
/// Events: unlike Foundation's own streams on Linux, a bridged stream scheduled on a run loop
/// tells its `delegate` (with itself as the stream) what the byte stream's delegate would
/// hear, in Cocoa's order (see ``ByteStreams/ByteStream/schedule(in:forMode:)``). The bridge
/// is the byte stream's delegate for that: do not set another one on ``byteStream``. Run-loop
/// scheduling needs swift-corelibs-foundation: on Apple platforms (built, never tested) the
/// bridge does not override `schedule(in:forMode:)`; use it polled.
///
/// Ownership: closing the bridge closes ``byteStream``. Blocks when the byte stream blocks.
/// Thread safety: one thread at a time, as for the byte stream.
public final class BridgedInputStream: InputStream {
    /// The stream read.
    public let byteStream: ByteInputStream
    private let forwarder: EventForwarder

    /// A Foundation input stream that reads `stream` (open or not).
    public init(_ stream: ByteInputStream) {
        byteStream = stream
        forwarder = EventForwarder()
        super.init(data: Data())
        forwarder.bridge = self
        stream.delegate = forwarder
    }

    /// Opens ``byteStream`` (`ByteStream.open()`).
    override public func open() { byteStream.open() }
    /// Closes ``byteStream`` (`ByteStream.close()`).
    override public func close() { byteStream.close() }

    /// Reads as `ByteInputStream.read(_:maxLength:)` does: `1...len` bytes, `0`
    /// at the end, `-1` on error with `streamError` set.
    override public func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        byteStream.read(buffer, maxLength: len)
    }

    /// Whether ``byteStream`` says a read may return bytes.
    override public var hasBytesAvailable: Bool { byteStream.hasBytesAvailable }

    /// Lends ``byteStream``'s buffer when it has one (a memory stream); `false` otherwise.
    override public func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                   length len: UnsafeMutablePointer<Int>) -> Bool {
        byteStream.getBuffer(buffer, length: len)
    }

    /// ``byteStream``'s status as Foundation's `Stream.Status`.
    override public var streamStatus: Stream.Status { byteStream.streamStatus.foundationStatus }
    /// ``byteStream``'s error as an `NSError`: `NSPOSIXErrorDomain` and `errno` for a system
    /// failure, with the byte stream's error under `NSUnderlyingErrorKey`.
    override public var streamError: (any Error)? { byteStream.streamError.map(foundationError(from:)) }

    #if canImport(Darwin)
    /// `fileCurrentOffsetKey` as an `NSNumber`; other keys are `nil`.
    override public func property(forKey key: Stream.PropertyKey) -> Any? { offsetProperty(forKey: key) }

    /// Sets `fileCurrentOffsetKey` (an `NSNumber`) when the byte stream can seek.
    override public func setProperty(_ property: Any?, forKey key: Stream.PropertyKey) -> Bool {
        setOffsetProperty(property, forKey: key)
    }
    #else
    /// `fileCurrentOffsetKey` as an `NSNumber`; other keys are `nil`.
    override public func property(forKey key: Stream.PropertyKey) -> AnyObject? { offsetProperty(forKey: key) }

    /// Sets `fileCurrentOffsetKey` (an `NSNumber`) when the byte stream can seek.
    override public func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool {
        setOffsetProperty(property, forKey: key)
    }

    /// Schedules ``byteStream`` on `aRunLoop` in `mode`; the bridge's delegate hears its events.
    override public func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        byteStream.schedule(in: aRunLoop, forMode: mode)
    }

    /// Removes ``byteStream`` from `aRunLoop` in `mode`.
    override public func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        byteStream.remove(from: aRunLoop, forMode: mode)
    }
    #endif

    private func offsetProperty(forKey key: Stream.PropertyKey) -> NSNumber? {
        guard key == .fileCurrentOffsetKey, let offset = byteStream.property(forKey: .fileCurrentOffset) as? Int64 else {
            return nil
        }
        return NSNumber(value: offset)
    }

    private func setOffsetProperty(_ property: Any?, forKey key: Stream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffsetKey, let number = property as? NSNumber else { return false }
        return byteStream.setProperty(number.int64Value, forKey: .fileCurrentOffset)
    }
}

/// A Foundation `OutputStream` that writes one of our `ByteOutputStream`s, so
/// code that takes a Foundation stream can write into a gzip stream
/// (`BridgedOutputStream(gzipOutput)`); ``FoundationOutputStream`` is the other way round.
///
/// Overrides `open`, `close`, `write(_:maxLength:)`, `hasSpaceAvailable`, `streamStatus`,
/// `streamError`, `property(forKey:)`, `schedule(in:forMode:)` and `remove(from:forMode:)`
/// and forwards them to ``byteStream``. Errors and events as for ``BridgedInputStream``.
///
/// `OutputStream.toMemory()` and `init(toMemory:)` (required of every subclass) give a bridge
/// over a new growing `MemoryOutputStream`, whose bytes
/// `property(forKey: .dataWrittenToMemoryStreamKey)` returns as `NSData`.
///
/// Ownership: closing the bridge closes ``byteStream`` (a gzip stream then writes its
/// trailer; check `streamStatus` and `streamError` after `close()`). Blocks when the byte
/// stream blocks. Thread safety: one thread at a time.
public final class BridgedOutputStream: OutputStream {
    /// The stream written.
    public let byteStream: ByteOutputStream
    private let forwarder: EventForwarder

    /// A Foundation output stream that writes `stream` (open or not).
    public init(_ stream: ByteOutputStream) {
        byteStream = stream
        forwarder = EventForwarder()
        super.init(toMemory: ())
        forwarder.bridge = self
        stream.delegate = forwarder
    }

    #if canImport(Darwin)
    /// A bridge over a new growing `MemoryOutputStream`.
    override public convenience init(toMemory: ()) {
        self.init(MemoryOutputStream())
    }
    #else
    /// A bridge over a new growing `MemoryOutputStream`.
    public required convenience init(toMemory: ()) {
        self.init(MemoryOutputStream())
    }
    #endif

    /// Opens ``byteStream`` (`ByteStream.open()`).
    override public func open() { byteStream.open() }
    /// Closes ``byteStream`` (`ByteStream.close()`).
    override public func close() { byteStream.close() }

    /// Writes as `ByteOutputStream.write(_:maxLength:)` does: `0...len` bytes
    /// taken, `-1` on error with `streamError` set.
    override public func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        byteStream.write(buffer, maxLength: len)
    }

    /// Whether ``byteStream`` says a write may take bytes.
    override public var hasSpaceAvailable: Bool { byteStream.hasSpaceAvailable }
    /// ``byteStream``'s status as Foundation's `Stream.Status`.
    override public var streamStatus: Stream.Status { byteStream.streamStatus.foundationStatus }
    /// ``byteStream``'s error as an `NSError`: `NSPOSIXErrorDomain` and `errno` for a system
    /// failure, with the byte stream's error under `NSUnderlyingErrorKey`.
    override public var streamError: (any Error)? { byteStream.streamError.map(foundationError(from:)) }

    #if canImport(Darwin)
    /// `dataWrittenToMemoryStreamKey` as `NSData` when the byte stream keeps its bytes in
    /// memory; other keys are `nil`.
    override public func property(forKey key: Stream.PropertyKey) -> Any? { memoryProperty(forKey: key) }

    /// Sets nothing: an output bridge has no settable property. Returns `false`.
    override public func setProperty(_ property: Any?, forKey key: Stream.PropertyKey) -> Bool { false }
    #else
    /// `dataWrittenToMemoryStreamKey` as `NSData` when the byte stream keeps its bytes in
    /// memory; other keys are `nil`.
    override public func property(forKey key: Stream.PropertyKey) -> AnyObject? { memoryProperty(forKey: key) }

    /// Sets nothing: an output bridge has no settable property. Returns `false`.
    override public func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }

    /// Schedules ``byteStream`` on `aRunLoop` in `mode`; the bridge's delegate hears its events.
    override public func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        byteStream.schedule(in: aRunLoop, forMode: mode)
    }

    /// Removes ``byteStream`` from `aRunLoop` in `mode`.
    override public func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        byteStream.remove(from: aRunLoop, forMode: mode)
    }
    #endif

    private func memoryProperty(forKey key: Stream.PropertyKey) -> NSData? {
        guard key == .dataWrittenToMemoryStreamKey,
              let data = byteStream.property(forKey: .dataWrittenToMemoryStream) as? Data else { return nil }
        return NSData(data: data)
    }
}

/// The byte stream's delegate on behalf of a bridge: tells the bridge's Foundation delegate,
/// with the bridge as the stream. Holds the bridge weakly (the bridge holds it).
private final class EventForwarder: ByteStreamDelegate {
    weak var bridge: Stream?

    func stream(_ stream: ByteStream, handle event: ByteStream.Event) {
        guard let bridge else { return }
        bridge.delegate?.stream(bridge, handle: Stream.Event(rawValue: event.rawValue))
    }
}

import Dispatch

/// The abstract base of every stream in gzstream, modelled on Cocoa's `NSStream`.
///
/// A stream starts in ``Status-swift.enum/notOpen``; ``open()`` moves it to ``Status-swift.enum/open``
/// (or ``Status-swift.enum/error`` when the backing cannot be opened), reads and writes pass through
/// ``Status-swift.enum/reading`` / ``Status-swift.enum/writing``, the end of input moves it to
/// ``Status-swift.enum/atEnd`` and ``close()`` to ``Status-swift.enum/closed``.
///
/// Errors are sticky: the first failure sets ``streamStatus`` to `.error`, stores the error in
/// ``streamError`` and posts ``Event/errorOccurred``; later reads and writes return `-1` and
/// leave the first error in place.
///
/// Events reach the ``delegate`` only while the stream is scheduled on a dispatch queue
/// (``schedule(on:)``), as in Cocoa events reach only streams scheduled on a run loop. Polling
/// (`hasBytesAvailable`, `read`, `write`) works whether or not the stream is scheduled.
///
/// Subclasses (the backings) override the `…Backing` hooks: ``openBacking()``, ``closeBacking()``,
/// and `readBytes`/`writeBytes` in ``ByteInputStream``/``ByteOutputStream``; the base class
/// does the status bookkeeping, error recording and event posting around them.
///
/// Thread safety: a stream is not thread-safe; use it from one thread or queue at a time.
open class ByteStream: @unchecked Sendable {
    /// The NSStream states (`NSStreamStatus`).
    public enum Status: Sendable, Equatable, CustomStringConvertible {
        case notOpen, opening, open, reading, writing, atEnd, closed, error

        public var description: String {
            switch self {
            case .notOpen: "not open"
            case .opening: "opening"
            case .open: "open"
            case .reading: "reading"
            case .writing: "writing"
            case .atEnd: "at end"
            case .closed: "closed"
            case .error: "error"
            }
        }
    }

    /// The events a stream posts to its delegate (`NSStreamEvent`).
    public struct Event: OptionSet, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        public static let openCompleted = Event(rawValue: 1 << 0)
        public static let hasBytesAvailable = Event(rawValue: 1 << 1)
        public static let hasSpaceAvailable = Event(rawValue: 1 << 2)
        public static let errorOccurred = Event(rawValue: 1 << 3)
        public static let endEncountered = Event(rawValue: 1 << 4)

        public var description: String {
            var names: [String] = []
            if contains(.openCompleted) { names.append("open completed") }
            if contains(.hasBytesAvailable) { names.append("has bytes available") }
            if contains(.hasSpaceAvailable) { names.append("has space available") }
            if contains(.errorOccurred) { names.append("error occurred") }
            if contains(.endEncountered) { names.append("end encountered") }
            return names.joined(separator: ", ")
        }
    }

    /// Keys for ``property(forKey:)`` and ``setProperty(_:forKey:)`` (`NSStream.PropertyKey`).
    public struct PropertyKey: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The bytes a growing ``MemoryOutputStream`` holds, as `Data`
        /// (`NSStreamDataWrittenToMemoryStreamKey`). Read-only.
        public static let dataWrittenToMemoryStream = PropertyKey(rawValue: "dataWrittenToMemoryStream")
        /// The current offset in bytes of a file stream, as `Int64`
        /// (`NSStreamFileCurrentOffsetKey`). Setting it seeks; it is `nil` for pipes and terminals.
        public static let fileCurrentOffset = PropertyKey(rawValue: "fileCurrentOffset")
    }

    /// The size in bytes of one chunk when a caller gives none: 4096.
    public static let defaultChunkSize = 4096
    /// The largest chunk or buffer size in bytes any stream accepts: 1 GiB (zlib and ISA-L count
    /// their input and output in 32 bits). A larger one is
    /// ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)``.
    public static let maximumChunkSize = 1 << 30
    /// The chunk sizes streams accept, in bytes: `1...maximumChunkSize`.
    package static let chunkSizes = 1...maximumChunkSize
    /// The most bytes a read-ahead or write-behind ring holds in all: 4 GiB (count × size),
    /// so that a count in range cannot ask for more memory than any machine here has.
    public static let maximumRingSize = 4 << 30

    /// The stream's state. See the type's documentation for the transitions.
    public private(set) var streamStatus: Status = .notOpen

    /// The first error the stream met, or `nil`. A ``ByteStreamError`` for I/O and misuse;
    /// wrapping streams (gzip) store their own error types here.
    public private(set) var streamError: (any Error)?

    /// Receives the stream's events while the stream is scheduled. Held weakly.
    public weak var delegate: (any ByteStreamDelegate)?

    /// Where events are delivered while the stream is scheduled; `nil` when it is not.
    public private(set) var scheduler: (any ByteStreamScheduler)?
    private var backingReleased = false

    public init() {}

    /// Opens the backing (a file, a buffer, an inner stream). Opening a stream that is not in
    /// `.notOpen` does nothing, as in Cocoa.
    ///
    /// Status: `.notOpen` → `.opening` → `.open`, or `.error` with ``streamError`` set when the
    /// backing cannot be opened. Posts ``Event/openCompleted`` then
    /// ``Event/hasBytesAvailable`` or ``Event/hasSpaceAvailable`` when scheduled.
    /// Blocks while the backing opens (for a file, `open(2)`).
    public final func open() {
        guard streamStatus == .notOpen else { return }
        streamError = nil  // a misuse before open (a read) is not the opened stream's error
        streamStatus = .opening
        do {
            try openBacking()
        } catch {
            fail(error)
            return
        }
        streamStatus = .open
        post(.openCompleted)
        postReadiness()
    }

    /// Closes the stream and releases its backing (descriptor, zlib state, inner stream as
    /// configured). Closing twice, or closing a stream that never opened, is harmless.
    ///
    /// Status: → `.closed`; or `.error` when releasing the backing failed (for example a
    /// gzip stream could not write its trailer) or an error was recorded earlier, so that the
    /// caller can tell a clean close from a failed one by ``streamStatus``/``streamError``.
    public final func close() {
        if !backingReleased {
            backingReleased = true
            // Also for a stream never opened: it may own a descriptor it was handed.
            do {
                try closeBacking()
            } catch {
                fail(error)
            }
        }
        if streamStatus != .error { streamStatus = .closed }
        scheduler = nil
    }

    /// Returns the value of a property, or `nil` when the stream has none for `key`.
    open func property(forKey key: PropertyKey) -> Any? { nil }

    /// Sets a property; returns `false` when the stream does not take `key` or the value.
    @discardableResult
    open func setProperty(_ value: Any?, forKey key: PropertyKey) -> Bool { false }

    // MARK: Scheduling

    /// Delivers the stream's events to ``delegate`` on `queue` from now on (Cocoa's
    /// `schedule(in:forMode:)`). A scheduled open stream is told at once that it has bytes or
    /// space available; after each read or write that leaves more to do, it is told again,
    /// so a delegate that reads or writes in its handler drives the stream to its end.
    public final func schedule(on queue: DispatchQueue) {
        schedule(on: DispatchQueueScheduler(queue: queue))
    }

    /// Delivers the stream's events to ``delegate`` through `scheduler` from now on (a run loop
    /// scheduler comes from the ByteStreamsFoundation module). Replaces any earlier scheduling:
    /// a stream has at most one scheduler.
    public final func schedule(on scheduler: any ByteStreamScheduler) {
        self.scheduler = scheduler
        if streamStatus == .open { postReadiness() }
    }

    /// Stops delivering events (Cocoa's `remove(from:forMode:)`).
    public final func removeFromSchedule() {
        scheduler = nil
    }

    // MARK: For subclasses

    /// Opens the backing. Called once by ``open()``; throw to put the stream in `.error`.
    open func openBacking() throws {}

    /// Releases the backing. Called once by ``close()``, also when the stream was never
    /// opened; a thrown error is recorded (the backing must still be released).
    open func closeBacking() throws {}

    /// Posts `event` to the delegate on the scheduled queue; does nothing when unscheduled.
    /// "Has bytes/space available" is dropped if, by delivery time, the stream is no longer open.
    public final func post(_ event: Event) {
        guard let scheduler else { return }
        scheduler.perform { [self] in
            if event == .hasBytesAvailable || event == .hasSpaceAvailable {
                guard self.streamStatus == .open, self.scheduler != nil else { return }
            }
            self.delegate?.stream(self, handle: event)
        }
    }

    /// Records the first error: status `.error`, ``streamError`` set, ``Event/errorOccurred``
    /// posted. Later calls keep the first error.
    public final func fail(_ error: any Error) {
        guard streamStatus != .error else { return }
        streamError = error
        streamStatus = .error
        post(.errorOccurred)
    }

    /// Records misuse (reading a closed stream) without changing a closed stream's status.
    final func reject(_ error: ByteStreamError) {
        if streamStatus == .closed || streamStatus == .notOpen {
            if streamError == nil { streamError = error }
        } else {
            fail(error)
        }
    }

    /// Sets the status unless the stream has failed. Package-wide for wrapping streams outside
    /// this module, whose seek makes a stream at its end readable again (`.atEnd` → `.open`).
    package final func setStatus(_ status: Status) {
        if streamStatus != .error { streamStatus = status }
    }

    /// Posts "has bytes available" or "has space available" to a scheduled stream.
    func postReadiness() {}
}

/// Receives a stream's events (Cocoa's `StreamDelegate`).
public protocol ByteStreamDelegate: AnyObject {
    /// Called on the queue the stream is scheduled on, once per event.
    func stream(_ stream: ByteStream, handle event: ByteStream.Event)
}

/// Runs a scheduled stream's event deliveries (the part of Cocoa's run loop a stream needs).
///
/// `perform` must run each block once, in the order given, one at a time, on the thread or
/// queue the stream is used from (streams are not thread-safe). ``DispatchQueueScheduler``
/// serves a serial dispatch queue; ByteStreamsFoundation serves a `RunLoop` and mode.
public protocol ByteStreamScheduler: Sendable {
    /// Runs `work` later, never inside the call.
    func perform(_ work: @escaping @Sendable () -> Void)
}

/// Delivers events with `queue.async`. Use a serial queue: the delegate calls of one stream
/// must not run at once.
public struct DispatchQueueScheduler: ByteStreamScheduler {
    public let queue: DispatchQueue

    public init(queue: DispatchQueue) { self.queue = queue }

    public func perform(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }
}

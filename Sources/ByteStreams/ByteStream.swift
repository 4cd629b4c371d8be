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
/// (``schedule(on:)-(DispatchQueue)``), as in Cocoa events reach only streams scheduled on a run loop. Polling
/// (`hasBytesAvailable`, `read`, `write`) works whether or not the stream is scheduled.
/// A scheduled stream over a pipe, FIFO, terminal or socket is driven by readiness and never
/// blocks; see ``schedule(on:)-(DispatchQueue)``.
///
/// Subclasses (the backings) override the `…Backing` hooks: ``openBacking()``, ``closeBacking()``,
/// and `readBytes`/`writeBytes` in ``ByteInputStream``/``ByteOutputStream``; the base class
/// does the status bookkeeping, error recording and event posting around them.
///
/// Thread safety: a stream is not thread-safe; use it from one thread or queue at a time. It is
/// not `Sendable`, so the compiler refuses to share one between tasks or capture it in a
/// `@Sendable` closure; move it to another task or thread instead (make it there, or pass it
/// as a `sending` parameter).
open class ByteStream {
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
    /// The events posted and not yet delivered, oldest first, kept by the stream (as Core
    /// Foundation keeps them) rather than by the scheduler: a stream rescheduled before they
    /// are delivered gets them, in order, on its new scheduler; a closed one never does.
    /// `generation` counts the schedulings, so that a delivery asked of an earlier scheduler
    /// does nothing.
    private struct PendingEvents: Sendable {
        var events: [Event] = []
        var generation: UInt64 = 0
    }

    /// Events are posted on the thread using the stream and delivered on the scheduler's, so
    /// a lock holds them. Made at the first scheduling; unscheduled streams never post.
    private var pending: QueueGuarded<PendingEvents>?
    private var backingReleased = false
    /// Set while a scheduled, open stream watches its pipe, FIFO, terminal or socket.
    private(set) var descriptorReadiness: DescriptorReadiness?

    /// A stream in ``Status-swift.enum/notOpen``, for subclasses (the backings) to call.
    public init() {}

    deinit {
        // Before the subclasses' stored properties (the backing that closes the descriptor).
        descriptorReadiness?.cancel()
    }

    /// Opens the backing (a file, a buffer, an inner stream). Opening a stream that is not in
    /// `.notOpen` does nothing, as in Cocoa.
    ///
    /// Status: `.notOpen` → `.opening` → `.open`, or `.error` with ``streamError`` set when the
    /// backing cannot be opened. Posts ``Event/openCompleted`` then
    /// ``Event/hasBytesAvailable`` or ``Event/hasSpaceAvailable`` when scheduled (for a stream
    /// driven by readiness, once the descriptor is ready).
    /// Blocks while the backing opens (for a file, `open(2)`; a socket is already connected).
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
        startReadiness()
    }

    /// Closes the stream and releases its backing (descriptor, zlib state, inner stream as
    /// configured). Closing twice, or closing a stream that never opened, is harmless.
    ///
    /// Status: → `.closed`; or `.error` when releasing the backing failed (for example a
    /// gzip stream could not write its trailer) or an error was recorded earlier, so that the
    /// caller can tell a clean close from a failed one by ``streamStatus``/``streamError``.
    ///
    /// A scheduled stream is first taken off its scheduler as by ``removeFromSchedule()``
    /// (its descriptor gets its blocking mode back before it is closed).
    public final func close() {
        stopReadiness()
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
        // Cocoa delivers nothing after close: events still pending are dropped.
        pending?.withLock { pending in
            pending.events.removeAll()
            pending.generation += 1
        }
        scheduler = nil
    }

    /// Returns the value of a property, or `nil` when the stream has none for `key`.
    open func property(forKey key: PropertyKey) -> Any? { nil }

    /// Sets a property; returns `false` when the stream does not take `key` or the value.
    @discardableResult
    open func setProperty(_ value: Any?, forKey key: PropertyKey) -> Bool { false }

    // MARK: Scheduling

    /// Delivers the stream's events to ``delegate`` on `queue` from now on (Cocoa's
    /// `schedule(in:forMode:)`). A scheduled open stream is told that it has bytes or space
    /// available; after each read or write that leaves more to do, it is told again, so a
    /// delegate that reads or writes in its handler drives the stream to its end. An output
    /// stream told it has space that writes nothing is not told again until it writes.
    ///
    /// Readiness: a stream over a pipe, FIFO, terminal or socket (``FileInputStream``,
    /// ``FileOutputStream``, ``SocketInputStream``, ``SocketOutputStream``) is told only when
    /// its next read or write will not block. While it is scheduled and open its descriptor is
    /// non-blocking (`O_NONBLOCK`, shared with every descriptor and process that shares the
    /// open file description, standard input and output included) and watched by one internal
    /// `poll(2)` loop, on a Dispatch queue, that serves every scheduled stream; no thread waits
    /// for one stream, and nothing polls while no scheduled stream is armed.
    /// ``removeFromSchedule()`` and ``ByteStream/close()`` stop watching and put the flag back
    /// as it was. Such a stream never blocks while scheduled: a read with nothing to read
    /// returns 0 and leaves the status `.open` (the end of the stream is status `.atEnd` and
    /// ``Event/endEncountered``, posted once); a write into a full pipe or socket buffer takes
    /// fewer bytes than offered, or none (it returns 0). ``ByteInputStream/hasBytesAvailable``
    /// and ``ByteOutputStream/hasSpaceAvailable`` then ask the descriptor (`poll(2)` with a zero
    /// timeout). Regular files, devices and memory streams are always ready: they are told
    /// after every read or write, as before. `GzipInputStream` and `GzipOutputStream` follow
    /// their inner stream (see their documentation); the other wrapping streams are told after
    /// every read or write and block as their inner stream does.
    ///
    /// The corresponding C functions are `fcntl(2)` and `poll(2)`.
    public final func schedule(on queue: DispatchQueue) {
        schedule(on: DispatchQueueScheduler(queue: queue))
    }

    /// Delivers the stream's events to ``delegate`` through `scheduler` from now on (a run loop
    /// scheduler comes from the ByteStreamsFoundation module). Replaces any earlier scheduling:
    /// a stream has at most one scheduler. Readiness works as for
    /// ``schedule(on:)-(DispatchQueue)``, whatever the scheduler.
    public final func schedule(on scheduler: any ByteStreamScheduler) {
        stopReadiness()
        if pending == nil { pending = QueueGuarded(PendingEvents(), label: "gzstream.stream.events") }
        let (generation, waiting) = pending!.withLock { pending in
            pending.generation += 1
            return (pending.generation, pending.events.count)
        }
        self.scheduler = scheduler
        // Events posted under the previous scheduling and not delivered yet come here, first.
        for _ in 0..<waiting { requestDelivery(on: scheduler, generation: generation) }
        if streamStatus == .open { startReadiness() }
    }

    /// Stops delivering events (Cocoa's `remove(from:forMode:)`). A stream driven by readiness
    /// stops watching its descriptor and gets its blocking mode back: reads and writes block
    /// again, as for a stream never scheduled.
    public final func removeFromSchedule() {
        stopReadiness()
        pending?.withLock { $0.generation += 1 }  // pending events wait for the next scheduling
        scheduler = nil
    }

    // MARK: Readiness

    /// The descriptor whose readiness drives the scheduled stream, or `nil`: overridden by the
    /// file and socket streams. Only pipes, FIFOs, terminals and sockets are watched.
    var readinessDescriptor: (descriptor: Int32, displayName: String)? { nil }

    /// The scheduled stream is open: watch its descriptor, have a wrapping stream follow its
    /// inner stream, or post the unconditional readiness event.
    private func startReadiness() {
        guard let scheduler else { return }
        if let following = self as? any FollowsInnerReadiness {
            following.startFollowingInnerStream()
            return
        }
        if descriptorReadiness == nil, let (descriptor, displayName) = readinessDescriptor,
           DescriptorReadiness.watches(descriptor) {
            let event: Event = self is ByteOutputStream ? .hasSpaceAvailable : .hasBytesAvailable
            do {
                descriptorReadiness = try DescriptorReadiness(
                    descriptor: descriptor, forWriting: self is ByteOutputStream, target: displayName
                ) { [target = ScheduledStream(weak: self)] readiness in
                    scheduler.perform { target.stream?.deliverReadiness(event, from: readiness) }
                }
            } catch {
                fail(error)
            }
            return
        }
        postReadiness()
    }

    /// Stops watching the descriptor (restoring its blocking mode) or the inner stream.
    private func stopReadiness() {
        if let readiness = descriptorReadiness {
            descriptorReadiness = nil
            readiness.cancel()
        }
        if scheduler != nil, let following = self as? any FollowsInnerReadiness {
            following.stopFollowingInnerStream()
        }
    }

    /// On the scheduler: `readiness` fired; tells the delegate unless the stream was
    /// unscheduled, rescheduled or left `.open` meanwhile.
    private func deliverReadiness(_ event: Event, from readiness: DescriptorReadiness) {
        guard descriptorReadiness === readiness, streamStatus == .open else { return }
        delegate?.stream(self, handle: event)
    }

    /// After a read or write of an open, scheduled stream driven by readiness: re-arm its
    /// descriptor's registration, or let a wrapping stream decide.
    /// - Returns: `false` when the stream is not driven by readiness (nothing was done).
    final func rearmReadiness(wouldBlock: Bool) -> Bool {
        guard scheduler != nil else { return false }
        if let descriptorReadiness {
            descriptorReadiness.arm()
            return true
        }
        if let following = self as? any FollowsInnerReadiness {
            following.rearmAfterTransfer(wouldBlock: wouldBlock)
            return true
        }
        return false
    }

    // MARK: For subclasses

    /// Opens the backing. Called once by ``ByteStream/open()``; throw to put the stream in `.error`.
    open func openBacking() throws {}

    /// Releases the backing. Called once by ``ByteStream/close()``, also when the stream was never
    /// opened; a thrown error is recorded (the backing must still be released).
    open func closeBacking() throws {}

    /// Posts `event` to the delegate through the scheduler; does nothing when unscheduled.
    /// Events are delivered in the order posted, also across a rescheduling; none is delivered
    /// after ``close()``, and "has bytes/space available" is dropped if, by delivery time, the
    /// stream is no longer open.
    public final func post(_ event: Event) {
        guard let scheduler, let pending else { return }
        let generation = pending.withLock { pending in
            pending.events.append(event)
            return pending.generation
        }
        requestDelivery(on: scheduler, generation: generation)
    }

    /// Asks `scheduler` to deliver the oldest pending event, unless the stream has been
    /// rescheduled, unscheduled or closed by then.
    private func requestDelivery(on scheduler: any ByteStreamScheduler, generation: UInt64) {
        scheduler.perform { [target = ScheduledStream(self)] in
            target.stream?.deliverPending(generation: generation)
        }
    }

    /// On the scheduler: delivers the oldest pending event, unless the stream has been
    /// rescheduled, unscheduled or closed since the delivery was asked for.
    private func deliverPending(generation: UInt64) {
        guard let event = pending?.withLock({ pending -> Event? in
            guard generation == pending.generation, !pending.events.isEmpty else { return nil }
            return pending.events.removeFirst()
        }) else { return }
        if event == .hasBytesAvailable || event == .hasSpaceAvailable {
            guard streamStatus == .open else { return }
        }
        delegate?.stream(self, handle: event)
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
/// queue the stream is used from (streams are not thread-safe). It is called from any thread:
/// the stream's own, and the internal readiness loop's for a stream over a pipe or socket (so a
/// run-loop scheduler must wake its run loop). ``DispatchQueueScheduler``
/// serves a serial dispatch queue; ByteStreamsFoundation serves a `RunLoop` and mode.
public protocol ByteStreamScheduler: Sendable {
    /// Runs `work` later, never inside the call.
    func perform(_ work: @escaping @Sendable () -> Void)
}

/// A stream handed to its scheduler's ``ByteStreamScheduler/perform(_:)``, strongly or weakly.
///
/// Unchecked `Sendable` on the scheduler contract, which the compiler cannot see: `perform`
/// runs its block on the thread or serial queue the stream is used from, one block at a time,
/// so the stream is still used from one thread at a time. The readiness loop's thread only
/// carries the reference on to `perform`; it never touches the stream.
package struct ScheduledStream<Stream: ByteStream>: @unchecked Sendable {
    private let strongStream: Stream?
    private weak var weakStream: Stream?

    /// Keeps `stream` alive until the block has run (an event posted is delivered).
    package init(_ stream: Stream) {
        strongStream = stream
        weakStream = stream
    }

    /// Lets `stream` go away meanwhile (work for a dropped stream is dropped).
    package init(weak stream: Stream) {
        strongStream = nil
        weakStream = stream
    }

    /// The stream, or `nil` when it was held weakly and has gone away.
    package var stream: Stream? { strongStream ?? weakStream }
}

/// Delivers events with `queue.async`. Use a serial queue: the delegate calls of one stream
/// must not run at once.
public struct DispatchQueueScheduler: ByteStreamScheduler {
    /// The queue the events are delivered on.
    public let queue: DispatchQueue

    /// A scheduler that delivers on `queue`, which should be serial.
    public init(queue: DispatchQueue) { self.queue = queue }

    /// Runs `work` on ``queue`` with `async`.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }
}

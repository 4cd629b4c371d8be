#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

// Readiness-driven scheduling: a scheduled, open stream over a pipe, FIFO, terminal or socket
// makes its descriptor non-blocking and watches it with a one-shot registration on one
// internal `poll(2)` loop; it fires once and is re-armed after the next read or write, so the
// delegate hears "has bytes/space available" once per read or write, and only when the next
// one will not block. Wrapping streams (gzip) follow their inner stream instead.
//
// Why not Dispatch read/write sources: on Linux (Swift 6.3) a resumed source did not fire
// again for readiness it had reported once (a pipe still holding bytes), and cancelling
// sources crashed libdispatch's event loop (`_dispatch_event_loop_drain`, a bad pointer) in
// about one run of this suite in three. `epoll(7)` is not in the Glibc module.

/// Thrown by a `readBytes` hook whose scheduled, non-blocking backing has nothing to read yet;
/// ``ByteInputStream/read(_:maxLength:)`` turns it into a return of 0 with the status left
/// `.open`. Package-wide so that wrapping streams can pass it on from their inner stream.
package struct WouldBlock: Error {
    package init() {}
}

/// A wrapping stream whose readiness follows its inner stream's while it is scheduled.
///
/// ``ByteStream`` calls these on the stream's scheduler, where the stream is used.
package protocol FollowsInnerReadiness: ByteStream {
    /// The stream is scheduled and open (or opening): schedule the inner stream on the same
    /// scheduler and watch its events. Called again after each `schedule(on:)`; must be
    /// idempotent.
    func startFollowingInnerStream()
    /// The stream is unscheduled or closing: take the inner stream off the scheduler.
    func stopFollowingInnerStream()
    /// After a read or write of the scheduled stream: post the next readiness event when the
    /// next read or write will not block, or wait for the inner stream to say so.
    /// `wouldBlock` is `true` after a read that found nothing or a write that took nothing.
    func rearmAfterTransfer(wouldBlock: Bool)
}

/// The events of an inner stream, delivered to a wrapping stream that schedules it: holds the
/// inner stream's own delegate aside until ``detach()`` puts it back.
package final class InnerStreamEvents: ByteStreamDelegate {
    private let inner: ByteStream
    private weak var savedDelegate: (any ByteStreamDelegate)?
    private let handler: (ByteStream.Event) -> Void

    /// Makes itself `inner`'s delegate and schedules `inner` on `scheduler`; `handler` gets
    /// each event on the scheduler. Hold the returned object: the delegate is held weakly.
    package init(inner: ByteStream, scheduler: any ByteStreamScheduler,
                 handler: @escaping (ByteStream.Event) -> Void) {
        self.inner = inner
        self.handler = handler
        savedDelegate = inner.delegate
        inner.delegate = self
        inner.schedule(on: scheduler)
    }

    /// Takes the inner stream off the scheduler and gives it its delegate back.
    package func detach() {
        inner.removeFromSchedule()
        if inner.delegate === self { inner.delegate = savedDelegate }
    }

    package func stream(_ stream: ByteStream, handle event: ByteStream.Event) {
        handler(event)
    }
}

/// Watches one descriptor of a scheduled stream with the ``ReadinessLoop``.
///
/// One-shot: once the descriptor is readable (or at its end, or failed) or writable, `onReady`
/// runs once on the loop's thread, and not again until ``arm()``; arming a descriptor that is
/// ready already reports it at once. ``cancel()`` stops it for good and gives the descriptor
/// its blocking mode back; the stream may then close the descriptor.
/// Thread safety: `arm` and `cancel` may be called from any thread. `Sendable` is unchecked
/// for `token`, written once in `init` (the loop's handler holds the object weakly and never
/// reads it) and constant after.
final class DescriptorReadiness: @unchecked Sendable {
    let descriptor: Int32
    private let forWriting: Bool
    /// The loop's token, set once in `init`.
    private var token: UInt64 = 0
    private let cancelled = Atomic<Bool>(false)

    /// Whether a scheduled stream over `descriptor` is driven by readiness: a pipe, FIFO,
    /// socket or terminal. Regular files, block devices and other character devices
    /// (`/dev/null`) are always ready and keep the unconditional events.
    /// The corresponding C functions are `fstat(2)` and `isatty(3)`.
    static func watches(_ descriptor: Int32) -> Bool {
        guard descriptor >= 0 else { return false }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        switch status.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK: return true
        case S_IFCHR: return isatty(descriptor) == 1
        default: return false
        }
    }

    /// Makes `descriptor` non-blocking and starts watching it, armed; `onReady` runs on the
    /// loop's thread each time it fires (so it must only hand work on).
    /// - Throws: ``ByteStreamError`` with operation `"schedule"` and `errno` when `fcntl(2)`
    ///   fails.
    init(descriptor: Int32, forWriting: Bool, target: String,
         onReady: @escaping @Sendable (DescriptorReadiness) -> Void) throws {
        try NonBlockingDescriptors.acquire(descriptor, target: target)
        self.descriptor = descriptor
        self.forWriting = forWriting
        token = ReadinessLoop.shared.add(descriptor, events: Int16(forWriting ? POLLOUT : POLLIN)) { [weak self] in
            if let self { onReady(self) }
        }
    }

    deinit {
        cancel()
    }

    /// Lets the registration fire once more: at once when the descriptor is ready now, else
    /// when it becomes ready.
    func arm() {
        ReadinessLoop.shared.arm(token)
    }

    /// Stops watching (an event already on its way is dropped by the stream, which no longer
    /// holds this registration) and restores the descriptor's blocking mode once no other
    /// stream over it is scheduled. Later calls do nothing.
    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        ReadinessLoop.shared.remove(token)
        NonBlockingDescriptors.release(descriptor)
    }

    /// Whether the next read (or write) will not block: `poll(2)` with a zero timeout. The end
    /// of the input and an error count as ready (the read returns 0 or fails at once).
    var isReady: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
        // An error counts as ready: the read or write then reports it.
        return SystemCalls.retryingOnInterrupt { poll(&entry, 1, 0) } != 0
    }
}

/// The one thread that waits for every scheduled descriptor: a `poll(2)` loop on a Dispatch
/// queue of its own, started with the first registration and never stopped. It polls the armed
/// registrations and a wake-up pipe; a registration that fires is disarmed, and its handler
/// runs. Adding, arming or removing a registration updates the set and writes a byte to the
/// pipe, so the loop polls the new set. An event whose registration was removed meanwhile is
/// dropped. The set is behind a ``QueueGuarded``, so the loop is `Sendable` by construction.
///
/// The corresponding C functions are `pipe(2)`, `poll(2)`, `read(2)` and `write(2)`.
final class ReadinessLoop: Sendable {
    static let shared = ReadinessLoop()

    private struct Registration {
        var descriptor: Int32
        var events: Int16
        var armed: Bool
        var handler: @Sendable () -> Void
    }

    private struct State {
        var registrations: [UInt64: Registration] = [:]
        var lastToken: UInt64 = 0
    }

    private let state = QueueGuarded(State(), label: "gzstream.readiness.state")
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private init() {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "pipe failed: errno \(errno)")
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        DispatchQueue(label: "gzstream.readiness").async { [self] in run() }
    }

    /// Registers `descriptor`, armed, for `events` (`POLLIN` or `POLLOUT`).
    /// - Returns: The registration's token.
    func add(_ descriptor: Int32, events: Int16, handler: @escaping @Sendable () -> Void) -> UInt64 {
        let token = state.withLock { state -> UInt64 in
            state.lastToken += 1
            state.registrations[state.lastToken] = Registration(descriptor: descriptor, events: events, armed: true,
                                                                handler: handler)
            return state.lastToken
        }
        wake()
        return token
    }

    func arm(_ token: UInt64) {
        let changed = state.withLock { state -> Bool in
            guard let registration = state.registrations[token], !registration.armed else { return false }
            state.registrations[token]!.armed = true
            return true
        }
        if changed { wake() }
    }

    func remove(_ token: UInt64) {
        if state.withLock({ $0.registrations.removeValue(forKey: token) }) != nil { wake() }
    }


    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already wakes the loop
    }

    /// Polls the armed registrations forever and runs the handler of each that fires.
    private func run() {
        var byte = [UInt8](repeating: 0, count: 256)
        while true {
            let watched = state.withLock { state in
                state.registrations.compactMap { token, registration in
                    registration.armed ? (token, pollfd(fd: registration.descriptor, events: registration.events, revents: 0)) : nil
                }
            }
            var entries = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)] + watched.map(\.1)
            let count = poll(&entries, nfds_t(entries.count), -1)
            if count < 0 {
                precondition(errno == EINTR, "poll failed: errno \(errno)")
                continue
            }
            if entries[0].revents != 0 {
                while read(wakeRead, &byte, byte.count) > 0 {}
            }
            for (index, (token, _)) in watched.enumerated() where entries[index + 1].revents != 0 {
                let handler = state.withLock { state -> (@Sendable () -> Void)? in
                    guard state.registrations[token]?.armed == true else { return nil }
                    state.registrations[token]!.armed = false
                    return state.registrations[token]!.handler
                }
                handler?()
            }
        }
    }
}

/// The descriptors made non-blocking for scheduled streams, counted per descriptor number:
/// the first stream scheduled over a descriptor sets `O_NONBLOCK`, the last one unscheduled
/// puts the flag back as it was. Two streams over one descriptor (a socket's input and output,
/// or a terminal read and written through descriptor 0) thus share one setting. `O_NONBLOCK`
/// belongs to the open file description, which `dup(2)` and `fork(2)` share with other
/// descriptors and processes (standard input and output usually are): while a stream over it
/// is scheduled, they see it non-blocking too.
enum NonBlockingDescriptors {
    private struct Entry {
        var users: Int
        var wasNonBlocking: Bool
    }

    private static let entries = QueueGuarded([Int32: Entry](), label: "gzstream.readiness.descriptors")

    /// Counts one more scheduled stream over `descriptor`, setting `O_NONBLOCK` for the first.
    /// The corresponding C function is `fcntl(2)` (`F_GETFL`, `F_SETFL`).
    static func acquire(_ descriptor: Int32, target: String) throws {
        try entries.withLock { entries in
            if entries[descriptor] != nil {
                entries[descriptor]!.users += 1
                return
            }
            let flags = fcntl(descriptor, F_GETFL)
            guard flags >= 0, flags & O_NONBLOCK != 0 || fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
                throw ByteStreamError(.system(errno: errno), operation: "schedule", target: target)
            }
            entries[descriptor] = Entry(users: 1, wasNonBlocking: flags & O_NONBLOCK != 0)
        }
    }

    /// Counts one scheduled stream less; the last one restores `O_NONBLOCK` as it was.
    static func release(_ descriptor: Int32) {
        entries.withLock { entries in
            guard var entry = entries[descriptor] else { return }
            entry.users -= 1
            if entry.users > 0 {
                entries[descriptor] = entry
                return
            }
            entries[descriptor] = nil
            let flags = fcntl(descriptor, F_GETFL)
            if flags >= 0, !entry.wasNonBlocking { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        }
    }

    /// Whether `descriptor` has `O_NONBLOCK` set now. For tests.
    static func isNonBlocking(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        return flags >= 0 && flags & O_NONBLOCK != 0
    }
}

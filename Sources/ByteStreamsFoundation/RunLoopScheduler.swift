import ByteStreams
import Foundation

// Run-loop scheduling is built on swift-corelibs-foundation only (Linux, where it is tested):
// Apple's Foundation has no `RunLoop._Source`, and a port to `CFRunLoopSource` has never been
// run, so on Apple platforms this file compiles to nothing and streams are scheduled on
// dispatch queues (`schedule(on:)`) instead.
#if !canImport(Darwin)

// How a block from another thread reaches a run loop on swift-corelibs-foundation (checked on
// Swift 6.3.1, Linux):
// - `RunLoop.perform(inModes:block:)` queues the block but does not wake a loop asleep in
//   `run(mode:before:)`: the block waited for the loop's deadline.
// - Adding a `Timer` whose fire date has passed, or moving a timer's fire date to now, wakes
//   the loop at once, but a timer is not an input source: `run(mode:before:)` does not return after it fires, so the classic
//   `while !done && runLoop.run(mode: .default, before: .distantFuture) {}` never ends, and a
//   mode that holds nothing makes `run(mode:before:)` return `false` at once.
// - A run-loop source (`RunLoop._Source`, the one corelibs Foundation exports for XCTest) keeps
//   the mode alive while the stream is scheduled and makes `run(mode:before:)` return after it
//   fired, as a scheduled `NSStream` does on Darwin; signalling it does not wake the loop.
// So the scheduler signals a source and brings a timer's fire date to now to wake the loop.
// `RunLoop._Source` is documented there as "SPI for XCTest … do not rely on their contracts or
// continued existence"; it is used only in this file.

/// Delivers a stream's events on a Foundation `RunLoop`, in the modes the stream is scheduled
/// in: what ``ByteStreams/ByteStream/schedule(in:forMode:)`` installs (Cocoa's
/// `NSStream.schedule(in:forMode:)`).
///
/// Blocks handed to ``perform(_:)`` run once each, in the order given, one at a time, on the
/// run loop's thread, while that thread runs the loop in one of ``modes``. Each batch of
/// deliveries is one run-loop source firing, so `run(mode:before:)` returns after it, as it does
/// after a Cocoa stream event. A delegate that runs the loop again inside its handler (a
/// nested `run`) gets no further event until the handler returns.
///
/// While scheduled, the scheduler keeps a source in each of its modes, so
/// `run(mode:before:)` sleeps rather than returning `false` for an empty mode. When the stream
/// drops the scheduler (`ByteStream.removeFromSchedule()`, `close()`, another
/// scheduling), the source leaves the run loop the next time the loop runs in one of its modes,
/// after the blocks still queued have run (a loop that never runs again keeps it).
///
/// Thread safety: ``perform(_:)`` may be called from any thread; ``add(_:)``, ``remove(_:)``
/// and ``modes`` too. Built with swift-corelibs-foundation only (Linux), not on Apple
/// platforms, whose Foundation has no `RunLoop._Source`. Wraps Core Foundation's `CFRunLoopSourceSignal` (through
/// `RunLoop._Source`) and `CFRunLoopTimerSetNextFireDate` (through `Timer.fireDate`).
/// `Sendable` is unchecked only for the run loop and its source, which are not `Sendable` but
/// are used from other threads only through those thread-safe calls; the modes are behind a lock.
public final class RunLoopScheduler: ByteStreamScheduler, @unchecked Sendable {
    // `RunLoop` is not `Sendable`, but the calls made on it from other threads here (adding
    // and removing timers and sources) are the thread-safe `CFRunLoop` ones.
    nonisolated(unsafe) private let loop: RunLoop
    nonisolated(unsafe) private let source: DeliverySource  // thread-safe: see DeliverySource
    private let scheduledModes: QueueGuarded<Set<RunLoop.Mode>>

    /// A scheduler for `runLoop` in `mode`.
    public init(runLoop: RunLoop, mode: RunLoop.Mode) {
        loop = runLoop
        source = DeliverySource(loop: runLoop)
        scheduledModes = QueueGuarded([mode], label: "gzstream.run-loop.modes")
        source.add(mode)
    }

    deinit {
        source.retire()
    }

    /// The run loop the events are delivered on.
    public var runLoop: RunLoop { loop }

    /// The modes the events are delivered in.
    public var modes: Set<RunLoop.Mode> { scheduledModes.withLock { $0 } }

    /// Delivers in `mode` too (Cocoa allows a stream in several modes of one run loop).
    public func add(_ mode: RunLoop.Mode) {
        if scheduledModes.withLock({ $0.insert(mode).inserted }) { source.add(mode) }
    }

    /// Stops delivering in `mode`. The last mode stays until the scheduler is dropped, so that
    /// the blocks already queued still run.
    /// - Returns: `true` when no mode is left (the caller then drops the scheduler).
    @discardableResult
    public func remove(_ mode: RunLoop.Mode) -> Bool {
        let (removed, empty) = scheduledModes.withLock { ($0.remove(mode) != nil, $0.isEmpty) }
        if removed && !empty { source.remove(mode) }
        return empty
    }

    /// Queues `work` for the run loop's thread and wakes the loop; never runs it inside the call.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        source.enqueue(work)
    }
}

/// The run-loop source that runs the queued blocks. It holds the queue itself and outlives
/// its scheduler until the loop's thread has run what was queued and taken it out of the loop:
/// Core Foundation keeps only an unretained pointer to it, and another thread may be inside
/// ``perform()`` when the scheduler goes away.
///
/// Thread safety: its state is behind a lock, and the run-loop calls it makes from other
/// threads are the thread-safe `CFRunLoop` ones (`RunLoop._Source` is marked not `Sendable`).
private final class DeliverySource: RunLoop._Source {
    private struct State {
        var blocks: [@Sendable () -> Void] = []
        var modes: Set<RunLoop.Mode> = []
        var delivering = false
        /// How many (run loop, mode) places hold the source: Core Foundation's schedule
        /// callbacks less its cancel callbacks (`.common` counts once per common mode).
        var placements = 0
        /// Set when the scheduler is gone; the source then holds a reference to itself
        /// (`Unmanaged.passRetained`) until it is out of every place: taken out by the loop's
        /// thread, or by Core Foundation when the thread ends and its run loop goes.
        var retiring = false
    }

    nonisolated(unsafe) private let loop: RunLoop
    /// Wakes the loop: a repeating timer that never comes due by itself (once in 30 years),
    /// whose fire date is set to now. One per source, not one per wake-up, because
    /// swift-corelibs-foundation never frees a `Timer` made with a block (its init retains the
    /// timer for Core Foundation's context without a release callback): this leaks one
    /// timer per scheduling.
    nonisolated(unsafe) private let wake = Timer(fire: .distantFuture, interval: 1e9, repeats: true) { _ in }
    private let state = QueueGuarded(State(), label: "gzstream.run-loop.source")

    init(loop: RunLoop) {
        self.loop = loop
        super.init()
    }

    func add(_ mode: RunLoop.Mode) {
        state.withLock { _ = $0.modes.insert(mode) }
        loop._add(self, forMode: mode)
        loop.add(wake, forMode: mode)
    }

    /// Takes the source out of `mode`. The wake timer stays there (a run loop cannot take a
    /// timer out of one mode) until the source leaves the loop; it only wakes the loop.
    func remove(_ mode: RunLoop.Mode) {
        state.withLock { _ = $0.modes.remove(mode) }
        loop._remove(self, for: mode)
    }

    /// Adds `work` and, when the queue was empty, signals the source and wakes the loop.
    func enqueue(_ work: @escaping @Sendable () -> Void) {
        let first = state.withLock { state in
            state.blocks.append(work)
            return state.blocks.count == 1 && !state.delivering
        }
        if first { signalAndWake() }
    }

    /// Asks the loop's thread to run what is queued, then to take the source out of the loop.
    func retire() {
        _ = Unmanaged.passRetained(self)
        let placed = state.withLock { state in
            state.retiring = state.placements > 0
            return state.retiring
        }
        if placed {
            signalAndWake()
        } else {
            Unmanaged.passUnretained(self).release()
        }
    }

    override func didSchedule(in mode: RunLoop.Mode) {
        state.withLock { $0.placements += 1 }
    }

    /// Called when the source leaves a mode: removed here, or its run loop is going away.
    override func didCancel(in mode: RunLoop.Mode) {
        let last = state.withLock { state in
            state.placements -= 1
            guard state.placements == 0, state.retiring else { return false }
            state.retiring = false
            return true
        }
        if last { Unmanaged.passUnretained(self).release() }
    }

    /// Runs the blocks queued so far, in order. Blocks they queue run on the next firing, so the
    /// loop's other sources, timers and modes get their turn.
    override func perform() {
        let batch: [@Sendable () -> Void]? = state.withLock { state in
            if state.delivering { return nil }  // a nested run inside a delegate call
            state.delivering = true
            defer { state.blocks.removeAll() }
            return state.blocks
        }
        guard let batch else { return }
        for work in batch { work() }
        let (more, leaving): (Bool, Set<RunLoop.Mode>?) = state.withLock { state in
            state.delivering = false
            if !state.blocks.isEmpty { return (true, nil) }
            return (false, state.retiring ? state.modes : nil)
        }
        if more { signal() }
        if let leaving {
            // The last removal's cancel callback releases the source; the caller of `perform`
            // holds it until this returns.
            for mode in leaving { loop._remove(self, for: mode) }
            invalidate()
            wake.invalidate()
        }
    }

    /// Signals the source, and wakes the loop by bringing the wake timer's fire date to now
    /// (signalling a source does not wake a sleeping loop). Also from the loop's own thread:
    /// telling the threads apart would need `RunLoop.current`, which makes a run loop for every
    /// thread that asks; blocks queued during a delivery need no wake-up (the source is
    /// signalled again when the delivery ends). The corresponding Core Foundation functions are
    /// `CFRunLoopSourceSignal` and `CFRunLoopTimerSetNextFireDate`.
    private func signalAndWake() {
        signal()
        wake.fireDate = Date()
    }
}

extension ByteStream {
    /// Delivers the stream's events to its delegate on `runLoop` while it runs in `mode`
    /// (Cocoa's `schedule(in:forMode:)`).
    ///
    /// A stream scheduled on `runLoop` already is scheduled in `mode` too; a stream scheduled
    /// elsewhere (a dispatch queue, another run loop) is moved here, as a stream has one
    /// scheduler. Events then follow `schedule(on:)` with a scheduler:
    /// an open stream is told at once that it has bytes or space, and again after each read or
    /// write that leaves more to do. The delegate runs on the run loop's thread, so use the
    /// stream on that thread (streams are not thread-safe).
    ///
    /// Does not block. Wraps ``RunLoopScheduler`` (a `CFRunLoopSource` in each mode).
    public func schedule(in runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        if let current = scheduler as? RunLoopScheduler, current.runLoop === runLoop {
            current.add(mode)
        } else {
            schedule(on: RunLoopScheduler(runLoop: runLoop, mode: mode))
        }
    }

    /// Stops delivering events on `runLoop` in `mode` (Cocoa's `remove(from:forMode:)`).
    ///
    /// Does nothing unless the stream is scheduled on `runLoop` in `mode`. When that was the
    /// last mode, the stream is no longer scheduled (`ByteStream.scheduler` is `nil`) and
    /// its delegate hears nothing more: "has bytes/space available" already queued is dropped;
    /// an end or error event queued before the call is still delivered, as with a queue.
    /// Does not block.
    public func remove(from runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        guard let current = scheduler as? RunLoopScheduler, current.runLoop === runLoop,
              current.modes.contains(mode) else { return }
        if current.remove(mode) { removeFromSchedule() }
    }
}

#endif

import ByteStreams
import ByteStreamsFoundation
import Dispatch
import Foundation
import Testing
import TestSupport

// Helpers for the ByteStreamsFoundation tests: a run loop on its own thread, a delegate that
// records and drives. Seeded data comes from TestSupport.

/// How long a test waits for another thread before it fails instead of hanging.
let waitLimit: DispatchTimeInterval = .seconds(10)

/// A Foundation `Thread` that runs its run loop in `mode`, sleeping in
/// `run(mode:before:)` with an hour's deadline: it wakes only when something wakes it.
///
/// ``sync(_:)`` runs a block on the loop's thread (through a ``RunLoopScheduler`` of its own,
/// which also keeps the mode from being empty) and waits for it, like `DispatchQueue.sync`;
/// ``stop()`` ends the thread. Every wait is bounded by `waitLimit`; the loop runs at most
/// 100 000 times.
final class RunLoopThread: @unchecked Sendable {
    private struct State {
        var loop: RunLoop?
        var thread: ObjectIdentifier?
        var control: RunLoopScheduler?
        var stopping = false
        var returns = 0
    }

    let mode: RunLoop.Mode
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let state = Locked(State())

    init(mode: RunLoop.Mode = .default) {
        self.mode = mode
        let thread = Thread { [state, started, finished, mode] in
            let loop = RunLoop.current
            state.update {
                $0.loop = loop
                $0.thread = ObjectIdentifier(Thread.current)
                $0.control = RunLoopScheduler(runLoop: loop, mode: mode)
            }
            started.signal()
            var runs = 0
            while !state.value.stopping && runs < 100_000 {
                _ = loop.run(mode: mode, before: Date(timeIntervalSinceNow: 3600))
                runs += 1
                state.update { $0.returns += 1 }
            }
            state.update { $0.control = nil }
            finished.signal()
        }
        thread.start()
        precondition(started.wait(timeout: .now() + waitLimit) == .success, "the run loop thread did not start")
    }

    var runLoop: RunLoop { state.value.loop! }
    /// The loop's thread, as `ObjectIdentifier(Thread.current)` gives it there.
    var thread: ObjectIdentifier { state.value.thread! }
    /// How many times `run(mode:before:)` has returned.
    var returns: Int { state.value.returns }

    /// Runs `body` on the loop's thread and returns its result; `nil` when the loop did not
    /// run it within `waitLimit`.
    ///
    /// Like `DispatchQueue.sync`, `body` need not be `Sendable`: the caller waits while it
    /// runs (it uses the streams scheduled on the loop, which live on the loop's thread). A
    /// body the loop did not run within `waitLimit` never runs (the test fails then).
    @discardableResult
    func sync<T: Sendable>(_ body: @escaping () -> T) -> T? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<T?>(nil)
        nonisolated(unsafe) let body = body
        state.value.control?.perform {
            result.value = body()
            done.signal()
        }
        guard done.wait(timeout: .now() + waitLimit) == .success else { return nil }
        return result.value
    }

    /// On the loop's thread: gives `stream` its delegate, schedules it on the loop in ``mode``
    /// and opens it.
    func scheduleAndOpen(_ stream: ByteStream, delegate: RecordingDelegate) {
        sync { [mode] in
            stream.delegate = delegate
            stream.schedule(in: RunLoop.current, forMode: mode)
            stream.open()
        }
    }

    /// Ends the loop's thread; `false` when it did not end within `waitLimit`.
    @discardableResult
    func stop() -> Bool {
        state.value.control?.perform { [state] in state.update { $0.stopping = true } }
        return finished.wait(timeout: .now() + waitLimit) == .success
    }
}

/// Schedules `input`, which holds the 10,000 bytes `content`, on `loop` with a delegate that
/// reads 4096 bytes a time, waits for its end and closes it on the loop's thread; then expects
/// `content`, and every event on the loop's thread: readiness, then after reads of 4096, 4096
/// and 1808 bytes; the read of 0 is the end.
func expectFourReadsOnLoop(_ input: ByteInputStream, loop: RunLoopThread, content: [UInt8],
                           sourceLocation: SourceLocation = #_sourceLocation) {
    let delegate = RecordingDelegate(readLength: 4096)
    loop.scheduleAndOpen(input, delegate: delegate)
    #expect(delegate.waitUntilEnded(), sourceLocation: sourceLocation)
    loop.sync { input.close() }
    #expect(delegate.bytesRead == content, sourceLocation: sourceLocation)
    #expect(delegate.events == [.openCompleted] + Array(repeating: .hasBytesAvailable, count: 4) + [.endEncountered],
            sourceLocation: sourceLocation)
    #expect(delegate.threads.allSatisfy { $0 == loop.thread }, sourceLocation: sourceLocation)
    withExtendedLifetime(delegate) {}
}

/// A delegate that records each event and the thread it came on, reads or writes in its
/// handler when asked to, and signals when the stream ends or fails.
final class RecordingDelegate: ScriptedDelegate, ByteStreamDelegate, @unchecked Sendable {
    private let recorded = Locked<(events: [ByteStream.Event], threads: [ObjectIdentifier], bytes: [UInt8])>(([], [], []))
    private let ended = DispatchSemaphore(value: 0)
    private var sourceOffset = 0

    var events: [ByteStream.Event] { recorded.value.events }
    /// The thread of each event, as `ObjectIdentifier(Thread.current)`.
    var threads: [ObjectIdentifier] { recorded.value.threads }
    var bytesRead: [UInt8] { recorded.value.bytes }

    func stream(_ stream: ByteStream, handle event: ByteStream.Event) {
        recorded.update { $0.events.append(event); $0.threads.append(ObjectIdentifier(Thread.current)) }
        if event == .hasBytesAvailable, let readLength, let input = stream as? ByteInputStream {
            var chunk = [UInt8](repeating: 0, count: readLength)
            let count = input.read(&chunk, maxLength: readLength)
            if count > 0 { recorded.update { $0.bytes += chunk[0..<count] } }
        }
        if event == .hasSpaceAvailable, writeLength != nil, let output = stream as? ByteOutputStream {
            let slice = nextSlice(after: sourceOffset)
            let count = slice.isEmpty ? 0 : output.write(slice, maxLength: slice.count)
            if count > 0 { sourceOffset += count }
        }
        if event == .endEncountered || event == .errorOccurred { ended.signal() }
    }

    /// Waits until the stream reports its end or an error; `false` after `waitLimit`.
    func waitUntilEnded() -> Bool {
        ended.wait(timeout: .now() + waitLimit) == .success
    }
}

/// A Foundation stream delegate that records events.
final class FoundationRecorder: NSObject, StreamDelegate, @unchecked Sendable {
    private let recorded = Locked<[(Stream.Event, ObjectIdentifier)]>([])
    private let ended = DispatchSemaphore(value: 0)
    var readLength = 0

    var events: [Stream.Event] { recorded.value.map(\.0) }
    var streams: [ObjectIdentifier] { recorded.value.map(\.1) }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        recorded.update { $0.append((eventCode, ObjectIdentifier(aStream))) }
        if eventCode == .hasBytesAvailable, readLength > 0, let input = aStream as? InputStream {
            var chunk = [UInt8](repeating: 0, count: readLength)
            _ = input.read(&chunk, maxLength: readLength)
        }
        if eventCode == .endEncountered || eventCode == .errorOccurred { ended.signal() }
    }

    func waitUntilEnded() -> Bool {
        ended.wait(timeout: .now() + waitLimit) == .success
    }
}


/// The scheduler of a stream used from Swift concurrency: its work runs in the task that uses
/// the stream, when that task next reads or writes it, instead of on a queue.
///
/// The readiness loop (``ReadinessLoop``) and the stream itself hand work here from any thread
/// with ``perform(_:)``, which only queues it and wakes the task if it is suspended in
/// ``waitForWork()``. The task runs the queued work with ``runQueued()`` before each read or
/// write, so the stream, a wrapping stream (gzip) and its inner stream are still used from one
/// thread at a time, the task's, and no thread waits for a descriptor: a task with nothing to
/// read or no room to write is suspended, not blocked.
///
/// Thread safety: `perform` from any thread; `runQueued` and `waitForWork` from the one task
/// that uses the streams scheduled here. The queue and the suspended task are behind a
/// `QueueGuarded`, the one lock type (a Dispatch queue, which the thread sanitizer sees).
final class AwaitingScheduler: ByteStreamScheduler {
    private struct State: Sendable {
        var work: [@Sendable () -> Void] = []
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = QueueGuarded(State(), label: "gzstream.async.scheduler")

    init() {}

    func perform(_ work: @escaping @Sendable () -> Void) {
        let waiter = state.withLock { state in
            state.work.append(work)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Runs the queued work in order on the caller's thread, including work it queues itself.
    func runQueued() {
        while true {
            let batch = state.withLock { state in
                defer { state.work.removeAll(keepingCapacity: true) }
                return state.work
            }
            if batch.isEmpty { return }
            for work in batch { work() }
        }
    }

    /// Suspends the task until work is queued, or returns at once when some is.
    /// - Throws: `CancellationError` when the task is cancelled, before or while it waits.
    func waitForWork() async throws {
        try Task.checkCancellation()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if !state.work.isEmpty || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        try Task.checkCancellation()
    }
}

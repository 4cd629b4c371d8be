import Dispatch
import Synchronization

/// Runs jobs on a fixed set of workers and hands their results back, on the submitting thread,
/// in the order the jobs were submitted: the parallel part of pigz's design.
///
/// Each worker is a serial Dispatch queue with a state of its own (a deflater, say) that only
/// that queue touches; jobs go to the workers in turn. At most `maximumInFlight` jobs are
/// submitted and not yet collected: ``submit(_:deliver:)`` collects the oldest first when the
/// window is full, so memory is bounded by the window, whatever the input size or the speed of
/// whoever takes the results.
///
/// Not thread-safe: one thread submits and collects. ``cancelAndJoin()`` (or ``finish(deliver:)``)
/// must run before the pipeline is dropped, so that no job outlives the owner's buffers.
final class OrderedPipeline<Worker: AnyObject, Output: Sendable> {
    /// A job's result, written by its worker before `done` is signalled and read by the
    /// submitting thread only after waiting on `done`: the semaphore orders the two.
    private final class Slot: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var output: Output?
    }

    /// Hands a worker's state to its own queue; only that queue uses it.
    private struct WorkerBox: @unchecked Sendable {
        let worker: Worker
        let queue: DispatchQueue
    }

    private let workers: [WorkerBox]
    private let maximumInFlight: Int
    /// A ring of the jobs not yet collected, oldest at `pendingHead`.
    private var pending: [Slot?]
    private var pendingHead = 0
    private(set) var inFlight = 0
    private var nextWorker = 0
    /// Set while ``cancelAndJoin()`` drains, read by jobs on any thread.
    private final class CancelFlag: Sendable {
        let isSet = Atomic<Bool>(false)
    }

    private let cancelled = CancelFlag()

    /// - Parameters:
    ///   - workers: One state per worker thread; at least one.
    ///   - maximumInFlight: The most jobs submitted and not yet collected; at least one.
    ///   - label: Names the worker queues (seen in debuggers and profiles).
    init(workers: [Worker], maximumInFlight: Int, label: String) {
        precondition(!workers.isEmpty && maximumInFlight > 0)
        self.workers = workers.enumerated().map { index, worker in
            WorkerBox(worker: worker, queue: DispatchQueue(label: "\(label).\(index)"))
        }
        self.maximumInFlight = maximumInFlight
        self.pending = Array(repeating: nil, count: maximumInFlight)
    }

    /// Each worker's state, in worker order (for tests that check the workers went away).
    var workerStates: [Worker] { workers.map(\.worker) }

    /// Submits `job`, first collecting (and passing to `deliver`, oldest first) results until
    /// there is room in the window, then any later results that are already done.
    /// - Parameters:
    ///   - job: Runs on a worker's queue with that worker's state; `isCancelled` tells it to
    ///     stop early (its output is then discarded).
    ///   - deliver: Takes each collected output on the calling thread, in submission order.
    /// - Throws: What `deliver` throws; the job was submitted only if nothing was thrown.
    func submit(_ job: @escaping @Sendable (_ worker: Worker, _ isCancelled: () -> Bool) -> Output,
                deliver: (Output) throws -> Void) throws {
        while inFlight >= maximumInFlight {
            try deliver(collectOldest())
        }
        let slot = Slot()
        let box = workers[nextWorker]
        nextWorker = (nextWorker + 1) % workers.count
        let cancelled = self.cancelled
        let isCancelled: @Sendable () -> Bool = { cancelled.isSet.load(ordering: .relaxed) }
        box.queue.async {
            slot.output = job(box.worker, isCancelled)
            slot.done.signal()
        }
        pending[(pendingHead + inFlight) % maximumInFlight] = slot
        inFlight += 1
        try deliverReady(deliver)
    }

    /// Passes to `deliver` the outputs of the oldest jobs that are already done, without waiting.
    func deliverReady(_ deliver: (Output) throws -> Void) throws {
        while inFlight > 0, let oldest = pending[pendingHead], oldest.done.wait(timeout: .now()) == .success {
            oldest.done.signal()   // collectOldest waits on it again
            try deliver(collectOldest())
        }
    }

    /// Waits for every job and passes their outputs to `deliver` in order.
    func finish(deliver: (Output) throws -> Void) throws {
        while inFlight > 0 {
            try deliver(collectOldest())
        }
    }

    /// Tells running and queued jobs to stop, waits for all of them, and discards their outputs.
    /// Afterwards the pipeline is empty and can take jobs again.
    func cancelAndJoin() {
        cancelled.isSet.store(true, ordering: .relaxed)
        while inFlight > 0 { _ = collectOldest() }
        cancelled.isSet.store(false, ordering: .relaxed)
    }

    private func collectOldest() -> Output {
        let slot = pending[pendingHead]!
        slot.done.wait()
        pending[pendingHead] = nil
        pendingHead = (pendingHead + 1) % maximumInFlight
        inFlight -= 1
        return slot.output!
    }

    deinit {
        cancelAndJoin()
    }
}

import Dispatch
import Synchronization

/// Runs jobs on a fixed set of worker threads and hands their results back, on the submitting
/// thread, in the order the jobs were submitted: the parallel part of pigz's design.
///
/// Each worker is a thread (a long-running job on a Dispatch queue of its own) with a state of
/// its own (a deflater, say) that only that thread touches. Jobs wait in one queue and the next
/// idle worker takes the oldest, so a slow job holds up one worker, not every job dealt to it.
/// At most `maximumInFlight` jobs are submitted and not yet collected:
/// ``submit(_:deliver:)`` collects the oldest first when the window is full, so memory is
/// bounded by the window, whatever the input size or the speed of whoever takes the results.
///
/// Not thread-safe: one thread submits and collects. ``cancelAndJoin()`` (or ``finish(deliver:)``)
/// must run before the owner's buffers go; the worker threads end when the pipeline is
/// deinitialised, which waits for them.
final class OrderedPipeline<Worker: AnyObject, Output: Sendable> {
    /// A job's result, written by its worker before `done` is signalled and read by the
    /// submitting thread only after waiting on `done`: the semaphore orders the two.
    private final class Slot: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var output: Output?
    }

    /// A job ready to run on whichever worker takes it; `nil` in the queue tells a worker to end.
    private typealias Job = @Sendable (Worker) -> Void

    /// The jobs not yet taken by a worker, shared by the submitting thread and the workers.
    /// A serial Dispatch queue guards the list (rather than a `Mutex`, whose futex the thread
    /// sanitizer does not see; a job costs one `sync`, next to milliseconds of deflate).
    private final class JobQueue: @unchecked Sendable {
        /// At most the pipeline's window long, so taking from the front is cheap.
        private var jobs: [Job?] = []
        private let guardQueue = DispatchQueue(label: "gzstream.pipeline.jobs")
        /// One signal per job (or end marker) added.
        private let available = DispatchSemaphore(value: 0)

        func add(_ job: Job?) {
            guardQueue.sync { jobs.append(job) }
            available.signal()
        }

        /// Waits for the oldest job; `nil` means end.
        func take() -> Job? {
            available.wait()
            return guardQueue.sync { jobs.removeFirst() }
        }
    }

    /// Hands a worker's state to its thread; only that thread uses it.
    private struct WorkerBox: @unchecked Sendable {
        let worker: Worker
    }

    private let workers: [Worker]
    private let jobQueue = JobQueue()
    /// Left by each worker thread as it ends.
    private let running = DispatchGroup()
    private let maximumInFlight: Int
    /// A ring of the jobs not yet collected, oldest at `pendingHead`.
    private var pending: [Slot?]
    private var pendingHead = 0
    private(set) var inFlight = 0
    /// Set while ``cancelAndJoin()`` drains, read by jobs on any thread.
    private final class CancelFlag: Sendable {
        let isSet = Atomic<Bool>(false)
    }

    private let cancelled = CancelFlag()

    /// Starts one thread per worker.
    /// - Parameters:
    ///   - workers: One state per worker thread; at least one.
    ///   - maximumInFlight: The most jobs submitted and not yet collected; at least one.
    ///   - label: Names the worker threads' queues (seen in debuggers and profiles).
    init(workers: [Worker], maximumInFlight: Int, label: String) {
        precondition(!workers.isEmpty && maximumInFlight > 0)
        self.workers = workers
        self.maximumInFlight = maximumInFlight
        self.pending = Array(repeating: nil, count: maximumInFlight)
        for (index, worker) in workers.enumerated() {
            let box = WorkerBox(worker: worker)
            let jobQueue = self.jobQueue
            DispatchQueue(label: "\(label).\(index)").async(group: running) {
                while let job = jobQueue.take() {
                    job(box.worker)
                }
            }
        }
    }

    /// Each worker's state, in worker order (for tests that check the workers went away).
    var workerStates: [Worker] { workers }

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
        let cancelled = self.cancelled
        let isCancelled: @Sendable () -> Bool = { cancelled.isSet.load(ordering: .relaxed) }
        jobQueue.add { worker in
            slot.output = job(worker, isCancelled)
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
        for _ in workers { jobQueue.add(nil) }
        running.wait()
    }
}

import Dispatch
import Synchronization

/// Runs jobs on a fixed set of workers and hands their results back, on the submitting thread,
/// in the order the jobs were submitted: the parallel part of pigz's design.
///
/// Each worker has a state of its own (a deflater, say) and a serial Dispatch queue; jobs wait
/// in one list, and an idle worker takes the oldest. A worker with nothing to do holds no
/// thread: when jobs come it starts on its queue and takes jobs until the list is empty, then
/// goes idle again. So a slow job holds up one worker, not every job dealt to it, and any
/// number of open pipelines cost no threads while they wait for input. At most `maximumInFlight`
/// jobs are submitted and not yet collected: ``submit(_:deliver:)`` collects the oldest first
/// when the window is full, so memory is bounded by the window, whatever the input size or the
/// speed of whoever takes the results.
///
/// With a `helper` state, the submitting thread does not wait for a job while one is listed
/// that no worker has started: it runs that job itself, with the helper state (the awaited
/// job first, since the list is oldest first). Then `workers.count + 1` threads inflate or
/// deflate, and the submitting thread, which has its own work between jobs (reading, writing),
/// is never one of more runnable threads than cores waiting for its turn while the workers
/// run out of jobs.
///
/// Not thread-safe: one thread submits and collects. ``cancelAndJoin()`` (or ``finish(deliver:)``)
/// must run before the owner's buffers go; deinitialisation also waits until every worker
/// has gone idle.
final class OrderedPipeline<Worker: AnyObject, Output: Sendable> {
    /// A job's result, written by its worker before `finished` is set (releasing) and `done`
    /// signalled, and read by the submitting thread only after it saw `finished` set
    /// (acquiring) or waited on `done`: either orders the write before the read.
    ///
    /// Why a flag beside the semaphore: asking the semaphore "done yet?" without blocking
    /// (`wait(timeout: .now())`) is an absolute deadline already reached, which libdispatch
    /// hands to `sem_timedwait`; the kernel then parks the thread until a timer fires, up to
    /// its timer slack (50 µs) later. The reading thread asked once per batch, so unpacking the
    /// benchmark's BGZF file slept about 650 times in such calls, a core idle for 6 to 10% of
    /// the run (`perf sched`). Loading the flag costs no system call.
    private final class Slot: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        var output: Output?

        var isFinished: Bool { finished.load(ordering: .acquiring) }

        /// Blocks until the job's output is written, unless it already is.
        func waitUntilFinished() {
            if !isFinished { done.wait() }
        }
    }

    /// A job ready to run on whichever worker takes it.
    private typealias Job = @Sendable (Worker) -> Void

    /// A worker's state and the queue it runs on while it has jobs; only that queue uses it.
    private struct WorkerBox: @unchecked Sendable {
        let worker: Worker
        let queue: DispatchQueue
    }

    /// The jobs no worker has taken yet and the idle workers, shared by the submitting thread
    /// and the workers. A serial Dispatch queue guards both (rather than a `Mutex`, whose futex
    /// the thread sanitizer does not see); a job costs two `sync`s, next to milliseconds of
    /// deflate.
    private final class Scheduler: @unchecked Sendable {
        /// At most the pipeline's window long, so taking from the front is cheap.
        private var jobs: [Job] = []
        private var idle: [WorkerBox]
        private let guardQueue = DispatchQueue(label: "gzstream.pipeline.jobs")
        /// Entered by each worker while it runs, so that the owner can wait for all to be idle.
        let busy = DispatchGroup()

        init(workers: [WorkerBox]) {
            idle = workers.reversed()
        }

        /// Hands `job` to an idle worker, or lists it for the next worker that finishes one.
        func add(_ job: @escaping Job) {
            let starting: WorkerBox? = guardQueue.sync {
                if let box = idle.popLast() { return box }
                jobs.append(job)
                return nil
            }
            guard let box = starting else { return }
            box.queue.async(group: busy) { self.run(job, on: box) }
        }

        /// Takes the oldest job no worker has started, for the submitting thread to run.
        func takeListed() -> Job? {
            guardQueue.sync { jobs.isEmpty ? nil : jobs.removeFirst() }
        }

        /// Runs `first`, then every job listed meanwhile, then marks the worker idle.
        private func run(_ first: @escaping Job, on box: WorkerBox) {
            var next: Job? = first
            while let job = next {
                job(box.worker)
                next = guardQueue.sync {
                    if jobs.isEmpty {
                        idle.append(box)
                        return nil
                    }
                    return jobs.removeFirst()
                }
            }
        }
    }

    private let workers: [Worker]
    /// The submitting thread's own state, with which it runs listed jobs while it waits.
    private let helper: Worker?
    private let scheduler: Scheduler
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

    /// - Parameters:
    ///   - workers: One state per worker; at least one. Their number is the most jobs that run
    ///     at once.
    ///   - maximumInFlight: The most jobs submitted and not yet collected; at least one.
    ///   - label: Names the worker queues (seen in debuggers and profiles).
    init(workers: [Worker], helper: Worker? = nil, maximumInFlight: Int, label: String) {
        precondition(!workers.isEmpty && maximumInFlight > 0)
        self.workers = workers
        self.helper = helper
        self.maximumInFlight = maximumInFlight
        self.pending = Array(repeating: nil, count: maximumInFlight)
        scheduler = Scheduler(workers: workers.enumerated().map { index, worker in
            WorkerBox(worker: worker, queue: DispatchQueue(label: "\(label).\(index)"))
        })
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
        scheduler.add { worker in
            slot.output = job(worker, isCancelled)
            slot.finished.store(true, ordering: .releasing)
            slot.done.signal()
        }
        pending[(pendingHead + inFlight) % maximumInFlight] = slot
        inFlight += 1
        try deliverReady(deliver)
    }

    /// Passes to `deliver` the outputs of the oldest jobs that are already done, without waiting.
    func deliverReady(_ deliver: (Output) throws -> Void) throws {
        while inFlight > 0, let oldest = pending[pendingHead], oldest.isFinished {
            try deliver(collectOldest())
        }
    }

    /// Waits for every job and passes their outputs to `deliver` in order.
    func finish(deliver: (Output) throws -> Void) throws {
        while inFlight > 0 {
            try deliver(collectOldest())
        }
    }

    /// Waits for the oldest job and returns its output, or `nil` when no job is in flight.
    func collectNext() -> Output? {
        inFlight > 0 ? collectOldest() : nil
    }

    /// Tells running and queued jobs to stop, waits for all of them and for every worker to go
    /// idle, and discards their outputs. Afterwards the pipeline is empty and can take jobs again.
    func cancelAndJoin() {
        cancelled.isSet.store(true, ordering: .relaxed)
        while inFlight > 0 { _ = collectOldest() }
        scheduler.busy.wait()
        cancelled.isSet.store(false, ordering: .relaxed)
    }

    /// ``cancelAndJoin()``, then hands each worker's state to `release` (to free what it holds,
    /// a deflater say): no job runs on it any more.
    func cancelAndJoin(releasing release: (Worker) -> Void) {
        cancelAndJoin()
        workers.forEach(release)
        helper.map(release)
    }

    private func collectOldest() -> Output {
        let slot = pending[pendingHead]!
        if let helper {
            // Rather than wait, run the oldest job no worker has started (the awaited one first).
            while !slot.isFinished {
                guard let job = scheduler.takeListed() else {
                    slot.waitUntilFinished()
                    break
                }
                job(helper)
            }
        } else {
            slot.waitUntilFinished()
        }
        pending[pendingHead] = nil
        pendingHead = (pendingHead + 1) % maximumInFlight
        inFlight -= 1
        return slot.output!
    }

    deinit {
        cancelAndJoin()
    }
}

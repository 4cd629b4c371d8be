import ByteStreams
import Dispatch
import Synchronization

/// Runs jobs on a fixed set of workers and hands their results back, on the submitting thread,
/// in the order the jobs were submitted: the parallel part of pigz's design, and the one worker
/// pool of this module (parallel pack, BGZF both ways, and indexed unpack run on it, as htslib
/// runs BGZF both ways on one `hts_tpool`).
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
/// A job gives either one output when it returns (``submit(_:deliver:)``) or, streamed
/// (``submitStreamed(_:)``), items while it runs: the submitting thread takes the oldest job's
/// items as they come (``nextItem()``), so a long job (a 16 MiB span to inflate) is read while
/// it is decoded. Streamed jobs write into chunks of the pipeline's ``ChunkBudget``, which
/// bounds the bytes in flight; see ``submitStreamed(_:)`` for why no wait is circular.
///
/// With a `helper` state, the submitting thread does not wait for a job while one is listed
/// that no worker has started: it runs that job itself, with the helper state (the awaited
/// job first, since the list is oldest first). Then `workers.count + 1` threads inflate or
/// deflate, and the submitting thread, which has its own work between jobs (reading, writing),
/// is never one of more runnable threads than cores waiting for its turn while the workers
/// run out of jobs.
///
/// Not thread-safe: one thread submits and collects. ``cancelAndJoin()`` (or ``finish(deliver:)``)
/// must run before the owner's buffers go; deinitialisation also cancels and waits until every
/// worker has gone idle, so no worker outlives the pipeline.
final class OrderedPipeline<Worker: AnyObject, Output: Sendable> {
    /// A job's result, written by its worker before `finished` is set (releasing) and `done`
    /// signalled, and read by the submitting thread only after it saw `finished` set
    /// (acquiring) or waited on `done`: either orders the write before the read. That order,
    /// which the compiler cannot see, is why `Sendable` is unchecked; `stream` is itself
    /// `Sendable`.
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
        /// A streamed job's items; `nil` for a job with one output.
        let stream: JobStream<Output>?

        init(stream: JobStream<Output>? = nil) {
            self.stream = stream
        }

        var isFinished: Bool { finished.load(ordering: .acquiring) }

        /// Blocks until the job's output is written, unless it already is.
        func waitUntilFinished() {
            if !isFinished { done.wait() }
        }

        /// Publishes the output (or the end of the stream): worker side.
        func finish() {
            finished.store(true, ordering: .releasing)
            done.signal()
        }
    }

    /// A job ready to run on whichever worker takes it.
    private typealias Job = @Sendable (Worker) -> Void

    /// A worker's state and the queue it runs on while it has jobs. `Sendable` is unchecked
    /// because `Worker` need not be: a box is in the idle list or on its own queue, never both,
    /// so one thread at a time uses the worker (and the submitting thread only after
    /// ``cancelAndJoin()``).
    private struct WorkerBox: @unchecked Sendable {
        let worker: Worker
        let queue: DispatchQueue
    }

    /// The jobs no worker has taken yet (at most the window long, so taking from the front is
    /// cheap) and the idle workers.
    private struct Listing: Sendable {
        var jobs: [Job] = []
        var idle: [WorkerBox]
    }

    /// The listing, shared by the submitting thread and the workers behind a ``QueueGuarded``;
    /// a job costs two locked sections, next to milliseconds of deflate.
    private final class Scheduler: Sendable {
        private let listing: QueueGuarded<Listing>
        /// Entered by each worker while it runs, so that the owner can wait for all to be idle.
        let busy = DispatchGroup()

        init(workers: [WorkerBox]) {
            listing = QueueGuarded(Listing(idle: workers.reversed()), label: "gzstream.pipeline.jobs")
        }

        /// Hands `job` to an idle worker, or lists it for the next worker that finishes one.
        func add(_ job: @escaping Job) {
            let starting: WorkerBox? = listing.withLock { listing in
                if let box = listing.idle.popLast() { return box }
                listing.jobs.append(job)
                return nil
            }
            guard let box = starting else { return }
            // Through a handoff the worker empties, not captured by the block itself: the block
            // lives as long as the worker keeps finding jobs, so whatever its first job captured
            // (a 1 MiB block of plain bytes, for pack) stayed allocated for the whole run, one
            // per worker.
            let handoff = Handoff(job)
            box.queue.async(group: busy) { self.run(from: handoff, on: box) }
        }

        /// Takes the oldest job no worker has started, for the submitting thread to run.
        func takeListed() -> Job? {
            listing.withLock { $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }
        }

        /// Runs the job handed over, then every job listed meanwhile, then marks the worker
        /// idle. Each job is released before the next runs.
        private func run(from handoff: Handoff, on box: WorkerBox) {
            var next: Job? = handoff.take()
            while let job = next {
                next = nil
                job(box.worker)
                next = listing.withLock { listing in
                    if listing.jobs.isEmpty {
                        listing.idle.append(box)
                        return nil
                    }
                    return listing.jobs.removeFirst()
                }
            }
        }
    }

    /// A job on its way to the worker started for it, taken once by that worker so that the
    /// block that started the worker does not keep it. `Sendable` is unchecked because `job`
    /// is a `var`: it is written before the block is submitted and read once, on the worker.
    private final class Handoff: @unchecked Sendable {
        private var job: Job?
        init(_ job: @escaping Job) { self.job = job }
        func take() -> Job {
            defer { job = nil }
            return job!
        }
    }

    /// Read by jobs on any thread: `cancelled` while ``cancelAndJoin()`` drains;
    /// `firstStopped`, the number of the earliest streamed job that asked that no later one run
    /// (`Int.max`: none). A job compares its own number with it rather than reading a yes/no:
    /// jobs are handed to workers in order but a worker may start its job after a later one
    /// has already stopped, and that earlier job must still run (its consumer waits for it).
    private final class Flags: Sendable {
        let cancelled = Atomic<Bool>(false)
        let firstStopped = Atomic<Int>(Int.max)
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
    /// The number of jobs submitted: the next job's number.
    private var submitted = 0
    private let flags = Flags()
    /// The chunks streamed jobs write into; `nil` when the pipeline runs none.
    let chunks: ChunkBudget?

    /// - Parameters:
    ///   - workers: One state per worker; at least one. Their number is the most jobs that run
    ///     at once.
    ///   - helper: The submitting thread's state, to run listed jobs while it waits; not with
    ///     `chunks` (a streamed job run by the reader of its chunks could wait on itself).
    ///   - maximumInFlight: The most jobs submitted and not yet collected; at least one.
    ///   - label: Names the worker queues (seen in debuggers and profiles).
    ///   - chunks: The chunks streamed jobs write into, owned by the pipeline from here on.
    init(workers: [Worker], helper: Worker? = nil, maximumInFlight: Int, label: String, chunks: ChunkBudget? = nil) {
        precondition(!workers.isEmpty && maximumInFlight > 0 && (helper == nil || chunks == nil))
        self.workers = workers
        self.helper = helper
        self.maximumInFlight = maximumInFlight
        self.chunks = chunks
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
        let flags = self.flags
        let isCancelled: @Sendable () -> Bool = { flags.cancelled.load(ordering: .relaxed) }
        scheduler.add { worker in
            slot.output = job(worker, isCancelled)
            slot.finish()
        }
        append(slot)
        try deliverReady(deliver)
    }

    /// Submits a streamed job, which hands its items to ``nextItem()`` while it runs. Jobs are
    /// started in submission order, so the oldest job not yet collected is running whenever a
    /// later one is, and (``ChunkBudget``) it can always have a chunk: the consumer, waiting
    /// only on the oldest job, never waits on a job that waits on it.
    /// - Parameter job: Runs on a worker's queue with that worker's state; returns `false` to
    ///   stop the pipeline: later jobs not started by then do not run (their streams end
    ///   empty); earlier ones run whatever the order their workers start in.
    /// - Precondition: The window has room (`inFlight < maximumInFlight`); no helper.
    func submitStreamed(_ job: @escaping @Sendable (_ worker: Worker, _ context: StreamedJob<Output>) -> Bool) {
        precondition(inFlight < maximumInFlight && helper == nil)
        let stream = JobStream<Output>()
        let slot = Slot(stream: stream)
        let flags = self.flags
        let number = submitted
        let context = StreamedJob(stream: stream, chunks: chunks, number: number)
        scheduler.add { worker in
            if !flags.cancelled.load(ordering: .relaxed) && flags.firstStopped.load(ordering: .acquiring) > number {
                if !job(worker, context) { flags.firstStopped.min(number, ordering: .releasing) }
            }
            stream.end()
            slot.finish()
        }
        append(slot)
    }

    /// The oldest job's next item, once there is one; `nil` when that job has returned and
    /// every item it emitted was taken. Blocks.
    /// - Precondition: A streamed job is in flight.
    func nextItem() -> Output? {
        precondition(inFlight > 0)
        return pending[pendingHead]!.stream!.next()
    }

    /// Drops the oldest streamed job from the window, once ``nextItem()`` gave the item that ends
    /// it (the job emits nothing more; it may still be returning). Items it emitted and nobody
    /// took are dropped; their chunks come back to the budget at ``cancelAndJoin()``.
    func finishOldest() {
        precondition(inFlight > 0 && pending[pendingHead]!.stream != nil)
        _ = removeOldest()
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

    /// Tells running and queued jobs to stop (a streamed job waiting for a chunk gets none),
    /// waits for all of them and for every worker to go idle, and discards their outputs.
    /// Afterwards the pipeline is empty and can take jobs again; every chunk is free (a chunk
    /// the consumer still held is no longer its own).
    func cancelAndJoin() {
        flags.cancelled.store(true, ordering: .relaxed)
        chunks?.cancel()
        while inFlight > 0 {
            let slot = removeOldest()
            slot.waitUntilFinished()
        }
        scheduler.busy.wait()
        flags.cancelled.store(false, ordering: .relaxed)
        flags.firstStopped.store(Int.max, ordering: .relaxed)
        chunks?.reset(oldestJob: submitted)
    }

    /// ``cancelAndJoin()``, then hands each worker's state to `release` (to free what it holds,
    /// a deflater say): no job runs on it any more.
    func cancelAndJoin(releasing release: (Worker) -> Void) {
        cancelAndJoin()
        workers.forEach(release)
        helper.map(release)
    }

    private func append(_ slot: Slot) {
        pending[(pendingHead + inFlight) % maximumInFlight] = slot
        inFlight += 1
        submitted += 1
    }

    /// Takes the oldest slot out of the window, and tells the chunk budget which job is now
    /// the oldest.
    private func removeOldest() -> Slot {
        let slot = pending[pendingHead]!
        pending[pendingHead] = nil
        pendingHead = (pendingHead + 1) % maximumInFlight
        inFlight -= 1
        chunks?.setOldest(job: submitted - inFlight)
        return slot
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
        _ = removeOldest()
        return slot.output!
    }

    deinit {
        cancelAndJoin()
    }
}

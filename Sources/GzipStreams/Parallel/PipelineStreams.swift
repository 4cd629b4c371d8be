import ByteStreams
import Dispatch

/// The items a streamed job of an ``OrderedPipeline`` emitted and the consumer has not taken
/// yet, oldest first: the worker emits, the consumer takes. The list is not bounded here: what
/// the items carry is (``ChunkBudget``). Thread-safe: one emitting worker and one consumer.
final class JobStream<Item: Sendable>: Sendable {
    private struct List: Sendable {
        var items: [Item] = []
        var head = 0
    }

    private let list = QueueGuarded(List(), label: "gzstream.pipeline.stream")
    /// Signalled once per item and once more at the end.
    private let available = DispatchSemaphore(value: 0)

    /// Hands `item` to the consumer. Worker side; does not block.
    func emit(_ item: Item) {
        list.withLock { $0.items.append(item) }
        available.signal()
    }

    /// No item follows. Worker side, once.
    func end() {
        available.signal()
    }

    /// The oldest item not taken, once there is one; `nil` after the last (and on every later
    /// call). Consumer side; blocks.
    func next() -> Item? {
        available.wait()
        let item: Item? = list.withLock { list in
            guard list.head < list.items.count else { return nil }
            let item = list.items[list.head]
            list.head += 1
            if list.head > 64 && list.head * 2 > list.items.count {
                list.items.removeFirst(list.head)
                list.head = 0
            }
            return item
        }
        // The end stays visible to a later call.
        if item == nil { available.signal() }
        return item
    }
}

/// What a streamed job of an ``OrderedPipeline`` works with, on its worker: where its items go,
/// and the chunks it may write into (``takeChunk()`` returns `nil` once the pipeline is
/// cancelled, which is how a streamed job learns it).
struct StreamedJob<Item: Sendable>: Sendable {
    let stream: JobStream<Item>
    let chunks: ChunkBudget?
    /// The job's number in submission order, from 0: the budget favours the oldest.
    let number: Int

    /// Hands `item` to the consumer; does not block.
    func emit(_ item: Item) { stream.emit(item) }

    /// A chunk of ``ChunkBudget/chunkCapacity`` bytes, once this job may have one; `nil` when
    /// the pipeline is cancelled. Blocks.
    func takeChunk() -> UnsafeMutablePointer<UInt8>? {
        chunks!.take(forJob: number)
    }
}

/// The chunk buffers the streamed jobs of one ``OrderedPipeline`` write into, shared by all: at
/// most `limit` exist, so memory does not grow with a job's size or a slow consumer. A chunk
/// for the oldest job the consumer has not finished (the one it waits for) may be any free
/// chunk; a chunk for any other job only while more than `reserve` are left, so that later
/// jobs cannot starve it. (The right goes with the job, not the worker: a worker that finished
/// the oldest job and went on to a later one must not take the last chunks while the consumer
/// waits for another worker.) A job with no chunk to take waits until the consumer gives one
/// back or moves on. Chunks are allocated when first needed and freed with the budget.
///
/// `Sendable` is unchecked because chunk pointers are not `Sendable`: the ``QueueGuarded``
/// state holds every `var`, and a chunk belongs to one thread at a time (the job that took it,
/// then the consumer, until it gives it back).
final class ChunkBudget: @unchecked Sendable {
    let chunkCapacity: Int
    private let limit: Int
    private let reserve: Int

    private struct State {
        var free: [UnsafeMutablePointer<UInt8>] = []
        var all: [UnsafeMutablePointer<UInt8>] = []
        var oldestJob = 0
        /// One semaphore per job waiting for a chunk, signalled when one may be free.
        var waiting: [DispatchSemaphore] = []
        var cancelled = false

        mutating func wakeWaiting() {
            for semaphore in waiting { semaphore.signal() }
            waiting.removeAll()
        }
    }

    private let state = QueueGuarded(State(), label: "gzstream.pipeline.chunks")

    /// - Parameters:
    ///   - limit: The most chunks that exist at once; more than `reserve`.
    ///   - reserve: The chunks only the oldest job may take.
    ///   - chunkCapacity: The size in bytes of a chunk.
    init(limit: Int, reserve: Int, chunkCapacity: Int) {
        precondition(limit > reserve && reserve >= 0 && chunkCapacity > 0)
        self.limit = limit
        self.reserve = reserve
        self.chunkCapacity = chunkCapacity
    }

    deinit {
        state.withLock { state in
            for chunk in state.all { chunk.deallocate() }
        }
    }

    /// A chunk for job `job`, once it may have one; `nil` when cancelled. Blocks.
    func take(forJob job: Int) -> UnsafeMutablePointer<UInt8>? {
        enum Outcome {
            case chunk(UnsafeMutablePointer<UInt8>)
            case wait(DispatchSemaphore)
            case cancelled
        }
        while true {
            let outcome: Outcome = state.withLock { state in
                if state.cancelled { return .cancelled }
                let available = state.free.count + limit - state.all.count
                guard available > (job == state.oldestJob ? 0 : reserve) else {
                    let wake = DispatchSemaphore(value: 0)
                    state.waiting.append(wake)
                    return .wait(wake)
                }
                if let chunk = state.free.popLast() { return .chunk(chunk) }
                let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkCapacity)
                state.all.append(chunk)
                return .chunk(chunk)
            }
            switch outcome {
            case .chunk(let chunk): return chunk
            case .wait(let wake): wake.wait()
            case .cancelled: return nil
            }
        }
    }

    /// Takes back a chunk the consumer is done with.
    func give(_ chunk: UnsafeMutablePointer<UInt8>) {
        state.withLock { state in
            state.free.append(chunk)
            state.wakeWaiting()
        }
    }

    /// The consumer now waits for job `job`.
    func setOldest(job: Int) {
        state.withLock { state in
            state.oldestJob = job
            state.wakeWaiting()
        }
    }

    /// Every wait for a chunk returns `nil`, and every later take, until ``reset(oldestJob:)``.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            state.wakeWaiting()
        }
    }

    /// Every chunk free again, for jobs from `oldestJob` on: only once no job runs.
    func reset(oldestJob: Int) {
        state.withLock { state in
            state.cancelled = false
            state.free = state.all
            state.oldestJob = oldestJob
        }
    }
}

import Dispatch
import Synchronization

/// A worker's queue of items for the reader of an ``IndexedGzipInputStream``: the worker
/// emits, the reader takes them in order. A serial Dispatch queue guards the list (the thread
/// sanitizer sees it) and a semaphore counts the items ready; `Sendable` is unchecked because
/// the compiler cannot see that `guardQueue` guards `items` and `head`.
final class SpanLane: @unchecked Sendable {
    private let guardQueue = DispatchQueue(label: "gzstream.indexed-lane")
    private var items: [SpanItem] = []
    private var head = 0
    private let itemsReady = DispatchSemaphore(value: 0)

    /// Hands `item` to the reader. Worker side.
    func emit(_ item: SpanItem) {
        guardQueue.sync { items.append(item) }
        itemsReady.signal()
    }

    /// The oldest item, once there is one. Reader side; blocks.
    func next() -> SpanItem {
        itemsReady.wait()
        return guardQueue.sync {
            let item = items[head]
            head += 1
            if head > 64 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }
}

/// The chunk buffers the workers of one run decode into, shared by all: at most `limit` exist,
/// so memory does not grow with the span size or a slow reader. A chunk for the oldest span the
/// reader has not finished (the one it waits for) may be any free chunk; a chunk for any other
/// span only while more than `reserve` are left, so that later spans cannot starve it. (The
/// right goes with the span, not the worker: a worker that finished the oldest span and went
/// on to a later one must not take the last chunks while the reader waits for another worker.)
/// A worker with no chunk to take waits until the reader gives one back or moves on.
/// `Sendable` is unchecked: `guardQueue` guards every `var`, and a chunk belongs to one thread
/// at a time (the worker that took it, then the reader, until it gives it back).
final class ChunkPool: @unchecked Sendable {
    let chunkCapacity: Int
    private let limit: Int
    private let reserve: Int
    private let guardQueue = DispatchQueue(label: "gzstream.indexed-chunks")
    private var free: [UnsafeMutablePointer<UInt8>] = []
    private var allChunks: [UnsafeMutablePointer<UInt8>] = []
    private var oldestSpan: Int
    private var waiting: [Bool]
    private let wake: [DispatchSemaphore]
    private let cancelled = Atomic<Bool>(false)

    init(lanes: Int, limit: Int, reserve: Int, chunkCapacity: Int, firstSpan: Int) {
        self.chunkCapacity = chunkCapacity
        oldestSpan = firstSpan
        self.limit = limit
        self.reserve = reserve
        waiting = Array(repeating: false, count: lanes)
        wake = (0..<lanes).map { _ in DispatchSemaphore(value: 0) }
    }

    deinit {
        for chunk in allChunks { chunk.deallocate() }
    }

    /// A chunk for span `span`, decoded by lane `lane`'s worker, once it may have one; `nil`
    /// when the run is cancelled.
    func take(lane: Int, span: Int) -> UnsafeMutablePointer<UInt8>? {
        while true {
            if cancelled.load(ordering: .acquiring) { return nil }
            let chunk: UnsafeMutablePointer<UInt8>? = guardQueue.sync {
                let available = free.count + limit - allChunks.count
                guard available > (span == oldestSpan ? 0 : reserve) else {
                    waiting[lane] = true
                    return nil
                }
                if let chunk = free.popLast() { return chunk }
                let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkCapacity)
                allChunks.append(chunk)
                return chunk
            }
            if let chunk { return chunk }
            wake[lane].wait()
        }
    }

    /// Takes back a chunk the reader has copied out.
    func give(_ chunk: UnsafeMutablePointer<UInt8>) {
        guardQueue.sync {
            free.append(chunk)
            wakeWaiting()
        }
    }

    /// The reader now waits for span `span`.
    func setOldest(span: Int) {
        guardQueue.sync {
            oldestSpan = span
            wakeWaiting()
        }
    }

    /// Stops every worker's wait for a chunk.
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        guardQueue.sync { for semaphore in wake { semaphore.signal() } }
    }

    private func wakeWaiting() {
        for lane in waiting.indices where waiting[lane] {
            waiting[lane] = false
            wake[lane].signal()
        }
    }
}

/// The workers of one run of an ``IndexedGzipInputStream`` over spans `first..<end`: each
/// worker takes the next span nobody has taken yet (so a worker that finished a cheap span
/// goes on at once, whatever the others are doing) and emits its items into the lane of that
/// span, lane `(s - first) % lanes.count` of a ring; the reader takes the spans in order by
/// visiting the ring in turn. A worker takes a span only while fewer than `lanes.count` spans
/// are taken and not yet finished by the reader, so two spans in one lane never overlap.
/// The reader only ever waits on the lane of the oldest span it has not finished, which was
/// taken before any later one (spans are taken in order), whose worker is decoding it or has
/// emitted it, and that worker can always have a chunk (``ChunkPool``), so no wait is circular.
/// `Sendable` is unchecked for `joined`, which only the reader's thread (the owner) touches;
/// the rest is constant or `Sendable`.
final class SpanRun: @unchecked Sendable {
    let first: Int
    let end: Int
    let lanes: [SpanLane]
    let pool: ChunkPool
    private let group = DispatchGroup()
    private var joined = false
    private let claims: SpanClaims

    /// Starts one worker per decoder (at most one per span).
    /// - Parameter chunkLimit: The most chunks the workers hold together.
    init(spans: Range<Int>, decoders: [SpanDecoder], chunkLimit: Int, chunkCapacity: Int) {
        first = spans.lowerBound
        end = spans.upperBound
        let workers = min(decoders.count, max(1, spans.count))
        let ringSize = 2 * workers
        let lanes = (0..<ringSize).map { _ in SpanLane() }
        self.lanes = lanes
        let claims = SpanClaims(first: first, ringSize: ringSize)
        self.claims = claims
        let pool = ChunkPool(lanes: workers, limit: max(chunkLimit, workers + 2), reserve: 2,
                             chunkCapacity: chunkCapacity, firstSpan: first)
        self.pool = pool
        let (first, end) = (first, end)
        for worker in 0..<workers {
            let box = DecoderBox(decoder: decoders[worker])
            DispatchQueue(label: "gzstream.indexed-inflate.\(worker)").async(group: group) {
                while let span = claims.take(before: end) {
                    let goOn = box.decoder.decode(span: span, chunkCapacity: chunkCapacity,
                                                  takeChunk: { pool.take(lane: worker, span: $0) },
                                                  emit: lanes[(span - first) % lanes.count].emit)
                    if !goOn {
                        claims.stop()
                        break
                    }
                }
            }
        }
    }

    /// The lane that holds span `span`.
    func lane(of span: Int) -> SpanLane { lanes[(span - first) % lanes.count] }

    /// The reader finished the span before `span` and now waits for `span`: its lane may take
    /// a later span, and its worker may take any free chunk.
    func readerWaits(for span: Int) {
        claims.laneFreed()
        pool.setOldest(span: span)
    }

    /// Stops every worker and waits until each has returned; the lanes (and their chunks)
    /// may go after this.
    func cancelAndJoin() {
        guard !joined else { return }
        joined = true
        claims.stop()
        pool.cancel()
        group.wait()
    }

    deinit {
        cancelAndJoin()
    }

    /// A decoder handed to its worker's queue: used there only, until the run is joined.
    private struct DecoderBox: @unchecked Sendable {
        let decoder: SpanDecoder
    }
}

/// Who decodes which span of a ``SpanRun``: spans are taken in order, each by the first worker
/// free, while a lane of the ring is free for it. `Sendable` by construction: atomics and a
/// semaphore, all constants.
final class SpanClaims: Sendable {
    /// The next span no worker has taken.
    private let next: Atomic<Int>
    /// Lanes of the ring free for a span to be taken; the reader gives one back when it
    /// finishes a span.
    private let lanesFree: DispatchSemaphore
    /// Set when a worker stops (an error, a mismatch, a boundary) or the run is cancelled:
    /// nobody takes a further span, as the reader stops at that span anyway.
    private let stopped = Atomic<Bool>(false)

    init(first: Int, ringSize: Int) {
        next = Atomic(first)
        // Made at 0 and signalled up: libdispatch traps when a semaphore is freed with a value
        // below the one it was made with, which a run stopped early leaves.
        lanesFree = DispatchSemaphore(value: 0)
        for _ in 0..<ringSize { lanesFree.signal() }
    }

    /// The next span for the calling worker, once a lane is free for it; `nil` when every span
    /// before `end` is taken or the run stopped. Blocks.
    func take(before end: Int) -> Int? {
        lanesFree.wait()
        if !stopped.load(ordering: .acquiring) {
            let span = next.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            if span < end { return span }
        }
        // This worker is done: the lane it waited for goes to the next worker, which sees the
        // same and is done too.
        lanesFree.signal()
        return nil
    }

    /// The reader finished a span: its lane is free.
    func laneFreed() { lanesFree.signal() }

    /// No span is taken after this; every worker waiting for a lane returns.
    func stop() {
        stopped.store(true, ordering: .releasing)
        lanesFree.signal()
    }
}

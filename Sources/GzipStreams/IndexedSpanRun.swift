import Dispatch
import Synchronization

/// A worker's queue of items for the reader of an ``IndexedGzipInputStream`` and the chunk
/// buffers its plain bytes go into: at most `quota` chunks exist, so a worker ahead of the
/// reader stops when they are all full, and memory does not grow with the span size or a slow
/// reader. The worker emits, the reader takes items in order and returns each chunk it has
/// copied out. A serial Dispatch queue guards the lists (the thread sanitizer sees it), and two
/// semaphores count the items ready and the chunks free.
final class SpanLane: @unchecked Sendable {
    let chunkCapacity: Int
    private let guardQueue = DispatchQueue(label: "gzstream.indexed-lane")
    private var items: [SpanItem] = []
    private var head = 0
    private var free: [UnsafeMutablePointer<UInt8>] = []
    private var allChunks: [UnsafeMutablePointer<UInt8>] = []
    private let itemsReady = DispatchSemaphore(value: 0)
    private let chunksFree = DispatchSemaphore(value: 0)
    private let cancelled: Atomic<Bool>

    init(quota: Int, chunkCapacity: Int) {
        self.chunkCapacity = chunkCapacity
        cancelled = Atomic(false)
        // Signalled up to the quota rather than created with it: libdispatch refuses to free a
        // semaphore whose count is below the value it was created with.
        for _ in 0..<quota { chunksFree.signal() }
    }

    deinit {
        for chunk in allChunks { chunk.deallocate() }
    }

    /// A free chunk, once there is one; `nil` when the lane was cancelled. Worker side.
    func takeChunk() -> UnsafeMutablePointer<UInt8>? {
        if cancelled.load(ordering: .acquiring) { return nil }
        chunksFree.wait()
        if cancelled.load(ordering: .acquiring) { return nil }
        return guardQueue.sync {
            if let chunk = free.popLast() { return chunk }
            let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkCapacity)
            allChunks.append(chunk)
            return chunk
        }
    }

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

    /// Gives back a chunk the reader has copied out. Reader side.
    func returnChunk(_ chunk: UnsafeMutablePointer<UInt8>) {
        guardQueue.sync { free.append(chunk) }
        chunksFree.signal()
    }

    /// Wakes the worker if it waits for a chunk and makes it stop.
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        chunksFree.signal()
    }
}

/// The workers of one run of an ``IndexedGzipInputStream`` over spans `first..<end`: worker `w`
/// decodes spans `first + w`, `first + w + threads`, … in turn into lane `w`, so span `s` is in
/// lane `(s - first) % threads` and the reader takes the spans in order by visiting the lanes
/// in turn. The reader only ever waits on the lane of the oldest span it has not finished,
/// whose worker is decoding that span or has emitted it, so no wait is circular.
final class SpanRun: @unchecked Sendable {
    let first: Int
    let end: Int
    let lanes: [SpanLane]
    private let group = DispatchGroup()
    private var joined = false

    /// Starts one worker per decoder (at most one per span).
    /// - Parameter quota: The chunks each lane may hold.
    init(spans: Range<Int>, decoders: [SpanDecoder], quota: Int, chunkCapacity: Int) {
        first = spans.lowerBound
        end = spans.upperBound
        let workers = min(decoders.count, max(1, spans.count))
        lanes = (0..<workers).map { _ in SpanLane(quota: quota, chunkCapacity: chunkCapacity) }
        for worker in 0..<workers {
            let lane = lanes[worker]
            let box = DecoderBox(decoder: decoders[worker])
            let (start, end, stride) = (first + worker, end, workers)
            DispatchQueue(label: "gzstream.indexed-inflate.\(worker)").async(group: group) {
                for span in Swift.stride(from: start, to: end, by: stride) {
                    let goOn = box.decoder.decode(span: span, chunkCapacity: chunkCapacity,
                                                  takeChunk: lane.takeChunk, emit: lane.emit)
                    if !goOn { break }
                }
            }
        }
    }

    /// The lane that holds span `span`.
    func lane(of span: Int) -> SpanLane { lanes[(span - first) % lanes.count] }

    /// Stops every worker and waits until each has returned; the lanes (and their chunks)
    /// may go after this.
    func cancelAndJoin() {
        guard !joined else { return }
        joined = true
        for lane in lanes { lane.cancel() }
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

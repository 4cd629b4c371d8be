/// The spans of one run of an ``IndexedGzipInputStream`` over `first..<end`, one streamed job
/// of an ``OrderedPipeline`` each: the reader keeps a window of twice as many spans as workers
/// submitted, takes the oldest span's items while its worker decodes it, and submits the next
/// span when it finishes one. Jobs start in order, each on the first worker free (so a worker
/// that finished a cheap span goes on at once, whatever the others are doing); a span that
/// stops (an error, a mismatch, a boundary) stops the run, as the reader stops there anyway.
/// Memory: the pipeline's ``ChunkBudget`` of `chunkLimit` chunks (at least two more than the
/// workers, two of them kept for the span the reader waits for).
///
/// Not thread-safe: the reader's thread owns it. ``cancelAndJoin()`` returns once no worker runs.
struct SpanJobs {
    let pipeline: OrderedPipeline<SpanDecoder, SpanItem>
    /// The span after the last of the run.
    let end: Int
    /// The first span not submitted yet.
    private var next: Int

    /// Starts one worker per decoder (at most one per span) on the first spans.
    /// - Parameters:
    ///   - chunkLimit: The most chunks the workers hold together.
    ///   - chunkCapacity: The size in bytes of a chunk.
    init(spans: Range<Int>, decoders: [SpanDecoder], chunkLimit: Int, chunkCapacity: Int) {
        let workers = min(decoders.count, max(1, spans.count))
        let chunks = ChunkBudget(limit: max(chunkLimit, workers + 2), reserve: 2, chunkCapacity: chunkCapacity)
        pipeline = OrderedPipeline(workers: Array(decoders.prefix(workers)), maximumInFlight: 2 * workers,
                                   label: "gzstream.indexed-inflate", chunks: chunks)
        end = spans.upperBound
        next = spans.lowerBound
        while next < end && pipeline.inFlight < 2 * workers { submitNext() }
    }

    /// The chunks the spans are decoded into; the reader gives each back once read.
    var chunks: ChunkBudget { pipeline.chunks! }

    /// The next item of the oldest span not finished. Blocks.
    func nextItem() -> SpanItem {
        guard let item = pipeline.nextItem() else {
            preconditionFailure("a span's job returned without its end item")
        }
        return item
    }

    /// The reader took the oldest span's end: the next span not submitted yet goes to the pool.
    mutating func finishSpan() {
        pipeline.finishOldest()
        if next < end { submitNext() }
    }

    /// Stops every worker and waits until each has returned; the chunks may go after this.
    func cancelAndJoin() {
        pipeline.cancelAndJoin()
    }

    private mutating func submitNext() {
        let span = next
        let chunkCapacity = chunks.chunkCapacity
        pipeline.submitStreamed { decoder, job in
            decoder.decode(span: span, chunkCapacity: chunkCapacity, takeChunk: { _ in job.takeChunk() },
                           emit: job.emit)
        }
        next += 1
    }
}

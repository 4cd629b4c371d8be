import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

/// A worker state for pipeline tests: nothing but an identity.
private final class IdleWorker {}

@Suite("OrderedPipeline: ordered results from worker queues", .onDedicatedThreads)
struct OrderedPipelineTests {
    @Test("300 BGZF streams open at once, all finish (closed newest first): idle workers hold no thread")
    func manyStreamsAtOnce() throws {
        // Dispatch's pool holds about 255 threads on Linux: when idle workers waited for jobs
        // on a Dispatch thread, the oldest streams' workers held them all and the newest
        // streams' never started, so closing one waited forever. The work runs on a thread of
        // its own so that a hang fails the test rather than the whole run.
        let count = 300
        let data = textBytes(count: 1000, seed: 301)
        let finished = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var decoded: [[UInt8]] = []
        nonisolated(unsafe) var failure: (any Error)?
        let work = Thread {
            do {
                var streams: [(BGZFOutputStream, MemoryOutputStream)] = []
                for _ in 0..<count {
                    let memory = MemoryOutputStream()
                    let bgzf = try BGZFOutputStream(wrapping: memory, level: 1)
                    try bgzf.openOrThrow()
                    try bgzf.writeAll(data)
                    streams.append((bgzf, memory))
                }
                for (bgzf, memory) in streams.reversed() {
                    try bgzf.closeOrThrow()
                    decoded.append(unpack([UInt8](memory.data)).bytes)
                }
            } catch {
                failure = error
            }
            finished.signal()
        }
        work.start()
        // A hang detector, not a speed limit: the work takes well under a second here.
        guard finished.wait(timeout: .now() + 120) == .success else {
            Issue.record("the streams did not finish: a worker thread never started")
            return
        }
        #expect(failure == nil, "\(String(describing: failure))")
        #expect(decoded.count == count)
        #expect(decoded.allSatisfy { $0 == data })
    }

    @Test("Results come back in submission order whatever order the jobs finish in; at most the window in flight")
    func resultsInOrder() throws {
        let pipeline = OrderedPipeline<IdleWorker, Int>(workers: [IdleWorker(), IdleWorker(), IdleWorker()],
                                                        maximumInFlight: 5, label: "test")
        var results: [Int] = []
        var mostInFlight = 0
        for value in 0..<60 {
            // Early jobs sleep longest, so later ones finish first.
            let pause = UInt32((60 - value) % 7) * 300
            try pipeline.submit({ _, _ in
                usleep(pause)
                return value * 2
            }, deliver: { results.append($0) })
            mostInFlight = max(mostInFlight, pipeline.inFlight)
        }
        try pipeline.finish { results.append($0) }
        #expect(results == (0..<60).map { $0 * 2 })
        #expect(mostInFlight <= 5)
        #expect(pipeline.inFlight == 0)
    }

    @Test("What a job captured is released once it has run, while its worker goes on to later jobs")
    func jobReleasedAfterRunning() throws {
        // Pack's jobs capture a 1 MiB block of plain bytes. The block that started a worker
        // held its first job for as long as the worker found more, so each worker kept one
        // block (2 MiB of pack's peak on 2 threads) for the whole run.
        final class Captured: Sendable {}
        let pipeline = OrderedPipeline<IdleWorker, Int>(workers: [IdleWorker()], maximumInFlight: 4, label: "test")
        let firstMayReturn = DispatchSemaphore(value: 0)
        let secondRunning = DispatchSemaphore(value: 0)
        let secondMayReturn = DispatchSemaphore(value: 0)
        weak var captured: Captured?
        var results: [Int] = []
        do {
            let block = Captured()
            captured = block
            try pipeline.submit({ _, _ in
                firstMayReturn.wait()
                return withExtendedLifetime(block) { 0 }
            }, deliver: { results.append($0) })
        }
        // Listed before the first job returns, so the only worker goes on to it without idling.
        try pipeline.submit({ _, _ in
            secondRunning.signal()
            secondMayReturn.wait()
            return 1
        }, deliver: { results.append($0) })
        firstMayReturn.signal()
        secondRunning.wait()
        results.append(pipeline.collectNext() ?? -1)
        #expect(captured == nil, "the first job's captures outlived it while its worker ran the second")
        secondMayReturn.signal()
        try pipeline.finish { results.append($0) }
        #expect(results == [0, 1])
    }

    @Test("With a helper, the collecting thread runs a listed job itself instead of waiting for it")
    func helperRunsListedJobs() throws {
        let helper = IdleWorker()
        let helperID = ObjectIdentifier(helper)
        let pipeline = OrderedPipeline<IdleWorker, Int>(workers: [IdleWorker()], helper: helper,
                                                        maximumInFlight: 4, label: "test")
        // The only worker takes job 0, which waits until job 1 has run: job 1 can then only run
        // on the collecting thread. Without the helper job 0 waits out its timeout (returns -1).
        let secondRan = DispatchSemaphore(value: 0)
        var results: [Int] = []
        try pipeline.submit({ _, _ in
            secondRan.wait(timeout: .now() + 30) == .success ? 0 : -1
        }, deliver: { results.append($0) })
        try pipeline.submit({ worker, _ in
            secondRan.signal()
            return ObjectIdentifier(worker) == helperID ? 1 : 2
        }, deliver: { results.append($0) })
        try pipeline.finish { results.append($0) }
        #expect(results == [0, 1], "job 0 saw job 1 run; job 1 ran on the helper's state")
    }

    /// A streamed job's item: `count` bytes of `value` in a chunk of the budget.
    private struct Piece: Sendable {
        let job: Int
        let address: UInt
        let count: Int
    }

    @Test("Streamed jobs: items come in job order while jobs run; chunks in flight stay within the budget")
    func streamedItemsInOrder() throws {
        let chunks = ChunkBudget(limit: 5, reserve: 2, chunkCapacity: 16)
        let pipeline = OrderedPipeline<IdleWorker, Piece>(workers: [IdleWorker(), IdleWorker(), IdleWorker()],
                                                          maximumInFlight: 6, label: "test", chunks: chunks)
        let jobCount = 40
        let piecesPerJob = 9
        var submitted = 0
        func submitNext() {
            let job = submitted
            pipeline.submitStreamed { _, context in
                for piece in 0..<piecesPerJob {
                    guard let chunk = context.takeChunk() else { return false }
                    let count = 1 + (job + piece) % 16
                    chunk.update(repeating: UInt8(truncatingIfNeeded: job), count: count)
                    if piece % 3 == 0 { usleep(UInt32((jobCount - job) % 5) * 100) }
                    context.emit(Piece(job: job, address: UInt(bitPattern: chunk), count: count))
                }
                return true
            }
            submitted += 1
        }
        while submitted < 6 { submitNext() }
        var held = Set<UInt>()
        var everyChunk = Set<UInt>()
        for job in 0..<jobCount {
            for _ in 0..<piecesPerJob {
                let piece = try #require(pipeline.nextItem())
                #expect(piece.job == job)
                let chunk = try #require(UnsafeMutablePointer<UInt8>(bitPattern: piece.address))
                #expect(UnsafeBufferPointer(start: chunk, count: piece.count).allSatisfy { $0 == UInt8(job) })
                held.insert(piece.address)
                everyChunk.insert(piece.address)
                // Chunks go back late, two at a time, so that jobs wait for them.
                if held.count >= 2 {
                    for address in held { chunks.give(UnsafeMutablePointer(bitPattern: address)!) }
                    held.removeAll()
                }
            }
            #expect(pipeline.nextItem() == nil, "the job's stream ends after its items")
            pipeline.finishOldest()
            if submitted < jobCount { submitNext() }
        }
        #expect(pipeline.inFlight == 0)
        #expect(everyChunk.count <= 5, "no more chunks than the budget's limit were ever made")
    }

    @Test("A streamed job that returns false stops the jobs not started; cancelling wakes a job waiting for a chunk")
    func streamedStopAndCancel() throws {
        let chunks = ChunkBudget(limit: 2, reserve: 1, chunkCapacity: 8)
        let pipeline = OrderedPipeline<IdleWorker, Int>(workers: [IdleWorker()], maximumInFlight: 3,
                                                        label: "test", chunks: chunks)
        pipeline.submitStreamed { _, context in
            context.emit(0)
            return false
        }
        pipeline.submitStreamed { _, context in
            context.emit(1)
            return true
        }
        #expect(pipeline.nextItem() == 0)
        #expect(pipeline.nextItem() == nil)
        pipeline.finishOldest()
        #expect(pipeline.nextItem() == nil, "the job after the stop did not run")
        pipeline.cancelAndJoin()

        // The oldest job takes both chunks and keeps them; the next waits for one until cancelled.
        let waited = DispatchSemaphore(value: 0)
        pipeline.submitStreamed { _, context in
            _ = context.takeChunk()
            _ = context.takeChunk()
            context.emit(2)
            return true
        }
        pipeline.submitStreamed { _, context in
            waited.signal()
            return context.takeChunk() != nil
        }
        #expect(pipeline.nextItem() == 2)
        pipeline.finishOldest()
        waited.wait()
        pipeline.cancelAndJoin()
        #expect(pipeline.inFlight == 0)
    }

    @Test("A later job that stops before an earlier one's worker has started it: the earlier one still runs")
    func laterStopDoesNotSkipEarlier() throws {
        // Jobs are handed to workers in order, but a worker's thread can start its job after
        // another worker has run and stopped a later one: the consumer waits for the earlier
        // job's items, so it must run. Many rounds, for the threads to come in either order.
        let pipeline = OrderedPipeline<IdleWorker, Int>(workers: [IdleWorker(), IdleWorker()], maximumInFlight: 2,
                                                        label: "test", chunks: ChunkBudget(limit: 4, reserve: 2, chunkCapacity: 8))
        var skipped = 0
        for round in 0..<3000 {
            pipeline.submitStreamed { _, context in
                context.emit(round)
                return true
            }
            pipeline.submitStreamed { _, _ in false }
            if pipeline.nextItem() != round { skipped += 1 }
            pipeline.cancelAndJoin()
        }
        #expect(skipped == 0, "rounds in which the earlier job did not run")
    }
}

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
}

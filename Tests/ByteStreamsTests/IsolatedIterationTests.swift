import ByteStreams
import Dispatch
import Testing

// The async sequences over a stream read it on the iterating task's actor: `for try await`
// passes its isolation to `next(isolation:)`. Without that, the standard library's default ran
// `next()` off the actor, so two tasks of one actor (the main actor, say) that both iterated
// one stream, which the compiler allows as the stream never leaves the actor, read it on two
// threads at once.

/// The owner actor's executor: its jobs run on a serial queue marked with `ownerKey`, so that a
/// read can tell whether it runs there.
private final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue = {
        let queue = DispatchQueue(label: "gzstream.test.owner")
        queue.setSpecific(key: ownerKey, value: true)
        return queue
    }()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}
private let ownerKey = DispatchSpecificKey<Bool>()
private let ownerExecutor = QueueExecutor()

/// An actor whose jobs run on `ownerExecutor`'s queue.
private actor Owner {
    nonisolated var unownedExecutor: UnownedSerialExecutor { ownerExecutor.asUnownedSerialExecutor() }

    /// Iterates each kind of sequence over a stream of its own; returns per kind the reads and
    /// how many of them ran off the actor's queue.
    func iterateAll(_ text: [UInt8]) async throws -> [String: (reads: Int, off: Int)] {
        var kinds: [String: (reads: Int, off: Int)] = [:]
        let lines = QueueRecordingStream(text)
        var collected: [String] = []
        for try await line in lines.lines { collected.append(line) }
        guard collected == ["one", "two", "three"] else { throw ByteStreamError(.innerStreamFailed, operation: "lines") }
        kinds["lines"] = (lines.reads, lines.readsOffQueue)
        let raw = QueueRecordingStream(text)
        for try await _ in raw.rawLines {}
        kinds["rawLines"] = (raw.reads, raw.readsOffQueue)
        let bytes = QueueRecordingStream(text)
        for try await _ in bytes.bytes(chunkSize: 4) {}
        kinds["bytes"] = (bytes.reads, bytes.readsOffQueue)
        let chunks = QueueRecordingStream(text)
        for try await _ in chunks.chunks(maxLength: 5) {}
        kinds["chunks"] = (chunks.reads, chunks.readsOffQueue)
        return kinds
    }
}

/// Gives its data in reads of at most 7 bytes, counting the reads that ran off `ownerQueue`.
private final class QueueRecordingStream: ByteInputStream {
    private let data: [UInt8]
    private var position = 0
    private(set) var reads = 0
    private(set) var readsOffQueue = 0

    init(_ data: [UInt8]) {
        self.data = data
        super.init()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        reads += 1
        if DispatchQueue.getSpecific(key: ownerKey) != true { readsOffQueue += 1 }
        let count = min(maxLength, 7, data.count - position)
        data.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + position, count: count) }
        position += count
        return count
    }
}

@Suite("Async sequences read on the iterating actor")
struct IsolatedIterationTests {
    @Test("lines, rawLines, bytes and chunks iterated by an actor read the stream on that actor")
    func actorReads() async throws {
        let kinds = try await Owner().iterateAll(Array("one\ntwo\r\nthree\n".utf8))
        #expect(kinds.keys.sorted() == ["bytes", "chunks", "lines", "rawLines"])
        for (kind, counts) in kinds {
            #expect(counts.reads > 1, "\(kind)")
            #expect(counts.off == 0, "\(kind): \(counts.off) of \(counts.reads) reads off the actor")
        }
    }
}

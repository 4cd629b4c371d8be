import ByteStreams
import Synchronization

/// The deflate data of one member made in parallel: the plain bytes are cut into blocks of
/// `blockSize` bytes, each deflated on a worker thread and ended by a sync flush (the last by
/// the final block), so that the pieces concatenate into one valid deflate stream (RFC 1951).
/// With zlib's deflater each block has the last 32 KiB before it as preset dictionary, as pigz
/// does (the ratio stays close to one continuous deflate); with a deflater that takes no
/// dictionary (libdeflate's, ISA-L's: ``DeflateEngine/chunks``) every block is independent and
/// its start is an access point that needs no window. Each worker also computes its block's
/// CRC-32; the writer joins them with `crc32_combine`.
///
/// The output depends only on the level, the block size and where ``flush(deliver:)`` was
/// called, never on the number of threads or on how the plain bytes were split into writes.
///
/// Each worker has a deflater of its own (``WholeBufferDeflater``), made by the owner.
///
/// Memory: at most `threads + 1` blocks in flight, each `blockSize` plain bytes until a worker
/// has deflated it, then its deflate output (at most the deflater's bound, about `blockSize`
/// again, of which only what it wrote is touched), the block being filled, plus one deflater
/// per thread (zlib's: about 256 KiB; ISA-L's level 2: 324 KiB; libdeflate's: 670 KiB at 6 to
/// 9, several MiB at 10 to 12). The plain and deflate memory is reused from block to block
/// (``BlockBuffers``). Measured with 1 MiB chunks on 2 threads: 18 to 19 MiB peak RSS at levels
/// 1 and 6, of which about 10.5 MiB is the binary and its libraries (bench/memory.md).
final class BlockDeflate {
    /// One deflated block, ready to write.
    struct Block: Sendable {
        /// The block's deflate data; `nil` for a cancelled or failed block. Its bytes are valid
        /// only until the `deliver` closure given the block returns: the memory is then used
        /// for a later block.
        var deflated: DeflateOutput?
        var crc: UInt32
        var plainCount: Int
        var error: GzipError?
        /// The `\n` bytes in the block's plain bytes, when the owner counts lines (an index's
        /// line table); else 0.
        var newlineCount = 0
        /// The block's last plain byte, when it has one and lines are counted.
        var lastByte: UInt8?
    }

    /// A worker's deflater, used for every block that worker takes and only on its queue.
    final class Worker {
        let deflater: any WholeBufferDeflater
        /// The number of this worker's jobs running now (0 or 1), for tests of the join.
        let runningJobs = Atomic<Int>(0)
        init(deflater: any WholeBufferDeflater) { self.deflater = deflater }
    }

    /// The deflate window: a preset dictionary longer than this is of no use (RFC 1951 §2).
    static let windowSize = 32 << 10

    private let pipeline: OrderedPipeline<Worker, Block>
    /// The blocks' plain and deflate memory, reused from block to block.
    let buffers: BlockBuffers
    /// The most plain bytes per block: every block's size, unless `boundaries` cuts earlier.
    private let blockSize: Int
    /// Chooses where blocks end from the content (`--rsyncable`); `nil` cuts every `blockSize` bytes.
    private var boundaries: ContentDefinedChunker?
    /// Set when `block` is complete: it is submitted once more bytes come (so that the last
    /// block is ended by the final block, not a sync flush).
    private var blockIsComplete = false
    private var block: [UInt8]
    /// The last `windowSize` plain bytes before `block`: its preset dictionary, kept only for
    /// deflaters that take one.
    private var dictionary: [UInt8] = []
    private let keepsDictionary: Bool
    /// Whether each worker counts its block's `\n` bytes (``Block/newlineCount``).
    private let countsNewlines: Bool

    /// - Parameters:
    ///   - blockSize: Plain bytes per block, at least `windowSize`; with `boundaries`, the most
    ///     (its `maximumSize`).
    ///   - boundaries: Cuts the blocks where the content says (``ContentDefinedChunker``); `nil`
    ///     (the default) cuts every `blockSize` bytes.
    ///   - threads: Worker threads, at least 1.
    ///   - countsNewlines: Count each block's `\n` bytes on its worker, for an index's line
    ///     table; default `false`.
    ///   - makeDeflater: Makes one worker's deflater, called `threads` times; all alike.
    /// - Throws: What `makeDeflater` throws (a ``GzipError`` when a deflater cannot be set up).
    init(blockSize: Int, boundaries: ContentDefinedChunker? = nil, threads: Int, countsNewlines: Bool = false,
         makeDeflater: () throws(GzipError) -> any WholeBufferDeflater) throws(GzipError) {
        self.countsNewlines = countsNewlines
        precondition(boundaries.map { $0.maximumSize == blockSize } ?? true, "the chunker's maximum is the block size")
        var workers: [Worker] = []
        for _ in 0..<threads { workers.append(Worker(deflater: try makeDeflater())) }
        keepsDictionary = workers.first?.deflater.takesDictionary ?? false
        // One block per worker and one spare, so that a worker that finishes before the oldest
        // block's has the next block to take; the block being filled is the one after.
        // Measured on 2 threads (bench/memory.md): 2 × threads in flight cost about 1 MiB more
        // peak RSS per extra block for no time the benchmark could tell apart.
        pipeline = OrderedPipeline(workers: workers, maximumInFlight: threads + 1, label: "gzstream.deflate")
        // In flight, being filled, and one being written while the next is collected.
        buffers = BlockBuffers(keeping: threads + 3)
        self.blockSize = blockSize
        self.boundaries = boundaries
        block = buffers.takePlain(capacity: blockSize)
    }

    /// Takes `bytes`; each block that fills up (and is followed by more bytes) goes to a worker,
    /// and finished blocks are passed to `deliver` in order.
    /// - Throws: What `deliver` throws, or a block's zlib failure.
    func write(_ bytes: UnsafeRawBufferPointer, deliver: (Block) throws -> Void) throws {
        var offset = 0
        while offset < bytes.count {
            if blockIsComplete {
                // A full block is held until more bytes come, so the last block is ended with finish.
                try submit(last: false, deliver: deliver)
            }
            var count = min(blockSize - block.count, bytes.count - offset)
            let offered = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
            if let cut = boundaries?.nextBoundary(in: offered) {
                count = cut
                blockIsComplete = true
            }
            block.append(contentsOf: UnsafeRawBufferPointer(rebasing: offered[..<count]))
            offset += count
            if block.count == blockSize { blockIsComplete = true }
        }
    }

    /// Ends the current block with a sync flush and delivers every block: all plain bytes so far
    /// are then decodable from what was delivered.
    func flush(deliver: (Block) throws -> Void) throws {
        if !block.isEmpty {
            try submit(last: false, deliver: deliver)
            // The next block starts here, whatever the content: so does the chunker's next chunk.
            boundaries?.reset()
        }
        try pipeline.finish { try check($0, deliver) }
    }

    /// Ends the deflate data (the current block, possibly empty, is the last) and delivers
    /// every block.
    func finish(deliver: (Block) throws -> Void) throws {
        try submit(last: true, deliver: deliver)
        try pipeline.finish { try check($0, deliver) }
    }

    /// The workers' states, for tests.
    var workers: [Worker] { pipeline.workerStates }

    /// Stops the workers, waits for them and releases their deflaters; nothing more is
    /// delivered and nothing more can be written.
    func cancel() {
        pipeline.cancelAndJoin { $0.deflater.end() }
    }

    /// Delivers `finished`, then takes its deflate memory back for a later block.
    private func check(_ finished: Block, _ deliver: (Block) throws -> Void) throws {
        if let error = finished.error { throw error }
        try deliver(finished)
        if let output = finished.deflated { buffers.recycle(output) }
    }

    private func submit(last: Bool, deliver: (Block) throws -> Void) throws {
        let dictionary = self.dictionary
        if keepsDictionary {
            self.dictionary = Array((block.count >= Self.windowSize ? block : self.dictionary + block)
                .suffix(Self.windowSize))
        }
        // The worker becomes the block's only owner, so that it can hand the memory back
        // without a copy.
        let plain = PlainHandoff(block)
        block = buffers.takePlain(capacity: blockSize)
        blockIsComplete = false
        let countsNewlines = self.countsNewlines
        let buffers = self.buffers
        try pipeline.submit({ worker, isCancelled in
            let bytes = plain.take()
            if isCancelled() { return Block(deflated: nil, crc: 0, plainCount: 0, error: nil) }
            worker.runningJobs.add(1, ordering: .relaxed)
            defer { worker.runningJobs.subtract(1, ordering: .relaxed) }
            var block = Self.deflate(bytes, dictionary: dictionary, last: last, with: worker.deflater, buffers: buffers)
            if countsNewlines {
                block.newlineCount = bytes.withUnsafeBytes { NewlineCounter.count(in: $0) }
                block.lastByte = bytes.last
            }
            buffers.recycle(plain: consume bytes)
            return block
        }, deliver: { try check($0, deliver) })
    }

    /// Deflates `plain` with `dictionary` preset, ending with a sync flush or, when `last`,
    /// with finish. Runs on a worker.
    private static func deflate(_ plain: [UInt8], dictionary: [UInt8], last: Bool,
                                with deflater: some WholeBufferDeflater, buffers: BlockBuffers) -> Block {
        let crc = plain.withUnsafeBytes { crc32(0, $0) }
        // Should the deflater's bound ever be short, the block is deflated again into twice the room.
        var capacity = deflater.compressBound(plain.count)
        while true {
            let output = buffers.takeDeflated(capacity: capacity)
            let result = plain.withUnsafeBytes { input in
                dictionary.withUnsafeBytes { dictionary in
                    Result { () throws(GzipError) -> Int? in
                        try deflater.compress(input, dictionary: dictionary, isFinal: last, into: output.storage)
                    }
                }
            }
            switch result {
            case .failure(let failure):
                buffers.recycle(output)
                return Block(deflated: nil, crc: crc, plainCount: plain.count, error: failure)
            case .success(let produced?):
                output.count = produced
                return Block(deflated: output, crc: crc, plainCount: plain.count, error: nil)
            case .success(.none):
                buffers.recycle(output)
                capacity *= 2
            }
        }
    }
}

/// A block's plain bytes on their way to the worker that deflates them, taken once there, so
/// that the worker holds the only reference and can give the memory back without a copy.
/// `Sendable` is unchecked because `bytes` is a `var`: it is written before the job is submitted
/// and read once, on the worker.
private final class PlainHandoff: @unchecked Sendable {
    private var bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }
}

/// The deflate data of one block, in memory allocated once (`malloc`, untouched until written)
/// and reused for later blocks through ``BlockBuffers``.
///
/// Ownership passes along the pipeline, one holder at a time: the worker that fills it, the
/// thread it is delivered to (which may read ``bytes`` only until its `deliver` returns), then
/// the pool. `Sendable` is unchecked for that reason: the pipeline's hand-offs order every access.
final class DeflateOutput: @unchecked Sendable {
    /// All the memory, `capacity` bytes.
    let storage: UnsafeMutableRawBufferPointer
    /// The deflate bytes at the start of ``storage``.
    var count = 0

    init(capacity: Int) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, capacity), alignment: 16)
    }

    deinit { storage.deallocate() }

    /// The deflate bytes: the first ``count`` bytes of ``storage``.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<count]) }
}

/// The plain and deflate memory of ``BlockDeflate``'s blocks, handed back when a block is done
/// with and given out again, so that a long run allocates a few blocks' worth once instead of
/// two buffers a block. Freed on other threads than the one that allocated them, 1 MiB buffers
/// left glibc's per-thread arenas holding about 3 MiB more than the blocks in use (peak RSS of
/// pack -1 and -6 of the 256 MiB corpora on 2 threads: 20-22 MiB); returning such memory to the
/// system at once instead (`MALLOC_TRIM_THRESHOLD_`) cost 5-17% more time in page faults.
///
/// Keeps at most `keeping` buffers of each kind; more are freed. Thread safety: every method
/// may be called from any thread (a serial queue guards the lists).
final class BlockBuffers: Sendable {
    private let plain = QueueGuarded<[[UInt8]]>([], label: "gzstream.deflate.plain")
    private let deflated = QueueGuarded<[DeflateOutput]>([], label: "gzstream.deflate.output")
    private let keeping: Int
    /// The plain buffers and deflate buffers allocated so far, for tests of the reuse.
    let allocations = Atomic<Int>(0)

    init(keeping: Int) { self.keeping = keeping }

    /// An empty array with room for `capacity` bytes: one handed back before, or a new one.
    func takePlain(capacity: Int) -> [UInt8] {
        if let bytes = plain.withLock({ $0.popLast() }), bytes.capacity >= capacity { return bytes }
        allocations.add(1, ordering: .relaxed)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity)
        return bytes
    }

    /// Takes `bytes` back (emptied, its memory kept) for a later ``takePlain(capacity:)``.
    func recycle(plain bytes: consuming [UInt8]) {
        // The caller gave up its reference: emptying keeps the memory rather than copying.
        bytes.removeAll(keepingCapacity: true)
        let kept = bytes
        plain.withLock { if $0.count < keeping { $0.append(kept) } }
    }

    /// A buffer of at least `capacity` bytes: one handed back before, or a new one.
    func takeDeflated(capacity: Int) -> DeflateOutput {
        if let output = deflated.withLock({ $0.popLast() }), output.storage.count >= capacity {
            output.count = 0
            return output
        }
        allocations.add(1, ordering: .relaxed)
        return DeflateOutput(capacity: capacity)
    }

    /// Takes `output` back for a later ``takeDeflated(capacity:)``; nothing may use it after.
    func recycle(_ output: DeflateOutput) {
        deflated.withLock { if $0.count < keeping { $0.append(output) } }
    }
}

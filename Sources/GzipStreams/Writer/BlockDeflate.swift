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
/// 9, several MiB at 10 to 12). Measured with 1 MiB chunks on 2 threads: 19 to 20 MiB peak
/// RSS at levels 1 to 9, of which about 10 MiB is the binary and its libraries
/// (bench/memory.md).
final class BlockDeflate {
    /// One deflated block, ready to write.
    struct Block: Sendable {
        var deflated: [UInt8]
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
        self.blockSize = blockSize
        self.boundaries = boundaries
        block = []
        block.reserveCapacity(blockSize)
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

    private func check(_ finished: Block, _ deliver: (Block) throws -> Void) throws {
        if let error = finished.error { throw error }
        try deliver(finished)
    }

    private func submit(last: Bool, deliver: (Block) throws -> Void) throws {
        let plain = block
        let dictionary = self.dictionary
        let countsNewlines = self.countsNewlines
        try pipeline.submit({ worker, isCancelled in
            if isCancelled() { return Block(deflated: [], crc: 0, plainCount: 0, error: nil) }
            worker.runningJobs.add(1, ordering: .relaxed)
            defer { worker.runningJobs.subtract(1, ordering: .relaxed) }
            var block = Self.deflate(plain, dictionary: dictionary, last: last, with: worker.deflater)
            if countsNewlines {
                block.newlineCount = plain.withUnsafeBytes { NewlineCounter.count(in: $0) }
                block.lastByte = plain.last
            }
            return block
        }, deliver: { try check($0, deliver) })
        if keepsDictionary {
            self.dictionary = Array((plain.count >= Self.windowSize ? plain : self.dictionary + plain)
                .suffix(Self.windowSize))
        }
        block = []
        block.reserveCapacity(blockSize)
        blockIsComplete = false
    }

    /// Deflates `plain` with `dictionary` preset, ending with a sync flush or, when `last`,
    /// with finish. Runs on a worker.
    private static func deflate(_ plain: [UInt8], dictionary: [UInt8], last: Bool,
                                with deflater: some WholeBufferDeflater) -> Block {
        let crc = plain.withUnsafeBytes { crc32(0, $0) }
        // Should the deflater's bound ever be short, the block is deflated again into twice the room.
        var capacity = deflater.compressBound(plain.count)
        while true {
            var result: Result<Int?, GzipError> = .success(nil)
            let output = [UInt8](unsafeUninitializedCapacity: capacity) { out, initializedCount in
                result = plain.withUnsafeBytes { input in
                    dictionary.withUnsafeBytes { dictionary in
                        Result { () throws(GzipError) -> Int? in
                            try deflater.compress(input, dictionary: dictionary, isFinal: last,
                                                  into: UnsafeMutableRawBufferPointer(out))
                        }
                    }
                }
                if case .success(let produced?) = result { initializedCount = produced }
            }
            switch result {
            case .failure(let failure):
                return Block(deflated: [], crc: crc, plainCount: plain.count, error: failure)
            case .success(.some):
                return Block(deflated: output, crc: crc, plainCount: plain.count, error: nil)
            case .success(.none):
                capacity *= 2
            }
        }
    }
}

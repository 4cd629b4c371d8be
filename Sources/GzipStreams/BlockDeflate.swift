import CZlib
import Synchronization

/// The deflate data of one member made as pigz makes it: the plain bytes are cut into blocks of
/// `blockSize` bytes, each deflated on a worker thread with the last 32 KiB before it as preset
/// dictionary (so the ratio stays close to one continuous deflate), each ended by a sync flush
/// (the last by finish), so that the pieces concatenate into one valid deflate stream
/// (RFC 1951). Each worker also computes its block's CRC-32; the writer joins them with
/// `crc32_combine`.
///
/// The output depends only on the level, the block size and where ``flush(deliver:)`` was
/// called, never on the number of threads or on how the plain bytes were split into writes.
///
/// Memory: at most `2 × threads` blocks in flight, each `blockSize` plain bytes plus their
/// deflate output, plus one zlib deflate state (about 256 KiB) per thread.
final class BlockDeflate {
    /// One deflated block, ready to write.
    struct Block: Sendable {
        var deflated: [UInt8]
        var crc: UInt32
        var plainCount: Int
        var error: GzipError?
    }

    /// A worker's zlib deflater, reset for every block; used only on that worker's queue.
    final class Worker {
        let zstream: ZStream
        /// The number of this worker's jobs running now (0 or 1), for tests of the join.
        let runningJobs = Atomic<Int>(0)
        init(level: Int) throws(GzipError) { zstream = try ZStream(deflateLevel: level) }
    }

    /// The deflate window: a preset dictionary longer than this is of no use (RFC 1951 §2).
    static let windowSize = 32 << 10

    private let pipeline: OrderedPipeline<Worker, Block>
    private let blockSize: Int
    private var block: [UInt8]
    /// The last `windowSize` plain bytes before `block`: its preset dictionary.
    private var dictionary: [UInt8] = []

    /// - Parameters:
    ///   - level: zlib compression level, 0...9.
    ///   - blockSize: Plain bytes per block, at least `windowSize`.
    ///   - threads: Worker threads, at least 1.
    /// - Throws: ``GzipError/zlibFailure(code:message:)`` when a deflater cannot be set up.
    init(level: Int, blockSize: Int, threads: Int) throws(GzipError) {
        var workers: [Worker] = []
        for _ in 0..<threads { workers.append(try Worker(level: level)) }
        pipeline = OrderedPipeline(workers: workers, maximumInFlight: 2 * threads, label: "gzstream.deflate")
        self.blockSize = blockSize
        block = []
        block.reserveCapacity(blockSize)
    }

    /// Takes `bytes`; each block that fills up (and is followed by more bytes) goes to a worker,
    /// and finished blocks are passed to `deliver` in order.
    /// - Throws: What `deliver` throws, or a block's zlib failure.
    func write(_ bytes: UnsafeRawBufferPointer, deliver: (Block) throws -> Void) throws {
        var offset = 0
        while offset < bytes.count {
            if block.count == blockSize {
                // A full block is held until more bytes come, so the last block is ended with finish.
                try submit(last: false, deliver: deliver)
            }
            let count = min(blockSize - block.count, bytes.count - offset)
            block.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
            offset += count
        }
    }

    /// Ends the current block with a sync flush and delivers every block: all plain bytes so far
    /// are then decodable from what was delivered.
    func flush(deliver: (Block) throws -> Void) throws {
        if !block.isEmpty { try submit(last: false, deliver: deliver) }
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

    /// Stops the workers, waits for them and releases their zlib states; nothing more is
    /// delivered and nothing more can be written.
    func cancel() {
        pipeline.cancelAndJoin { $0.zstream.end() }
    }

    private func check(_ finished: Block, _ deliver: (Block) throws -> Void) throws {
        if let error = finished.error { throw error }
        try deliver(finished)
    }

    private func submit(last: Bool, deliver: (Block) throws -> Void) throws {
        let plain = block
        let dictionary = self.dictionary
        try pipeline.submit({ worker, isCancelled in
            if isCancelled() { return Block(deflated: [], crc: 0, plainCount: 0, error: nil) }
            worker.runningJobs.add(1, ordering: .relaxed)
            defer { worker.runningJobs.subtract(1, ordering: .relaxed) }
            return Self.deflate(plain, dictionary: dictionary, last: last, zstream: worker.zstream)
        }, deliver: { try check($0, deliver) })
        if plain.count >= Self.windowSize {
            self.dictionary = Array(plain.suffix(Self.windowSize))
        } else {
            self.dictionary = Array((self.dictionary + plain).suffix(Self.windowSize))
        }
        block = []
        block.reserveCapacity(blockSize)
    }

    /// Deflates `plain` with `dictionary` preset, ending with a sync flush or, when `last`,
    /// with finish. Runs on a worker. Wraps zlib's `deflateSetDictionary` and `deflate`.
    private static func deflate(_ plain: [UInt8], dictionary: [UInt8], last: Bool, zstream: ZStream) -> Block {
        let z = zstream.pointer
        let crc = plain.withUnsafeBytes { crc32(0, $0) }
        // deflateBound covers the data; a sync flush adds at most an empty stored block. Should
        // that ever be short, the block is deflated again into twice the room.
        var capacity = Int(deflateBound(z, UInt(plain.count))) + 64
        while true {
            var failure: GzipError?
            var complete = false
            let output = [UInt8](unsafeUninitializedCapacity: capacity) { out, initializedCount in
                zstream.reset()
                defer {
                    z.pointee.next_in = nil
                    z.pointee.next_out = nil
                }
                if !dictionary.isEmpty {
                    let code = dictionary.withUnsafeBufferPointer {
                        deflateSetDictionary(z, $0.baseAddress, UInt32($0.count))
                    }
                    guard code == Z_OK else {
                        failure = .zlibFailure(code: code, message: ZStream.message(for: code, stream: z))
                        return
                    }
                }
                plain.withUnsafeBufferPointer { input in
                    z.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                    z.pointee.avail_in = UInt32(input.count)
                    z.pointee.next_out = out.baseAddress
                    z.pointee.avail_out = UInt32(out.count)
                    let code = CZlib.deflate(z, last ? Z_FINISH : Z_SYNC_FLUSH)
                    guard code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR else {
                        failure = .zlibFailure(code: code, message: ZStream.message(for: code, stream: z))
                        return
                    }
                    initializedCount = out.count - Int(z.pointee.avail_out)
                    complete = last ? code == Z_STREAM_END : (z.pointee.avail_in == 0 && z.pointee.avail_out != 0)
                }
            }
            if let failure { return Block(deflated: [], crc: crc, plainCount: plain.count, error: failure) }
            if complete { return Block(deflated: output, crc: crc, plainCount: plain.count, error: nil) }
            capacity *= 2
        }
    }
}

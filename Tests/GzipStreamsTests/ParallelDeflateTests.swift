import ByteStreams
import Foundation
import Synchronization
@testable import GzipStreams
import Testing
import TestSupport

/// `data` packed by a parallel ``GzipOutputStream`` into memory, offered in writes whose sizes
/// come from `writeSizes` in turn.
func packInBlocks(_ data: [UInt8], level: Int = 6, threads: Int, blockSize: Int? = GzipOutputStream.defaultBlockSize,
                  engine: DeflateEngine = .chunks,
                  writeSizes: [Int] = [1 << 20], chunkSize: Int = ByteStream.defaultChunkSize) throws -> [UInt8] {
    let memory = MemoryOutputStream()
    let gzip = try GzipOutputStream(wrapping: memory, level: level, chunkSize: chunkSize, threads: threads,
                                    blockSize: blockSize, engine: engine)
    try gzip.openOrThrow()
    try writeInSlices(data, to: gzip, writeSizes: writeSizes)
    try gzip.closeOrThrow()
    #expect(gzip.compressedByteCount == Int64(memory.writtenCount))
    #expect(gzip.uncompressedByteCount == Int64(data.count))
    return [UInt8](memory.data)
}

/// Fails every write once `limit` bytes were taken, as a full disk would.
final class FailingOutputStream: ByteOutputStream {
    static let failure = ByteStreamError(.system(errno: ENOSPC), operation: "write", target: "failing test stream")
    private let limit: Int
    private(set) var taken = 0

    init(failingAfter limit: Int) {
        self.limit = limit
        super.init()
    }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        if taken + maxLength > limit { throw Self.failure }
        taken += maxLength
        return maxLength
    }
}

/// The worker states of a parallel gzip stream right now (empty once it closed), by reflection.
func currentDeflateWorkers(of stream: GzipOutputStream) -> [BlockDeflate.Worker] {
    let blockDeflate = Mirror(reflecting: stream).children.first { $0.label == "blockDeflate" }?.value as? BlockDeflate
    return blockDeflate?.workers ?? []
}

@Suite("Parallel deflate: blocks on worker threads, one member", .onDedicatedThreads)
struct ParallelDeflateTests {
    static let blockSize = GzipOutputStream.defaultBlockSize
    /// Around the block size and the 32 KiB dictionary, and several blocks.
    static let sizes = [0, 1, 32_767, 32_768, 32_769, blockSize - 1, blockSize, blockSize + 1,
                        3 * blockSize, 3 * blockSize + 7, 2_500_000]

    @Test("The output is the same for 1, 2, 3 and 8 threads, and decodes to the input",
          arguments: DeflateEngine.allCases, [0, 1, 2, 6, 9])
    func sameBytesForEveryThreadCount(engine: DeflateEngine, level: Int) throws {
        for size in Self.sizes {
            let data = mixedBytes(count: size, seed: UInt64(size))
            let reference = try packInBlocks(data, level: level, threads: 1, engine: engine)
            for threads in [2, 3, 8] {
                let packed = try packInBlocks(data, level: level, threads: threads, engine: engine)
                #expect(packed == reference, "\(engine) level \(level), \(size) bytes, \(threads) threads")
            }
            // RFC 1952 §2.3.1: the trailer's CRC-32 and ISIZE, joined from the blocks' CRCs.
            #expect(littleEndianUInt32(reference, at: reference.count - 8) == referenceCRC32(data))
            #expect(littleEndianUInt32(reference, at: reference.count - 4) == UInt32(truncatingIfNeeded: size))
            let decoded = unpack(reference)
            #expect(decoded.error == nil, "level \(level), \(size) bytes: \(String(describing: decoded.error))")
            #expect(decoded.bytes == data, "level \(level), \(size) bytes")
        }
    }

    @Test("Level 1's chunks (ISA-L) are the same bytes on every run and thread count")
    func isalChunksAreDeterministic() throws {
        // ISA-L kept hash tables from earlier calls, or read uninitialized state, so a chunk's
        // bytes depended on which worker took it: this failed in 6 of 90 packs before the fix.
        let data = mixedBytes(count: 2_500_000, seed: 2_500_000)
        let reference = try packInBlocks(data, level: 1, threads: 1)
        for round in 0..<20 {
            for threads in [2, 3, 8] {
                let same = try packInBlocks(data, level: 1, threads: threads) == reference
                #expect(same, "round \(round), \(threads) threads")
            }
        }
    }

    @Test("How the input is split into writes does not change the output", arguments: DeflateEngine.allCases)
    func writeSizesDoNotMatter(engine: DeflateEngine) throws {
        let data = mixedBytes(count: 700_000, seed: 5)
        let reference = try packInBlocks(data, threads: 2, engine: engine)
        for writeSizes in [[1, 4096, 77], [4096], [131_071, 1, 131_073], [700_000]] {
            #expect(try packInBlocks(data, threads: 3, engine: engine, writeSizes: writeSizes) == reference,
                    "writes \(writeSizes)")
        }
        // Compressed chunks handed to the inner stream are at most chunkSize; the bytes are the same.
        #expect(try packInBlocks(data, threads: 2, engine: engine, chunkSize: 7) == reference)
    }

    @Test("One member that GNU gzip, pigz and bgzip read; ratio within 1% of one continuous deflate",
          .requires(.gzip), .requires(.pigz), .requires(.bgzip), arguments: DeflateEngine.allCases)
    func otherToolsReadIt(engine: DeflateEngine) throws {
        let data = mixedBytes(count: 3_000_000, seed: 9)
        // Each engine's own block size: 1 MiB chunks, 128 KiB zlib blocks.
        let packed = try packInBlocks(data, threads: 2, blockSize: nil, engine: engine)
        let continuous = try pack(data)
        #expect(Double(packed.count) <= Double(continuous.count) * 1.01,
                "parallel \(packed.count) bytes vs continuous \(continuous.count)")
        #expect(unpack(packed).bytes == data)
        try withTemporaryDirectory { directory in
            let path = try makeFile("parallel.gz", in: directory, bytes: packed)
            let expected = try sha256(of: data)
            for tool in [Tool.gzip, .pigz, .bgzip] {
                let result = try runProcess(try #require(tool.path), ["-dc", path])
                #expect(result.status == 0, "\(tool.name): \(result.stderrText)")
                #expect(try sha256(of: result.stdout) == expected, "\(tool.name) output differs")
            }
        }
    }

    @Test("The blocks' plain and deflate memory is reused: a long run allocates a few blocks' worth, not two buffers a block",
          arguments: DeflateEngine.allCases, [2, 3])
    func blockMemoryIsReused(engine: DeflateEngine, threads: Int) throws {
        let blockSize = GzipOutputStream.minimumBlockSize
        let data = mixedBytes(count: 60 * blockSize + 5, seed: 21)
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, level: 6, threads: threads, blockSize: blockSize, engine: engine)
        try gzip.openOrThrow()
        try writeInSlices(data, to: gzip, writeSizes: [4096, 65_537])
        let blockDeflate = try #require(Mirror(reflecting: gzip).children.first { $0.label == "blockDeflate" }?.value
                                        as? BlockDeflate)
        let allocations = blockDeflate.buffers.allocations.load(ordering: .relaxed)
        try gzip.closeOrThrow()
        // Each kind: the blocks in flight (threads + 1), the one being filled, one being written.
        #expect(allocations <= 2 * (threads + 3), "\(allocations) buffers for 60 blocks")
        #expect(unpack([UInt8](memory.data)).bytes == data)
        #expect(try packInBlocks(data, threads: 1, blockSize: blockSize, engine: engine) == [UInt8](memory.data))
    }

    @Test("A block size other than the default changes the cut points, not the content",
          arguments: DeflateEngine.allCases)
    func otherBlockSizes(engine: DeflateEngine) throws {
        let data = mixedBytes(count: 1_000_000, seed: 11)
        for blockSize in [GzipOutputStream.minimumBlockSize, 100_000, 1 << 20, 4 << 20] {
            let packed = try packInBlocks(data, threads: 2, blockSize: blockSize, engine: engine)
            #expect(try packInBlocks(data, threads: 1, blockSize: blockSize, engine: engine) == packed,
                    "block size \(blockSize)")
            #expect(unpack(packed).bytes == data, "block size \(blockSize)")
        }
    }

    @Test("threads above 1 without a block size use the chunks engine's 1 MiB chunks (zlib's: 128 KiB blocks); threads 1 alone keeps one continuous deflate")
    func defaults() throws {
        let data = mixedBytes(count: 2_400_000, seed: 3)
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, threads: 4)
        #expect(gzip.engine == .chunks && gzip.blockSize == 1 << 20)
        try gzip.openOrThrow()
        try gzip.writeAll(data)
        try gzip.closeOrThrow()
        #expect([UInt8](memory.data) == (try packInBlocks(data, threads: 1, blockSize: 1 << 20)))
        #expect(try GzipOutputStream(wrapping: MemoryOutputStream(), threads: 2, engine: .zlib).blockSize
                == GzipOutputStream.defaultBlockSize)
        let single = try GzipOutputStream(wrapping: MemoryOutputStream())
        #expect(single.blockSize == nil && single.engine == nil)
        #expect(try pack(data) != (try packInBlocks(data, threads: 1)))
        // Levels above 9 are the chunks engine's alone.
        #expect(try GzipOutputStream(wrapping: MemoryOutputStream(), level: 12).engine == .chunks)
        #expect(throws: ByteStreamError.self) {
            try GzipOutputStream(wrapping: MemoryOutputStream(), level: 10, engine: .zlib)
        }
    }

    @Test("flush() makes every byte written so far decodable, and the stream goes on",
          arguments: DeflateEngine.allCases)
    func flushMakesEverythingDecodable(engine: DeflateEngine) throws {
        let first = mixedBytes(count: 300_001, seed: 21)
        let second = textBytes(count: 5000, seed: 22)
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, threads: 2, engine: engine)
        try gzip.openOrThrow()
        try gzip.writeAll(first)
        try gzip.flush()
        // What was written up to the flush decodes to `first`, then ends as a truncated member.
        let partial = unpack([UInt8](memory.data))
        #expect(partial.bytes == first)
        #expect(partial.gzipError?.kind == "truncated")
        try gzip.flush()   // nothing new: a second flush adds nothing that changes the data
        try gzip.writeAll(second)
        try gzip.closeOrThrow()
        let whole = unpack([UInt8](memory.data))
        #expect(whole.error == nil)
        #expect(whole.bytes == first + second)
    }

    /// After close, no job runs and every worker's zlib state was released.
    func expectJoined(_ workers: [BlockDeflate.Worker], _ comment: Comment) {
        #expect(workers.allSatisfy { $0.runningJobs.load(ordering: .relaxed) == 0 }, comment)
        #expect(workers.allSatisfy { !$0.deflater.isLive }, comment)
    }

    @Test("An inner stream that fails mid-member: the error surfaces, no trailer, every worker joined")
    func innerFailureStopsEverything() throws {
        let data = mixedBytes(count: 2_000_000, seed: 31)
        for limit in [5, 20_000, 300_000] {
            let failing = FailingOutputStream(failingAfter: limit)
            let gzip = try GzipOutputStream(wrapping: failing, threads: 3)
            var workers: [BlockDeflate.Worker] = []
            var thrown: (any Error)?
            do {
                try gzip.openOrThrow()   // the 10-byte header already fails at limit 5
                workers = currentDeflateWorkers(of: gzip)
                #expect(workers.count == 3)
                try gzip.writeAll(data)
                try gzip.closeOrThrow()
            } catch {
                thrown = error
            }
            #expect(thrown as? ByteStreamError == FailingOutputStream.failure, "limit \(limit)")
            #expect(gzip.streamStatus == .error)
            gzip.close()
            #expect(failing.taken <= limit)
            expectJoined(workers, "limit \(limit)")
        }
    }

    @Test("abandon() joins the workers and writes no trailer")
    func abandonJoinsWorkers() throws {
        let data = mixedBytes(count: 1_500_000, seed: 41)
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, threads: 2)
        try gzip.openOrThrow()
        try gzip.writeAll(data)
        let workers = currentDeflateWorkers(of: gzip)
        #expect(workers.count == 2)
        gzip.abandon()
        expectJoined(workers, "after abandon")
        let decoded = unpack([UInt8](memory.data))
        #expect(decoded.gzipError?.kind == "truncated")
        #expect(decoded.bytes.count < data.count)
        #expect(decoded.bytes == Array(data.prefix(decoded.bytes.count)))
    }
}

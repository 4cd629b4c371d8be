import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

/// `data` packed by the chunks engine into memory with `buildsIndex`, and the index.
func packWithIndex(_ data: [UInt8], level: Int = 6, threads: Int = 2, blockSize: Int? = nil, rsyncable: Bool = false,
                   writeSizes: [Int] = [1 << 20]) throws -> (packed: [UInt8], index: GzipIndex) {
    let memory = MemoryOutputStream()
    let gzip = try GzipOutputStream(wrapping: memory, level: level, threads: threads, blockSize: blockSize,
                                    rsyncable: rsyncable, buildsIndex: true)
    try gzip.openOrThrow()
    #expect(gzip.index == nil)
    try writeInSlices(data, to: gzip, writeSizes: writeSizes)
    try gzip.closeOrThrow()
    return ([UInt8](memory.data), try #require(gzip.index))
}

/// The compressed bytes of each chunk, cut at the index's points (the trailer left out).
func compressedChunks(_ packed: [UInt8], _ index: GzipIndex) -> [[UInt8]] {
    let starts = index.points.map { Int($0.compressedOffset) } + [packed.count - GzipTrailer.size]
    return zip(starts, starts.dropFirst()).map { Array(packed[$0..<$1]) }
}

@Suite("The chunks engine's index and --rsyncable", .onDedicatedThreads)
struct ChunkIndexTests {
    @Test("An access point at each chunk start, each decodable alone to the rest of the data",
          arguments: [0, 1, 2, 6])
    func pointsAreAccessPoints(level: Int) throws {
        let data = mixedBytes(count: 300_000, seed: 3)
        let (packed, index) = try packWithIndex(data, level: level, blockSize: 64 << 10)
        #expect(index.points.count == 5)   // 300,000 bytes in 64 KiB chunks
        #expect(index.points.first == GzipAccessPoint(compressedOffset: 10, plainOffset: 0))
        #expect(index.points.map(\.plainOffset) == (0..<5).map { UInt64($0 * 65536) })
        #expect(index.compressedSize == UInt64(packed.count) && index.plainSize == UInt64(data.count))
        #expect(index.spacing == 65536 && index.windowSize == 32768)
        #expect(index.points.allSatisfy { $0.window == nil && $0.bitOffset == 0 })
        for point in index.points {
            let rest = Array(data[Int(point.plainOffset)...])
            let tail = Array(packed[Int(point.compressedOffset)..<(packed.count - GzipTrailer.size)])
            let decoded = unpack(member(deflateData: tail, plain: rest))
            #expect(decoded.error == nil && decoded.bytes == rest, "level \(level), from plain \(point.plainOffset)")
        }
        // The encoded index reads back the same.
        #expect(try GzipIndex(gzidx: index.gzidxEncoded()) == index)
    }

    @Test("An empty input has one point; a flush starts a new chunk and a new point")
    func emptyAndFlushed() throws {
        let empty = try packWithIndex([])
        #expect(empty.index.points == [GzipAccessPoint(compressedOffset: 10, plainOffset: 0)])
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, threads: 2, buildsIndex: true)
        try gzip.openOrThrow()
        try gzip.writeAll(textBytes(count: 1000, seed: 1))
        try gzip.flush()
        try gzip.writeAll(textBytes(count: 2000, seed: 2))
        try gzip.closeOrThrow()
        #expect(gzip.index?.points.map(\.plainOffset) == [0, 1000])
    }

    @Test("Without buildsIndex there is no index; the zlib engine cannot build one or be rsyncable")
    func indexNeedsTheChunksEngine() throws {
        let gzip = try GzipOutputStream(wrapping: MemoryOutputStream(), threads: 2)
        try gzip.openOrThrow()
        try gzip.closeOrThrow()
        #expect(gzip.index == nil)
        #expect(throws: ByteStreamError.self) {
            try GzipOutputStream(wrapping: MemoryOutputStream(), threads: 2, engine: .zlib, buildsIndex: true)
        }
        #expect(throws: ByteStreamError.self) {
            try GzipOutputStream(wrapping: MemoryOutputStream(), threads: 2, engine: .zlib, rsyncable: true)
        }
        // Either alone selects the chunks engine.
        #expect(try GzipOutputStream(wrapping: MemoryOutputStream(), rsyncable: true).engine == .chunks)
    }

    @Test("rsyncable: one byte inserted at the start changes only the first chunk's compressed bytes; the output is the same for any thread count and split")
    func rsyncableResynchronises() throws {
        let data = mixedBytes(count: 6_000_000, seed: 17)
        let blockSize = 128 << 10
        let (original, originalIndex) = try packWithIndex(data, blockSize: blockSize, rsyncable: true)
        let (edited, editedIndex) = try packWithIndex([42] + data, blockSize: blockSize, rsyncable: true)
        #expect(unpack(edited).bytes == [42] + data)
        let before = Set(compressedChunks(original, originalIndex))
        let after = compressedChunks(edited, editedIndex)
        let shared = after.filter(before.contains)
        #expect(after.count > 20)
        #expect(shared.count >= after.count - 2, "\(shared.count) of \(after.count) chunks unchanged")
        // Chunk sizes stay between a quarter and twice the block size (the last may be shorter).
        let sizes = zip(originalIndex.points, originalIndex.points.dropFirst()).map { $1.plainOffset - $0.plainOffset }
        #expect(sizes.allSatisfy { (UInt64(blockSize / 4)...UInt64(2 * blockSize)).contains($0) }, "\(sizes)")
        for threads in [1, 3] {
            #expect(try packWithIndex(data, threads: threads, blockSize: blockSize, rsyncable: true,
                                      writeSizes: [1, 70_000, 4096]).packed == original)
        }
        // The price in size: at most 2% over the fixed chunks of the same average size.
        let fixed = try packWithIndex(data, blockSize: blockSize).packed
        #expect(Double(original.count) <= Double(fixed.count) * 1.02, "\(original.count) vs \(fixed.count)")
    }

    @Test("indexed_gzip and rapidgzip read the right bytes through the index pack writes", .requiresPythonOracle)
    func readersUseThePackIndex() throws {
        let data = mixedBytes(count: 3_500_000, seed: 29)
        let (packed, index) = try packWithIndex(data)
        try withTemporaryDirectory { directory in
            let path = try makeFile("data.gz", in: directory, bytes: packed)
            let indexPath = try makeFile("data.gz.gzidx", in: directory, bytes: index.gzidxEncoded())
            let length = 5000
            let offsets = [0, 1, 1 << 20, (1 << 20) - 7, 2_500_000, (3 << 20) + 1, data.count - length]
            let expected = offsets.flatMap { data[$0..<min(data.count, $0 + length)] }
            for reader in ["indexed_gzip", "rapidgzip"] {
                let read = try runOracle(readThroughIndexScript, [reader, path, indexPath, String(length),
                                                                  offsets.map(String.init).joined(separator: ",")])
                #expect(read.status == 0, "\(reader): \(read.stderrText)")
                #expect(read.stdout == expected, "\(reader) read \(read.stdout.count) bytes")
            }
        }
    }
}

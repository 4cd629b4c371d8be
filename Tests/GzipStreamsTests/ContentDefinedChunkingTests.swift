@testable import GzipStreams
import Testing
import TestSupport

/// Chunk sizes small enough that a few MiB give hundreds of chunks, so every path of the chunker
/// (skip, hash, test, forced cut) runs many times, and with pieces that end inside each.
private let smallSizes = ChunkSizes(label: "256 B / 4 KiB / 16 KiB", minimum: 256, average: 4096, maximum: 16384)
/// The chunker's defaults, the ones `--rsyncable` packing uses.
private let defaultSizes = ChunkSizes(label: "defaults (256 KiB / 1 MiB / 4 MiB)", minimum: 256 << 10,
                                      average: 1 << 20, maximum: 4 << 20)

/// A chunker's three sizes, named for test output.
struct ChunkSizes: Sendable, CustomTestStringConvertible {
    var label: String
    var minimum: Int
    var average: Int
    var maximum: Int

    var testDescription: String { label }

    var chunker: ContentDefinedChunker {
        ContentDefinedChunker(minimumSize: minimum, averageSize: average, maximumSize: maximum)
    }

    /// Data to chunk with these sizes: about 500 small chunks, or 8 default ones.
    var sampleData: [UInt8] { Array(sixtyFourMiB.prefix(minimum < 4096 ? 2 << 20 : 8 << 20)) }
}

/// 64 MiB of ``mixedBytes(count:seed:)`` (text with stretches of random bytes), made once for
/// every test that needs it.
private let sixtyFourMiB = mixedBytes(count: 64 << 20, seed: 19)
/// The default chunker's cuts in ``sixtyFourMiB``, found once for every edit compared with it.
private let sixtyFourMiBCuts = cuts(in: sixtyFourMiB, chunker: defaultSizes.chunker)

/// How input is cut into calls of ``ContentDefinedChunker/nextBoundary(in:)``: the sizes of the
/// pieces in turn, repeated until the input ends.
struct SplitPattern: Sendable, CustomTestStringConvertible {
    var label: String
    var pieceSizes: [Int]

    var testDescription: String { label }

    static let all: [SplitPattern] = [
        .init(label: "1 byte at a time", pieceSizes: [1]),
        .init(label: "4095 bytes", pieceSizes: [4095]),
        .init(label: "4096 bytes", pieceSizes: [4096]),
        .init(label: "4097 bytes", pieceSizes: [4097]),
        .init(label: "1 MiB + 1", pieceSizes: [(1 << 20) + 1]),
        .init(label: "around the window: 1, 63, 64, 65, 255, 256, 257 bytes", pieceSizes: [1, 63, 64, 65, 255, 256, 257]),
        .init(label: "seeded sizes of 1 byte to 300 KiB", pieceSizes: {
            var generator = SplitMix64(seed: 7)
            return (0..<64).map { _ in 1 + Int(generator.next() % 300_000) }
        }()),
    ]
}

/// The offsets in `data` after which `chunker` ends a chunk, with `data` fed in pieces of
/// `pieceSizes` in turn (the whole of `data` at once when empty). The end of `data` is listed
/// only when the chunker cut there.
private func cuts(in data: [UInt8], chunker: ContentDefinedChunker, pieceSizes: [Int] = []) -> [Int] {
    var chunker = chunker
    var cuts: [Int] = []
    data.withUnsafeBytes { buffer in
        var pieceStart = 0
        var turn = 0
        while pieceStart < buffer.count {
            let size = pieceSizes.isEmpty ? buffer.count : pieceSizes[turn % pieceSizes.count]
            let pieceEnd = min(buffer.count, pieceStart + size)
            var offset = pieceStart
            while let count = chunker.nextBoundary(in: UnsafeRawBufferPointer(rebasing: buffer[offset..<pieceEnd])) {
                #expect(count >= 1 && offset + count <= pieceEnd)
                offset += count
                cuts.append(offset)
            }
            pieceStart = pieceEnd
            turn += 1
        }
    }
    return cuts
}

/// The chunks' lengths: from each cut to the next, and the last chunk after the last cut.
private func chunkLengths(cuts: [Int], count: Int) -> [Int] {
    let ends = cuts.last == count ? cuts : cuts + [count]
    return zip([0] + ends, ends).map { $1 - $0 }
}

/// The cuts by the definition, without the chunker's shortcuts: every byte hashed, from the
/// start of the stream and never reset, each length tested. That the chunker gives the same
/// shows that skipping the start of each chunk, and resetting the hash, change no cut.
private func definitionCuts(in data: [UInt8], sizes: ChunkSizes) -> [Int] {
    let threshold = sizes.chunker.threshold
    let gear = ContentDefinedChunker.gearTable
    var hash: UInt64 = 0
    var length = 0
    var cuts: [Int] = []
    for (offset, byte) in data.enumerated() {
        hash = (hash << 1) &+ gear[Int(byte)]
        length += 1
        if (length >= sizes.minimum && hash < threshold) || length == sizes.maximum {
            cuts.append(offset + 1)
            length = 0
        }
    }
    return cuts
}

/// An edit of the 64 MiB sample: `removed` bytes at `offset` replaced by `inserted`.
struct Edit: Sendable, CustomTestStringConvertible {
    var label: String
    var offset: Int
    var removed: Int
    var inserted: [UInt8]

    var testDescription: String { label }

    static let all: [Edit] = [
        .init(label: "1 byte inserted at the start", offset: 0, removed: 0, inserted: [0x41]),
        .init(label: "100 bytes deleted in the middle", offset: 32 << 20, removed: 100, inserted: []),
        .init(label: "1 byte changed at 50 MiB + 3", offset: (50 << 20) + 3, removed: 1, inserted: [0xFF]),
    ]

    func applied(to data: [UInt8]) -> [UInt8] {
        Array(data[..<offset]) + inserted + data[(offset + removed)...]
    }
}

@Suite("ContentDefinedChunker: chunk boundaries chosen by content, for --rsyncable", .onDedicatedThreads)
struct ContentDefinedChunkingTests {
    @Test("The cuts do not depend on how the input is split into calls",
          arguments: SplitPattern.all, [smallSizes, defaultSizes])
    func splitDoesNotMatter(pattern: SplitPattern, sizes: ChunkSizes) {
        let data = sizes.sampleData
        let whole = cuts(in: data, chunker: sizes.chunker)
        #expect(whole.count >= 5)
        #expect(cuts(in: data, chunker: sizes.chunker, pieceSizes: pattern.pieceSizes) == whole)
    }

    @Test("The cuts are those of the definition: skipping each chunk's start changes none",
          arguments: [smallSizes, defaultSizes])
    func matchesDefinition(sizes: ChunkSizes) {
        let data = sizes.sampleData
        #expect(cuts(in: data, chunker: sizes.chunker, pieceSizes: [65536]) == definitionCuts(in: data, sizes: sizes))
    }

    @Test("Every chunk but the last is minimum...maximum long; the mean is near the average asked for",
          arguments: [smallSizes, defaultSizes])
    func chunkSizes(sizes: ChunkSizes) {
        let data = sizes.minimum < 4096 ? Array(sixtyFourMiB.prefix(8 << 20)) : sixtyFourMiB
        let lengths = chunkLengths(cuts: cuts(in: data, chunker: sizes.chunker), count: data.count)
        #expect(lengths.dropLast().allSatisfy { (sizes.minimum...sizes.maximum).contains($0) })
        #expect(lengths.last! >= 1 && lengths.last! <= sizes.maximum)
        let mean = Double(data.count) / Double(lengths.count)
        #expect(mean >= Double(sizes.average) / 2 && mean <= Double(sizes.average) * 2,
                "\(lengths.count) chunks, mean \(mean) bytes, asked for \(sizes.average)")
    }

    @Test("An edit of 64 MiB changes only the chunks around it; every later cut moves by the bytes it added",
          arguments: Edit.all)
    func editChangesOnlyNearbyChunks(edit: Edit) {
        let old = sixtyFourMiB
        let new = edit.applied(to: old)
        let shift = edit.inserted.count - edit.removed
        let oldCuts = sixtyFourMiBCuts
        let newCuts = cuts(in: new, chunker: defaultSizes.chunker)
        // Before the edit: the same cuts.
        let oldBefore = oldCuts.filter { $0 <= edit.offset }
        #expect(Array(newCuts.prefix(oldBefore.count)) == oldBefore)
        // After it: from the first or second old cut past the edit on, every old cut moved by
        // `shift`, and nothing else is a cut.
        let oldAfter = oldCuts.filter { $0 > edit.offset + edit.removed }
        let newAfter = Set(newCuts.filter { $0 > edit.offset + edit.inserted.count })
        guard let resynchronized = oldAfter.firstIndex(where: { newAfter.contains($0 + shift) }) else {
            Issue.record("no cut after the edit is shared")
            return
        }
        #expect(resynchronized <= 1, "the cuts agree again only from the \(resynchronized + 1)th old cut past the edit")
        let shared = oldAfter[resynchronized...].map { $0 + shift }
        #expect(Array(newCuts.suffix(shared.count)) == shared)
        // So the chunks after it hold the same bytes.
        let firstShared = oldAfter[resynchronized]
        #expect(old[firstShared...].elementsEqual(new[(firstShared + shift)...]))
        // The changed chunks: from the last cut before the edit to the first shared one.
        let changedStart = oldBefore.last ?? 0
        #expect(firstShared - changedStart <= 3 * defaultSizes.maximum)
        #expect(Double(old.count - (firstShared - changedStart)) >= 0.9 * Double(old.count))
    }

    @Test("A run of one byte value is cut at the maximum, as its hash −gear[b] is above the threshold, else at the minimum")
    func constantData() {
        // Once a window is full, a run of b hashes to Σ gear[b] << k over k in 0..<64, which is
        // gear[b] · (2⁶⁴ − 1) = −gear[b] (mod 2⁶⁴), the same at every byte: below the threshold
        // at every length or at none. For the defaults, at none, whatever the byte; for the
        // small sizes' higher threshold (a cut every 3840 bytes past the minimum), at every
        // length for one byte value of the table, `~`.
        let gear = ContentDefinedChunker.gearTable
        let cutEverywhere = { (sizes: ChunkSizes) in (0...255).filter { (0 &- gear[$0]) < sizes.chunker.threshold } }
        #expect(cutEverywhere(defaultSizes) == [])
        #expect(cutEverywhere(smallSizes) == [Int(UInt8(ascii: "~"))])
        let tildes = [UInt8](repeating: UInt8(ascii: "~"), count: 5 * smallSizes.minimum + 7)
        #expect(cuts(in: tildes, chunker: smallSizes.chunker) == (1...5).map { $0 * smallSizes.minimum })
        let zeros = [UInt8](repeating: 0, count: 17 << 20)
        #expect(cuts(in: zeros, chunker: defaultSizes.chunker) == [4 << 20, 8 << 20, 12 << 20, 16 << 20])
        for value in [UInt8(0x20), 0x41, 0xFF] {
            let run = [UInt8](repeating: value, count: 5 * smallSizes.maximum + 7)
            #expect(cuts(in: run, chunker: smallSizes.chunker) == (1...5).map { $0 * smallSizes.maximum })
        }
        // After other data the run is cut at maximum intervals from the last content-defined cut.
        let mixed = Array(sixtyFourMiB.prefix(1 << 20)) + zeros.prefix(1 << 20)
        let mixedCuts = cuts(in: mixed, chunker: smallSizes.chunker)
        let lastBeforeRun = mixedCuts.last { $0 <= 1 << 20 }!
        #expect(mixedCuts.drop { $0 <= lastBeforeRun }.enumerated().allSatisfy { index, cut in
            cut == lastBeforeRun + (index + 1) * smallSizes.maximum
        })
    }

    @Test("reset() starts a chunk: the cuts that follow are a new chunker's on the rest")
    func resetStartsAChunk() {
        let data = smallSizes.sampleData
        var chunker = smallSizes.chunker
        let flushAt = 100_000
        data.withUnsafeBytes { buffer in
            var offset = 0
            while let count = chunker.nextBoundary(in: UnsafeRawBufferPointer(rebasing: buffer[offset..<flushAt])) {
                offset += count
            }
        }
        #expect(chunker.currentLength > 0)
        chunker.reset()
        #expect(chunker.currentLength == 0)
        let rest = Array(data[flushAt...])
        #expect(cuts(in: rest, chunker: chunker) == cuts(in: rest, chunker: smallSizes.chunker))
    }

    @Test("An empty buffer completes no chunk")
    func emptyBuffer() {
        var chunker = smallSizes.chunker
        #expect(chunker.nextBoundary(in: UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
        #expect([UInt8]().withUnsafeBytes { chunker.nextBoundary(in: $0) } == nil)
        #expect(chunker.currentLength == 0)
    }

    @Test("The cuts are the same in every version: the gear table and a seeded input's cuts are pinned")
    func pinnedCuts() {
        // Changing the table or the cut rule changes every --rsyncable output, and so what
        // rsync can match between files packed by two versions.
        #expect(ContentDefinedChunker.gearTable.count == 256)
        #expect(Array(ContentDefinedChunker.gearTable.prefix(2)) == [10_050_056_946_418_939_503, 4_810_107_701_954_249_954])
        #expect(Array(cuts(in: randomBytes(count: 1 << 20, seed: 1), chunker: smallSizes.chunker).prefix(6))
                == [8359, 11224, 13466, 16861, 22712, 30612])
    }
}

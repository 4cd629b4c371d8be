import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// The line table of a GZIDX index (GzipLineTable): counted by every writer, kept between the
// windows and the seal, read back checked, and the lines read through it checked against a
// sed-like oracle; a table that does not fit the data is found, never used for wrong bytes.

/// The line table `data` has for points at `plainOffsets`, counted byte by byte.
private func expectedTable(_ data: [UInt8], plainOffsets: [UInt64]) -> GzipLineTable {
    let newlines = data.count(where: { $0 == 0x0A })
    return GzipLineTable(newlinesBefore: plainOffsets.map { UInt64(data[..<Int($0)].count(where: { $0 == 0x0A })) },
                         newlineCount: UInt64(newlines),
                         lineCount: UInt64(newlines + (data.last.map { $0 == 0x0A ? 0 : 1 } ?? 0)))
}

/// 3 MiB of text of ~60-column lines, with a last line of no newline.
private let text = sampleText(byteCount: 3 << 20, seed: 61) + Array("no newline at the end".utf8)

/// The lines of `index` (read from `compressed` through a file) for each range.
private func readLines(_ compressed: [UInt8], index: GzipIndex, in directory: URL, threads: Int = 2,
                       _ first: UInt64, _ last: UInt64?) throws -> [UInt8] {
    let path = try makeFile("lines.gz", in: directory, bytes: compressed)
    let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: threads)
    defer { stream.close() }
    var bytes: [UInt8] = []
    try stream.readLines(from: first, through: last) { bytes.append(contentsOf: $0) }
    return bytes
}

@Suite("The line table of a GZIDX index, and lines read through it", .onDedicatedThreads)
struct GzipLineTableTests {
    @Test("NewlineCounter counts every 0x0A and nothing else, at every length and alignment")
    func counter() {
        var generator = SplitMix64(seed: 5)
        // Bytes near 0x0A and with its high bit set, which a lane-wise test could mistake for it.
        let alphabet: [UInt8] = [0x0A, 0x8A, 0x0B, 0x09, 0x00, 0xFF, 0x7F, 0x80, 0x2A]
        let bytes = (0..<200).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
        bytes.withUnsafeBytes { raw in
            for start in 0..<9 {
                for end in start...raw.count {
                    let piece = UnsafeRawBufferPointer(rebasing: raw[start..<end])
                    let expected = piece.count(where: { $0 == 0x0A })
                    if NewlineCounter.count(in: piece) != expected {
                        Issue.record("wrong count in bytes \(start)..<\(end)")
                        return
                    }
                }
            }
        }
    }

    @Test("NewlineCounter's lane counters do not overflow: runs of newlines past 255 rounds of 64 bytes",
          arguments: [64 * 255 - 1, 64 * 255, 64 * 255 + 1, 64 * 256, 64 * 255 * 3 + 77])
    func counterLongRuns(count: Int) {
        let newlines = [UInt8](repeating: 0x0A, count: count)
        newlines.withUnsafeBytes { raw in
            #expect(NewlineCounter.count(in: raw) == count)
            #expect(NewlineCounter.count(in: UnsafeRawBufferPointer(rebasing: raw[3...])) == count - 3)
        }
    }

    @Test("LineRangeSelector gives sed's lines, whatever the pieces the data comes in",
          arguments: [(1, 1), (1, nil), (2, 3), (5, 5), (7, nil), (9, 40), (40, 41)] as [(Int, Int?)])
    func selector(first: Int, last: Int?) {
        let data = Array("a\nbb\n\n\nccc\nd\ne\nfff\nlast".utf8)
        for pieceSize in [1, 2, 3, 7, data.count] {
            var selector = LineRangeSelector(first: UInt64(first), last: last.map(UInt64.init))
            var output: [UInt8] = []
            var start = 0
            while start < data.count {
                let end = min(data.count, start + pieceSize)
                data[start..<end].withUnsafeBytes { piece in selector.select(piece) { output.append(contentsOf: $0) } }
                start = end
            }
            #expect(output == sedLines(data, first, last), "pieces of \(pieceSize)")
            #expect(selector.newlines == 8)
        }
    }

    @Test("The builder (ISA-L and zlib) and pack --index count the newlines before every point",
          arguments: ["isal", "zlib", "pack"])
    func writersCount(writer: String) throws {
        let index: GzipIndex
        let compressed: [UInt8]
        if writer == "pack" {
            let memory = MemoryOutputStream()
            let gzip = try GzipOutputStream(wrapping: memory, threads: 2, blockSize: 64 << 10, engine: .chunks, buildsIndex: true)
            try gzip.openOrThrow()
            try gzip.writeAll(text)
            try gzip.closeOrThrow()
            compressed = [UInt8](memory.data)
            index = try GzipIndex(gzidx: try #require(gzip.index).gzidxEncoded())
        } else {
            compressed = try pack(text)
            index = try buildIndex(compressed, span: 64 << 10, inflater: writer == "zlib" ? .zlib : .isal).index
        }
        // zlib's blocks of this repetitive text hold about 200 KiB each; pack's chunks 64 KiB.
        #expect(index.points.count > 10)
        #expect(index.lineTable == expectedTable(text, plainOffsets: index.points.map(\.plainOffset)))
        #expect(index.lineCount == UInt64(text.count(where: { $0 == 0x0A }) + 1))
    }

    @Test("The table is read back by both readers; a table that does not fit the points is refused where it is wrong")
    func readBack() throws {
        try withTemporaryDirectory { directory in
            let (index, bytes, summary) = try buildIndex(try pack(text), span: 64 << 10)
            #expect(summary.indexSize == Int64(bytes.count) && summary.lineCount == index.lineCount)
            let path = try makeFile("x.gzidx", in: directory, bytes: bytes)
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            defer { close(descriptor) }
            #expect(try GzipIndex(gzidxFile: descriptor, path: path).lineTable == index.lineTable)
            let count = index.points.count
            let tableStart = bytes.count - 20 - (24 + 8 * count)
            func resealed(_ change: (inout GzipLineTable) -> Void) -> [UInt8] {
                var changed = index
                change(&changed.lineTable!)
                return changed.gzidxEncoded()
            }
            let cases: [([UInt8], GzipIndexError)] = [
                (resealed { $0.newlinesBefore[0] = 1 },
                 .badLineTable("the count before point 0 does not fit the points", offset: tableStart + 24)),
                (resealed { $0.newlinesBefore[3] = $0.newlinesBefore[2] - 1 },
                 .badLineTable("the count before point 3 does not fit the points", offset: tableStart + 24 + 24)),
                (resealed { $0.newlinesBefore[5] += 1 << 20 },
                 .badLineTable("the count before point 5 does not fit the points", offset: tableStart + 24 + 40)),
                (resealed { $0.lineCount += 2 },
                 .badLineTable("its totals (\(index.lineTable!.newlineCount) newlines, \(index.lineCount! + 2) lines) "
                    + "do not fit \(text.count) plain bytes", offset: tableStart + 8)),
            ]
            for (damaged, expected) in cases {
                let damagedPath = try makeFile("damaged.gzidx", in: directory, bytes: damaged)
                let damagedDescriptor = open(damagedPath, O_RDONLY | O_CLOEXEC)
                defer { close(damagedDescriptor) }
                #expect(throws: expected) { try GzipIndex(gzidx: damaged) }
                #expect(throws: expected) { try GzipIndex(gzidxFile: damagedDescriptor, path: damagedPath) }
            }
        }
    }

    /// Ranges of lines: a number from 1, or `-n` for the n-th line from the end (-1 the last).
    @Test("readLines gives sed's lines through the table: first, last, unterminated last, inside a span, across many, past the end",
          arguments: [(1, 1), (1, 3), (2, nil), (700, 700), (1000, 1010), (3000, 40_000), (-1, -1), (-3, nil),
                      (-3, 1_000_000), (-20_000, -5), (1_000_000, nil), (1_000_000, 1_000_001)] as [(Int, Int?)])
    func readLinesOracle(relativeFirst: Int, relativeLast: Int?) throws {
        try withTemporaryDirectory { directory in
            let compressed = try pack(text)
            let (index, _, _) = try buildIndex(compressed, span: 64 << 10)
            let lineCount = Int(try #require(index.lineCount))
            #expect(lineCount > 40_000 && index.points.count > 10)
            let first = relativeFirst > 0 ? relativeFirst : lineCount + 1 + relativeFirst
            let last = relativeLast.map { $0 > 0 ? $0 : lineCount + 1 + $0 }
            for threads in [1, 2] {
                let read = try readLines(compressed, index: index, in: directory, threads: threads, UInt64(first), last.map(UInt64.init))
                #expect(read == sedLines(text, first, last), "threads \(threads)")
            }
            // The same through an index that counts no lines: decoded from the start.
            var without = index
            without.lineTable = nil
            #expect(try readLines(compressed, index: without, in: directory, UInt64(first), last.map(UInt64.init))
                == sedLines(text, first, last))
        }
    }

    @Test("A table that does not fit the data (resealed, so that only the data finds it) gives no bytes, an error")
    func tamperedTable() throws {
        try withTemporaryDirectory { directory in
            let compressed = try pack(text)
            let (index, _, _) = try buildIndex(compressed, span: 64 << 10)
            // Point 10 claims one newline more: consistent with its neighbours, wrong for the data.
            var tampered = index
            tampered.lineTable!.newlinesBefore[10] += 1
            tampered = try GzipIndex(gzidx: tampered.gzidxEncoded())
            let target = index.lineTable!.newlinesBefore[10] + 3
            var given = 0
            let path = try makeFile("lines.gz", in: directory, bytes: compressed)
            let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: tampered, threads: 2)
            defer { stream.close() }
            #expect(throws: IndexedGzipError.lineCountMismatch(point: 11, counted: index.lineTable!.newlinesBefore[11] + 1,
                                                               indexed: index.lineTable!.newlinesBefore[11])) {
                try stream.readLines(from: target, through: target + 3) { given += $0.count }
            }
            #expect(given == 0)
            // The total at the end is checked too.
            var total = index
            total.lineTable!.newlineCount += 1
            total.lineTable!.lineCount += 1
            #expect(throws: IndexedGzipError.lineCountMismatch(point: nil, counted: index.lineTable!.newlineCount,
                                                               indexed: index.lineTable!.newlineCount + 1)) {
                _ = try readLines(compressed, index: total, in: directory, UInt64(index.lineCount! - 1), nil)
            }
        }
    }

    @Test("An index without access points, its line table empty: an error, never a crash")
    func noPoints() throws {
        try withTemporaryDirectory { directory in
            let compressed = try pack(text)
            var index = GzipIndex(compressedSize: UInt64(compressed.count), plainSize: UInt64(text.count),
                                  spacing: 1 << 20, points: [])
            index.lineTable = GzipLineTable(newlinesBefore: [], newlineCount: 0, lineCount: 0)
            #expect(throws: IndexedGzipError.unusable("it has no access points")) {
                _ = try readLines(compressed, index: index, in: directory, 2, 3)
            }
        }
    }

    @Test("An empty file has no lines: every range gives nothing")
    func empty() throws {
        try withTemporaryDirectory { directory in
            let compressed = try pack([])
            let (index, _, _) = try buildIndex(compressed)
            #expect(index.lineTable == GzipLineTable(newlinesBefore: [0], newlineCount: 0, lineCount: 0))
            #expect(try readLines(compressed, index: index, in: directory, 1, nil) == [])
            #expect(try readLines(compressed, index: index, in: directory, 3, 4) == [])
        }
    }
}

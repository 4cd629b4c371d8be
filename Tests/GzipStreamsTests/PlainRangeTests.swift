import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// read(range:) and seek(toPlainOffset:) through an index, with Int offsets: a GNU gzip -6 file
// indexed by GzipIndexBuilder (GZIDX), and a BGZF file with its .gzi.

/// 1.1 MiB of text and mixed bytes: several access points at a 64 KiB span, 17 BGZF members.
private let plain = textBytes(count: 100 << 10, seed: 41) + mixedBytes(count: 1 << 20, seed: 42)

/// The ranges every reader is asked for: the start, across a boundary at `boundary` (an
/// access point or a member start), the end, and empty ranges.
private func ranges(across boundary: Int) -> [Range<Int>] {
    [0..<1, 0..<1000, boundary - 1..<boundary + 1, boundary - 3000..<boundary + 70_000,
     plain.count - 500..<plain.count, plain.count - 1..<plain.count, 7..<7, plain.count..<plain.count, 0..<plain.count]
}

/// Checks `reader` on every range, on past-the-end and negative ones, and on a seek.
private func expectRanges(_ reader: some PlainRangeReading, boundary: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
    for range in ranges(across: boundary) {
        let same = try reader.read(range: range) == Array(plain[range])
        #expect(same, "\(range)", sourceLocation: sourceLocation)
    }
    let output = MemoryOutputStream()
    try reader.read(range: boundary - 10..<boundary + 10, into: output)
    #expect([UInt8](output.data) == Array(plain[boundary - 10..<boundary + 10]), sourceLocation: sourceLocation)

    let size = plain.count
    for range in [size - 10..<size + 10, size + 5..<size + 6, size + 1..<size + 1] {
        let error = #expect(throws: PlainRangeError.self, "\(range)", sourceLocation: sourceLocation) {
            try reader.read(range: range)
        }
        #expect(error == PlainRangeError(range: range, plainSize: size), sourceLocation: sourceLocation)
    }
    let negative = #expect(throws: ByteStreamError.self, sourceLocation: sourceLocation) { try reader.read(range: -1..<5) }
    #expect(negative?.code == .invalidArgument(name: "range", message: "must not start before 0, not -1..<5"),
            sourceLocation: sourceLocation)
    #expect(throws: ByteStreamError.self, sourceLocation: sourceLocation) { try reader.seek(toPlainOffset: -1) }

    // Still usable after the errors: a seek, then ordinary reads.
    try reader.seek(toPlainOffset: boundary - 2)
    var read: [UInt8] = []
    while read.count < 4, case let chunk = try reader.readChunk(maxLength: 4 - read.count), !chunk.isEmpty { read += chunk }
    #expect(read == Array(plain[boundary - 2..<boundary + 2]), sourceLocation: sourceLocation)
    try reader.seek(toPlainOffset: size)
    #expect(try reader.readChunk() == [], sourceLocation: sourceLocation)
}

@Suite("Plain ranges through an index: GZIDX and BGZF, Int offsets", .onDedicatedThreads)
struct PlainRangeTests {
    @Test("A gzip -6 file indexed by GzipIndexBuilder: ranges at the start, across a point, at the end, past the end",
          .requires(.gzip))
    func gzidx() throws {
        try withTemporaryDirectory { directory in
            let plainPath = try makeFile("data", in: directory, bytes: plain)
            let gzip = try runProcess(try #require(Tool.gzip.path), ["-6", "-n", "-c", plainPath])
            try #require(gzip.status == 0)
            let path = try makeFile("data.gz", in: directory, bytes: gzip.stdout)
            let (index, indexBytes, _) = try buildIndex(gzip.stdout, span: 64 << 10)
            _ = try makeFile("data.gz.gzidx", in: directory, bytes: indexBytes)
            try #require(index.points.count > 3)
            let boundary = Int(index.points[2].plainOffset)
            let reader = try IndexedGzipInputStream(path: path, threads: 2)
            defer { reader.close() }
            try expectRanges(reader, boundary: boundary)
            #expect(reader.plainSize == Int64(plain.count))
        }
    }

    @Test("A GZIDX index that does not know the plain size: past the end is found by decoding, as PlainRangeError")
    func gzidxWithoutSize() throws {
        try withTemporaryDirectory { directory in
            let compressed = try pack(plain)
            let path = try makeFile("data.gz", in: directory, bytes: compressed)
            var (index, _, _) = try buildIndex(compressed, span: 64 << 10)
            index.plainSize = 0
            let reader = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: 1)
            defer { reader.close() }
            #expect(try reader.read(range: 100..<200) == Array(plain[100..<200]))
            let error = #expect(throws: PlainRangeError.self) { try reader.read(range: plain.count - 5..<plain.count + 5) }
            #expect(error == PlainRangeError(range: plain.count - 5..<plain.count + 5, plainSize: plain.count))
            #expect(error?.localizedDescription
                    == "bytes \(plain.count - 5)..<\(plain.count + 5) run past the end of the data (\(plain.count) bytes)")
        }
    }

    @Test("A BGZF file and its .gzi: ranges at the start, across a member, at the end, past the end; whole reads")
    func bgzf() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("data.gz").path
            let output = try BGZFOutputStream(wrapping: FileOutputStream(path: path), threads: 2, buildsIndex: true)
            try output.writeAll(plain)
            try output.closeOrThrow()
            let index = try #require(output.index)
            _ = try makeFile("data.gz.gzi", in: directory, bytes: index.encoded)
            try #require(index.entries.count > 3)
            let boundary = Int(index.entries[2].uncompressedOffset)
            let reader = try IndexedBGZFInputStream(path: path, threads: 2)
            defer { reader.close() }
            #expect(try reader.readToEnd() == plain)
            try expectRanges(reader, boundary: boundary)
            // A seek past the end throws at once, and leaves the stream at the end.
            let error = #expect(throws: PlainRangeError.self) { try reader.seek(toPlainOffset: plain.count + 3) }
            #expect(error == PlainRangeError(range: plain.count + 3..<plain.count + 3, plainSize: plain.count))
            #expect(reader.streamStatus == .atEnd)
            try reader.seek(toPlainOffset: 0)
            #expect(try reader.readToEnd() == plain)
        }
    }

    @Test("BGZF: a range ending in a damaged member throws its CRC-32 mismatch; a .gzi of another file is notBGZF")
    func bgzfDamage() throws {
        try withTemporaryDirectory { directory in
            let output = MemoryOutputStream()
            let bgzf = try BGZFOutputStream(wrapping: output, threads: 1, buildsIndex: true)
            try bgzf.writeAll(plain)
            try bgzf.closeOrThrow()
            let index = try #require(bgzf.index)
            var bytes = [UInt8](output.data)
            // The CRC-32 of the member that holds entry 3's start: the 8 bytes before entry 4's
            // member, its trailer, begin with it.
            bytes[Int(index.entries[4].compressedOffset) - 8] ^= 0xff
            let path = try makeFile("damaged.gz", in: directory, bytes: bytes)
            let reader = try IndexedBGZFInputStream(wrapping: FileInputStream(path: path), index: index, threads: 2)
            defer { reader.close() }
            let start = Int(index.entries[3].uncompressedOffset)
            #expect(try reader.read(range: start - 100..<start) == Array(plain[start - 100..<start]))
            #expect(throws: GzipError.self) { try reader.read(range: start..<start + 10) }

            let shifted = BGZFIndex(entries: index.entries.map {
                .init(compressedOffset: $0.compressedOffset + 1, uncompressedOffset: $0.uncompressedOffset)
            })
            let wrong = try IndexedBGZFInputStream(wrapping: FileInputStream(path: path), index: shifted, threads: 1)
            defer { wrong.close() }
            let error = #expect(throws: GzipError.self) { try wrong.seek(toPlainOffset: start) }
            #expect(error == .notBGZF(member: 5, offset: Int64(index.entries[3].compressedOffset) + 1))
        }
    }

    @Test("A huge range past the end is PlainRangeError, not an allocation of its size (it trapped); a cut BGZF file is truncated")
    func hugeRangesAndCutFiles() throws {
        try withTemporaryDirectory { directory in
            let compressed = try pack(plain)
            let gzipPath = try makeFile("data.gz", in: directory, bytes: compressed)
            let (_, indexBytes, _) = try buildIndex(compressed, span: 64 << 10)
            _ = try makeFile("data.gz.gzidx", in: directory, bytes: indexBytes)
            let gzip = try IndexedGzipInputStream(path: gzipPath, threads: 2)
            defer { gzip.close() }

            let bgzfPath = directory.appendingPathComponent("data.bgz").path
            let output = try BGZFOutputStream(wrapping: FileOutputStream(path: bgzfPath), threads: 1, buildsIndex: true)
            try output.writeAll(plain)
            try output.closeOrThrow()
            let index = try #require(output.index)
            let bgzf = try IndexedBGZFInputStream(wrapping: FileInputStream(path: bgzfPath), index: index, threads: 2)
            defer { bgzf.close() }

            for reader in [gzip, bgzf] as [any PlainRangeReading] {
                for range in [0..<(Int.max - 1), 5..<(1 << 40)] {
                    let error = #expect(throws: PlainRangeError.self) { try reader.read(range: range) }
                    #expect(error == PlainRangeError(range: range, plainSize: plain.count), "\(range)")
                }
            }

            // The file cut in half, read through the whole file's index: the member the index
            // names past the cut is missing, so the file is truncated (not "no BGZF member").
            let whole = try #require(FileManager.default.contents(atPath: bgzfPath))
            let cutPath = try makeFile("cut.bgz", in: directory, bytes: Array(whole.prefix(whole.count / 2)))
            let cut = try IndexedBGZFInputStream(wrapping: FileInputStream(path: cutPath), index: index, threads: 1)
            defer { cut.close() }
            let last = try #require(index.entries.last)
            let error = #expect(throws: GzipError.self) {
                try cut.read(range: Int(last.uncompressedOffset)..<Int(last.uncompressedOffset) + 10)
            }
            let member = index.start(containing: last.uncompressedOffset).membersBefore + 1
            #expect(error == .truncated(member: member, part: .header, offset: Int64(whole.count / 2)))
            #expect(String(reflecting: PlainRangeError(range: 1..<5, plainSize: 3))
                    == "GzipStreams.PlainRangeError(range: Range(1..<5), plainSize: 3)")
        }
    }
}

@Test("PlainRangeError says whether a range runs past the end or starts there, and a seek's offset")
func plainRangeErrorWords() {
    #expect(PlainRangeError(range: 14..<40, plainSize: 21).description
            == "bytes 14..<40 run past the end of the data (21 bytes)")
    #expect(PlainRangeError(range: 21..<40, plainSize: 21).description
            == "bytes 21..<40 are past the end of the data (21 bytes)")
    #expect(PlainRangeError(range: 30..<30, plainSize: 21).description
            == "offset 30 is past the end of the data (21 bytes)")
}

import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// GZIDX with the real readers, indexed_gzip 1.10.3 and rapidgzip 0.16.2 (PyPI, in the
// environment `make test-deps` makes): indexed_gzip's index read by us, ours read by both, and
// what each requires of an index, so that an index this package writes is known to work.

// MARK: Helpers

/// Runs `script` with the oracle's python3 and `arguments`.
func runOracle(_ script: String, _ arguments: [String]) throws -> ProcessResult {
    try runProcess(try #require(PythonOracle.path), ["-c", script] + arguments)
}

/// Deflates each of the pieces of argv[1] whose sizes are listed in argv[3] on its own (raw
/// deflate, level 6), each but the last ended with a full flush, which empties the history and
/// aligns to a byte: joined, they are one deflate stream in one gzip member (10-byte header),
/// written to argv[2]. Prints each piece's compressed size.
private let joinPiecesScript = """
    import sys, struct, zlib
    plain = open(sys.argv[1], 'rb').read()
    sizes = [int(size) for size in sys.argv[3].split(',')]
    out = bytearray([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])
    start = 0
    for number, size in enumerate(sizes):
        deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
        last = number == len(sizes) - 1
        piece = deflater.compress(plain[start:start + size]) + deflater.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)
        print(len(piece))
        out += piece
        start += size
    out += struct.pack('<II', zlib.crc32(plain), len(plain) & 0xffffffff)
    open(sys.argv[2], 'wb').write(out)
    """

/// Reads argv[4] bytes (fewer at the end) at each offset in argv[5] of the gzip file argv[2]
/// through the GZIDX index argv[3], with the reader argv[1], and writes them all to stdout. A
/// fresh file object per offset, indexed_gzip's with a small buffer, so that every read starts
/// from a point of the index rather than from bytes left in a buffer.
let readThroughIndexScript = """
    import sys, indexed_gzip, rapidgzip
    reader, path, index, length = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    out = sys.stdout.buffer
    for offset in [int(offset) for offset in sys.argv[5].split(',')]:
        if reader == 'indexed_gzip':
            with indexed_gzip.IndexedGzipFile(path, index_file=index, buffer_size=4096) as f:
                f.seek(offset)
                out.write(f.read(length))
        else:
            with rapidgzip.open(path, parallelization=1) as f:
                f.import_index(index)
                f.seek(offset)
                out.write(f.read(length))
    """

/// A gzip file of one member whose deflate data is independently deflated pieces (as the pack
/// engine's chunks are), and the index a packer would write for it: a point without window at
/// each piece's start, the first at plain offset 0 just after the header.
private struct JoinedPieces {
    var data: [UInt8]
    var plainStarts: [Int]
    var path: String
    var index: GzipIndex

    init(in directory: URL, pieceSizes: [Int], seed: UInt64) throws {
        data = mixedBytes(count: pieceSizes.reduce(0, +), seed: seed)
        plainStarts = pieceSizes.indices.map { pieceSizes.prefix($0).reduce(0, +) }
        let plainPath = try makeFile("plain", in: directory, bytes: data)
        path = directory.appendingPathComponent("joined.gz").path
        let joined = try runOracle(joinPiecesScript, [plainPath, path, pieceSizes.map(String.init).joined(separator: ",")])
        try #require(joined.status == 0, "\(joined.stderrText)")
        let compressedSizes = joined.stdoutText.split(separator: "\n").compactMap { Int($0) }
        try #require(compressedSizes.count == pieceSizes.count)
        let compressedSize = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        let pieceOffsets = compressedSizes.indices.map { GzipFormat.fixedHeaderSize + compressedSizes.prefix($0).reduce(0, +) }
        index = GzipIndex(compressedSize: UInt64(try #require(compressedSize)), plainSize: UInt64(data.count),
                          spacing: 1 << 20, points: zip(pieceOffsets, plainStarts).map { compressed, plain in
            GzipAccessPoint(compressedOffset: UInt64(compressed), plainOffset: UInt64(plain))
        })
    }

    /// `length` bytes at each of `offsets`, fewer at the end of the data.
    func expected(at offsets: [Int], length: Int) -> [UInt8] {
        offsets.flatMap { data[$0..<min(data.count, $0 + length)] }
    }
}

/// What a reader did with an index.
enum IndexOutcome: String, Sendable {
    case rightBytes = "read the right bytes", wrongBytes = "read wrong bytes, without an error", refused = "failed"
}

/// One change to a good index, and what each reader does with it.
struct IndexVariant: Sendable, CustomTestStringConvertible {
    var label: String
    var bytes: @Sendable (GzipIndex) -> [UInt8]
    var indexedGzip: IndexOutcome
    var rapidgzip: IndexOutcome
    var testDescription: String { label }
}

private func changed(_ change: @escaping @Sendable (inout GzipIndex) -> Void) -> @Sendable (GzipIndex) -> [UInt8] {
    { index in
        var copy = index
        change(&copy)
        return copy.gzidxEncoded()
    }
}

// The facts behind GzipIndex's documentation of what the readers require.
private let indexVariants: [IndexVariant] = [
    .init(label: "as written: spacing 1 MiB, true sizes, a point at plain 0 after the header",
          bytes: changed { _ in }, indexedGzip: .rightBytes, rapidgzip: .rightBytes),
    .init(label: "spacing 32768, the window size", bytes: changed { $0.spacing = 32768 },
          indexedGzip: .rightBytes, rapidgzip: .rightBytes),
    .init(label: "spacing 32767, below the window size", bytes: changed { $0.spacing = 32767 },
          indexedGzip: .refused, rapidgzip: .rightBytes),
    .init(label: "plain size 0", bytes: changed { $0.plainSize = 0 }, indexedGzip: .rightBytes, rapidgzip: .refused),
    .init(label: "plain size 1 too large", bytes: changed { $0.plainSize += 1 }, indexedGzip: .rightBytes, rapidgzip: .refused),
    .init(label: "compressed size 1 too large", bytes: changed { $0.compressedSize += 1 },
          indexedGzip: .refused, rapidgzip: .refused),
    .init(label: "window size 65536", bytes: changed { $0.windowSize = 65536 }, indexedGzip: .rightBytes, rapidgzip: .refused),
    .init(label: "no point at plain 0", bytes: changed { $0.points.removeFirst() },
          indexedGzip: .refused, rapidgzip: .wrongBytes),
    .init(label: "the first point at byte 0, on the gzip header", bytes: changed { $0.points[0].compressedOffset = 0 },
          indexedGzip: .rightBytes, rapidgzip: .refused),
    .init(label: "only the point at plain 0", bytes: changed { $0.points.removeLast($0.points.count - 1) },
          indexedGzip: .rightBytes, rapidgzip: .rightBytes),
    .init(label: "a point's plain offset 7 bytes too large", bytes: changed { $0.points[2].plainOffset += 7 },
          indexedGzip: .wrongBytes, rapidgzip: .refused),
    .init(label: "flags 1 and 3 bytes after the index", bytes: { index in
        var bytes = index.gzidxEncoded()
        bytes[6] = 1
        return bytes + [1, 2, 3]
    }, indexedGzip: .rightBytes, rapidgzip: .rightBytes),
]

// MARK: - Tests

@Suite("GZIDX read and written by indexed_gzip and rapidgzip", .onDedicatedThreads, .requiresPythonOracle)
struct GZIDXInteropTests {
    @Test("indexed_gzip's index of a two-member file: read, windows checked, re-encoded byte for byte")
    func readIndexedGzipExport() throws {
        let first = textBytes(count: 2 << 20, seed: 11)
        let second = mixedBytes(count: 1 << 20, seed: 12)
        let data = first + second
        let firstPacked = try pack(first)
        let packed = firstPacked + (try pack(second))
        try withTemporaryDirectory { directory in
            let path = try makeFile("two.gz", in: directory, bytes: packed)
            let indexPath = directory.appendingPathComponent("two.gzidx").path
            let export = try runOracle("""
                import sys, indexed_gzip
                with indexed_gzip.IndexedGzipFile(sys.argv[1], spacing=65536) as f:
                    f.build_full_index()
                    f.export_index(sys.argv[2])
                """, [path, indexPath])
            try #require(export.status == 0, "\(export.stderrText)")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: indexPath)))
            let index = try GzipIndex(gzidx: bytes)
            #expect(index.gzidxEncoded() == bytes)
            #expect(index.compressedSize == UInt64(packed.count))
            #expect(index.plainSize == UInt64(data.count))
            #expect(index.spacing == 65536)
            #expect(index.windowSize == 32768)
            #expect(index.points.count > 10)
            // zran's first point: the first byte after the header, plain 0, no window; a
            // member's start is a point without window too.
            let headerSize = UInt64(GzipFormat.fixedHeaderSize)
            #expect(index.points.first == GzipAccessPoint(compressedOffset: headerSize, plainOffset: 0))
            #expect(index.points.contains(GzipAccessPoint(compressedOffset: UInt64(firstPacked.count) + headerSize,
                                                          plainOffset: UInt64(first.count))))
            #expect(index.points.contains { $0.bitOffset != 0 }, "no point inside a byte: the bit offset went untested")
            for point in index.points {
                guard let window = point.window else { continue }
                let end = Int(point.plainOffset)
                try #require(end >= window.count)
                #expect(window == Array(data[(end - window.count)..<end]), "window of the point at plain \(end)")
            }
        }
    }

    @Test("Our index of independently deflated pieces: both readers and rapidgzip's command return the right bytes")
    func readersUseOurIndex() throws {
        try withTemporaryDirectory { directory in
            let file = try JoinedPieces(in: directory, pieceSizes: [1 << 20, 700_001, 1 << 20, 400_000], seed: 21)
            let encoded = file.index.gzidxEncoded()
            #expect(encoded.count == 35 + 18 * 4)
            let indexPath = try makeFile("joined.gz.gzidx", in: directory, bytes: encoded)
            let starts = file.plainStarts
            let length = 1000
            let offsets = [0, 1, 1000, starts[1] - 5, starts[1], starts[2] + 77, starts[3], starts[3] + 123_456,
                           file.data.count - length]
            let expected = file.expected(at: offsets, length: length)
            // The same index with gzstream's line table (its counts made up: no reader of
            // GZIDX looks at them) and seal after the last window, as pack
            // --index writes it: both readers pass over them.
            var sealed = file.index
            sealed.compressedTail = Array(try Data(contentsOf: URL(fileURLWithPath: file.path)).suffix(8))
            sealed.lineTable = GzipLineTable(newlinesBefore: [UInt64](repeating: 0, count: 4), newlineCount: 0, lineCount: 1)
            let sealedBytes = sealed.gzidxEncoded()
            #expect(sealedBytes.count == 35 + 18 * 4 + 24 + 8 * 4 + 20)
            let sealedPath = try makeFile("sealed.gzidx", in: directory, bytes: sealedBytes)
            for reader in ["indexed_gzip", "rapidgzip"] {
                for path in [indexPath, sealedPath] {
                    let read = try runOracle(readThroughIndexScript,
                                             [reader, file.path, path, String(length), offsets.map(String.init).joined(separator: ",")])
                    #expect(read.status == 0, "\(reader), \(path): \(read.stderrText)")
                    #expect(read.stdout == expected, "\(reader) read \(read.stdout.count) bytes through \(path)")
                }
            }
            let rapidgzip = try #require(PythonOracle.rapidgzipPath)
            let ranges = offsets.map { "\(length)@\($0)" }.joined(separator: ",")
            let command = try runProcess(rapidgzip, ["-P", "1", "--import-index", indexPath, "--ranges", ranges, "-c", file.path])
            #expect(command.status == 0, "\(command.stderrText)")
            #expect(command.stdout == expected, "rapidgzip --import-index --ranges wrote \(command.stdout.count) bytes")
        }
    }

    @Test("What each reader requires of an index", arguments: indexVariants)
    func requirements(_ variant: IndexVariant) throws {
        try withTemporaryDirectory { directory in
            let file = try JoinedPieces(in: directory, pieceSizes: [200_000, 150_001, 200_000, 100_000], seed: 22)
            let indexPath = try makeFile("variant.gzidx", in: directory, bytes: variant.bytes(file.index))
            let starts = file.plainStarts
            let length = 500
            let offsets = [1, 1000, starts[1] - 5, starts[2] + 77, starts[3] + 100, file.data.count - length]
            for (reader, expected) in [("indexed_gzip", variant.indexedGzip), ("rapidgzip", variant.rapidgzip)] {
                let read = try runOracle(readThroughIndexScript,
                                         [reader, file.path, indexPath, String(length), offsets.map(String.init).joined(separator: ",")])
                let outcome: IndexOutcome = read.status != 0 ? .refused
                    : read.stdout == file.expected(at: offsets, length: length) ? .rightBytes : .wrongBytes
                #expect(outcome == expected, "\(reader) \(outcome.rawValue): \(read.stderrText.suffix(300))")
            }
        }
    }
}

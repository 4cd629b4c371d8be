import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// The indexes GzipIndexBuilder writes (with gzstream's line table and seal), read by
// indexed_gzip and rapidgzip; and the indexes gztool and rapidgzip write, read by us.

/// Runs `tool` (which the test requires) with `arguments` in `directory`'s files.
private func runTool(_ tool: Tool, _ arguments: [String]) throws -> ProcessResult {
    try runProcess(try #require(tool.path), arguments)
}

/// A plain text of 3 MiB and 1 MiB of mixed bytes, as each producer compresses it.
private let plain = textBytes(count: 3 << 20, seed: 31) + mixedBytes(count: 1 << 20, seed: 32)

@Suite("GZIDX from GzipIndexBuilder read by indexed_gzip and rapidgzip; gztool's and rapidgzip's read by us",
       .onDedicatedThreads)
struct GzipIndexInteropTests {
    /// The gzip files to index: name and bytes, the plain data being `plain` (three times for the multi-member one).
    static func producers(in directory: URL) throws -> [(name: String, bytes: [UInt8], plain: [UInt8])] {
        let plainPath = try makeFile("plain", in: directory, bytes: plain)
        let gzip = try runTool(.gzip, ["-6", "-c", plainPath])
        let pigz = try runTool(.pigz, ["-6", "-c", plainPath])
        try #require(gzip.status == 0 && pigz.status == 0)
        let ours = try pack(plain)
        return [("gzip", gzip.stdout, plain), ("pigz", pigz.stdout, plain), ("gzstream", ours, plain),
                ("members", gzip.stdout + pigz.stdout + ours, plain + plain + plain)]
    }

    @Test("indexed_gzip and rapidgzip return the right bytes through our index at the start, across points, at the end",
          .requiresPythonOracle, .requires(.gzip), .requires(.pigz))
    func readersUseBuiltIndex() throws {
        try withTemporaryDirectory { directory in
            for file in try Self.producers(in: directory) {
                let path = try makeFile("\(file.name).gz", in: directory, bytes: file.bytes)
                let (index, bytes, _) = try buildIndex(file.bytes, span: 700_000)
                let indexPath = try makeFile("\(file.name).gz.gzidx", in: directory, bytes: bytes)
                try #require(index.points.count > 4, "\(file.name)")
                // The line table and the seal after the last window, which both readers pass over.
                #expect(index.lineTable != nil && index.compressedTail != nil, "\(file.name)")
                let length = 3000
                let size = file.plain.count
                var offsets = [0, 1, size - length, size - 1]
                for point in index.points.dropFirst().prefix(8) {
                    let at = Int(point.plainOffset)
                    offsets += [at - 1000, at, at + 17]
                }
                let expected = offsets.flatMap { file.plain[$0..<min(size, $0 + length)] }
                for reader in ["indexed_gzip", "rapidgzip"] {
                    let read = try runOracle(readThroughIndexScript,
                                             [reader, path, indexPath, String(length), offsets.map(String.init).joined(separator: ",")])
                    #expect(read.status == 0, "\(reader), \(file.name): \(read.stderrText)")
                    let same = read.stdout == expected
                    #expect(same, "\(reader) read wrong bytes of the \(file.name) file through our index")
                }
            }
        }
    }

    @Test("gztool's index (-i -s 1) of gzip and multi-member files: windows are the plain bytes before each point",
          .requires(.gztool), .requires(.gzip), .requires(.pigz))
    func readGztoolIndex() throws {
        try withTemporaryDirectory { directory in
            for file in try Self.producers(in: directory) {
                let path = try makeFile("\(file.name).gz", in: directory, bytes: file.bytes)
                let made = try runTool(.gztool, ["-i", "-s", "1", path])
                #expect(made.status == 0, "\(made.stderrText)")
                let indexPath = directory.appendingPathComponent("\(file.name).gzi").path
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: indexPath)))
                let index = try GzipIndex(gztool: bytes, compressedSize: UInt64(file.bytes.count))
                #expect(index.plainSize == UInt64(file.plain.count))
                #expect(index.points.count >= 4 && index.points.contains { $0.bitOffset != 0 }, "\(file.name)")
                #expect(index.points.first.map { $0.plainOffset == 0 && $0.window == nil } == true)
                try expectPointsDecode(index, compressed: file.bytes, plain: file.plain)
                // Cut anywhere, the index is refused, never read short.
                for cut in [0, 15, 40, bytes.count / 2, bytes.count - 1] {
                    #expect(throws: GzipIndexError.self) {
                        try GzipIndex(gztool: Array(bytes[0..<cut]), compressedSize: UInt64(file.bytes.count))
                    }
                }
            }
        }
    }

    @Test("rapidgzip's --export-index (windows not sparse) of gzip and multi-member files, read by us",
          .requiresPythonOracle, .requires(.gzip), .requires(.pigz))
    func readRapidgzipExport() throws {
        let rapidgzip = try #require(PythonOracle.rapidgzipPath)
        try withTemporaryDirectory { directory in
            for file in try Self.producers(in: directory) {
                let path = try makeFile("\(file.name).gz", in: directory, bytes: file.bytes)
                let indexPath = directory.appendingPathComponent("\(file.name).rapidgzip.gzidx").path
                let export = try runProcess(rapidgzip, ["-d", "-P", "1", "--no-sparse-windows", "--export-index", indexPath,
                                                        "-o", "/dev/null", path])
                #expect(export.status == 0, "\(export.stderrText)")
                let index = try GzipIndex(gzidx: [UInt8](try Data(contentsOf: URL(fileURLWithPath: indexPath))))
                #expect(index.compressedSize == UInt64(file.bytes.count) && index.plainSize == UInt64(file.plain.count))
                #expect(index.points.count >= 2, "\(file.name)")
                try expectPointsDecode(index, compressed: file.bytes, plain: file.plain)
            }
        }
    }
}

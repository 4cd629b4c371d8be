import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// The `gzip-lines` example (Examples/GzipLines): the scoped file helpers, lines, an error's
/// text and a range through an index, run for real; and the README's library example, which
/// it holds verbatim so that the example compiles it.
@Suite("gzip-lines example: scoped files, lines, an error's text, a range through an index", .onDedicatedThreads)
struct GzipLinesExampleTests {
    static let binary = URL(fileURLWithPath: Locations.binary).deletingLastPathComponent()
        .appendingPathComponent("gzip-lines").path

    /// What the example prints, `damagedError` being what it says of damaged.gz.
    static func expectedOutput(damagedError: String) -> String {
        """
        line 1
        line 2
        line 3
        line: line 1
        line: line 2
        line: line 3
        after a failed write, notes.gz is unchanged: true
        damaged.gz: \(damagedError)
        bytes 7..<13 through the index: line 2
        bytes 14..<40: bytes 14..<40 run past the end of the data (21 bytes)

        """
    }

    @Test("Run in a directory, it prints exactly the expected lines and leaves its three files")
    func outputInDirectory() throws {
        try withScratch { scratch in
            let result = try run(Self.binary, [scratch.work.path], in: scratch)
            #expect(result.status == 0, "\(result)")
            #expect(result.err == "")
            // localizedDescription is the error's own message (LocalizedError), as `gzstream test` says it.
            #expect(result.out == Self.expectedOutput(
                damagedError: "CRC-32 mismatch in member 1 at byte 26 (stored 5c92c3b8, computed 5c92c347)"))
            #expect(try scratch.listing() == ["damaged.gz", "notes.gz", "notes.gz.gzidx"])
            #expect(try GzipInputStream.withFile(at: scratch.path("notes.gz")) { try $0.readToEnd() }
                    == Array("line 1\nline 2\nline 3\n".utf8))
        }
    }

    @Test("Run without a directory, it works in a temporary one ($TMPDIR) and removes it")
    func outputInTemporaryDirectory() throws {
        try withScratch { scratch in
            let result = try shell("TMPDIR=\"$1\" \"$2\"", [scratch.work.path, Self.binary], in: scratch)
            #expect(result.status == 0, "\(result)")
            #expect(result.out.hasPrefix("line 1\nline 2\nline 3\nline: line 1\n"))
            #expect(result.out.hasSuffix("bytes 14..<40: bytes 14..<40 run past the end of the data (21 bytes)\n"))
            #expect(try scratch.listing().isEmpty)
        }
    }

    @Test("The README's library example is the example's README-SNIPPET block, verbatim")
    func readmeSnippetIsCompiled() throws {
        let readme = try String(contentsOf: Locations.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(contentsOf: Locations.repository.appendingPathComponent("Examples/GzipLines/main.swift"),
                                 encoding: .utf8)
        let readmeBlock = try #require(readme.range(of: "## The library\n\n```swift\n").flatMap { start in
            readme.range(of: "```\n", range: start.upperBound..<readme.endIndex).map { readme[start.upperBound..<$0.lowerBound] }
        })
        let exampleBlock = try #require(example.range(of: "// README-SNIPPET-BEGIN").flatMap { marker in
            let start = example[marker.upperBound...].firstIndex(of: "\n").map(example.index(after:))!
            return example.range(of: "// README-SNIPPET-END", range: start..<example.endIndex).map { example[start..<$0.lowerBound] }
        })
        #expect(readmeBlock == exampleBlock)
    }
}

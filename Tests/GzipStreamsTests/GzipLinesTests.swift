import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// The lines of `plain` as the line APIs must give them: split at `\n`, a `\r` before it dropped,
/// the empty piece after a final `\n` not a line.
private func expectedLines(of plain: [UInt8]) -> [String] {
    var lines = plain.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
        String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
    }
    if plain.last == 0x0A || plain.isEmpty { lines.removeLast() }
    return lines
}

@Suite("Lines of gzip files", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct GzipLinesTests {
    @Test("A real .gz file read line by line gives the lines of its plain text (\\r\\n ends)",
          arguments: ["alice29.txt.gzip-9n.gz", "urls.10K.pigz-b32.gz"])
    func corpusFile(_ name: String) async throws {
        let directory = PackageLocations.fixtures.appendingPathComponent("corpus/corpus-text")
        let path = directory.appendingPathComponent(name).path
        // "alice29.txt.gzip-9n.gz" holds "alice29.txt" (fixtures/manifest.tsv).
        let plainName = ((name as NSString).deletingPathExtension as NSString).deletingPathExtension
        let plain = [UInt8](try Data(contentsOf: directory.appendingPathComponent(plainName)))
        let expected = expectedLines(of: plain)
        #expect(expected.count > 3000)

        var lines: [String] = []
        let gzip = try GzipInputStream(wrapping: FileInputStream(path: path))
        for try await line in gzip.lines { lines.append(line) }
        #expect(lines == expected)
        #expect(gzip.streamStatus == .closed)

        var synchronous: [String] = []
        let again = try GzipInputStream(wrapping: FileInputStream(path: path))
        try again.forEachLine { synchronous.append($0) }
        try again.closeOrThrow()
        #expect(synchronous == expected)
    }

    @Test("Damaged deflate data in the second member: every line of the first, then the GzipError")
    func damagedSecondMember() async throws {
        let first = Array((0..<20_000).map { "line \($0) of the first member\r\n" }.joined().utf8)
        var second = try pack(Array("never\nseen\n".utf8))
        // No FNAME, so the deflate data starts after the 10-byte header: BFINAL 1, BTYPE 3,
        // which RFC 1951 §3.2.3 reserves as an error.
        second[10] = 0x07
        let gzip = gunzipStream(try pack(first) + second)

        var lines: [String] = []
        var thrown: (any Error)?
        do {
            for try await line in gzip.lines { lines.append(line) }
        } catch {
            thrown = error
        }
        #expect(lines == expectedLines(of: first))
        let error = try #require(thrown as? GzipError, "\(String(describing: thrown))")
        #expect(error.kind == "invalid-deflate")
        #expect(gzip.streamError as? GzipError == error)
    }
}

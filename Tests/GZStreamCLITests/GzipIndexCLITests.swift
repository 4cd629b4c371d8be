import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// The GZIDX bytes the library's builder writes for `compressed` with `span`.
private func libraryIndex(_ compressed: [UInt8], span: Int) throws -> (bytes: [UInt8], summary: GzipIndexBuilder.Summary) {
    let output = MemoryOutputStream()
    output.open()
    let summary = try GzipIndexBuilder(span: span).build(from: MemoryInputStream(bytes: compressed), into: output)
    return ([UInt8](output.data), summary)
}

@Suite("gzstream index of a gzip file that is not BGZF: FILE.gz.gzidx", .onDedicatedThreads)
struct GzipIndexCLITests {
    static let plain = sampleText(byteCount: 3 << 20, seed: 41)

    @Test("index writes the builder's GZIDX beside the file; -v says what; --span sets the spacing; no overwrite without -f")
    func index() throws {
        try withScratch { scratch in
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout
            _ = try scratch.write("data.gz", packed)
            let result = try gzstream(["index", "-v", "data.gz"], in: scratch)
            let (expected, summary) = try libraryIndex(packed, span: GzipIndexBuilder.defaultSpan)
            #expect(result.status == 0 && result.out == "", "\(result)")
            #expect(result.err == "gzstream: data.gz: 1 members, \(Self.plain.count) bytes -> data.gz.gzidx "
                + "(\(summary.pointCount) points, \(expected.count) bytes)\n")
            #expect(try scratch.read("data.gz.gzidx") == expected)
            let again = try gzstream(["index", "--span", "64", "data.gz"], in: scratch)
            #expect(again.status == 1 && again.out == "")
            #expect(again.err == "gzstream: data.gz.gzidx: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.read("data.gz.gzidx") == expected)
            let forced = try gzstream(["index", "-f", "--span", "64", "data.gz"], in: scratch)
            #expect(forced.status == 0 && forced.out == "" && forced.err == "", "\(forced)")
            let spaced = try libraryIndex(packed, span: 64 << 10).bytes
            #expect(try scratch.read("data.gz.gzidx") == spaced)
            #expect(try GzipIndex(gzidx: spaced).points.count > 10)
            #expect(try scratch.listing() == ["data.gz", "data.gz.gzidx"])
        }
    }

    @Test("A damaged file: the error test gives, exit 1, no index and no temporary file left")
    func damaged() throws {
        try withScratch { scratch in
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout
            _ = try scratch.write("cut.gz", Array(packed.dropLast(5)))
            var changed = packed
            changed[changed.count - 6] ^= 1
            _ = try scratch.write("crc.gz", changed)
            for name in ["cut.gz", "crc.gz"] {
                let result = try gzstream(["index", name], in: scratch)
                let tested = try gzstream(["test", name], in: scratch)
                #expect(result.status == 1 && result.out == "")
                #expect(result.err == tested.err && result.err.hasPrefix("gzstream: \(name): "), "\(result) / \(tested)")
            }
            #expect(try scratch.listing() == ["crc.gz", "cut.gz"])
        }
    }

    @Test("--span out of range or given to another command: usage errors", arguments: [
        (["index", "--span", "31K", "a"], "span must be 32K to 4G - 1 (a number alone counts KiB), not '31K'"),
        (["index", "--span", "4G", "a"], "span must be 32K to 4G - 1 (a number alone counts KiB), not '4G'"),
        (["pack", "--span", "1M", "a"], "--span applies to index"),
    ])
    func spanUsage(arguments: [String], message: String) throws {
        try withScratch { scratch in
            try scratch.write("a", "a\n")
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1 && result.out == "")
            #expect(result.err == usageError(message))
            #expect(try scratch.listing() == ["a"])
        }
    }
}

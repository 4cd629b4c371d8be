import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// The GZIDX bytes the library's builder writes for `compressed` with `span`.
func libraryIndex(_ compressed: [UInt8], span: Int) throws -> (bytes: [UInt8], summary: GzipIndexBuilder.Summary) {
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
            #expect(result.err == "gzstream: data.gz: 1 member, \(Self.plain.count) bytes -> data.gz.gzidx "
                + "(\(summary.pointCount) points, \(expected.count) bytes)\n")
            #expect(try scratch.read("data.gz.gzidx") == expected)
            let again = try gzstream(["index", "--span", "64K", "data.gz"], in: scratch)
            #expect(again.status == 1 && again.out == "")
            #expect(again.err == "gzstream: data.gz.gzidx: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.read("data.gz.gzidx") == expected)
            let forced = try gzstream(["index", "-f", "--span", "64K", "data.gz"], in: scratch)
            #expect(forced.status == 0 && forced.out == "" && forced.err == "", "\(forced)")
            let spaced = try libraryIndex(packed, span: 64 << 10).bytes
            #expect(try scratch.read("data.gz.gzidx") == spaced)
            // More points than the default's one, if not one per span: every block of this
            // repetitive sample text has the codes of the block before and a header under 32
            // bytes, and ISA-L's search for a boundary may pass over such a block's start.
            #expect(try GzipIndex(gzidx: spaced).points.count > 5)
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

    @Test("index -o PATH writes the index there (GZIDX, or bgzip's .gzi for BGZF), read back with --index PATH")
    func output() throws {
        try withScratch { scratch in
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout
            _ = try scratch.write("data.gz", packed)
            _ = try scratch.write("data.bgz", try gzstream(["pack", "-c", "--bgzf"], in: scratch, input: .bytes(Self.plain)).stdout)
            try FileManager.default.createDirectory(atPath: scratch.path("indexes"), withIntermediateDirectories: false)
            let written = try gzstream(["index", "-v", "-o", "indexes/data.idx", "data.gz"], in: scratch)
            let (expected, summary) = try libraryIndex(packed, span: GzipIndexBuilder.defaultSpan)
            #expect(written.status == 0 && written.out == "")
            #expect(written.err == "gzstream: data.gz: 1 member, \(Self.plain.count) bytes -> indexes/data.idx "
                + "(\(summary.pointCount) points, \(expected.count) bytes)\n")
            #expect(try scratch.read("indexes/data.idx") == expected)
            let bgzf = try gzstream(["index", "--output", "indexes/data.bgz.idx", "data.bgz"], in: scratch)
            #expect(bgzf.status == 0 && bgzf.err == "", "\(bgzf)")
            let gzi = try BGZFIndex(decoding: try scratch.read("indexes/data.bgz.idx"))
            #expect(gzi.entries.count > 10)
            for (file, index) in [("data.gz", "indexes/data.idx"), ("data.bgz", "indexes/data.bgz.idx")] {
                let range = try gzstream(["unpack", "-c", "--index", index, "--offset", "1000000", "--length", "5000", file],
                                         in: scratch)
                #expect(range.status == 0 && range.err == "" && range.stdout == Array(Self.plain[1_000_000..<1_005_000]), "\(file)")
            }
            let again = try gzstream(["index", "-o", "indexes/data.idx", "data.gz"], in: scratch)
            #expect(again.status == 1 && again.err == "gzstream: indexes/data.idx: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.listing() == ["data.bgz", "data.gz", "indexes"])
        }
    }

    @Test("index -o never replaces the file it indexes, even with -f and through a link; usage errors", arguments: [
        (["-f", "-o", "data.gz", "data.gz"], "gzstream: data.gz: input and output are the same file\n"),
        (["-f", "-o", "link.gz", "data.gz"], "gzstream: data.gz: input and output are the same file\n"),
        (["-o", "x", "data.gz", "data.gz"], usageError("index -o PATH needs one FILE (the index is that file's)")),
        (["-o", "x", "-"], usageError("index -o PATH needs one FILE (the index is that file's)")),
        (["-o", "-", "data.gz"], usageError("index -o needs a file's path (the index is not written to standard output)")),
        (["-o", "", "data.gz"], usageError("index -o needs a file's path (the index is not written to standard output)")),
    ])
    func outputRefused(arguments: [String], expected: String) throws {
        try withScratch { scratch in
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Array(Self.plain.prefix(100_000)))).stdout
            _ = try scratch.write("data.gz", packed)
            #expect(symlink("data.gz", scratch.path("link.gz")) == 0)
            let result = try gzstream(["index"] + arguments, in: scratch)
            #expect(result.status == 1 && result.out == "" && result.err == expected, "\(result)")
            #expect(try scratch.read("data.gz") == packed)
            #expect(try scratch.listing() == ["data.gz", "link.gz"])
        }
    }

    @Test("--span out of range or given to another command: usage errors", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["index", "--span", "31K", "a"], "span must be 32K to 4G - 1 (a number alone counts KiB), not '31K'"),
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

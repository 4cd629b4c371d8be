import Foundation
import Testing
import TestSupport

// The sizes the one grammar reads (SizeGrammarTests), given to the binary: an index every
// 1MiB, a range from 1.5K of 0x10 bytes, a limit of 1MB, and --span's deprecated number alone
// with its one warning line. Each of these forms was refused before the grammar.

@Suite("Sizes end to end: --span, --offset, --length and --max-output in every form", .onDedicatedThreads)
struct SizeOptionCLITests {
    /// 3 MiB of text: three points at a 1 MiB span.
    static let plain = sampleText(byteCount: 3 << 20, seed: 47)

    @Test("index --span 1MiB; unpack --offset 1.5K --length 0x10, --offset 1.5M --length 1KB; --max-output 1MB")
    func sizes() throws {
        try withScratch { scratch in
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout
            _ = try scratch.write("data.gz", packed)
            let indexed = try gzstream(["index", "--span", "1MiB", "data.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.out == "" && indexed.err == "", "\(indexed)")
            #expect(try scratch.read("data.gz.gzidx") == libraryIndex(packed, span: 1 << 20).bytes)

            let small = try gzstream(["unpack", "-c", "--offset", "1.5K", "--length", "0x10", "data.gz"], in: scratch)
            #expect(small.status == 0 && small.err == "", "\(small)")
            #expect(small.stdout == Array(Self.plain[1536..<1552]))
            let large = try gzstream(["unpack", "-c", "--offset=1.5M", "--length=1KB", "data.gz"], in: scratch)
            #expect(large.status == 0 && large.err == "", "\(large)")
            #expect(large.stdout == Array(Self.plain[(3 << 19)..<((3 << 19) + 1000)]))

            let limited = try gzstream(["unpack", "-c", "--max-output", "1MB", "data.gz"], in: scratch)
            #expect(limited.status == 1)
            #expect(limited.err.hasPrefix("gzstream: data.gz: output exceeds the limit of 1000000 bytes (at byte "), "\(limited)")
            #expect(limited.stdout == Array(Self.plain.prefix(1_000_000)), "exactly the limit's bytes")
        }
    }

    @Test("index --span 64: 64 KiB as before, one warning line for two files, exit 0; none with -q or 64K")
    func deprecatedSpan() throws {
        try withScratch { scratch in
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout
            _ = try scratch.write("a.gz", packed)
            _ = try scratch.write("b.gz", packed)
            let expected = try libraryIndex(packed, span: 64 << 10).bytes
            let warned = try gzstream(["index", "--span", "64", "a.gz", "b.gz"], in: scratch)
            #expect(warned.status == 0 && warned.out == "")
            #expect(warned.err == "gzstream: warning: --span 64: a number alone counts KiB (deprecated); write 64K or 64KiB\n")
            #expect(try scratch.read("a.gz.gzidx") == expected && scratch.read("b.gz.gzidx") == expected)
            for arguments in [["-q", "--span", "64"], ["--span", "64K"], ["--span", "64KiB"], ["--span", "65536B"]] {
                let quiet = try gzstream(["index", "-f"] + arguments + ["a.gz"], in: scratch)
                #expect(quiet.status == 0 && quiet.out == "" && quiet.err == "", "\(arguments): \(quiet)")
                #expect(try scratch.read("a.gz.gzidx") == expected, "\(arguments)")
            }
        }
    }

    @Test("what is not a size: the forms, exit 1, nothing written")
    func refused() throws {
        try withScratch { scratch in
            _ = try scratch.write("data.gz", try gzstream(["pack", "-c"], in: scratch, input: .bytes(Array("x\n".utf8))).stdout)
            let result = try gzstream(["unpack", "-c", "--offset", "1.5X", "data.gz"], in: scratch)
            #expect(result.status == 1 && result.out == "")
            #expect(result.err == sizeFormsRefusal("--offset", "1.5X"))
            #expect(try scratch.listing() == ["data.gz"])
        }
    }
}

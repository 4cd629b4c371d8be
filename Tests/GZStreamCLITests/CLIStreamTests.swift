import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The command line, continued: standard streams, levels and chunk sizes, inputs and outputs
// that are in the way.

extension CLITests {
    // MARK: Standard streams

    @Test("pack and unpack from standard input to standard output", .requires(.gzip), arguments: [[], ["-"]])
    func pipes(operand: [String]) throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 70_000, seed: 7)
            let packed = try gzstream(["pack"] + operand, in: scratch, input: .bytes(text))
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(headerFields(packed.stdout)?.flags == 0, "no FNAME for standard input")
            let packedPath = try scratch.write("piped.gz", packed.stdout)
            #expect(try gunzip(packedPath, in: scratch) == text)

            let unpacked = try gzstream(["unpack"] + operand, in: scratch, input: .file(packedPath))
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(unpacked.stdout == text)
            #expect(try scratch.listing() == ["piped.gz"])
        }
    }

    @Test("-c with several files: pack writes one member each, unpack writes the concatenation", .requires(.gzip))
    func severalFilesToStandardOutput() throws {
        try withScratch { scratch in
            let first = sampleText(byteCount: 10_000, seed: 1)
            let second = randomBytes(count: 5_000, seed: 2)
            let third = [UInt8]()
            try scratch.write("one", first)
            try scratch.write("two", second)
            try scratch.write("three", third)
            let packed = try gzstream(["pack", "-c", "one", "two", "three"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            let all = try scratch.write("all.gz", packed.stdout)
            #expect(try gunzip(all, in: scratch) == first + second + third)
            #expect(try scratch.listing() == ["all.gz", "one", "three", "two"])

            let unpacked = try gzstream(["unpack", "-c", "all.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(unpacked.stdout == first + second + third)

            #expect(try gzstream(["pack", "one", "two"], in: scratch).status == 0)
            let each = try gzstream(["unpack", "--stdout", "one.gz", "-", "two.gz"], in: scratch,
                                    input: .file(scratch.path("all.gz")))
            #expect(each.status == 0 && each.err == "", "\(each)")
            #expect(each.stdout == first + first + second + second)
        }
    }

    @Test("-o PATH names the output, from a file or from standard input", .requires(.gzip))
    func outputPath() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 9_000)
            try scratch.write("in.txt", text)
            try FileManager.default.createDirectory(atPath: scratch.path("sub"), withIntermediateDirectories: false)
            let packed = try gzstream(["pack", "-o", "sub/custom.gz", "in.txt"], in: scratch)
            #expect(packed.status == 0 && packed.out == "" && packed.err == "", "\(packed)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("sub")) == ["custom.gz"])
            #expect(try gunzip(scratch.path("sub/custom.gz"), in: scratch) == text)

            let unpacked = try gzstream(["unpack", "--output=plain", "sub/custom.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(try scratch.read("plain") == text)

            let fromInput = try gzstream(["pack", "-ostdin.gz"], in: scratch, input: .file(scratch.path("in.txt")))
            #expect(fromInput.status == 0 && fromInput.out == "" && fromInput.err == "", "\(fromInput)")
            #expect(try gunzip(scratch.path("stdin.gz"), in: scratch) == text)
            #expect(try scratch.listing() == ["in.txt", "plain", "stdin.gz", "sub"])
            // No input file to copy from: the mode is 0666 less the umask.
            #expect(fileStatus(scratch.path("stdin.gz"))?.permissions == 0o666 & ~currentUmask())

            let nowhere = try gzstream(["pack", "-o", "missing/x.gz", "in.txt"], in: scratch)
            #expect(nowhere.status == 1)
            #expect(nowhere.err == "gzstream: missing/x.gz: cannot create output: No such file or directory\n")
            #expect(try scratch.listing() == ["in.txt", "plain", "stdin.gz", "sub"])
        }
    }

    // MARK: Levels and chunk sizes

    @Test("every level gives output gzip reads", .requires(.gzip), arguments: [
        ["-1"], ["-2"], ["-3"], ["-4"], ["-5"], ["-6"], ["-7"], ["-8"], ["-9"], ["--fast"], ["--best"],
        ["--level", "0"], ["--level=0"], ["--level", "9"], ["-cf9"],
    ])
    func levels(flags: [String]) throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 100_000, seed: 3)
            let result = try gzstream(["pack", "-c"] + flags, in: scratch, input: .bytes(text))
            #expect(result.status == 0 && result.err == "", "\(result)")
            let path = try scratch.write("out.gz", result.stdout)
            #expect(try gunzip(path, in: scratch) == text)
            if flags.contains("0") || flags.contains("--level=0") {
                #expect(result.stdout.count > text.count, "level 0 stores")
            } else {
                #expect(result.stdout.count < text.count / 2, "text compresses")
            }
        }
    }

    @Test("chunk sizes give gzip-readable output and unpack back", .requires(.gzip), arguments: ["1", "7", "4095", "4097", "64K", "1M"])
    func chunkSizes(chunkSize: String) throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: chunkSize == "1" ? 20_000 : 300_000, seed: 4)
            let packed = try gzstream(["pack", "-c", "--chunk-size", chunkSize], in: scratch, input: .bytes(text))
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            let path = try scratch.write("out.gz", packed.stdout)
            #expect(try gunzip(path, in: scratch) == text)
            let unpacked = try gzstream(["unpack", "-c", "--chunk-size=\(chunkSize)", "out.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(unpacked.stdout == text)
        }
    }

    @Test("edge sizes round-trip through files", .requires(.gzip), arguments: [0, 1, 4095, 4096, 4097, (1 << 20) + 1])
    func edgeSizes(byteCount: Int) throws {
        try withScratch { scratch in
            let bytes = randomBytes(count: byteCount, seed: UInt64(byteCount))
            try scratch.write("edge", bytes)
            let packed = try gzstream(["pack", "edge"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(try gunzip(scratch.path("edge.gz"), in: scratch) == bytes)
            try FileManager.default.removeItem(atPath: scratch.path("edge"))
            let unpacked = try gzstream(["unpack", "edge.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(try scratch.read("edge") == bytes)
        }
    }

    // MARK: Inputs and outputs that are in the way

    @Test("--rm removes the input after success only")
    func removeInput() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 1_000)
            try scratch.write("good", text)
            let packed = try gzstream(["pack", "--rm", "good"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(try scratch.listing() == ["good.gz"])

            let unpacked = try gzstream(["unpack", "--rm", "good.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(try scratch.listing() == ["good"])
            #expect(try scratch.read("good") == text)

            // -k after --rm keeps.
            let kept = try gzstream(["pack", "--rm", "-k", "good"], in: scratch)
            #expect(kept.status == 0 && kept.err == "", "\(kept)")
            #expect(try scratch.listing() == ["good", "good.gz"])
            try FileManager.default.removeItem(atPath: scratch.path("good.gz"))

            // Corrupt input: kept, no output.
            try scratch.write("bad.gz", [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 0xFF, 0xFF])
            let failed = try gzstream(["unpack", "--rm", "bad.gz"], in: scratch)
            #expect(failed.status == 1, "\(failed)")
            #expect(try scratch.listing() == ["bad.gz", "good"])

            // Output in the way: input kept.
            try scratch.write("good.gz", "in the way")
            let refused = try gzstream(["pack", "--rm", "good"], in: scratch)
            #expect(refused.status == 1, "\(refused)")
            #expect(try scratch.listing() == ["bad.gz", "good", "good.gz"])
            #expect(try scratch.read("good.gz") == Array("in the way".utf8))
        }
    }

    @Test("an existing output is kept without -f, and the other files are still processed", .requires(.gzip))
    func existingOutput() throws {
        try withScratch { scratch in
            try scratch.write("a", "new a\n")
            try scratch.write("a.gz", "old a.gz")
            try scratch.write("b", "new b\n")
            let result = try gzstream(["pack", "a", "b"], in: scratch)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == "gzstream: a.gz: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.read("a.gz") == Array("old a.gz".utf8))
            #expect(try scratch.listing() == ["a", "a.gz", "b", "b.gz"])
            #expect(try gunzip(scratch.path("b.gz"), in: scratch) == Array("new b\n".utf8))

            let forced = try gzstream(["pack", "-f", "a"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(try gunzip(scratch.path("a.gz"), in: scratch) == Array("new a\n".utf8))
            #expect(try scratch.listing() == ["a", "a.gz", "b", "b.gz"])
        }
    }

    @Test("input and output the same file: error, input untouched", .requires(.gzip), arguments: [
        ["pack", "-o", "same", "same"], ["pack", "-f", "-o", "same", "same"], ["pack", "-f", "-o", "link", "same"],
        ["unpack", "-f", "-o", "same", "same"],
    ])
    func sameFile(arguments: [String]) throws {
        try withScratch { scratch in
            let content = try run("/usr/bin/gzip", ["-c"], in: scratch, input: .bytes(Array("same\n".utf8))).stdout
            try scratch.write("same", content)
            try FileManager.default.createSymbolicLink(atPath: scratch.path("link"), withDestinationPath: "same")
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1)
            #expect(result.err == "gzstream: same: input and output are the same file\n")
            #expect(try scratch.read("same") == content)
            #expect(try scratch.listing() == ["link", "same"])
        }
    }

    @Test("unpack -c goes on after a bad file", .requires(.gzip))
    func continuesAfterBadFile() throws {
        try withScratch { scratch in
            try scratch.write("bad.gz", "junkjunk")
            try scratch.write("good", "good\n")
            #expect(try run("/usr/bin/gzip", ["good"], in: scratch).status == 0)
            let result = try gzstream(["unpack", "-c", "bad.gz", "good.gz"], in: scratch)
            #expect(result.status == 1)
            #expect(result.out == "good\n")
            #expect(result.err == "gzstream: bad.gz: not in gzip format (bad magic at byte 0)\n")
        }
    }

    @Test("a missing input is reported and the next file is still processed")
    func missingInput() throws {
        try withScratch { scratch in
            try scratch.write("b", "b\n")
            let result = try gzstream(["pack", "x", "b"], in: scratch)
            #expect(result.status == 1)
            #expect(result.err == "gzstream: x: No such file or directory\n")
            #expect(try scratch.listing() == ["b", "b.gz"])
            let unpack = try gzstream(["unpack", "x.gz"], in: scratch)
            #expect(unpack.status == 1)
            #expect(unpack.err == "gzstream: x.gz: No such file or directory\n")
        }
    }

    @Test("a directory input without -r: gzip's warning, exit 2", arguments: ["pack", "unpack"], [["-c"], []])
    func directoryInput(mode: String, flags: [String]) throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("d.gz"), withIntermediateDirectories: false)
            let result = try gzstream([mode] + flags + ["d.gz"], in: scratch)
            #expect(result.status == 2)
            #expect(result.out == "")
            #expect(result.err == "gzstream: d.gz: is a directory -- ignored\n")
            #expect(try scratch.listing() == ["d.gz"])
        }
    }
}

import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The .gzi bgzip writes for `path` (`bgzip -r` on a copy), for tests that are `.requires(.bgzip)`.
private func bgzipIndex(of path: String, in scratch: Scratch) throws -> [UInt8] {
    let bgzip = try #require(Tool.bgzip.path)
    let copy = scratch.ioPath("reindex") + ".gz"
    try FileManager.default.copyItem(atPath: path, toPath: copy)
    let result = try run(bgzip, ["-r", copy], in: scratch)
    #expect(result.status == 0, "bgzip -r: \(result)")
    return try readBytes(copy + ".gzi")
}

@Suite("gzstream pack --bgzf and --index", .onDedicatedThreads)
struct BGZFCLITests {
    static let input: [UInt8] = sampleText(byteCount: 300_000, seed: 61) + randomBytes(count: 100_000, seed: 62)

    @Test("pack --bgzf FILE writes FILE.gz: BGZF members and the EOF member, read by gzip, pigz, bgzip and us", .requires(.gzip), .requires(.pigz), .requires(.bgzip))
    func packFile() throws {
        try withScratch { scratch in
            let path = try scratch.write("data", Self.input)
            _ = chmod(path, 0o640)
            setModificationTime(path, seconds: 1_500_000_000)
            let result = try gzstream(["pack", "--bgzf", "data"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["data", "data.gz"], "no .gzi without --index")
            let packed = try scratch.read("data.gz")
            #expect(packed.starts(with: [0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0xff, 6, 0, 0x42, 0x43, 2, 0]),
                    "a BGZF header: no FNAME, no MTIME")
            #expect(Array(packed.suffix(28)) == BGZFOutputStream.endOfFileMember)
            let status = try #require(fileStatus(scratch.path("data.gz")))
            #expect(status.permissions == 0o640 && status.modificationSeconds == 1_500_000_000)
            #expect(try gunzip(scratch.path("data.gz"), in: scratch) == Self.input)
            for tool in [Tool.pigz, .bgzip] {
                let decoded = try run(try #require(tool.path), ["-dc", "data.gz"], in: scratch)
                #expect(decoded.status == 0 && decoded.stdout == Self.input, "\(tool.name): \(decoded)")
            }
            for tool in [Tool.bgzip, .gzip] {
                let tested = try run(try #require(tool.path), ["-t", "data.gz"], in: scratch)
                #expect(tested.status == 0 && tested.err == "", "\(tool.name) -t: \(tested)")
            }
            let unpacked = try gzstream(["unpack", "-c", "data.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "" && unpacked.stdout == Self.input, "\(unpacked)")
            let tested = try gzstream(["test", "data.gz"], in: scratch)
            #expect(tested.status == 0 && tested.err == "", "\(tested)")
        }
    }

    @Test("The same bytes with -p 1, 2, 3 and 8, from a file or standard input, with any --chunk-size")
    func independentOfThreads() throws {
        try withScratch { scratch in
            try scratch.write("data", Self.input)
            let reference = try gzstream(["pack", "--bgzf", "-p", "1", "-c", "data"], in: scratch)
            #expect(reference.status == 0 && reference.err == "", "\(reference)")
            for arguments in [["-p", "2", "-c", "data"], ["-p", "3", "-c", "data"], ["-p8", "-c", "data"],
                              ["-c", "--chunk-size", "100", "data"], ["-c", "--chunk-size", "1M", "data"]] {
                let result = try gzstream(["pack", "--bgzf"] + arguments, in: scratch)
                #expect(result.status == 0 && result.stdout == reference.stdout, "\(arguments): \(result)")
            }
            let piped = try gzstream(["pack", "--bgzf", "-p", "2"], in: scratch, input: .file(scratch.path("data")))
            #expect(piped.status == 0 && piped.stdout == reference.stdout, "\(piped)")
        }
    }

    @Test("--index writes FILE.gz.gzi (and PATH.gzi for -o PATH), equal to bgzip -r's and usable by bgzip -b/-s", .requires(.bgzip))
    func index() throws {
        try withScratch { scratch in
            try scratch.write("a", Self.input)
            try scratch.write("b", sampleText(byteCount: 70_000, seed: 63))
            let files = try gzstream(["pack", "--bgzf", "--index", "-p", "2", "a", "b"], in: scratch)
            #expect(files.status == 0 && files.out == "" && files.err == "", "\(files)")
            let stdinToPath = try gzstream(["pack", "--bgzf", "--index", "-o", "c.bgz"], in: scratch,
                                           input: .file(scratch.path("a")))
            #expect(stdinToPath.status == 0 && stdinToPath.err == "", "\(stdinToPath)")
            #expect(try scratch.listing() == ["a", "a.gz", "a.gz.gzi", "b", "b.gz", "b.gz.gzi", "c.bgz", "c.bgz.gzi"])
            #expect(try scratch.read("a.gz") == scratch.read("c.bgz"))
            #expect(fileStatus(scratch.path("a.gz.gzi"))?.permissions == fileStatus(scratch.path("a"))?.permissions)
            let members = (Self.input.count + 65279) / 65280
            #expect(try scratch.read("a.gz.gzi").count == 8 + 16 * (members - 1))
            for name in ["a.gz", "b.gz", "c.bgz"] {
                #expect(try scratch.read(name + ".gzi") == bgzipIndex(of: scratch.path(name), in: scratch), "\(name).gzi")
            }
            let bgzip = try #require(Tool.bgzip.path)
            for (start, length) in [(0, 100), (65_280, 10), (200_000, 150_000), (Self.input.count - 5, 5)] {
                let range = try run(bgzip, ["-b", String(start), "-s", String(length), "c.bgz"], in: scratch)
                #expect(range.status == 0 && range.stdout == Array(Self.input[start..<(start + length)]),
                        "\(start)+\(length): \(range)")
            }
        }
    }

    @Test("An existing .gzi is not replaced without -f (and nothing is written); -f replaces it", .requires(.bgzip))
    func existingIndex() throws {
        try withScratch { scratch in
            try scratch.write("a", Self.input)
            try scratch.write("a.gz.gzi", "old index\n")
            let refused = try gzstream(["pack", "--bgzf", "--index", "a"], in: scratch)
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.err == "gzstream: a.gz.gzi: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.listing() == ["a", "a.gz.gzi"])
            #expect(try scratch.read("a.gz.gzi") == Array("old index\n".utf8))

            let forced = try gzstream(["pack", "--bgzf", "--index", "-f", "a"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(try scratch.listing() == ["a", "a.gz", "a.gz.gzi"])
            #expect(try scratch.read("a.gz.gzi") == bgzipIndex(of: scratch.path("a.gz"), in: scratch))
        }
    }

    @Test("usage errors for --bgzf and --index", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["pack", "--bgzf", "--index", "-c", "a"], "--index needs an output file (not standard output)"),
        (["unpack", "--bgzf", "a.gz"], "--bgzf and --index apply to pack"),
    ] as [([String], String)])
    func usageErrors(arguments: [String], message: String) throws {
        try withScratch { scratch in
            try scratch.write("a", "a\n")
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1 && result.out == "")
            #expect(result.err == usageError(message))
            #expect(try scratch.listing() == ["a"])
        }
    }

    @Test("A full disk mid-way: exit 1, one line; with --index and -o a device, refused before writing")
    func fullDevice() throws {
        try withScratch { scratch in
            try scratch.write("big", randomBytes(count: 1 << 20, seed: 64))
            let toStandardOutput = try gzstream(["pack", "--bgzf", "-c", "big"], in: scratch, stdoutPath: "/dev/full")
            #expect(toStandardOutput.status == 1, "\(toStandardOutput)")
            #expect(toStandardOutput.err == "gzstream: standard output: write failed: No space left on device\n")
            let toDevice = try gzstream(["pack", "--bgzf", "-o", "/dev/full", "big"], in: scratch)
            #expect(toDevice.status == 1, "\(toDevice)")
            #expect(toDevice.err == "gzstream: /dev/full: write failed: No space left on device\n")
            let indexed = try gzstream(["pack", "--bgzf", "--index", "-o", "/dev/full", "big"], in: scratch)
            #expect(indexed.status == 1, "\(indexed)")
            #expect(indexed.err == "gzstream: /dev/full: not a regular file: --index needs one to write its .gzi beside\n")
            #expect(!FileManager.default.fileExists(atPath: "/dev/full.gzi"))
            #expect(try scratch.listing() == ["big"])
        }
    }

    @Test("A file that cannot grow (RLIMIT_FSIZE) mid-way: exit 1; no output, .gzi or temporary file left",
          .needsFileSizeLimit)
    func fileSizeLimit() throws {
        try withScratch { scratch in
            try scratch.write("big", randomBytes(count: 2 << 20, seed: 65))
            // SIGXFSZ ignored, so the write fails with EFBIG; 64 blocks of 512 bytes.
            let result = try shell(#"trap '' XFSZ; ulimit -f 64; exec "$0" pack --bgzf --index -p 2 big"#, in: scratch)
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "gzstream: big.gz: write failed: File too large\n")
            #expect(try scratch.listing() == ["big"])
        }
    }

    @Test("A closed pipe ends pack --bgzf by SIGPIPE; with SIGPIPE ignored, one line and exit 1",
          .timeLimit(.minutes(1)), arguments: [BrokenPipeSignal.fatal, .ignored])
    func brokenPipe(sigpipe: BrokenPipeSignal) throws {
        try withScratch { scratch in
            try scratch.write("big", randomBytes(count: 4 << 20, seed: 66))
            let result = try gzstreamIntoClosedPipe("pack --bgzf -p 2 -c big", sigpipe: sigpipe, in: scratch)
            #expect(!result.pipeline.timedOut && result.pipeline.status == 0, "\(result)")
            #expect(result.status == sigpipe.statusLine, "\(result)")
            #expect(result.err == sigpipe.message(naming: "standard output"), "\(result)")
        }
    }

    @Test("-v reports plain and BGZF sizes")
    func verbose() throws {
        try withScratch { scratch in
            try scratch.write("a", Self.input)
            let result = try gzstream(["pack", "--bgzf", "-v", "a"], in: scratch)
            let packed = try scratch.read("a.gz").count
            #expect(result.status == 0, "\(result)")
            #expect(result.err == verboseLine("a", bytesIn: Self.input.count, bytesOut: packed, plain: Self.input.count,
                                              packed: packed, output: "a.gz"))
        }
    }
}

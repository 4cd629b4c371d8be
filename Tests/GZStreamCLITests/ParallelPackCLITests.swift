import Foundation
import Testing
import TestSupport

/// Text and random stretches, several 128 KiB blocks long.
func mixedInput(byteCount: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    var seed: UInt64 = 1
    while bytes.count < byteCount {
        bytes += seed % 3 == 0 ? randomBytes(count: 40_000, seed: seed) : sampleText(byteCount: 90_000, seed: seed)
        seed += 1
    }
    return Array(bytes.prefix(byteCount))
}

@Suite("pack on several threads: -p, -b, failures mid-stream", .onDedicatedThreads)
struct ParallelPackCLITests {
    @Test("pack -p 1, 2, 3 and 8 write the same bytes, which gzip and pigz read back", .requires(.gzip), .requires(.pigz))
    func threadCountDoesNotChangeOutput() throws {
        try withScratch { scratch in
            let content = mixedInput(byteCount: 1_300_000)
            try scratch.write("data", content)
            let reference = try gzstream(["pack", "-c", "-n", "-p", "1", "data"], in: scratch)
            #expect(reference.status == 0 && reference.err == "", "\(reference)")
            for arguments in [["-p", "2"], ["-p3"], ["--threads", "8"], ["--threads=2"], []] {
                let result = try gzstream(["pack", "-c", "-n"] + arguments + ["data"], in: scratch)
                #expect(result.status == 0 && result.err == "", "\(arguments): \(result)")
                #expect(result.stdout == reference.stdout, "\(arguments): output differs from -p 1")
            }
            let packed = try scratch.write("data.gz", reference.stdout)
            #expect(try gunzip(packed, in: scratch) == content)
            let result = try run(try #require(Tool.pigz.path), ["-dc", packed], in: scratch)
            #expect(result.status == 0 && result.stdout == content, "pigz -dc: \(result)")
        }
    }

    @Test("-b takes KiB as pigz's does (default 1 MiB chunks); another block size gives other bytes with the same content",
          .requires(.gzip))
    func blockSize() throws {
        try withScratch { scratch in
            let content = mixedInput(byteCount: 2_600_000)
            try scratch.write("data", content)
            let standard = try gzstream(["pack", "-c", "-n", "data"], in: scratch)
            let explicit = try gzstream(["pack", "-c", "-n", "-b", "1024", "data"], in: scratch)
            let suffixed = try gzstream(["pack", "-c", "-n", "--block-size=1M", "data"], in: scratch)
            let other = try gzstream(["pack", "-c", "-n", "-b", "512", "data"], in: scratch)
            #expect(explicit.stdout == standard.stdout && suffixed.stdout == standard.stdout)
            #expect(other.status == 0 && other.stdout != standard.stdout, "\(other)")
            #expect(try gunzip(try scratch.write("other.gz", other.stdout), in: scratch) == content)
        }
    }

    @Test("Bad -p and -b values are usage errors", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["-p", "0"], "thread count must be 1 to 256, not '0'"),
        (["--block-size", "1G"], "block size must be 32K to 64M (a number alone counts KiB), not '1G'"),
    ])
    func badValues(arguments: [String], message: String) throws {
        try expectUsageError(["pack", "-c"] + arguments, message)
    }

    @Test("-b outside parallel pack is a usage error, not silently ignored", arguments: [
        ["unpack", "-b", "64"],
    ])
    func blockSizeOutsidePack(arguments: [String]) throws {
        try expectUsageError(arguments, "--block-size applies to pack without --bgzf (BGZF members hold 65280 bytes)")
    }

    private func expectUsageError(_ arguments: [String], _ message: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch, input: .bytes([1, 2, 3]))
            #expect(result.status == 1)
            #expect(result.err == usageError(message), "\(result)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test("A write failing mid-stream on several threads (file too large): exit 1, one line, nothing left behind",
          .needsFileSizeLimit)
    func outputFailureMidStream() throws {
        try withScratch { scratch in
            try scratch.write("data", mixedInput(byteCount: 3_000_000))
            // ulimit -f counts 512-byte blocks: the output fails after 100 KiB with EFBIG
            // (SIGXFSZ ignored, so the write reports the error instead of killing the process).
            let result = try shell(#"trap '' XFSZ; ulimit -f 200; exec "$0" pack -p 2 data"#, in: scratch)
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "gzstream: data.gz: write failed: File too large\n", "\(result)")
            #expect(try scratch.listing() == ["data"], "no output and no temporary file")
        }
    }

    @Test("A closed pipe mid-stream on several threads ends the run by SIGPIPE, or with it ignored exit 1",
          arguments: [BrokenPipeSignal.fatal, .ignored])
    func closedPipeMidStream(sigpipe: BrokenPipeSignal) throws {
        try withScratch { scratch in
            try scratch.write("data", mixedInput(byteCount: 3_000_000))
            let result = try gzstreamIntoClosedPipe("pack -c -p 3 data", sigpipe: sigpipe, in: scratch)
            #expect(result.status == sigpipe.statusLine, "\(result)")
            #expect(result.err == sigpipe.message(naming: "standard output"), "\(result)")
        }
    }
}

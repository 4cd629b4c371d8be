import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A usage error as `gzstream` prints it: one line, then where help is, as gzip and coreutils.
func usageError(_ message: String) -> String {
    "gzstream: \(message)\n" + tryHelpLine
}

/// The `-v` line, computed the way the tool documents it: plain and packed sizes, space saved
/// to a tenth of a percent.
func verboseLine(_ input: String, bytesIn: Int, bytesOut: Int, plain: Int, packed: Int, output: String) -> String {
    let saved = plain == 0 ? 0 : (1 - Double(packed) / Double(plain)) * 100
    let tenths = Int((saved * 10).rounded())
    let percent = "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)%"
    return "gzstream: \(input): \(bytesIn) -> \(bytesOut) bytes, \(percent) saved -> \(output)\n"
}

@Suite("gzstream command line", .onDedicatedThreads)
struct CLITests {
    // MARK: Help, version, usage errors

    @Test("-h and -V are options only where options are read: after --, or as -S's or -o's value, they are a name",
          .requires(.gzip))
    func helpAsAName() throws {
        try withScratch { scratch in
            try scratch.write("-h", "hello\n")
            try scratch.write("f", "f\n")
            let packed = try gzstream(["-k", "--", "-h"], in: scratch)
            #expect(packed.status == 0 && packed.out == "" && packed.err == "", "\(packed)")
            #expect(try gunzip(scratch.path("-h.gz"), in: scratch) == Array("hello\n".utf8))
            let suffixed = try gzstream(["-k", "-S", "-V", "f"], in: scratch)
            #expect(suffixed.status == 0 && suffixed.out == "", "\(suffixed)")
            #expect(try gunzip(scratch.path("f-V"), in: scratch) == Array("f\n".utf8))
            let named = try gzstream(["pack", "-o", "-h2", "f"], in: scratch)
            #expect(named.status == 0 && named.out == "", "\(named)")
            #expect(try gunzip(scratch.path("-h2"), in: scratch) == Array("f\n".utf8))
        }
    }

    @Test("usage errors: exit 1, a line and where help is on stderr, nothing on stdout", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["-x", "a"], "invalid option -- 'x'"),
        (["unpack", "--test", "a"], "unrecognized option '--test'"),
        (["-t", "-o", "x", "a"], "test writes no output: -c, -o and --rm do not apply"),
        (["pack", "-x", "a"], "invalid option -- 'x'"),
        (["pack", "-o", "out.gz", "a", "b"], "-o takes one input file, or an existing directory for several"),
        (["index", "-r", "a"], "-r applies to pack, unpack, test and list"),
        (["--bogus", "-h"], "unrecognized option '--bogus'"),
    ] as [([String], String)])
    func usageErrors(arguments: [String], message: String) throws {
        try withScratch { scratch in
            try scratch.write("a", "a\n")
            try scratch.write("b", "b\n")
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == usageError(message))
            #expect(try scratch.listing() == ["a", "b"])
        }
    }

    // MARK: Diagnostics

    @Test("-v prints one line per file on stderr")
    func verbose() throws {
        try withScratch { scratch in
            let first = sampleText(byteCount: 20_000)
            let second = randomBytes(count: 3_000, seed: 2)
            try scratch.write("t1", first)
            try scratch.write("t2", second)
            let packed = try gzstream(["pack", "-v", "t1", "t2"], in: scratch)
            #expect(packed.status == 0)
            let size1 = try scratch.read("t1.gz").count
            let size2 = try scratch.read("t2.gz").count
            #expect(packed.err
                == verboseLine("t1", bytesIn: 20_000, bytesOut: size1, plain: 20_000, packed: size1, output: "t1.gz")
                + verboseLine("t2", bytesIn: 3_000, bytesOut: size2, plain: 3_000, packed: size2, output: "t2.gz"))

            let unpacked = try gzstream(["unpack", "-c", "--verbose", "t1.gz"], in: scratch)
            #expect(unpacked.status == 0)
            #expect(unpacked.stdout == first)
            #expect(unpacked.err == verboseLine("t1.gz", bytesIn: size1, bytesOut: 20_000, plain: 20_000, packed: size1,
                                                output: "standard output"))
        }
    }

    @Test("-q silences the trailing-garbage warning but keeps exit 2", .requires(.gzip))
    func quietTrailingGarbage() throws {
        try withScratch { scratch in
            let member = try run("/usr/bin/gzip", ["-c"], in: scratch, input: .bytes(Array("kept\n".utf8))).stdout
            try scratch.write("g.gz", member + Array("garbage".utf8))
            let loud = try gzstream(["unpack", "-c", "g.gz"], in: scratch)
            #expect(loud.status == 2)
            #expect(loud.out == "kept\n")
            #expect(loud.err == "gzstream: g.gz: decompression OK, trailing garbage ignored\n")
            let quiet = try gzstream(["unpack", "-cq", "g.gz"], in: scratch)
            #expect(quiet.status == 2)
            #expect(quiet.out == "kept\n")
            #expect(quiet.err == "")
        }
    }

    // MARK: Limits and damaged input

    @Test("--max-output stops with an error; in file mode no output is left")
    func maximumOutput() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 10_000)
            try scratch.write("m", text)
            #expect(try gzstream(["pack", "--rm", "m"], in: scratch).status == 0)

            let toFile = try gzstream(["unpack", "--max-output", "100", "m.gz"], in: scratch)
            #expect(toFile.status == 1)
            #expect(toFile.err.hasPrefix("gzstream: m.gz: output exceeds the limit of 100 bytes (at byte "))
            #expect(toFile.err.hasSuffix(" of the input)\n") && toFile.err.split(separator: "\n").count == 1)
            #expect(try scratch.listing() == ["m.gz"])

            let toOutput = try gzstream(["unpack", "-c", "--max-output=1K", "m.gz"], in: scratch)
            #expect(toOutput.status == 1)
            #expect(toOutput.err.hasPrefix("gzstream: m.gz: output exceeds the limit of 1024 bytes (at byte "))
            #expect(toOutput.err.hasSuffix(" of the input)\n") && toOutput.err.split(separator: "\n").count == 1)
            #expect(toOutput.stdout == Array(text.prefix(1024)), "exactly the limit's bytes")
            for chunkSize in ["1", "100", "4096", "1M"] {
                let sized = try gzstream(["unpack", "-c", "--max-output", "5000", "--chunk-size", chunkSize, "m.gz"],
                                         in: scratch)
                #expect(sized.status == 1 && sized.stdout == Array(text.prefix(5000)), "--chunk-size \(chunkSize): \(sized)")
            }

            let exact = try gzstream(["unpack", "-c", "--max-output", "10000", "m.gz"], in: scratch)
            #expect(exact.status == 0 && exact.err == "", "\(exact)")
            #expect(exact.stdout == text)
        }
    }

    @Test("every prefix of a valid file fails in file mode and leaves no output", .requires(.gzip))
    func everyPrefixFails() throws {
        try withScratch { scratch in
            let whole = try run("/usr/bin/gzip", ["-cn"], in: scratch, input: .bytes(Array("prefixes!\n".utf8))).stdout
            #expect(whole.count > 20)
            for length in 0..<whole.count {
                try scratch.write("p.gz", Array(whole.prefix(length)))
                let result = try gzstream(["unpack", "p.gz"], in: scratch)
                #expect(result.status == 1, "prefix \(length): \(result)")
                let expected = length == 0 ? "empty input: no gzip member" : "unexpected end of input in the "
                #expect(result.err.hasPrefix("gzstream: p.gz: \(expected)") && result.errLines.count == 1,
                        "prefix \(length): \(result)")
                #expect(try scratch.listing() == ["p.gz"], "prefix \(length)")
            }
        }
    }

    @Test("a full disk is an error naming ENOSPC", arguments: [
        ["unpack", "-c", "z.gz"], ["pack", "-c", "z"], ["pack", "-c", "small"],
    ])
    func fullDevice(arguments: [String]) throws {
        try withScratch { scratch in
            try scratch.write("z", sampleText(byteCount: 200_000))
            try scratch.write("small", "tiny\n")
            #expect(try gzstream(["pack", "z"], in: scratch).status == 0)
            let result = try gzstream(arguments, in: scratch, stdoutPath: "/dev/full")
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "gzstream: standard output: write failed: No space left on device\n")
        }
    }

    /// A command that writes standard output, and whether its output is small enough that
    /// the pipe's reader must be gone before it starts for its write to fail.
    struct ClosedPipeCase: Sendable, CustomTestStringConvertible {
        var command: String
        var readerGoneFirst = false
        var testDescription: String { command }
    }

    static let closedPipeCases = [
        ClosedPipeCase(command: "unpack -c big.gz"), ClosedPipeCase(command: "unpack -c big.gz big.gz"),
        ClosedPipeCase(command: "unpack -c -p 2 bgzf.gz"), ClosedPipeCase(command: "pack -c big"),
        ClosedPipeCase(command: "pack -c big big"), ClosedPipeCase(command: "pack -c -p 2 big"),
        ClosedPipeCase(command: "pack --bgzf -p 2 -c big"),
        ClosedPipeCase(command: "list big.gz", readerGoneFirst: true),
        ClosedPipeCase(command: "list --json big.gz bgzf.gz", readerGoneFirst: true),
        ClosedPipeCase(command: "--help", readerGoneFirst: true),
        ClosedPipeCase(command: "--version", readerGoneFirst: true),
    ]

    /// `big` (4 MiB of text, far more than a pipe holds), `big.gz` and `bgzf.gz`.
    func writeClosedPipeInputs(_ scratch: Scratch) throws {
        try scratch.write("big", sampleText(byteCount: 4 << 20, seed: 9))
        try #require(try gzstream(["pack", "-o", "big.gz", "big"], in: scratch).status == 0)
        try #require(try gzstream(["pack", "--bgzf", "-o", "bgzf.gz", "big"], in: scratch).status == 0)
    }

    @Test("a closed pipe on standard output ends gzstream by SIGPIPE, quietly (the shell sees 141); with SIGPIPE ignored, one line 'Broken pipe' and exit 1",
          .timeLimit(.minutes(1)), arguments: closedPipeCases, [BrokenPipeSignal.fatal, .ignored])
    func closedPipe(_ closedPipe: ClosedPipeCase, sigpipe: BrokenPipeSignal) throws {
        try withScratch { scratch in
            try writeClosedPipeInputs(scratch)
            let result = try gzstreamIntoClosedPipe(closedPipe.command, sigpipe: sigpipe,
                                                    readerGoneFirst: closedPipe.readerGoneFirst, in: scratch)
            #expect(!result.pipeline.timedOut && result.pipeline.status == 0, "\(result)")
            #expect(result.status == sigpipe.statusLine, "\(result)")
            #expect(result.err == sigpipe.message(naming: "standard output"), "\(result)")
            #expect(try scratch.listing() == ["bgzf.gz", "big", "big.gz"], "no temporary file left")
        }
    }

    @Test("a FIFO named by -o whose reader leaves: SIGPIPE, or with it ignored 'FIFO: Broken pipe' and exit 1",
          .timeLimit(.minutes(1)), arguments: [BrokenPipeSignal.fatal, .ignored])
    func closedFIFO(sigpipe: BrokenPipeSignal) throws {
        try withScratch { scratch in
            try writeClosedPipeInputs(scratch)
            #expect(mkfifo(scratch.path("fifo"), 0o644) == 0)
            // Opening the FIFO waits for head; head reads 10 of the 4 MiB and leaves.
            let script = #"head -c 10 fifo >/dev/null & "$0" unpack -o fifo big.gz; echo $?; wait"#
            let result = sigpipe == .fatal
                ? try run("/usr/bin/env", ["--default-signal=PIPE", "/bin/sh", "-c", script, Locations.binary],
                          in: scratch, timeout: 60)
                : try shell("trap '' PIPE; " + script, in: scratch, timeout: 60)
            #expect(!result.timedOut && result.status == 0, "\(result)")
            #expect(result.out == sigpipe.statusLine, "\(result)")
            #expect(result.err == sigpipe.message(naming: "fifo"), "\(result)")
            #expect(try scratch.listing() == ["bgzf.gz", "big", "big.gz", "fifo"], "no temporary file left")
        }
    }
}

import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// gzip mode next to GNU gzip 1.12, continued: `-d NAME` finding NAME.gz, and terminals (the
// refusal of compressed data only for standard input, the question before replacing an
// output). gzstream runs through a link named `gzip` (``gzipNamedLink(in:)``).

/// Runs `command` (a `/bin/sh` command line) on a pseudo-terminal made by script(1), with
/// `typed` typed on the terminal: the line discipline holds it until the command reads it.
func runOnTerminal(_ command: String, typing typed: String, in scratch: Scratch) throws -> RunResult {
    let script = try #require(Tool.script.path)
    return try run(script, ["-qec", command, "/dev/null"], in: scratch, input: .bytes(Array(typed.utf8)), timeout: 30)
}

@Suite("gzip mode: -d NAME takes NAME.gz; terminals as GNU gzip", .onDedicatedThreads)
struct GzipModeTerminalCLITests {
    /// Gzip files under names with every suffix gzip knows (and some it does not try).
    static func suffixFiles() throws -> [String: [UInt8]] {
        let member = GzipModeRunCLITests.member
        var files: [String: [UInt8]] = ["logx.gz": member, "Fz": member, "plain": Array("plain\n".utf8),
                                        "r.gz": member, "sub/q.gz": member, "both": member, "both.gz": member + member]
        for (index, suffix) in [".z", "-z", ".Z", "_z", ".tgz", "-gz", ".taz", "Z"].enumerated() {
            files["p\(index)\(suffix)"] = member
        }
        return files
    }

    @Test("-d NAME, -t NAME and -l NAME try NAME, then -S's suffix, .gz, .z, -z and .Z, as gzip", .requires(.gzip), arguments: [
        ["-dc", "logx"], ["-d", "logx"], ["-dv", "logx"], ["-t", "logx"], ["-l", "logx"], ["-dc", "-Sz", "F"],
        ["-d", "-S", "z", "F"], ["-dc", "-S", ".zz", "r"], ["-dc", "sub/q"], ["-d", "sub/q"], ["-dc", "both"],
        ["-dc", "p0"], ["-dc", "p1"], ["-dc", "p2"], ["-dc", "p3"], ["-dc", "p4"], ["-dc", "p5"], ["-dc", "p6"],
        ["-dc", "p7"], ["-dc", "missing"], ["-dc", "missing.gz"], ["-dc", "-S", ".zz", "missing"], ["-d", "plain"],
        ["logx"],
    ])
    func suffixTried(arguments: [String]) throws {
        try expectLikeGzip(arguments, files: Self.suffixFiles())
    }

    @Test("-d NAME does not follow a symbolic link NAME.gz in file mode, as gzip", .requires(.gzip))
    func suffixedLinkNotFollowed() throws {
        try withScratch { scratch in
            try scratch.write("target.gz", GzipModeRunCLITests.member)
            try FileManager.default.createSymbolicLink(atPath: scratch.path("logx.gz"), withDestinationPath: "target.gz")
            let refused = try run(gzipNamedLink(in: scratch), ["-d", "logx"], in: scratch)
            #expect(refused.status != 0, "\(refused)")
            #expect(try scratch.listing() == ["logx.gz", "target.gz"])
            let read = try run(gzipNamedLink(in: scratch), ["-dc", "logx"], in: scratch)
            #expect(read.status == 0 && read.out == "hello world\n", "\(read)")
        }
    }

    // MARK: Terminals

    /// Runs `line` (with `GZIP` for the program, `ERR` for a file taking standard error) on a
    /// terminal for gzstream as `gzip` and for GNU gzip, each in its own directory holding `f`
    /// and `f.gz`, typing `typed`.
    /// - Returns: each run's result, standard error, and the files left.
    static func onTerminalBesideGzip(_ line: String, typing typed: String = "")
        throws -> [(result: RunResult, err: String, files: [String: TreeEntry])] {
        var outcomes: [(RunResult, String, [String: TreeEntry])] = []
        for program in [nil, "/usr/bin/gzip"] {
            try withScratch { scratch in
                try scratch.write("f", "hello world\n")
                try scratch.write("f.gz", GzipModeRunCLITests.member)
                try scratch.write("g", "other\n")
                for name in ["f", "f.gz", "g"] { setModificationTime(scratch.path(name), seconds: GzipModeRunCLITests.fixedTime) }
                let err = scratch.ioPath("err")
                let command = line.replacingOccurrences(of: "GZIP", with: shellQuoted(try program ?? gzipNamedLink(in: scratch)))
                    .replacingOccurrences(of: "ERR", with: shellQuoted(err))
                let result = try runOnTerminal(command, typing: typed, in: scratch)
                let message = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
                outcomes.append((result, message, try tree(at: scratch.work.path)))
            }
        }
        return outcomes
    }

    @Test("Compressed data is refused on a terminal only for standard input, with gzip's two lines", .requires(.gzip), .requires(.script),
          arguments: [
        "GZIP -c f 2>ERR", "GZIP 2>ERR <f", "GZIP -c 2>ERR <f", "GZIP - 2>ERR <f",
        "GZIP -q 2>ERR <f", "GZIP -d 2>ERR", "GZIP -t 2>ERR", "GZIP -dc f.gz 2>ERR", "GZIP -f 2>ERR <f >/dev/null",
    ])
    func terminalLikeGzip(line: String) throws {
        let outcomes = try Self.onTerminalBesideGzip(line)
        let (ours, gzip) = (outcomes[0], outcomes[1])
        #expect(ours.result.status == gzip.result.status && !ours.result.timedOut, "gzstream: \(ours.result)\ngzip: \(gzip.result)")
        #expect(ours.err == gzip.err)
        #expect(ours.files == gzip.files)
        if line == "GZIP -c f 2>ERR" {
            // Compressed bytes reached the terminal (script's output, its newlines made CR LF).
            #expect(ours.result.stdout.starts(with: [0x1f, 0x8b]), "\(ours.result)")
        }
    }

    @Test("An existing output on a terminal: gzip's question, answered on the terminal", .requires(.gzip), .requires(.script),
          arguments: [
        ("GZIP f 2>ERR", "n\n"), ("GZIP f 2>ERR", "\n"), ("GZIP f 2>ERR", ""), ("GZIP -q f 2>ERR", "no\n"),
        ("GZIP -d f.gz 2>ERR", "N\n"), ("GZIP -d f.gz 2>ERR", "y\n"),
        ("(trap '' INT; GZIP f 2>ERR)", "y\n"), ("GZIP f 2>ERR </dev/null", "y\n"), ("GZIP -f f 2>ERR", "n\n"),
    ])
    func overwriteQuestion(line: String, typed: String) throws {
        let outcomes = try Self.onTerminalBesideGzip(line, typing: typed)
        let (ours, gzip) = (outcomes[0], outcomes[1])
        #expect(ours.result.status == gzip.result.status && !ours.result.timedOut, "gzstream: \(ours.result)\ngzip: \(gzip.result)")
        #expect(ours.err == gzip.err)
        // A file gzstream compressed is its own compressor's bytes: compared where nothing was
        // compressed over an output, or where the output is plain.
        let replaced = line.contains("-f ") || typed.hasPrefix("y") && !line.contains("trap") && !line.contains("/dev/null")
        if !replaced || line.contains("-d ") {
            #expect(ours.files == gzip.files)
        }
    }

    @Test("Yes replaces the output, as gzip: f.gz is f's data, f is gone", .requires(.gzip), .requires(.script),
          arguments: ["y\n", "Y\n", "yes\n"])
    func overwriteAnsweredYes(typed: String) throws {
        let outcomes = try Self.onTerminalBesideGzip("GZIP f 2>ERR", typing: typed)
        let (ours, gzip) = (outcomes[0], outcomes[1])
        #expect(ours.result.status == 0 && gzip.result.status == 0, "gzstream: \(ours.result)\ngzip: \(gzip.result)")
        #expect(ours.err == gzip.err)
        #expect(ours.err == "gzip: f.gz already exists; do you wish to overwrite (y or n)? ")
        #expect(Array(ours.files.keys).sorted() == ["f.gz", "g"])
        guard case .file(let packed) = ours.files["f.gz"] else {
            Issue.record("f.gz is not a file")
            return
        }
        try withScratch { scratch in
            try scratch.write("check.gz", packed)
            #expect(try gunzip(scratch.path("check.gz"), in: scratch) == Array("hello world\n".utf8))
        }
    }

    @Test("Without a terminal an existing output is gzip's warning, exit 2", .requires(.gzip), arguments: [
        ["f"], ["-d", "f.gz"], ["-dk", "f.gz"],
    ])
    func existingWithoutTerminal(arguments: [String]) throws {
        try expectLikeGzip(arguments, files: ["f": Array("hello world\n".utf8), "f.gz": GzipModeRunCLITests.member,
                                              "g": Array("other\n".utf8)])
    }
}

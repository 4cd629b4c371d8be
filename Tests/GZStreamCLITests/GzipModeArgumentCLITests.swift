import Foundation
import Testing
import TestSupport

// How gzip mode reads its arguments: a mistyped command word, and the GZIP environment
// variable, against GNU gzip 1.12 run with the same arguments and variable on the same files.

/// Runs GNU gzip, or the `gzstream` under test through a link named `linkName` (`gzip`,
/// `zcat`, or `gzstream` itself), with `GZIP` set to `gzipVariable` or unset.
/// - Parameters:
///   - program: `nil` for the binary under test, else the name of a program in `/usr/bin`,
///     run by that name as a shell runs it: `argv[0]` is then `gzip`, not `/usr/bin/gzip`,
///     which getopt's messages would show.
func runAsGzip(_ arguments: [String], gzipVariable: String? = nil, program: String? = nil, linkName: String = "gzip",
               in scratch: Scratch, input: Input = .null) throws -> RunResult {
    let executable = try program.map { ["PATH=/usr/bin:/bin", $0] } ?? [binaryLinked(as: linkName, in: scratch)]
    let variable = gzipVariable.map { ["GZIP=" + $0] } ?? ["-u", "GZIP"]
    return try run("/usr/bin/env", variable + executable + arguments, in: scratch, input: input)
}

/// A symbolic link to the binary under test named `name`, beside the scratch's `work/` (so
/// that listings of `work/` leave it out); made once per scratch.
func binaryLinked(as name: String, in scratch: Scratch) throws -> String {
    let folder = scratch.root.appendingPathComponent("bin")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let link = folder.appendingPathComponent(name).path
    if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil {
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Locations.binary)
    }
    return link
}

/// GNU gzip 1.12's standard error with its help pointer quoted as coreutils quote it
/// (`Try 'gzip --help'`), the one form gzstream prints.
func withStraightQuotes(_ text: String) -> String {
    text.replacingOccurrences(of: "Try `", with: "Try '")
}

@Suite("gzip mode: a mistyped command, and the GZIP variable, as gzip 1.12", .onDedicatedThreads)
struct GzipModeArgumentCLITests {
    static let text = sampleText(byteCount: 3000, seed: 41)

    // MARK: A mistyped command word

    @Test("A first word that names no file and is close to a command is refused before anything is touched",
          arguments: [("tset", "test"), ("pakc", "pack"), ("unpak", "unpack"), ("lsit", "list"), ("idnex", "index"),
                      ("recieve", "receive"), ("snd", "send"), ("cahce", "cache"), ("hlep", "help"), ("tests", "test"),
                      // Other tools' words for a command.
                      ("compress", "pack"), ("create", "pack"), ("decompress", "unpack"), ("uncompress", "unpack"),
                      ("extract", "unpack"), ("verify", "test")])
    func mistypedCommand(word: String, command: String) throws {
        try withScratch { scratch in
            try scratch.write("report.txt", Self.text)
            let result = try gzstream([word, "report.txt"], in: scratch)
            #expect(result.status == 1 && result.out == "", "\(result)")
            #expect(result.err == usageError("unknown command '\(word)' (did you mean '\(command)'?)"))
            #expect(try scratch.listing() == ["report.txt"])
            #expect(try scratch.read("report.txt") == Self.text)
        }
    }

    @Test("A first word that names a file, has a /, is far from every command, or comes after an option is gzip's FILE, as gzip takes it",
          .requires(.gzip), arguments: [(["tset", "report.txt"], true), (["./tset", "report.txt"], false),
                                        (["./compress", "report.txt"], false), (["-k", "extract", "report.txt"], false),
                                        (["report", "report.txt"], false), (["--", "tset", "report.txt"], false),
                                        (["-k", "tset", "report.txt"], false)] as [([String], Bool)])
    func wordsThatAreFiles(arguments: [String], fileNamedTset: Bool) throws {
        try withScratch { mine in
            try withScratch { reference in
                for scratch in [mine, reference] {
                    try scratch.write("report.txt", Self.text)
                    if fileNamedTset { try scratch.write("tset", "a file named tset\n") }
                }
                let ours = try gzstream(arguments, in: mine)
                let gzip = try run("/usr/bin/gzip", arguments, in: reference)
                #expect(ours.status == gzip.status, "gzstream: \(ours)\ngzip: \(gzip)")
                #expect(try mine.listing() == reference.listing())
                #expect(mine.exists("report.txt.gz"))
            }
        }
    }

    @Test("A first word whose .gz (or .z, -z, .Z) exists is gzip's FILE, as -d, -t and -l look for it: lst -d decompresses lst.gz",
          .requires(.gzip), arguments: [(["lst", "-d"], "lst.gz"), (["tset", "-t"], "tset.z"), (["lsit", "-l"], "lsit-z"),
                                        (["tset", "-d"], "tset.Z")])
    func wordWithSuffixedFile(arguments: [String], file: String) throws {
        try withScratch { mine in
            try withScratch { reference in
                _ = try reference.write("plain", Self.text)
                let packed = try run("/usr/bin/gzip", ["-c", "plain"], in: reference).stdout
                try FileManager.default.removeItem(atPath: reference.path("plain"))
                for scratch in [mine, reference] { _ = try scratch.write(file, packed) }
                let ours = try gzstream(arguments, in: mine)
                let gzip = try run("/usr/bin/gzip", arguments, in: reference)
                #expect(ours.status == 0 && ours.status == gzip.status && ours.out == gzip.out, "gzstream: \(ours)\ngzip: \(gzip)")
                #expect(try mine.listing() == reference.listing())
            }
        }
    }

    @Test("With SIGPIPE ignored, a closed standard output is gzip's empty line and 'gzip: stdout: Broken pipe', exit 1",
          .requires(.gzip))
    func brokenPipeAsGzip() throws {
        try withScratch { scratch in
            _ = try scratch.write("big", sampleText(byteCount: 2_000_000, seed: 43))
            let packed = try run("/usr/bin/gzip", ["-c", "big"], in: scratch).stdout
            _ = try scratch.write("big.gz", packed)
            // The decoder's status and standard error, with the reader gone after one byte.
            let script = "trap '' PIPE; \"$0\" -dc big.gz 2>err | head -c 1 >/dev/null; echo \"${PIPESTATUS[0]}\"; cat err"
            let ours = try run("/bin/bash", ["-c", script, try binaryLinked(as: "gzip", in: scratch)], in: scratch)
            let gzip = try run("/bin/bash", ["-c", script, "/usr/bin/gzip"], in: scratch)
            #expect(gzip.out == "1\n\ngzip: stdout: Broken pipe\n", "\(gzip)")
            #expect(ours.out == gzip.out, "gzstream: \(ours)\ngzip: \(gzip)")
        }
    }

    @Test("Called as gzip, no word is a command: gzip test packs the file test, gzip tset is gzip's missing file",
          .requires(.gzip))
    func gzipNameTakesNoCommand() throws {
        try withScratch { mine in
            try withScratch { reference in
                for scratch in [mine, reference] {
                    try scratch.write("test", "a file named test\n")
                    try scratch.write("report.txt", Self.text)
                }
                for arguments in [["test"], ["tset", "report.txt"]] {
                    let ours = try runAsGzip(arguments, in: mine)
                    let gzip = try runAsGzip(arguments, program: "gzip", in: reference)
                    #expect(ours.status == gzip.status && ours.out == gzip.out, "\(arguments): \(ours)\ngzip: \(gzip)")
                    #expect(try mine.listing() == reference.listing(), "\(arguments)")
                }
                #expect(try mine.listing() == ["report.txt.gz", "test.gz"])
            }
        }
    }

    // MARK: GZIP

    /// Values of GZIP with `gzip -c f`: taken (with the warning, or quietly under -q) or
    /// refused, touching nothing.
    static let variables = [
        "-9", "--fast", "--best", "-n", "-N", "--no-name", "--name", "-q", "--quiet", "--silent", "--rsyncable",
        "-1 -9", "-9\t-n", "  -2  ", "", " ", "-n -N", "-q -n",
        "-c", "-d", "-f", "-k", "-l", "-r", "-S .x", "--suffix=.x", "-t", "-h", "-V", "-L", "--license", "--stdout",
        "--synchronous", "-Z", "-cv", "-9c", "--", "-9 --", "foo", "-", "foo --", "foo -9 --", "-9 foo -c",
        "-x", "-0", "-10", "-p 2", "--bogus", "--bogus=1", "--threads=2", "--fast=3",
    ]

    @Test("GZIP: the options that tune the output are taken with gzip's warning; the rest are refused in its words",
          .requires(.gzip), arguments: variables)
    func gzipVariable(value: String) throws {
        try withScratch { mine in
            try withScratch { reference in
                for scratch in [mine, reference] {
                    try scratch.write("f", Self.text)
                    setModificationTime(scratch.path("f"), seconds: 1_500_000_000)
                }
                let ours = try runAsGzip(["-c", "f"], gzipVariable: value, in: mine)
                let gzip = try runAsGzip(["-c", "f"], gzipVariable: value, program: "gzip", in: reference)
                #expect(ours.status == gzip.status, "gzstream: \(ours)\ngzip: \(gzip)")
                #expect(ours.err == withStraightQuotes(gzip.err))
                #expect(headerFields(ours.stdout) == headerFields(gzip.stdout))
                // XFL: gzip's 2 for level 9, 4 for level 1, 0 otherwise.
                #expect(ours.stdout.dropFirst(8).first == gzip.stdout.dropFirst(8).first)
                if gzip.status == 0 { #expect(try decoded(ours.stdout, in: mine) == Self.text) }
                #expect(try mine.listing() == ["f"])
            }
        }
    }

    @Test("GZIP is read before the command line, whose options win; the warning comes first, also before an error",
          .requires(.gzip), arguments: [
              ("-n", ["-N", "-c", "f"]), ("-N", ["-n", "-c", "f"]), ("-1", ["-9", "-c", "f"]), ("-9", ["--fast", "-c", "f"]),
              ("-9", ["-q", "-c", "f"]), ("-q", ["-c", "f"]), ("-9", ["-x", "f"]), ("-9", ["-S", "", "f"]),
              ("-c", ["-x", "f"]), ("-9", ["-k", "f"]), ("-c", ["f"]), ("-d", ["-k", "f"]),
          ] as [(String, [String])])
    func commandLineWins(value: String, arguments: [String]) throws {
        try withScratch { mine in
            try withScratch { reference in
                for scratch in [mine, reference] {
                    try scratch.write("f", Self.text)
                    setModificationTime(scratch.path("f"), seconds: 1_500_000_000)
                }
                let ours = try runAsGzip(arguments, gzipVariable: value, in: mine)
                let gzip = try runAsGzip(arguments, gzipVariable: value, program: "gzip", in: reference)
                #expect(ours.status == gzip.status, "gzstream: \(ours)\ngzip: \(gzip)")
                #expect(ours.err == withStraightQuotes(gzip.err))
                #expect(headerFields(ours.stdout) == headerFields(gzip.stdout))
                #expect(ours.stdout.dropFirst(8).first == gzip.stdout.dropFirst(8).first)
                #expect(try mine.listing() == reference.listing())
                if mine.exists("f.gz") {
                    #expect(headerFields(try mine.read("f.gz")) == headerFields(try reference.read("f.gz")))
                }
            }
        }
    }

    @Test("zcat and gunzip read GZIP too, as Debian's scripts run gzip", .requires(.gzip))
    func zcatReadsGzip() throws {
        try withScratch { mine in
            try withScratch { reference in
                for scratch in [mine, reference] {
                    try scratch.write("f", Self.text)
                    #expect(try run("/usr/bin/gzip", ["f"], in: scratch).status == 0)
                }
                for (name, value) in [("zcat", "-c"), ("zcat", "-q"), ("zcat", "-9"), ("gunzip", "-k"), ("gunzip", "-n")] {
                    let ours = try runAsGzip(["f.gz"], gzipVariable: value, linkName: name, in: mine)
                    let gzip = try runAsGzip(["f.gz"], gzipVariable: value, program: name, in: reference)
                    #expect(ours.status == gzip.status && ours.stdout == gzip.stdout, "\(name): \(ours)\ngzip: \(gzip)")
                    // Under gzip's own name: Debian's zcat and gunzip are scripts that run gzip.
                    #expect(ours.err == withStraightQuotes(gzip.err).replacingOccurrences(of: "gzip", with: name))
                    #expect(try mine.listing() == reference.listing(), "\(name) GZIP=\(value)")
                }
            }
        }
    }

    @Test("The commands ignore GZIP; gzip mode under gzstream's name reads it and signs its messages gzstream")
    func commandsIgnoreGzip() throws {
        try withScratch { scratch in
            try scratch.write("f", Self.text)
            let packed = try runAsGzip(["pack", "-k", "f"], gzipVariable: "-c --bogus", linkName: "gzstream", in: scratch)
            #expect(packed.status == 0 && packed.err == "" && packed.out == "", "\(packed)")
            #expect(try scratch.listing() == ["f", "f.gz"])
            let unpacked = try runAsGzip(["unpack", "-c", "f.gz"], gzipVariable: "-d -9", linkName: "gzstream", in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "" && unpacked.stdout == Self.text, "\(unpacked)")

            let refused = try runAsGzip(["f"], gzipVariable: "-c", linkName: "gzstream", in: scratch)
            #expect(refused.status == 1 && refused.out == "", "\(refused)")
            #expect(refused.err == usageError("-c: option not valid in GZIP environment variable"))
            let warned = try runAsGzip(["-c", "f"], gzipVariable: "-9", linkName: "gzstream", in: scratch)
            #expect(warned.status == 0 && warned.err == "gzstream: warning: GZIP environment variable is deprecated; "
                + "use an alias or script\n", "\(warned)")
            #expect(try scratch.listing() == ["f", "f.gz"])
        }
    }

    func decoded(_ bytes: [UInt8], in scratch: Scratch) throws -> [UInt8]? {
        let path = scratch.ioPath("decode")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try gunzip(path, in: scratch)
    }
}

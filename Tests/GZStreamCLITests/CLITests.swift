import Foundation
import GzipStreams
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let expectedHelp = """
gzstream 0.1.0: streaming gzip (RFC 1952) in constant memory.

Usage: gzstream [OPTIONS] [FILE ...]          as GNU gzip: compress each FILE to FILE.gz and
                                              remove it; -d decompress, -t test, -l list
       gzstream pack [OPTIONS] [FILE ...]     compress each FILE to FILE.gz
       gzstream unpack [OPTIONS] [FILE ...]   decompress each FILE.gz (or .tgz) to FILE (.tar)
       gzstream test [OPTIONS] [FILE ...]     decode and check every member; write nothing
       gzstream list [--json] [FILE ...]      one row per member: offset, header, sizes, CRC-32
       gzstream index [-f] FILE.gz ...        write FILE.gz.gzi, bgzip's index of a BGZF file
       gzstream send HOST:PORT [FILE]         pack FILE onto a TCP connection to HOST:PORT
       gzstream receive [HOST:]PORT [-o FILE] take one TCP connection and unpack it
       gzstream cache COMMAND [ARGS]          a cache of streams on disk: put, get, list,
                                              remove, clear, prune (gzstream cache --help)

With no FILE, or when FILE is -, read standard input and write standard output.
The commands keep their inputs unless --rm is given. Without a command (and when called
as gunzip, i.e. gzip -d, or as zcat or gzcat, i.e. gzip -dc), gzstream runs as gzip:
inputs are removed once their output is in place, unless -k, -c or -o. A file named like
a command (pack, unpack, test, list, index, send, receive, cache, help) is given as ./pack
or after --. An existing output is never replaced without -f.

Options:
  -d, --decompress      as gzip: decompress (also --uncompress), as unpack
  -t, --test            as gzip: test, as the test command
  -l, --list            as gzip: gzip's table, a row per file (-v adds CRC-32 and date)
  -c, --stdout          write to standard output, keep the input files
  -o, --output PATH     write to PATH (one input; - is standard output); when PATH is a
                        directory, write each output in it under its default name
  -f, --force           overwrite existing outputs; read or write compressed data on a
                        terminal; follow symbolic links; read a FIFO or device into -o
                        FILE (file mode never takes one); take files with other links; pack x.gz to x.gz.gz; unpack -c:
                        copy input that is not gzip unchanged (zcat -f)
  -r, --recursive       walk the directories named: each regular file in them in place
                        (symbolic links not followed); without -r a directory is skipped
  -S, --suffix SUF      pack writes FILE+SUF instead of FILE.gz; unpack also takes SUF
  -0 ... -9             compression level: -1 fastest, -9 best, -0 stored (default 6)
      --fast, --best    the same as -1 and -9
      --level N         compression level 0 to 9 (0 stores without compressing)
      --chunk-size N    bytes per read and per write, at most (default 4096, up to 64M;
                        K, M suffixes: KiB, MiB); unpack writes 128K unless it is given
  -p, --threads N       pack: deflate on N threads; unpack, test: inflate BGZF input on
                        N threads (default: every core available)
  -b, --block-size N    pack: N KiB of input per parallel block (default 128; K, M suffixes);
                        the output depends on the level and block size, not on -p
      --max-output N    unpack, test, list: stop with an error past N decompressed bytes
                        (K, M, G, T suffixes: KiB, MiB, GiB, TiB)
      --json            list: JSON instead of a table
      --offset N        unpack with -c or -o: write the plain bytes from offset N of a BGZF
                        FILE.gz on, found through FILE.gz.gzi (see index); K, M, G, T suffixes
      --length N        with --offset: at most N bytes (default: to the end)
      --bgzf            pack: BGZF (blocked gzip, as bgzip): members of at most 64 KiB
                        deflated by libdeflate on -p N threads (default: all cores);
                        no name or time is stored
      --index           with --bgzf: also write OUTPUT.gzi, bgzip's index (needs an
                        output file; an existing one is replaced only with -f)
  -N, --name            pack: store the file name and modification time (the default);
                        unpack: restore them from the header
  -n, --no-name         pack: store neither (MTIME 0); unpack: do not restore them (the default)
      --rm              remove each input after it was processed without error
  -k, --keep            keep the inputs (the commands' default)
  -q, --quiet           no warnings, and no progress unless --progress is given
  -v, --verbose         one line per file on standard error: sizes and space saved
      --progress        pack, unpack, test: show progress on standard error (bytes in and
                        out, rate, percent and time left), also when it is not a terminal
      --no-progress     do not; by default it is shown when standard error is a terminal,
                        once a job has run for a second (not when the output goes there
                        too, nor in gzip mode)
      --timeout SECONDS send, receive: give up (exit 1, "timed out") when connecting, waiting
                        for the connection, or any read or write on it takes that long
      --deadline TIME   send, receive: give up (exit 1) when the whole transfer, from
                        connecting or accepting to the acknowledgement, takes longer
                        (seconds, fractions allowed, or with s, m, h: 90, 0.5, 15m, 2h)
      --key-file FILE   send, receive: encrypt and authenticate with the 32 raw bytes in FILE
                        (the cache's format); give both sides the same key
  -h, --help            show this help
  -V, --version         show the version

send packs as pack does (-0 ... -9, -p, -b, --bgzf, -n) and half-closes the connection at the
end; it then waits for receive's acknowledgement, sent once receive has read, checked and
written everything: exit 0 means that. A receiver that is not gzstream (nc -l) sends none, so
send then exits 1 ("no acknowledgement"), whether or not the data arrived.
HOST is a name, an IPv4 address or a bracketed IPv6 address ([::1]:8734).
receive listens on HOST (default 127.0.0.1: this machine only), takes one connection and unpacks
it to standard output, or to -o FILE with unpack's rules (-f, --max-output; no FILE is left when
it fails). Port 0 takes any free port; receive says where it listens on standard error
("gzstream: listening on 127.0.0.1:PORT") when the port is 0, or with -v. When receive fails
it resets the connection, so that a send still waiting fails too. Without --key-file, whoever
connects first supplies the data (receive warns when HOST is not loopback): give --max-output.
With --key-file, receive sends a fresh challenge the data key depends on, and authenticates each
64 KiB chunk before unpacking it: a wrong key, a replayed session or a cut leaves no -o FILE
(standard output gets only authenticated data, and a cut exits 1).

Exit status: 0 success, 1 error, 2 warning (for example trailing garbage after the last member,
which is ignored once the data before it has been written).

"""

/// A usage error as `gzstream` prints it.
func usageError(_ message: String) -> String {
    "gzstream: Error: \(message)\n" + usageLines
}

/// The `-v` line, computed the way the tool documents it: plain and packed sizes, space saved
/// to a tenth of a percent.
func verboseLine(_ input: String, bytesIn: Int, bytesOut: Int, plain: Int, packed: Int, output: String) -> String {
    let saved = plain == 0 ? 0 : (1 - Double(packed) / Double(plain)) * 100
    let tenths = Int((saved * 10).rounded())
    let percent = "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)%"
    return "gzstream: \(input): \(bytesIn) -> \(bytesOut) bytes, \(percent) saved -> \(output)\n"
}

@Suite("gzstream command line")
struct CLITests {
    // MARK: Help, version, usage errors

    @Test("help goes to standard output with exit 0", arguments: [["--help"], ["-h"], ["help"], ["pack", "--help"],
                                                                  ["unpack", "-h", "file"], ["send", "--help"],
                                                                  ["receive", "-h", "0"]])
    func help(arguments: [String]) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 0)
            #expect(result.out == expectedHelp)
            #expect(result.err == "")
        }
    }

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

    @Test("--version prints the tool and zlib versions")
    func version() throws {
        try withScratch { scratch in
            let result = try gzstream(["--version"], in: scratch)
            #expect(result.status == 0)
            #expect(result.out == "gzstream 0.1.0 (zlib \(zlibRuntimeVersion))\n")
            #expect(result.err == "")
        }
    }

    @Test("usage errors: exit 1, Error: line and usage on stderr, nothing on stdout", arguments: [
        (["-x", "a"], "unknown option '-x'"),
        (["pack", "-d", "a"], "unknown option '-d'"),
        (["unpack", "--test", "a"], "unknown option '--test'"),
        (["-S", "", "a"], "suffix must be 1 to 30 bytes, not ''"),
        (["pack", "--suffix=1234567890123456789012345678901", "a"],
         "suffix must be 1 to 30 bytes, not '1234567890123456789012345678901'"),
        (["-t", "-o", "x", "a"], "test writes no output: -c, -o and --rm do not apply"),
        (["pack", "-x", "a"], "unknown option '-x'"),
        (["unpack", "--bogus"], "unknown option '--bogus'"),
        (["pack", "--level", "10"], "compression level must be 0 to 9, not '10'"),
        (["pack", "--level=fast"], "compression level must be 0 to 9, not 'fast'"),
        (["pack", "-o", "out.gz", "a", "b"], "-o takes one input file, or an existing directory for several"),
        (["pack", "-r", "-o", "out.gz", "a"], "-r writes each output beside its input: -o does not apply"),
        (["index", "-r", "a"], "-r applies to pack, unpack, test and list"),
        (["pack", "-c", "-o", "out.gz", "a"], "-o and -c cannot be used together"),
        (["pack", "-o"], "option -o needs a value"),
        (["pack", "--level"], "option --level needs a value"),
        (["unpack", "--max-output"], "option --max-output needs a value"),
        (["pack", "--chunk-size", "0"], "--chunk-size must be 1 to 67108864 bytes, not '0'"),
        (["pack", "--chunk-size", "65M"], "--chunk-size must be 1 to 67108864 bytes, not '65M'"),
        (["pack", "--max-output", "1K"], "--max-output applies to unpack, test and list"),
        (["pack", "--chunk-size", "lots"], "--chunk-size takes a size in bytes, not 'lots'"),
        (["pack", "--stdout=yes"], "option --stdout takes no value"),
        (["pack", "-o", "", "a"], "-o needs a path, not an empty one"),
        (["--bogus", "-h"], "unknown option '--bogus'"),
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

    // MARK: pack and unpack of files

    @Test("pack FILE writes FILE.gz with the input's permissions and times, FNAME and MTIME; keeps FILE", .requires(.gzip))
    func packFile() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 50_000)
            let input = try scratch.write("notes.txt", text)
            _ = chmod(input, 0o640)
            setModificationTime(input, seconds: 1_600_000_000, nanoseconds: 123_456_789)
            let result = try gzstream(["pack", "notes.txt"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["notes.txt", "notes.txt.gz"])
            #expect(try scratch.read("notes.txt") == text)
            let status = try #require(fileStatus(scratch.path("notes.txt.gz")))
            #expect(status.permissions == 0o640)
            #expect(status.modificationSeconds == 1_600_000_000)
            #expect(status.modificationNanoseconds == 123_456_789)
            let packed = try scratch.read("notes.txt.gz")
            #expect(headerFields(packed) == HeaderFields(flags: 0x08, modificationTime: 1_600_000_000, fileName: "notes.txt"))
            #expect(try gunzip(scratch.path("notes.txt.gz"), in: scratch) == text)
            // GNU gzip reads the same name and time from the header.
            let listing = try run("/usr/bin/gzip", ["-lvN", "notes.txt.gz"], in: scratch)
            #expect(listing.status == 0)
            #expect(listing.out.contains(" 50000 ") && listing.out.hasSuffix(" notes.txt\n"), "\(listing)")
        }
    }

    @Test("pack -n stores neither name nor MTIME", .requires(.gzip), arguments: [["-n"], ["--no-name"]])
    func packNoName(flag: [String]) throws {
        try withScratch { scratch in
            let input = try scratch.write("a.txt", "hello\n")
            setModificationTime(input, seconds: 1_600_000_000)
            let result = try gzstream(["pack"] + flag + ["a.txt"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            let packed = try scratch.read("a.txt.gz")
            #expect(headerFields(packed) == HeaderFields(flags: 0, modificationTime: 0, fileName: nil))
            #expect(try gunzip(scratch.path("a.txt.gz"), in: scratch) == Array("hello\n".utf8))
        }
    }

    @Test("unpack FILE.gz writes FILE with the .gz's permissions and times; keeps FILE.gz", .requires(.gzip))
    func unpackFile() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 30_000)
            try scratch.write("b.txt", text)
            #expect(try run("/usr/bin/gzip", ["b.txt"], in: scratch).status == 0)
            _ = chmod(scratch.path("b.txt.gz"), 0o604)
            setModificationTime(scratch.path("b.txt.gz"), seconds: 1_500_000_000, nanoseconds: 5)
            let result = try gzstream(["unpack", "b.txt.gz"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["b.txt", "b.txt.gz"])
            #expect(try scratch.read("b.txt") == text)
            let status = try #require(fileStatus(scratch.path("b.txt")))
            #expect(status.permissions == 0o604)
            #expect(status.modificationSeconds == 1_500_000_000 && status.modificationNanoseconds == 5)
        }
    }

    @Test("unpack maps suffixes: .gz → none, .tgz → .tar, -gz, .z, _z", .requires(.gzip), arguments: [
        ("x.gz", "x"), ("backup.tgz", "backup.tar"), ("y-gz", "y"), ("w.z", "w"), ("v_z", "v"),
    ])
    func unpackSuffixes(input: String, output: String) throws {
        try withScratch { scratch in
            try scratch.write("source", "suffix\n")
            #expect(try run("/usr/bin/gzip", ["-c", "source"], in: scratch, stdoutPath: scratch.path(input)).status == 0)
            let result = try gzstream(["unpack", input], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try scratch.read(output) == Array("suffix\n".utf8))
        }
    }

    @Test("unpack of an unknown suffix: warning, exit 2, nothing written; -q silences it")
    func unknownSuffix() throws {
        try withScratch { scratch in
            try scratch.write("notes.txt", "plain\n")
            let loud = try gzstream(["unpack", "notes.txt"], in: scratch)
            #expect(loud.status == 2)
            #expect(loud.err == "gzstream: notes.txt: unknown suffix -- ignored\n")
            let quiet = try gzstream(["unpack", "-q", "notes.txt"], in: scratch)
            #expect(quiet.status == 2)
            #expect(quiet.err == "")
            #expect(try scratch.listing() == ["notes.txt"])
            // An error outranks a warning.
            let both = try gzstream(["unpack", "notes.txt", "missing.gz"], in: scratch)
            #expect(both.status == 1)
            #expect(both.err == "gzstream: notes.txt: unknown suffix -- ignored\n"
                + "gzstream: missing.gz: No such file or directory\n")
        }
    }

    @Test("pack of a .gz or .tgz file: warning, exit 2, nothing written", arguments: [".gz", ".tgz"])
    func packAlreadyCompressed(suffix: String) throws {
        try withScratch { scratch in
            try scratch.write("x" + suffix, "data\n")
            let result = try gzstream(["pack", "x" + suffix], in: scratch)
            #expect(result.status == 2)
            #expect(result.out == "")
            #expect(result.err == "gzstream: x\(suffix): already has \(suffix) suffix -- unchanged\n")
            #expect(try scratch.listing() == ["x" + suffix])
        }
    }

    /// Packs `original.txt` (MTIME 1234567890) and renames the result `renamed.gz`.
    private func makeRenamedMember(in scratch: Scratch) throws {
        let input = try scratch.write("original.txt", "named\n")
        setModificationTime(input, seconds: 1_234_567_890)
        #expect(try gzstream(["pack", "original.txt"], in: scratch).status == 0)
        try FileManager.default.removeItem(atPath: input)
        try FileManager.default.moveItem(atPath: scratch.path("original.txt.gz"), toPath: scratch.path("renamed.gz"))
        setModificationTime(scratch.path("renamed.gz"), seconds: 1_700_000_000)
    }

    @Test("unpack -N restores the stored name and MTIME")
    func unpackRestoresName() throws {
        try withScratch { scratch in
            try makeRenamedMember(in: scratch)
            let named = try gzstream(["unpack", "-N", "renamed.gz"], in: scratch)
            #expect(named.status == 0 && named.err == "" && named.out == "", "\(named)")
            #expect(try scratch.listing() == ["original.txt", "renamed.gz"])
            #expect(try scratch.read("original.txt") == Array("named\n".utf8))
            #expect(fileStatus(scratch.path("original.txt"))?.modificationSeconds == 1_234_567_890)

            // The stored name is taken: kept without -f, replaced with it.
            try scratch.write("original.txt", "in the way\n")
            let refused = try gzstream(["unpack", "-N", "renamed.gz"], in: scratch)
            #expect(refused.status == 1)
            #expect(refused.err == "gzstream: original.txt: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.read("original.txt") == Array("in the way\n".utf8))
            #expect(try scratch.listing() == ["original.txt", "renamed.gz"])
            let forced = try gzstream(["unpack", "-N", "-f", "renamed.gz"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(try scratch.read("original.txt") == Array("named\n".utf8))
        }
    }

    @Test("unpack without -N uses the .gz's name and time")
    func unpackIgnoresNameByDefault() throws {
        try withScratch { scratch in
            try makeRenamedMember(in: scratch)
            let plain = try gzstream(["unpack", "renamed.gz"], in: scratch)
            #expect(plain.status == 0 && plain.err == "", "\(plain)")
            #expect(try scratch.listing() == ["renamed", "renamed.gz"])
            #expect(fileStatus(scratch.path("renamed"))?.modificationSeconds == 1_700_000_000)
        }
    }

    /// GNU gzip: `gzip -dN renamed.gz` writes `original.txt` even when a file `renamed` exists.
    @Test("unpack -N is not blocked by a file at the name it does not use")
    func unpackNameIgnoresDefaultOutput() throws {
        try withScratch { scratch in
            try makeRenamedMember(in: scratch)
            try scratch.write("renamed", "unrelated\n")
            let named = try gzstream(["unpack", "-N", "renamed.gz"], in: scratch)
            #expect(named.status == 0 && named.err == "", "\(named)")
            #expect(try scratch.listing() == ["original.txt", "renamed", "renamed.gz"])
            #expect(try scratch.read("renamed") == Array("unrelated\n".utf8))
        }
    }

    @Test("unpack -N never writes outside the output's directory")
    func unpackNameStaysInDirectory() throws {
        try withScratch { scratch in
            // A header whose FNAME is "../escape.txt" (made by hand: header, stored block, trailer).
            let payload = Array("x".utf8)
            var bytes: [UInt8] = [0x1F, 0x8B, 8, 0x08, 0, 0, 0, 0, 0, 3] + Array("../escape.txt".utf8) + [0]
            bytes += [0x01, 0x01, 0x00, 0xFE, 0xFF] + payload
            bytes += [0x83, 0x16, 0xDC, 0x8C, 1, 0, 0, 0] // CRC-32 of "x" (8cdc1683), ISIZE 1
            try FileManager.default.createDirectory(atPath: scratch.path("inner"), withIntermediateDirectories: false)
            try scratch.write("inner/evil.gz", bytes)
            let result = try gzstream(["unpack", "-N", "inner/evil.gz"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["inner"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("inner")).sorted()
                == ["escape.txt", "evil.gz"])
        }
    }

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
            let second = randomBytes(byteCount: 5_000)
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
            let bytes = randomBytes(byteCount: byteCount, seed: UInt64(byteCount))
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

    // MARK: Diagnostics

    @Test("-v prints one line per file on stderr")
    func verbose() throws {
        try withScratch { scratch in
            let first = sampleText(byteCount: 20_000)
            let second = randomBytes(byteCount: 3_000)
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

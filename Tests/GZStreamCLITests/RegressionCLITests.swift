import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The command in unusual surroundings: closed standard descriptors, long and odd names,
/// symbolic links, devices and FIFOs as outputs, outputs that cannot be written, file size
/// limits and ignored signals.
@Suite("Closed descriptors, odd names, links, devices, unwritable outputs, limits and signals", .onDedicatedThreads)
struct RegressionCLITests {
    @Test("A closed standard input (pack -o x <&-) is EBADF, and nothing is left behind")
    func closedStandardInput() throws {
        try withScratch { scratch in
            for mode in ["pack", "unpack"] {
                let result = try shell(#""$0" "$1" -o out <&-"#, [mode], in: scratch)
                #expect(result.status == 1, "\(mode): \(result)")
                #expect(result.err == "gzstream: standard input: read failed: Bad file descriptor\n", "\(mode)")
                #expect(try scratch.listing() == [], "\(mode): nothing is left behind")
            }
        }
    }

    @Test("A closed standard output is EBADF for -c, and exit 1")
    func closedStandardOutput() throws {
        try withScratch { scratch in
            try scratch.write("a", "data\n")
            let result = try shell(#""$0" pack -c a >&-"#, in: scratch)
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "gzstream: standard output: write failed: Bad file descriptor\n")
        }
    }

    @Test("Output names up to NAME_MAX bytes work (the temporary name has a fixed length)")
    func longNames() throws {
        try withScratch { scratch in
            let name = String(repeating: "P", count: Int(NAME_MAX) - 3)
            let content = sampleText(byteCount: 1000)
            try scratch.write(name, content)
            let packed = try gzstream(["pack", "--rm", name], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(try scratch.listing() == [name + ".gz"])
            let unpacked = try gzstream(["unpack", name + ".gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(try scratch.read(name) == content)
        }
    }

    @Test("-f -o naming a symbolic link writes the file it points to; the link stays", .requires(.gzip))
    func outputThroughSymbolicLink() throws {
        try withScratch { scratch in
            let content = sampleText(byteCount: 5000)
            try scratch.write("a", content)
            try scratch.write("target.gz", "old\n")
            #expect(symlink("target.gz", scratch.path("link.gz")) == 0)
            let refused = try gzstream(["pack", "-o", "link.gz", "a"], in: scratch)
            #expect(refused.status == 1)
            #expect(refused.err == "gzstream: link.gz: already exists; not overwritten (use -f to overwrite)\n")
            let result = try gzstream(["pack", "-f", "-o", "link.gz", "a"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            var info = stat()
            #expect(lstat(scratch.path("link.gz"), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link stays a link")
            #expect(try gunzip(scratch.path("target.gz"), in: scratch) == content)

            // A link of our own as /dev/stdout is (never /dev/stdout itself: were this broken,
            // the test would replace the machine's link).
            #expect(symlink("/proc/self/fd/1", scratch.path("stdout")) == 0)
            let viaStandardOutput = try shell(#""$0" pack -f -o stdout a > out"#, in: scratch)
            #expect(viaStandardOutput.status == 0 && viaStandardOutput.err == "", "\(viaStandardOutput)")
            #expect(try gunzip(scratch.path("out"), in: scratch) == content)
            #expect(lstat(scratch.path("stdout"), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
            #expect(try scratch.listing() == ["a", "link.gz", "out", "stdout", "target.gz"], "no temporary file left")
        }
    }

    // Paths of the test's own descriptors only (/dev/fd/N, /proc/self/fd/N, a link of its own),
    // never /dev/stdout itself: were this broken, the test must not touch the machine's link.
    @Test("-o naming a descriptor of the process writes into it as a redirection would: at its offset, appending under >>, never refused as existing or replaced", .requires(.gzip))
    func outputIntoOwnDescriptor() throws {
        try withScratch { scratch in
            let first = sampleText(byteCount: 3000, seed: 5)
            let second = sampleText(byteCount: 4000, seed: 6)
            try scratch.write("a", first)
            try scratch.write("b", second)
            // Standard output an existing regular file, without -f: written, not refused.
            let plain = try shell(#""$0" pack -o /dev/fd/1 a > out.gz"#, in: scratch)
            #expect(plain.status == 0 && plain.err == "", "\(plain)")
            #expect(try gunzip(scratch.path("out.gz"), in: scratch) == first)
            // >> appends a member: the earlier one is kept.
            let appended = try shell(#""$0" pack -f -o /proc/self/fd/1 b >> out.gz"#, in: scratch)
            #expect(appended.status == 0 && appended.err == "", "\(appended)")
            #expect(try gunzip(scratch.path("out.gz"), in: scratch) == first + second)
            // A descriptor opened by the shell (exec 3>>), and a link of our own to fd 1.
            #expect(symlink("/proc/self/fd/1", scratch.path("stdout")) == 0)
            let viaDescriptor = try shell(#"exec 3>>log.gz; "$0" pack -o /dev/fd/3 a && "$0" pack -f -o stdout b >> log.gz"#,
                                          in: scratch)
            #expect(viaDescriptor.status == 0 && viaDescriptor.err == "", "\(viaDescriptor)")
            #expect(try gunzip(scratch.path("log.gz"), in: scratch) == first + second)
            // At the descriptor's offset: after what the shell wrote first.
            let afterHeader = try shell(#"{ printf 'x'; "$0" pack -o /dev/fd/1 a; } > offset"#, in: scratch)
            #expect(afterHeader.status == 0 && afterHeader.err == "", "\(afterHeader)")
            let written = try scratch.read("offset")
            #expect(written.first == UInt8(ascii: "x") && written.dropFirst().prefix(2) == [0x1f, 0x8b])
            var info = stat()
            #expect(lstat(scratch.path("stdout"), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link stays")
            #expect(try scratch.listing() == ["a", "b", "log.gz", "offset", "out.gz", "stdout"], "no temporary file left")
            // A descriptor not open, and --index, which needs a regular file to write beside.
            let closed = try shell(#""$0" pack -o /dev/fd/7 a 7>&-"#, in: scratch)
            #expect(closed.status == 1)
            #expect(closed.err == "gzstream: /dev/fd/7: cannot write: Bad file descriptor\n")
            let indexed = try shell(#""$0" pack --bgzf --index -o /dev/fd/1 a > indexed"#, in: scratch)
            #expect(indexed.status == 1)
            #expect(indexed.err == "gzstream: /dev/fd/1: not a regular file: --index needs one to write its .gzi beside\n")
        }
    }

    @Test("-o naming a device or FIFO writes into it and never replaces it", .requires(.gzip), .timeLimit(.minutes(1)))
    func outputIntoDevice() throws {
        try withScratch { scratch in
            try scratch.write("a", sampleText(byteCount: 5000))
            let result = try gzstream(["pack", "-f", "-o", "/dev/null", "a"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            var info = stat()
            #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)

            #expect(mkfifo(scratch.path("fifo"), 0o644) == 0)
            let piped = try shell(#"timeout 30 cat fifo > read-back & "$0" pack -o fifo a; status=$?; wait; exit $status"#,
                                  in: scratch)
            #expect(piped.status == 0 && piped.err == "", "\(piped)")
            #expect(stat(scratch.path("fifo"), &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "still a FIFO")
            #expect(try gunzip(scratch.path("read-back"), in: scratch) == (try scratch.read("a")))
        }
    }

    @Test("-o - writes to standard output")
    func outputDash() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 3000)
            try scratch.write("a.txt", text)
            let result = try gzstream(["pack", "-o", "-", "a.txt"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["a.txt"])
            let back = try gzstream(["unpack"], in: scratch, input: .bytes(result.stdout))
            #expect(back.stdout == text)
        }
    }

    @Test("--help and --version fail when standard output cannot be written")
    func helpToFullDisk() throws {
        try withScratch { scratch in
            for argument in ["--help", "--version"] {
                let result = try shell(#""$0" "$1" > /dev/full"#, [argument], in: scratch)
                #expect(result.status == 1, "\(argument): \(result)")
                #expect(result.err == "gzstream: standard output: write failed: No space left on device\n")
            }
        }
    }

    @Test("A file name with a newline still gives a one-line message")
    func controlCharactersInNames() throws {
        try withScratch { scratch in
            try scratch.write("bad\nname.gz", [])
            let result = try gzstream(["unpack", "bad\nname.gz"], in: scratch)
            #expect(result.status == 1)
            #expect(result.err == "gzstream: bad\\u{a}name.gz: empty input: no gzip member\n")
        }
    }

    @Test("A symbolic link given as FILE needs -f in file mode; -c reads it", .requires(.gzip))
    func symbolicLinks() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 2000)
            try scratch.write("target.txt", text)
            #expect(symlink("target.txt", scratch.path("link")) == 0)
            let refused = try gzstream(["pack", "link"], in: scratch)
            #expect(refused.status == 1)
            #expect(refused.err == "gzstream: link: is a symbolic link (use -f to follow it)\n")
            #expect(try scratch.listing() == ["link", "target.txt"])
            let viaStdout = try gzstream(["pack", "-c", "link"], in: scratch)
            #expect(viaStdout.status == 0)
            let forced = try gzstream(["pack", "-f", "link"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(try gunzip(scratch.path("link.gz"), in: scratch) == text)
        }
    }

    @Test("unpack knows GNU gzip's suffixes in any case", arguments: [
        ("d.GZ", "d"), ("d.TGZ", "d.tar"), ("d.taz", "d.tar"), ("d-z", "d"), ("d_z", "d"), ("d-gz", "d"), ("d.Z", "d"),
    ])
    func suffixes(name: String, expected: String) throws {
        try withScratch { scratch in
            try scratch.write("d", "payload\n")
            let packed = try gzstream(["pack", "-c", "d"], in: scratch)
            try scratch.write(name, packed.stdout)
            #expect(unlink(scratch.path("d")) == 0)
            let result = try gzstream(["unpack", name], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(name): \(result)")
            #expect(try scratch.read(expected) == Array("payload\n".utf8))
        }
    }

    @Test("--max-output at its largest accepted value (2^63 - 1) is no limit")
    func largestOutputLimit() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 4000)
            let packed = try gzstream(["pack"], in: scratch, input: .bytes(text))
            let result = try gzstream(["unpack", "--max-output", String(Int64.max)], in: scratch,
                                      input: .bytes(packed.stdout))
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(result.stdout == text)
        }
    }

    @Test("list fails when its output cannot be written: one line for a full disk, SIGPIPE for a closed pipe")
    func listWriteErrors() throws {
        try withScratch { scratch in
            try scratch.write("a", sampleText(byteCount: 2000))
            #expect(try gzstream(["pack", "a"], in: scratch).status == 0)
            for arguments in [["list", "a.gz"], ["list", "--json", "a.gz"]] {
                let full = try shell(#""$0" "$@" > /dev/full"#, arguments, in: scratch)
                #expect(full.status == 1, "\(arguments): \(full)")
                #expect(full.err == "gzstream: standard output: write failed: No space left on device\n")
            }
            // 5,000 empty members list to over 1 MB of JSON, far more than a pipe holds, so the
            // write after `head` has gone always fails.
            let empty = try gzstream(["pack"], in: scratch)
            try scratch.write("many.gz", Array(repeating: empty.stdout, count: 5000).flatMap { $0 })
            let killed = try gzstreamIntoClosedPipe("list --json many.gz", sigpipe: .fatal, in: scratch)
            #expect(killed.status == "141\n" && killed.err == "", "\(killed)")
            let ignoring = try gzstreamIntoClosedPipe("list --json many.gz", sigpipe: .ignored, in: scratch)
            #expect(ignoring.status == "1\n" && ignoring.err == "gzstream: standard output: Broken pipe\n", "\(ignoring)")
        }
    }

    @Test("list --json has an entry for every file named, also one that cannot be read")
    func listJSONUnreadableFiles() throws {
        try withScratch { scratch in
            try scratch.write("a", "text\n")
            #expect(try gzstream(["pack", "a"], in: scratch).status == 0)
            #expect(mkdir(scratch.path("dir"), 0o755) == 0)
            let result = try gzstream(["list", "--json", "a.gz", "missing.gz", "dir"], in: scratch)
            #expect(result.status == 1)
            #expect(result.errLines == ["gzstream: missing.gz: No such file or directory",
                                        "gzstream: dir: is a directory -- ignored"])
            let files = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]])
            #expect(files.map { $0["file"] as? String } == ["a.gz", "missing.gz", "dir"])
            #expect(files[0]["error"] is NSNull)
            let missing = try #require(files[1]["error"] as? [String: Any])
            #expect(missing["kind"] as? String == "io")
            #expect(missing["message"] as? String == "No such file or directory")
            #expect((files[2]["error"] as? [String: Any])?["message"] as? String == "is a directory -- ignored")
        }
    }

    @Test("A name longer than the 64 KiB kept is marked as cut in list, not silently shortened")
    func listMarksCutNames() throws {
        try withScratch { scratch in
            let name = [UInt8](repeating: UInt8(ascii: "N"), count: 100_000)
            var header: [UInt8] = [0x1f, 0x8b, 8, 0x08, 0, 0, 0, 0, 0, 3]
            header += name + [0]
            // An empty final stored block, then CRC-32 0 and ISIZE 0.
            let member = header + [0x01, 0x00, 0x00, 0xff, 0xff] + [UInt8](repeating: 0, count: 8)
            try scratch.write("long.gz", member)
            let json = try gzstream(["list", "--json", "long.gz"], in: scratch)
            #expect(json.status == 0, "\(json)")
            let files = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]])
            let row = try #require((files.first?["members"] as? [[String: Any]])?.first)
            #expect((row["name"] as? String)?.count == 65536)
            #expect(row["headerFieldCut"] as? Bool == true)
            let table = try gzstream(["list", "long.gz"], in: scratch)
            #expect(table.out.contains("(name or comment cut at 65536 bytes)"))
        }
    }

    @Test("A file size limit (ulimit -f, SIGXFSZ not ignored) mid-way: exit 1, one line, no temporary file left",
          .needsFileSizeLimit, arguments: ["pack -p 2", "pack --bgzf --index -p 2", "unpack"])
    func fileSizeLimitSignal(command: String) throws {
        try withScratch { scratch in
            let data = randomBytes(count: 1 << 20, seed: 90)
            let words = command.split(separator: " ").map(String.init)
            let input = words[0] == "pack" ? "data" : "data.gz"
            if words[0] == "pack" {
                try scratch.write(input, data)
            } else {
                let packed = try gzstream(["pack", "-c", "-1"], in: scratch, input: .bytes(data))
                try scratch.write(input, packed.stdout)
            }
            let output = words[0] == "pack" ? "data.gz" : "data"
            // 64 blocks of 512 bytes: the output fails at 32 KiB. SIGXFSZ has its default
            // action here, as in a shell after `ulimit -f`: it killed gzstream mid-write, and
            // the temporary output stayed.
            let result = try shell(#"ulimit -f 64; exec "$0" "$@""#, words + [input], in: scratch)
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "gzstream: \(output): write failed: File too large\n", "\(result)")
            #expect(try scratch.listing() == [input], "no output, index or temporary file")
        }
    }

    @Test("A signal ignored when gzstream starts (nohup) stays ignored: the run completes", .requires(.gzip),
          .timeLimit(.minutes(1)), arguments: ["HUP", "INT", "TERM"])
    func ignoredSignalStaysIgnored(signalName: String) throws {
        try withScratch { scratch in
            #expect(mkfifo(scratch.path("fifo"), 0o644) == 0)
            // gzstream reads the FIFO (so it is mid-run, its handlers installed) when the signal
            // comes; an ignored signal is discarded when sent, so the run either dies of it or
            // not at all. It died: nohup did not protect it.
            let script = #"""
                trap '' "$1"
                "$0" pack -f -o out.gz fifo &
                pid=$!
                exec 3>fifo
                printf 'abc' >&3
                kill -s "$1" "$pid"
                printf 'def' >&3
                exec 3>&-
                wait "$pid"
                """#
            let result = try shell(script, [signalName], in: scratch, timeout: 50)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try gunzip(scratch.path("out.gz"), in: scratch) == Array("abcdef".utf8))
            #expect(try scratch.listing() == ["fifo", "out.gz"])
        }
    }
}

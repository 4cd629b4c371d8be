import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Times gzip's MTIME cannot hold, nothing written before the input is readable, and
// file mode as GNU gzip's (each case compared with gzip 1.12).

@Suite("Times and file mode, as GNU gzip", .onDedicatedThreads)
struct FileModeCLITests {
    // MARK: MTIME out of range

    static let timestampWarning = "gzstream: f: warning: file timestamp out of range for gzip format\n"

    /// `touch -d` sets the time; `nil` is out of range: stored as 0 with gzip's warning, exit 2.
    @Test("A modification time MTIME cannot hold is stored as 0 with gzip's warning and exit 2, never clamped",
          arguments: [
              ("2107-01-01 00:00:00 UTC", nil),
              ("2106-02-07 06:28:16 UTC", nil),
              ("1969-12-31 23:59:59 UTC", nil),
              ("@0", nil),                                   // MTIME 0 means none, so it warns too
              ("@1", 1),
              ("2106-02-07 06:28:15 UTC", 0xFFFF_FFFF),
          ] as [(String, UInt32?)])
    func timestampRange(date: String, stored: UInt32?) throws {
        try withScratch { scratch in
            try scratch.write("f", "timed\n")
            let touched = try run("/usr/bin/touch", ["-d", date, "f"], in: scratch)
            try #require(touched.status == 0, "\(touched)")
            let result = try gzstream(["pack", "f"], in: scratch)
            #expect(result.status == (stored == nil ? 2 : 0))
            #expect(result.err == (stored == nil ? Self.timestampWarning : ""))
            let header = try #require(headerFields(try scratch.read("f.gz")))
            #expect(header.modificationTime == stored ?? 0)
            #expect(header.fileName == "f")
            #expect(try gunzip(scratch.path("f.gz"), in: scratch) == Array("timed\n".utf8))
            // The output keeps the input's time, whatever MTIME holds.
            #expect(fileStatus(scratch.path("f.gz"))?.modificationSeconds == fileStatus(scratch.path("f"))?.modificationSeconds)
        }
    }

    // MARK: Nothing written before the input is readable

    @Test("pack with standard input closed or a directory writes no byte (no header) and exits 1",
          arguments: [(#"<&-"#, "Bad file descriptor"), (#"< dir"#, "Is a directory")],
          [[], ["-c"], ["--bgzf"], ["-p", "2"], ["-1"]])
    func unreadableStandardInput(redirection: (String, String), flags: [String]) throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("dir"), withIntermediateDirectories: false)
            let result = try shell(#""$0" pack "$@" "# + redirection.0, flags, in: scratch)
            #expect(result.status == 1)
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.err == "gzstream: standard input: read failed: \(redirection.1)\n")
            let toFile = try shell(#""$0" pack -o out.gz "$@" "# + redirection.0, flags.filter { $0 != "-c" }, in: scratch)
            #expect(toFile.status == 1)
            #expect(toFile.err == "gzstream: standard input: read failed: \(redirection.1)\n")
            #expect(try scratch.listing() == ["dir"], "no output, no temporary file")
        }
    }

    @Test("Out of range: -c warns too, -q keeps the exit status, -n and --bgzf store no time and do not warn")
    func timestampRangeOptions() throws {
        try withScratch { scratch in
            try scratch.write("f", "timed\n")
            setModificationTime(scratch.path("f"), seconds: -86_400)
            let toOutput = try gzstream(["pack", "-c", "f"], in: scratch)
            #expect(toOutput.status == 2 && toOutput.err == Self.timestampWarning)
            #expect(headerFields(toOutput.stdout)?.modificationTime == 0)
            let quiet = try gzstream(["pack", "-cq", "f"], in: scratch)
            #expect(quiet.status == 2 && quiet.err == "")
            for flags in [["-n"], ["--bgzf"]] {
                let result = try gzstream(["pack", "-c"] + flags + ["f"], in: scratch)
                #expect(result.status == 0 && result.err == "", "\(flags): \(result)")
            }
        }
    }

    // MARK: -r, as GNU gzip

    /// `DIR/` holding `a`, `b.gz`, `c.TGZ`, `caf\351` (not UTF-8), `sub/e`, and, unless
    /// `plainOnly`, a FIFO and two symbolic links (to a file and to a directory outside).
    private func makeTree(_ root: String, in scratch: Scratch, plainOnly: Bool = false) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: scratch.path(root + "/sub"), withIntermediateDirectories: true)
        try scratch.write(root + "/a", "alpha\n")
        try scratch.write(root + "/b.gz", "not gzip\n")
        try scratch.write(root + "/c.TGZ", "not gzip either\n")
        try scratch.write(root + "/sub/e", sampleText(byteCount: 5_000))
        try RawFiles.write(scratch, Array((root + "/caf").utf8) + [0xE9], Array("latin\n".utf8))
        guard !plainOnly else { return }
        try manager.createDirectory(atPath: scratch.path("outside"), withIntermediateDirectories: true)
        try scratch.write("outside/x", "outside\n")
        #expect(symlink("../outside/x", scratch.path(root + "/la")) == 0)
        #expect(symlink("../outside", scratch.path(root + "/ld")) == 0)
        #expect(mkfifo(scratch.path(root + "/fifo"), 0o644) == 0)
    }

    /// Every path under `work/<root>` (directories too), relative to `work/`, names shown with
    /// octal escapes for bytes that are not UTF-8, sorted.
    private func tree(_ root: String, in scratch: Scratch) -> [String] {
        func walk(_ directory: [UInt8]) -> [[UInt8]] {
            RawFiles.listing(scratch, directory).flatMap { name -> [[UInt8]] in
                let path = directory + [UInt8(ascii: "/")] + name
                var info = stat()
                let isDirectory = lstat(RawFiles.path(scratch, path), &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
                return [path] + (isDirectory ? walk(path) : [])
            }
        }
        return walk(Array(root.utf8)).map { shown($0) }.sorted()
    }

    @Test("pack -r packs every regular file in place; .gz names, links and FIFOs are passed over")
    func packRecursive() throws {
        try withScratch { scratch in
            try makeTree("d", in: scratch)
            let result = try gzstream(["pack", "-r", "d"], in: scratch)
            #expect(result.status == 2)
            #expect(result.out == "")
            #expect(result.err == """
                gzstream: d/fifo: is not a directory or a regular file -- ignored
                gzstream: d/la: is a symbolic link -- not followed
                gzstream: d/ld: is a symbolic link -- not followed

                """)
            #expect(tree("d", in: scratch) == ["d/a", "d/a.gz", "d/b.gz", "d/c.TGZ", #"d/caf\351"#, #"d/caf\351.gz"#,
                                               "d/fifo", "d/la", "d/ld", "d/sub", "d/sub/e", "d/sub/e.gz"])
            #expect(try scratch.listing() == ["d", "outside"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("outside")) == ["x"])
            #expect(try gunzip(scratch.path("d/sub/e.gz"), in: scratch) == sampleText(byteCount: 5_000))
            #expect(headerFields(try scratch.read("d/sub/e.gz"))?.fileName == "e")

            // -v names what -r passed over quietly; a name given is warned about anyway.
            try FileManager.default.removeItem(atPath: scratch.path("d/sub/e"))
            let verbose = try gzstream(["pack", "-rv", "d/sub"], in: scratch)
            #expect(verbose.status == 2)
            #expect(verbose.err == "gzstream: d/sub/e.gz: already has .gz suffix -- unchanged\n")
            let named = try gzstream(["pack", "d/b.gz"], in: scratch)
            #expect(named.status == 2)
            #expect(named.err == "gzstream: d/b.gz: already has .gz suffix -- unchanged\n")
        }
    }

    @Test("pack -r and unpack -r take the files gzip -r and gzip -dr take, with the same names")
    func recursiveAsGzip() throws {
        try withScratch { scratch in
            try makeTree("g", in: scratch, plainOnly: true)
            try makeTree("d", in: scratch, plainOnly: true)
            let gzip = try run("/usr/bin/gzip", ["-r", "g"], in: scratch)
            #expect(gzip.status == 0 && gzip.err == "", "\(gzip)")
            let packed = try gzstream(["pack", "-r", "--rm", "d"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            let packedTree = tree("d", in: scratch)
            #expect(packedTree == tree("g", in: scratch).map { "d" + $0.dropFirst() })
            #expect(packedTree == ["d/a.gz", "d/b.gz", "d/c.TGZ", #"d/caf\351.gz"#, "d/sub", "d/sub/e.gz"])

            // Without a suffix unpack takes, a file is passed over quietly by both (b.gz and
            // c.TGZ are not gzip: both fail on them).
            try scratch.write("g/b.gz", Array(try scratch.read("g/a.gz")))
            try scratch.write("d/b.gz", Array(try scratch.read("d/a.gz")))
            try scratch.write("g/plain", "plain\n")
            try scratch.write("d/plain", "plain\n")
            try FileManager.default.removeItem(atPath: scratch.path("g/c.TGZ"))
            try FileManager.default.removeItem(atPath: scratch.path("d/c.TGZ"))
            let gunzipped = try run("/usr/bin/gzip", ["-dr", "g"], in: scratch)
            #expect(gunzipped.status == 0 && gunzipped.err == "", "\(gunzipped)")
            let unpacked = try gzstream(["unpack", "-r", "--rm", "d"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(tree("d", in: scratch) == tree("g", in: scratch).map { "d" + $0.dropFirst() })
            #expect(tree("d", in: scratch) == ["d/a", "d/b", #"d/caf\351"#, "d/plain", "d/sub", "d/sub/e"])
            #expect(RawFiles.read(scratch, Array("d/caf".utf8) + [0xE9]) == Array("latin\n".utf8))

            let verbose = try gzstream(["unpack", "-rv", "d/sub"], in: scratch)
            #expect(verbose.status == 2)
            #expect(verbose.err == "gzstream: d/sub/e: unknown suffix -- ignored\n")
        }
    }

    @Test("gzip mode -r packs and unpacks every file found in place and removes it, as gzip -r and -dr; -k keeps them")
    func gzipModeRecursive() throws {
        try withScratch { scratch in
            try makeTree("g", in: scratch, plainOnly: true)
            try makeTree("d", in: scratch, plainOnly: true)
            let gzip = try run("/usr/bin/gzip", ["-r", "g"], in: scratch)
            #expect(gzip.status == 0 && gzip.err == "", "\(gzip)")
            let packed = try gzstream(["-r", "d"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            // The inputs are gone; b.gz and c.TGZ have a suffix already and stay.
            #expect(tree("d", in: scratch) == tree("g", in: scratch).map { "d" + $0.dropFirst() })
            #expect(tree("d", in: scratch) == ["d/a.gz", "d/b.gz", "d/c.TGZ", #"d/caf\351.gz"#, "d/sub", "d/sub/e.gz"])

            // Under -v a name packed already is gzip's note, exit 0 (the pack command: exit 2).
            let verbose = try gzstream(["-rv", "d/sub"], in: scratch)
            #expect(verbose.status == 0)
            #expect(verbose.err == "gzstream: d/sub/e.gz already has .gz suffix -- unchanged\n")
            let verboseGzip = try run("/usr/bin/gzip", ["-rv", "g/sub"], in: scratch)
            #expect(verboseGzip.status == 0, "\(verboseGzip)")

            try FileManager.default.removeItem(atPath: scratch.path("g/b.gz"))
            try FileManager.default.removeItem(atPath: scratch.path("d/b.gz"))
            try FileManager.default.removeItem(atPath: scratch.path("g/c.TGZ"))
            try FileManager.default.removeItem(atPath: scratch.path("d/c.TGZ"))
            let kept = try gzstream(["-dkr", "d"], in: scratch)
            #expect(kept.status == 0 && kept.err == "", "\(kept)")
            #expect(tree("d", in: scratch) == ["d/a", "d/a.gz", #"d/caf\351"#, #"d/caf\351.gz"#, "d/sub", "d/sub/e",
                                               "d/sub/e.gz"])
            for name in ["d/a", "d/sub/e"] { try FileManager.default.removeItem(atPath: scratch.path(name)) }
            #expect(unlink(RawFiles.path(scratch, Array("d/caf".utf8) + [0xE9])) == 0)

            let gunzipped = try run("/usr/bin/gzip", ["-dr", "g"], in: scratch)
            #expect(gunzipped.status == 0 && gunzipped.err == "", "\(gunzipped)")
            let unpacked = try gzstream(["-dr", "d"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(tree("d", in: scratch) == tree("g", in: scratch).map { "d" + $0.dropFirst() })
            #expect(tree("d", in: scratch) == ["d/a", #"d/caf\351"#, "d/sub", "d/sub/e"])
            #expect(RawFiles.read(scratch, Array("d/caf".utf8) + [0xE9]) == Array("latin\n".utf8))
        }
    }

    @Test("pack -rf packs .gz files again, as gzip -rf: x.gz.gz")
    func packRecursiveForce() throws {
        try withScratch { scratch in
            try makeTree("g", in: scratch, plainOnly: true)
            try makeTree("d", in: scratch, plainOnly: true)
            let gzip = try run("/usr/bin/gzip", ["-rfk", "g"], in: scratch)
            #expect(gzip.status == 0, "\(gzip)")
            let packed = try gzstream(["pack", "-rf", "d"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(tree("d", in: scratch) == tree("g", in: scratch).map { "d" + $0.dropFirst() })
            #expect(tree("d", in: scratch).contains("d/b.gz.gz"))
        }
    }

    @Test("test -r and list -r read only names with a gzip suffix, as gzip -tr and -lr")
    func inspectRecursive() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("d/sub"), withIntermediateDirectories: true)
            try scratch.write("d/plain", "not gzip\n")
            try scratch.write("d/sub/x", "x\n")
            #expect(try gzstream(["pack", "-n", "d/sub/x"], in: scratch).status == 0)
            let tested = try gzstream(["test", "-r", "d"], in: scratch)
            #expect(tested.status == 0 && tested.err == "", "\(tested)")
            let gzip = try run("/usr/bin/gzip", ["-tr", "d"], in: scratch)
            #expect(gzip.status == 0 && gzip.err == "", "\(gzip)")
            let listed = try gzstream(["list", "--json", "-r", "d"], in: scratch)
            #expect(listed.status == 0, "\(listed)")
            let files = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [[String: Any]])
            #expect(files.map { $0["file"] as? String } == ["d/sub/x.gz"])
            let verbose = try gzstream(["test", "-rv", "d"], in: scratch)
            #expect(verbose.status == 2)
            #expect(verbose.errLines == ["gzstream: d/plain: unknown suffix -- ignored",
                                         "gzstream: d/sub/x: unknown suffix -- ignored",
                                         "gzstream: d/sub/x.gz: OK (1 member, 2 bytes)"])
        }
    }

    @Test("pack -rc writes every regular file to standard output, .gz ones too, as gzip -rc")
    func recursiveToStandardOutput() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: true)
            try scratch.write("d/a", "a\n")
            try scratch.write("d/b.gz", "b\n")
            let result = try gzstream(["pack", "-rc", "d"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try gunzip(writeCopy(result.stdout, in: scratch), in: scratch) == Array("a\nb\n".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("d")).sorted() == ["a", "b.gz"])
        }
    }

    @Test("-r on a symbolic link to a directory: refused in file mode without -f, walked with it")
    func recursiveLinkOperand() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("real"), withIntermediateDirectories: true)
            try scratch.write("real/a", "a\n")
            #expect(symlink("real", scratch.path("link")) == 0)
            let refused = try gzstream(["pack", "-r", "link"], in: scratch)
            #expect(refused.status == 1)
            #expect(refused.err == "gzstream: link: is a symbolic link (use -f to follow it)\n")
            let forced = try gzstream(["pack", "-rf", "link"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("real")).sorted() == ["a", "a.gz"])
        }
    }

    @Test("A directory without -r: gzip's warning and exit 2 in every mode, -q keeps the status",
          arguments: [["pack"], ["unpack"], ["test"], ["list"], ["pack", "-c"], ["unpack", "-c"], ["pack", "-q"]])
    func directoryWithoutRecursion(arguments: [String]) throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: true)
            try scratch.write("d/a", "a\n")
            let result = try gzstream(arguments + ["d"], in: scratch)
            #expect(result.status == 2)
            #expect(result.err == (arguments.contains("-q") ? "" : "gzstream: d: is a directory -- ignored\n"))
            #expect(result.out == "")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("d")) == ["a"])
            let gzipArguments = ["pack": [], "unpack": ["-d"], "test": ["-t"], "list": ["-l"], "-c": ["-c"], "-q": ["-q"]]
            let gzip = try run("/usr/bin/gzip", arguments.flatMap { gzipArguments[$0]! } + ["d"], in: scratch)
            #expect(gzip.status == 2, "\(gzip)")
        }
    }

    // MARK: -o DIRECTORY

    @Test("-o DIR writes DIR/<default name> for each input; an existing one is kept without -f")
    func outputDirectory() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: scratch.path("in"), withIntermediateDirectories: true)
            try scratch.write("in/a", "a\n")
            try scratch.write("b", "b\n")
            let packed = try gzstream(["pack", "-o", "out", "in/a", "b"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).sorted() == ["a.gz", "b.gz"])
            #expect(headerFields(try scratch.read("out/a.gz"))?.fileName == "a")

            let again = try gzstream(["pack", "-o", "out/", "in/a", "b"], in: scratch)
            #expect(again.status == 1)
            #expect(again.errLines == ["gzstream: out/a.gz: already exists; not overwritten (use -f to overwrite)",
                                       "gzstream: out/b.gz: already exists; not overwritten (use -f to overwrite)"])

            try FileManager.default.createDirectory(atPath: scratch.path("back"), withIntermediateDirectories: true)
            let unpacked = try gzstream(["unpack", "--output=back", "out/a.gz", "out/b.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(try scratch.read("back/a") == Array("a\n".utf8))
            #expect(try scratch.read("back/b") == Array("b\n".utf8))

            // -N: the stored name, in DIR.
            try FileManager.default.moveItem(atPath: scratch.path("out/a.gz"), toPath: scratch.path("renamed.gz"))
            let named = try gzstream(["unpack", "-N", "-o", "out", "renamed.gz"], in: scratch)
            #expect(named.status == 0 && named.err == "", "\(named)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).sorted() == ["a", "b.gz"])

            let unnamed = try gzstream(["unpack", "-o", "out", "in/a"], in: scratch)
            #expect(unnamed.status == 2)
            #expect(unnamed.err == "gzstream: in/a: unknown suffix -- ignored\n")
            let standardInput = try gzstream(["pack", "-o", "out"], in: scratch, input: .bytes(Array("x".utf8)))
            #expect(standardInput.status == 1)
            #expect(standardInput.err
                == "gzstream: standard input: has no name for a file in the directory out (give -o DIRECTORY/NAME)\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).sorted() == ["a", "b.gz"])
        }
    }

    // MARK: Hard links

    @Test("A file with other hard links is passed over in file mode unless -f (gzip's warning, exit 2); -c, test and list read it",
          arguments: ["pack", "unpack"])
    func hardLinks(mode: String) throws {
        try withScratch { scratch in
            let name = mode == "pack" ? "h" : "h.gz"
            let content = mode == "pack" ? Array("linked\n".utf8) : try gzstream(["pack", "-c"], in: scratch,
                                                                                  input: .bytes(Array("linked\n".utf8))).stdout
            try scratch.write(name, content)
            #expect(link(scratch.path(name), scratch.path("second")) == 0)
            #expect(link(scratch.path(name), scratch.path("third")) == 0)
            let output = mode == "pack" ? "h.gz" : "h"
            for flags in [[], ["--rm"], ["-o", "elsewhere"]] {
                let refused = try gzstream([mode] + flags + [name], in: scratch)
                #expect(refused.status == 2)
                #expect(refused.err == "gzstream: \(name): has 2 other links -- file ignored\n")
                #expect(try scratch.listing() == [name, "second", "third"])
            }
            let gzip = try run("/usr/bin/gzip", (mode == "pack" ? [] : ["-d"]) + [name], in: scratch)
            #expect(gzip.status == 2 && gzip.err == "gzip: \(name) has 2 other links -- file ignored\n", "\(gzip)")

            #expect(unlink(scratch.path("third")) == 0)
            let one = try gzstream([mode, name], in: scratch)
            #expect(one.err == "gzstream: \(name): has 1 other link -- file ignored\n")
            let toOutput = try gzstream([mode, "-c", name], in: scratch)
            #expect(toOutput.status == 0 && toOutput.err == "")
            if mode == "unpack" {
                #expect(try gzstream(["test", name], in: scratch).status == 0)
                #expect(try gzstream(["list", name], in: scratch).status == 0)
            }
            let forced = try gzstream([mode, "-f", "--rm", name], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(try scratch.listing() == [output, "second"])
            #expect(try scratch.read("second") == content, "the other link keeps its data")
        }
    }

    // MARK: pack -f of a .gz

    @Test("pack -f name.gz writes name.gz.gz as gzip -f does; without -f the warning")
    func packAgainWithForce() throws {
        try withScratch { scratch in
            let original = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Array("once\n".utf8))).stdout
            try scratch.write("n.gz", original)
            let refused = try gzstream(["pack", "n.gz"], in: scratch)
            #expect(refused.status == 2)
            #expect(refused.err == "gzstream: n.gz: already has .gz suffix -- unchanged\n")
            #expect(try scratch.listing() == ["n.gz"])
            let forced = try gzstream(["pack", "-f", "n.gz"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(try scratch.listing() == ["n.gz", "n.gz.gz"])
            #expect(try gunzip(scratch.path("n.gz.gz"), in: scratch) == original)
            #expect(headerFields(try scratch.read("n.gz.gz"))?.fileName == "n.gz")
            try FileManager.default.createDirectory(atPath: scratch.path("g"), withIntermediateDirectories: true)
            try scratch.write("g/n.gz", original)
            let gzip = try run("/usr/bin/gzip", ["-fk", "g/n.gz"], in: scratch)
            #expect(gzip.status == 0, "\(gzip)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("g")).sorted() == ["n.gz", "n.gz.gz"])
        }
    }

    // MARK: test and list read what -c reads

    @Test("test and list read a pipe through /dev/fd/N, a FIFO and a character device without -f; file mode passes them over, -f or not")
    func inspectNonRegularFiles() throws {
        try withScratch { scratch in
            try scratch.write("ok.gz", try gzstream(["pack", "-n", "-c"], in: scratch, input: .bytes(Array("ok\n".utf8))).stdout)
            let piped = try shell(#"cat ok.gz | "$0" test -v /dev/fd/0"#, in: scratch)
            #expect(piped.status == 0)
            #expect(piped.err == "gzstream: /dev/fd/0: OK (1 member, 3 bytes)\n")
            let listed = try shell(#"cat ok.gz | "$0" list /dev/fd/0"#, in: scratch)
            #expect(listed.status == 0 && listed.err == "", "\(listed)")
            #expect(listed.out.hasPrefix("/dev/fd/0:\n"))
            #expect(mkfifo(scratch.path("fifo"), 0o644) == 0)
            let fifo = try shell(#"cat ok.gz > fifo & "$0" test -v fifo; status=$?; wait; exit $status"#, in: scratch)
            #expect(fifo.status == 0)
            #expect(fifo.err == "gzstream: fifo: OK (1 member, 3 bytes)\n")
            let device = try gzstream(["test", "/dev/null"], in: scratch)
            #expect(device.status == 1)
            #expect(device.err == "gzstream: /dev/null: empty input: no gzip member\n")
            // File mode names its output after the input and may remove it: a pipe, a FIFO or a
            // device is passed over as GNU gzip does, -f or not (`-f /dev/null` must never
            // become /dev/null.gz and unlink /dev/null); `-f -o FILE` reads one.
            let unpack = try shell(#"cat ok.gz | "$0" unpack /dev/fd/0"#, in: scratch)
            #expect(unpack.status == 2)
            #expect(unpack.err == "gzstream: /dev/fd/0: is not a directory or a regular file -- ignored\n")
            #expect(symlink("/dev/null", scratch.path("null-link")) == 0)
            for arguments in [["pack", "-f", "--rm", "null-link"], ["-f", "null-link"], ["null-link"]] {
                let forced = try gzstream(arguments, in: scratch)
                #expect(forced.status == 2, "\(arguments): \(forced)")
                // gzip mode in gzip's words: no colon, one dash.
                #expect(forced.err == (arguments[0] == "pack" ? "gzstream: null-link: is not a directory or a regular file -- ignored\n"
                                       : "gzstream: null-link is not a directory or a regular file - ignored\n"))
                #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: scratch.path("null-link"))) == "/dev/null",
                        "the link stays")
                #expect(!FileManager.default.fileExists(atPath: scratch.path("null-link.gz")))
            }
            let named = try shell(#"cat ok.gz | "$0" unpack -f -o out /dev/fd/0"#, in: scratch)
            #expect(named.status == 0, "\(named)")
            #expect(try readBytes(scratch.path("out")) == Array("ok\n".utf8))
            // --rm never removes a FIFO, whichever output it went to (a file, or a descriptor
            // named by -o).
            for output in ["out2", "/dev/fd/3"] {
                let fifoRun = try shell(#"cat ok.gz > fifo & "$0" unpack -f --rm -o "# + output
                                        + #" fifo 3>out3; status=$?; wait; exit $status"#, in: scratch)
                #expect(fifoRun.status == 0, "\(output): \(fifoRun)")
                var info = stat()
                #expect(lstat(scratch.path("fifo"), &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "\(output)")
            }
            #expect(try readBytes(scratch.path("out3")) == Array("ok\n".utf8))
        }
    }
}

/// A path's bytes as messages show them: octal escapes for bytes that are not UTF-8.
private func shown(_ bytes: [UInt8]) -> String {
    var result = ""
    var rest = bytes[...]
    while !rest.isEmpty {
        var decoder = UTF8()
        var iterator = rest.makeIterator()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) {
            result.unicodeScalars.append(scalar)
            rest = rest.dropFirst(UTF8.width(scalar))
        } else {
            result += "\\" + String(rest.first!, radix: 8)
            rest = rest.dropFirst()
        }
    }
    return result
}

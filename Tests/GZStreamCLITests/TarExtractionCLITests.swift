import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// unpack ARCHIVE.tar.gz MEMBER..., unpack -c, unpack --extract: trees compared with GNU tar's
// extraction of the same archive (made by GNU tar and pigz), and hostile archives refused.

/// One file of an extracted tree as lstat(2) and its content show it.
struct ExtractedFile: Equatable, CustomStringConvertible {
    var kind: String
    var mode: UInt32
    var content: Data?
    var linkTarget: String?
    var modificationTime: String
    /// The other names of a regular file in the tree (hard links), sorted.
    var otherNames: [String]

    var description: String {
        "\(kind) \(String(mode, radix: 8)) \(content.map { "\($0.count) bytes" } ?? "") \(linkTarget ?? "") \(modificationTime) \(otherNames)"
    }
}

/// Every path under `root` (not `root` itself), links not followed.
func extractedTree(at root: String) -> [String: ExtractedFile] {
    var entries: [String: ExtractedFile] = [:]
    var inodes: [UInt64: [String]] = [:]
    func walk(_ relative: String) {
        let path = relative.isEmpty ? root : root + "/" + relative
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            let child = relative.isEmpty ? name : relative + "/" + name
            var info = stat()
            guard lstat(root + "/" + child, &info) == 0 else { continue }
            let type = info.st_mode & S_IFMT
            let kind = type == S_IFDIR ? "directory" : type == S_IFLNK ? "link" : type == S_IFREG ? "file" : "other"
            let time = "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
            var entry = ExtractedFile(kind: kind, mode: UInt32(info.st_mode) & 0o7777, content: nil, linkTarget: nil,
                                  modificationTime: time, otherNames: [])
            if type == S_IFREG {
                entry.content = try? Data(contentsOf: URL(fileURLWithPath: root + "/" + child))
                inodes[UInt64(info.st_ino), default: []].append(child)
            }
            if type == S_IFLNK {
                entry.linkTarget = try? FileManager.default.destinationOfSymbolicLink(atPath: root + "/" + child)
            }
            entries[child] = entry
            if type == S_IFDIR { walk(child) }
        }
    }
    walk("")
    for names in inodes.values where names.count > 1 {
        for name in names { entries[name]?.otherNames = names.filter { $0 != name }.sorted() }
    }
    return entries
}

/// The Python prelude of the hand-made archives: `add(tar, name, …)` appends one member with a
/// fixed mtime (Python's tarfile writes what GNU tar would refuse to).
private let tarfilePrelude = """
    import io, tarfile
    def add(tar, name, kind=tarfile.REGTYPE, data=b"", target=""):
        info = tarfile.TarInfo(name)
        info.type = kind
        info.size = len(data)
        info.linkname = target
        info.mtime = 1600000000
        tar.addfile(info, io.BytesIO(data) if data else None)

    """

@Suite("gzstream unpack of tar members", .onDedicatedThreads)
struct TarExtractionCLITests {
    /// A tree with what tar stores: long names, symbolic and hard links, directories with their
    /// own modes, empty and sparse files, times with nanoseconds.
    func makeSourceTree(in scratch: Scratch) throws {
        let manager = FileManager.default
        let long = String(repeating: "long-directory-name-", count: 6)
        try manager.createDirectory(atPath: scratch.path("src/dir/sub"), withIntermediateDirectories: true)
        try manager.createDirectory(atPath: scratch.path("src/\(long)/inner"), withIntermediateDirectories: true)
        try manager.createDirectory(atPath: scratch.path("src/private"), withIntermediateDirectories: true)
        try scratch.write("src/dir/file.txt", sampleText(byteCount: 70_000, seed: 41))
        try scratch.write("src/dir/sub/random.bin", randomBytes(count: 200_001, seed: 42))
        try scratch.write("src/empty", [])
        try scratch.write("src/\(long)/inner/\(String(repeating: "n", count: 150)).txt", "a long name\n")
        try scratch.write("src/private/secret", "mode 600\n")
        try scratch.write("src/run.sh", "#!/bin/sh\n")
        try manager.createSymbolicLink(atPath: scratch.path("src/dir/link"), withDestinationPath: "file.txt")
        try manager.createSymbolicLink(atPath: scratch.path("src/up"), withDestinationPath: "dir/sub/../file.txt")
        #expect(link(scratch.path("src/dir/file.txt"), scratch.path("src/hard")) == 0)
        _ = chmod(scratch.path("src/private/secret"), 0o600)
        _ = chmod(scratch.path("src/run.sh"), 0o755)
        _ = chmod(scratch.path("src/private"), 0o700)
        _ = chmod(scratch.path("src/dir/sub"), 0o555)
        let sparse = try #require(FileHandle(forWritingAtPath: scratch.write("src/sparse", [])))
        try sparse.seek(toOffset: 1 << 20)
        sparse.write(Data("middle".utf8))
        try sparse.truncate(atOffset: 3 << 20)
        try sparse.close()
        for (index, name) in ["dir/file.txt", "empty", "run.sh", "sparse", "dir/sub", "dir", "private"].enumerated() {
            var times = [timespec(tv_sec: 1_600_000_000, tv_nsec: 0),
                         timespec(tv_sec: 1_600_000_000 + index, tv_nsec: 123_456_789 + index)]
            #expect(utimensat(AT_FDCWD, scratch.path("src/" + name), &times, AT_SYMLINK_NOFOLLOW) == 0)
        }
    }

    /// `tar -c --format FORMAT --sparse -C src . | pigz > NAME`.
    func makeArchive(_ name: String, format: String, in scratch: Scratch) throws {
        // Sorted by name, so that `dir` comes before the link `up` whose target climbs out of it.
        let made = try shell("tar -c --format=\(format) --sparse --sort=name -C src . | pigz > \(name)", in: scratch)
        #expect(made.status == 0 && made.err == "", "\(made)")
    }

    @Test("unpack --extract gives the tree tar -xzf gives: bytes, modes, times, links, sparse files",
          .requires(.tar), .requires(.pigz), arguments: ["gnu", "pax"])
    func wholeTreeMatchesTar(format: String) throws {
        try withScratch { scratch in
            try makeSourceTree(in: scratch)
            try makeArchive("a.tar.gz", format: format, in: scratch)
            try FileManager.default.createDirectory(atPath: scratch.path("theirs"), withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: scratch.path("ours"), withIntermediateDirectories: false)
            let theirs = try run(Tool.tar.path!, ["-xzf", "a.tar.gz", "-C", "theirs", "--no-same-owner", "--no-same-permissions"],
                                 in: scratch)
            #expect(theirs.status == 0 && theirs.err == "", "\(theirs)")
            let ours = try gzstream(["unpack", "--extract", "a.tar.gz", "-C", "ours"], in: scratch)
            #expect(ours.status == 0 && ours.err == "" && ours.out == "", "\(ours)")
            let expected = extractedTree(at: scratch.path("theirs"))
            let found = extractedTree(at: scratch.path("ours"))
            #expect(expected.count == 15)
            for path in Set(expected.keys).union(found.keys).sorted() {
                #expect(found[path] == expected[path], "\(path): ours \(String(describing: found[path])), tar's \(String(describing: expected[path]))")
            }
            var info = stat()
            #expect(stat(scratch.path("ours/sparse"), &info) == 0 && Int(info.st_blocks) * 512 < 1 << 20, "holes kept")
            _ = chmod(scratch.path("theirs/dir/sub"), 0o755)
            _ = chmod(scratch.path("ours/dir/sub"), 0o755)
        }
    }

    @Test("unpack ARCHIVE MEMBER... extracts those members, a directory with all it holds, and says how to read them directly",
          .requires(.tar), .requires(.pigz))
    func namedMembers() throws {
        try withScratch { scratch in
            try makeSourceTree(in: scratch)
            try makeArchive("a.tar.gz", format: "gnu", in: scratch)
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let result = try gzstream(["unpack", "a.tar.gz", "-C", "out", "dir/sub", "./run.sh", "/empty"], in: scratch)
            let hint = "gzstream: a.tar.gz: read from the start, without a member index (run 'gzstream index a.tar.gz' to read members directly)\n"
            #expect(result.status == 0 && result.err == hint && result.out == "", "\(result)")
            #expect(extractedTree(at: scratch.path("out")).keys.sorted() == ["dir", "dir/sub", "dir/sub/random.bin", "empty", "run.sh"])
            #expect(try scratch.read("out/dir/sub/random.bin") == randomBytes(count: 200_001, seed: 42))
            _ = chmod(scratch.path("out/dir/sub"), 0o755)

            // In the current directory by default; -q drops the hint.
            let quiet = try gzstream(["unpack", "-q", "a.tar.gz", "dir/file.txt"], in: scratch)
            #expect(quiet.status == 0 && quiet.err == "", "\(quiet)")
            #expect(try scratch.read("dir/file.txt") == sampleText(byteCount: 70_000, seed: 41))

            let missing = try gzstream(["unpack", "-q", "a.tar.gz", "-C", "out", "nothing/here", "run.sh"], in: scratch)
            let runOffset = try offset(of: "./run.sh", in: scratch)
            #expect(missing.status == 1 && missing.err == "gzstream: a.tar.gz: ./run.sh (tar member at byte \(runOffset)): the file exists; not replaced (use -f to replace it)\ngzstream: a.tar.gz: nothing/here: not found in the archive\n", "\(missing)")
            let forced = try gzstream(["unpack", "-q", "-f", "a.tar.gz", "-C", "out", "run.sh"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
        }
    }

    @Test("after gzstream index, members are read through the indexes: no hint, the same bytes, -c too",
          .requires(.tar), .requires(.pigz))
    func membersThroughTheIndexes() throws {
        try withScratch { scratch in
            try makeSourceTree(in: scratch)
            try makeArchive("a.tar.gz", format: "pax", in: scratch)
            let indexed = try gzstream(["index", "a.tar.gz"], in: scratch)
            #expect(indexed.status == 0 && scratch.exists("a.tar.gz.tarix"), "\(indexed)")
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let result = try gzstream(["unpack", "a.tar.gz", "-C", "out", "dir/sub", "run.sh", "empty", "nothing"], in: scratch)
            #expect(result.status == 1 && result.err == "gzstream: a.tar.gz: nothing: not found in the archive\n", "\(result)")
            #expect(extractedTree(at: scratch.path("out")).keys.sorted() == ["dir", "dir/sub", "dir/sub/random.bin", "empty", "run.sh"])
            #expect(try scratch.read("out/dir/sub/random.bin") == randomBytes(count: 200_001, seed: 42))
            _ = chmod(scratch.path("out/dir/sub"), 0o755)
            let file = try gzstream(["unpack", "-c", "a.tar.gz", "dir/file.txt"], in: scratch)
            #expect(file.status == 0 && file.err == "" && file.stdout == sampleText(byteCount: 70_000, seed: 41), "\(file)")
        }
    }

    /// The header offset of `member` as GNU tar's block numbers give it (`tar -R`).
    func offset(of member: String, in scratch: Scratch) throws -> Int {
        let listed = try shell("tar -tvRzf a.tar.gz", in: scratch)
        for line in listed.out.split(separator: "\n") where line.hasSuffix(" " + member) {
            let block = line.split(separator: " ")[1].dropLast()
            return (Int(block) ?? -1) * 512
        }
        return -1
    }

    @Test("unpack -c ARCHIVE MEMBER writes its content; a sparse one with its holes; a directory or a missing name is an error",
          .requires(.tar), .requires(.pigz))
    func memberToStandardOutput() throws {
        try withScratch { scratch in
            try makeSourceTree(in: scratch)
            try makeArchive("a.tar.gz", format: "gnu", in: scratch)
            let file = try gzstream(["unpack", "-c", "a.tar.gz", "dir/file.txt"], in: scratch)
            #expect(file.status == 0 && file.err == "" && file.stdout == sampleText(byteCount: 70_000, seed: 41), "\(file)")
            let sparse = try gzstream(["unpack", "-c", "a.tar.gz", "sparse"], in: scratch)
            let sparseSource = try scratch.read("src/sparse")
            #expect(sparse.status == 0 && sparse.stdout == sparseSource, "\(sparse)")
            let directory = try gzstream(["unpack", "-c", "a.tar.gz", "dir"], in: scratch)
            #expect(directory.status == 1 && directory.err == "gzstream: a.tar.gz: ./dir/: not a regular file; -c writes a file's content\n",
                    "\(directory)")
            let missing = try gzstream(["unpack", "-c", "a.tar.gz", "nothing"], in: scratch)
            #expect(missing.status == 1 && missing.err == "gzstream: a.tar.gz: nothing: not found in the archive\n", "\(missing)")
        }
    }

    @Test("a hostile archive (Python's tarfile) is refused member by member; nothing outside -C changes",
          .requires(.python3), .requires(.pigz))
    func hostileArchiveIsRefused() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("outside"), withIntermediateDirectories: false)
            try scratch.write("outside/keep", "keep\n")
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let script = tarfilePrelude + """
            import sys
            outside = sys.argv[1]
            with tarfile.open("h.tar", "w", format=tarfile.PAX_FORMAT) as tar:
                add(tar, "../escape", data=b"x")
                add(tar, "a/../../escape2", data=b"x")
                add(tar, "/abs", data=b"absolute, kept inside")
                add(tar, "up", tarfile.SYMTYPE, target=outside)
                add(tar, "up/keep", data=b"overwritten")
                add(tar, "dots", tarfile.SYMTYPE, target="..")
                add(tar, "dots/outside/keep", data=b"overwritten")
                add(tar, "inside", tarfile.SYMTYPE, target="abs")
                add(tar, "hard", tarfile.LNKTYPE, target="inside")
                add(tar, "hard2", tarfile.LNKTYPE, target="../outside/keep")
                add(tar, "fifo", tarfile.FIFOTYPE)
                add(tar, "ok", data=b"fine")
            """
            let python = try run(Tool.python3.path!, ["-c", script, scratch.path("outside")], in: scratch)
            #expect(python.status == 0 && python.err == "", "\(python)")
            #expect(try shell("pigz h.tar", in: scratch).status == 0)
            let result = try gzstream(["unpack", "--extract", "h.tar.gz", "-C", "out"], in: scratch)
            let outside = scratch.path("outside")
            #expect(result.status == 1)
            #expect(result.errLines.map { String($0.split(separator: "(").first ?? "") } == [
                "gzstream: h.tar.gz: ../escape ",
                "gzstream: h.tar.gz: a/../../escape2 ",
                "gzstream: h.tar.gz: removing leading \"/\" from member names",
                "gzstream: h.tar.gz: up ",
                "gzstream: h.tar.gz: dots ",
                "gzstream: h.tar.gz: hard ",
                "gzstream: h.tar.gz: hard2 ",
                "gzstream: h.tar.gz: fifo ",
            ], "\(result)")
            #expect(result.err.contains("): the link target \(outside) is outside the destination; not extracted\n"))
            #expect(result.err.contains("): a hard link to inside, which is not a regular file this extraction wrote; not extracted\n"))
            #expect(try scratch.read("outside/keep") == Array("keep\n".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("outside")) == ["keep"])
            #expect(!scratch.exists("escape") && !scratch.exists("escape2"))
            // The links refused, the members named through them land inside as plain paths.
            #expect(extractedTree(at: scratch.path("out")).keys.sorted()
                    == ["abs", "dots", "dots/outside", "dots/outside/keep", "inside", "ok", "up", "up/keep"])
        }
    }

    @Test("--links-outside makes the links a real archive holds (absolute, climbing out) as stored; members through them stay refused",
          .requires(.python3), .requires(.pigz))
    func linksOutsideAreMadeWhenAsked() throws {
        try withScratch { scratch in
            for directory in ["out", "out2"] {
                try FileManager.default.createDirectory(atPath: scratch.path(directory), withIntermediateDirectories: false)
            }
            // As /usr/share holds them: links to /etc and to a sibling tree.
            let script = tarfilePrelude + """
            with tarfile.open("l.tar", "w", format=tarfile.GNU_FORMAT) as tar:
                add(tar, "d", tarfile.DIRTYPE)
                add(tar, "d/site.py", tarfile.SYMTYPE, target="/etc/python3/site.py")
                add(tar, "d/up", tarfile.SYMTYPE, target="../../elsewhere")
                add(tar, "d/up/x", data=b"through the link")
                add(tar, "d/ok", data=b"fine")
            """
            let python = try run(Tool.python3.path!, ["-c", script], in: scratch)
            #expect(python.status == 0 && python.err == "", "\(python)")
            #expect(try shell("pigz l.tar", in: scratch).status == 0)
            let refused = try gzstream(["unpack", "--extract", "l.tar.gz", "-C", "out"], in: scratch)
            #expect(refused.status == 1 && refused.errLines.count == 2, "\(refused)")
            #expect(extractedTree(at: scratch.path("out")).keys.sorted() == ["d", "d/ok", "d/up", "d/up/x"], "\(refused)")
            let made = try gzstream(["unpack", "--extract", "--links-outside", "l.tar.gz", "-C", "out2"], in: scratch)
            // The links are made; the member whose path goes through one is still refused.
            #expect(made.status == 1 && made.errLines.count == 1 && made.err.contains("d/up/x"), "\(made)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: scratch.path("out2/d/site.py")) == "/etc/python3/site.py")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: scratch.path("out2/d/up")) == "../../elsewhere")
            #expect(try scratch.read("out2/d/ok") == Array("fine".utf8))
            #expect(!scratch.exists("elsewhere"))
            let usage = try gzstream(["unpack", "--links-outside", "l.tar.gz"], in: scratch)
            #expect(usage.status == 1 && usage.err == "gzstream: --links-outside applies to extracting tar members (--extract or MEMBER names)\nTry 'gzstream --help' for more information.\n", "\(usage)")
        }
    }

    /// The gzip trailer is the only check of the data: a pass that stopped at the tar's end
    /// blocks would extract from a file gzip -t rejects, and say nothing.
    @Test("without an index, every tar pass reads to the gzip end: a CRC-32 mismatch is an error, trailing garbage a warning",
          .requires(.gzip))
    func gzipTrailersAreChecked() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("src"), withIntermediateDirectories: false)
            try scratch.write("src/a.txt", sampleText(byteCount: 300_000, seed: 7))
            #expect(try shell("tar -cf - src | gzip -6 > good.tar.gz", in: scratch).status == 0)
            var bytes = try scratch.read("good.tar.gz")
            bytes[bytes.count - 8] ^= 0xff
            try scratch.write("bad.tar.gz", bytes)
            try scratch.write("tg.tar.gz", try scratch.read("good.tar.gz") + Array("junk".utf8))
            for (index, arguments) in [["unpack", "--extract", "bad.tar.gz", "-C", "o1"], ["unpack", "bad.tar.gz", "src/a.txt", "-C", "o2"],
                                       ["unpack", "-c", "bad.tar.gz", "src/a.txt"], ["list", "--members", "bad.tar.gz"]].enumerated() {
                if arguments.contains("-C") {
                    try FileManager.default.createDirectory(atPath: scratch.path("o\(index + 1)"), withIntermediateDirectories: false)
                }
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1 && result.errLines.last?.hasPrefix("gzstream: bad.tar.gz: CRC-32 mismatch in member 1 at byte ") == true,
                        "\(arguments): \(result)")
            }
            try FileManager.default.createDirectory(atPath: scratch.path("o5"), withIntermediateDirectories: false)
            let garbage = try gzstream(["unpack", "--extract", "tg.tar.gz", "-C", "o5"], in: scratch)
            #expect(garbage.status == 2 && garbage.err == "gzstream: tg.tar.gz: decompression OK, trailing garbage ignored\n", "\(garbage)")
            #expect(try scratch.read("o5/src/a.txt") == sampleText(byteCount: 300_000, seed: 7))
        }
    }

    /// An archive appended to (`tar -r`) holds the newer version of a file last.
    @Test("duplicate names: the later member wins with and without the indexes; -c writes each, as tar -xO does",
          .requires(.python3), .requires(.pigz))
    func duplicateNamesGiveTheSameBytesBothWays() throws {
        try withScratch { scratch in
            let script = """
            import io, tarfile
            with tarfile.open("d.tar", "w", format=tarfile.GNU_FORMAT) as tar:
                for name, data in [("dup", b"first\\n"), ("pad", b"x" * 70000), ("dup", b"second\\n"), ("end", b"e")]:
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    info.mtime = 1600000000
                    tar.addfile(info, io.BytesIO(data))
            """
            let python = try run(Tool.python3.path!, ["-c", script], in: scratch)
            #expect(python.status == 0 && python.err == "", "\(python)")
            #expect(try shell("pigz d.tar", in: scratch).status == 0)
            for pass in ["sequential", "indexed"] {
                if pass == "indexed" { #expect(try gzstream(["index", "--span", "32K", "d.tar.gz"], in: scratch).status == 0) }
                let out = "out-\(pass)"
                try FileManager.default.createDirectory(atPath: scratch.path(out), withIntermediateDirectories: false)
                let named = try gzstream(["unpack", "d.tar.gz", "dup", "-C", out], in: scratch)
                #expect(named.status == 0, "\(pass): \(named)")
                #expect(try scratch.read("\(out)/dup") == Array("second\n".utf8), "\(pass)")
                let toStdout = try gzstream(["unpack", "-c", "d.tar.gz", "dup"], in: scratch)
                #expect(toStdout.status == 0 && toStdout.out == "first\nsecond\n", "\(pass): \(toStdout)")
            }
            #expect(try shell("tar -xOzf d.tar.gz dup", in: scratch).out == "first\nsecond\n")
        }
    }

    @Test("the command line: plain unpack of a .tar.gz still writes the .tar; usage errors of the member forms")
    func commandLine() throws {
        try withScratch { scratch in
            try scratch.write("x.tar", sampleText(byteCount: 1000, seed: 3))
            #expect(try gzstream(["pack", "x.tar"], in: scratch).status == 0)
            try FileManager.default.moveItem(atPath: scratch.path("x.tar.gz"), toPath: scratch.path("a.tar.gz"))
            let plain = try gzstream(["unpack", "a.tar.gz"], in: scratch)
            let written = try scratch.read("a.tar")
            #expect(plain.status == 0 && plain.err == "" && written == sampleText(byteCount: 1000, seed: 3))
            for (arguments, message) in [
                (["unpack", "--extract", "a.tar.gz", "m"], "--extract extracts every member: name no MEMBER with it"),
                (["unpack", "-C", "d", "a.tar.gz"], "-C needs --extract or MEMBER names"),
                (["unpack", "-c", "a.tar.gz", "m", "n"], "-c writes one member to standard output: name one MEMBER, without --extract or -C"),
                (["unpack", "--extract"], "extracting members needs an archive FILE (FILE.tar.gz), not standard input"),
                (["unpack", "--rm", "a.tar.gz", "m"], "extracting members takes -C, -c and -f: -o, --rm, -r, -N, --index, --write-index, --offset, --length, --lines and --max-output do not apply"),
                (["test", "--extract", "a.tar.gz"], "--extract applies to unpack"),
            ] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1 && result.err == "gzstream: \(message)\nTry 'gzstream --help' for more information.\n",
                        "\(arguments): \(result)")
            }
            // Not a tar archive: the reader's error, one line.
            let notTar = try gzstream(["unpack", "--extract", "a.tar.gz", "-C", "."], in: scratch)
            #expect(notTar.status == 1 && notTar.errLines.count == 1 && notTar.err.hasPrefix("gzstream: a.tar.gz: "), "\(notTar)")
        }
    }
}

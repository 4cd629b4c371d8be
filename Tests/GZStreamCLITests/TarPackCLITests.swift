import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tree with what pack --tar must store exactly: files of sizes around a block, modes,
/// an empty directory, a symbolic link, two hard links, names with a space, a newline and a
/// byte that is not UTF-8, a path of more than 200 bytes; every time set.
private let makeTree = #"""
set -e
mkdir -p tree/empty tree/sub/deeper "tree/with space"
printf '' > tree/zero
printf 'x' > tree/one
head -c 511 /dev/zero | tr '\0' 'a' > tree/sub/b511
head -c 513 /dev/zero | tr '\0' 'b' > tree/sub/b513
seq 1 20000 > tree/sub/deeper/numbers
printf 'secret\n' > tree/sub/private; chmod 600 tree/sub/private
printf '#!/bin/sh\n' > tree/run.sh; chmod 755 tree/run.sh
chmod 750 tree/sub/deeper
printf 'space\n' > "tree/with space/a b"
printf 'newline\n' > "$(printf 'tree/new\nline')"
printf 'latin\n' > "$(printf 'tree/caf\351')"
ln -s ../one tree/sub/link-to-one
ln -s nowhere tree/dangling
printf 'linked\n' > tree/hard1; ln tree/hard1 tree/sub/hard2
long=tree/$(printf '%050d' 1)/$(printf '%050d' 2)/$(printf '%050d' 3)
mkdir -p "$long"; printf 'long\n' > "$long/$(printf '%060d' 4)"
find tree -exec touch -h -d @1600000000 {} +
touch -d @1500000000 tree/sub/b511
"""#

/// Every file under `root` as `lstat` sees it, one line each, sorted: the path's bytes (hex),
/// type and permission bits, size, whole-second mtime, link count, a link's target.
private let describeTree = #"""
import os, sys
root = os.fsencode(sys.argv[1])
for d, dirs, files in os.walk(root):
    for n in sorted(dirs + files):
        p = os.path.join(d, n); s = os.lstat(p)
        t = os.readlink(p).hex() if os.path.islink(p) else ''
        size = s.st_size if not os.path.isdir(p) else 0
        print(os.path.relpath(p, root).hex(), oct(s.st_mode), size, int(s.st_mtime), s.st_nlink, t)
"""#

@Suite("pack --tar: a tree as one tar.gz, read back by GNU tar and Python's tarfile", .onDedicatedThreads)
struct TarPackCLITests {
    @Test("GNU tar extracts exactly the tree: contents, modes, times, links, odd names", .requires(.tar), .requires(.python3))
    func roundTripThroughGNUTar() throws {
        try withScratch { scratch in
            let made = try shell(makeTree, in: scratch)
            #expect(made.status == 0, "\(made)")
            let packed = try gzstream(["pack", "--tar", "tree"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(scratch.exists("tree.tar.gz"))
            let extracted = try shell("mkdir out && tar -xzf tree.tar.gz -C out && diff -r --no-dereference tree out/tree",
                                      in: scratch)
            #expect(extracted.status == 0, "\(extracted)")
            let original = try run("/usr/bin/python3", ["-c", describeTree, "tree"], in: scratch)
            let copy = try run("/usr/bin/python3", ["-c", describeTree, "out/tree"], in: scratch)
            #expect(original.status == 0 && !original.out.isEmpty, "\(original)")
            #expect(copy.out == original.out)
            // Python's tarfile reads every member, names as bytes, in the walk's order: each
            // directory before what it holds, names in bytewise order within it.
            let python = try run("/usr/bin/python3", ["-c", """
                import sys, tarfile, os
                with tarfile.open(sys.argv[1], encoding='utf-8', errors='surrogateescape') as t:
                    for m in t: sys.stdout.buffer.write(os.fsencode(m.name) + (b'/' if m.isdir() else b'') + b'\\0')
                """, "tree.tar.gz"], in: scratch)
            #expect(python.status == 0, "\(python)")
            let names = python.stdout.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            let long = "tree/" + (1...3).map { String(repeating: "0", count: 49) + "\($0)" }.joined(separator: "/")
            #expect(names == ["tree/", "tree/" + String(repeating: "0", count: 49) + "1/",
                              "tree/" + String(repeating: "0", count: 49) + "1/" + String(repeating: "0", count: 49) + "2/",
                              long + "/", long + "/" + String(repeating: "0", count: 59) + "4",
                              "tree/caf\u{FFFD}", "tree/dangling", "tree/empty/", "tree/hard1", "tree/new\nline", "tree/one",
                              "tree/run.sh", "tree/sub/", "tree/sub/b511", "tree/sub/b513", "tree/sub/deeper/",
                              "tree/sub/deeper/numbers", "tree/sub/hard2", "tree/sub/link-to-one", "tree/sub/private",
                              "tree/with space/", "tree/with space/a b", "tree/zero"])
        }
    }

    @Test("--mtime, --owner and --group make the same bytes from the same tree; -p 1 and -p 2 too", .requires(.tar))
    func reproducible() throws {
        try withScratch { scratch in
            #expect(try shell(makeTree, in: scratch).status == 0)
            let options = ["pack", "--tar", "-c", "--mtime=@1234567890", "--owner=builder:4242", "--group", "builders:4343"]
            let first = try gzstream(options + ["-p", "1", "tree"], in: scratch)
            #expect(first.status == 0 && first.err == "", "\(first)")
            #expect(try shell("find tree -exec touch -h -d @1700000000 {} +", in: scratch).status == 0)
            let second = try gzstream(options + ["-p", "2", "tree"], in: scratch)
            #expect(second.stdout == first.stdout)
            let path = try scratch.write("r.tar.gz", first.stdout)
            let verbose = try run(try #require(Tool.tar.path), ["--full-time", "-tvzf", path], in: scratch)
            let line = try #require(verbose.out.split(separator: "\n").first { $0.hasSuffix(" tree/one") })
            #expect(line.contains(" builder/builders ") && line.contains(" 2009-02-13 23:31:30 tree/one"), "\(line)")
            let numeric = try run(try #require(Tool.tar.path), ["--numeric-owner", "-tvzf", path], in: scratch)
            #expect(numeric.out.contains(" 4242/4343 "), "\(numeric)")
        }
    }

    @Test("An existing archive is not replaced without -f; -f replaces it", .requires(.tar))
    func refusesToOverwrite() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("dir"), withIntermediateDirectories: true)
            try scratch.write("dir/f", "data\n")
            try scratch.write("dir.tar.gz", "keep me")
            let refused = try gzstream(["pack", "--tar", "dir"], in: scratch)
            #expect(refused.status == 1)
            #expect(refused.err == "gzstream: dir.tar.gz: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.read("dir.tar.gz") == Array("keep me".utf8))
            let forced = try gzstream(["pack", "--tar", "-f", "dir/"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            let listed = try run(try #require(Tool.tar.path), ["-tzf", "dir.tar.gz"], in: scratch)
            #expect(listed.out == "dir/\ndir/f\n")
        }
    }

    @Test("A file that cannot be read: one line, the rest archived, exit 1", .requires(.tar),
          .enabled(if: getuid() != 0, "root reads a file of mode 000"))
    func unreadableFile() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: true)
            try scratch.write("d/a", "a\n")
            try scratch.write("d/secret", "s\n")
            try scratch.write("d/z", "z\n")
            chmod(scratch.path("d/secret"), 0)
            let result = try gzstream(["pack", "--tar", "d"], in: scratch)
            #expect(result.status == 1)
            #expect(result.err == "gzstream: d/secret: cannot open: Permission denied\n")
            let listed = try run(try #require(Tool.tar.path), ["-tzf", "d.tar.gz"], in: scratch)
            #expect(listed.out == "d/\nd/a\nd/z\n")
        }
    }

    @Test("Sockets are passed over with a warning; FIFOs stored as headers, never opened", .requires(.tar), .requires(.python3))
    func specialFiles() throws {
        try withScratch { scratch in
            let made = try shell("""
                mkdir d && mkfifo d/fifo && printf 'f\\n' > d/file &&
                python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("d/sock")'
                """, in: scratch)
            #expect(made.status == 0, "\(made)")
            let result = try gzstream(["pack", "--tar", "-o", "d.tgz", "d"], in: scratch)
            #expect(result.status == 2)
            #expect(result.err == "gzstream: d/sock: socket ignored\n")
            let listed = try run(try #require(Tool.tar.path), ["-tvzf", "d.tgz"], in: scratch)
            let lines = listed.out.split(separator: "\n")
            #expect(lines.count == 3 && lines[1].hasPrefix("p") && lines[1].hasSuffix(" d/fifo"), "\(listed)")
        }
    }

    @Test("The archive met in the tree it is written into is not stored, and is named as GNU tar names it", .requires(.tar))
    func archiveInsideTheTree() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: true)
            try scratch.write("d/f", "f\n")
            // Written under a temporary name until complete: the warning still names the archive.
            let result = try gzstream(["pack", "--tar", "-o", "d/self.tar.gz", "d"], in: scratch)
            #expect(result.status == 2 && result.err == "gzstream: d/self.tar.gz: file is the archive; not dumped\n",
                    "\(result)")
            let listed = try run(try #require(Tool.tar.path), ["-tzf", "d/self.tar.gz"], in: scratch)
            #expect(listed.out == "d/\nd/f\n")
            // As `tar -cf d/tar.tar d` names it.
            let tar = try shell("tar -cf d/tar.tar d", in: scratch)
            #expect(tar.err == "tar: d/tar.tar: file is the archive; not dumped\n", "\(tar)")
            // Standard output redirected into the tree: the file is met by its own name.
            let redirected = try shell("\"$0\" pack --tar -c d > d/out.tgz", in: scratch)
            #expect(redirected.status == 2 && redirected.err == "gzstream: d/out.tgz: file is the archive; not dumped\n",
                    "\(redirected)")
        }
    }

    @Test("--index writes the GZIDX beside the archive; a member's data reads back through it", .requires(.python3))
    func indexBesideTheArchive() throws {
        try withScratch { scratch in
            #expect(try shell(makeTree, in: scratch).status == 0)
            let packed = try gzstream(["pack", "--tar", "--index", "-o", "t.tar.gz", "tree"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(scratch.exists("t.tar.gz.gzidx"))
            let found = try run("/usr/bin/python3", ["-c", """
                import tarfile
                m = tarfile.open('t.tar.gz').getmember('tree/sub/deeper/numbers')
                print(m.offset_data, m.size)
                """], in: scratch)
            let fields = found.out.split(separator: " ").map { String($0.filter { $0.isNumber }) }
            #expect(fields.count == 2, "\(found)")
            let member = try gzstream(["unpack", "-c", "--offset", fields[0], "--length", fields[1], "t.tar.gz"], in: scratch)
            let numbers = try scratch.read("tree/sub/deeper/numbers")
            #expect(member.status == 0 && member.stdout == numbers, "\(member)")
        }
    }

    @Test("An operand that names nothing: one line, exit 1, no archive")
    func missingOperand() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: true)
            let result = try gzstream(["pack", "--tar", "-o", "a.tar.gz", "d", "nothere"], in: scratch)
            #expect(result.status == 1 && result.err == "gzstream: nothere: No such file or directory\n", "\(result)")
            #expect(!scratch.exists("a.tar.gz"))
        }
    }

    static let mtimeTakes = "--mtime takes @SECONDS, a date YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM] or a file named with a leading / or ./, "

    @Test("--mtime takes what GNU tar's takes and reads one way: @SECONDS, ISO 8601 dates and times (local without a zone), ./FILE",
          .requires(.tar), arguments: [
        "@1234567890", "@-5", "2020-01-02", "2000-02-29", "2020-01-02 03:04", "2020-01-02T03:04:05", "2020-01-02T03:04:05Z",
        "1969-12-31T23:59:59Z", "2020-01-02T03:04:05+02:00", "2020-01-02T03:04:05-07:30", "./stamp", "/usr/bin/env",
    ])
    func mtimeAsTarReadsIt(value: String) throws {
        try withScratch { scratch in
            // A zone without tzdata: 5:30 east of UTC, so that local time is not UTC.
            let script = """
                mkdir tree && printf 'x\\n' > tree/f && touch -d @1600000000.75 stamp && export TZ=IST-5:30
                "$0" pack --tar -c --mtime="$1" tree | TZ=UTC tar --full-time -tvzf - tree/f
                tar --mtime="$1" -cf - tree | TZ=UTC tar --full-time -tvf - tree/f
                """
            let result = try shell(script, [value], in: scratch)
            let lines = result.out.split(separator: "\n").map { $0.split(separator: " ").dropFirst(3).joined(separator: " ") }
            #expect(result.status == 0 && lines.count == 2 && lines[0] == lines[1] && result.err == "", "\(result)")
        }
    }

    @Test("Usage errors", arguments: [
        (["pack", "--tar"], "--tar needs the files and directories to archive (not standard input)"),
        (["pack", "--tar", "a", "b"], "--tar with several FILEs needs -o ARCHIVE or -c (one archive holds them all)"),
        (["pack", "--tar", "-r", "a"], "--tar walks the directories itself: -r does not apply"),
        (["pack", "--mtime=@5", "a"], "--mtime, --owner, --group and --numeric-owner apply to pack --tar"),
        (["pack", "--tar", "--mtime=yesterday", "a"], Self.mtimeTakes + "not 'yesterday'"),
        (["pack", "--tar", "--mtime=2021-02-29", "a"], Self.mtimeTakes + "not '2021-02-29'"),
        (["pack", "--tar", "--mtime=2020-01-02T24:00", "a"], Self.mtimeTakes + "not '2020-01-02T24:00'"),
        (["pack", "--tar", "--mtime=2020-01-02T03:04+2", "a"], Self.mtimeTakes + "not '2020-01-02T03:04+2'"),
        (["pack", "--tar", "--mtime=2020-01-02Z", "a"], Self.mtimeTakes + "not '2020-01-02Z'"),
        (["pack", "--tar", "--mtime=stamp", "a"], Self.mtimeTakes + "not 'stamp'"),
        (["pack", "--tar", "--mtime=./missing", "a"], "--mtime './missing': no such file (a time from a file needs one)"),
        (["unpack", "--tar", "a"], "--tar applies to pack"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1)
            #expect(result.err == usageError(message), "\(result)")
        }
    }
}

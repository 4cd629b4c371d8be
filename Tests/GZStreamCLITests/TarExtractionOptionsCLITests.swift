import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// unpack of tar members with -C DIR that cannot be opened, -v (the names tar -xv writes) and
// --same-owner, each compared with GNU tar where tar has an answer.

extension Trait where Self == ConditionTrait {
    /// Runs the test only as root: only root gives files other owners.
    static var rootForOwners: Self {
        .enabled(if: geteuid() == 0, "needs root: only root can give extracted files other owners")
    }
}

/// The owner and group of `path` itself (`lstat`), and its permission bits.
private func owners(_ path: String) -> (owner: uid_t, group: gid_t, permissions: mode_t)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return (info.st_uid, info.st_gid, info.st_mode & 0o7777)
}

@Suite("gzstream unpack of tar members: -C errors, -v, --same-owner", .onDedicatedThreads, .requires(.tar), .requires(.gzip))
struct TarExtractionOptionsCLITests {
    /// A directory with a file, a set-user-ID file, a subdirectory, a symbolic and a hard link,
    /// archived by GNU tar by name under owner 1234 and group 2345 (IDs only), gzip-compressed.
    static let makeArchive = """
        mkdir -p src/dir/sub && printf 'hello\\n' > src/dir/a.txt && printf 'run\\n' > src/dir/setuid \
        && chmod 4755 src/dir/setuid && printf 'b\\n' > src/dir/sub/b && ln -s a.txt src/dir/link \
        && ln src/dir/a.txt src/dir/hard && printf 'top\\n' > src/top \
        && tar --format=gnu --sort=name --mtime=@1700000000 --owner=1234 --group=2345 --numeric-owner \
        -C src -cf - dir top | gzip -n > a.tar.gz
        """

    @Test("-C DIR that is missing or not a directory: one line naming -C, exit 1, nothing read or written")
    func unusableDirectory() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && : > file", in: scratch).status == 0)
            let before = try scratch.listing()
            for arguments in [["unpack", "--extract", "a.tar.gz", "-C", "nosuch"], ["unpack", "a.tar.gz", "dir", "-C", "nosuch"],
                              ["unpack", "-v", "a.tar.gz", "top", "--directory", "nosuch"], ["unpack", "--extract", "a.tar.gz", "-C", "nosuch/"]] {
                let result = try gzstream(arguments, in: scratch)
                let shown = arguments.last!
                #expect(result.status == 1 && result.out == "" && result.err == "gzstream: -C \(shown): No such file or directory\n",
                        "\(arguments): \(result)")
            }
            let notDirectory = try gzstream(["unpack", "a.tar.gz", "dir", "-C", "file"], in: scratch)
            #expect(notDirectory.status == 1 && notDirectory.out == "" && notDirectory.err == "gzstream: -C file: Not a directory\n",
                    "\(notDirectory)")
            // Through the member index too, before its notes.
            #expect(try gzstream(["index", "a.tar.gz"], in: scratch).status == 0)
            let indexed = try gzstream(["unpack", "-v", "a.tar.gz", "dir", "-C", "nosuch"], in: scratch)
            #expect(indexed.status == 1 && indexed.out == "" && indexed.err == "gzstream: -C nosuch: No such file or directory\n",
                    "\(indexed)")
            #expect(try scratch.listing() == (before + ["a.tar.gz.gzidx", "a.tar.gz.tarix"]).sorted())
        }
    }

    @Test("-v writes on standard output the lines tar -xv writes, in one pass and through the indexes alike; with -c on standard error")
    func verboseNamesAsTar() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && mkdir theirs theirs2", in: scratch).status == 0)
            let tar = try run(Tool.tar.path!, ["-xvzf", "a.tar.gz", "-C", "theirs", "--no-same-owner"], in: scratch)
            let tarNamed = try run(Tool.tar.path!, ["-xvzf", "a.tar.gz", "-C", "theirs2", "--no-same-owner", "dir/sub", "top"], in: scratch)
            #expect(tar.status == 0 && tar.out.split(separator: "\n").count == 8, "\(tar)")
            #expect(tarNamed.status == 0 && tarNamed.out == "dir/sub/\ndir/sub/b\ntop\n", "\(tarNamed)")
            for pass in ["one pass", "indexed"] {
                if pass == "indexed" { #expect(try gzstream(["index", "a.tar.gz"], in: scratch).status == 0) }
                let whole = "whole-\(pass.first!)", named = "named-\(pass.first!)"
                try FileManager.default.createDirectory(atPath: scratch.path(whole), withIntermediateDirectories: false)
                try FileManager.default.createDirectory(atPath: scratch.path(named), withIntermediateDirectories: false)
                let extracted = try gzstream(["unpack", "-v", "--extract", "a.tar.gz", "-C", whole], in: scratch)
                #expect(extracted.status == 0 && extracted.out == tar.out, "\(pass): \(extracted)")
                let chosen = try gzstream(["unpack", "-v", "a.tar.gz", "dir/sub", "top", "-C", named], in: scratch)
                #expect(chosen.status == 0 && chosen.out == tarNamed.out, "\(pass): \(chosen)")
                // -c: the content alone on standard output, the name last on standard error (after
                // the note of the indexes read, through them).
                let content = try gzstream(["unpack", "-v", "-c", "a.tar.gz", "dir/a.txt"], in: scratch)
                #expect(content.status == 0 && content.out == "hello\n" && content.errLines.last == "dir/a.txt", "\(pass): \(content)")
                let tarContent = try shell("tar -xvzOf a.tar.gz dir/a.txt", in: scratch)
                #expect(tarContent.out == "hello\n" && tarContent.err == "dir/a.txt\n")
                // Without -v, no names.
                let quiet = try gzstream(["unpack", "-f", "--extract", "a.tar.gz", "-C", whole], in: scratch)
                #expect(quiet.status == 0 && quiet.out == "" && quiet.err == "", "\(pass): \(quiet)")
            }
            // A member refused (there already, without -f) has no line: its error says it.
            let refused = try gzstream(["unpack", "-v", "a.tar.gz", "top", "dir/a.txt", "-C", "named-o"], in: scratch)
            #expect(refused.status == 1 && refused.out == "dir/a.txt\n" && refused.errLines.count == 2
                    && refused.errLines.last?.hasSuffix("): the file exists; not replaced (use -f to replace it)") == true, "\(refused)")
        }
    }

    @Test("-C through another user's symbolic link in a sticky directory is refused, DIR/ too; your own or root's is followed",
          .rootForOwners)
    func foreignLinkAsDirectory() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && mkdir -m 1777 pub && mkdir victim mine"
                              + " && ln -s ../victim pub/theirs && ln -s ../mine pub/own", in: scratch).status == 0)
            // Another user's link, as one that user would put in /tmp (root gives it away here).
            #expect(lchown(scratch.path("pub/theirs"), 65534, 65534) == 0)
            for given in ["pub/theirs", "pub/theirs/", "pub/theirs//"] {
                let refused = try gzstream(["unpack", "--extract", "a.tar.gz", "-C", given], in: scratch)
                #expect(refused.status == 1 && refused.out == "", "\(given): \(refused)")
                #expect(refused.errLines == ["gzstream: -C \(given): is a symbolic link of another user: not followed "
                                             + "(give the directory it points to, if you trust it)"], "\(refused)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("victim")) == [])
            }
            // The same archive through root's own link, and through the directory named itself.
            #expect(try gzstream(["unpack", "--extract", "a.tar.gz", "-C", "pub/own/"], in: scratch).status == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("mine")).sorted() == ["dir", "top"])
            #expect(try gzstream(["unpack", "--extract", "a.tar.gz", "-C", "victim"], in: scratch).status == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("victim")).sorted() == ["dir", "top"])
        }
    }

    @Test("-v names the members written, not a FIFO or a device skipped with a warning", .requires(.python3))
    func verboseSkipsSkipped() throws {
        try withScratch { scratch in
            // A FIFO and a character device between two files, made by Python's tarfile (no
            // device node is needed to store one).
            let make = """
                python3 -c 'import tarfile, io
                with tarfile.open("s.tar.gz", "w:gz") as t:
                    for name, kind in [("a.txt", tarfile.REGTYPE), ("fifo", tarfile.FIFOTYPE), ("null", tarfile.CHRTYPE), ("b.txt", tarfile.REGTYPE)]:
                        info = tarfile.TarInfo(name); info.type = kind; info.mode = 0o644
                        data = b"x\\n" if kind == tarfile.REGTYPE else b""
                        info.size = len(data)
                        t.addfile(info, io.BytesIO(data) if data else None)
                ' && mkdir one two
                """
            #expect(try shell(make, in: scratch).status == 0)
            for (pass, directory) in [("one pass", "one"), ("indexed", "two")] {
                if pass == "indexed" { #expect(try gzstream(["index", "s.tar.gz"], in: scratch).status == 0) }
                let extracted = try gzstream(["unpack", "-v", "--extract", "s.tar.gz", "-C", directory], in: scratch)
                #expect(extracted.status == 2 && extracted.out == "a.txt\nb.txt\n", "\(pass): \(extracted)")
                #expect(extracted.errLines.filter { $0.hasSuffix("skipped") }.count == 2, "\(pass): \(extracted)")
            }
        }
    }

    @Test("--same-owner as root gives files, directories and links the IDs stored, set-user-ID still dropped; without it nothing is chowned",
          .rootForOwners)
    func sameOwnerAsRoot() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && mkdir own plain own-i plain-i", in: scratch).status == 0)
            let paths = ["dir", "dir/a.txt", "dir/setuid", "dir/sub", "dir/sub/b", "dir/link", "dir/hard", "top"]
            for pass in ["", "-i"] {
                if pass == "-i" { #expect(try gzstream(["index", "a.tar.gz"], in: scratch).status == 0) }
                let own = try gzstream(["unpack", "--same-owner", "a.tar.gz", "dir", "top", "-C", "own" + pass], in: scratch)
                #expect(own.status == 0 && own.out == "", "\(pass): \(own)")
                let plain = try gzstream(["unpack", "--same-owner", "--no-same-owner", "a.tar.gz", "dir", "top", "-C", "plain" + pass],
                                         in: scratch)
                #expect(plain.status == 0 && plain.out == "", "\(pass): \(plain)")
                for path in paths {
                    let given = owners(scratch.path("own\(pass)/" + path))
                    #expect(given?.owner == 1234 && given?.group == 2345, "\(pass) \(path): \(String(describing: given))")
                    let kept = owners(scratch.path("plain\(pass)/" + path))
                    #expect(kept?.owner == geteuid() && kept?.group == getegid(), "\(pass) \(path): \(String(describing: kept))")
                }
                // chown before chmod, and set-user-ID dropped all the same.
                let setuid = owners(scratch.path("own\(pass)/dir/setuid"))
                #expect(setuid.map { $0.permissions & 0o6000 == 0 && $0.permissions & 0o100 != 0 } == true, "\(String(describing: setuid))")
            }
            #expect(try scratch.read("own/dir/a.txt") == Array("hello\n".utf8))
        }
    }

    /// GNU tar tries and fails member by member (`Cannot change ownership`, exit 2) after writing
    /// each one; here nothing is written.
    @Test("--same-owner when not root: one line, exit 1, nothing extracted; a usage error where nothing is extracted",
          .rootForOwners, .requires(.setpriv))
    func sameOwnerNotRoot() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && mkdir out && chmod 777 out", in: scratch).status == 0)
            _ = chmod(scratch.root.path, 0o755)
            _ = chmod(scratch.work.path, 0o755)
            let result = try run(Tool.setpriv.path!, ["--reuid=65534", "--regid=65534", "--clear-groups", Locations.binary,
                                                      "unpack", "--same-owner", "--extract", "a.tar.gz", "-C", "out"], in: scratch)
            #expect(result.status == 1 && result.out == ""
                    && result.err == "gzstream: --same-owner: only root can give files other owners (this is user ID 65534); nothing extracted\n",
                    "\(result)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).isEmpty)
            // -c extracts nothing: --same-owner is ignored there, as tar -xO ignores it.
            let toStdout = try run(Tool.setpriv.path!, ["--reuid=65534", "--regid=65534", "--clear-groups", Locations.binary,
                                                        "unpack", "--same-owner", "-c", "a.tar.gz", "top"], in: scratch)
            #expect(toStdout.status == 0 && toStdout.out == "top\n" && toStdout.err == "", "\(toStdout)")
            let usage = try gzstream(["unpack", "--same-owner", "a.tar.gz"], in: scratch)
            #expect(usage.status == 1 && usage.err == "gzstream: --same-owner applies to extracting tar members (--extract or MEMBER names)\n"
                    + "Try 'gzstream --help' for more information.\n", "\(usage)")
        }
    }

    /// Each tar extraction option refused where it does not apply names itself: gzip mode has
    /// no tar members (`-d --extract` wrote t.tar and exited 0), and test and list take none.
    @Test("tar extraction options elsewhere: one usage line naming the option given, nothing written")
    func optionsRefusedByName() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive, in: scratch).status == 0)
            let gzipMode = "applies to extracting tar members (gzstream unpack), not to gzip mode"
            for (arguments, message) in [
                (["-d", "--extract", "a.tar.gz"], "--extract \(gzipMode)"),
                (["-d", "--directory=d", "a.tar.gz"], "--directory \(gzipMode)"),
                (["-dk", "--links-outside", "a.tar.gz"], "--links-outside \(gzipMode)"),
                (["-d", "--same-owner", "a.tar.gz"], "--same-owner \(gzipMode)"),
                (["-d", "--no-same-owner", "a.tar.gz"], "--no-same-owner \(gzipMode)"),
                (["-t", "--extract", "a.tar.gz"], "--extract \(gzipMode)"),
                (["test", "--same-owner", "a.tar.gz"], "--same-owner and --no-same-owner apply to unpack"),
                (["test", "--no-same-owner", "a.tar.gz"], "--same-owner and --no-same-owner apply to unpack"),
                (["test", "--links-outside", "a.tar.gz"], "--links-outside applies to unpack"),
                (["test", "--extract", "a.tar.gz"], "--extract applies to unpack"),
                (["list", "-C", "d", "a.tar.gz"], "-C applies to unpack"),
                (["list", "--directory", "d", "a.tar.gz"], "-C applies to unpack"),
            ] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1 && result.out == ""
                        && result.err == "gzstream: \(message)\nTry 'gzstream --help' for more information.\n", "\(arguments): \(result)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.work.path).sorted() == ["a.tar.gz", "src"])
        }
    }

    /// Real archives hold members named `*.gz` (`usr/share/doc/PKG/changelog.gz`). After an
    /// archive such a name is a file to decompress (so that `unpack *.tar.gz` decompresses
    /// every archive); `-C` makes it a member, and the error says so.
    @Test("a member named *.gz: taken as a file without -C, with a hint to give -C; extracted with it")
    func memberNamedGz() throws {
        try withScratch { scratch in
            #expect(try shell("""
                mkdir -p src/usr/share/doc/x && printf 'changes\\n' | gzip -n > src/usr/share/doc/x/changelog.gz \
                && tar --format=gnu --mtime=@1700000000 -C src -cf - usr | gzip -n > p.tar.gz
                """, in: scratch).status == 0)
            let taken = try gzstream(["unpack", "-k", "p.tar.gz", "usr/share/doc/x/changelog.gz"], in: scratch)
            #expect(taken.status == 1 && taken.out == ""
                    && taken.err == "gzstream: usr/share/doc/x/changelog.gz: No such file or directory; after a tar archive, a name "
                    + "with a gzip suffix is a file to decompress: to extract a member so named, give -C "
                    + "(`gzstream unpack -C . p.tar.gz MEMBER...`)\n", "\(taken)")
            let written = try gzstream(["unpack", "-c", "p.tar.gz", "usr/share/doc/x/changelog.gz"], in: scratch)
            #expect(written.status == 1
                    && written.err == "gzstream: usr/share/doc/x/changelog.gz: No such file or directory; after a tar archive, a name "
                    + "with a gzip suffix is a file to decompress: -c cannot write a member so named; "
                    + "`gzstream unpack -C . p.tar.gz MEMBER...` extracts it\n", "\(written.err)")
            #expect(try shell("rm -f p.tar && mkdir out", in: scratch).status == 0)
            let extracted = try gzstream(["unpack", "-C", "out", "p.tar.gz", "usr/share/doc/x/changelog.gz"], in: scratch)
            #expect(extracted.status == 0 && extracted.out == "" && extracted.err.hasSuffix("read members directly)\n"), "\(extracted)")
            #expect(try scratch.read("out/usr/share/doc/x/changelog.gz") == scratch.read("src/usr/share/doc/x/changelog.gz"))
            // A name that is not there and has no gzip suffix is a member: no hint.
            let missing = try gzstream(["unpack", "-C", "out", "p.tar.gz", "usr/share/doc/x/changelog"], in: scratch)
            #expect(missing.status == 1 && missing.errLines.last == "gzstream: p.tar.gz: usr/share/doc/x/changelog: not found in the archive",
                    "\(missing)")
        }
    }
}

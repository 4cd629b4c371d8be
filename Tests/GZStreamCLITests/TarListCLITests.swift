import Foundation
import GzipStreams
import Testing
import TestSupport

/// `gzstream index` of a `.tar.gz` (its member index, FILE.tarix) and `gzstream list --members`,
/// against GNU tar's own listing of the same archive.
@Suite("gzstream list --members and the member index of a .tar.gz", .onDedicatedThreads, .requires(.tar), .requires(.gzip))
struct TarListCLITests {
    /// A tree of files, a long name, links and a directory, archived by GNU tar reproducibly
    /// and compressed by gzip (not by gzstream).
    static let makeArchive = """
        mkdir -p tree/dir/sub && printf 'hello\\n' > tree/a.txt && seq 1 50000 > tree/dir/numbers && : > tree/dir/sub/empty \
        && ln -s ../a.txt tree/dir/link && ln tree/a.txt tree/dir/hard \
        && printf 'x' > tree/$(printf 'l%.0s' $(seq 120)) && chmod 4755 tree/dir/numbers \
        && tar --format=gnu --sort=name --mtime=@1700000000 --owner=0 --group=0 -C tree -cf - a.txt dir \
        $(printf 'l%.0s' $(seq 120)) | gzip -n > a.tar.gz
        """

    @Test("without an index: one pass, tar -t's lines, and a hint to index it")
    func listWithoutIndex() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive, in: scratch).status == 0)
            let listed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            let tar = try shell("tar -tzf a.tar.gz", in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out && !tar.out.isEmpty, "\(listed)")
            #expect(listed.err == "gzstream: a.tar.gz: no member index: read whole; `gzstream index a.tar.gz` makes listing it instant\n")
            let quiet = try gzstream(["list", "--members", "-q", "a.tar.gz"], in: scratch)
            #expect(quiet.status == 0 && quiet.out == tar.out && quiet.err == "")
        }
    }

    @Test("index writes FILE.tarix beside the GZIDX, which stays byte for byte what --no-tar writes; list reads it")
    func indexThenList() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && mkdir other && cp a.tar.gz other/", in: scratch).status == 0)
            let indexed = try gzstream(["index", "-v", "a.tar.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.out == "", "\(indexed)")
            #expect(indexed.errLines.count == 2 && indexed.errLines[1].hasPrefix("gzstream: a.tar.gz: 8 tar members -> a.tar.gz.tarix ("),
                    "\(indexed)")
            let plain = try gzstream(["index", "--no-tar", "other/a.tar.gz"], in: scratch)
            #expect(plain.status == 0 && plain.err == "")
            #expect(try scratch.read("a.tar.gz.gzidx") == scratch.read("other/a.tar.gz.gzidx"))
            #expect(!scratch.exists("other/a.tar.gz.tarix"))
            let mode = try FileManager.default.attributesOfItem(atPath: scratch.path("a.tar.gz.tarix"))[.posixPermissions] as? Int
            let archiveMode = try FileManager.default.attributesOfItem(atPath: scratch.path("a.tar.gz"))[.posixPermissions] as? Int
            #expect(mode == archiveMode.map { $0 & 0o644 })

            let tar = try shell("tar -tzf a.tar.gz", in: scratch)
            let listed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out && listed.err == "", "\(listed)")
            let long = try shell("TZ=UTC \"$0\" list --members -v a.tar.gz", in: scratch)
            let tarLong = try shell("TZ=UTC tar -tvzf a.tar.gz", in: scratch)
            #expect(long.status == 0 && long.out == tarLong.out && long.err == "", "\(long) / \(tarLong)")
            for (patterns, tarArguments) in [(["dir"], "dir"), (["dir/"], "dir"), (["dir/s*"], "--wildcards 'dir/s*'"),
                                             (["a.txt", "dir/sub"], "a.txt dir/sub")] {
                let chosen = try gzstream(["list", "--members", "a.tar.gz"] + patterns, in: scratch)
                let tarChosen = try shell("tar -tzf a.tar.gz \(tarArguments)", in: scratch)
                #expect(chosen.status == 0 && chosen.out == tarChosen.out && chosen.err == "", "\(patterns): \(chosen)")
            }
        }
    }

    /// GNU tar removes trailing `/` from a member's name and from the pattern before matching,
    /// and a pattern also matches a leading directory of a name: `dir/*` lists what `dir/`
    /// holds, not `dir/`; `d?r` lists `dir/` with all it holds.
    @Test("patterns choose what tar -t --wildcards chooses, from one pass and from the index alike, -v too")
    func patternsMatchTar() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive, in: scratch).status == 0)
            let patterns = ["dir/*", "dir/*/", "d?r", "d?r/", "*/", "dir/s*", "*/sub", "di[r]", "dir", "dir/", "dir/sub/",
                            "*numbers", "a.txt", "*.txt"]
            for pass in ["one pass", "index"] {
                if pass == "index" { #expect(try gzstream(["index", "a.tar.gz"], in: scratch).status == 0) }
                for pattern in patterns {
                    let tar = try run(Tool.tar.path!, ["-tzf", "a.tar.gz", "--wildcards", pattern], in: scratch)
                    let chosen = try gzstream(["list", "--members", "-q", "a.tar.gz", pattern], in: scratch)
                    #expect(tar.status == 0 && !tar.out.isEmpty, "\(pattern): \(tar)")
                    #expect(chosen.status == 0 && chosen.out == tar.out && chosen.err == "", "\(pass), \(pattern): \(chosen)")
                }
                // -v's long lines (-q would turn -v off): the same either way, as tar -tv's.
                let long = try shell("TZ=UTC \"$0\" list --members -v a.tar.gz 'dir/*'", in: scratch)
                let tarLong = try shell("TZ=UTC tar -tvzf a.tar.gz --wildcards 'dir/*'", in: scratch)
                let hint = pass == "index" ? "" : "gzstream: a.tar.gz: no member index: read whole; `gzstream index a.tar.gz` makes listing it instant\n"
                #expect(long.status == 0 && long.out == tarLong.out && long.err == hint, "\(pass): \(long) / \(tarLong)")
            }
            // What tar finds nowhere, gzstream neither.
            let missing = try gzstream(["list", "--members", "a.tar.gz", "dir/x*", "x?"], in: scratch)
            #expect(missing.status == 1 && missing.out == "", "\(missing)")
            #expect(missing.err == "gzstream: a.tar.gz: dir/x*: not found in the archive\ngzstream: a.tar.gz: x?: not found in the archive\n")
        }
    }

    @Test("--json: one array of objects, from the index and from one pass alike")
    func json() throws {
        try withScratch { scratch in
            #expect(try shell("""
                mkdir -p tree/d && printf 'hello\\n' > tree/d/f && ln -s f tree/d/s && chmod 640 tree/d/f \
                && tar --format=ustar --sort=name --mtime=@1700000000 --owner=0 --group=0 --numeric-owner -C tree -cf - d | gzip > t.tar.gz
                """, in: scratch).status == 0)
            let expected = """
                [
                {"name": "d/", "type": "directory", "size": 0, "mode": 493, "uid": 0, "gid": 0, "uname": "", "gname": "", \
                "mtime": 1700000000, "link": "", "offset": 0},
                {"name": "d/f", "type": "file", "size": 6, "mode": 416, "uid": 0, "gid": 0, "uname": "", "gname": "", \
                "mtime": 1700000000, "link": "", "offset": 512},
                {"name": "d/s", "type": "symlink", "size": 0, "mode": 511, "uid": 0, "gid": 0, "uname": "", "gname": "", \
                "mtime": 1700000000, "link": "f", "offset": 1536}
                ]

                """
            let streamed = try gzstream(["list", "--members", "--json", "-q", "t.tar.gz"], in: scratch)
            #expect(streamed.status == 0 && streamed.out == expected, "\(streamed)")
            #expect(try gzstream(["index", "t.tar.gz"], in: scratch).status == 0)
            let indexed = try gzstream(["list", "--members", "--json", "t.tar.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.out == expected && indexed.err == "", "\(indexed)")
        }
    }

    @Test("a member index that may not be trusted or was made for another archive is not used, in one line")
    func untrustedIndex() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && tar -C tree -czf b.tar.gz a.txt", in: scratch).status == 0)
            #expect(try gzstream(["index", "a.tar.gz"], in: scratch).status == 0)
            #expect(try gzstream(["index", "b.tar.gz"], in: scratch).status == 0)
            let tar = try shell("tar -tzf a.tar.gz", in: scratch).out
            // Its indexes are there, refused: index needs -f to replace them.
            let hint = "gzstream: a.tar.gz: no member index: read whole; `gzstream index -f a.tar.gz` makes listing it instant\n"
            #expect(chmod(scratch.path("a.tar.gz.tarix"), 0o666) == 0)
            let writable = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(writable.status == 0 && writable.out == tar)
            #expect(writable.err == "gzstream: a.tar.gz.tarix: not used: writable by others (mode 666); "
                + "an index is trusted only when no one else can change it\n" + hint, "\(writable)")
            #expect(chmod(scratch.path("a.tar.gz.tarix"), 0o644) == 0 && chmod(scratch.path("a.tar.gz"), 0o600) == 0)
            let readable = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(readable.status == 0 && readable.out == tar)
            #expect(readable.err == "gzstream: a.tar.gz.tarix: not used: more readable than a.tar.gz (mode 644); "
                + "rebuild it with: gzstream index -f a.tar.gz\n" + hint, "\(readable)")
            #expect(chmod(scratch.path("a.tar.gz"), 0o644) == 0)
            #expect(symlink("b.tar.gz.tarix", scratch.path("a.tar.gz.tarix.link")) == 0)
            #expect(rename(scratch.path("a.tar.gz.tarix.link"), scratch.path("a.tar.gz.tarix")) == 0)
            let linked = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(linked.status == 0 && linked.out == tar)
            #expect(linked.err == "gzstream: a.tar.gz.tarix: not used: a symbolic link (an index beside a file is never followed; "
                + "put the index itself there)\n" + hint, "\(linked)")
            #expect(unlink(scratch.path("a.tar.gz.tarix")) == 0)
            #expect(rename(scratch.path("b.tar.gz.tarix"), scratch.path("a.tar.gz.tarix")) == 0)
            let other = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(other.status == 0 && other.out == tar)
            #expect(other.err == "gzstream: a.tar.gz.tarix: not used: made for another file (its size differs)\n" + hint, "\(other)")
        }
    }

    @Test("patterns that choose nothing, a damaged archive, data that is not a tar")
    func failures() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + """
                 && gzip -dc a.tar.gz | head -c 2000 | gzip > cut.tar.gz && seq 1 1000 | gzip > text.gz
                """, in: scratch).status == 0)
            let missing = try gzstream(["list", "--members", "-q", "a.tar.gz", "nope", "a.txt"], in: scratch)
            #expect(missing.status == 1 && missing.out == "a.txt\n")
            #expect(missing.err == "gzstream: a.tar.gz: nope: not found in the archive\n", "\(missing)")
            let cut = try gzstream(["list", "--members", "-q", "cut.tar.gz"], in: scratch)
            #expect(cut.status == 1 && cut.out == "a.txt\ndir/\n")
            #expect(cut.err == "gzstream: cut.tar.gz: the tar archive ends early, inside the member at byte 1536\n", "\(cut)")
            let indexCut = try gzstream(["index", "cut.tar.gz"], in: scratch)
            #expect(indexCut.status == 2)
            #expect(indexCut.err == "gzstream: cut.tar.gz: no member index: the tar archive ends early, inside the member at byte 1536\n")
            #expect(scratch.exists("cut.tar.gz.gzidx") && !scratch.exists("cut.tar.gz.tarix"))
            let text = try gzstream(["index", "text.gz"], in: scratch)
            #expect(text.status == 0 && text.err == "" && !scratch.exists("text.gz.tarix"))
            let notTar = try gzstream(["list", "--members", "-q", "text.gz"], in: scratch)
            #expect(notTar.status == 1 && notTar.out == "")
            #expect(notTar.err == "gzstream: text.gz: the data is not a tar archive (no tar header at byte 0)\n", "\(notTar)")
            #expect(try scratch.listing().filter { $0.hasPrefix(".gzstream") }.isEmpty)
        }
    }
}

import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The tar commands at the edges of their input: gzip data that is not a tar, and the -C
// destination as the user names it.

@Suite("gzstream's tar commands on input that is not a tar, and their destination", .onDedicatedThreads, .requires(.gzip))
struct TarInputCLITests {
    /// Gzip data whose plain bytes are not a tar: shorter than one 512-byte block, and longer.
    /// Named as tar archives, so that MEMBER names after them are members.
    static let makeNotTar = "printf 'hello\\n' | gzip -n > short.tar.gz && seq 1 1000 | gzip -n > long.tar.gz"

    @Test("list --members, unpack MEMBER, -c and --extract of data that is not a tar: one line, exit 1, nothing written",
          arguments: ["short.tar.gz", "long.tar.gz"])
    func notATarArchive(name: String) throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeNotTar, in: scratch).status == 0)
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let line = "gzstream: \(name): the data is not a tar archive (no tar header at byte 0)\n"
            for arguments in [["list", "--members", name], ["unpack", name, "-C", "out", "a.txt"],
                              ["unpack", "-c", name, "a.txt"], ["unpack", "--extract", name, "-C", "out"]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1 && result.out == "" && result.err == line, "\(arguments): \(result)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).isEmpty)
        }
    }

    @Test("The hint to index names a command that works: none for a plain tar (only gzip data has indexes), -f when a stale index is there",
          .requires(.tar))
    func indexHint() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && gzip -dc a.tar.gz > a.tar", in: scratch).status == 0)
            let plain = try gzstream(["list", "--members", "a.tar"], in: scratch)
            #expect(plain.status == 0 && plain.out == "d/\nd/a.txt\n" && plain.err == "", "\(plain)")
            let fresh = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(fresh.err == "gzstream: a.tar.gz: no member index: read whole; `gzstream index a.tar.gz` makes listing it instant\n",
                    "\(fresh)")
            #expect(try gzstream(["index", "a.tar.gz"], in: scratch).status == 0)
            // The archive rewritten after its indexes: they are stale, and index needs -f.
            #expect(try shell("sleep 1.1 && touch a.tar.gz", in: scratch).status == 0)
            let stale = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(stale.status == 0 && stale.out == "d/\nd/a.txt\n", "\(stale)")
            #expect(stale.errLines.last == "gzstream: a.tar.gz: no member index: read whole; `gzstream index -f a.tar.gz` makes listing it instant",
                    "\(stale)")
            #expect(try gzstream(["index", "-f", "a.tar.gz"], in: scratch).status == 0)
        }
    }

    /// A tar archive of `d/` and `d/a.txt`, made by GNU tar and gzip.
    static let makeArchive = "mkdir -p tree/d && printf 'hello\\n' > tree/d/a.txt "
        + "&& tar --format=gnu --mtime=@1700000000 -C tree -cf - d | gzip -n > a.tar.gz"

    @Test("-C names a symbolic link to a directory: followed, as tar -C; a link inside the destination is not",
          .requires(.tar))
    func destinationThroughALink() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && mkdir real other && ln -s real link", in: scratch).status == 0)
            let result = try gzstream(["unpack", "--extract", "a.tar.gz", "-C", "link"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(try scratch.read("real/d/a.txt") == Array("hello\n".utf8))
            #expect(try shell("rm -r real/d && ln -s ../other real/d", in: scratch).status == 0)
            let inside = try gzstream(["unpack", "a.tar.gz", "-C", "link", "d/a.txt"], in: scratch)
            #expect(inside.status == 1 && inside.err == "gzstream: a.tar.gz: read from the start, without a member index "
                + "(run 'gzstream index a.tar.gz' to read members directly)\n"
                + "gzstream: a.tar.gz: d/a.txt (tar member at byte 512): d on its path is a symbolic link, "
                + "which is not followed; not extracted\n", "\(inside)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("other")).isEmpty)
        }
    }

    @Test("unpack -v of members through the indexes says which indexes it read; without them, nothing more; the names as tar -xv",
          .requires(.tar))
    func verboseThroughTheIndexes() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && mkdir out", in: scratch).status == 0)
            let unindexed = try gzstream(["unpack", "-v", "a.tar.gz", "-C", "out", "d/a.txt"], in: scratch)
            #expect(unindexed.status == 0 && unindexed.out == "d/a.txt\n" && unindexed.err == "gzstream: a.tar.gz: read from the start, "
                + "without a member index (run 'gzstream index a.tar.gz' to read members directly)\n", "\(unindexed)")
            #expect(try gzstream(["index", "a.tar.gz"], in: scratch).status == 0)
            let note = "gzstream: a.tar.gz: members read through a.tar.gz.tarix (2 members) and a.tar.gz.gzidx (1 access point)\n"
            let extracted = try gzstream(["unpack", "-v", "-f", "a.tar.gz", "-C", "out", "d/a.txt"], in: scratch)
            #expect(extracted.status == 0 && extracted.out == "d/a.txt\n" && extracted.err == note, "\(extracted)")
            let written = try gzstream(["unpack", "-v", "-c", "a.tar.gz", "d/a.txt"], in: scratch)
            #expect(written.status == 0 && written.out == "hello\n" && written.err == note + "d/a.txt\n", "\(written)")
            let quiet = try gzstream(["unpack", "-f", "a.tar.gz", "-C", "out", "d/a.txt"], in: scratch)
            #expect(quiet.status == 0 && quiet.out == "" && quiet.err == "", "\(quiet)")
        }
    }
}

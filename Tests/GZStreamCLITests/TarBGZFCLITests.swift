import Foundation
import TarArchives
import Testing
import TestSupport

/// A BGZF `.tar.gz` (GNU tar piped into bgzip): `gzstream index` writes bgzip's `.gzi` and the
/// member index, and `list --members` and `unpack ARCHIVE MEMBER` read through the two; a `.gzi`
/// that is not the archive's is not used.
@Suite("the member index of a BGZF .tar.gz", .onDedicatedThreads, .requires(.tar), .requires(.bgzip))
struct TarBGZFCLITests {
    /// A member far into the archive (after about 2 MB of numbers, 30 BGZF members), so that
    /// reaching it through the `.gzi` skips members.
    static let makeArchive = """
        mkdir -p tree/d && printf 'hello\\n' > tree/a.txt && seq 1 300000 > tree/d/numbers && printf 'last\\n' > tree/z.txt \
        && tar --format=gnu --mtime=@1700000000 --owner=0 --group=0 -C tree -cf - a.txt d z.txt | bgzip -c > b.tar.gz
        """

    /// The entry count a `.gzi` starts with (8 bytes, little-endian, htslib's bgzf.c).
    func entries(of path: String, in scratch: Scratch) throws -> Int {
        try scratch.read(path).prefix(8).reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    @Test("index writes bgzip's .gzi and the member index; list and unpack read members through both")
    func indexListUnpack() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && cp b.tar.gz c.tar.gz && bgzip -r c.tar.gz", in: scratch).status == 0)
            let indexed = try gzstream(["index", "-v", "b.tar.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.errLines.count == 2, "\(indexed)")
            #expect(indexed.errLines.last?.hasPrefix("gzstream: b.tar.gz: 4 tar members -> b.tar.gz.tarix (") == true, "\(indexed)")
            #expect(try scratch.read("b.tar.gz.gzi") == scratch.read("c.tar.gz.gzi"))

            let tar = try shell("tar -tzf b.tar.gz", in: scratch)
            let listed = try gzstream(["list", "--members", "b.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out && !tar.out.isEmpty && listed.err == "", "\(listed)")

            let count = try entries(of: "b.tar.gz.gzi", in: scratch)
            #expect(count > 20)
            let note = "gzstream: b.tar.gz: members read through b.tar.gz.tarix (4 members) and b.tar.gz.gzi (\(count) entries)\n"
            let last = try gzstream(["unpack", "-v", "-c", "b.tar.gz", "z.txt"], in: scratch)
            #expect(last.status == 0 && last.out == "last\n" && last.err == note + "z.txt\n", "\(last)")
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let extracted = try gzstream(["unpack", "-v", "b.tar.gz", "-C", "out", "d"], in: scratch)
            let tarNames = try shell("tar -tzf b.tar.gz d", in: scratch)
            #expect(extracted.status == 0 && extracted.out == tarNames.out && extracted.err == note, "\(extracted)")
            #expect(try scratch.read("out/d/numbers") == scratch.read("tree/d/numbers"))

            // Another BGZF file's .gzi beside it: found not to fit before a member is read, not
            // used (one line), and the member read from the start.
            #expect(try shell("seq 1 400000 | bgzip -c > o.gz && bgzip -r o.gz && cp o.gz.gzi b.tar.gz.gzi", in: scratch).status == 0)
            let foreign = try gzstream(["unpack", "-c", "b.tar.gz", "z.txt"], in: scratch)
            let point = try entries(of: "o.gz.gzi", in: scratch)
            #expect(foreign.status == 0 && foreign.out == "last\n", "\(foreign)")
            #expect(foreign.err == "gzstream: b.tar.gz.gzi: not used: the data does not decode to access point \(point) as the index "
                + "says (the file is damaged, or the index is not its); rebuild it with: gzstream index -f b.tar.gz\n", "\(foreign)")
        }
    }

    @Test("the member index is bound to a BGZF archive's data, not only its size and time (its last bytes are the end-of-file block in every BGZF file)")
    func boundToTheData() throws {
        try withScratch { scratch in
            // Two archives of one size (stored blocks, bgzip -l 0) and one time, other members.
            let made = try shell("""
                mkdir ta tb && printf 'alpha content\\n' > ta/alpha.txt && printf 'bravo content\\n' > tb/bravo.txt \\
                && for x in a b; do tar --format=gnu --mtime=@1700000000 --owner=0 --group=0 -C t$x -cf - . | bgzip -l 0 -c > $x.tar.gz; done \\
                && "$0" index a.tar.gz && cp -p a.tar.gz.tarix b.tar.gz.tarix && touch -r a.tar.gz b.tar.gz
                """, in: scratch)
            try #require(made.status == 0, "\(made)")
            try #require(try scratch.read("a.tar.gz").count == scratch.read("b.tar.gz").count)
            let own = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(own.status == 0 && own.out == "./\n./alpha.txt\n" && own.err == "", "\(own)")
            let foreign = try gzstream(["list", "--members", "b.tar.gz"], in: scratch)
            #expect(foreign.status == 0 && foreign.out == "./\n./bravo.txt\n", "\(foreign)")
            #expect(foreign.err == "gzstream: b.tar.gz.tarix: not used: made for another file (its data differs)\n"
                + "gzstream: b.tar.gz: no member index: read whole; `gzstream index -f b.tar.gz` makes listing it instant\n", "\(foreign)")

            // An older gzstream's member index (format 1, the end-of-file block's zeros as its
            // last bytes): bound by size and time alone, so not used.
            let current = try TarIndex(decoding: scratch.read("a.tar.gz.tarix"), expecting: nil)
            #expect(current.binding.tailIsSampled)
            var weak = current.binding
            weak.compressedTail = [UInt8](repeating: 0, count: 8)
            weak.tailIsSampled = false
            _ = try scratch.write("a.tar.gz.tarix", TarIndex(entries: current.entries, binding: weak).encoded())
            let old = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(old.status == 0 && old.out == own.out, "\(old)")
            #expect(old.err == "gzstream: a.tar.gz.tarix: not used: made by an older gzstream, which bound it to this archive "
                + "by size and time alone (its last 8 bytes are zeros, as in every BGZF file)\n"
                + "gzstream: a.tar.gz: no member index: read whole; `gzstream index -f a.tar.gz` makes listing it instant\n", "\(old)")
        }
    }

    @Test("BGZF data that is not a tar, and --no-tar: the .gzi alone")
    func notATar() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && seq 1 100000 | bgzip -c > v.gz", in: scratch).status == 0)
            let plain = try gzstream(["index", "v.gz"], in: scratch)
            #expect(plain.status == 0 && plain.err == "" && scratch.exists("v.gz.gzi") && !scratch.exists("v.gz.tarix"), "\(plain)")
            let off = try gzstream(["index", "--no-tar", "b.tar.gz"], in: scratch)
            #expect(off.status == 0 && off.err == "" && scratch.exists("b.tar.gz.gzi") && !scratch.exists("b.tar.gz.tarix"), "\(off)")
        }
    }

    @Test("damaged deflate data in a BGZF tar: the .gzi as before (its walk inflates nothing), no member index, a warning")
    func damaged() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeArchive + " && cp b.tar.gz c.tar.gz && bgzip -r c.tar.gz", in: scratch).status == 0)
            var bytes = try scratch.read("b.tar.gz")
            bytes[bytes.count / 2] ^= 0xFF
            try scratch.write("b.tar.gz", bytes)
            let indexed = try gzstream(["index", "b.tar.gz"], in: scratch)
            #expect(indexed.status == 2 && indexed.errLines.count == 1, "\(indexed)")
            #expect(indexed.err.hasPrefix("gzstream: b.tar.gz: no member index: "), "\(indexed)")
            #expect(try scratch.read("b.tar.gz.gzi") == scratch.read("c.tar.gz.gzi") && !scratch.exists("b.tar.gz.tarix"))
            #expect(try scratch.listing().filter { $0.hasPrefix(".gzstream") }.isEmpty)
        }
    }
}

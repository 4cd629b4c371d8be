import Foundation
import Testing
import TestSupport

/// Member names with control characters, DEL, backslashes and UTF-8 (valid, not printable,
/// invalid) as `list --members`, `-v` and `unpack -v` show them: byte for byte what GNU tar
/// 1.34 shows with its default quoting (`--quoting-style=escape`) in a UTF-8 locale.
@Suite("member names quoted as GNU tar quotes them", .onDedicatedThreads, .requires(.tar), .requires(.python3))
struct TarNameQuotingCLITests {
    /// Python's tarfile writes the names as raw bytes (latin-1 maps each byte to itself):
    /// regular files, then a symbolic link and a hard link whose names and targets hold controls.
    static let makeArchive = #"""
        import io, tarfile
        names = [b"a\nb", b"t\tab", b"cr\rx", b"bel\x07x", b"bs\x08x", b"ff\x0cx", b"vt\x0bx", b"back\\slash",
                 b"del\x7fx", b"esc\x1bx", b"one\x01x", b"caf\xc3\xa9", b"euro\xe2\x82\xac", b"smile\xf0\x9f\x98\x80",
                 b"nbsp\xc2\xa0x", b"c1\xc2\x85x", b"lsep\xe2\x80\xa8x", b"unassigned\xcd\xb8x", b"bad\xffbyte",
                 b"overlong\xc0\xafx", b"surrogate\xed\xa0\x80x", b"cut\xe2\x82Ax", b"end\xe2\x82"]
        with tarfile.open("q.tar.gz", "w:gz", format=tarfile.GNU_FORMAT, encoding="latin-1") as archive:
            for name in names:
                info = tarfile.TarInfo(name.decode("latin-1"))
                info.size, info.mtime, info.uname, info.gname = 1, 0, "u", "g"
                archive.addfile(info, io.BytesIO(b"x"))
            link = tarfile.TarInfo("link\nname")
            link.type, link.linkname, link.mtime = tarfile.SYMTYPE, "tar\tget", 0
            archive.addfile(link)
            hard = tarfile.TarInfo("hard\x01")
            hard.type, hard.linkname, hard.mtime = tarfile.LNKTYPE, "a\nb", 0
            archive.addfile(hard)
        """#

    /// `tar -tzf q.tar.gz` in C.UTF-8 (GNU tar 1.34, glibc 2.36).
    static let expectedNames = #"""
        a\nb
        t\tab
        cr\rx
        bel\ax
        bs\bx
        ff\fx
        vt\vx
        back\\slash
        del\177x
        esc\033x
        one\001x
        café
        euro€
        smile😀
        nbsp\#u{A0}x
        c1\302\205x
        lsep\342\200\250x
        unassigned\315\270x
        bad\377byte
        overlong\300\257x
        surrogate\355\240\200x
        cut\342\202Ax
        end\342\202
        link\nname
        hard\001

        """#

    @Test("list --members, -v, one pass and through the member index, and unpack -v: tar's escapes, byte for byte")
    func namesAsTarShowsThem() throws {
        try withScratch { scratch in
            let made = try run(Tool.python3.path!, ["-c", Self.makeArchive], in: scratch)
            #expect(made.status == 0 && made.err == "", "\(made)")
            let tar = try shell("LC_ALL=C.UTF-8 tar -tzf q.tar.gz", in: scratch)
            #expect(tar.status == 0 && tar.out == Self.expectedNames, "\(tar)")
            let tarLong = try shell("LC_ALL=C.UTF-8 TZ=UTC tar -tvzf q.tar.gz", in: scratch)
            #expect(tarLong.status == 0 && tarLong.out.hasSuffix(" link\\nname -> tar\\tget\nhrw-r--r-- 0/0               0 "
                                                                  + "1970-01-01 00:00 hard\\001 link to a\\nb\n"), "\(tarLong)")
            #expect(try shell("mkdir tar-out gz-out", in: scratch).status == 0)
            let tarExtracted = try shell("LC_ALL=C.UTF-8 tar -xvzf q.tar.gz -C tar-out", in: scratch)
            #expect(tarExtracted.status == 0 && tarExtracted.out == Self.expectedNames, "\(tarExtracted)")
            let extracted = try gzstream(["unpack", "-v", "--extract", "q.tar.gz", "-C", "gz-out"], in: scratch)
            #expect(extracted.status == 0 && extracted.out == Self.expectedNames && extracted.err == "", "\(extracted)")
            for pass in ["one pass", "index"] {
                if pass == "index" { #expect(try gzstream(["index", "q.tar.gz"], in: scratch).status == 0) }
                // The quoting does not follow the locale gzstream runs in.
                let listed = try shell("LC_ALL=C \"$0\" list --members -q q.tar.gz", in: scratch)
                #expect(listed.status == 0 && listed.out == Self.expectedNames && listed.err == "", "\(pass): \(listed)")
                let long = try shell("TZ=UTC \"$0\" list --members -v q.tar.gz", in: scratch)
                #expect(long.status == 0 && long.out == tarLong.out, "\(pass): \(long)")
                // --json keeps JSON's escapes.
                let json = try gzstream(["list", "--members", "--json", "-q", "q.tar.gz"], in: scratch)
                #expect(json.status == 0 && json.out.contains("\n{\"name\": \"a\\nb\", \"type\": \"file\", ")
                        && json.out.contains("\n{\"name\": \"back\\\\slash\", ") && !json.out.contains("\\012"), "\(pass): \(json)")
                // unpack -v -c: the name on standard error, after the notes about indexes.
                let member = try gzstream(["unpack", "-v", "-c", "q.tar.gz", "a\nb"], in: scratch)
                #expect(member.status == 0 && member.out == "x" && member.errLines.last == "a\\nb", "\(member)")
            }
        }
    }
}

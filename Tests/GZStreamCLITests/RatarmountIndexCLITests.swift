import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// ratarmount's `F.tar.gz.index.sqlite` beside an archive, as ratarmount itself wrote it
/// (fixtures/ratarmount/, README there): list --members and unpack of members through it,
/// against GNU tar; tampered, truncated, foreign and untrusted copies of it.
@Suite("ratarmount's .index.sqlite beside a .tar.gz", .onDedicatedThreads, .requires(.tar), .requires(.python3))
struct RatarmountIndexCLITests {
    /// The fixture's regular members, each read with -c.
    static let files = ["tree/README", "tree/docs/big.txt",
                        "tree/docs/deeper/" + String(repeating: "a-rather-long-file-name-", count: 5) + "end.txt",
                        "tree/zz-last.txt"]
    static let used = "gzstream: a.tar.gz: members from a.tar.gz.index.sqlite (ratarmount's index, 8 members, "
        + "its gzip index (table gztoolindex) with 3 access points)\n"
    static let listHint = "gzstream: a.tar.gz: no member index: read whole; `gzstream index a.tar.gz` makes listing it instant\n"

    /// The fixture as `a.tar.gz` and `a.tar.gz.index.sqlite` (mode 644, the index not older).
    static func copyFixture(in scratch: Scratch) throws {
        try scratch.copyFixture("ratarmount/ratarmount.tar.gz", as: "a.tar.gz")
        try scratch.copyFixture("ratarmount/ratarmount.tar.gz.index.sqlite", as: "a.tar.gz.index.sqlite")
        #expect(chmod(scratch.path("a.tar.gz"), 0o644) == 0 && chmod(scratch.path("a.tar.gz.index.sqlite"), 0o644) == 0)
        // The archive older than its index, whatever order the copies got their times in.
        setModificationTime(scratch.path("a.tar.gz"), seconds: 1_000_000_000)
    }

    /// Runs the SQL statements `sql` on the index with Python's sqlite3 (its mtime becomes now).
    static func tamper(_ sql: String, in scratch: Scratch, file: String = "a.tar.gz.index.sqlite") throws {
        let done = try shell("python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()' "
            + "\"$1\" \"$2\"", [file, sql], in: scratch)
        try #require(done.status == 0, "\(done)")
    }

    /// Replaces the `gztoolindex` table of `database` with a `gzipindex` holding the GZIDX file
    /// `gzidx` (as ratarmount stores indexed_gzip's export), and removes `gzidx`.
    static func replaceGzipIndex(of database: String, with gzidx: String, in scratch: Scratch) throws {
        let moved = try shell("""
            python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DROP TABLE gztoolindex"); \
            c.execute("CREATE TABLE gzipindex ( data BLOB )"); \
            c.execute("INSERT INTO gzipindex VALUES (?)", (open(sys.argv[2], "rb").read(),)); c.commit()' "$1" "$2" && rm "$2"
            """, [database, gzidx], in: scratch)
        try #require(moved.status == 0, "\(moved)")
    }

    @Test("list --members through it: tar -t's names, and tar -tv's lines with -v")
    func list() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            let tar = try shell("tar -tzf a.tar.gz", in: scratch)
            let listed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out && listed.err == "" && tar.out.split(separator: "\n").count == 8,
                    "\(listed)")
            let long = try shell("TZ=UTC \"$0\" list --members -v a.tar.gz", in: scratch)
            let tarLong = try shell("TZ=UTC tar -tvzf a.tar.gz", in: scratch)
            #expect(long.status == 0 && long.out == tarLong.out && long.err == Self.used, "\(long) / \(tarLong)")
            // Without it, the one pass says so: the lines above came from the index.
            try FileManager.default.removeItem(atPath: scratch.path("a.tar.gz.index.sqlite"))
            let unindexed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(unindexed.out == tar.out && unindexed.err == Self.listHint, "\(unindexed)")
        }
    }

    @Test("unpack -c and unpack MEMBER through it give tar's bytes, links and modes")
    func extract() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            for member in Self.files {
                let ours = try gzstream(["unpack", "-v", "-c", "a.tar.gz", member], in: scratch)
                let tar = try shell("tar -xzOf a.tar.gz \"$1\"", [member], in: scratch)
                #expect(ours.status == 0 && ours.stdout == tar.stdout && !tar.stdout.isEmpty && ours.err == Self.used + member + "\n",
                        "\(member): \(ours)")
            }
            try FileManager.default.createDirectory(atPath: scratch.path("ours"), withIntermediateDirectories: false)
            let unpacked = try gzstream(["unpack", "-C", "ours", "a.tar.gz", "tree/docs", "tree/zz-last.txt"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            let compared = try shell("mkdir ours ref 2>/dev/null; tar -C ref -xzf a.tar.gz tree/docs tree/zz-last.txt "
                + "&& diff -r --no-dereference ours ref && [ \"$(readlink ours/tree/docs/readme-link)\" = ../README ] "
                + "&& [ \"$(stat -c %a ours/tree/docs/big.txt)\" = \"$(stat -c %a ref/tree/docs/big.txt)\" ]", in: scratch)
            #expect(compared.status == 0, "\(compared)")
        }
    }

    @Test("indexed_gzip's flavour: a gzipindex table holding a GZIDX")
    func gzidxBlob() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            let indexed = try gzstream(["index", "--no-tar", "--span", "32K", "a.tar.gz"], in: scratch)
            try #require(indexed.status == 0, "\(indexed)")
            try Self.replaceGzipIndex(of: "a.tar.gz.index.sqlite", with: "a.tar.gz.gzidx", in: scratch)
            let member = Self.files[3]
            let ours = try gzstream(["unpack", "-v", "-c", "a.tar.gz", member], in: scratch)
            let tar = try shell("tar -xzOf a.tar.gz \"$1\"", [member], in: scratch)
            #expect(ours.status == 0 && ours.stdout == tar.stdout, "\(ours)")
            #expect(ours.errLines.count == 2 && ours.errLines.last.map(String.init) == member
                    && ours.err.hasPrefix("gzstream: a.tar.gz: members from a.tar.gz.index.sqlite "
                + "(ratarmount's index, 8 members, its gzip index (table gzipindex) with "), "\(ours)")
        }
    }

    @Test("a gzip index without access points is taken as none: no warning on every run, a GZIDX beside the archive used, one actionable line when members are read from the start")
    func gzipIndexWithoutPoints() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            // indexed_gzip's flavour holding a GZIDX header of this archive and no points.
            let made = try shell("""
                python3 -c 'import gzip, os, sqlite3, struct, sys; c = sqlite3.connect(sys.argv[1]); \
                header = b"GZIDX\\x01\\x00" + struct.pack("<QQIII", os.path.getsize("a.tar.gz"), len(gzip.open("a.tar.gz").read()), 1 << 20, 32768, 0); \
                c.execute("DROP TABLE gztoolindex"); c.execute("CREATE TABLE gzipindex ( data BLOB )"); \
                c.execute("INSERT INTO gzipindex VALUES (?)", (header,)); c.commit()' a.tar.gz.index.sqlite
                """, in: scratch)
            try #require(made.status == 0, "\(made)")
            let used = "gzstream: a.tar.gz: members from a.tar.gz.index.sqlite (ratarmount's index, 8 members, no gzip index)\n"
            let listed = try gzstream(["list", "--members", "-v", "a.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.out.split(separator: "\n").count == 8 && listed.err == used, "\(listed)")
            let member = Self.files[3]
            let expected = try shell("tar -xzOf a.tar.gz \"$1\"", [member], in: scratch)
            let toStdout = try gzstream(["unpack", "-c", "a.tar.gz", member], in: scratch)
            #expect(toStdout.status == 0 && toStdout.stdout == expected.stdout && toStdout.err == "", "\(toStdout)")
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let toFiles = try gzstream(["unpack", "-C", "out", "a.tar.gz", member, Self.files[0]], in: scratch)
            #expect(toFiles.status == 0 && toFiles.err == "gzstream: a.tar.gz: read from the start, without a gzip index to reach "
                + "its members (run 'gzstream index a.tar.gz' to read members directly)\n", "\(toFiles)")
            #expect(try scratch.read("out/" + member) == expected.stdout)
            // A GZIDX beside it (not shadowed by the empty one): the members read through both, silently.
            try #require(try gzstream(["index", "--no-tar", "--span", "32K", "a.tar.gz"], in: scratch).status == 0)
            let indexed = try gzstream(["unpack", "-f", "-C", "out", "a.tar.gz", member, Self.files[0]], in: scratch)
            #expect(indexed.status == 0 && indexed.err == "", "\(indexed)")
            #expect(try scratch.read("out/" + member) == expected.stdout)
        }
    }

    @Test("a record pointing into another member's data (where a tar stored in the tar could hold a header that passes the header check): the index is not used, the member read from the start, tar's bytes")
    func recordInsideData() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            // zz-last.txt's record moved to a block inside big.txt's data.
            try Self.tamper("UPDATE files SET offsetheader = 3072, offset = 3584 WHERE name = 'zz-last.txt'", in: scratch)
            let refused = "gzstream: a.tar.gz.index.sqlite: not used: ratarmount's index: table files: the member at plain "
                + "offset 3072 lies inside the data of the member at 2560\n"
            let toStdout = try gzstream(["unpack", "-c", "a.tar.gz", "tree/zz-last.txt"], in: scratch)
            let tar = try shell("tar -xzOf a.tar.gz tree/zz-last.txt", in: scratch)
            #expect(toStdout.status == 0 && toStdout.stdout == tar.stdout && toStdout.err == refused, "\(toStdout)")
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let toFile = try gzstream(["unpack", "-C", "out", "a.tar.gz", "tree/zz-last.txt"], in: scratch)
            #expect(toFile.status == 0 && toFile.err == refused + "gzstream: a.tar.gz: read from the start, without a member "
                + "index (run 'gzstream index a.tar.gz' to read members directly)\n", "\(toFile)")
            #expect(try scratch.read("out/tree/zz-last.txt") == tar.stdout)
        }
    }

    @Test("a files table with a column computed on every read (a generated VIRTUAL column can cost seconds of CPU a row within every length limit): not used, tar's bytes")
    func computedColumnRefused() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            try Self.tamper("ALTER TABLE files ADD COLUMN bomb TEXT GENERATED ALWAYS AS (hex(zeroblob(1000 + offsetheader % 7))) VIRTUAL",
                            in: scratch)
            let ours = try gzstream(["unpack", "-c", "a.tar.gz", "tree/zz-last.txt"], in: scratch)
            let tar = try shell("tar -xzOf a.tar.gz tree/zz-last.txt", in: scratch)
            #expect(ours.status == 0 && ours.stdout == tar.stdout, "\(ours)")
            #expect(ours.errLines.count == 1 && ours.err.hasPrefix("gzstream: a.tar.gz.index.sqlite: not used: ratarmount's index: table files")
                && ours.err.contains("column bomb is computed on every read"), "\(ours)")
        }
    }

    @Test("an index in WAL mode (its -wal file never opened): read from its own pages, as one in rollback mode")
    func walModeRead() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            try Self.tamper("PRAGMA journal_mode=WAL", in: scratch)
            let header = try scratch.read("a.tar.gz.index.sqlite")
            try #require(header[18] == 2 && header[19] == 2)
            let ours = try gzstream(["unpack", "-v", "-c", "a.tar.gz", "tree/zz-last.txt"], in: scratch)
            let tar = try shell("tar -xzOf a.tar.gz tree/zz-last.txt", in: scratch)
            #expect(ours.status == 0 && ours.stdout == tar.stdout, "\(ours)")
            #expect(ours.err.hasPrefix("gzstream: a.tar.gz: members from a.tar.gz.index.sqlite (ratarmount's index, 8 members"), "\(ours)")
        }
    }

    @Test("another archive's members without tarstats, beside a gzip index of this one: each member's header check refuses them")
    func plantedWithoutBinding() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            // Another archive with the same names, other sizes: b.tar.gz gets a's members, no
            // tarstats, and a gzip index of b.tar.gz itself (else that index's span checks refuse it first).
            let made = try shell("mkdir -p t/tree && printf 'other\\n' > t/tree/zz-last.txt && seq 1 300 > t/tree/README "
                + "&& tar -C t -czf b.tar.gz tree/README tree/zz-last.txt && cp a.tar.gz.index.sqlite b.tar.gz.index.sqlite "
                + "&& \"$0\" index --no-tar b.tar.gz", in: scratch)
            try #require(made.status == 0, "\(made)")
            try Self.tamper("DELETE FROM metadata", in: scratch, file: "b.tar.gz.index.sqlite")
            try Self.replaceGzipIndex(of: "b.tar.gz.index.sqlite", with: "b.tar.gz.gzidx", in: scratch)
            let result = try gzstream(["unpack", "-c", "b.tar.gz", "tree/README"], in: scratch)
            #expect(result.status == 1 && result.out == "" && result.errLines.count == 1
                && result.err == "gzstream: b.tar.gz: the member index does not match the archive: "
                    + "no member's headers start at byte 512 (rebuild it with gzstream index -f)\n",
                "\(result)")
        }
    }

    /// Damaged or foreign indexes: SQL run on the copy, and the reason it is not used.
    static let refusals: [(label: String, sql: String, reason: String)] = [
        ("truncated gzip index blob", "UPDATE gztoolindex SET data = substr(data, 1, 5000)",
         "table gztoolindex: not a valid gztool index: the index ends inside the window of point 1 (at byte 80)"),
        ("another archive size", "UPDATE metadata SET value = json_set(value, '$.st_size', 106337) WHERE key = 'tarstats'",
         "table metadata: made for another file: it records an archive of 106337 bytes, this one has 106336"),
        ("a text offset", "UPDATE files SET offset = 'x' WHERE name = 'README'", "table files, row 2: offset is text, not an integer"),
        ("two members at one offset", "UPDATE files SET offsetheader = 2560, offset = 3072 WHERE name = 'zz-last.txt'",
         "table files, row 5: a second member at header offset 2560"),
        ("a typeflag of two bytes", "UPDATE files SET type = X'3030' WHERE name = 'README'",
         "table files, row 2: type is 2 bytes, not one typeflag"),
        ("a sparse member", "UPDATE files SET issparse = 1 WHERE name = 'big.txt'",
         "table files, row 4: a sparse member, whose sparse map ratarmount does not keep"),
        ("no files table", "ALTER TABLE files RENAME TO other", "no table files: not an index ratarmount wrote"),
    ]

    @Test("a damaged or foreign index is not used: one line, then one pass gives the right bytes",
          arguments: refusals.indices)
    func refused(_ index: Int) throws {
        let (label, sql, reason) = Self.refusals[index]
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            try Self.tamper(sql, in: scratch)
            let line = "gzstream: a.tar.gz.index.sqlite: not used: ratarmount's index: \(reason)\n"
            let tar = try shell("tar -tzf a.tar.gz", in: scratch)
            let listed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out && listed.err == line + Self.listHint, "\(label): \(listed)")
            let member = try gzstream(["unpack", "-c", "-q", "a.tar.gz", "tree/zz-last.txt"], in: scratch)
            let expected = try shell("tar -xzOf a.tar.gz tree/zz-last.txt", in: scratch)
            #expect(member.status == 0 && member.stdout == expected.stdout && member.err == "", "\(label): \(member)")
        }
    }

    @Test("a file that is not SQLite, or cut short, is not used")
    func notADatabase() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            let whole = try scratch.read("a.tar.gz.index.sqlite")
            for (bytes, reason) in [(Array("not a database at all, but long enough to be read".utf8),
                                     "table sqlite_schema: file is not a database"),
                                    (Array(whole.prefix(30000)), "table sqlite_schema: database disk image is malformed")] {
                try scratch.write("a.tar.gz.index.sqlite", bytes)
                let listed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
                #expect(listed.status == 0 && listed.err == "gzstream: a.tar.gz.index.sqlite: not used: ratarmount's index: "
                    + "\(reason)\n" + Self.listHint, "\(listed)")
            }
        }
    }

    @Test("the side-file trust rules: writable by others, more readable than the archive, a symbolic link")
    func untrusted() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            let prefix = "gzstream: a.tar.gz.index.sqlite: not used: "
            #expect(chmod(scratch.path("a.tar.gz.index.sqlite"), 0o666) == 0)
            let writable = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(writable.status == 0 && writable.err == prefix + "writable by others (mode 666); "
                + "an index is trusted only when no one else can change it\n" + Self.listHint, "\(writable)")
            #expect(chmod(scratch.path("a.tar.gz.index.sqlite"), 0o644) == 0 && chmod(scratch.path("a.tar.gz"), 0o600) == 0)
            let readable = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(readable.status == 0 && readable.err == prefix + "more readable than a.tar.gz (mode 644)\n" + Self.listHint,
                    "\(readable)")
            #expect(chmod(scratch.path("a.tar.gz"), 0o644) == 0)
            #expect(rename(scratch.path("a.tar.gz.index.sqlite"), scratch.path("elsewhere.sqlite")) == 0)
            #expect(symlink("elsewhere.sqlite", scratch.path("a.tar.gz.index.sqlite")) == 0)
            let linked = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(linked.status == 0 && linked.err == prefix + "a symbolic link (an index beside a file is never followed; "
                + "put the index itself there)\n" + Self.listHint, "\(linked)")
        }
    }

    @Test("in a directory other users can write: not used, and the line says what can be done (--index takes no member index)")
    func hostileDirectory() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("pub"), withIntermediateDirectories: false)
            try scratch.copyFixture("ratarmount/ratarmount.tar.gz", as: "pub/a.tar.gz")
            try scratch.copyFixture("ratarmount/ratarmount.tar.gz.index.sqlite", as: "pub/a.tar.gz.index.sqlite")
            #expect(chmod(scratch.path("pub/a.tar.gz"), 0o644) == 0 && chmod(scratch.path("pub/a.tar.gz.index.sqlite"), 0o644) == 0)
            setModificationTime(scratch.path("pub/a.tar.gz"), seconds: 1_000_000_000)
            #expect(chmod(scratch.path("pub"), 0o1777) == 0)
            let tar = try shell("tar -tzf pub/a.tar.gz", in: scratch)
            let listed = try gzstream(["list", "--members", "pub/a.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out, "\(listed)")
            #expect(listed.err == "gzstream: pub/a.tar.gz.index.sqlite: not used: its directory is writable by other users "
                + "(mode 1777); move the archive and its index to a directory only you can write to use it\n"
                + "gzstream: pub/a.tar.gz: no member index: read whole; `gzstream index pub/a.tar.gz` makes listing it instant\n",
                "\(listed)")
            #expect(chmod(scratch.path("pub"), 0o755) == 0)
        }
    }

    @Test("owned by another user: not used", .asRoot, .requires(.setpriv))
    func otherOwner() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            #expect(chown(scratch.path("a.tar.gz.index.sqlite"), 65534, 65534) == 0)
            let listed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.err == "gzstream: a.tar.gz.index.sqlite: not used: owned by uid 65534, "
                + "another user (an index is trusted only from you or root)\n" + Self.listHint, "\(listed)")
        }
    }

    @Test("the parent folders ratarmount adds (one level up, as 1.3.0 writes them for an archive without them) are not members; a nested archive's are refused")
    func parentFolders() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            // As ratarmount 1.3.0 wrote for /work/tarbench/big.tar.gz, whose first member is usr/share/.
            try Self.tamper("INSERT INTO files VALUES ('', 'usr', 0, 512, 0, 0.0, 16877, X'35', '', 0, 0, 0, 0, 0, 0)", in: scratch)
            let tar = try shell("tar -tzf a.tar.gz", in: scratch)
            let listed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out && listed.err == "", "\(listed)")
            try Self.tamper("UPDATE files SET recursiondepth = 2 WHERE name = 'README'", in: scratch)
            let nested = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            #expect(nested.status == 0 && nested.out == tar.out && nested.err == "gzstream: a.tar.gz.index.sqlite: not used: "
                + "ratarmount's index: table files, row 3: a member of an archive inside the archive (ratarmount --recursive), "
                + "which gzstream does not read\n" + Self.listHint, "\(nested)")
        }
    }

    @Test("gzstream's own member index, when there, is used instead")
    func ownIndexFirst() throws {
        try withScratch { scratch in
            try Self.copyFixture(in: scratch)
            #expect(try gzstream(["index", "a.tar.gz"], in: scratch).status == 0)
            try Self.tamper("UPDATE files SET offset = 'x'", in: scratch)
            let listed = try gzstream(["list", "--members", "a.tar.gz"], in: scratch)
            let tar = try shell("tar -tzf a.tar.gz", in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out && listed.err == "", "\(listed)")
        }
    }
}

import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The command line, continued: pack and unpack of files.

extension CLITests {
    // MARK: pack and unpack of files

    @Test("pack FILE writes FILE.gz with the input's permissions and times, FNAME and MTIME; keeps FILE", .requires(.gzip))
    func packFile() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 50_000)
            let input = try scratch.write("notes.txt", text)
            _ = chmod(input, 0o640)
            setModificationTime(input, seconds: 1_600_000_000, nanoseconds: 123_456_789)
            let result = try gzstream(["pack", "notes.txt"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["notes.txt", "notes.txt.gz"])
            #expect(try scratch.read("notes.txt") == text)
            let status = try #require(fileStatus(scratch.path("notes.txt.gz")))
            #expect(status.permissions == 0o640)
            #expect(status.modificationSeconds == 1_600_000_000)
            #expect(status.modificationNanoseconds == 123_456_789)
            let packed = try scratch.read("notes.txt.gz")
            #expect(headerFields(packed) == HeaderFields(flags: 0x08, modificationTime: 1_600_000_000, fileName: "notes.txt"))
            #expect(try gunzip(scratch.path("notes.txt.gz"), in: scratch) == text)
            // GNU gzip reads the same name and time from the header.
            let listing = try run("/usr/bin/gzip", ["-lvN", "notes.txt.gz"], in: scratch)
            #expect(listing.status == 0)
            #expect(listing.out.contains(" 50000 ") && listing.out.hasSuffix(" notes.txt\n"), "\(listing)")
        }
    }

    @Test("pack -n stores neither name nor MTIME", .requires(.gzip), arguments: [["-n"], ["--no-name"]])
    func packNoName(flag: [String]) throws {
        try withScratch { scratch in
            let input = try scratch.write("a.txt", "hello\n")
            setModificationTime(input, seconds: 1_600_000_000)
            let result = try gzstream(["pack"] + flag + ["a.txt"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            let packed = try scratch.read("a.txt.gz")
            #expect(headerFields(packed) == HeaderFields(flags: 0, modificationTime: 0, fileName: nil))
            #expect(try gunzip(scratch.path("a.txt.gz"), in: scratch) == Array("hello\n".utf8))
        }
    }

    @Test("unpack FILE.gz writes FILE with the .gz's permissions and times; keeps FILE.gz", .requires(.gzip))
    func unpackFile() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 30_000)
            try scratch.write("b.txt", text)
            #expect(try run("/usr/bin/gzip", ["b.txt"], in: scratch).status == 0)
            _ = chmod(scratch.path("b.txt.gz"), 0o604)
            setModificationTime(scratch.path("b.txt.gz"), seconds: 1_500_000_000, nanoseconds: 5)
            let result = try gzstream(["unpack", "b.txt.gz"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["b.txt", "b.txt.gz"])
            #expect(try scratch.read("b.txt") == text)
            let status = try #require(fileStatus(scratch.path("b.txt")))
            #expect(status.permissions == 0o604)
            #expect(status.modificationSeconds == 1_500_000_000 && status.modificationNanoseconds == 5)
        }
    }

    @Test("unpack maps suffixes: .gz → none, .tgz → .tar, -gz, .z, _z", .requires(.gzip), arguments: [
        ("x.gz", "x"), ("backup.tgz", "backup.tar"), ("y-gz", "y"), ("w.z", "w"), ("v_z", "v"),
    ])
    func unpackSuffixes(input: String, output: String) throws {
        try withScratch { scratch in
            try scratch.write("source", "suffix\n")
            #expect(try run("/usr/bin/gzip", ["-c", "source"], in: scratch, stdoutPath: scratch.path(input)).status == 0)
            let result = try gzstream(["unpack", input], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try scratch.read(output) == Array("suffix\n".utf8))
        }
    }

    @Test("unpack of an unknown suffix: warning, exit 2, nothing written; -q silences it")
    func unknownSuffix() throws {
        try withScratch { scratch in
            try scratch.write("notes.txt", "plain\n")
            let loud = try gzstream(["unpack", "notes.txt"], in: scratch)
            #expect(loud.status == 2)
            #expect(loud.err == "gzstream: notes.txt: unknown suffix -- ignored\n")
            let quiet = try gzstream(["unpack", "-q", "notes.txt"], in: scratch)
            #expect(quiet.status == 2)
            #expect(quiet.err == "")
            #expect(try scratch.listing() == ["notes.txt"])
            // An error outranks a warning.
            let both = try gzstream(["unpack", "notes.txt", "missing.gz"], in: scratch)
            #expect(both.status == 1)
            #expect(both.err == "gzstream: notes.txt: unknown suffix -- ignored\n"
                + "gzstream: missing.gz: No such file or directory\n")
        }
    }

    @Test("pack of a .gz or .tgz file: warning, exit 2, nothing written", arguments: [".gz", ".tgz"])
    func packAlreadyCompressed(suffix: String) throws {
        try withScratch { scratch in
            try scratch.write("x" + suffix, "data\n")
            let result = try gzstream(["pack", "x" + suffix], in: scratch)
            #expect(result.status == 2)
            #expect(result.out == "")
            #expect(result.err == "gzstream: x\(suffix): already has \(suffix) suffix -- unchanged\n")
            #expect(try scratch.listing() == ["x" + suffix])
        }
    }

    /// Packs `original.txt` (MTIME 1234567890) and renames the result `renamed.gz`.
    private func makeRenamedMember(in scratch: Scratch) throws {
        let input = try scratch.write("original.txt", "named\n")
        setModificationTime(input, seconds: 1_234_567_890)
        #expect(try gzstream(["pack", "original.txt"], in: scratch).status == 0)
        try FileManager.default.removeItem(atPath: input)
        try FileManager.default.moveItem(atPath: scratch.path("original.txt.gz"), toPath: scratch.path("renamed.gz"))
        setModificationTime(scratch.path("renamed.gz"), seconds: 1_700_000_000)
    }

    @Test("unpack -N restores the stored name and MTIME")
    func unpackRestoresName() throws {
        try withScratch { scratch in
            try makeRenamedMember(in: scratch)
            let named = try gzstream(["unpack", "-N", "renamed.gz"], in: scratch)
            #expect(named.status == 0 && named.err == "" && named.out == "", "\(named)")
            #expect(try scratch.listing() == ["original.txt", "renamed.gz"])
            #expect(try scratch.read("original.txt") == Array("named\n".utf8))
            #expect(fileStatus(scratch.path("original.txt"))?.modificationSeconds == 1_234_567_890)

            // The stored name is taken: kept without -f, replaced with it.
            try scratch.write("original.txt", "in the way\n")
            let refused = try gzstream(["unpack", "-N", "renamed.gz"], in: scratch)
            #expect(refused.status == 1)
            #expect(refused.err == "gzstream: original.txt: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.read("original.txt") == Array("in the way\n".utf8))
            #expect(try scratch.listing() == ["original.txt", "renamed.gz"])
            let forced = try gzstream(["unpack", "-N", "-f", "renamed.gz"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(try scratch.read("original.txt") == Array("named\n".utf8))
        }
    }

    @Test("unpack without -N uses the .gz's name and time")
    func unpackIgnoresNameByDefault() throws {
        try withScratch { scratch in
            try makeRenamedMember(in: scratch)
            let plain = try gzstream(["unpack", "renamed.gz"], in: scratch)
            #expect(plain.status == 0 && plain.err == "", "\(plain)")
            #expect(try scratch.listing() == ["renamed", "renamed.gz"])
            #expect(fileStatus(scratch.path("renamed"))?.modificationSeconds == 1_700_000_000)
        }
    }

    /// GNU gzip: `gzip -dN renamed.gz` writes `original.txt` even when a file `renamed` exists.
    @Test("unpack -N is not blocked by a file at the name it does not use")
    func unpackNameIgnoresDefaultOutput() throws {
        try withScratch { scratch in
            try makeRenamedMember(in: scratch)
            try scratch.write("renamed", "unrelated\n")
            let named = try gzstream(["unpack", "-N", "renamed.gz"], in: scratch)
            #expect(named.status == 0 && named.err == "", "\(named)")
            #expect(try scratch.listing() == ["original.txt", "renamed", "renamed.gz"])
            #expect(try scratch.read("renamed") == Array("unrelated\n".utf8))
        }
    }

    @Test("unpack -N never writes outside the output's directory")
    func unpackNameStaysInDirectory() throws {
        try withScratch { scratch in
            // A header whose FNAME is "../escape.txt" (made by hand: header, stored block, trailer).
            let payload = Array("x".utf8)
            var bytes: [UInt8] = [0x1F, 0x8B, 8, 0x08, 0, 0, 0, 0, 0, 3] + Array("../escape.txt".utf8) + [0]
            bytes += [0x01, 0x01, 0x00, 0xFE, 0xFF] + payload
            bytes += [0x83, 0x16, 0xDC, 0x8C, 1, 0, 0, 0] // CRC-32 of "x" (8cdc1683), ISIZE 1
            try FileManager.default.createDirectory(atPath: scratch.path("inner"), withIntermediateDirectories: false)
            try scratch.write("inner/evil.gz", bytes)
            let result = try gzstream(["unpack", "-N", "inner/evil.gz"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["inner"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("inner")).sorted()
                == ["escape.txt", "evil.gz"])
        }
    }
}

import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Debian's `nobody` and `nogroup`: another user, whose files root indexes.
private let nobody: (uid: uid_t, gid: gid_t) = (65534, 65534)

/// The owner and permission bits of `path` (not followed if it is a link).
private func ownerAndMode(_ path: String) -> (uid: uid_t, gid: gid_t, mode: mode_t)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return (info.st_uid, info.st_gid, info.st_mode & 0o7777)
}

@Suite("What writes an index: its mode and owner, links, trailing garbage, stale indexes", .onDedicatedThreads)
struct IndexWriterCLITests {
    static let plain = sampleText(byteCount: 200_000, seed: 52)

    /// How each command writes an index of `data` (or `data.gz`), and the index's name.
    static let writers: [(label: String, arguments: [String], input: String, index: String)] = [
        ("index (GZIDX)", ["index"], "data.gz", "data.gz.gzidx"),
        ("index (BGZF .gzi)", ["index"], "data.bgz", "data.bgz.gzi"),
        ("pack --index", ["pack", "--index"], "data", "data.gz.gzidx"),
        ("pack --bgzf --index", ["pack", "--bgzf", "--index"], "data", "data.gz.gzi"),
    ]

    /// Writes the input `name` of a writer: the plain data, gzip's or BGZF.
    private func writeInput(_ name: String, in scratch: Scratch) throws {
        switch name {
        case "data.gz":
            try scratch.write(name, try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout)
        case "data.bgz":
            try scratch.write(name, try gzstream(["pack", "-c", "--bgzf"], in: scratch, input: .bytes(Self.plain)).stdout)
        default:
            try scratch.write(name, Self.plain)
        }
    }

    @Test("An index is never more readable than its input: its read and owner-write bits, never group- or other-writable", arguments: writers.map(\.label), [0o600, 0o640, 0o775, 0o444] as [mode_t])
    func indexMode(label: String, inputMode: mode_t) throws {
        let writer = Self.writers.first { $0.label == label }!
        try withScratch { scratch in
            try writeInput(writer.input, in: scratch)
            #expect(chmod(scratch.path(writer.input), inputMode) == 0)
            let result = try gzstream(writer.arguments + [writer.input], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(ownerAndMode(scratch.path(writer.index))?.mode == inputMode & 0o644, "\(label), input \(String(inputMode, radix: 8))")
        }
    }

    @Test("Run by root, an index gets the input's owner and group, set on its descriptor", .asRoot,
          arguments: writers.map(\.label))
    func indexOwner(label: String) throws {
        let writer = Self.writers.first { $0.label == label }!
        try withScratch { scratch in
            try writeInput(writer.input, in: scratch)
            let input = scratch.path(writer.input)
            #expect(chmod(input, 0o640) == 0 && chown(input, nobody.uid, nobody.gid) == 0)
            let result = try gzstream(writer.arguments + [writer.input], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            let index = ownerAndMode(scratch.path(writer.index))
            #expect(index?.uid == nobody.uid && index?.gid == nobody.gid && index?.mode == 0o640, "\(label): \(String(describing: index))")
        }
    }

    @Test("index follows a symbolic link named as FILE only with -f, as unpack does")
    func indexLink() throws {
        try withScratch { scratch in
            try writeInput("data.gz", in: scratch)
            #expect(symlink("data.gz", scratch.path("planted.gz")) == 0)
            let refused = try gzstream(["index", "planted.gz"], in: scratch)
            let unpacked = try gzstream(["unpack", "planted.gz"], in: scratch)
            #expect(refused.status == 1 && refused.out == "")
            #expect(refused.err == "gzstream: planted.gz: is a symbolic link (use -f to follow it)\n", "\(refused)")
            #expect(refused.err == unpacked.err && refused.status == unpacked.status)
            #expect(try scratch.listing() == ["data.gz", "planted.gz"])
            let forced = try gzstream(["index", "-f", "planted.gz"], in: scratch)
            #expect(forced.status == 0 && forced.out == "" && forced.err == "", "\(forced)")
            #expect(try scratch.listing() == ["data.gz", "planted.gz", "planted.gz.gzidx"])
            let range = try gzstream(["unpack", "-c", "-f", "--offset", "1000", "--length", "300", "planted.gz"], in: scratch)
            #expect(range.status == 0 && range.stdout == Array(Self.plain[1000..<1300]), "\(range)")
        }
    }

    /// What follows the members, and the status `index` and `test` end with.
    static let trailers: [String: (bytes: [UInt8], status: Int32)] = [
        "garbage": (Array("trailing garbage\n".utf8), 2),
        "zeros": ([UInt8](repeating: 0, count: 1000), 0),
        "zeros then garbage": ([UInt8](repeating: 0, count: 10) + [7, 7], 2),
    ]

    @Test("index of a file with trailing garbage indexes its members and warns as test does; the index reads back",
          arguments: ["garbage", "zeros", "zeros then garbage"])
    func trailingData(label: String) throws {
        let (trailer, status) = Self.trailers[label]!
        try withScratch { scratch in
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout
            let file = packed + packed + trailer
            try scratch.write("data.gz", file)
            let result = try gzstream(["index", "--span", "32K", "data.gz"], in: scratch)
            let tested = try gzstream(["test", "data.gz"], in: scratch)
            #expect(result.status == status && result.out == "", "\(label): \(result)")
            #expect(result.err == tested.err && result.status == tested.status, "\(label): \(result) / \(tested)")
            #expect(result.err == (status == 2 ? "gzstream: data.gz: decompression OK, trailing garbage ignored\n" : ""))
            let index = try GzipIndex(gzidx: try scratch.read("data.gz.gzidx"))
            #expect(index.compressedSize == UInt64(file.count) && index.plainSize == UInt64(2 * Self.plain.count))
            #expect(index.points.count >= 2)
            let doubled = Self.plain + Self.plain
            let range = try gzstream(["unpack", "-c", "--offset", "210000", "--length", "100000", "data.gz"], in: scratch)
            #expect(range.status == 0 && range.err == "" && range.stdout == Array(doubled[210_000..<310_000]), "\(range)")
            let whole = try gzstream(["unpack", "-c", "data.gz"], in: scratch)
            #expect(whole.status == status && whole.stdout == doubled && whole.err == result.err, "\(whole)")
        }
    }

    @Test("A command that replaces F.gz removes the indexes of the old one (all three tools'), not the one it writes", arguments: [
        (["pack", "-f", "data"], ["data", "data.gz"]),
        (["-f", "-k", "data"], ["data", "data.gz"]),
        (["pack", "-f", "--index", "data"], ["data", "data.gz", "data.gz.gzidx"]),
        (["pack", "-f", "--bgzf", "--index", "data"], ["data", "data.gz", "data.gz.gzi"]),
        (["pack", "-f", "-o", "data.gz", "data"], ["data", "data.gz"]),
    ])
    func staleRemoved(arguments: [String], listing: [String]) throws {
        try withScratch { scratch in
            try scratch.write("data", Self.plain)
            try scratch.write("data.gz", Array("an older data.gz".utf8))
            for index in ["data.gz.gzidx", "data.gz.gzi"] { try scratch.write(index, Array("stale".utf8)) }
            // Under gztool's name only a file with gztool's magic is taken for an index.
            try scratch.write("data.gzi", [UInt8](repeating: 0, count: 8) + Array("gzipindxstale".utf8))
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(arguments): \(result)")
            #expect(try scratch.listing() == listing, "\(arguments)")
            for index in ["data.gz.gzidx", "data.gz.gzi"] where scratch.exists(index) {
                #expect(try scratch.read(index) != Array("stale".utf8), "\(index) is the new index")
            }
        }
    }

    @Test("unpack to a name that is a gzip file's removes that file's stale indexes, never the input's own")
    func staleAfterUnpack() throws {
        try withScratch { scratch in
            let inner = try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout
            try scratch.write("x.gz.gz", try gzstream(["pack", "-c"], in: scratch, input: .bytes(inner)).stdout)
            try scratch.write("tar.gz", inner)
            // x.gz.gzi is gztool's name for the index of x.gz.gz; tar.gzi for tar.gz's.
            for index in ["x.gz.gzidx", "x.gz.gzi", "tar.gzi"] { try scratch.write(index, Array("stale".utf8)) }
            try scratch.write("x.gzi", [UInt8](repeating: 0, count: 8) + Array("gzipindxstale".utf8))
            let result = try gzstream(["unpack", "-k", "x.gz.gz"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            let plain = try gzstream(["unpack", "-k", "tar.gz"], in: scratch)
            #expect(plain.status == 0 && plain.err == "", "\(plain)")
            #expect(try scratch.listing() == ["tar", "tar.gz", "tar.gzi", "x.gz", "x.gz.gz", "x.gz.gzi"])
        }
    }

    @Test("A stale index that is a symbolic link is neither followed nor removed, silently (no reader follows it)")
    func staleLink() throws {
        try withScratch { scratch in
            try scratch.write("data", Self.plain)
            try scratch.write("target", Array("kept".utf8))
            #expect(symlink("target", scratch.path("data.gz.gzidx")) == 0)
            let result = try gzstream(["pack", "data"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(try scratch.read("target") == Array("kept".utf8))
            #expect(try scratch.listing() == ["data", "data.gz", "data.gz.gzidx", "target"])
        }
    }

    @Test("Run by root, another user's planted file under an index name is left silently (exit 0, as gzip); root's index is removed, a .gzi without gztool's magic is not",
          .asRoot)
    func staleOtherUser() throws {
        try withScratch { scratch in
            try scratch.write("data", Self.plain)
            try scratch.write("data.gz.gzidx", Array("theirs".utf8))
            #expect(chown(scratch.path("data.gz.gzidx"), nobody.uid, nobody.gid) == 0)
            try scratch.write("data.gz.gzi", Array("root's".utf8))
            try scratch.write("data.gzi", Array("a file of the user's, not an index".utf8))
            let result = try gzstream(["pack", "data"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["data", "data.gz", "data.gz.gzidx", "data.gzi"])
            let gzipMode = try gzstream(["-f", "-k", "data"], in: scratch)
            #expect(gzipMode.status == 0 && gzipMode.err == "", "\(gzipMode)")
        }
    }

    @Test("Messages about an index that is not the file's say how to rebuild it")
    func staleMessages() throws {
        try withScratch { scratch in
            // The same data at two levels: members of other sizes, so the other's entries miss.
            try scratch.write("data.bgz", try gzstream(["pack", "-c", "--bgzf", "-9"], in: scratch, input: .bytes(Self.plain)).stdout)
            try scratch.write("other.bgz", try gzstream(["pack", "-c", "--bgzf", "-1"], in: scratch, input: .bytes(Self.plain)).stdout)
            #expect(try gzstream(["index", "other.bgz"], in: scratch).status == 0)
            let bgzf = try gzstream(["unpack", "-c", "--index", "other.bgz.gzi", "--offset", "150000", "data.bgz"], in: scratch)
            #expect(bgzf.status == 1 && bgzf.err.hasSuffix("; rebuild it with: gzstream index -f -o other.bgz.gzi data.bgz\n") && bgzf.errLines.count == 1, "\(bgzf)")
            // A GZIDX index of another file, named: the remedy names the index and the file.
            try scratch.write("data.gz", try gzstream(["pack", "-c"], in: scratch, input: .bytes(Self.plain)).stdout)
            try scratch.write("small.gz", try gzstream(["pack", "-c"], in: scratch, input: .bytes(Array(Self.plain.prefix(1000)))).stdout)
            #expect(try gzstream(["index", "small.gz"], in: scratch).status == 0)
            let gzidx = try gzstream(["unpack", "-c", "--index", "small.gz.gzidx", "--offset", "10", "data.gz"], in: scratch)
            #expect(gzidx.status == 1 && gzidx.err.hasSuffix("; rebuild it with: gzstream index -f -o small.gz.gzidx data.gz\n"),
                    "\(gzidx)")
        }
    }
}

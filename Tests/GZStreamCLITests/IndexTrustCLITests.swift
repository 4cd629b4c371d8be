import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// An index is data from whoever owns it: a planted, stale, damaged or junk index beside a good
// gzip file never changes a byte of output and never makes a good decode fail. Root is the
// victim; `nobody` plants files in a directory both can write.

@Suite("Index trust: planted, stale, damaged and junk indexes", .onDedicatedThreads, .requires(.gzip))
struct IndexTrustCLITests {
    static let data = sampleBytes(count: 1_200_000, seed: 77)

    /// `name` (gzip -6 of `data`) in `directory` of the scratch, and gzstream's index of it
    /// (points every 64 KiB).
    static func makeIndexed(_ name: String, in scratch: Scratch, data: [UInt8] = data) throws {
        try scratch.write(name + ".plain", data)
        let made = try shell("gzip -6 -c < \"$1\" > \"$2\" && rm \"$1\"", [name + ".plain", name], in: scratch)
        try #require(made.status == 0, "\(made)")
        let indexed = try gzstream(["index", "--span", "64K", name], in: scratch)
        try #require(indexed.status == 0 && indexed.err == "", "\(indexed)")
    }

    /// `name`: `data` in one gzip member of stored deflate blocks (Python's level 0), whose size
    /// does not depend on the bytes.
    static func storedGzip(_ name: String, of data: [UInt8], in scratch: Scratch) throws {
        let python = try #require(PythonOracle.path)
        let store = "import sys, gzip; open(sys.argv[2], 'wb').write(gzip.compress(open(sys.argv[1], 'rb').read(), 0, mtime=0))"
        try scratch.write(name + ".plain", data)
        try #require(try run(python, ["-c", store, scratch.path(name + ".plain"), scratch.path(name)], in: scratch).status == 0)
    }

    /// The plain offset of access point `point` of the GZIDX file at `path`.
    static func pointOffset(_ point: Int, of path: String) throws -> Int {
        Int(try GzipIndex(gzidx: try readBytes(path)).points[point].plainOffset)
    }

    /// The index at `path` with every window's bytes replaced by `text` (an attacker's),
    /// its seal recomputed away: another tool's index, valid in form.
    static func forgedWindows(of path: String, text: UInt8) throws -> [UInt8] {
        var index = try GzipIndex(gzidx: try readBytes(path))
        index.compressedTail = nil
        for point in index.points.indices where index.points[point].window != nil {
            index.points[point].window = [UInt8](repeating: text, count: 32768)
        }
        return index.gzidxEncoded()
    }

    @Test("Junk beside a good file: unpack, test and gzip mode decode it; gzip mode says nothing",
          arguments: ["empty", "directory", "fifo", "truncated", "gztool-truncated", "garbage"])
    func junkBeside(kind: String) throws {
        try withScratch { scratch in
            try Self.makeIndexed("data.gz", in: scratch)
            let index = try scratch.read("data.gz.gzidx")
            try FileManager.default.removeItem(atPath: scratch.path("data.gz.gzidx"))
            var name = "data.gz.gzidx"
            switch kind {
            case "empty": try scratch.write(name, [])
            case "directory": try FileManager.default.createDirectory(atPath: scratch.path(name), withIntermediateDirectories: false)
            case "fifo": #expect(mkfifo(scratch.path(name), 0o644) == 0)
            case "truncated": try scratch.write(name, Array(index.prefix(index.count / 2)))
            case "gztool-truncated":
                name = "data.gzi"
                try scratch.write(name, [UInt8](repeating: 0, count: 8) + Array("gzipindx".utf8) + [0, 0, 0])
            default: try scratch.write(name, Array("not an index at all\n".utf8))
            }
            // The index beside the file is not older than it.
            setModificationTime(scratch.path("data.gz"), seconds: 1_000_000_000)
            for arguments in [["unpack", "-c", "data.gz"], ["-dc", "data.gz"], ["unpack", "-c", "--offset", "700000", "data.gz"]] {
                let result = try gzstream(arguments, in: scratch)
                let expected = arguments.contains("--offset") ? Array(Self.data[700_000...]) : Self.data
                #expect(result.status == 0 && result.stdout == expected, "\(kind) \(arguments): \(result.status) \(result.err)")
                if arguments[0] == "-dc" {
                    #expect(result.err == "", "gzip mode says nothing of a file beside the input: \(result.err)")
                } else {
                    #expect(result.errLines.count == 1 && result.err.hasPrefix("gzstream: \(name): not used: "), "\(kind): \(result.err)")
                }
            }
            for arguments in [["test", "data.gz"], ["-t", "data.gz"], ["test", "-q", "data.gz"]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 0 && result.out == "", "\(kind) \(arguments): \(result)")
                if arguments[0] != "test" || arguments.contains("-q") { #expect(result.err == "", "\(kind) \(arguments)") }
            }
            // Named with --index, the same file is an error, and nothing is written.
            if kind != "gztool-truncated" {
                let named = try gzstream(["unpack", "--index", name, "-o", "out", "data.gz"], in: scratch)
                #expect(named.status == 1 && named.errLines.count == 1 && !scratch.exists("out"), "\(kind): \(named)")
            }
        }
    }

    @Test("A planted index (another user's, or one others can write, or in a directory others can write) is not used",
          .asRoot, .requires(.setpriv), arguments: ["nobody-owned", "world-writable", "sticky-directory", "named"])
    func planted(kind: String) throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("pub"), withIntermediateDirectories: false)
            try Self.makeIndexed("pub/data.gz", in: scratch)
            #expect(chmod(scratch.path("pub/data.gz"), 0o600) == 0)
            let point = try Self.pointOffset(5, of: scratch.path("pub/data.gz.gzidx"))
            let forged = try Self.forgedWindows(of: scratch.path("pub/data.gz.gzidx"), text: UInt8(ascii: "X"))
            try FileManager.default.removeItem(atPath: scratch.path("pub/data.gz.gzidx"))
            try scratch.write("forged", forged)
            #expect(chmod(scratch.path("forged"), 0o644) == 0)
            var indexName = "pub/data.gz.gzidx"
            switch kind {
            case "nobody-owned", "named":
                // nobody writes it where root put its file (a directory root let nobody write).
                #expect(chmod(scratch.path("pub"), 0o777) == 0)
                let planted = try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                           "/bin/cp", scratch.path("forged"), scratch.path(indexName)], in: scratch)
                try #require(planted.status == 0, "\(planted)")
                #expect(chmod(scratch.path("pub"), 0o755) == 0)
                if kind == "named" { indexName = "pub/data.gz.gzidx" }
            case "world-writable":
                try FileManager.default.copyItem(atPath: scratch.path("forged"), toPath: scratch.path(indexName))
                #expect(chmod(scratch.path(indexName), 0o666) == 0)
            default:
                #expect(chmod(scratch.path("pub"), 0o1777) == 0)
                try FileManager.default.copyItem(atPath: scratch.path("forged"), toPath: scratch.path(indexName))
            }
            setModificationTime(scratch.path("pub/data.gz"), seconds: 1_000_000_000)
            let range = Array(Self.data[(point + 100)..<(point + 180)])
            var arguments = ["unpack", "-c", "--offset", "\(point + 100)", "--length", "80", "pub/data.gz"]
            if kind == "named" { arguments.insert(contentsOf: ["--index", indexName], at: 1) }
            let result = try gzstream(arguments, in: scratch)
            if kind == "named" {
                #expect(result.status == 1 && result.out == "", "\(result)")
                #expect(result.err == "gzstream: \(indexName): owned by uid 65534, another user (an index is trusted only from you or root)\n")
                return
            }
            #expect(result.status == 0 && result.stdout == range, "\(kind): \(result)")
            let reason = switch kind {
            case "nobody-owned": "owned by uid 65534, another user (an index is trusted only from you or root)"
            case "world-writable": "writable by others (mode 666); an index is trusted only when no one else can change it"
            default: "its directory is writable by other users (mode 1777); name it with --index to use it"
            }
            #expect(result.err == "gzstream: \(indexName): not used: \(reason)\n")
            let whole = try gzstream(["-dc", "pub/data.gz"], in: scratch)
            #expect(whole.status == 0 && whole.stdout == Self.data && whole.err == "")
        }
    }

    @Test("A stale index: the file rewritten to the same compressed size, newer or with its old time put back",
          .requiresPythonOracle)
    func stale() throws {
        try withScratch { scratch in
            // Stored deflate blocks: two bytes changed keep the size.
            try Self.storedGzip("data.gz", of: Self.data, in: scratch)
            let indexed = try gzstream(["index", "--span", "64K", "data.gz"], in: scratch)
            try #require(indexed.status == 0, "\(indexed)")
            var changed = Self.data
            changed[900_000] ^= 0x20
            changed[900_001] ^= 0x20
            try Self.storedGzip("new.gz", of: changed, in: scratch)
            try #require(try scratch.read("new.gz").count == scratch.read("data.gz").count)
            let point = try Self.pointOffset(2, of: scratch.path("data.gz.gzidx"))
            // Rewritten after the index was made (as gzip -f would): older index, not used.
            try FileManager.default.removeItem(atPath: scratch.path("data.gz"))
            try FileManager.default.moveItem(atPath: scratch.path("new.gz"), toPath: scratch.path("data.gz"))
            let now = Int(Date().timeIntervalSince1970)
            setModificationTime(scratch.path("data.gz.gzidx"), seconds: now - 100)
            setModificationTime(scratch.path("data.gz"), seconds: now)
            for (offset, length) in [(point + 10, 100), (890_000, 20_000)] {
                let result = try gzstream(["unpack", "-c", "--offset", "\(offset)", "--length", "\(length)", "data.gz"], in: scratch)
                #expect(result.status == 0 && result.stdout == Array(changed[offset..<(offset + length)]), "\(result.err)")
                #expect(result.err == "gzstream: data.gz.gzidx: not used: older than data.gz, so made before the file last "
                    + "changed; rebuild it with: gzstream index -f data.gz\n")
            }
            // Its old time put back: the seal's last bytes (the trailer's CRC-32) differ.
            setModificationTime(scratch.path("data.gz"), seconds: now - 200)
            let result = try gzstream(["unpack", "-c", "--offset", "890000", "--length", "20000", "data.gz"], in: scratch)
            #expect(result.status == 0 && result.stdout == Array(changed[890_000..<910_000]), "\(result.err)")
            #expect(result.err == "gzstream: data.gz.gzidx: not used: the index is stale: the file's last bytes are not those "
                + "it was made from (the file changed after the index was made); rebuild it with: gzstream index -f data.gz\n")
            let named = try gzstream(["unpack", "-c", "--index", "data.gz.gzidx", "--offset", "890000", "data.gz"], in: scratch)
            #expect(named.status == 1 && named.out == "" && named.errLines.count == 1, "\(named)")
        }
    }

    @Test("A damaged index: one byte of a window is caught by the seal; without the seal a misplaced point writes no wrong byte")
    func damaged() throws {
        try withScratch { scratch in
            try Self.makeIndexed("data.gz", in: scratch)
            setModificationTime(scratch.path("data.gz"), seconds: 1_000_000_000)
            var bytes = try scratch.read("data.gz.gzidx")
            let index = try GzipIndex(gzidx: bytes)
            let point = 4
            let offset = Int(index.points[point].plainOffset)
            // The window of point 4 is the fourth window (points 1... have one each).
            let windows = index.points.prefix(point).count { $0.window != nil }
            let windowStart = 35 + 18 * index.points.count + 32768 * windows
            bytes[windowStart + 32000] ^= 0xff
            try scratch.write("data.gz.gzidx", bytes)
            let result = try gzstream(["unpack", "-c", "--offset", "\(offset + 5)", "--length", "100", "data.gz"], in: scratch)
            #expect(result.status == 0 && result.stdout == Array(Self.data[(offset + 5)..<(offset + 105)]))
            #expect(result.err.hasPrefix("gzstream: data.gz.gzidx: not used: not a valid GZIDX index: its checksum does not match"),
                    "\(result.err)")
            // Another tool's index (no seal) whose point 4 lies one bit off: the range is
            // decoded on to the next point and checked before any byte is written.
            var moved = index
            moved.compressedTail = nil
            moved.points[point].bitOffset = (moved.points[point].bitOffset + 1) % 8
            try scratch.write("moved.gzidx", moved.gzidxEncoded())
            let named = try gzstream(["unpack", "-c", "--index", "moved.gzidx", "--offset", "\(offset + 5)", "--length", "100", "data.gz"],
                                     in: scratch)
            #expect(named.status == 1 && named.out == "", "\(named)")
            try FileManager.default.removeItem(atPath: scratch.path("data.gz.gzidx"))
            try FileManager.default.moveItem(atPath: scratch.path("moved.gzidx"), toPath: scratch.path("data.gz.gzidx"))
            let found = try gzstream(["unpack", "-c", "--offset", "\(offset + 5)", "--length", "100", "data.gz"], in: scratch)
            #expect(found.status == 0 && found.stdout == Array(Self.data[(offset + 5)..<(offset + 105)]), "\(found)")
        }
    }

    @Test("An index claiming 2^32 - 1 points beside a small file costs nothing: not used, or refused when named, nothing left")
    func hugeClaim() throws {
        try withScratch { scratch in
            try scratch.write("f.plain", Array("hello\n".utf8))
            try #require(try shell("gzip -c f.plain > f.gz && rm f.plain", in: scratch).status == 0)
            let size = try scratch.read("f.gz").count
            var index = Array("GZIDX".utf8) + [1, 0]
            for (value, width) in [(size, 8), (6, 8), (1 << 20, 4), (32768, 4), (0xffff_ffff, 4)] {
                index += (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            }
            index += [UInt8](repeating: 0, count: 4096 - index.count)
            try scratch.write("f.gz.gzidx", index)
            let limit = GzipIndex.maximumPointCount(compressedSize: Int64(size))
            let message = "not a valid GZIDX index: it claims 4294967295 access points, more than the \(limit) the file can need (at byte 31)"
            let whole = try gzstream(["unpack", "-c", "f.gz"], in: scratch)
            #expect(whole.status == 0 && whole.out == "hello\n" && whole.err == "gzstream: f.gz.gzidx: not used: \(message)\n")
            let named = try gzstream(["unpack", "--index", "f.gz.gzidx", "--offset", "1", "-o", "out", "f.gz"], in: scratch)
            #expect(named.status == 1 && named.err == "gzstream: f.gz.gzidx: \(message)\n", "\(named)")
            #expect(try scratch.listing() == ["f.gz", "f.gz.gzidx"])
        }
    }

    @Test("Zeroed bytes in a later point's window of another tool's index: a range across it gives the true bytes")
    func zeroedLaterWindow() throws {
        try withScratch { scratch in
            let lines = (1...400_000).map { "\($0)\n" }.joined()
            let plain = Array(lines.utf8)
            try Self.makeIndexed("s.gz", in: scratch, data: plain)
            var index = try GzipIndex(gzidx: try scratch.read("s.gz.gzidx"))
            index.compressedTail = nil
            let point = 6
            try #require(index.points.count > point + 1 && index.points[point].window != nil)
            // Zero bytes stand for any byte in the check at a span's end (rapidgzip's sparse
            // windows): the span after the point must not be decoded from them.
            for byte in 16_384..<32_768 { index.points[point].window![byte] = 0 }
            try scratch.write("s.gz.gzidx", index.gzidxEncoded())
            setModificationTime(scratch.path("s.gz"), seconds: 1_000_000_000)
            let start = Int(index.points[point - 1].plainOffset) + 10
            let end = Int(index.points[point + 1].plainOffset) - 10
            for arguments in [["unpack", "-c"], ["unpack", "-c", "--index", "s.gz.gzidx"], ["unpack", "-c", "-p", "1"]] {
                let result = try gzstream(arguments + ["--offset", "\(start)", "--length", "\(end - start)", "s.gz"], in: scratch)
                #expect(result.status == 0 && result.stdout == Array(plain[start..<end]), "\(arguments): \(result.err)")
            }
        }
    }

    @Test("A damaged file with its right index: a range across the damage fails (the file is decoded on to its CRC-32)",
          .requiresPythonOracle)
    func damagedFileGoodIndex() throws {
        try withScratch { scratch in
            try Self.storedGzip("r.gz", of: Self.data, in: scratch)
            try #require(try gzstream(["index", "--span", "64K", "r.gz"], in: scratch).status == 0)
            let index = try GzipIndex(gzidx: try scratch.read("r.gz.gzidx"))
            let point = Int(index.points[1].plainOffset)
            // A stored block holds the plain bytes: flip the one 100 bytes before point 1.
            var file = try scratch.read("r.gz")
            let at = try #require(file.firstRange(of: Array(Self.data[(point - 100)..<(point - 60)])))
            file[at.lowerBound] ^= 0x01
            try scratch.write("r.gz", file)
            setModificationTime(scratch.path("r.gz"), seconds: 1_000_000_000)
            let found = try gzstream(["unpack", "-c", "--offset", "\(point - 200)", "--length", "400", "r.gz"], in: scratch)
            #expect(found.status == 1, "\(found)")
            #expect(found.errLines.last?.hasPrefix("gzstream: r.gz: CRC-32 mismatch in member 1") == true, "\(found.err)")
            let named = try gzstream(["unpack", "-o", "out", "--index", "r.gz.gzidx", "--offset", "\(point - 200)", "--length", "400",
                                      "r.gz"], in: scratch)
            #expect(named.status == 1 && !scratch.exists("out"), "\(named)")
        }
    }
}

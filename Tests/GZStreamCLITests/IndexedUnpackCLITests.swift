import Foundation
import GzipStreams
import Testing
import TestSupport

// unpack and test through a GZIDX index beside the file or named by --index, and
// unpack --offset/--length through it: the bytes, the messages and what is refused.

/// Writes indexed_gzip's index of the gzip file argv[1] with spacing argv[2] to argv[3].
private let exportIndexScript = """
    import sys, indexed_gzip
    with indexed_gzip.IndexedGzipFile(sys.argv[1], spacing=int(sys.argv[2])) as f:
        f.build_full_index()
        f.export_index(sys.argv[3])
    """

@Suite("unpack and test through a GZIDX index", .onDedicatedThreads, .requiresPythonOracle, .requires(.gzip))
struct IndexedUnpackCLITests {
    static let data = sampleBytes(count: 3_000_000, seed: 41)

    /// `name` (gzip -6 of `data`) and `name.gzidx`, indexed_gzip's index of it.
    static func makeIndexed(_ name: String, data: [UInt8] = data, in scratch: Scratch) throws {
        try scratch.write(name + ".plain", data)
        let packed = try run("/bin/sh", ["-c", "gzip -6 -c < \"$0\" > \"$1\"", scratch.path(name + ".plain"), scratch.path(name)],
                             in: scratch)
        try #require(packed.status == 0)
        try FileManager.default.removeItem(atPath: scratch.path(name + ".plain"))
        let exported = try run(try #require(PythonOracle.path), ["-c", exportIndexScript, scratch.path(name), "262144",
                                                                 scratch.path(name + ".gzidx")], in: scratch)
        try #require(exported.status == 0, "\(exported)")
    }

    @Test("unpack and test read through the index beside the file, on 1 and 2 threads", arguments: ["1", "2"])
    func beside(threads: String) throws {
        try withScratch { scratch in
            try Self.makeIndexed("data.gz", in: scratch)
            let unpacked = try gzstream(["unpack", "-c", "-v", "-p", threads, "data.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.stdout == Self.data)
            #expect(unpacked.errLines.first == "gzstream: data.gz: read through data.gz.gzidx (13 access points, \(threads) thread\(threads == "1" ? "" : "s"))")
            let tested = try gzstream(["test", "-p", threads, "data.gz"], in: scratch)
            #expect(tested.status == 0 && tested.err == "" && tested.out == "")
            let toFile = try gzstream(["unpack", "-k", "-p", threads, "data.gz"], in: scratch)
            #expect(toFile.status == 0 && toFile.err == "")
            #expect(try scratch.read("data") == Self.data)
        }
    }

    @Test("-v with --offset says what was written from where and names the index: GZIDX and bgzip's .gzi, to a file and to standard output")
    func verboseRange() throws {
        try withScratch { scratch in
            try Self.makeIndexed("data.gz", in: scratch)
            let through = try gzstream(["unpack", "-c", "-v", "--offset", "262100", "--length", "300000", "data.gz"], in: scratch)
            #expect(through.status == 0 && through.stdout == Array(Self.data[262_100..<562_100]))
            #expect(through.err == "gzstream: data.gz: 300000 bytes from plain offset 262100, read through data.gz.gzidx -> standard output\n")
            let toFile = try gzstream(["unpack", "-v", "--offset", "2999000", "-o", "tail", "data.gz"], in: scratch)
            #expect(toFile.status == 0 && toFile.err == "gzstream: data.gz: 1000 bytes from plain offset 2999000, read through data.gz.gzidx -> tail\n")
            try scratch.write("b", Self.data)
            try #require(try gzstream(["pack", "--bgzf", "--index", "b"], in: scratch).status == 0)
            let bgzf = try gzstream(["unpack", "-c", "-v", "--offset", "100000", "--length", "10", "b.gz"], in: scratch)
            #expect(bgzf.status == 0 && bgzf.stdout == Array(Self.data[100_000..<100_010]))
            #expect(bgzf.err == "gzstream: b.gz: 10 bytes from plain offset 100000, read through b.gz.gzi -> standard output\n")
        }
    }

    @Test("--offset/--length through the index: at the start, across a point, at the end, past it")
    func ranges() throws {
        try withScratch { scratch in
            try Self.makeIndexed("data.gz", in: scratch)
            let size = Self.data.count
            for (offset, length) in [(0, 100), (262_100, 300_000), (size - 10, 100), (size, 5), (1_000_000, 0)] {
                let result = try gzstream(["unpack", "-c", "--offset", "\(offset)", "--length", "\(length)", "data.gz"],
                                          in: scratch)
                #expect(result.status == 0 && result.err == "", "\(offset): \(result)")
                #expect(result.stdout == Array(Self.data[offset..<min(size, offset + length)]), "\(offset)")
            }
            let toEnd = try gzstream(["unpack", "-c", "--offset", "2999000", "data.gz"], in: scratch)
            #expect(toEnd.stdout == Array(Self.data[2_999_000...]))
            let past = try gzstream(["unpack", "-c", "--offset", "\(size + 1)", "data.gz"], in: scratch)
            #expect(past.status == 1 && past.out == "")
            #expect(past.err == "gzstream: data.gz: offset \(size + 1) is past the end of the data (\(size) bytes)\n")
        }
    }

    @Test("--index PATH names the index; one that is not the file's is an error, and nothing is written")
    func explicitIndex() throws {
        try withScratch { scratch in
            try Self.makeIndexed("data.gz", in: scratch)
            try FileManager.default.moveItem(atPath: scratch.path("data.gz.gzidx"), toPath: scratch.path("saved.idx"))
            let result = try gzstream(["unpack", "-c", "--index", "saved.idx", "--offset", "5", "--length", "7", "data.gz"],
                                      in: scratch)
            #expect(result.status == 0 && result.stdout == Array(Self.data[5..<12]))
            try Self.makeIndexed("other.gz", data: sampleBytes(count: 100_000, seed: 3), in: scratch)
            let wrong = try gzstream(["unpack", "--index=other.gz.gzidx", "-o", "out", "data.gz"], in: scratch)
            let size = try readBytes(scratch.path("data.gz")).count
            let indexed = try readBytes(scratch.path("other.gz")).count
            #expect(wrong.status == 1 && !scratch.exists("out"))
            #expect(wrong.err == "gzstream: other.gz.gzidx: the index is not this file's: it was made for a file of "
                + "\(indexed) bytes, this one has \(size); rebuild it with: gzstream index -f -o other.gz.gzidx data.gz\n")
            for (arguments, message) in [(["pack", "--index=x", "f"], "--index PATH applies to unpack and test"),
                                         (["unpack", "--index", "x", "-c", "a", "b"], "--index PATH needs one FILE (the index is that file's)")] {
                let usage = try gzstream(arguments, in: scratch)
                #expect(usage.status == 1 && usage.err == usageError(message), "\(arguments): \(usage)")
            }
        }
    }

    @Test("an index beside the file that is another file's is said, not used, and the data is still right")
    func staleBeside() throws {
        try withScratch { scratch in
            try Self.makeIndexed("data.gz", in: scratch)
            try Self.makeIndexed("other.gz", data: sampleBytes(count: 100_000, seed: 3), in: scratch)
            try FileManager.default.removeItem(atPath: scratch.path("data.gz.gzidx"))
            try FileManager.default.moveItem(atPath: scratch.path("other.gz.gzidx"), toPath: scratch.path("data.gz.gzidx"))
            let result = try gzstream(["unpack", "-c", "data.gz"], in: scratch)
            let size = try readBytes(scratch.path("data.gz")).count
            let indexed = try readBytes(scratch.path("other.gz")).count
            #expect(result.status == 0 && result.stdout == Self.data)
            #expect(result.err == "gzstream: data.gz.gzidx: not used: the index is not this file's: it was made for a "
                + "file of \(indexed) bytes, this one has \(size); rebuild it with: gzstream index -f data.gz\n")
            let quiet = try gzstream(["test", "-q", "data.gz"], in: scratch)
            #expect(quiet.status == 0 && quiet.err == "")
        }
    }

    /// How each test file is made from `data.plain`: the shell command that writes `data.gz`.
    static let producers: [(label: String, command: String)] = [
        ("gzip -6", "gzip -6 -c data.plain > data.gz"),
        ("pigz -6", "pigz -6 -c data.plain > data.gz"),
        ("gzstream pack", "\"$0\" pack -c data.plain > data.gz"),
        ("three members", "head -c 1000000 data.plain | gzip -1 > data.gz && tail -c +1000001 data.plain | head -c 5 "
            + "| gzip >> data.gz && tail -c +1000006 data.plain | pigz -9 >> data.gz"),
    ]

    @Test("gzstream index, then unpack, test and ranges through it, on files from gzip, pigz, gzstream and several members",
          .requires(.pigz), arguments: producers.indices)
    func ownIndex(producer: Int) throws {
        try withScratch { scratch in
            try scratch.write("data.plain", Self.data)
            let made = try shell(Self.producers[producer].command, in: scratch)
            try #require(made.status == 0, "\(made)")
            let indexed = try gzstream(["index", "--span", "256K", "data.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.err == "")
            let index = try GzipIndex(gzidx: try scratch.read("data.gz.gzidx"))
            #expect(index.points.count >= 8)
            let whole = try gzstream(["unpack", "-c", "-v", "data.gz"], in: scratch)
            #expect(whole.stdout == Self.data && whole.status == 0)
            #expect(whole.errLines.first?.hasPrefix("gzstream: data.gz: read through data.gz.gzidx (\(index.points.count) access points") == true)
            #expect(try gzstream(["test", "data.gz"], in: scratch).status == 0)
            let point = Int(index.points[4].plainOffset)
            let size = Self.data.count
            for (offset, length) in [(0, 1000), (point - 500, 1000), (999_998, 10), (size - 100, 1000), (size, 1)] {
                let range = try gzstream(["unpack", "-c", "--offset", "\(offset)", "--length", "\(length)", "data.gz"],
                                         in: scratch)
                #expect(range.status == 0 && range.err == "", "\(offset): \(range)")
                #expect(range.stdout == Array(Self.data[offset..<min(size, offset + length)]), "\(offset)")
            }
            let past = try gzstream(["unpack", "-c", "--offset", "\(size + 1)", "data.gz"], in: scratch)
            #expect(past.status == 1 && past.err == "gzstream: data.gz: offset \(size + 1) is past the end of the data (\(size) bytes)\n")
        }
    }

    @Test("rapidgzip's index (sparse windows) and gztool's are read through --index", .requires(.gztool))
    func otherIndexes() throws {
        try withScratch { scratch in
            try scratch.write("data.plain", Self.data)
            try #require(try shell("gzip -6 -c data.plain > data.gz", in: scratch).status == 0)
            let rapidgzip = try #require(PythonOracle.rapidgzipPath)
            let exported = try run(rapidgzip, ["-d", "-c", "--export-index", "data.rgidx", "data.gz"], in: scratch)
            try #require(exported.status == 0 && exported.stdout == Self.data)
            let made = try run("/bin/sh", ["-c", "gztool -i -s 1 -I data.gztool data.gz"], in: scratch)
            try #require(made.status == 0, "\(made)")
            for index in ["data.rgidx", "data.gztool"] {
                let whole = try gzstream(["unpack", "-c", "-v", "--index", index, "data.gz"], in: scratch)
                #expect(whole.status == 0 && whole.stdout == Self.data, "\(index)")
                #expect(whole.errLines.first?.hasPrefix("gzstream: data.gz: read through \(index) (") == true, "\(whole.err)")
                let range = try gzstream(["unpack", "-c", "--index", index, "--offset", "2222222", "--length", "4444", "data.gz"],
                                         in: scratch)
                #expect(range.status == 0 && range.stdout == Array(Self.data[2_222_222..<2_226_666]), "\(index): \(range)")
            }
        }
    }

    @Test("gztool's index beside the file, named as gztool -i names it, is read; a file there without its magic is passed over",
          .requires(.gztool))
    func gztoolIndexBeside() throws {
        try withScratch { scratch in
            try scratch.write("data.plain", Self.data)
            let made = try shell("gzip -6 -c data.plain > data.gz && cp data.gz data.tgz && gztool -i -s 1 data.gz data.tgz",
                                 in: scratch)
            try #require(made.status == 0, "\(made)")
            try #require(FileManager.default.fileExists(atPath: scratch.path("data.gzi")))
            try #require(FileManager.default.fileExists(atPath: scratch.path("data.tgz.gzi")))
            let whole = try gzstream(["unpack", "-c", "-v", "-p", "2", "data.gz"], in: scratch)
            #expect(whole.status == 0 && whole.stdout == Self.data)
            #expect(whole.errLines.first == "gzstream: data.gz: read through data.gzi (3 access points, 2 threads)", "\(whole.err)")
            #expect(try gzstream(["test", "data.gz"], in: scratch).status == 0)
            for name in ["data.gz", "data.tgz"] {
                let range = try gzstream(["unpack", "-c", "--offset", "2222222", "--length", "4444", name], in: scratch)
                #expect(range.status == 0 && range.err == "", "\(name): \(range)")
                #expect(range.stdout == Array(Self.data[2_222_222..<2_226_666]), "\(name)")
            }
            // bgzip's name for a BGZF index, or any other file: not gztool's, so not an index of it.
            try scratch.write("data.gzi", Array("not an index at all".utf8))
            let without = try gzstream(["unpack", "-c", "-v", "data.gz"], in: scratch)
            #expect(without.status == 0 && without.stdout == Self.data)
            // The same summary line as through the index, and no "read through" line before it.
            #expect(without.errLines == [try #require(whole.errLines.last)], "\(without.err)")
            let range = try gzstream(["unpack", "-c", "--offset", "5", "data.gz"], in: scratch)
            #expect(range.status == 1 && range.err == "gzstream: data.gz: no index data.gz.gzidx (run 'gzstream index data.gz' to build it)\n")
        }
    }

    @Test("without -p, a whole read through an index of one access point goes sequential, and -v says why")
    func sequentialWhenTheIndexCannotWin() throws {
        try withScratch { scratch in
            // 100,000 bytes under the default span: the index has only the first point.
            try scratch.write("small", Array(Self.data.prefix(100_000)))
            try #require(try gzstream(["pack", "-k", "small"], in: scratch).status == 0)
            try #require(try gzstream(["index", "small.gz"], in: scratch).status == 0)
            let small = try gzstream(["unpack", "-c", "-v", "small.gz"], in: scratch)
            #expect(small.status == 0 && small.stdout == Array(Self.data.prefix(100_000)), "\(small)")
            #expect(small.errLines.first == "gzstream: small.gz: decoded sequentially, not through small.gz.gzidx: it has 1 access point",
                    "\(small.err)")
            // Asked for with -p, the index is read even so.
            let asked = try gzstream(["unpack", "-c", "-v", "-p", "2", "small.gz"], in: scratch)
            #expect(asked.errLines.first == "gzstream: small.gz: read through small.gz.gzidx (1 access points, 2 threads)")
        }
    }

    @Test("an index without access points: a range is refused in one line, nothing left; a whole read says it is not used")
    func noPoints() throws {
        try withScratch { scratch in
            try scratch.write("f.plain", "hello\n")
            try #require(try shell("gzip -c f.plain > f.gz && rm f.plain", in: scratch).status == 0)
            let size = try scratch.read("f.gz").count
            // GZIDX v1: magic, version, flags, compressed size, plain size, spacing, window size, 0 points.
            var index = Array("GZIDX".utf8) + [1, 0]
            for (value, width) in [(size, 8), (6, 8), (1 << 20, 4), (32768, 4), (0, 4)] {
                index += (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            }
            try scratch.write("f.gz.gzidx", index)
            // Found beside the file, it is not used: the range is decoded from the start.
            let message = "gzstream: f.gz.gzidx: not used: the index is not usable: it has no access points\n"
            let range = try gzstream(["unpack", "-c", "--offset", "0", "f.gz"], in: scratch)
            #expect(range.status == 0 && range.out == "hello\n" && range.err == message, "\(range)")
            let toFile = try gzstream(["unpack", "--offset", "1", "-o", "out", "f.gz"], in: scratch)
            #expect(toFile.status == 0 && toFile.err == message, "\(toFile)")
            #expect(try scratch.read("out") == Array("ello\n".utf8))
            // Named with --index, it is an error, and nothing is left.
            let named = try gzstream(["unpack", "--offset", "1", "-o", "named", "--index", "f.gz.gzidx", "f.gz"], in: scratch)
            #expect(named.status == 1 && named.err == "gzstream: f.gz.gzidx: the index is not usable: it has no access points\n",
                    "\(named)")
            #expect(try scratch.listing() == ["f.gz", "f.gz.gzidx", "out"])
            let whole = try gzstream(["unpack", "-c", "f.gz"], in: scratch)
            #expect(whole.status == 0 && whole.out == "hello\n")
            #expect(whole.err == "gzstream: f.gz.gzidx: not used: the index is not usable: it has no access points\n")
        }
    }

    @Test("an index beside the file that is a symbolic link is said and not used; a range ignores trailing garbage")
    func linkAndGarbage() throws {
        try withScratch { scratch in
            try Self.makeIndexed("data.gz", in: scratch)
            // -r follows no link, the index beside a file it finds included.
            try FileManager.default.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: scratch.path("data.gz"), toPath: scratch.path("d/data.gz"))
            try FileManager.default.createSymbolicLink(atPath: scratch.path("d/data.gz.gzidx"), withDestinationPath: "../data.gz.gzidx")
            let tested = try gzstream(["test", "-r", "d"], in: scratch)
            // The walk's own warning about the link follows (exit 2); the file itself passes.
            #expect(tested.status == 2 && tested.errLines == [
                "gzstream: d/data.gz.gzidx: not used: a symbolic link (an index beside a file is never followed; name it with --index)",
                "gzstream: d/data.gz.gzidx: is a symbolic link -- not followed",
            ], "\(tested)")
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.path("data.gz")))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("hello\n".utf8))
            try handle.close()
            // The index's compressed size is no longer the file's: --index PATH makes it an error.
            let named = try gzstream(["unpack", "-c", "--index", "data.gz.gzidx", "--offset", "10", "--length", "5", "data.gz"],
                                     in: scratch)
            #expect(named.status == 1 && named.out == "", "\(named)")
        }
    }

    @Test("a range of a file with trailing garbage, through an index made for it, exits 0")
    func rangeWithGarbage() throws {
        try withScratch { scratch in
            try scratch.write("data.plain", Self.data)
            try #require(try shell("gzip -6 -c data.plain > data.gz && printf 'hello\\n' >> data.gz", in: scratch).status == 0)
            let exported = try run(try #require(PythonOracle.path), ["-c", exportIndexScript, scratch.path("data.gz"), "262144",
                                                                     scratch.path("data.gz.gzidx")], in: scratch)
            try #require(exported.status == 0, "\(exported)")
            let size = Self.data.count
            let range = try gzstream(["unpack", "-c", "--offset", "\(size - 1000)", "data.gz"], in: scratch)
            #expect(range.status == 0 && range.stdout == Array(Self.data[(size - 1000)...]) && range.err == "", "\(range)")
        }
    }
}

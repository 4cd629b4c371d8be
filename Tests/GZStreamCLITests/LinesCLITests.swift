import Foundation
import GzipStreams
import Testing
import TestSupport

// unpack --lines N[:M]: lines through the line table of an index from each writer, compared
// with sed's lines computed here; an index that counts no lines, one whose table does not fit,
// no index at all; and what is refused.

/// Writes indexed_gzip's index of the gzip file argv[1] with spacing argv[2] to argv[3].
private let exportIndexScript = """
    import sys, indexed_gzip
    with indexed_gzip.IndexedGzipFile(sys.argv[1], spacing=int(sys.argv[2])) as f:
        f.build_full_index()
        f.export_index(sys.argv[3])
    """

@Suite("unpack --lines N[:M]: through an index's line count, or counted from the start", .onDedicatedThreads)
struct LinesCLITests {
    /// A corpus text (lcet10.txt, 426,754 bytes of 7,519 lines) and the same with a last line
    /// without newline.
    static let corpus = (try? readBytes(PackageLocations.fixtures.appendingPathComponent("corpus/corpus-text/lcet10.txt").path)) ?? []
    static let unterminated = corpus + Array("and a last line without newline".utf8)

    /// How each index writer makes `data.gz` and `data.gz.gzidx` from `data`, with a point
    /// every 32 KiB or so (pack's chunks of 32 KiB are deflated apart, so that a block boundary
    /// comes every 32 KiB; --write-index has its default span: one point).
    static let writers: [(label: String, steps: [[String]])] = [
        ("index", [["pack", "-k", "--block-size", "32K", "data"], ["index", "--span", "32K", "data.gz"]]),
        ("pack --index", [["pack", "-k", "--index", "--block-size", "32K", "data"]]),
        ("unpack --write-index", [["pack", "-k", "data"], ["unpack", "-c", "--write-index", "data.gz"]]),
    ]

    /// `data.gz` and its index from writer `writer`, of `data`.
    static func makeIndexed(_ data: [UInt8], writer: Int, in scratch: Scratch) throws {
        _ = try scratch.write("data", data)
        for step in writers[writer].steps {
            let result = try gzstream(step, in: scratch)
            try #require(result.status == 0, "\(step): \(result)")
        }
    }

    /// The ranges each test reads, for data of `lines` lines: the first line, the last line,
    /// inside one span, across many, past the end, wholly past it.
    static func ranges(lines: Int) -> [(first: Int, last: Int?)] {
        [(1, 1), (1, 3), (lines, lines), (lines, nil), (lines - 2, lines + 5), (100, 104), (250, 6000),
         (3000, nil), (lines + 1, nil), (lines + 10, lines + 20), (1, nil)]
    }

    @Test("Through the line table of each writer's index: sed's lines, exact, and -v names the index",
          arguments: writers.indices, [false, true])
    func throughIndex(writer: Int, unterminated: Bool) throws {
        try withScratch { scratch in
            let data = unterminated ? Self.unterminated : Self.corpus
            try #require(Self.corpus.count == 426_754)
            try Self.makeIndexed(data, writer: writer, in: scratch)
            let index = try GzipIndex(gzidx: try scratch.read("data.gz.gzidx"))
            let lines = data.count(where: { $0 == 0x0A }) + (unterminated ? 1 : 0)
            #expect(index.lineCount == UInt64(lines))
            if writer != 2 { #expect(index.points.count > 5) }
            for (first, last) in Self.ranges(lines: lines) {
                let value = last.map { "\(first):\($0)" } ?? "\(first)"
                let result = try gzstream(["unpack", "-c", "-v", "--lines", value, "data.gz"], in: scratch)
                let expected = sedLines(data, first, last)
                #expect(result.status == 0 && result.stdout == expected, "\(value): \(result.status) \(result.err)")
                let which = last.map { "lines \(first) to \($0)" } ?? "lines \(first) to the end"
                #expect(result.err == "gzstream: data.gz: \(which), \(expected.count) bytes, read through data.gz.gzidx "
                    + "-> standard output\n")
            }
            let toFile = try gzstream(["unpack", "--lines", "5:9", "-o", "five", "data.gz"], in: scratch)
            let five = try scratch.read("five")
            #expect(toFile.status == 0 && toFile.err == "" && five == sedLines(data, 5, 9))
        }
    }

    @Test("Without an index, and for an empty file, the lines are counted from the start")
    func withoutIndex() throws {
        try withScratch { scratch in
            _ = try scratch.write("data", Self.unterminated)
            _ = try scratch.write("empty", [])
            try #require(try gzstream(["pack", "data", "empty"], in: scratch).status == 0)
            for (first, last) in [(1, 2), (7519, 7521), (40, nil)] as [(Int, Int?)] {
                let value = last.map { "\(first):\($0)" } ?? "\(first)"
                let result = try gzstream(["unpack", "-c", "-v", "--lines", value, "data.gz"], in: scratch)
                let expected = sedLines(Self.unterminated, first, last)
                #expect(result.status == 0 && result.stdout == expected, "\(value)")
                let which = last.map { "lines \(first) to \($0)" } ?? "lines \(first) to the end"
                #expect(result.err == "gzstream: data.gz: \(which), \(expected.count) bytes, decoded from the start "
                    + "-> standard output\n")
            }
            let empty = try gzstream(["unpack", "-c", "--lines", "1", "empty.gz"], in: scratch)
            #expect(empty.status == 0 && empty.out == "" && empty.err == "")
            try #require(try gzstream(["index", "--span", "32K", "empty.gz"], in: scratch).status == 0)
            let indexed = try gzstream(["unpack", "-c", "-v", "--lines", "1:2", "empty.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.out == "")
            #expect(indexed.err == "gzstream: empty.gz: lines 1 to 2, 0 bytes, read through empty.gz.gzidx -> standard output\n")
        }
    }

    @Test("An index that counts no lines (indexed_gzip's; ours with the table taken out) is said, and the lines are counted from the start",
          .requiresPythonOracle)
    func foreignIndex() throws {
        try withScratch { scratch in
            try Self.makeIndexed(Self.corpus, writer: 0, in: scratch)
            var stripped = try GzipIndex(gzidx: try scratch.read("data.gz.gzidx"))
            stripped.lineTable = nil
            _ = try scratch.write("stripped.gzidx", stripped.gzidxEncoded())
            try FileManager.default.removeItem(atPath: scratch.path("data.gz.gzidx"))
            let exported = try run(try #require(PythonOracle.path), ["-c", exportIndexScript, scratch.path("data.gz"), "65536",
                                                                     scratch.path("data.gz.gzidx")], in: scratch)
            try #require(exported.status == 0, "\(exported)")
            let found = try gzstream(["unpack", "-c", "--lines", "3000:3010", "data.gz"], in: scratch)
            #expect(found.status == 0 && found.stdout == sedLines(Self.corpus, 3000, 3010))
            #expect(found.err == "gzstream: data.gz.gzidx: not used: it counts no lines (another tool's index, or an older "
                + "gzstream's): the lines are counted from the start; rebuild it with: gzstream index -f data.gz\n")
            let named = try gzstream(["unpack", "-c", "--index", "stripped.gzidx", "--lines", "7000", "data.gz"], in: scratch)
            #expect(named.status == 0 && named.stdout == sedLines(Self.corpus, 7000, nil))
            #expect(named.err == "gzstream: stripped.gzidx: not used: it counts no lines (another tool's index, or an older "
                + "gzstream's): the lines are counted from the start; rebuild it with: gzstream index -f -o stripped.gzidx data.gz\n")
        }
    }

    @Test("A line table that does not fit the data (resealed): found beside the file it is said and not used; named, an error with nothing written")
    func tamperedTable() throws {
        try withScratch { scratch in
            try Self.makeIndexed(Self.corpus, writer: 0, in: scratch)
            let index = try GzipIndex(gzidx: try scratch.read("data.gz.gzidx"))
            var tampered = index
            tampered.lineTable!.newlinesBefore[5] += 1
            _ = try scratch.write("data.gz.gzidx", tampered.gzidxEncoded())
            _ = try scratch.write("tampered.gzidx", tampered.gzidxEncoded())
            let first = Int(index.lineTable!.newlinesBefore[5]) + 3
            let counted = index.lineTable!.newlinesBefore[6] + 1
            let problem = "the index's line count does not fit the data: \(counted) newlines before access point 6, "
                + "the index says \(counted - 1)"
            let found = try gzstream(["unpack", "-c", "--lines", "\(first):\(first + 2)", "data.gz"], in: scratch)
            #expect(found.status == 0 && found.stdout == sedLines(Self.corpus, first, first + 2))
            #expect(found.err == "gzstream: data.gz.gzidx: not used: \(problem); rebuild it with: gzstream index -f data.gz\n")
            let named = try gzstream(["unpack", "-c", "--index", "tampered.gzidx", "--lines", "\(first)", "data.gz"], in: scratch)
            #expect(named.status == 1 && named.out == "")
            #expect(named.err == "gzstream: tampered.gzidx: \(problem); rebuild it with: gzstream index -f -o tampered.gzidx data.gz\n")
            // Changed without resealing: the seal finds it, and the index is not used at all.
            var flipped = try scratch.read("data.gz.gzidx")
            flipped[flipped.count - 30] ^= 1
            _ = try scratch.write("data.gz.gzidx", flipped)
            let damaged = try gzstream(["unpack", "-c", "--lines", "10:12", "data.gz"], in: scratch)
            #expect(damaged.status == 0 && damaged.stdout == sedLines(Self.corpus, 10, 12))
            #expect(damaged.err.hasPrefix("gzstream: data.gz.gzidx: not used: ") && damaged.err.contains("checksum"), "\(damaged.err)")
        }
    }

    @Test("What --lines refuses", arguments: [
        (["unpack", "-c", "--lines", "0", "a.gz"], "--lines counts lines from 1, not 0 ('0')"),
        (["unpack", "-c", "--lines", "4:0", "a.gz"], "--lines counts lines from 1, not 0 ('4:0')"),
        (["unpack", "-c", "--lines", "9:3", "a.gz"], "--lines N:M needs N <= M, not '9:3' (the last line comes before the first)"),
        (["unpack", "-c", "--lines", "x", "a.gz"], "--lines takes N or N:M (line numbers from 1), not 'x'"),
        (["unpack", "-c", "--lines", "3:", "a.gz"], "--lines takes N or N:M (line numbers from 1), not '3:'"),
        (["unpack", "-c", "--lines", "-1", "a.gz"], "--lines takes N or N:M (line numbers from 1), not '-1'"),
        (["unpack", "-c", "--lines", "3", "--offset", "5", "a.gz"], "--lines does not go with --offset or --length"),
        (["unpack", "--lines", "3", "a.gz"], "--lines writes to -c or -o PATH only"),
        (["unpack", "-c", "--lines", "3", "a.gz", "b.gz"], "--lines needs one FILE (read through FILE.gzidx or --index PATH when it counts lines)"),
        (["unpack", "-c", "--lines", "3", "--write-index", "a.gz"],
         "--write-index decodes each file whole to index it: --offset, --length and --lines do not apply"),
        (["pack", "--lines", "3", "a"], "--lines applies to unpack"),
        (["test", "--lines", "3", "a.gz"], "--lines applies to unpack"),
    ] as [([String], String)])
    func usageErrors(arguments: [String], message: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1 && result.out == "" && result.err == usageError(message), "\(result.err)")
        }
    }
}

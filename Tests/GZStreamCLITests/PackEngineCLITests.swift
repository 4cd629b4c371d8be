import Foundation
import Testing
import TestSupport

@Suite("pack's engines: chunks (the default) and zlib; levels 10 to 12", .onDedicatedThreads)
struct PackEngineCLITests {
    @Test("Every level of each engine writes one member that gzip, pigz, igzip and python's gzip and zlib read back",
          .requires(.gzip), .requires(.pigz), .requires(.igzip), .requires(.python3),
          arguments: [(nil, 0), (nil, 1), (nil, 2), (nil, 3), (nil, 6), (nil, 9), (nil, 10), (nil, 12),
                      ("zlib", 1), ("zlib", 6)] as [(String?, Int)])
    func everyLevelDecodes(engine: String?, level: Int) throws {
        try withScratch { scratch in
            let content = mixedInput(byteCount: 2_600_000)
            try scratch.write("data", content)
            let engineArguments = engine.map { ["--engine", $0] } ?? []
            let result = try gzstream(["pack", "-c", "-n", "-\(level)"] + engineArguments + ["data"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            let packed = try scratch.write("data.gz", result.stdout)
            #expect(try gunzip(packed, in: scratch) == content)
            for tool in [Tool.pigz, .igzip] {
                let result = try run(try #require(tool.path), ["-dc", packed], in: scratch)
                #expect(result.status == 0 && result.stdout == content, "\(tool.name) -dc: \(result.err)")
            }
            let python = try run(try #require(Tool.python3.path), [
                "-c", "import gzip, sys; sys.stdout.buffer.write(gzip.open(sys.argv[1]).read())", packed,
            ], in: scratch)
            #expect(python.status == 0 && python.stdout == content, "python's gzip: \(python.err)")
            let walk = try pythonWalk(packed, in: scratch)
            #expect(walk.members.count == 1 && walk.members.first?.uncompressedSize == Int64(content.count))
            // XFL (RFC 1952 §2.3.1): 2 for the slowest levels, 9 and above, as gzip and pigz.
            #expect(result.stdout[8] == (level >= 9 ? 2 : level == 1 ? 4 : 0), "XFL at level \(level)")
        }
    }

    @Test("-11 is one option, level 11, as pigz reads it; --level 11 says the same")
    func multiDigitLevel() throws {
        try withScratch { scratch in
            try scratch.write("data", mixedInput(byteCount: 300_000))
            let short = try gzstream(["pack", "-c", "-n", "-11", "data"], in: scratch)
            let long = try gzstream(["pack", "-c", "-n", "--level", "11", "data"], in: scratch)
            let grouped = try gzstream(["pack", "-cn11", "data"], in: scratch)
            let one = try gzstream(["pack", "-c", "-n", "-1", "data"], in: scratch)
            #expect(short.status == 0 && short.stdout == long.stdout && grouped.stdout == long.stdout)
            #expect(one.stdout != short.stdout)
        }
    }

    @Test("The engines write different bytes of the same content; -p does not change either")
    func enginesDiffer() throws {
        try withScratch { scratch in
            let content = mixedInput(byteCount: 2_200_000)
            try scratch.write("data", content)
            let chunks = try gzstream(["pack", "-c", "-n", "-p", "1", "data"], in: scratch)
            let chunksTwo = try gzstream(["pack", "-c", "-n", "-p", "2", "--engine", "chunks", "data"], in: scratch)
            let zlib = try gzstream(["pack", "-c", "-n", "-p", "1", "--engine", "zlib", "data"], in: scratch)
            let zlibThree = try gzstream(["pack", "-c", "-n", "-p", "3", "--engine=zlib", "data"], in: scratch)
            #expect(chunks.stdout == chunksTwo.stdout && zlib.stdout == zlibThree.stdout)
            #expect(chunks.stdout != zlib.stdout)
            #expect(try gunzip(try scratch.write("z.gz", zlib.stdout), in: scratch) == content)
        }
    }

    @Test("Engine and index options that do not apply are usage errors: the message and the usage, nothing written",
          arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["pack", "-c", "-10", "--engine", "zlib"], "levels 10 to 12 need the chunks engine, not --engine zlib"),
        (["unpack", "-c", "--rsyncable"], "--rsyncable applies to pack without --bgzf"),
        (["pack", "--index", "--engine", "zlib", "-o", "x.gz"],
         "--index needs the chunks engine (its chunks are the access points), not --engine zlib"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch, input: .bytes([1, 2, 3]))
            #expect(result.status == 1)
            #expect(result.err == usageError(message), "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(try scratch.listing() == [])
        }
    }

    @Test("pack --bgzf takes levels 10 to 12 too (libdeflate's)", .requires(.bgzip))
    func bgzfHighLevels() throws {
        try withScratch { scratch in
            let content = mixedInput(byteCount: 200_000)
            try scratch.write("data", content)
            let result = try gzstream(["pack", "-c", "--bgzf", "-12", "data"], in: scratch)
            #expect(result.status == 0, "\(result)")
            let packed = try scratch.write("data.gz", result.stdout)
            let bgzip = try run(try #require(Tool.bgzip.path), ["-dc", packed], in: scratch)
            #expect(bgzip.status == 0 && bgzip.stdout == content)
        }
    }

    @Test("pack --index writes FILE.gz.gzidx beside the output; rapidgzip reads ranges through it",
          .requiresPythonOracle)
    func packIndex() throws {
        try withScratch { scratch in
            let content = mixedInput(byteCount: 3_300_000)
            try scratch.write("data", content)
            let result = try gzstream(["pack", "-k", "--index", "data"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            let index = try readBytes(scratch.path("data.gz.gzidx"))
            // 35-byte header, 18 bytes per point (one at each 1 MiB chunk), gzstream's line table
            // (24 bytes and 8 per point) and 20-byte seal, which rapidgzip passes over.
            #expect(index.count == 35 + 18 * 4 + 24 + 8 * 4 + 20 && Array(index.prefix(5)) == Array("GZIDX".utf8))
            let rapidgzip = try #require(PythonOracle.rapidgzipPath)
            let ranges = [(1000, 0), (5000, (1 << 20) - 100), (70_000, 3_000_000)]
            let read = try run(rapidgzip, ["-P", "1", "--import-index", scratch.path("data.gz.gzidx"), "--ranges",
                                           ranges.map { "\($0.0)@\($0.1)" }.joined(separator: ","), "-c",
                                           scratch.path("data.gz")], in: scratch)
            #expect(read.status == 0, "\(read.err)")
            #expect(read.stdout == ranges.flatMap { content[$0.1..<min(content.count, $0.1 + $0.0)] })
            // -o names the index too; an existing index is replaced only with -f.
            let named = try gzstream(["pack", "--index", "-o", "other.gz", "data"], in: scratch)
            #expect(named.status == 0 && FileManager.default.fileExists(atPath: scratch.path("other.gz.gzidx")))
            let again = try gzstream(["pack", "--index", "-o", "third.gz", "data"], in: scratch)
            #expect(again.status == 0)
            try scratch.write("fourth.gz.gzidx", "keep")
            let refused = try gzstream(["pack", "--index", "-o", "fourth.gz", "data"], in: scratch)
            #expect(refused.status == 1 && !FileManager.default.fileExists(atPath: scratch.path("fourth.gz")), "\(refused)")
            #expect(try readBytes(scratch.path("fourth.gz.gzidx")) == Array("keep".utf8))
        }
    }

    @Test("--rsyncable: after one byte inserted at the start of 64 MiB, rsync finds at least 90% of the new .gz in the old, at no more than 1.02 times the size",
          .requires(.rsync), .requires(.gzip))
    func rsyncFindsTheRest() throws {
        try withScratch { scratch in
            let content = mixedInput(byteCount: 64 << 20)
            try scratch.write("old", content)
            try scratch.write("new", [0x0a] + content)
            for name in ["old", "new"] {
                let packed = try gzstream(["pack", "-k", "-n", "--rsyncable", name], in: scratch)
                #expect(packed.status == 0, "\(packed)")
            }
            let plain = try gzstream(["pack", "-c", "-n", "new"], in: scratch)
            let newSize = try readBytes(scratch.path("new.gz")).count
            #expect(Double(newSize) <= Double(plain.stdout.count) * 1.02, "\(newSize) vs \(plain.stdout.count)")
            #expect(try gunzip(scratch.path("new.gz"), in: scratch) == [0x0a] + content)
            // rsync the new file onto a copy of the old one, with the delta algorithm even locally.
            let sync = try run(try #require(Tool.rsync.path),
                               ["--no-whole-file", "--stats", scratch.path("new.gz"), scratch.path("old.gz")], in: scratch)
            #expect(sync.status == 0, "\(sync.err)")
            let stats = String(decoding: sync.stdout, as: UTF8.self)
            let matched = stats.split(separator: "\n").first { $0.hasPrefix("Matched data:") }
                .flatMap { Int($0.filter(\.isNumber)) }
            let matchedBytes = try #require(matched, "no 'Matched data' in rsync's statistics: \(stats)")
            #expect(Double(matchedBytes) >= 0.9 * Double(newSize), "rsync matched \(matchedBytes) of \(newSize) bytes")
            #expect(try readBytes(scratch.path("old.gz")) == (try readBytes(scratch.path("new.gz"))))
        }
    }

    @Test("gzip mode takes --rsyncable and -b with -d, -t and -l and ignores them, as gzip and pigz: tar -I 'gzstream --rsyncable' extracts",
          .requires(.tar))
    func gzipModeIgnoresTuningWhenNotPacking() throws {
        try withScratch { scratch in
            let content = sampleText(byteCount: 50_000, seed: 4)
            try scratch.write("a", content)
            let program = "\(Locations.binary) --rsyncable -b 64 -11"
            let tar = try #require(Tool.tar.path)
            let create = try run(tar, ["-I", program, "-cf", "a.tgz", "a"], in: scratch)
            #expect(create.status == 0, "\(create)")
            try FileManager.default.removeItem(atPath: scratch.path("a"))
            let extract = try run(tar, ["-I", program, "-xf", "a.tgz"], in: scratch)
            #expect(extract.status == 0 && extract.err == "", "\(extract)")
            #expect(try readBytes(scratch.path("a")) == content)
            for flag in ["-t", "-l"] {
                let result = try gzstream(["--rsyncable", "-b", "64", flag, "a.tgz"], in: scratch)
                #expect(result.status == 0, "\(flag): \(result)")
            }
        }
    }

    @Test("An output name that is a directory is refused before the input is read, and the index beside it stays")
    func directoryOutputKeepsIndex() throws {
        try withScratch { scratch in
            try scratch.write("f", sampleText(byteCount: 10_000, seed: 5))
            try FileManager.default.createDirectory(atPath: scratch.path("d/f.gz"), withIntermediateDirectories: true)
            try scratch.write("d/f.gz.gzidx", "old index")
            let result = try gzstream(["pack", "-f", "--index", "-o", "d", "f"], in: scratch)
            #expect(result.status == 1)
            #expect(result.err == "gzstream: d/f.gz: cannot write: Is a directory\n", "\(result)")
            #expect(try readBytes(scratch.path("d/f.gz.gzidx")) == Array("old index".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("d")).sorted() == ["f.gz", "f.gz.gzidx"])
        }
    }

    @Test("A second -r --index run leaves the indexes beside the packed files alone", arguments: [["pack"], []])
    func recursiveRunSkipsIndexes(command: [String]) throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("r"), withIntermediateDirectories: true)
            try scratch.write("r/a", sampleText(byteCount: 3000, seed: 6))
            let first = try gzstream(command + ["-r", "--index", "r"], in: scratch)
            #expect(first.status == 0, "\(first)")
            try scratch.write("r/b", sampleText(byteCount: 3000, seed: 7))
            let second = try gzstream(command + ["-r", "--index", "r"], in: scratch)
            let listing = try FileManager.default.contentsOfDirectory(atPath: scratch.path("r")).sorted()
            let expected = command.isEmpty ? ["a.gz", "a.gz.gzidx", "b.gz", "b.gz.gzidx"]
                : ["a", "a.gz", "a.gz.gzidx", "b", "b.gz", "b.gz.gzidx"]
            #expect(listing == expected, "\(second)")
        }
    }
}

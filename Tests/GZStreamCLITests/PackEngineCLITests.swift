import Foundation
import Testing
import TestSupport

/// Text and random stretches over several 1 MiB chunks.
private func engineInput(byteCount: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    var seed: UInt64 = 7
    while bytes.count < byteCount {
        bytes += seed % 4 == 0 ? randomBytes(count: 30_000, seed: seed) : sampleText(byteCount: 120_000, seed: seed)
        seed += 1
    }
    return Array(bytes.prefix(byteCount))
}

@Suite("pack's engines: chunks (the default) and zlib; levels 10 to 12", .onDedicatedThreads)
struct PackEngineCLITests {
    @Test("Every level of each engine writes one member that gzip, pigz and python's zlib read back",
          .requires(.gzip), .requires(.pigz), .requires(.python3),
          arguments: [(nil, 0), (nil, 1), (nil, 2), (nil, 3), (nil, 6), (nil, 9), (nil, 10), (nil, 12),
                      ("zlib", 1), ("zlib", 6)] as [(String?, Int)])
    func everyLevelDecodes(engine: String?, level: Int) throws {
        try withScratch { scratch in
            let content = engineInput(byteCount: 2_600_000)
            try scratch.write("data", content)
            let engineArguments = engine.map { ["--engine", $0] } ?? []
            let result = try gzstream(["pack", "-c", "-n", "-\(level)"] + engineArguments + ["data"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            let packed = try scratch.write("data.gz", result.stdout)
            #expect(try gunzip(packed, in: scratch) == content)
            let pigz = try run(try #require(Tool.pigz.path), ["-dc", packed], in: scratch)
            #expect(pigz.status == 0 && pigz.stdout == content, "pigz -dc: \(pigz.err)")
            let walk = try pythonWalk(packed, in: scratch)
            #expect(walk.members.count == 1 && walk.members.first?.uncompressedSize == Int64(content.count))
            // XFL (RFC 1952 §2.3.1): 2 for the slowest levels, 9 and above, as gzip and pigz.
            #expect(result.stdout[8] == (level >= 9 ? 2 : level == 1 ? 4 : 0), "XFL at level \(level)")
        }
    }

    @Test("-11 is one option, level 11, as pigz reads it; --level 11 says the same")
    func multiDigitLevel() throws {
        try withScratch { scratch in
            try scratch.write("data", engineInput(byteCount: 300_000))
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
            let content = engineInput(byteCount: 2_200_000)
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

    @Test("Engine options that do not apply are usage errors", arguments: [
        (["pack", "--engine", "pigz"], "--engine takes 'chunks' or 'zlib', not 'pigz'"),
        (["pack", "-13"], "compression level must be 0 to 12, not '13'"),
        (["pack", "--level=100"], "compression level must be 0 to 12, not '100'"),
        (["pack", "-10", "--engine", "zlib"], "levels 10 to 12 need the chunks engine, not --engine zlib"),
        (["pack", "--engine", "zlib", "--rsyncable"], "--rsyncable needs the chunks engine, not --engine zlib"),
        (["pack", "--bgzf", "--engine", "chunks"], "--engine and --rsyncable apply to pack without --bgzf"),
        (["unpack", "--engine", "zlib"], "--engine and --rsyncable apply to pack without --bgzf"),
        (["pack", "--bgzf", "--rsyncable"], "--engine and --rsyncable apply to pack without --bgzf"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments + ["-c"], in: scratch, input: .bytes([1, 2, 3]))
            #expect(result.status == 1)
            #expect(result.errLines.first == "gzstream: Error: \(message)", "\(result)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test("pack --bgzf takes levels 10 to 12 too (libdeflate's)", .requires(.bgzip))
    func bgzfHighLevels() throws {
        try withScratch { scratch in
            let content = engineInput(byteCount: 200_000)
            try scratch.write("data", content)
            let result = try gzstream(["pack", "-c", "--bgzf", "-12", "data"], in: scratch)
            #expect(result.status == 0, "\(result)")
            let packed = try scratch.write("data.gz", result.stdout)
            let bgzip = try run(try #require(Tool.bgzip.path), ["-dc", packed], in: scratch)
            #expect(bgzip.status == 0 && bgzip.stdout == content)
        }
    }
}

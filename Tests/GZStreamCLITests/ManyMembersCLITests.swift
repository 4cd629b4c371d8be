import Foundation
import GzipStreams
import Testing
import TestSupport

// A file of many tiny members: a decoder returns at each member's end, and unpack once wrote a
// member at a time (400,000 writes of 100 bytes for a 40 MB file; through an index, a 512 KiB
// buffer per member too, four times slower than without the index).

@Suite("unpack of a file of many tiny members", .onDedicatedThreads)
struct ManyMembersCLITests {
    /// 20,000 members of 50 plain bytes each: 1,000,000 bytes.
    static let plain = sampleText(byteCount: 1_000_000, seed: 91)

    static func packed() throws -> [UInt8] {
        var packed: [UInt8] = []
        for start in stride(from: 0, to: plain.count, by: 50) {
            packed += try Array(plain[start..<min(plain.count, start + 50)]).gzipped(level: 1)
        }
        return packed
    }

    /// The writes to standard output of `gzstream ARGUMENTS` run by `/bin/sh -c` with `redirect`.
    static func writes(_ arguments: String, redirect: String, in scratch: Scratch) throws -> (count: Int, output: [UInt8]) {
        let strace = try #require(Tool.strace.path)
        let traced = try shell("\"$1\" -f -qq -e trace=write -o trace \"$0\" \(arguments) \(redirect) > out",
                               [strace], in: scratch)
        try #require(traced.status == 0, "\(traced)")
        let lines = String(decoding: try scratch.read("trace"), as: UTF8.self).split(separator: "\n")
        return (lines.filter { $0.contains("write(1,") }.count, try scratch.read("out"))
    }

    @Test("unpack from a file, from standard input redirected from it, and through an index: the data in few writes",
          .enabled(if: straceWorks, "needs strace(1) allowed to trace a child (Debian package: strace)"))
    func fewWrites() throws {
        try withScratch { scratch in
            try scratch.write("many.gz", try Self.packed())
            for (arguments, redirect) in [("unpack -c many.gz", ""), ("unpack -c", "< many.gz")] {
                let (count, output) = try Self.writes(arguments, redirect: redirect, in: scratch)
                #expect(output == Self.plain, "\(arguments) \(redirect)")
                #expect(count <= 16, "\(arguments) \(redirect): \(count) writes of 1,000,000 bytes")
            }
            let indexed = try gzstream(["index", "--span", "256K", "many.gz"], in: scratch)
            try #require(indexed.status == 0, "\(indexed)")
            for threads in ["1", "2"] {
                let (count, output) = try Self.writes("unpack -c -p \(threads) many.gz", redirect: "", in: scratch)
                #expect(output == Self.plain, "through the index, -p \(threads)")
                #expect(count <= 16, "through the index, -p \(threads): \(count) writes of 1,000,000 bytes")
            }
        }
    }

    @Test("from a pipe, each member is written as it is decoded, and the data is whole")
    func fromPipe() throws {
        try withScratch { scratch in
            try scratch.write("many.gz", try Self.packed())
            let piped = try shell("cat many.gz | \"$0\" unpack -c", in: scratch)
            #expect(piped.status == 0 && piped.stdout == Self.plain)
        }
    }
}

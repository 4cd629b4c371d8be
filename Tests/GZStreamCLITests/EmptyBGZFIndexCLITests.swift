import Foundation
import GzipStreams
import Testing
import TestSupport

// The `.gzi` of a BGZF file with no data. htslib 1.16 wrote its count as 2^64 - 1 (its count
// of entries minus one, unsigned), a bug htslib has since fixed, and its newer releases refuse
// that count: gzstream writes 0, and reads both.

@Suite("gzstream index of a BGZF file with no data", .onDedicatedThreads)
struct EmptyBGZFIndexCLITests {
    @Test("a BGZF file with no data: index writes 0 entries, which bgzip reads; unpack --offset reads that and 2^64 - 1",
          .requires(.bgzip), arguments: [1, 2])
    func emptyIndex(emptyMembers: Int) throws {
        try withScratch { scratch in
            let bgzip = try #require(Tool.bgzip.path)
            let made = try run(bgzip, ["-c", try scratch.write("nothing", [])], in: scratch)
            #expect(made.status == 0 && made.stdout.count == 28, "\(made)")
            try scratch.write("empty.gz", Array([[UInt8]](repeating: made.stdout, count: emptyMembers).joined()))

            let indexed = try gzstream(["index", "empty.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.out == "" && indexed.err == "", "\(indexed)")
            #expect(try scratch.read("empty.gz.gzi") == [UInt8](repeating: 0, count: 8))
            let theirs = try run(bgzip, ["-b", "0", "-s", "10", "-I", scratch.path("empty.gz.gzi"), scratch.path("empty.gz")],
                                 in: scratch)
            #expect(theirs.status == 0 && theirs.stdout.isEmpty && theirs.err == "", "\(theirs)")

            for count in [[UInt8](repeating: 0, count: 8), [UInt8](repeating: 0xff, count: 8)] {
                try scratch.write("empty.gz.gzi", count)
                let ours = try gzstream(["unpack", "-c", "--offset", "0", "empty.gz"], in: scratch)
                #expect(ours.status == 0 && ours.stdout.isEmpty && ours.err == "", "\(count): \(ours)")
            }
        }
    }
}

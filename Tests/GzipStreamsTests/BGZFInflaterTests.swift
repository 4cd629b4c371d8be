import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// BGZFInputStream's two verdicts. `.zlib`: exactly a zlib GzipInputStream's run, whatever the
// damage. `.isal`: ISA-L inflates the members, and may accept deflate data that zlib rejects
// (an incomplete code) only when the member's CRC-32 and ISIZE match; the reserved codes are
// errors under both; wherever zlib succeeds, the bytes are zlib's.

@Suite("BGZFInputStream's inflaters: zlib's verdict, and the fast path's rule", .onDedicatedThreads)
struct BGZFInflaterTests {
    static func reservedDistanceFixture() throws -> [UInt8] {
        try fixtureBytes("regressions/bgzf-reserved-distance-code.bgz")
    }

    static func fixtureBytes(_ file: String) throws -> [UInt8] {
        let fixture = try #require(Fixture.all.first { $0.file == file })
        return try Array(Data(contentsOf: URL(fileURLWithPath: fixture.path)))
    }

    @Test("A reserved distance code with a matching CRC-32, under .zlib: the sequential reader's error, member and offset")
    func reservedDistanceStrict() throws {
        let bytes = try Self.reservedDistanceFixture()
        for threads in [1, 4] {
            let (result, parallel) = expectSameAsSequential(bytes, threads: threads, inflater: .zlib, "\(threads) threads")
            #expect(result.error == .invalidDeflateData(member: 2, message: "invalid distance code", offset: 40054))
            #expect(result.bytes.count == 6 + 40000, "the first member and the literals before the code")
            #expect(Array(result.bytes.prefix(6)) == Array("hello\n".utf8))
            #expect(!parallel, "the sequential reader took over at member 2")
        }
    }

    /// libdeflate decodes the reserved codes (distance code 30 as distance 24577, length code 286
    /// as 258); these members carry the CRC-32 and ISIZE of what it makes of them.
    @Test("A reserved code with a matching CRC-32 under .isal: the sequential reader's error too, member and offset",
          arguments: [("regressions/bgzf-reserved-distance-code.bgz", "invalid distance code", Int64(40054), 40000),
                      ("regressions/bgzf-reserved-length-code.bgz", "invalid literal/length code", Int64(1054), 1000)])
    func reservedCodeFast(file: String, message: String, offset: Int64, bytesBefore: Int) throws {
        let bytes = try Self.fixtureBytes(file)
        let strict = run(try GzipInputStream(wrapping: MemoryInputStream(bytes: bytes), inflater: .zlib), readSize: 65536)
        #expect(strict.error == .invalidDeflateData(member: 2, message: message, offset: offset))
        #expect(strict.bytes.count == 6 + bytesBefore)
        for threads in [1, 4] {
            for inflater in [GzipInputStream.Inflater.isal, .zlib] {
                let (result, parallel) = expectSameAsSequential(bytes, threads: threads, inflater: inflater,
                                                                "\(file), \(threads) threads")
                #expect(result == strict, "\(inflater), \(threads) threads")
                #expect(!parallel, "the sequential reader took over at member 2")
            }
        }
    }

    @Test("The same member with one bit of its CRC-32 or ISIZE changed: zlib's error under .isal too")
    func reservedDistanceWrongTrailer() throws {
        let bytes = try Self.reservedDistanceFixture()
        for position in [bytes.count - 28 - 8, bytes.count - 28 - 4] {
            var damaged = bytes
            damaged[position] ^= 1
            let strict = run(try GzipInputStream(wrapping: MemoryInputStream(bytes: damaged), inflater: .zlib),
                             readSize: 65536)
            #expect(strict.error == .invalidDeflateData(member: 2, message: "invalid distance code", offset: 40054))
            for inflater in [GzipInputStream.Inflater.zlib, .isal] {
                let (result, _) = expectSameAsSequential(damaged, inflater: inflater, "trailer byte \(position)")
                #expect(result == strict)
            }
        }
    }

    @Test("Random bit flips in deflate data: .zlib is zlib's run exactly; .isal gives zlib's bytes wherever zlib succeeds",
          arguments: [1, 2, 3])
    func randomFlips(seed: UInt64) throws {
        let sample = try sampleBGZF(memberCount: 5, seed: seed)
        var generator = SplitMix64(seed: seed)
        for _ in 0..<40 {
            let member = sample.members[Int.random(in: 0..<sample.members.count, using: &generator)]
            var damaged = sample.bytes
            damaged[member.offset + Int.random(in: 18..<(member.size - 8), using: &generator)] ^=
                UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
            let strict = expectSameAsSequential(damaged, threads: 2, inflater: .zlib, "zlib").run
            let stream = try BGZFInputStream(wrapping: MemoryInputStream(bytes: damaged), threads: 2)
            let fast = run(stream, readSize: 65536)
            let sequential = run(try GzipInputStream(wrapping: MemoryInputStream(bytes: damaged)), readSize: 65536)
            if strict.error == nil {
                #expect(fast == strict)
            } else if fast.error == nil {
                // Accepted only with the trailers unchanged matching: the original data.
                #expect(fast.bytes == sample.plain)
            } else {
                #expect(fast == sequential, "a member that fails a check goes to the sequential ISA-L reader")
            }
        }
    }

    @Test("readInPlace lends the same bytes read gives, then 0 at the end; on damage the bytes before the error, then -1",
          arguments: [GzipInputStream.Inflater.zlib, .isal])
    func readInPlace(inflater: GzipInputStream.Inflater) throws {
        let sample = try sampleBGZF(memberCount: 6)
        var damaged = sample.bytes
        damaged[sample.members[4].offset + 100] ^= 0x10
        for bytes in [sample.bytes, damaged] {
            let reference = run(try GzipInputStream(wrapping: MemoryInputStream(bytes: bytes), inflater: inflater),
                                readSize: 65536)
            let stream = try BGZFInputStream(wrapping: MemoryInputStream(bytes: bytes), threads: 2, inflater: inflater)
            try stream.openOrThrow()
            var lent: [UInt8] = []
            var count = 0
            repeat {
                count = stream.readInPlace(maxLength: 50_000) { lent += $0 }
                #expect(count <= 50_000)
            } while count > 0
            #expect(lent == reference.bytes)
            #expect((count == -1) == (reference.error != nil))
            #expect(stream.streamStatus == (reference.error == nil ? .atEnd : .error))
            #expect((stream.streamError as? GzipError) == reference.error)
            let after = stream.readInPlace(maxLength: 10) { _ in Issue.record("nothing after the end") }
            #expect(after == (count == 0 ? 0 : -1))
            stream.close()
        }
    }
}

import ByteStreams
import Foundation
import GzipStreams
import Testing

/// The ISA-L backend (`GzipInputStream(inflater: .isal)`): the same bytes as zlib for every
/// valid input, however the input is fed; an error for every damaged one.
@Suite("GzipInputStream with ISA-L's inflate")
struct IsalInflaterTests {
    /// The kinds a damaged stream may end in through ISA-L (where zlib finds invalid deflate
    /// data, ISA-L may wait for more input and report `truncated`: see `Inflater.isal`).
    static let damagedKinds: Set = ["invalid-deflate", "truncated", "crc-mismatch", "length-mismatch"]

    @Test("Each fixture: valid ones give the manifest's bytes, also one byte per read; damaged ones an error",
          arguments: Fixture.all)
    func fixture(_ fixture: Fixture) throws {
        switch fixture.expectation {
        case .ok(let sha256):
            let stream = GzipInputStream(wrapping: FileInputStream(path: fixture.path), inflater: .isal)
            let output = try sha256OfOutput(stream, readSize: 256 * 1024)
            stream.close()
            #expect(output.error == nil, "unexpected error: \(String(describing: output.error))")
            #expect(output.sha256 == sha256)
            #expect(stream.uncompressedByteCount == output.byteCount)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
            guard bytes.count <= Fixture.oneBytePassLimit else { return }
            // One byte per read: every byte ISA-L reads past a member's end must be put back.
            let slow = gunzipStream(bytes, oneByteInner: true, inflater: .isal)
            let slowOutput = try sha256OfOutput(slow, readSize: 256 * 1024)
            slow.close()
            #expect(slowOutput.error == nil, "one byte per read: \(String(describing: slowOutput.error))")
            #expect(slowOutput.sha256 == sha256, "one byte per read gave other bytes")

        case .error(let kinds):
            let stream = GzipInputStream(wrapping: FileInputStream(path: fixture.path), inflater: .isal)
            let output = try sha256OfOutput(stream, readSize: 256 * 1024)
            stream.close()
            let error = try #require(output.gzipError, "expected an error, got \(String(describing: output.error))")
            // Errors outside the deflate data (header, trailer, garbage) are found by the same
            // code as with zlib, so their kind is the manifest's.
            let deflateKinds: Set = ["invalid-deflate"]
            if Set(kinds).isDisjoint(with: deflateKinds) {
                #expect(kinds.contains(error.kind), "expected \(kinds), got \(error)")
            } else {
                #expect(Self.damagedKinds.contains(error.kind), "expected a damaged-data error, got \(error)")
            }

        case .roundtrip:
            return   // pack, then unpack: covered below for both inflaters
        }
    }

    @Test("Multi-member data at every chunk size and in uneven reads: the same bytes as zlib")
    func membersAcrossBufferBoundaries() throws {
        var file: [UInt8] = []
        var plain: [UInt8] = []
        for (index, size) in [0, 1, 100, 4095, 4096, 4097, 70_000].enumerated() {
            let data = mixedBytes(count: size, seed: UInt64(index + 1))
            file += try pack(data, level: index % 2 == 0 ? 6 : 1)
            plain += data
        }
        for chunkSize in [1, 2, 7, 8, 9, 100, 4096] {
            let decoded = unpack(file, chunkSize: chunkSize, inflater: .isal)
            #expect(decoded.error == nil, "chunk \(chunkSize): \(String(describing: decoded.error))")
            #expect(decoded.bytes == plain, "chunk \(chunkSize)")
        }
        let slow = unpack(file, oneByteInner: true, inflater: .isal)
        #expect(slow.error == nil && slow.bytes == plain)
    }

    @Test("Every prefix of a two-member file ends in an error, except the first member alone")
    func everyPrefixFails() throws {
        let first = try pack(mixedBytes(count: 3000, seed: 7))
        let file = first + (try pack(textBytes(count: 500, seed: 8)))
        // Cut after the first member, the file is a valid one-member file.
        for length in 0..<file.count where length != first.count {
            let decoded = unpack(Array(file.prefix(length)), chunkSize: 5, inflater: .isal)
            #expect(decoded.error != nil, "prefix of \(length) bytes decoded without an error")
        }
    }

    @Test("ISA-L accepts an incomplete distance code that zlib rejects, when CRC-32 and ISIZE check (found by make fuzz)")
    func lenientWhereZlibIsStrict() throws {
        let file: [UInt8] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x0d, 0xc1, 0x01, 0x09, 0x00, 0x00,
            0x00, 0x80, 0xa0, 0xeb, 0xcf, 0xab, 0x12, 0x17, 0x63, 0x63, 0x58, 0x99, 0x05, 0x00, 0x00, 0x00,
        ]
        let zlib = unpack(file)
        #expect(zlib.gzipError?.kind == "invalid-deflate", "\(String(describing: zlib.error))")
        let isal = unpack(file, inflater: .isal)
        #expect(isal.error == nil, "\(String(describing: isal.error))")
        #expect(isal.bytes == [0xfe, 0xff, 0xfe, 0xff, 0xfe])
    }

    @Test("Parallel and BGZF output, levels 0 to 9, decode to the input")
    func ourOutput() throws {
        let data = mixedBytes(count: 600_000, seed: 12)
        for level in [0, 1, 6, 9] {
            #expect(unpack(try pack(data, level: level), inflater: .isal).bytes == data, "level \(level)")
            #expect(unpack(try packInBlocks(data, level: level, threads: 2), inflater: .isal).bytes == data)
        }
    }
}

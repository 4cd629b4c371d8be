import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// What `gunzipped` threw, for both result types: they must agree.
private func gunzipError(_ bytes: [UInt8], maximumOutputSize: Int? = nil) -> (array: (any Error)?, data: (any Error)?) {
    var arrayError: (any Error)?
    var dataError: (any Error)?
    do { _ = try bytes.gunzipped(maximumOutputSize: maximumOutputSize) } catch { arrayError = error }
    do { _ = try Data(bytes).gunzipped(maximumOutputSize: maximumOutputSize) } catch { dataError = error }
    return (arrayError, dataError)
}

/// One input for `isGzip` and the answer it must give.
struct HeaderCase: Sendable, CustomTestStringConvertible {
    var label: String
    var bytes: [UInt8]
    var isGzip: Bool
    var testDescription: String { label }

    static let fixed: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03]

    static func with(_ index: Int, _ value: UInt8) -> [UInt8] {
        var bytes = fixed
        bytes[index] = value
        return bytes
    }

    static let all: [HeaderCase] = [
        .init(label: "no bytes", bytes: [], isGzip: false),
        .init(label: "1f alone", bytes: [0x1f], isGzip: false),
        .init(label: "9 bytes of a fixed header", bytes: Array(fixed.prefix(9)), isGzip: false),
        .init(label: "the 10-byte fixed header", bytes: fixed, isGzip: true),
        .init(label: "ID2 8c", bytes: with(1, 0x8c), isGzip: false),
        .init(label: "ID1 1e", bytes: with(0, 0x1e), isGzip: false),
        .init(label: "CM 7", bytes: with(2, 7), isGzip: false),
        .init(label: "every defined flag (FTEXT to FCOMMENT)", bytes: with(3, 0x1f), isGzip: true),
        .init(label: "reserved flag bit 5", bytes: with(3, 0x20), isGzip: false),
        .init(label: "reserved flag bit 7", bytes: with(3, 0x80), isGzip: false),
        .init(label: "any MTIME, XFL and OS", bytes: [0x1f, 0x8b, 8, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], isGzip: true),
        .init(label: "the BGZF end-of-file member", bytes: BGZFOutputStream.endOfFileMember, isGzip: true),
        .init(label: "text", bytes: Array("hello, world\n".utf8), isGzip: false),
        .init(label: "a zlib stream (78 9c)", bytes: [0x78, 0x9c, 0x4b, 0x04, 0x00, 0x00, 0x62, 0x00, 0x62, 0x00], isGzip: false),
    ]
}

@Suite("In memory: gzipped, gunzipped and isGzip on Data and [UInt8]", .onDedicatedThreads)
struct InMemoryGzipTests {
    @Test("Round trips at every edge size and level give GzipOutputStream's bytes back, as Data and as [UInt8]",
          arguments: edgeSizes, [0, 1, 6, 9])
    func roundTrip(size: Int, level: Int) throws {
        let plain = textBytes(count: size, seed: UInt64(size))
        let packed = try plain.gzipped(level: level)
        // In 64 KiB chunks, one write: at level 0 zlib sizes stored blocks by the room it is given.
        #expect(packed == (try pack(plain, level: level, chunkSize: 64 << 10, writeSize: max(1, size))),
                "the member GzipOutputStream writes at level \(level)")
        let xfl: UInt8 = level == 9 ? 2 : level == 1 ? 4 : 0
        #expect(Array(packed.prefix(10)) == [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 3], "the default header")
        #expect(littleEndianUInt32(packed, at: packed.count - 8) == referenceCRC32(plain))
        #expect(littleEndianUInt32(packed, at: packed.count - 4) == UInt32(size))
        #expect(try packed.gunzipped() == plain)
        #expect(packed.isGzip)

        let data = Data(plain)
        let packedData = try data.gzipped(level: level)
        #expect([UInt8](packedData) == packed)
        #expect(try packedData.gunzipped() == data)
        #expect(packedData.isGzip)
    }

    @Test("The default level is 6")
    func defaultLevel() throws {
        let plain = textBytes(count: 50_000)
        #expect(try plain.gzipped() == (try plain.gzipped(level: 6)))
        #expect(try Data(plain).gzipped() == (try Data(plain).gzipped(level: 6)))
    }

    @Test("GNU gzip decodes gzipped, and gunzipped decodes GNU gzip's output")
    func gnuGzip() throws {
        let plain = textBytes(count: 300_000, seed: 12)
        try withTemporaryDirectory { directory in
            let packedPath = try makeFile("ours.gz", in: directory, bytes: try plain.gzipped(level: 9))
            let decoded = try runProcess("/usr/bin/gzip", ["-dc", packedPath])
            #expect(decoded.status == 0, "\(decoded.stderrText)")
            #expect(decoded.stdout == plain)

            let plainPath = try makeFile("plain", in: directory, bytes: plain)
            let theirs = try runProcess("/usr/bin/gzip", ["-c", "-6", plainPath])
            #expect(theirs.status == 0)
            #expect(try theirs.stdout.gunzipped() == plain)
            #expect(try Data(theirs.stdout).gunzipped() == Data(plain))
        }
    }

    @Test("Members, empty members and zero padding come out as one stream")
    func multiMember() throws {
        let first = textBytes(count: 5000, seed: 1)
        let second = randomBytes(count: 3000, seed: 2)
        let file = try first.gzipped(level: 1) + [UInt8]().gzipped() + second.gzipped(level: 9) + [0, 0, 0, 0]
        #expect(try file.gunzipped() == first + second)
        #expect(try Data(file).gunzipped() == Data(first + second))
    }

    @Test("A slice of a Data is read from its own start")
    func dataSlice() throws {
        let plain = textBytes(count: 20_000)
        let packed = Data([0xAA, 0xBB, 0xCC] + (try plain.gzipped()))
        let slice = packed[3...]
        #expect(slice.isGzip)
        #expect(!packed.isGzip)
        #expect(try slice.gunzipped() == Data(plain))
    }

    @Test("Damaged input throws the stream's GzipError, the same for Data and [UInt8]")
    func damaged() throws {
        let plain = textBytes(count: 10_000, seed: 3)
        let packed = try plain.gzipped()
        var badCRC = packed
        badCRC[packed.count - 8] ^= 0x01
        let storedCRC = littleEndianUInt32(badCRC, at: packed.count - 8)
        var badSize = packed
        badSize[packed.count - 1] = 0xff
        let cases: [([UInt8], GzipError)] = [
            ([], .emptyInput),
            (Array("not gzip".utf8), .notGzip(offset: 0)),
            (badCRC, .crcMismatch(member: 1, stored: storedCRC, computed: referenceCRC32(plain),
                                  offset: Int64(packed.count - 8))),
            (badSize, .lengthMismatch(member: 1, stored: littleEndianUInt32(badSize, at: packed.count - 4),
                                      computed: 10_000, offset: Int64(packed.count - 4))),
            (packed + Array("junk".utf8), .trailingGarbage(offset: Int64(packed.count), length: 4)),
            (Array(packed.dropLast(3)), .truncated(member: 1, part: .trailer, offset: Int64(packed.count - 3))),
        ]
        for (bytes, expected) in cases {
            let thrown = gunzipError(bytes)
            #expect(thrown.array as? GzipError == expected, "\(expected.kind): [UInt8] threw \(String(describing: thrown.array))")
            #expect(thrown.data as? GzipError == expected, "\(expected.kind): Data threw \(String(describing: thrown.data))")
        }
    }

    @Test("Every prefix of a valid file throws, with the error a GzipInputStream gives")
    func everyPrefix() throws {
        let packed = try textBytes(count: 2000, seed: 4).gzipped()
        for length in 0..<packed.count {
            let prefix = Array(packed.prefix(length))
            let thrown = gunzipError(prefix)
            let expected = unpack(prefix, inflater: .isal).gzipError
            #expect(expected != nil)
            #expect(thrown.array as? GzipError == expected, "prefix of \(length) bytes")
            #expect(thrown.data as? GzipError == expected, "prefix of \(length) bytes, Data")
        }
    }

    @Test("maximumOutputSize: the exact size decodes, one byte less throws outputLimitExceeded")
    func limit() throws {
        let plain = textBytes(count: 10_000, seed: 5)
        let packed = try plain.gzipped()
        #expect(try packed.gunzipped(maximumOutputSize: 10_000) == plain)
        #expect(try Data(packed).gunzipped(maximumOutputSize: 10_000) == Data(plain))
        let thrown = gunzipError(packed, maximumOutputSize: 9_999)
        let arrayError = try #require(thrown.array as? GzipError)
        #expect(arrayError.kind == "output-limit")
        guard case .outputLimitExceeded(let limit, _) = arrayError else { return }
        #expect(limit == 9_999)
        #expect(thrown.data as? GzipError == arrayError)
        #expect(try [UInt8]().gzipped().gunzipped(maximumOutputSize: 0) == [])
    }

    @Test("A forged ISIZE of 4 GiB - 1 gives lengthMismatch, and reserves at most 32 times the input")
    func forgedSize() throws {
        var packed = try Array("small".utf8).gzipped()
        for index in packed.count - 4..<packed.count { packed[index] = 0xff }
        let thrown = gunzipError(packed)
        #expect((thrown.array as? GzipError)?.kind == "length-mismatch")
        #expect((thrown.data as? GzipError)?.kind == "length-mismatch")
    }

    @Test("A bad level or limit is ByteStreamError.invalidArgument, thrown before any work")
    func badArguments() throws {
        let plain = textBytes(count: 100)
        // Levels 10 to 12 are libdeflate's, through the chunks engine.
        let level = ByteStreamError(.invalidArgument(name: "level", message: "must be 0...12, not 13"),
                                    operation: "create GzipOutputStream")
        #expect(throws: level) { try plain.gzipped(level: 13) }
        #expect(throws: level) { try Data(plain).gzipped(level: 13) }
        #expect(try plain.gzipped(level: 12).gunzipped() == plain)
        let limit = ByteStreamError(.invalidArgument(name: "maximumOutputSize", message: "must be at least 0, not -1"),
                                    operation: "create GzipInputStream")
        let packed = try plain.gzipped()
        #expect(throws: limit) { try packed.gunzipped(maximumOutputSize: -1) }
        #expect(throws: limit) { try Data(packed).gunzipped(maximumOutputSize: -1) }
    }

    @Test("isGzip looks at the 10-byte fixed header and nothing else", arguments: HeaderCase.all)
    func isGzip(_ header: HeaderCase) {
        #expect(header.bytes.isGzip == header.isGzip)
        #expect(Data(header.bytes).isGzip == header.isGzip)
        if !header.isGzip {
            #expect(throws: GzipError.self) { try header.bytes.gunzipped() }
        }
    }

    @Test("Every fixture: isGzip for what decodes; where isGzip is false gunzipped throws; the manifest's result")
    func fixtures() throws {
        #expect(Fixture.all.count == 182)
        for fixture in Fixture.all {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
            var result: [UInt8]?
            var thrown: (any Error)?
            do { result = try bytes.gunzipped(maximumOutputSize: 64 << 20) } catch { thrown = error }
            if !bytes.isGzip {
                #expect(thrown is GzipError, "\(fixture.file): isGzip is false, yet gunzipped gave \(String(describing: result?.count)) bytes")
            }
            switch fixture.expectation {
            case .ok(let sha256):
                #expect(bytes.isGzip, "\(fixture.file)")
                if (fixture.statedOutputSize ?? 0) > 64 << 20 {
                    #expect((thrown as? GzipError)?.kind == "output-limit", "\(fixture.file)")
                } else {
                    let output = try #require(result, "\(fixture.file): \(String(describing: thrown))")
                    #expect(try GzipStreamsTests.sha256(of: output) == sha256, "\(fixture.file)")
                }
            case .error(let kinds):
                let error = try #require(thrown as? GzipError, "\(fixture.file): \(String(describing: thrown))")
                #expect(kinds.contains(error.kind), "\(fixture.file): expected \(kinds), got \(error)")
            case .roundtrip:
                #expect(try bytes.gzipped().gunzipped() == bytes, "\(fixture.file)")
            }
        }
    }
}

import ByteStreams
@testable import GzipStreams
import TestSupport
import Testing

/// GzipFormat, GzipHeaderParser and BGZFFormat on their own: what the writers put is what the
/// readers take, and the bytes are RFC 1952's and the SAM/BAM specification's.
@Suite("GzipFormat: header write and parse, trailer, BGZF framing", .onDedicatedThreads)
struct GzipFormatTests {
    static let headers: [GzipHeader] = [
        GzipHeader(),
        GzipHeader(isText: true, modificationTime: 0x1234_5678, extraFlags: 2, operatingSystem: 11),
        GzipHeader(extraField: []),
        GzipHeader(extraField: [0x42, 0x43, 2, 0, 0xff, 0xee], fileName: [], comment: []),
        GzipHeader(fileName: Array("name.txt".utf8), hasHeaderCRC: true),
        GzipHeader(isText: true, extraField: [1, 2, 3], fileName: [0xe9], comment: Array("a comment".utf8),
                   hasHeaderCRC: true),
    ]

    @Test("Every header written parses back, whole and fed a byte at a time", arguments: headers)
    func headerRoundTrip(_ header: GzipHeader) throws {
        let bytes = GzipFormat.encodeHeader(header, level: 9)
        var expected = header
        expected.extraFlags = header.extraFlags ?? 2
        let parsed = try #require(bytes.withUnsafeBytes { GzipHeaderParser.parse($0) })
        #expect(parsed.header == expected)
        #expect(parsed.size == bytes.count)
        // Every prefix is incomplete, not an error.
        for cut in 0..<bytes.count {
            #expect(bytes.prefix(cut).withUnsafeBytes { GzipHeaderParser.parse($0) } == nil)
        }
        #expect(bytes.withUnsafeBytes(GzipFormat.startsWithMember))
    }

    @Test("Header errors name the member and the offset of the faulty field")
    func headerErrors() {
        func error(_ bytes: [UInt8]) -> GzipError? {
            var parser = GzipHeaderParser(member: 3, offset: 100, maximumFieldLength: 4)
            do {
                for byte in bytes {
                    if try parser.consume(byte) { return nil }
                }
            } catch {
                return error
            }
            return nil
        }
        #expect(error([0x1f, 0x8c]) == .notGzip(offset: 100))
        #expect(error([0x1f, 0x8b, 7]) == .unsupportedMethod(7, member: 3, offset: 102))
        #expect(error([0x1f, 0x8b, 8, 0x20]) == .reservedFlags(0x20, member: 3, offset: 103))
        var withCRC = GzipFormat.encodeHeader(GzipHeader(hasHeaderCRC: true), level: 6)
        let stored = withCRC.withUnsafeBytes { GzipFormat.loadUInt16($0, at: 10) }
        withCRC[10] ^= 1
        #expect(error(withCRC) == .headerCRCMismatch(member: 3, stored: stored ^ 1, computed: stored, offset: 110))
    }

    @Test("FNAME longer than the kept length is cut and flagged, and still covered by FHCRC")
    func fieldCut() throws {
        let bytes = GzipFormat.encodeHeader(GzipHeader(fileName: Array("longer".utf8), hasHeaderCRC: true), level: 6)
        var parser = GzipHeaderParser(member: 1, offset: 0, maximumFieldLength: 4)
        var done = false
        for byte in bytes { done = try parser.consume(byte) }
        #expect(done && parser.isFieldCut && parser.header.fileName == Array("long".utf8))
    }

    @Test("The trailer: 8 bytes little-endian, read back, checked")
    func trailer() throws {
        let trailer = GzipTrailer(crc32: 0xdead_beef, plainSize: (1 << 32) + 5)
        #expect(trailer.encoded == [0xef, 0xbe, 0xad, 0xde, 5, 0, 0, 0])
        #expect(trailer.encoded.withUnsafeBytes { GzipTrailer(ofMember: $0) } == trailer)
        #expect(trailer.matches(crc32: 0xdead_beef, plainSize: 5))
        #expect(throws: GzipError.crcMismatch(member: 2, stored: 0xdead_beef, computed: 1, offset: 40)) {
            try trailer.check(crc32: 1, plainSize: 5, member: 2, offset: 40)
        }
        #expect(throws: GzipError.lengthMismatch(member: 2, stored: 5, computed: 6, offset: 44)) {
            try trailer.check(crc32: 0xdead_beef, plainSize: 6, member: 2, offset: 40)
        }
    }

    @Test("BGZF: the EOF member is htslib's 28 bytes; a written header frames and starts a member")
    func bgzf() {
        #expect(BGZFFormat.endOfFileMember == [
            0x1f, 0x8b, 0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x06, 0x00, 0x42, 0x43, 0x02, 0x00,
            0x1b, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ])
        let header = BGZFFormat.header(memberSize: 1000)
        #expect(header.withUnsafeBytes(BGZFFormat.startsWithMember))
        #expect(header.withUnsafeBytes { BGZFFrame.parse($0) } == .member(BGZFFrame(size: 1000, headerSize: 18)))
        #expect(BGZFFormat.endOfFileMember.withUnsafeBytes { BGZFFrame.header(of: $0, headerSize: 18) }
                == GzipHeader(extraFlags: 0, operatingSystem: 0xff, extraField: [0x42, 0x43, 2, 0, 0x1b, 0]))
        #expect(!GzipFormat.encodeHeader(GzipHeader(), level: 6).withUnsafeBytes(BGZFFormat.startsWithMember))
    }
}

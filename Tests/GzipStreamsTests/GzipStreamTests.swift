import ByteStreams
import Foundation
import Synchronization
@testable import GzipStreams
import Testing
import TestSupport

// MARK: - Round trips

@Suite("Round trips through GzipOutputStream and GzipInputStream", .onDedicatedThreads)
struct RoundTripTests {
    @Test("Every level 0...9 at the edge sizes, random and text data", arguments: 0...9)
    func everyLevelAtEdgeSizes(level: Int) throws {
        for size in edgeSizes {
            for (kind, data) in [("random", randomBytes(count: size, seed: UInt64(size))),
                                 ("text", textBytes(count: size, seed: UInt64(size)))] {
                let packed = try pack(data, level: level)
                // The trailer holds the CRC-32 and ISIZE of the data (RFC 1952 §2.3.1).
                #expect(littleEndianUInt32(packed, at: packed.count - 8) == referenceCRC32(data),
                        "level \(level), \(kind) \(size): trailer CRC-32")
                #expect(littleEndianUInt32(packed, at: packed.count - 4) == UInt32(size),
                        "level \(level), \(kind) \(size): trailer ISIZE")
                let stream = gunzipStream(packed)
                let unpacked = drain(stream)
                #expect(unpacked.error == nil, "level \(level), \(kind) \(size): \(String(describing: unpacked.error))")
                #expect(unpacked.bytes == data, "level \(level), \(kind) \(size): bytes differ")
                #expect(stream.memberCount == 1)
                #expect(stream.uncompressedByteCount == Int64(size))
                #expect(stream.compressedByteCount == Int64(packed.count))
                #expect(stream.streamStatus == .atEnd)
                stream.close()
            }
        }
    }

    @Test("GNU gzip -dc reads our output at levels 0, 1, 6, 9", .requires(.gzip))
    func gnuGzipReadsOurOutput() throws {
        try withTemporaryDirectory { directory in
            for level in [0, 1, 6, 9] {
                for size in [0, 1, 4097, (1 << 20) + 1] {
                    let data = size > 4097 ? textBytes(count: size) + randomBytes(count: 1000) : textBytes(count: size)
                    let path = try makeFile("level\(level)-\(size).gz", in: directory, bytes: try pack(data, level: level))
                    let result = try runProcess("/usr/bin/gzip", ["-dc", path])
                    #expect(result.status == 0, "level \(level), \(size) bytes: \(result.stderrText)")
                    #expect(result.stdout == data, "level \(level), \(size) bytes: gzip -dc gave other bytes")
                }
            }
        }
    }

    @Test("We read GNU gzip's output, with the name and MTIME it stores", .requires(.gzip))
    func weReadGnuGzipOutput() throws {
        try withTemporaryDirectory { directory in
            let data = textBytes(count: 100_000)
            let path = try makeFile("input.txt", in: directory, bytes: data)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)],
                                                  ofItemAtPath: path)
            for (flag, xfl) in [("-1", UInt8(4)), ("-6", UInt8(0)), ("-9", UInt8(2))] {
                let result = try runProcess("/usr/bin/gzip", ["-c", flag, path])
                #expect(result.status == 0)
                let stream = gunzipStream(result.stdout)
                let unpacked = drain(stream)
                stream.close()
                #expect(unpacked.error == nil)
                #expect(unpacked.bytes == data)
                let header = try #require(stream.header)
                #expect(header.fileNameString == "input.txt")
                #expect(header.modificationTime == 1_600_000_000)
                #expect(header.extraFlags == xfl, "gzip \(flag)")
                #expect(header.operatingSystem == 3)
                #expect(header.comment == nil && header.extraField == nil && !header.hasHeaderCRC)
            }
        }
    }

    @Test("Chunk sizes 1 and 7 on both sides, over data many chunks long", arguments: [1, 7])
    func tinyChunks(chunkSize: Int) throws {
        let data = textBytes(count: 40_000) + randomBytes(count: 3_000) + [UInt8](repeating: 0x61, count: 5_000)
        let packed = try pack(data, level: 6, chunkSize: chunkSize, writeSize: 333)
        #expect(packed == (try pack(data, level: 6)), "chunk size must not change the compressed bytes")
        for readSize in [1, 7, 65536] {
            let unpacked = unpack(packed, chunkSize: chunkSize, readSize: readSize)
            #expect(unpacked.error == nil, "chunk \(chunkSize), read \(readSize): \(String(describing: unpacked.error))")
            #expect(unpacked.bytes == data, "chunk \(chunkSize), read \(readSize)")
        }
        let oneByte = unpack(packed, chunkSize: chunkSize, readSize: 7, oneByteInner: true)
        #expect(oneByte.error == nil)
        #expect(oneByte.bytes == data)
    }

    @Test("Writes of every size from 1 byte up give the same member")
    func writeSizesDoNotMatter() throws {
        let data = textBytes(count: 20_000)
        let reference = try pack(data)
        for writeSize in [1, 2, 4095, 4096, 4097, 20_000] {
            #expect(try pack(data, writeSize: writeSize) == reference, "write size \(writeSize)")
        }
    }
}

// MARK: - Header fields

@Suite("Header fields written and read back (RFC 1952 §2.3.1)", .onDedicatedThreads, .requires(.gzip), .requires(.python3))
struct HeaderTests {
    /// Packs a short text with `header` at `level`, checks that our reader, GNU gzip and
    /// python3's zlib (which checks FHCRC) all decode it, and returns the packed bytes and the
    /// header our reader saw.
    private func packChecked(_ header: GzipHeader, level: Int = 6,
                             sourceLocation: SourceLocation = #_sourceLocation) throws -> ([UInt8], GzipHeader) {
        let data = textBytes(count: 3000)
        let packed = try pack(data, level: level, header: header)
        let stream = gunzipStream(packed)
        let unpacked = drain(stream)
        stream.close()
        #expect(unpacked.error == nil, "\(String(describing: unpacked.error))", sourceLocation: sourceLocation)
        #expect(unpacked.bytes == data, sourceLocation: sourceLocation)
        try withTemporaryDirectory { directory in
            let path = try makeFile("member.gz", in: directory, bytes: packed)
            let gzip = try runProcess("/usr/bin/gzip", ["-dc", path])
            #expect(gzip.status == 0, "gzip -dc: \(gzip.stderrText)", sourceLocation: sourceLocation)
            #expect(gzip.stdout == data, sourceLocation: sourceLocation)
            let python = try runProcess(python3, ["-c", """
                import sys, zlib
                sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], 'rb').read(), 31))
                """, path])
            #expect(python.status == 0, "python3 zlib: \(python.stderrText)", sourceLocation: sourceLocation)
            #expect(python.stdout == data, sourceLocation: sourceLocation)
        }
        return (packed, try #require(stream.header, sourceLocation: sourceLocation))
    }

    @Test("No optional field: a 10-byte header, FLG 0, OS 3 (Unix)")
    func plainHeader() throws {
        let (packed, header) = try packChecked(GzipHeader())
        #expect(Array(packed.prefix(10)) == [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])
        #expect(header == GzipHeader(extraFlags: 0))
        #expect(header.modificationDate == nil)
    }

    @Test("FTEXT")
    func text() throws {
        let (packed, header) = try packChecked(GzipHeader(isText: true))
        #expect(packed[3] == 0x01)
        #expect(header.isText)
    }

    @Test("MTIME, also checked by python3's gzip module")
    func modificationTime() throws {
        let mtime: UInt32 = 0xF123_4567 // after 2038: must stay unsigned
        let (packed, header) = try packChecked(GzipHeader(modificationTime: mtime))
        #expect(littleEndianUInt32(packed, at: 4) == mtime)
        #expect(header.modificationTime == mtime)
        #expect(header.modificationDate == Date(timeIntervalSince1970: TimeInterval(mtime)))
        try withTemporaryDirectory { directory in
            let path = try makeFile("mtime.gz", in: directory, bytes: packed)
            let python = try runProcess(python3, ["-c", """
                import gzip, sys
                f = gzip.open(sys.argv[1]); f.read(); print(f.mtime)
                """, path])
            #expect(python.status == 0, "\(python.stderrText)")
            #expect(python.stdoutText == "\(mtime)\n")
        }
    }

    @Test("XFL derived from the level: 9 → 2, 1 → 4, else 0",
          arguments: [(0, UInt8(0)), (1, 4), (2, 0), (5, 0), (6, 0), (8, 0), (9, 2)])
    func derivedExtraFlags(level: Int, expected: UInt8) throws {
        let (packed, header) = try packChecked(GzipHeader(), level: level)
        #expect(packed[8] == expected)
        #expect(header.extraFlags == expected)
    }

    @Test("XFL given explicitly wins over the level")
    func explicitExtraFlags() throws {
        let (packed, header) = try packChecked(GzipHeader(extraFlags: 2), level: 1)
        #expect(packed[8] == 2)
        #expect(header.extraFlags == 2)
        let (packed7, header7) = try packChecked(GzipHeader(extraFlags: 0x7f), level: 9)
        #expect(packed7[8] == 0x7f)
        #expect(header7.extraFlags == 0x7f)
    }

    @Test("OS", arguments: [UInt8(0), 3, 11, 255])
    func operatingSystem(os: UInt8) throws {
        let (packed, header) = try packChecked(GzipHeader(operatingSystem: os))
        #expect(packed[9] == os)
        #expect(header.operatingSystem == os)
    }

    @Test("FEXTRA: empty, one subfield, and the 65535-byte maximum")
    func extraField() throws {
        for extra in [[], [0x41, 0x70, 0x04, 0x00, 1, 2, 3, 4], randomBytes(count: 0xffff, seed: 9)] as [[UInt8]] {
            let (packed, header) = try packChecked(GzipHeader(extraField: extra))
            #expect(packed[3] == 0x04)
            #expect(Int(littleEndianUInt16(packed, at: 10)) == extra.count)
            #expect(Array(packed[12..<(12 + extra.count)]) == extra)
            #expect(header.extraField == extra)
        }
    }

    @Test("FNAME, also listed by gzip -lvN; ISO 8859-1 names stay one byte a character")
    func fileName() throws {
        let (packed, header) = try packChecked(GzipHeader(fileName: Array("hello.txt".utf8)))
        #expect(packed[3] == 0x08)
        #expect(Array(packed[10..<20]) == Array("hello.txt".utf8) + [0])
        #expect(header.fileNameString == "hello.txt")
        try withTemporaryDirectory { directory in
            let path = try makeFile("listed.gz", in: directory, bytes: packed)
            let list = try runProcess("/usr/bin/gzip", ["-lvN", path])
            #expect(list.status == 0, "\(list.stderrText)")
            let fields = list.stdoutText.split(separator: "\n").last?.split(separator: " ") ?? []
            // gzip -N lists the name as it would restore it: in the folder of the .gz file.
            #expect(fields.last.map(String.init) == directory.appendingPathComponent("hello.txt").path)
            #expect(fields.dropFirst().first == Substring(String(referenceCRC32(textBytes(count: 3000)), radix: 16)
                .leftPadded(to: 8)))
        }

        var latin1 = GzipHeader()
        latin1.fileNameString = "café.txt"
        #expect(latin1.fileName == [0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74])
        let (_, readLatin1) = try packChecked(latin1)
        #expect(readLatin1.fileNameString == "café.txt")
        #expect(readLatin1.fileName == latin1.fileName)

        var wide = GzipHeader()
        wide.fileNameString = "日本.txt" // not ISO 8859-1: stored as UTF-8, as gzip stores any name
        #expect(wide.fileName == Array("日本.txt".utf8))
        let (_, readWide) = try packChecked(wide)
        #expect(readWide.fileName == Array("日本.txt".utf8))
    }

    @Test("FNAME longer than 64 KiB: the first 64 KiB are kept, the data still decodes")
    func longFileName() throws {
        let name = [UInt8](repeating: 0x6e, count: GzipInputStream.maximumHeaderFieldLength + 1000)
        let (_, header) = try packChecked(GzipHeader(fileName: name, comment: Array("c".utf8), hasHeaderCRC: true))
        #expect(header.fileName?.count == GzipInputStream.maximumHeaderFieldLength)
        #expect(header.comment == Array("c".utf8))
        #expect(header.hasHeaderCRC)
    }

    @Test("FCOMMENT")
    func comment() throws {
        let (packed, header) = try packChecked(GzipHeader(comment: Array("made by a test".utf8)))
        #expect(packed[3] == 0x10)
        #expect(header.commentString == "made by a test")
        #expect(header.fileName == nil)
    }

    @Test("FHCRC: the low 16 bits of the header's CRC-32, checked by python3's zlib and GNU gzip")
    func headerCRC() throws {
        let (packed, header) = try packChecked(GzipHeader(hasHeaderCRC: true))
        #expect(packed[3] == 0x02)
        #expect(littleEndianUInt16(packed, at: 10) == UInt16(truncatingIfNeeded: referenceCRC32(packed.prefix(10))))
        #expect(header.hasHeaderCRC)
    }

    @Test("Every field at once")
    func everyField() throws {
        let written = GzipHeader(isText: true, modificationTime: 1_234_567_890, extraFlags: nil, operatingSystem: 11,
                                 extraField: [0x41, 0x42, 0x02, 0x00, 0xff, 0xfe], fileName: Array("all.txt".utf8),
                                 comment: Array("every flag".utf8), hasHeaderCRC: true)
        let (packed, header) = try packChecked(written, level: 9)
        #expect(packed[3] == 0x1f)
        var expected = written
        expected.extraFlags = 2
        #expect(header == expected)
        let headerLength = 10 + 2 + 6 + 8 + 11 + 2
        #expect(littleEndianUInt16(packed, at: headerLength - 2)
                == UInt16(truncatingIfNeeded: referenceCRC32(packed.prefix(headerLength - 2))))
    }
}

extension String {
    /// The string with zeros in front up to `width` characters.
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

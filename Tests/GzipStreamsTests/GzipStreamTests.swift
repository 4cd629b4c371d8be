import ByteStreams
import Foundation
import Synchronization
@testable import GzipStreams
import Testing

// MARK: - Round trips

@Suite("Round trips through GzipOutputStream and GzipInputStream")
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

@Suite("Header fields written and read back (RFC 1952 §2.3.1)", .requires(.gzip), .requires(.python3))
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

// MARK: - Sync flush

@Suite("flush(): a sync flush makes the data so far decodable")
struct FlushTests {
    @Test("After flush() the output ends 00 00 ff ff and a reader gets every byte written so far")
    func syncFlush() throws {
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory)
        try gzip.openOrThrow()
        let first = textBytes(count: 10_000)
        try gzip.writeAll(first)
        try gzip.flush()
        let soFar = [UInt8](memory.data)
        #expect(Array(soFar.suffix(4)) == [0x00, 0x00, 0xff, 0xff])
        // The stream is still open, so the bytes so far end without a last block or trailer:
        // the reader returns all the data, then reports the truncation.
        let partial = unpack(soFar, readSize: 1000)
        #expect(partial.bytes == first)
        #expect(partial.gzipError == .truncated(member: 1, part: .deflateData, offset: Int64(soFar.count)))

        let second = textBytes(count: 5, seed: 99)
        try gzip.writeAll(second)
        try gzip.flush()
        try gzip.flush() // twice in a row, with nothing new: harmless
        let soFar2 = [UInt8](memory.data)
        #expect(Array(soFar2.suffix(4)) == [0x00, 0x00, 0xff, 0xff])
        #expect(unpack(soFar2).bytes == first + second)

        try gzip.closeOrThrow()
        #expect(gzip.streamStatus == .closed)
        let whole = unpack([UInt8](memory.data))
        #expect(whole.error == nil)
        #expect(whole.bytes == first + second)
        #expect(throws: ByteStreamError(.notOpen, operation: "flush")) { try gzip.flush() }
    }

    /// zlib's manual: for a sync flush, "make sure that avail_out is greater than six to avoid
    /// repeated flush markers due to avail_out == 0 on return". With smaller output chunks a
    /// flush that loops while `avail_out == 0` never ends, emitting `00 00 ff ff` forever. The
    /// inner stream here is a fixed 1 MiB buffer, so such a loop ends in `noSpaceAvailable`
    /// rather than hanging the test run; a correct flush of 3000 bytes needs about 2 KB.
    @Test("flush() with output chunks of 1 to 7 bytes", arguments: [1, 2, 5, 6, 7])
    func flushWithTinyChunks(chunkSize: Int) throws {
        let capacity = 1 << 20
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        let memory = MemoryOutputStream(buffer: buffer, capacity: capacity)
        let gzip = try GzipOutputStream(wrapping: memory, chunkSize: chunkSize)
        try gzip.openOrThrow()
        let data = textBytes(count: 3000)
        try gzip.writeAll(data)
        #expect(throws: Never.self, "chunkSize \(chunkSize): flush() must end") { try gzip.flush() }
        try #require(gzip.streamStatus == .open)
        let soFar = [UInt8](memory.data)
        #expect(soFar.count < 4000, "chunkSize \(chunkSize): one flush wrote \(soFar.count) bytes")
        #expect(Array(soFar.suffix(4)) == [0x00, 0x00, 0xff, 0xff])
        #expect(unpack(soFar).bytes == data)
        try gzip.writeAll(data)
        try gzip.closeOrThrow()
        let whole = unpack([UInt8](memory.data), chunkSize: chunkSize)
        #expect(whole.error == nil)
        #expect(whole.bytes == data + data)
    }

    @Test("flush() right after open, before any data")
    func flushBeforeData() throws {
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory)
        try gzip.openOrThrow()
        try gzip.flush()
        #expect(Array([UInt8](memory.data).suffix(4)) == [0x00, 0x00, 0xff, 0xff])
        try gzip.writeAll(Array("after".utf8))
        try gzip.closeOrThrow()
        let unpacked = unpack([UInt8](memory.data))
        #expect(unpacked.error == nil)
        #expect(unpacked.bytes == Array("after".utf8))
    }
}

// MARK: - Members, padding and trailing data

@Suite("Multi-member input, zero padding and trailing garbage (RFC 1952 §2.2)")
struct MultiMemberTests {
    let firstData = textBytes(count: 5000, seed: 11)
    let secondData = randomBytes(count: 3000, seed: 12)

    /// Two members written by two GzipOutputStreams into one MemoryOutputStream.
    func twoMembers() throws -> (bytes: [UInt8], firstLength: Int) {
        let memory = MemoryOutputStream()
        let one = try GzipOutputStream(wrapping: memory, level: 9, header: GzipHeader(fileName: Array("one".utf8)),
                                       closesInnerStream: false)
        try one.openOrThrow()
        try one.writeAll(firstData)
        try one.closeOrThrow()
        #expect(memory.streamStatus == .open, "closesInnerStream: false must leave the inner stream open")
        let firstLength = memory.writtenCount
        let two = try GzipOutputStream(wrapping: memory, level: 1, header: GzipHeader(fileName: Array("two".utf8)),
                                       closesInnerStream: false)
        try two.openOrThrow()
        try two.writeAll(secondData)
        try two.closeOrThrow()
        memory.close()
        return ([UInt8](memory.data), firstLength)
    }

    @Test("Two members read as one stream; memberHandler sees each with offsets, sizes and CRC-32")
    func twoMembersInOneStream() throws {
        let (bytes, firstLength) = try twoMembers()
        let stream = gunzipStream(bytes)
        var members: [GzipInputStream.Member] = []
        stream.memberHandler = { members.append($0) }
        let unpacked = drain(stream, readSize: 777)
        #expect(unpacked.error == nil)
        #expect(unpacked.bytes == firstData + secondData)
        #expect(stream.memberCount == 2)
        #expect(stream.header?.fileNameString == "one", "header is the first member's")
        #expect(stream.compressedByteCount == Int64(bytes.count))
        try #require(members.count == 2)
        #expect(members[0] == GzipInputStream.Member(
            index: 1, offset: 0, header: GzipHeader(extraFlags: 2, fileName: Array("one".utf8)),
            compressedSize: Int64(firstLength), uncompressedSize: Int64(firstData.count),
            crc32: referenceCRC32(firstData), headerSize: 14))
        #expect(members[1] == GzipInputStream.Member(
            index: 2, offset: Int64(firstLength), header: GzipHeader(extraFlags: 4, fileName: Array("two".utf8)),
            compressedSize: Int64(bytes.count - firstLength), uncompressedSize: Int64(secondData.count),
            crc32: referenceCRC32(secondData), headerSize: 14))
        stream.close()
    }

    @Test("Empty members count as members and give no bytes")
    func emptyMembers() throws {
        let empty = try pack([])
        let data = try pack(Array("x".utf8))
        let stream = gunzipStream(empty + data + empty + empty)
        var sizes: [Int64] = []
        stream.memberHandler = { sizes.append($0.uncompressedSize) }
        let unpacked = drain(stream)
        #expect(unpacked.error == nil)
        #expect(unpacked.bytes == Array("x".utf8))
        #expect(stream.memberCount == 4)
        #expect(sizes == [0, 1, 0, 0])
    }

    @Test("Zero padding after the last member is skipped", arguments: [1, 7, 4096, 10_000])
    func zeroPadding(count: Int) throws {
        let (bytes, _) = try twoMembers()
        let padded = bytes + [UInt8](repeating: 0, count: count)
        for chunkSize in [7, 4096] {
            let stream = gunzipStream(padded, chunkSize: chunkSize)
            let unpacked = drain(stream)
            #expect(unpacked.error == nil, "\(String(describing: unpacked.error))")
            #expect(unpacked.bytes == firstData + secondData)
            #expect(stream.memberCount == 2)
            #expect(stream.trailingGarbage == nil)
            #expect(stream.compressedByteCount == Int64(padded.count))
            stream.close()
        }
    }

    @Test("Trailing garbage under .fail: every member's byte first, then the exact offset and length",
          arguments: [Array("x".utf8), Array("garbage!\n".utf8), [0xff], [0x1f], [0x1f, 0x41],
                      [0, 0, 0, 0x41, 0x42], [UInt8](repeating: 0x41, count: 10_000)])
    func trailingGarbageFails(garbage: [UInt8]) throws {
        let (bytes, _) = try twoMembers()
        // A lone 1f may be the start of a header cut short: the reader may call it truncated.
        for chunkSize in [1, 7, 4096] {
            let stream = gunzipStream(bytes + garbage, chunkSize: chunkSize)
            let unpacked = drain(stream, readSize: 1000)
            #expect(unpacked.bytes == firstData + secondData, "chunk \(chunkSize)")
            if garbage == [0x1f] {
                #expect(unpacked.gzipError == .truncated(member: 3, part: .header, offset: Int64(bytes.count + 1)))
            } else {
                #expect(unpacked.gzipError == .trailingGarbage(offset: Int64(bytes.count), length: Int64(garbage.count)),
                        "chunk \(chunkSize): \(String(describing: unpacked.error))")
                #expect(stream.trailingGarbage == GzipInputStream.TrailingGarbage(offset: Int64(bytes.count),
                                                                                  length: Int64(garbage.count)))
            }
            #expect(stream.streamStatus == .error)
            #expect(stream.memberCount == 2)
            stream.close()
        }
    }

    @Test("Trailing garbage under .ignore: a clean end, with trailingGarbage set")
    func trailingGarbageIgnored() throws {
        let (bytes, _) = try twoMembers()
        for garbage in [Array("x".utf8), [0x1f, 0x41], [0, 0x41], [UInt8](repeating: 0x41, count: 10_000)] {
            let stream = gunzipStream(bytes + garbage, chunkSize: 7, trailingGarbage: .ignore)
            let unpacked = drain(stream)
            #expect(unpacked.error == nil, "\(String(describing: unpacked.error))")
            #expect(unpacked.bytes == firstData + secondData)
            #expect(stream.streamStatus == .atEnd)
            #expect(stream.trailingGarbage == GzipInputStream.TrailingGarbage(offset: Int64(bytes.count),
                                                                              length: Int64(garbage.count)))
            #expect(stream.memberCount == 2)
            stream.close()
            #expect(stream.streamStatus == .closed)
        }
    }

    @Test("Under .passThrough what is not gzip comes out unchanged, at the start or after a member (gzip -cdf)",
          arguments: [GzipInputStream.Inflater.zlib, .isal])
    func passThrough(inflater: GzipInputStream.Inflater) throws {
        let (bytes, _) = try twoMembers()
        let members = firstData + secondData
        let plain = Array("plain text\n".utf8)
        let noise = randomBytes(count: 10_000, seed: 31)
        // input, the bytes expected, members decoded
        let cases: [([UInt8], [UInt8], Int)] = [
            ([], [], 0),
            (plain, plain, 0),
            ([0x1f], [0x1f], 0),
            ([0x1f, 0x41], [0x1f, 0x41], 0),
            ([0, 0, 0], [0, 0, 0], 0),
            ([0x8b] + noise, [0x8b] + noise, 0),
            (plain + bytes, plain + bytes, 0),
            (bytes, members, 2),
            (bytes + plain, members + plain, 2),
            (bytes + [0, 0] + plain, members + [0, 0] + plain, 2),
            (bytes + [0, 0, 0], members + [0, 0, 0], 2),
            (bytes + [0x1f], members + [0x1f], 2),
            (bytes + [0x1f, 0x41] + noise, members + [0x1f, 0x41] + noise, 2),
        ]
        for (input, expected, memberCount) in cases {
            for (chunkSize, readSize) in [(1, 1), (7, 1000), (4096, 64 * 1024)] {
                let stream = gunzipStream(input, chunkSize: chunkSize, trailingGarbage: .passThrough, inflater: inflater)
                let decoded = drain(stream, readSize: readSize)
                let label = "\(input.count) bytes in, chunk \(chunkSize), read \(readSize)"
                #expect(decoded.error == nil, "\(label): \(String(describing: decoded.error))")
                #expect(decoded.bytes == expected, "\(label)")
                #expect(stream.memberCount == memberCount && stream.trailingGarbage == nil, "\(label)")
                #expect(stream.uncompressedByteCount == Int64(expected.count), "\(label)")
                #expect(stream.compressedByteCount == Int64(input.count), "\(label)")
                stream.close()
            }
        }
        // Bytes that begin with the magic must still be a valid member, as for gzip -cdf.
        let cut = unpack(bytes + [0x1f, 0x8b], trailingGarbage: .passThrough, inflater: inflater)
        #expect(cut.bytes == members)
        #expect(cut.gzipError == .truncated(member: 3, part: .header, offset: Int64(bytes.count + 2)))
        // The output limit counts the bytes passed through.
        for limit in [0, 5, Int64(members.count), Int64(members.count) + 3] {
            let limited = unpack(bytes + plain, readSize: 4, trailingGarbage: .passThrough, maximumOutputSize: limit,
                                 inflater: inflater)
            #expect(limited.bytes == Array((members + plain).prefix(Int(limit))), "limit \(limit)")
            #expect(limited.gzipError?.kind == "output-limit", "limit \(limit)")
        }
    }

    @Test("Bytes after a member that start with 1f 8b must be a valid member, even under .ignore",
          arguments: [GzipInputStream.TrailingGarbagePolicy.fail, .ignore])
    func magicAfterMemberMustBeAMember(policy: GzipInputStream.TrailingGarbagePolicy) throws {
        let member = try pack(firstData)
        let end = Int64(member.count)
        let cases: [([UInt8], GzipError)] = [
            ([0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3], .unsupportedMethod(7, member: 2, offset: end + 2)),
            ([0x1f, 0x8b, 8, 0x40, 0, 0, 0, 0, 0, 3, 1, 2, 3], .reservedFlags(0x40, member: 2, offset: end + 3)),
            ([0x1f, 0x8b, 8, 0], .truncated(member: 2, part: .header, offset: end + 4)),
            ([0x1f, 0x8b], .truncated(member: 2, part: .header, offset: end + 2)),
            ([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff],
             .invalidDeflateData(member: 2, message: "invalid block type", offset: end + 11)),
            ([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x03, 0x00, 0, 0, 0, 0, 1, 0, 0, 0],
             .lengthMismatch(member: 2, stored: 1, computed: 0, offset: end + 16)),
        ]
        for (tail, expected) in cases {
            let unpacked = unpack(member + tail, trailingGarbage: policy)
            #expect(unpacked.bytes == firstData)
            #expect(unpacked.gzipError == expected, "tail \(tail): \(String(describing: unpacked.error))")
        }
    }
}

// MARK: - Errors made on purpose

@Suite("Each error kind, made on purpose from a valid member")
struct ErrorTests {
    let data = textBytes(count: 2000, seed: 21)

    func member() throws -> [UInt8] { try pack(data) }

    func failure(_ bytes: [UInt8], maximumOutputSize: Int64? = nil) -> Decoded {
        unpack(bytes, maximumOutputSize: maximumOutputSize)
    }

    @Test("Empty input")
    func emptyInput() {
        let result = failure([])
        #expect(result.gzipError == .emptyInput)
        #expect(result.gzipError?.kind == "empty-input")
        #expect(result.gzipError?.offset == nil)
    }

    @Test("Bad magic, in either byte")
    func badMagic() throws {
        var first = try member()
        first[0] = 0x1e
        #expect(failure(first).gzipError == .notGzip(offset: 0))
        var second = try member()
        second[1] = 0x8c
        #expect(failure(second).gzipError == .notGzip(offset: 0))
        #expect(failure([0x1f]).gzipError?.kind == "truncated")
        #expect(failure(Array("plain text".utf8)).gzipError?.kind == "bad-magic")
    }

    @Test("Unsupported method")
    func unsupportedMethod() throws {
        var bytes = try member()
        bytes[2] = 7
        let error = failure(bytes).gzipError
        #expect(error == .unsupportedMethod(7, member: 1, offset: 2))
        #expect(error?.kind == "bad-header")
    }

    @Test("Reserved flag bits", arguments: [UInt8(0x20), 0x40, 0x80, 0xe0])
    func reservedFlags(bit: UInt8) throws {
        var bytes = try member()
        bytes[3] |= bit
        let error = failure(bytes).gzipError
        #expect(error == .reservedFlags(bit, member: 1, offset: 3))
        #expect(error?.kind == "bad-header")
    }

    @Test("Header CRC mismatch, with stored and computed values")
    func headerCRCMismatch() throws {
        var bytes = try pack(data, header: GzipHeader(fileName: Array("f".utf8), hasHeaderCRC: true))
        let fieldOffset = 10 + 2
        let computed = littleEndianUInt16(bytes, at: fieldOffset)
        bytes[fieldOffset] ^= 0x5a
        let error = failure(bytes).gzipError
        #expect(error == .headerCRCMismatch(member: 1, stored: computed ^ 0x5a, computed: computed,
                                            offset: Int64(fieldOffset)))
        #expect(error?.kind == "header-crc")
        // A changed header byte, with the stored CRC left alone, is caught too.
        var renamed = try pack(data, header: GzipHeader(fileName: Array("f".utf8), hasHeaderCRC: true))
        renamed[10] = UInt8(ascii: "g")
        #expect(failure(renamed).gzipError?.kind == "header-crc")
    }

    @Test("Truncated in the header, the deflate data and the trailer")
    func truncated() throws {
        let bytes = try member()
        #expect(failure(Array(bytes.prefix(5))).gzipError == .truncated(member: 1, part: .header, offset: 5))
        #expect(failure(Array(bytes.prefix(10))).gzipError == .truncated(member: 1, part: .deflateData, offset: 10))
        #expect(failure(Array(bytes.prefix(12))).gzipError == .truncated(member: 1, part: .deflateData, offset: 12))
        let cut = bytes.count - 3
        #expect(failure(Array(bytes.prefix(cut))).gzipError == .truncated(member: 1, part: .trailer, offset: Int64(cut)))
        #expect(failure(Array(bytes.prefix(bytes.count - 8))).gzipError
                == .truncated(member: 1, part: .trailer, offset: Int64(bytes.count - 8)))
        #expect(failure(Array(bytes.prefix(1))).gzipError?.kind == "truncated")
    }

    @Test("Invalid deflate data, with zlib's message")
    func invalidDeflateData() throws {
        var bytes = try member()
        bytes[10] = 0x07 // BFINAL 1, BTYPE 11: reserved (RFC 1951 §3.2.3)
        let error = failure(bytes).gzipError
        #expect(error == .invalidDeflateData(member: 1, message: "invalid block type", offset: 11))
        #expect(error?.kind == "invalid-deflate")
    }

    @Test("CRC-32 mismatch, with stored and computed values")
    func crcMismatch() throws {
        var bytes = try member()
        let at = bytes.count - 8
        bytes[at] ^= 0xff
        let result = failure(bytes)
        let computed = referenceCRC32(data)
        #expect(result.gzipError == .crcMismatch(member: 1, stored: computed ^ 0xff, computed: computed, offset: Int64(at)))
        #expect(result.gzipError?.kind == "crc-mismatch")
        #expect(result.bytes == data, "data is tentative: it is all returned before the trailer is checked")
        #expect(result.gzipError?.description.contains(String(computed, radix: 16)) == true)
    }

    @Test("ISIZE mismatch")
    func lengthMismatch() throws {
        var bytes = try member()
        let at = bytes.count - 4
        bytes[at] &+= 1
        let error = failure(bytes).gzipError
        #expect(error == .lengthMismatch(member: 1, stored: UInt32(data.count) + 1, computed: UInt32(data.count),
                                         offset: Int64(at)))
        #expect(error?.kind == "length-mismatch")
    }

    @Test("An error in the second member names member 2 and its offset")
    func errorInSecondMember() throws {
        let first = try member()
        var second = try pack(Array("second".utf8))
        second[second.count - 8] ^= 1
        let result = failure(first + second)
        let crc = referenceCRC32(Array("second".utf8))
        #expect(result.gzipError == .crcMismatch(member: 2, stored: crc ^ 1, computed: crc,
                                                 offset: Int64(first.count + second.count - 8)))
        #expect(result.bytes == data + Array("second".utf8))
    }

    @Test("The decompression limit: maximumOutputSize")
    func outputLimit() throws {
        let bytes = try member()
        let size = Int64(data.count)
        for limit in [0, 1, size - 1] {
            let result = failure(bytes, maximumOutputSize: limit)
            guard case .outputLimitExceeded(let reported, let offset)? = result.gzipError else {
                Issue.record("expected outputLimitExceeded, got \(String(describing: result.error))")
                continue
            }
            #expect(reported == limit)
            #expect(offset > 0 && offset <= Int64(bytes.count), "the offset lies in the input")
            #expect(result.gzipError?.kind == "output-limit")
            #expect(Int64(result.bytes.count) == limit, "exactly the limit's bytes come out")
        }
        // Exactly `limit` bytes whatever the chunk and read sizes and the inflater (the attack
        // run saw 0 to 64 KiB short of it, varying from run to run through the CLI).
        let long = try pack(mixedBytes(count: 300_000, seed: 41))
        for inflater in [GzipInputStream.Inflater.isal, .zlib] {
            for (chunkSize, readSize) in [(4096, 65536), (1, 1), (100, 7), (65536, 131_072)] {
                for limit: Int64 in [0, 1, 4095, 4096, 100_000, 299_999] {
                    let stream = gunzipStream(long, chunkSize: chunkSize, maximumOutputSize: limit, inflater: inflater)
                    let result = drain(stream, readSize: readSize)
                    #expect(Int64(result.bytes.count) == limit && result.gzipError?.kind == "output-limit",
                            "\(inflater), chunk \(chunkSize), reads of \(readSize), limit \(limit): \(result.bytes.count) bytes")
                    #expect(stream.uncompressedByteCount == Int64(result.bytes.count))
                    stream.close()
                }
            }
        }
        let exact = failure(bytes, maximumOutputSize: size)
        #expect(exact.error == nil)
        #expect(exact.bytes == data)
        let stream = gunzipStream(bytes, maximumOutputSize: 10)
        #expect(stream.maximumOutputSize == 10)
        #expect(failure(try pack([]), maximumOutputSize: 0).error == nil)
        // Across members: the limit counts the whole output.
        let twice = failure(bytes + bytes, maximumOutputSize: size + 1)
        guard case .outputLimitExceeded(let reported, let offset)? = twice.gzipError else {
            Issue.record("expected outputLimitExceeded across members, got \(String(describing: twice.error))")
            return
        }
        #expect(reported == size + 1)
        #expect(offset > Int64(bytes.count), "found in the second member")
    }

    @Test("maximumOutputSize: .max is no limit at all, and must not overflow")
    func largestLimit() async {
        // Run in a child process: GzipInputStream.swift computes `limit - uncompressedByteCount + 1`,
        // which traps for Int64.max.
        await #expect(processExitsWith: .success) {
            let data = textBytes(count: 1000)
            let packed = try pack(data)
            let result = unpack(packed, maximumOutputSize: .max)
            precondition(result.error == nil && result.bytes == data, "Int64.max limit failed")
        }
    }

    @Test("An I/O error of the inner stream comes through unchanged, after the bytes before it")
    func innerStreamError() throws {
        let data = textBytes(count: 50_000)
        let packed = try pack(data)
        let failAt = packed.count / 2
        let stream = try GzipInputStream(wrapping: FailingInputStream(bytes: packed, failAt: failAt), chunkSize: 100)
        let result = drain(stream, readSize: 500)
        #expect(result.error as? ByteStreamError == FailingInputStream.failure)
        #expect(data.starts(with: result.bytes))
        #expect(!result.bytes.isEmpty)
        #expect(stream.compressedByteCount <= Int64(failAt))
        stream.close()
    }

    @Test("Messages say what, where and why")
    func descriptions() {
        #expect(GzipError.crcMismatch(member: 2, stored: 0x2d3b_08af, computed: 0x9e1c_0b51, offset: 77).description
                == "CRC-32 mismatch in member 2 at byte 77 (stored 2d3b08af, computed 9e1c0b51)")
        #expect(GzipError.headerCRCMismatch(member: 1, stored: 0xab, computed: 0x1234, offset: 12).description
                == "header CRC mismatch in member 1 at byte 12 (stored 00ab, computed 1234)")
        #expect(GzipError.truncated(member: 3, part: .deflateData, offset: 9).description
                == "unexpected end of input in the deflate data of member 3 at byte 9")
        #expect(GzipError.notGzip(offset: 0).description == "not in gzip format (bad magic at byte 0)")
        #expect(GzipError.reservedFlags(0x20, member: 1, offset: 3).description.contains("FLG 20"))
        #expect(GzipError.trailingGarbage(offset: 40, length: 3).offset == 40)
    }

    @Test("A missing file is the inner stream's I/O error, not a GzipError")
    func missingFile() throws {
        let stream = try GzipInputStream(wrapping: FileInputStream(path: "/nonexistent/gzstream/none.gz"))
        stream.open()
        #expect(stream.streamStatus == .error)
        let error = stream.streamError as? ByteStreamError
        #expect(error?.errno == ENOENT)
        #expect(currentZStream(of: stream) == nil)
        stream.close()
    }
}

// MARK: - Every prefix of valid files

@Suite("Every prefix of a valid file is an error, never success")
struct PrefixTests {
    struct Sample: CustomTestStringConvertible, Sendable {
        var name: String
        /// The members' data, each packed with its level and header.
        var members: [([UInt8], Int, GzipHeader)]
        var testDescription: String { name }
    }

    static let samples: [Sample] = [
        Sample(name: "single member, dynamic blocks", members: [(textBytes(count: 3000), 9, GzipHeader())]),
        Sample(name: "stored blocks (level 0)", members: [(randomBytes(count: 700), 0, GzipHeader())]),
        Sample(name: "FNAME, FEXTRA, FCOMMENT, FHCRC", members: [
            (textBytes(count: 500), 6, GzipHeader(isText: true, modificationTime: 42, extraField: [1, 2, 3],
                                                  fileName: Array("name".utf8), comment: Array("note".utf8),
                                                  hasHeaderCRC: true)),
        ]),
        Sample(name: "empty member", members: [([], 6, GzipHeader())]),
        Sample(name: "three members, stored and dynamic, with headers", members: [
            (textBytes(count: 400), 9, GzipHeader(fileName: Array("a".utf8), hasHeaderCRC: true)),
            (randomBytes(count: 100), 0, GzipHeader(extraField: [9, 9])),
            (Array("tail".utf8), 1, GzipHeader(comment: Array("c".utf8))),
        ]),
    ]

    @Test("Each prefix: `truncated` at the prefix's length, in the right part; member ends decode", arguments: samples)
    func everyPrefix(sample: Sample) throws {
        var file: [UInt8] = []
        var data: [UInt8] = []
        /// For each member: where it starts, its header length, where its trailer starts, where it ends.
        var layout: [(start: Int, headerEnd: Int, trailerStart: Int, end: Int, dataEnd: Int)] = []
        for (memberData, level, header) in sample.members {
            let packed = try pack(memberData, level: level, header: header)
            let headerLength = header.encoded(level: level).count
            layout.append((file.count, file.count + headerLength, file.count + packed.count - 8,
                           file.count + packed.count, data.count + memberData.count))
            file += packed
            data += memberData
        }
        #expect(unpack(file).bytes == data)
        for length in 0..<file.count {
            let result = unpack(Array(file.prefix(length)))
            if length == 0 {
                #expect(result.gzipError == .emptyInput)
                continue
            }
            if let ended = layout.firstIndex(where: { $0.end == length }) {
                // A prefix that ends exactly after a member is itself a valid file.
                #expect(result.error == nil, "prefix \(length): \(String(describing: result.error))")
                #expect(result.bytes == Array(data.prefix(layout[ended].dataEnd)))
                continue
            }
            let index = layout.firstIndex { length < $0.end }!
            let member = layout[index]
            let part: GzipError.MemberPart = length < member.headerEnd ? .header
                : length < member.trailerStart ? .deflateData : .trailer
            #expect(result.gzipError == .truncated(member: index + 1, part: part, offset: Int64(length)),
                    "prefix \(length) of \(file.count): \(String(describing: result.error))")
            #expect(data.starts(with: result.bytes), "prefix \(length): bytes returned are not a prefix of the data")
        }
    }
}

// MARK: - Status, sticky errors and the z_stream lifecycle

/// Serialized: the z_stream counts below would be disturbed by another test of this suite
/// creating or ending streams at the same moment. Tests of other suites may still run at the
/// same time, so the exact proofs use the `ZStream` instance of each stream (`isLive`, and a
/// weak reference that must empty when the stream goes); ``ZStream/liveCount`` is compared
/// over a window retried until no other test moved it (see `liveCountBalances`).
@Suite("Status, sticky errors and the z_stream lifecycle", .serialized)
struct LifecycleTests {
    let data = textBytes(count: 20_000, seed: 31)

    @Test("Errors are sticky: later reads return -1 with the same error, and close keeps it")
    func stickyErrors() throws {
        var bytes = try pack(data)
        bytes[bytes.count - 8] ^= 1
        let stream = gunzipStream(bytes)
        let first = drain(stream)
        let error = try #require(first.gzipError)
        #expect(error.kind == "crc-mismatch")
        var buffer = [UInt8](repeating: 0, count: 16)
        for _ in 0..<3 {
            #expect(stream.read(&buffer, maxLength: buffer.count) == -1)
            #expect(stream.streamError as? GzipError == error)
            #expect(stream.streamStatus == .error)
        }
        #expect(throws: error) { try stream.readChunk() }
        stream.close()
        #expect(stream.streamStatus == .error)
        #expect(stream.streamError as? GzipError == error)
        #expect(stream.read(&buffer, maxLength: buffer.count) == -1)
        #expect(throws: error) { try stream.closeOrThrow() }
    }

    @Test("Reading after close returns -1 without crashing; closing twice is harmless")
    func readAfterClose() throws {
        let packed = try pack(data)
        for readFirst in [0, 100, data.count + 1] {
            let inner = MemoryInputStream(bytes: packed)
            let stream = try GzipInputStream(wrapping: inner)
            stream.open()
            var buffer = [UInt8](repeating: 0, count: max(1, readFirst))
            if readFirst > 0 { #expect(stream.read(&buffer, maxLength: readFirst) > 0) }
            stream.close()
            #expect(stream.streamStatus == .closed)
            #expect(inner.streamStatus == .closed, "closesInnerStream defaults to true")
            #expect(stream.read(&buffer, maxLength: max(1, readFirst)) == -1)
            #expect((stream.streamError as? ByteStreamError)?.code == .notOpen)
            stream.close()
            #expect(stream.streamStatus == .closed)
        }
        let never = gunzipStream(packed)
        never.close()
        never.close()
        #expect(never.streamStatus == .closed)
    }

    @Test("closesInnerStream: false leaves the inner stream open, on both sides")
    func innerStreamLeftOpen() throws {
        let packed = try pack(data)
        let inner = MemoryInputStream(bytes: packed + packed)
        let stream = try GzipInputStream(wrapping: inner, closesInnerStream: false)
        var buffer = [UInt8](repeating: 0, count: 10)
        stream.open()
        #expect(stream.read(&buffer, maxLength: 10) == 10)
        stream.close()
        #expect(inner.streamStatus == .open)
        inner.close()

        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, closesInnerStream: false)
        try gzip.openOrThrow()
        try gzip.closeOrThrow()
        #expect(memory.streamStatus == .open)
        let closing = try GzipOutputStream(wrapping: memory)
        try closing.openOrThrow()
        try closing.closeOrThrow()
        #expect(memory.streamStatus == .closed)
    }

    @Test("Each stream's z_stream is live while open and ended by close, after success and after errors")
    func zstreamEndedByClose() throws {
        let good = try pack(data)
        var bad = good
        bad[bad.count - 8] ^= 1
        for input in [good, bad, Array(good.prefix(100)), [UInt8]()] {
            let stream = gunzipStream(input)
            #expect(currentZStream(of: stream) == nil, "no z_stream before open")
            stream.open()
            let zstream = try #require(currentZStream(of: stream))
            #expect(zstream.isLive)
            _ = drain(stream)
            #expect(zstream.isLive, "still live until close, after the end or an error")
            stream.close()
            #expect(!zstream.isLive)
            #expect(currentZStream(of: stream) == nil)
            stream.close()
            #expect(!zstream.isLive)
        }

        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory)
        try gzip.openOrThrow()
        let zstream = try #require(currentZStream(of: gzip))
        #expect(zstream.isLive)
        try gzip.writeAll(data)
        try gzip.closeOrThrow()
        #expect(!zstream.isLive)
    }

    @Test("A stream dropped without close ends its z_stream when it is deallocated")
    func zstreamEndedByDeinit() throws {
        let packed = try pack(data)
        var inputProbe = Weak<ZStream>()
        var outputProbe = Weak<ZStream>()
        do {
            let stream = gunzipStream(packed)
            stream.open()
            var buffer = [UInt8](repeating: 0, count: 100)
            #expect(stream.read(&buffer, maxLength: 100) == 100)
            inputProbe.object = currentZStream(of: stream)
            #expect(inputProbe.object?.isLive == true)

            let gzip = try GzipOutputStream(wrapping: MemoryOutputStream())
            try gzip.openOrThrow()
            try gzip.writeAll(data)
            outputProbe.object = currentZStream(of: gzip)
            #expect(outputProbe.object?.isLive == true)
        }
        // ZStream's deinit always calls end(), so a deallocated ZStream was ended.
        #expect(inputProbe.object == nil)
        #expect(outputProbe.object == nil)
    }

    /// Runs `body` until ``ZStream/liveCount`` is the same after it as before it (see
    /// `countBalances`).
    private func liveCountBalances(_ body: () throws -> Void) rethrows -> Bool {
        try countBalances({ ZStream.liveCount.load(ordering: .sequentiallyConsistent) }, around: body)
    }

    @Test("ZStream.liveCount returns to its starting value after close, deinit and errors")
    func liveCountReturns() throws {
        let good = try pack(data)
        var bad = good
        bad[20] ^= 0xff
        let balanced = try liveCountBalances {
            for input in [good, bad, Array(good.prefix(50)), [], Array("not gzip".utf8)] {
                let closed = gunzipStream(input)
                _ = drain(closed)
                closed.close()
                _ = drain(gunzipStream(input)) // dropped without close
            }
            let gzip = try GzipOutputStream(wrapping: MemoryOutputStream())
            try gzip.openOrThrow()
            try gzip.writeAll(data)
            try gzip.closeOrThrow()
            let dropped = try GzipOutputStream(wrapping: MemoryOutputStream())
            try dropped.openOrThrow()
            try dropped.writeAll(data)
        }
        #expect(balanced, "liveCount never came back to its starting value in 50 tries")

        // The count does move: one open stream adds one (seen in a quiet window).
        var rose = false
        for _ in 0..<50 where !rose {
            let before = ZStream.liveCount.load(ordering: .sequentiallyConsistent)
            let stream = gunzipStream(good)
            stream.open()
            let during = ZStream.liveCount.load(ordering: .sequentiallyConsistent)
            stream.close()
            let after = ZStream.liveCount.load(ordering: .sequentiallyConsistent)
            rose = during == before + 1 && after == before
        }
        #expect(rose)
    }

    @Test("GzipOutputStream whose inner fixed buffer fills: close reports the inner error as .error")
    func closeWhenInnerFails() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 10)
        defer { buffer.deallocate() }
        let inner = MemoryOutputStream(buffer: buffer, capacity: 10)
        let gzip = try GzipOutputStream(wrapping: inner)
        try gzip.openOrThrow() // the 10-byte header just fits
        #expect(inner.writtenCount == 10)
        try gzip.writeAll(Array("short".utf8)) // deflate keeps it: nothing to write yet
        let zstream = try #require(currentZStream(of: gzip))
        gzip.close()
        #expect(gzip.streamStatus == .error)
        let error = gzip.streamError as? ByteStreamError
        #expect(error?.code == .noSpaceAvailable, "\(String(describing: gzip.streamError))")
        #expect(!zstream.isLive)
        #expect(throws: ByteStreamError.self) { try gzip.closeOrThrow() }
        var byte: UInt8 = 0
        #expect(gzip.write(&byte, maxLength: 1) == -1)
    }

    @Test("GzipOutputStream whose inner buffer cannot hold the header: open fails, close still ends zlib")
    func openWhenInnerFails() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 5)
        defer { buffer.deallocate() }
        let gzip = try GzipOutputStream(wrapping: MemoryOutputStream(buffer: buffer, capacity: 5))
        gzip.open()
        #expect(gzip.streamStatus == .error)
        #expect((gzip.streamError as? ByteStreamError)?.code == .noSpaceAvailable)
        let zstream = currentZStream(of: gzip)
        gzip.close()
        #expect(zstream?.isLive != true)
        #expect(gzip.streamStatus == .error)
    }

    @Test("GzipOutputStream whose inner buffer fills during a large write: -1, then close keeps the error")
    func writeWhenInnerFails() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 100)
        defer { buffer.deallocate() }
        let gzip = try GzipOutputStream(wrapping: MemoryOutputStream(buffer: buffer, capacity: 100))
        try gzip.openOrThrow()
        let big = randomBytes(count: 100_000)
        let written = big.withUnsafeBufferPointer { gzip.write($0.baseAddress!, maxLength: $0.count) }
        #expect(written == -1)
        #expect(gzip.streamStatus == .error)
        let zstream = currentZStream(of: gzip)
        gzip.close()
        #expect(gzip.streamStatus == .error)
        #expect((gzip.streamError as? ByteStreamError)?.code == .noSpaceAvailable)
        #expect(zstream?.isLive == false)
    }
}

extension String {
    /// The string with zeros in front up to `width` characters.
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

import ByteStreams
import Foundation
import Synchronization
@testable import GzipStreams
import Testing
import TestSupport

// MARK: - Sync flush

@Suite("flush(): a sync flush makes the data so far decodable", .onDedicatedThreads)
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

@Suite("Multi-member input, zero padding and trailing garbage (RFC 1952 §2.2)", .onDedicatedThreads)
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
                                                                                  length: Int64(garbage.count),
                                                                                  leadingBytes: leadingBytes(garbage)))
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
                                                                              length: Int64(garbage.count),
                                                                              leadingBytes: leadingBytes(garbage)))
            #expect(stream.memberCount == 2)
            stream.close()
            #expect(stream.streamStatus == .closed)
        }
    }

    @Test("Trailing garbage names the format its magic starts, for the formats GNU gzip also decodes")
    func trailingGarbageFormat() throws {
        let (bytes, _) = try twoMembers()
        let cases: [([UInt8], GzipInputStream.OtherCompressionFormat?)] = [
            ([0x1f, 0x9d, 0x90], .lzw), ([0x1f, 0x1e], .pack), ([0x1f, 0xa0, 0], .lzh), ([0x1f, 0x9e], .oldGzip),
            ([0x1f, 0x41], nil), ([0x41, 0x9d], nil), ([0, 0x1f, 0x9d], nil),
        ]
        for (garbage, format) in cases {
            let stream = gunzipStream(bytes + garbage, chunkSize: 7, trailingGarbage: .ignore)
            _ = drain(stream)
            #expect(stream.trailingGarbage?.leadingBytes == leadingBytes(garbage), "\(garbage)")
            #expect(stream.trailingGarbage?.otherFormat == format, "\(garbage)")
            stream.close()
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
            let limited = unpack(bytes + plain, readSize: 4, trailingGarbage: .passThrough, maximumOutputSize: Int(limit),
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

/// What ``GzipInputStream/TrailingGarbage/leadingBytes`` holds for `garbage`: its first byte,
/// and its second after a `1f`.
private func leadingBytes(_ garbage: [UInt8]) -> [UInt8] {
    Array(garbage.prefix(garbage.first == 0x1f ? 2 : 1))
}

import ByteStreams
import Foundation
import Synchronization
@testable import GzipStreams
import Testing
import TestSupport

// MARK: - Errors made on purpose

@Suite("Each error kind, made on purpose from a valid member", .onDedicatedThreads)
struct ErrorTests {
    let data = textBytes(count: 2000, seed: 21)

    func member() throws -> [UInt8] { try pack(data) }

    func failure(_ bytes: [UInt8], maximumOutputSize: Int? = nil) -> Decoded {
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
            let result = failure(bytes, maximumOutputSize: Int(limit))
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
                    let stream = gunzipStream(long, chunkSize: chunkSize, maximumOutputSize: Int(limit), inflater: inflater)
                    let result = drain(stream, readSize: readSize)
                    #expect(Int64(result.bytes.count) == limit && result.gzipError?.kind == "output-limit",
                            "\(inflater), chunk \(chunkSize), reads of \(readSize), limit \(limit): \(result.bytes.count) bytes")
                    #expect(stream.uncompressedByteCount == Int64(result.bytes.count))
                    stream.close()
                }
            }
        }
        let exact = failure(bytes, maximumOutputSize: Int(size))
        #expect(exact.error == nil)
        #expect(exact.bytes == data)
        let stream = gunzipStream(bytes, maximumOutputSize: 10)
        #expect(stream.maximumOutputSize == 10)
        #expect(failure(try pack([]), maximumOutputSize: 0).error == nil)
        // Across members: the limit counts the whole output.
        let twice = failure(bytes + bytes, maximumOutputSize: Int(size) + 1)
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

    @Test("A member that is not known (0: a read through an index after a seek) is not named as member 0")
    func unknownMember() {
        #expect(GzipError.crcMismatch(member: 0, stored: 1, computed: 2, offset: 376_595).description
                == "CRC-32 mismatch in a member at byte 376595 (stored 00000001, computed 00000002)")
        #expect(GzipError.truncated(member: 0, part: .deflateData, offset: 9).description
                == "unexpected end of input in the deflate data of a member at byte 9")
        #expect(GzipError.invalidDeflateData(member: 0, message: "invalid distance", offset: 5).description
                == "invalid deflate data in a member at byte 5: invalid distance")
        #expect(GzipError.lengthMismatch(member: 0, stored: 3, computed: 4, offset: 8).description
                == "length mismatch in a member at byte 8 (ISIZE 3, decoded 4 mod 2^32)")
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

@Suite("Every prefix of a valid file is an error, never success", .onDedicatedThreads)
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

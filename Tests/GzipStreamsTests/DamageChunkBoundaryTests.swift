import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// The same inputs as DamageTests.swift, valid and damaged, cut into reads of every shape: the
// result must not depend on where the reads end.

// MARK: - Reads of every shape

/// Hands out `bytes` in reads whose sizes come from a seeded sequence: mostly 1 to 16 bytes,
/// sometimes up to 5000 (never more than asked for).
private final class UnevenInputStream: ByteInputStream {
    private let bytes: [UInt8]
    private var position = 0
    private var generator: SplitMix64

    init(bytes: [UInt8], seed: UInt64) {
        self.bytes = bytes
        self.generator = SplitMix64(seed: seed)
        super.init()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let draw = generator.next()
        let limit = draw & 1 == 0 ? 16 : 5000
        let count = min(maxLength, bytes.count - position, 1 + Int((draw >> 1) % UInt64(limit)))
        for index in 0..<count { buffer[index] = bytes[position + index] }
        position += count
        return count
    }
}

/// How the compressed bytes reach the gzip stream.
private enum Feed: CaseIterable, CustomStringConvertible {
    case oneByte, uneven
    var description: String { self == .oneByte ? "1 byte per read" : "uneven reads" }

    func stream(_ bytes: [UInt8], chunkSize: Int) -> GzipInputStream {
        let inner: ByteInputStream = self == .oneByte ? OneByteInputStream(wrapping: MemoryInputStream(bytes: bytes))
            : UnevenInputStream(bytes: bytes, seed: UInt64(bytes.count) &* 31 &+ UInt64(chunkSize))
        return try! GzipInputStream(wrapping: inner, chunkSize: chunkSize)
    }
}

/// What a full read of a gzip stream gave: the plain bytes, the error, and each checked member.
private struct Reading {
    var bytes: [UInt8]
    var error: GzipError?
    var otherError: String?
    var members: [GzipInputStream.Member]
    var compressedByteCount: Int64
}

private func readFully(_ stream: GzipInputStream, readSize: Int = 64 * 1024) -> Reading {
    var members: [GzipInputStream.Member] = []
    stream.memberHandler = { members.append($0) }
    let result = drain(stream, readSize: readSize)
    let reading = Reading(bytes: result.bytes, error: result.gzipError,
                          otherError: result.error != nil && result.gzipError == nil ? "\(result.error!)" : nil,
                          members: members, compressedByteCount: stream.compressedByteCount)
    stream.close()
    return reading
}

/// The whole file in one read of the inner stream: the reference.
private func readInOneGo(_ bytes: [UInt8]) -> Reading {
    readFully(try! GzipInputStream(wrapping: MemoryInputStream(bytes: bytes), chunkSize: max(1, bytes.count)))
}

/// Builds a member by hand from stored blocks of the given sizes (RFC 1951 §3.2.4), so that its
/// size is known to the byte: header + 5 bytes a block + data + 8.
private func storedMember(_ data: [UInt8], blockSizes: [Int], header: GzipHeader = GzipHeader()) -> [UInt8] {
    precondition(blockSizes.reduce(0, +) == data.count)
    var bytes = header.encoded(level: 0)
    var start = 0
    for (index, size) in blockSizes.enumerated() {
        let length = UInt16(size)
        bytes.append(index == blockSizes.count - 1 ? 1 : 0)  // BFINAL, BTYPE 00
        bytes += [UInt8(length & 0xff), UInt8(length >> 8), UInt8(~length & 0xff), UInt8(~length >> 8)]
        bytes += data[start..<(start + size)]
        start += size
    }
    let crc = referenceCRC32(data)
    let size = UInt32(data.count)
    bytes += (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
    bytes += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
    return bytes
}

@Suite("Damage: chunk boundaries and short reads give the same result as one read", .onDedicatedThreads)
struct DamageChunkBoundaryTests {
    static let chunkSizes = [1, 7, 4096]

    /// The valid file and a set of damaged copies of it: cut short in each part, and seeded bit flips.
    private func variants(of file: [UInt8], seed: UInt64) -> [(name: String, bytes: [UInt8])] {
        var result: [(String, [UInt8])] = [("intact", file)]
        for length in [5, 12, file.count / 2, file.count - 5] where length > 0 && length < file.count {
            result.append(("first \(length) bytes", Array(file.prefix(length))))
        }
        result.append(("trailing garbage", file + Array("junk".utf8)))
        result.append(("zero padding", file + [UInt8](repeating: 0, count: 9)))
        var generator = SplitMix64(seed: seed)
        for _ in 0..<14 {
            let offset = Int(generator.next() % UInt64(file.count))
            let bit = Int(generator.next() % 8)
            result.append(("byte \(offset) bit \(bit) flipped", flipping(file, at: offset, bit: bit)))
        }
        return result
    }

    private func compare(_ bytes: [UInt8], label: String) {
        let reference = readInOneGo(bytes)
        #expect(reference.otherError == nil, "\(label): \(reference.otherError ?? "")")
        for feed in Feed.allCases {
            for chunkSize in Self.chunkSizes {
                let reading = readFully(feed.stream(bytes, chunkSize: chunkSize))
                let context = "\(label), \(feed), chunkSize \(chunkSize)"
                #expect(reading.error == reference.error,
                        "\(context): error \(String(describing: reading.error)), in one read \(String(describing: reference.error))")
                #expect(reading.otherError == nil, "\(context): \(reading.otherError ?? "")")
                if reference.error?.kind == "invalid-deflate" {
                    // What zlib inflated in the call that met the fault is dropped (see
                    // `invalidDeflateDataKeepsTheBytesBefore`), so only the order is the same here.
                    let (short, long) = reading.bytes.count < reference.bytes.count
                        ? (reading.bytes, reference.bytes) : (reference.bytes, reading.bytes)
                    #expect(long.starts(with: short), "\(context): the bytes before the fault differ")
                } else {
                    #expect(reading.bytes == reference.bytes,
                            "\(context): \(reading.bytes.count) bytes, in one read \(reference.bytes.count)")
                }
                #expect(reading.members == reference.members, "\(context): members differ")
                if reference.error == nil {
                    #expect(reading.compressedByteCount == Int64(bytes.count), "\(context)")
                }
            }
        }
    }

    @Test("Each sample, intact and damaged: the same bytes, error and offset for every feed and chunk size",
          arguments: DamageSample.all)
    func samplesAllFeeds(sample: DamageSample) throws {
        let (file, data, _) = try sample.build()
        #expect(readInOneGo(file).bytes == data)
        for (name, bytes) in variants(of: file, seed: UInt64(file.count)) {
            compare(bytes, label: "\(sample.name), \(name)")
        }
    }

    /// The bytes zlib inflates in the same `inflate` call that meets an invalid-deflate fault
    /// are given to the reader before the error, so the output before the error does not depend
    /// on how the input was cut: read in one go or a byte at a time, every byte before the fault.
    ///
    /// Sample 1 (one member, FHCRC) with bit 4 of byte 107 flipped: the same bytes, then
    /// `invalid deflate data in member 1` at the same offset, for every feed and chunk size.
    @Test("The bytes inflated before invalid deflate data are the same for every chunk size")
    func invalidDeflateDataKeepsTheBytesBefore() throws {
        let (file, _, _) = try DamageSample.all[0].build()
        let damaged = flipping(file, at: 107, bit: 4)
        let reference = readInOneGo(damaged)
        #expect(reference.error?.kind == "invalid-deflate")
        for feed in Feed.allCases {
            for chunkSize in Self.chunkSizes {
                let reading = readFully(feed.stream(damaged, chunkSize: chunkSize))
                #expect(reading.error == reference.error)
                #expect(reading.bytes.count == reference.bytes.count,
                        "\(feed), chunkSize \(chunkSize): \(reading.bytes.count) bytes before \(String(describing: reading.error)); in one read \(reference.bytes.count)")
            }
        }
        // The same through one stream: a 4096-byte chunk and a 64 KiB read give nothing,
        // a 1-byte read buffer gives the bytes.
        let wide = unpack(damaged)
        let narrow = unpack(damaged, readSize: 1)
        #expect(wide.gzipError == narrow.gzipError)
        #expect(wide.bytes == narrow.bytes, "64 KiB reads: \(wide.bytes.count) bytes, 1-byte reads: \(narrow.bytes.count)")
    }

    /// Four members whose edges fall on the 4096-byte buffer boundaries: member 2's header starts
    /// at 4090 (crossing 4096), its trailer spans 8190–8197 (crossing 8192), member 4's magic is
    /// at 12287–12288 (crossing 12288), and zero padding crosses 16384.
    private func straddlingFile() throws -> (bytes: [UInt8], data: [UInt8], members: [GzipInputStream.Member]) {
        let data1 = randomBytes(count: 4067, seed: 41)
        let header2 = GzipHeader(fileName: Array("straddle".utf8), hasHeaderCRC: true)
        let data2 = textBytes(count: 4069, seed: 42)
        let data3 = randomBytes(count: 4066, seed: 43)
        let data4 = textBytes(count: 3000, seed: 44)
        let member1 = storedMember(data1, blockSizes: [4067])
        let member2 = storedMember(data2, blockSizes: [2000, 2069], header: header2)
        let member3 = storedMember(data3, blockSizes: [4066])
        let member4 = try pack(data4, level: 6, header: GzipHeader(modificationTime: 7))
        #expect(member1.count == 4090)
        #expect(header2.encoded(level: 0).count == 21)
        #expect(member2.count == 4108, "member 2 ends at 8198, its trailer at 8190")
        #expect(member3.count == 4089, "member 4 starts at 12287")
        var bytes = member1 + member2 + member3 + member4
        #expect(bytes.count < 16384)
        bytes += [UInt8](repeating: 0, count: 16384 - bytes.count + 10)
        var offset: Int64 = 0
        var members: [GzipInputStream.Member] = []
        for (index, (member, data, header)) in [(member1, data1, GzipHeader()), (member2, data2, header2),
                                                (member3, data3, GzipHeader()),
                                                (member4, data4, GzipHeader(modificationTime: 7))].enumerated() {
            var parsed = header
            parsed.extraFlags = 0  // levels 0 and 6 both write XFL 0
            members.append(GzipInputStream.Member(index: index + 1, offset: offset, header: parsed,
                                                  compressedSize: Int64(member.count),
                                                  uncompressedSize: Int64(data.count), crc32: referenceCRC32(data),
                                                  headerSize: Int64(header.encoded(level: 0).count)))
            offset += Int64(member.count)
        }
        return (bytes, data1 + data2 + data3 + data4, members)
    }

    @Test("Members, headers and trailers across 4096-byte boundaries decode exactly, in one read and in short reads")
    func straddlingMembers() throws {
        let (file, data, members) = try straddlingFile()
        #expect(members.map(\.offset) == [0, 4090, 8198, 12287])
        var defaultChunks: [GzipInputStream.Member] = []
        let stream = gunzipStream(file)
        stream.memberHandler = { defaultChunks.append($0) }
        let result = drain(stream, readSize: 4096)
        #expect(result.error == nil)
        #expect(result.bytes == data)
        #expect(defaultChunks == members)
        #expect(stream.compressedByteCount == Int64(file.count))
        stream.close()
        for feed in Feed.allCases {
            for chunkSize in [1, 7, ByteStream.defaultChunkSize] {
                let reading = readFully(feed.stream(file, chunkSize: chunkSize), readSize: 4096)
                #expect(reading.error == nil && reading.otherError == nil, "\(feed), chunkSize \(chunkSize)")
                #expect(reading.bytes == data, "\(feed), chunkSize \(chunkSize)")
                #expect(reading.members == members, "\(feed), chunkSize \(chunkSize)")
            }
        }
    }

    @Test("The straddling file, cut and damaged at its boundaries: the same result for every feed")
    func straddlingDamage() throws {
        let (file, _, _) = try straddlingFile()
        var cases: [(String, [UInt8])] = []
        for length in [4090, 4091, 4096, 4097, 4111, 8190, 8192, 8193, 8198, 12287, 12288] {
            cases.append(("first \(length) bytes", Array(file.prefix(length))))
        }
        for offset in [4090, 4091, 4094, 4096, 4097, 4110, 8190, 8191, 8192, 8194, 8197, 12287, 12288] {
            cases.append(("byte \(offset) bit 2 flipped", flipping(file, at: offset, bit: 2)))
        }
        for (name, bytes) in cases {
            compare(bytes, label: "straddling file, \(name)")
        }
    }
}

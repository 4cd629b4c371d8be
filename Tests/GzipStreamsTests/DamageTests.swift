import ByteStreams
import Foundation
@testable import GzipStreams
import Testing

// Systematic damage through GzipInputStream: every bit of every header and trailer byte, a
// seeded sample of bits in the deflate data, and the same inputs cut into reads of every shape.
// Everything runs in-process on inputs of a few KB.

/// A valid gzip file made of members packed in memory, with where each member's parts are.
struct DamageSample: Sendable, CustomTestStringConvertible {
    /// One member: its plain data, the level it is packed at, and its header.
    struct Spec: Sendable {
        var data: [UInt8]
        var level: Int
        var header: GzipHeader
    }

    /// Where one member lies in the file (byte offsets) and what it decodes to.
    struct Layout {
        var start: Int
        var headerEnd: Int
        var trailerStart: Int
        var end: Int
        var header: GzipHeader
        var data: [UInt8]
        /// The number of plain bytes of the members before this one.
        var dataStart: Int
    }

    var name: String
    var specs: [Spec]
    var testDescription: String { name }

    /// The file and its layout, packed through ``GzipOutputStream``.
    func build() throws -> (bytes: [UInt8], data: [UInt8], layout: [Layout]) {
        var bytes: [UInt8] = []
        var data: [UInt8] = []
        var layout: [Layout] = []
        for spec in specs {
            let packed = try pack(spec.data, level: spec.level, header: spec.header)
            let headerLength = spec.header.encoded(level: spec.level).count
            layout.append(Layout(start: bytes.count, headerEnd: bytes.count + headerLength,
                                 trailerStart: bytes.count + packed.count - 8, end: bytes.count + packed.count,
                                 header: spec.header, data: spec.data, dataStart: data.count))
            bytes += packed
            data += spec.data
        }
        return (bytes, data, layout)
    }

    static let all: [DamageSample] = [
        DamageSample(name: "one member with FTEXT, FHCRC, FEXTRA, FNAME, FCOMMENT", specs: [
            Spec(data: textBytes(count: 1500, seed: 31), level: 6,
                 header: GzipHeader(isText: true, modificationTime: 1_700_000_000, extraFlags: 0, operatingSystem: 3,
                                    extraField: [0x41, 0x42, 0x03, 0x00, 0x78, 0x00, 0x7a],
                                    fileName: Array("damage.txt".utf8), comment: Array("a comment".utf8),
                                    hasHeaderCRC: true)),
        ]),
        DamageSample(name: "two members, FNAME + MTIME, then FTEXT + FEXTRA + FCOMMENT", specs: [
            Spec(data: textBytes(count: 3000, seed: 32), level: 9,
                 header: GzipHeader(modificationTime: 123, fileName: Array("first".utf8))),
            Spec(data: randomBytes(count: 200, seed: 33), level: 1,
                 header: GzipHeader(isText: true, extraField: [1, 2, 3, 4], comment: Array("second".utf8))),
        ]),
        DamageSample(name: "stored blocks (level 0)", specs: [
            Spec(data: randomBytes(count: 1000, seed: 34), level: 0, header: GzipHeader()),
        ]),
        DamageSample(name: "dynamic blocks, 4000 bytes of text", specs: [
            Spec(data: textBytes(count: 4000, seed: 35), level: 6, header: GzipHeader(fileName: Array("dyn".utf8))),
        ]),
    ]
}

/// `bytes` with bit `bit` (0 = least significant) of byte `offset` inverted.
func flipping(_ bytes: [UInt8], at offset: Int, bit: Int) -> [UInt8] {
    var copy = bytes
    copy[offset] ^= UInt8(1) << UInt8(bit)
    return copy
}

/// What one flipped bit must give.
private enum FlipExpectation {
    /// Exactly this error, after exactly the first `bytesBefore` plain bytes.
    case error(GzipError, bytesBefore: Int)
    /// Some error the format defines (not a zlib failure, not an empty input).
    case anyError
    /// Undetectable by the format: success with the original output.
    case unchanged
}

/// What flipping `bit` of byte `offset` of `file` must give, when the byte lies in the header
/// or trailer of `member` (`index` 0 for the first); `nil` for a byte of the deflate data.
private func expectation(flipping bit: Int, at offset: Int, of file: [UInt8], member: DamageSample.Layout,
                         index: Int) -> FlipExpectation? {
    let number = index + 1
    let flipped = flipping(file, at: offset, bit: bit)
    let value = flipped[offset]
    let relative = offset - member.start
    if offset >= member.trailerStart {
        let crcOffset = member.trailerStart
        if offset < crcOffset + 4 {
            return .error(.crcMismatch(member: number, stored: littleEndianUInt32(flipped, at: crcOffset),
                                       computed: referenceCRC32(member.data), offset: Int64(crcOffset)),
                          bytesBefore: member.dataStart + member.data.count)
        }
        return .error(.lengthMismatch(member: number, stored: littleEndianUInt32(flipped, at: crcOffset + 4),
                                      computed: UInt32(truncatingIfNeeded: member.data.count),
                                      offset: Int64(crcOffset + 4)),
                      bytesBefore: member.dataStart + member.data.count)
    }
    guard offset < member.headerEnd else { return nil }
    let header = member.header
    /// A flip the format does not see unless FHCRC is there to catch it.
    var guardedByHeaderCRC: FlipExpectation {
        guard header.hasHeaderCRC else { return .unchanged }
        let crcOffset = member.headerEnd - 2
        let computed = UInt16(truncatingIfNeeded: referenceCRC32(flipped[member.start..<crcOffset]))
        return .error(.headerCRCMismatch(member: number, stored: littleEndianUInt16(flipped, at: crcOffset),
                                         computed: computed, offset: Int64(crcOffset)),
                      bytesBefore: member.dataStart)
    }
    switch relative {
    case 0, 1:
        // After a member, bytes that are not 1f 8b are trailing garbage (RFC 1952 §2.2).
        return index == 0 ? .error(.notGzip(offset: 0), bytesBefore: 0)
            : .error(.trailingGarbage(offset: Int64(member.start), length: Int64(file.count - member.start)),
                     bytesBefore: member.dataStart)
    case 2:
        return .error(.unsupportedMethod(value, member: number, offset: Int64(member.start + 2)),
                      bytesBefore: member.dataStart)
    case 3:
        let mask = UInt8(1) << UInt8(bit)
        if mask & GzipHeader.reservedFlags != 0 {
            return .error(.reservedFlags(value, member: number, offset: Int64(member.start + 3)),
                          bytesBefore: member.dataStart)
        }
        // FTEXT is informational; any other flag changes where the fields are.
        return mask == GzipHeader.flagText ? guardedByHeaderCRC : .anyError
    case 4..<10:
        return guardedByHeaderCRC  // MTIME, XFL, OS
    default:
        break
    }
    var fieldStart = member.start + 10
    if let extra = header.extraField {
        if offset < fieldStart + 2 { return .anyError }  // XLEN
        if offset < fieldStart + 2 + extra.count { return guardedByHeaderCRC }
        fieldStart += 2 + extra.count
    }
    for field in [header.fileName, header.comment].compactMap({ $0 }) {
        let terminator = fieldStart + field.count
        if offset < terminator { return value == 0 ? .anyError : guardedByHeaderCRC }
        if offset == terminator { return .anyError }
        fieldStart = terminator + 1
    }
    precondition(header.hasHeaderCRC && offset >= member.headerEnd - 2, "a header byte no field claims")
    return guardedByHeaderCRC  // the CRC-16 itself
}

/// The error kinds corrupt deflate data may give (a zlib failure or an empty input would be wrong).
private let corruptDataKinds: Set = ["bad-magic", "bad-header", "header-crc", "truncated", "invalid-deflate",
                                     "crc-mismatch", "length-mismatch", "trailing-garbage"]

@Suite("Damage: every bit of every header and trailer byte, and sampled deflate bits")
struct DamageTests {
    /// Decodes one damaged file and checks it against what it must give.
    /// - Returns: Whether it did, and what happened: an error kind, `unchanged`, or `other`.
    private func check(_ damaged: [UInt8], _ expected: FlipExpectation, original data: [UInt8], memberCount: Int,
                       _ what: @autoclosure () -> String) -> (ok: Bool, outcome: String) {
        let stream = gunzipStream(damaged)
        let result = drain(stream)
        let members = stream.memberCount
        stream.close()
        let unchanged = result.error == nil && result.bytes == data && members == memberCount
        let outcome = result.gzipError?.kind ?? (unchanged ? "unchanged" : "other")
        switch expected {
        case .unchanged:
            #expect(unchanged, "\(what()): an undetectable flip must decode as the original; got \(describe(result))")
            return (unchanged, outcome)
        case .error(let error, let bytesBefore):
            let ok = result.gzipError == error && result.bytes == Array(data.prefix(bytesBefore))
            #expect(ok, "\(what()): expected \(error) after \(bytesBefore) bytes; got \(describe(result))")
            return (ok, outcome)
        case .anyError:
            guard let error = result.gzipError else {
                // Success is right only with the original output; any other error is not ours to give.
                #expect(unchanged, "\(what()): expected an error or the original output; got \(describe(result))")
                return (unchanged, outcome)
            }
            let ok = corruptDataKinds.contains(error.kind) && (error.offset ?? -1) <= Int64(damaged.count)
            #expect(ok, "\(what()): unexpected error \(error) (kind \(error.kind)) for a file of \(damaged.count) bytes")
            return (ok, outcome)
        }
    }

    private func describe(_ result: Decoded) -> String {
        if let error = result.error { return "\(result.bytes.count) bytes, then \(error)" }
        return "success, \(result.bytes.count) bytes"
    }

    @Test("Every bit of every header and trailer byte: the exact error, or the original output when undetectable",
          arguments: DamageSample.all)
    func headerAndTrailerBits(sample: DamageSample) throws {
        let (file, data, layout) = try sample.build()
        #expect(unpack(file).bytes == data)
        var counts = (errors: 0, unchanged: 0, failed: 0)
        for (index, member) in layout.enumerated() {
            let offsets = Array(member.start..<member.headerEnd) + Array(member.trailerStart..<member.end)
            for offset in offsets {
                for bit in 0..<8 {
                    let expected = try #require(expectation(flipping: bit, at: offset, of: file, member: member,
                                                            index: index))
                    if case .unchanged = expected { counts.unchanged += 1 } else { counts.errors += 1 }
                    if !check(flipping(file, at: offset, bit: bit), expected, original: data,
                              memberCount: layout.count, "member \(index + 1), byte \(offset), bit \(bit)").ok {
                        counts.failed += 1
                    }
                }
            }
        }
        #expect(counts.failed == 0, "\(counts.failed) flips gave the wrong result")
        // With FHCRC present, no header flip goes unnoticed.
        if layout.allSatisfy({ $0.header.hasHeaderCRC }) {
            #expect(counts.unchanged == 0)
        }
    }

    @Test("FHCRC catches every header flip; trailer flips are crc-mismatch or length-mismatch")
    func headerCRCCatchesEverything() throws {
        let (file, data, layout) = try DamageSample.all[0].build()
        let member = layout[0]
        for offset in member.start..<member.headerEnd {
            for bit in 0..<8 {
                let result = unpack(flipping(file, at: offset, bit: bit))
                #expect(result.gzipError != nil, "header byte \(offset) bit \(bit): \(String(describing: result.error))")
                // A flip in FLG can clear FHCRC itself: then the header parses differently and the
                // bytes after it are inflated as tentative data until the deflate data fails.
                if offset != member.start + 3 {
                    #expect(result.bytes.isEmpty, "header byte \(offset) bit \(bit): bytes returned from a bad header")
                }
            }
        }
        for offset in member.trailerStart..<member.end {
            for bit in 0..<8 {
                let result = unpack(flipping(file, at: offset, bit: bit))
                let kind = offset < member.trailerStart + 4 ? "crc-mismatch" : "length-mismatch"
                #expect(result.gzipError?.kind == kind, "trailer byte \(offset) bit \(bit)")
                #expect(result.bytes == data, "every byte is returned before the trailer is checked")
            }
        }
    }

    @Test("300 seeded bits of the deflate data: an error, or the original output", arguments: DamageSample.all)
    func deflateBits(sample: DamageSample) throws {
        let (file, data, layout) = try sample.build()
        let bits = layout.flatMap { member in (member.headerEnd * 8)..<(member.trailerStart * 8) }
        var generator = SplitMix64(seed: 0xDA_4A6E ^ UInt64(file.count))
        var chosen = Set<Int>()
        while chosen.count < min(300, bits.count) {
            chosen.insert(bits[Int(generator.next() % UInt64(bits.count))])
        }
        var outcomes: [String: Int] = [:]
        var failed = 0
        for position in chosen.sorted() {
            let (ok, outcome) = check(flipping(file, at: position / 8, bit: position % 8), .anyError, original: data,
                                      memberCount: layout.count, "deflate byte \(position / 8), bit \(position % 8)")
            if !ok { failed += 1 }
            outcomes[outcome, default: 0] += 1
        }
        #expect(failed == 0, "\(failed) of \(chosen.count) flips gave the wrong result; outcomes \(outcomes)")
        #expect(outcomes["unchanged", default: 0] < chosen.count / 4,
                "most flips in deflate data must be seen: \(outcomes)")
    }
}

// MARK: - Reads of every shape

/// Hands out `bytes` in reads whose sizes come from a seeded sequence: mostly 1 to 16 bytes,
/// sometimes up to 5000 (never more than asked for).
private final class UnevenInputStream: ByteInputStream, @unchecked Sendable {
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

@Suite("Damage: chunk boundaries and short reads give the same result as one read")
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

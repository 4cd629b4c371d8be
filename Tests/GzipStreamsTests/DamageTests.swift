import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

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

@Suite("Damage: every bit of every header and trailer byte, and sampled deflate bits", .onDedicatedThreads)
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


import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// The GZIDX index format (indexed_gzip's export_index/import_index): the byte layout, and every
// malformed input with its error and offset. The real readers are in GZIDXInteropTests.swift.

// MARK: Helpers

/// Four points as a packer with independent chunks and a zran index would mix them: at the
/// start without window, one at a bit offset with a window, one without, one with a window.
/// Encoded: 35 + 4 × 18 + 2 × 32768 = 65643 bytes; the point table ends at byte 107.
private func sampleIndex(plainSize: UInt64 = 9_000_000) -> GzipIndex {
    GzipIndex(compressedSize: 5_000_000, plainSize: plainSize, spacing: 1 << 20, points: [
        GzipAccessPoint(compressedOffset: 10, plainOffset: 0),
        GzipAccessPoint(compressedOffset: 1_200_345, bitOffset: 3, plainOffset: 2_000_000,
                        window: randomBytes(count: 32768, seed: 7)),
        GzipAccessPoint(compressedOffset: 3_000_000, plainOffset: 6_000_000),
        GzipAccessPoint(compressedOffset: 4_000_000, bitOffset: 7, plainOffset: 8_000_000, window: textBytes(count: 32768)),
    ])
}

/// `bytes` with `value` stored little-endian at `offset`.
private func setting<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: [UInt8]) -> [UInt8] {
    var copy = bytes
    copy.withUnsafeMutableBufferPointer { GzipFormat.store(littleEndian: value, at: $0.baseAddress! + offset) }
    return copy
}

/// The start of point `point`'s entry in a version 1 index.
private func entry(_ point: Int) -> Int { GzipIndex.headerSize + GzipIndex.pointEntrySize * point }

/// The error `GzipIndex(gzidx:)` throws for `bytes`, or `nil` if it reads them.
private func parseError(_ bytes: [UInt8]) -> GzipIndexError? {
    do { _ = try GzipIndex(gzidx: bytes) } catch { return error }
    return nil
}

/// One malformed index and the error it must give.
struct MalformedGZIDX: Sendable, CustomTestStringConvertible {
    var label: String
    var bytes: @Sendable ([UInt8]) -> [UInt8]
    var error: GzipIndexError
    var testDescription: String { label }
}

private let tableEnd = entry(4)
private let encodedSize = tableEnd + 2 * 32768

private let malformed: [MalformedGZIDX] = [
    .init(label: "empty", bytes: { _ in [] }, error: .truncated(.header, offset: 0)),
    .init(label: "header cut at 34 bytes", bytes: { Array($0.prefix(34)) }, error: .truncated(.header, offset: 0)),
    .init(label: "gzip magic", bytes: { _ in [0x1f, 0x8b, 8, 0] }, error: .badMagic(offset: 0)),
    .init(label: "gZIDX", bytes: { setting(UInt8(ascii: "g"), at: 0, in: $0) }, error: .badMagic(offset: 0)),
    .init(label: "version 2", bytes: { setting(UInt8(2), at: 5, in: $0) }, error: .unsupportedVersion(2, offset: 5)),
    .init(label: "flags 1", bytes: { setting(UInt8(1), at: 6, in: $0) }, error: .unsupportedFlags(1, offset: 6)),
    .init(label: "window size 16384", bytes: { setting(UInt32(16384), at: 27, in: $0) },
          error: .badWindowSize(16384, offset: 27)),
    .init(label: "spacing below the window size", bytes: { setting(UInt32(32767), at: 23, in: $0) },
          error: .badSpacing(32767, windowSize: 32768, offset: 23)),
    .init(label: "point table cut in point 1", bytes: { Array($0.prefix(entry(1) + 5)) },
          error: .truncated(.pointEntry(point: 1), offset: entry(1))),
    .init(label: "point count beyond the file", bytes: { setting(UInt32(100_000), at: 31, in: $0) },
          error: .truncated(.pointEntry(point: (encodedSize - 35) / 18), offset: entry((encodedSize - 35) / 18))),
    .init(label: "no window at all", bytes: { Array($0.prefix(tableEnd)) },
          error: .truncated(.window(point: 1), offset: tableEnd)),
    .init(label: "last window cut", bytes: { Array($0.prefix(tableEnd + 32768 + 100)) },
          error: .truncated(.window(point: 3), offset: tableEnd + 32768)),
    .init(label: "3 trailing bytes", bytes: { $0 + [0, 0, 0] }, error: .trailingBytes(count: 3, offset: encodedSize)),
    .init(label: "bit offset 8", bytes: { setting(UInt8(8), at: entry(1) + 16, in: $0) },
          error: .badBitOffset(8, point: 1, offset: entry(1) + 16)),
    .init(label: "window flag 2", bytes: { setting(UInt8(2), at: entry(2) + 17, in: $0) },
          error: .badWindowFlag(2, point: 2, offset: entry(2) + 17)),
    .init(label: "plain offset decreases", bytes: { setting(UInt64(1_999_999), at: entry(2) + 8, in: $0) },
          error: .offsetsDecrease(point: 2, offset: entry(2))),
    // Point 1 is at bit 8 × 1_200_345 − 3; 8 × 1_200_345 − 4 is before it.
    .init(label: "same byte, one bit earlier", bytes: {
        setting(UInt8(4), at: entry(2) + 16, in: setting(UInt64(1_200_345), at: entry(2), in: $0))
    }, error: .offsetsDecrease(point: 2, offset: entry(2))),
    .init(label: "compressed offset beyond the compressed size", bytes: { setting(UInt64(3_999_999), at: 7, in: $0) },
          error: .offsetBeyondEnd(point: 3, offset: entry(3))),
    .init(label: "plain offset beyond the plain size", bytes: { setting(UInt64(7_999_999), at: 15, in: $0) },
          error: .offsetBeyondEnd(point: 3, offset: entry(3))),
]

// MARK: - The format

@Suite("GZIDX: indexed_gzip's index format", .onDedicatedThreads)
struct GZIDXFormatTests {
    @Test("Encoded as zran_export_index lays it out, and read back equal")
    func roundTrip() throws {
        let index = sampleIndex()
        let bytes = index.gzidxEncoded()
        #expect(bytes.count == encodedSize)
        #expect(Array(bytes.prefix(7)) == Array("GZIDX".utf8) + [1, 0])
        bytes.withUnsafeBytes { raw in
            #expect(GzipFormat.loadUInt64(raw, at: 7) == 5_000_000)
            #expect(GzipFormat.loadUInt64(raw, at: 15) == 9_000_000)
            #expect(GzipFormat.loadUInt32(raw, at: 23) == 1 << 20)
            #expect(GzipFormat.loadUInt32(raw, at: 27) == 32768)
            #expect(GzipFormat.loadUInt32(raw, at: 31) == 4)
            #expect(GzipFormat.loadUInt64(raw, at: entry(1)) == 1_200_345)
            #expect(GzipFormat.loadUInt64(raw, at: entry(1) + 8) == 2_000_000)
        }
        #expect(Array(bytes[entry(1) + 16...entry(1) + 17]) == [3, 1])
        #expect(Array(bytes[entry(2) + 16...entry(2) + 17]) == [0, 0])
        #expect(Array(bytes[tableEnd..<(tableEnd + 32768)]) == index.points[1].window)
        #expect(Array(bytes[(tableEnd + 32768)...]) == index.points[3].window)
        #expect(try GzipIndex(gzidx: bytes) == index)

        let empty = GzipIndex(compressedSize: 20, plainSize: 0, spacing: 32768, points: [])
        #expect(empty.gzidxEncoded().count == 35)
        #expect(try GzipIndex(gzidx: empty.gzidxEncoded()) == empty)
        // A plain size of 0 is indexed_gzip's "unknown": points may have any plain offset.
        #expect(try GzipIndex(gzidx: sampleIndex(plainSize: 0).gzidxEncoded()) == sampleIndex(plainSize: 0))
    }

    @Test("Each malformed index gives its error at its offset", arguments: malformed)
    func malformedIndex(_ row: MalformedGZIDX) {
        let error = parseError(row.bytes(sampleIndex().gzidxEncoded()))
        #expect(error == row.error)
        #expect(error?.offset == row.error.offset)
        #expect(error?.description.hasPrefix("not a valid GZIDX index: ") == true)
    }

    @Test("Every prefix of a valid index is truncated, never read")
    func everyPrefix() {
        let bytes = sampleIndex().gzidxEncoded()
        for length in 0..<bytes.count where length < tableEnd + 40 || length % 1009 == 0 || length == bytes.count - 1 {
            guard parseError(Array(bytes.prefix(length)))?.reason.hasPrefix("the index ends inside") == true else {
                Issue.record("prefix of \(length) bytes: \(String(describing: parseError(Array(bytes.prefix(length)))))")
                return
            }
        }
    }

    @Test("Version 0: no window flag, a window for every point but the first")
    func versionZero() throws {
        let window = textBytes(count: 32768, seed: 9)
        var bytes = Array("GZIDX".utf8) + [0, 0]
        GzipFormat.append(littleEndian: UInt64(900_000), to: &bytes)
        GzipFormat.append(littleEndian: UInt64(2_000_000), to: &bytes)
        GzipFormat.append(littleEndian: UInt32(1 << 20), to: &bytes)
        GzipFormat.append(littleEndian: UInt32(32768), to: &bytes)
        GzipFormat.append(littleEndian: UInt32(2), to: &bytes)
        for (compressed, plain, bits) in [(UInt64(10), UInt64(0), UInt8(0)), (400_000, 1_048_600, 5)] {
            GzipFormat.append(littleEndian: compressed, to: &bytes)
            GzipFormat.append(littleEndian: plain, to: &bytes)
            bytes.append(bits)
        }
        let index = try GzipIndex(gzidx: bytes + window)
        #expect(index.points == [
            GzipAccessPoint(compressedOffset: 10, plainOffset: 0),
            GzipAccessPoint(compressedOffset: 400_000, bitOffset: 5, plainOffset: 1_048_600, window: window),
        ])
        #expect(parseError(bytes + window.dropLast()) == .truncated(.window(point: 1), offset: 35 + 2 * 17))
        #expect(parseError(Array(bytes.prefix(35 + 20))) == .truncated(.pointEntry(point: 1), offset: 35 + 17))
        // Written back as version 1, which holds the same points.
        #expect(try GzipIndex(gzidx: index.gzidxEncoded()) == index)
    }
}

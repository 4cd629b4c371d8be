import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

@Suite("GzipIndexBuilder spacing: a window only every so many compressed bytes", .onDedicatedThreads)
struct GzipIndexSpacingTests {
    /// 64 MiB of log lines, packed as gzip -6 packs them (4.5 MB).
    static let log = repetitiveLog(count: 64 << 20, seed: 9)
    static let packedLog = try! pack(log, level: 6)

    /// The index `builder` writes for `compressed`, read back, and its summary.
    func build(_ compressed: [UInt8], with builder: GzipIndexBuilder, chunkSize: Int = 64 << 10,
               inflater: GzipInputStream.Inflater) throws -> (index: GzipIndex, bytes: [UInt8], summary: GzipIndexBuilder.Summary) {
        let output = MemoryOutputStream()
        output.open()
        let summary = try builder.build(from: MemoryInputStream(bytes: compressed), into: output, chunkSize: chunkSize,
                                        inflater: inflater)
        let bytes = [UInt8](output.data)
        return (try GzipIndex(gzidx: bytes), bytes, summary)
    }

    /// The compressed bytes from each point with a window back to the point before it.
    func compressedGaps(_ index: GzipIndex) -> [Int64] {
        zip(index.points.dropFirst(), index.points).compactMap { point, before in
            point.window == nil ? nil : Int64(point.compressedOffset) - Int64(before.compressedOffset)
        }
    }

    @Test("The default index of a 15:1 file stays within 1% of it (plus the header, table and seal); points every 16 MiB alone would not",
          arguments: [GzipInputStream.Inflater.isal, .zlib])
    func defaultStaysSmall(inflater: GzipInputStream.Inflater) throws {
        let compressed = Self.packedLog
        let (index, bytes, summary) = try build(compressed, with: GzipIndexBuilder(), inflater: inflater)
        #expect(index.spacing == UInt32(GzipIndexBuilder.defaultSpan))
        #expect(summary.windowCount >= 1, "the floor is passed once at least: \(summary)")
        let overhead = 35 + 26 * index.points.count + 24 + 20
        #expect(bytes.count <= compressed.count / 100 + overhead, "\(bytes.count) bytes for \(compressed.count)")
        #expect(compressedGaps(index).allSatisfy { $0 >= GzipIndexBuilder.defaultCompressedSpan }, "\(compressedGaps(index))")
        let plainGaps = zip(index.points.dropFirst(), index.points).map { $0.plainOffset - $1.plainOffset }
        #expect(plainGaps.allSatisfy { $0 >= UInt64(GzipIndexBuilder.defaultSpan) }, "\(plainGaps)")
        try expectPointsDecode(index, compressed: compressed, plain: Self.log)
        // The plain spacing alone (what --span asks for) puts a window every 16 MiB: 2% here.
        let plainOnly = try build(compressed, with: GzipIndexBuilder(span: GzipIndexBuilder.defaultSpan), inflater: inflater)
        #expect(plainOnly.bytes.count > compressed.count / 50, "\(plainOnly.bytes.count) bytes for \(compressed.count)")
    }

    @Test("The recorder's default (unpack and test --write-index) is the builder's default, byte for byte")
    func recorderDefault() throws {
        let (_, bytes, _) = try build(Self.packedLog, with: GzipIndexBuilder(), inflater: .zlib)
        let recorder = try GzipIndexRecorder()
        let stream = try GzipInputStream(wrapping: MemoryInputStream(bytes: Self.packedLog), chunkSize: 100_000,
                                         inflater: .zlib, indexRecorder: recorder)
        try #require(drain(stream, readSize: 1 << 20).error == nil)
        let output = MemoryOutputStream()
        output.open()
        try recorder.write(to: output)
        #expect([UInt8](output.data) == bytes)
    }

    @Test("A small floor: each window that far past the point before, the search resumed as the ratio says; zlib's points whatever the reads",
          arguments: [GzipInputStream.Inflater.isal, .zlib])
    func smallFloor(inflater: GzipInputStream.Inflater) throws {
        let plain = sampleText(byteCount: 3 << 20, seed: 5)
        let compressed = try pack(plain, level: 6)
        let builder = try GzipIndexBuilder(span: 32768, compressedSpan: 100_000)
        let (index, bytes, summary) = try build(compressed, with: builder, inflater: inflater)
        let gaps = compressedGaps(index)
        #expect(gaps.count == summary.windowCount && gaps.count >= 3, "\(gaps)")
        #expect(gaps.allSatisfy { $0 >= 100_000 }, "\(gaps)")
        // The floor is where the search resumes, not far short of it: a window comes within a
        // few blocks (about 60 KB of this text each) after it, not a span of plain data later.
        #expect(gaps.allSatisfy { $0 < 100_000 + 4 * 65536 }, "\(gaps)")
        if inflater == .zlib {
            #expect(try build(compressed, with: builder, chunkSize: 1000, inflater: inflater).bytes == bytes)
        }
        try expectPointsDecode(index, compressed: compressed, plain: plain)
    }

    @Test("A compressed span out of 0...4 GiB - 1 is refused")
    func compressedSpanRange() {
        #expect(throws: ByteStreamError.self) { try GzipIndexBuilder(span: 32768, compressedSpan: -1) }
        #expect(throws: ByteStreamError.self) { try GzipIndexBuilder(span: 32768, compressedSpan: 1 << 32) }
        #expect(throws: ByteStreamError.self) { try GzipIndexRecorder(span: 32768, compressedSpan: -1) }
    }
}

import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

@Suite("GzipIndexRecorder: a GZIDX index from a GzipInputStream's own decode", .onDedicatedThreads)
struct GzipIndexRecorderTests {
    static let text = sampleText(byteCount: 3 << 20, seed: 9)

    /// Reads `compressed` through a GzipInputStream with a recorder, `readSize` bytes a read;
    /// returns what it read and the index written.
    private func readRecording(_ compressed: [UInt8], span: Int, readSize: Int, chunkSize: Int,
                               inflater: GzipInputStream.Inflater) throws -> (plain: [UInt8], index: [UInt8]) {
        let recorder = try GzipIndexRecorder(span: span)
        let stream = try GzipInputStream(wrapping: MemoryInputStream(bytes: compressed), chunkSize: chunkSize,
                                         inflater: inflater, indexRecorder: recorder)
        let decoded = drain(stream, readSize: readSize)
        try #require(decoded.error == nil)
        let output = MemoryOutputStream()
        #expect(try recorder.write(to: output) == recorder.completed)
        return (decoded.bytes, [UInt8](output.data))
    }

    @Test("Any read size and decoder: the plain bytes unchanged and points that decode right, 1 and 4 members",
          arguments: [GzipInputStream.Inflater.isal, .zlib], [1, 4])
    func readsAndPoints(inflater: GzipInputStream.Inflater, members: Int) throws {
        let pieces = (0..<members).map { Array(Self.text[($0 * Self.text.count / members)..<(($0 + 1) * Self.text.count / members)]) }
        let compressed = try pieces.flatMap { try pack($0, level: 6) }
        for (readSize, chunkSize) in [(1 << 20, 64 << 10), (777, 1000), (65536, 4096)] {
            let (plain, bytes) = try readRecording(compressed, span: 100_000, readSize: readSize, chunkSize: chunkSize,
                                                   inflater: inflater)
            #expect(plain == Self.text, "read \(readSize), chunk \(chunkSize)")
            let index = try GzipIndex(gzidx: bytes)
            #expect(index.compressedSize == UInt64(compressed.count) && index.plainSize == UInt64(Self.text.count))
            #expect(index.points.count >= 8, "\(index.points.count) points")
            try expectPointsDecode(index, compressed: compressed, plain: Self.text)
            // The index a reader reads is the builder's kind: indexed reads give the bytes.
            if inflater == .zlib {
                #expect(try buildIndex(compressed, span: 100_000, inflater: .zlib).bytes == bytes)
            }
        }
    }

    @Test("Lines counted where the bytes are written (GzipTrailerChecks): the same index, byte for byte, 1 and 4 members, text ending with and without a newline",
          arguments: [GzipInputStream.Inflater.isal, .zlib], [1, 4])
    func linesCountedOnWrite(inflater: GzipInputStream.Inflater, members: Int) throws {
        for text in [Self.text, Self.text + Array("no newline at the end".utf8)] {
            let pieces = (0..<members).map { Array(text[($0 * text.count / members)..<(($0 + 1) * text.count / members)]) }
            let compressed = try pieces.flatMap { try pack($0, level: 6) }
            for (readSize, chunkSize) in [(1 << 20, 64 << 10), (777, 1000)] {
                let (_, inline) = try readRecording(compressed, span: 100_000, readSize: readSize, chunkSize: chunkSize,
                                                    inflater: inflater)
                let recorder = try GzipIndexRecorder(span: 100_000)
                let checks = GzipTrailerChecks()
                let stream = try GzipInputStream(wrapping: MemoryInputStream(bytes: compressed), chunkSize: chunkSize,
                                                 inflater: inflater, indexRecorder: recorder, trailerChecks: checks)
                let plain = MemoryOutputStream()
                let output = GzipCheckingOutputStream(wrapping: plain, checks: checks)
                try output.openOrThrow()
                _ = try stream.copy(to: output, chunkSize: readSize)
                try output.closeOrThrow()
                let index = MemoryOutputStream()
                let summary = try recorder.write(to: index)
                let samePlain = [UInt8](plain.data) == text, sameIndex = [UInt8](index.data) == inline
                #expect(samePlain)
                #expect(sameIndex, "read \(readSize), chunk \(chunkSize)")
                #expect(summary.lineCount == UInt64(text.count(where: { $0 == 0x0A }) + (text.last == 0x0A ? 0 : 1)))
                #expect(try GzipIndex(gzidx: [UInt8](index.data)).points.count >= 8)
            }
        }
    }

    @Test("Before the end of the input no index is written; a damaged input leaves none to write")
    func incomplete() throws {
        let compressed = try pack(Self.text, level: 6)
        let recorder = try GzipIndexRecorder(span: 100_000)
        let stream = try GzipInputStream(wrapping: MemoryInputStream(bytes: compressed), indexRecorder: recorder)
        try stream.openOrThrow()
        _ = try stream.readChunk(maxLength: 65536)
        #expect(recorder.completed == nil)
        #expect(throws: ByteStreamError.self) { try recorder.write(to: MemoryOutputStream()) }
        var damaged = compressed
        damaged[damaged.count - 6] ^= 1
        let failing = try GzipIndexRecorder(span: 100_000)
        let decoded = drain(try GzipInputStream(wrapping: MemoryInputStream(bytes: damaged), indexRecorder: failing),
                            readSize: 65536)
        #expect(decoded.gzipError != nil)
        #expect(failing.completed == nil)
        // Bytes passed through unchanged are no index's.
        #expect(throws: ByteStreamError.self) {
            try GzipInputStream(wrapping: MemoryInputStream(bytes: compressed), trailingGarbage: .passThrough,
                                indexRecorder: try GzipIndexRecorder())
        }
    }
}

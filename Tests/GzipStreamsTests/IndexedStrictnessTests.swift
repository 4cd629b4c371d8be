import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// Decoding through an index is no laxer than zlib: every byte a span decoder gives is one a
// sequential zlib decode of the same file gives before it stops. A distance that reaches before
// the start of its member (whose window starts empty, RFC 1952 §2.2), or before the start of
// the data at a point without a window, is an error, and nothing from before is copied.

@Suite("Indexed gzip input: distances before the data are errors, as in zlib", .onDedicatedThreads)
struct IndexedStrictnessTests {
    /// `regressions/member-distance-before-start.gz`: member 2 starts with "x", then a match
    /// of length 258 at distance 2.
    static func memberFixture() throws -> (path: String, bytes: [UInt8]) {
        let path = PackageLocations.fixtures.appendingPathComponent("regressions/member-distance-before-start.gz").path
        return (path, Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    @Test("A match in member 2 reaching before the member's start: the sequential zlib reader's bytes and error, no more",
          arguments: [1, 2], [GzipInputStream.Inflater.isal, .zlib])
    func distanceBeforeMember(threads: Int, inflater: GzipInputStream.Inflater) throws {
        let (path, bytes) = try Self.memberFixture()
        let reference = run(try GzipInputStream(wrapping: MemoryInputStream(bytes: bytes), inflater: .zlib), readSize: 65536)
        #expect(reference.error == .invalidDeflateData(member: 2, message: "invalid distance too far back", offset: 182))
        #expect(reference.bytes.count == 1260 + 1 && reference.bytes.last == UInt8(ascii: "x"))
        // One point, where member 1's deflate data starts: the span runs into member 2.
        let index = GzipIndex(compressedSize: UInt64(bytes.count), plainSize: 0, spacing: 32768,
                              points: [GzipAccessPoint(compressedOffset: 10, plainOffset: 0)])
        for readSize in [1000, 65536] {
            let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: threads,
                                                    inflater: inflater)
            let result = run(stream, readSize: readSize)
            #expect(result.bytes.count == reference.bytes.count, "\(readSize)-byte reads")
            let same = result.bytes == reference.bytes
            #expect(same, "\(readSize)-byte reads")
            #expect(result.error == reference.error)
        }
        // After a seek the error is the span's; the bytes are still only zlib's.
        let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: threads,
                                                inflater: inflater)
        try stream.openOrThrow()
        try stream.seek(toPlainOffset: 1000)
        let decoded = drain(stream)
        stream.close()
        #expect(decoded.bytes.count <= reference.bytes.count - 1000, "bytes after the seek")
        let prefix = reference.bytes[1000...].starts(with: decoded.bytes)
        #expect(prefix, "the bytes after the seek are zlib's")
        guard case .undecodable(0, let error)? = decoded.error as? IndexedGzipError else {
            Issue.record("\(String(describing: decoded.error))")
            return
        }
        #expect(error.kind == "invalid-deflate" && error.description.contains("invalid distance too far back"))
    }

    /// A valid single-member file, its index with a window at every point but one in the
    /// middle of the member (a damaged index: the window flag cleared), and that point's number.
    static let windowless = try? makeWindowlessPoint()

    static func makeWindowlessPoint() throws -> (data: [UInt8], packed: [UInt8], index: GzipIndex, point: Int) {
        let data = textBytes(count: 1_000_000, seed: 31)
        let packed = try pack(data, level: 6)
        let output = MemoryOutputStream()
        try output.openOrThrow()
        _ = try GzipIndexBuilder(span: 32768).build(from: MemoryInputStream(bytes: packed), into: output)
        var index = try GzipIndex(gzidx: Array(output.data))
        let point = try #require(index.points.indices.dropFirst().first { index.points[$0].window != nil })
        index.points[point].window = nil
        return (data, packed, index, point)
    }

    @Test("A point without a window in the middle of a member: a whole read gives the data; a seek there gives none of the bytes before it",
          arguments: [1, 2], [GzipInputStream.Inflater.isal, .zlib])
    func windowlessPointInMember(threads: Int, inflater: GzipInputStream.Inflater) throws {
        let (data, packed, index, point) = try #require(Self.windowless)
        try withTemporaryDirectory { directory in
            let path = try makeFile("windowless.gz", in: directory, bytes: packed)
            // From the start the member's bytes are all known: the sequential reader takes over.
            let whole = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: threads,
                                                   inflater: inflater)
            let result = run(whole, readSize: 65536)
            #expect(result.error == nil && result.otherError == nil, "\(String(describing: result.otherError))")
            #expect(result.bytes.count == data.count)
            let same = result.bytes == data
            #expect(same)

            // From the point: its first match reaches before it, an error with only true bytes before.
            let start = Int(index.points[point].plainOffset)
            let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: threads,
                                                    inflater: inflater)
            try stream.openOrThrow()
            try stream.seek(toPlainOffset: Int64(start))
            let decoded = drain(stream)
            stream.close()
            let prefix = data[start...].starts(with: decoded.bytes)
            #expect(prefix, "\(decoded.bytes.count) bytes after the seek, all the data's")
            guard case .undecodable(point, let error)? = decoded.error as? IndexedGzipError else {
                Issue.record("\(String(describing: decoded.error))")
                return
            }
            #expect(error.kind == "invalid-deflate" && error.description.contains("invalid distance too far back"))
        }
    }
}

import ByteStreams
@testable import GzipStreams
import TestSupport
import Testing

// The deflate backends behind RawDeflater and WholeBufferDeflater, called directly: their
// deflate data decodes, a whole-buffer call reports output that does not fit, zlib's
// sync-flushed pieces join into one stream, and the library state is released once.

/// `deflated` (raw deflate data of `plain`) framed as one gzip member, decoded by
/// ``GzipInputStream``.
private func decodeAsMember(_ deflated: [UInt8], plain: [UInt8]) throws -> [UInt8] {
    let crc = plain.withUnsafeBytes { crc32(0, $0) }
    let member = GzipFormat.encodeHeader(GzipHeader(), level: 6) + deflated
        + GzipTrailer(crc32: crc, plainSize: Int64(plain.count)).encoded
    return try member.gunzipped()
}

/// Deflates `plain` whole with `deflater` into `room` bytes (the deflater's bound when `nil`),
/// ended by the final block; `nil` when it does not fit.
private func compressWhole(_ plain: [UInt8], room: Int? = nil, with deflater: some WholeBufferDeflater) throws -> [UInt8]? {
    var output = [UInt8](repeating: 0, count: room ?? deflater.compressBound(plain.count))
    let noDictionary = UnsafeRawBufferPointer(start: nil, count: 0)
    let count = try plain.withUnsafeBytes { input in
        try output.withUnsafeMutableBytes {
            try deflater.compress(input, dictionary: noDictionary, isFinal: true, into: $0)
        }
    }
    return count.map { Array(output.prefix($0)) }
}

@Suite("RawDeflater and WholeBufferDeflater: zlib and libdeflate behind the deflate protocols", .onDedicatedThreads)
struct RawDeflaterTests {
    static let sizes = [0, 1, 4095, 4096, 4097, 65280]

    @Test("Whole-buffer deflate data of both backends decodes to the input", arguments: sizes)
    func wholeBufferRoundTrip(size: Int) throws {
        let plain = mixedBytes(count: size, seed: UInt64(size) + 5)
        let backends: [any WholeBufferDeflater] = [try ZStream(deflateLevel: 6), LibdeflateDeflater(level: 6)]
        for deflater in backends {
            let deflated = try #require(try compressWhole(plain, with: deflater), "\(type(of: deflater))")
            #expect(try decodeAsMember(deflated, plain: plain) == plain, "\(type(of: deflater)), \(size) bytes")
            deflater.end()
        }
    }

    @Test("Output room too small: compress returns nil, for both backends")
    func tooLittleRoom() throws {
        let plain = randomBytes(count: 1000, seed: 9)
        let backends: [any WholeBufferDeflater] = [try ZStream(deflateLevel: 6), LibdeflateDeflater(level: 6)]
        for deflater in backends {
            #expect(try compressWhole(plain, room: 100, with: deflater) == nil, "\(type(of: deflater))")
            deflater.end()
        }
    }

    @Test("zlib: blocks ended by a sync flush, each with the one before as dictionary, join into one stream")
    func syncFlushedBlocksJoin() throws {
        let plain = textBytes(count: 300_000, seed: 11)
        let zstream = try ZStream(deflateLevel: 6)
        defer { zstream.end() }
        var joined: [UInt8] = []
        var start = 0
        while start < plain.count {
            let end = min(start + 100_000, plain.count)
            let block = Array(plain[start..<end])
            let dictionary = Array(plain[max(0, start - BlockDeflate.windowSize)..<start])
            var output = [UInt8](repeating: 0, count: zstream.compressBound(block.count))
            let count = try block.withUnsafeBytes { input in
                try dictionary.withUnsafeBytes { dictionary in
                    try output.withUnsafeMutableBytes {
                        try zstream.compress(input, dictionary: dictionary, isFinal: end == plain.count, into: $0)
                    }
                }
            }
            joined += output.prefix(try #require(count))
            start = end
        }
        #expect(try decodeAsMember(joined, plain: plain) == plain)
    }

    @Test("zlib streaming: the step loop through a 64-byte buffer with a sync flush midway decodes to the input")
    func streamingStepLoop() throws {
        let plain = mixedBytes(count: 200_000, seed: 13)
        let zstream = try ZStream(deflateLevel: 1)
        defer { zstream.end() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        var deflated: [UInt8] = []
        try plain.withUnsafeBytes { all in
            let half = all.count / 2
            try zstream.deflate(UnsafeRawBufferPointer(rebasing: all[..<half]), flush: .sync, through: buffer) {
                #expect($0.count <= 64)
                deflated += $0
            }
            // Everything so far decodes before the rest is written (RFC 1951 §3.2.4, an empty stored block).
            #expect(deflated.suffix(4) == [0x00, 0x00, 0xff, 0xff])
            let rest = UnsafeRawBufferPointer(rebasing: all[half...])
            try zstream.deflate(rest, flush: .none, through: buffer) { deflated += $0 }
            try zstream.deflate(UnsafeRawBufferPointer(start: nil, count: 0), flush: .finish, through: buffer) {
                deflated += $0
            }
        }
        #expect(try decodeAsMember(deflated, plain: plain) == plain)
    }

    @Test("libdeflate: no compressor until the first compress, one after it, none after end (twice)")
    func libdeflateLifecycle() throws {
        let deflater = LibdeflateDeflater(level: 1)
        #expect(!deflater.isLive)
        _ = try compressWhole(Array("some bytes".utf8), with: deflater)
        #expect(deflater.isLive)
        deflater.end()
        #expect(!deflater.isLive)
        deflater.end()
        #expect(!deflater.isLive)
    }
}

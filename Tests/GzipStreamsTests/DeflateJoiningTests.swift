import ByteStreams
@testable import GzipStreams
import Testing
import TestSupport

/// One gzip member around `deflateData`, the raw deflate stream of `plain`.
func member(deflateData: [UInt8], plain: [UInt8]) -> [UInt8] {
    GzipFormat.encodeHeader(GzipHeader(), level: 6) + deflateData
        + GzipTrailer(crc32: referenceCRC32(plain), plainSize: Int64(plain.count)).encoded
}

/// `plain` deflated by `deflater` in one call, ended by the final block or, unless `isFinal`,
/// made continuable.
func compressPiece(_ plain: [UInt8], with deflater: some WholeBufferDeflater, isFinal: Bool) throws -> [UInt8] {
    var output = [UInt8](repeating: 0, count: deflater.compressBound(plain.count))
    let count = try output.withUnsafeMutableBytes { out in
        try plain.withUnsafeBytes { input in
            try deflater.compress(input, dictionary: UnsafeRawBufferPointer(start: nil, count: 0), isFinal: isFinal,
                                  into: out)
        }
    }
    return Array(output.prefix(try #require(count)))
}

@Suite("Joining independent deflate streams into one", .onDedicatedThreads)
struct DeflateJoiningTests {
    /// Piece sizes from 0 bytes to several deflate blocks: the final block then ends at every
    /// bit of its last byte somewhere among them.
    static func pieceSizes(seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed)
        return [0, 1, 2, 3] + (0..<60).map { _ in Int(random.next() % 9000) } + [70_000, 300_000]
    }

    static let backends: [(name: String, make: @Sendable () -> any WholeBufferDeflater)] = [
        ("libdeflate 0", { LibdeflateDeflater(level: 0) }), ("libdeflate 1", { LibdeflateDeflater(level: 1) }),
        ("libdeflate 6", { LibdeflateDeflater(level: 6) }), ("libdeflate 12", { LibdeflateDeflater(level: 12) }),
        ("ISA-L 1", { IsalDeflater(level: 1) }), ("ISA-L 3", { IsalDeflater(level: 3) }),
    ]

    @Test("Pieces made continuable and joined decode as one stream, and each piece starts an access point",
          arguments: 0..<6)
    func joinedPiecesDecode(backend: Int) throws {
        let (name, make) = Self.backends[backend]
        let deflater = make()
        defer { deflater.end() }
        let sizes = Self.pieceSizes(seed: UInt64(backend) + 1)
        let pieces = sizes.enumerated().map { index, size in
            index % 3 == 0 ? mixedBytes(count: size, seed: UInt64(index)) : textBytes(count: size, seed: UInt64(index))
        }
        var joined: [UInt8] = []
        var starts: [Int] = []
        for (index, piece) in pieces.enumerated() {
            starts.append(joined.count)
            joined += try compressPiece(piece, with: deflater, isFinal: index == pieces.count - 1)
        }
        let plain = pieces.flatMap { $0 }
        let decoded = unpack(member(deflateData: joined, plain: plain))
        #expect(decoded.error == nil, "\(name): \(String(describing: decoded.error))")
        #expect(decoded.bytes == plain, "\(name)")
        // Each piece refers to nothing before it: decoding from its first byte gives the rest.
        for index in [1, pieces.count / 2, pieces.count - 1] {
            let rest = Array(pieces[index...].joined())
            let fromPiece = unpack(member(deflateData: Array(joined[starts[index]...]), plain: rest))
            #expect(fromPiece.error == nil && fromPiece.bytes == rest, "\(name), from piece \(index)")
        }
    }

    @Test("The final block's end falls on every bit of a byte among the pieces, and each case joins")
    func everyEndBitIsMet() throws {
        let deflater = LibdeflateDeflater(level: 6)
        defer { deflater.end() }
        let inflater = try ZStream(inflate: ())
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { scratch.deallocate() }
        var seen = Set<Int>()
        for (index, size) in Self.pieceSizes(seed: 99).enumerated() {
            let piece = textBytes(count: size, seed: UInt64(index))
            let final = try compressPiece(piece, with: deflater, isFinal: true)
            let bounds = try final.withUnsafeBytes { try inflater.locateFinalBlock(in: $0, scratch: scratch) }
            #expect((bounds.endBit + 7) / 8 == final.count, "libdeflate ends at its last byte")
            seen.insert(bounds.endBit & 7)
            let continuable = try compressPiece(piece, with: deflater, isFinal: false)
            // 4 bytes of stored block, or 5 when fewer than 3 bits were left in the last byte.
            let extra = bounds.endBit & 7 == 0 || bounds.endBit & 7 >= 6 ? 5 : 4
            #expect(continuable.count == final.count + extra, "\(size) bytes, end bit \(bounds.endBit & 7)")
            #expect(Array(continuable.suffix(4)) == [0, 0, 0xff, 0xff])
        }
        #expect(seen == Set(0..<8), "end bits met: \(seen.sorted())")
    }

    @Test("Data that is not a complete deflate stream is refused, not joined")
    func invalidDataIsRefused() throws {
        let deflater = LibdeflateDeflater(level: 6)
        defer { deflater.end() }
        let whole = try compressPiece(textBytes(count: 50_000, seed: 7), with: deflater, isFinal: true)
        let inflater = try ZStream(inflate: ())
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { scratch.deallocate() }
        for cut in [Array(whole.prefix(whole.count / 2)), [0xff, 0xff, 0xff], []] {
            #expect(throws: GzipError.self) {
                try cut.withUnsafeBytes { try inflater.locateFinalBlock(in: $0, scratch: scratch) }
            }
        }
    }

    @Test("A deflater's output for a piece does not depend on the pieces it deflated before (so not on which worker takes it)",
          arguments: 0..<6)
    func outputDependsOnThePieceAlone(backend: Int) throws {
        let (name, make) = Self.backends[backend]
        let pieces = (0..<6).map { mixedBytes(count: 200_000 + 37_000 * $0, seed: 40 + UInt64($0)) }
        let used = make()
        defer { used.end() }
        for (index, piece) in pieces.enumerated() {
            let fresh = make()
            defer { fresh.end() }
            for isFinal in [false, true] {
                let same = try compressPiece(piece, with: used, isFinal: isFinal)
                    == (try compressPiece(piece, with: fresh, isFinal: isFinal))
                #expect(same, "\(name), piece \(index), final \(isFinal)")
            }
        }
    }
}

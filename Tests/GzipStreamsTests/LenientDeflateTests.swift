import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// The files of `fixtures/lenient/` (made by its `make-lenient-deflate.py`): deflate data that
/// ISA-L or libdeflate accept and zlib rejects, each with the CRC-32 and ISIZE of what a lenient
/// decoder makes of it. zlib's verdict is the strict one; ISA-L's path keeps its output only
/// where the trailer matches it.
@Suite("Deflate data only the fast inflaters accept: zlib's verdict and the fast path's", .onDedicatedThreads)
struct LenientDeflateTests {
    @Test("The manifest lists 6 files, one for each kind, every one present")
    func manifestIsComplete() {
        #expect(LenientManifest.rows.count == 6)
        for row in LenientManifest.rows {
            #expect(FileManager.default.fileExists(atPath: row.path), "missing \(row.file)")
        }
    }

    /// zlib's error as the stream reports it.
    private func zlibError(_ row: LenientFixture) -> GzipError {
        .invalidDeflateData(member: 1, message: row.zlibMessage, offset: row.zlibOffset)
    }

    @Test("inflater .zlib gives zlib's error, at zlib's offset, after zlib's bytes", arguments: LenientManifest.rows)
    func strict(_ row: LenientFixture) throws {
        let stream = try GzipInputStream(wrapping: FileInputStream(path: row.path), inflater: .zlib)
        let decoded = drain(stream)
        stream.close()
        #expect(row.zlibKind == "invalid-deflate")
        #expect(decoded.gzipError == zlibError(row), "\(String(describing: decoded.error))")
        #expect(decoded.bytes.count == row.zlibBytesBefore)
        #expect(stream.streamStatus == .error)
    }

    @Test("inflater .isal gives the recorded fast result, from a file and through one-byte reads of memory",
          arguments: LenientManifest.rows)
    func fast(_ row: LenientFixture) throws {
        let compressed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: row.path)))
        let fromFile = try GzipInputStream(wrapping: FileInputStream(path: row.path), inflater: .isal)
        let passes = [drain(fromFile), unpack(compressed, oneByteInner: true, inflater: .isal)]
        fromFile.close()
        for decoded in passes {
            switch row.fast {
            case .ok(let sha256, let size):
                #expect(decoded.error == nil, "\(String(describing: decoded.error))")
                #expect(decoded.bytes.count == size)
                #expect(try GzipStreamsTests.sha256(of: decoded.bytes) == sha256)
                // What it kept is what the trailer describes.
                #expect(referenceCRC32(decoded.bytes) == littleEndianUInt32(compressed, at: compressed.count - 8))
                #expect(UInt32(decoded.bytes.count) == littleEndianUInt32(compressed, at: compressed.count - 4))
            case .invalidDeflate(let offset, let bytesBefore):
                #expect(decoded.gzipError == .invalidDeflateData(member: 1, message: row.zlibMessage, offset: offset),
                        "\(String(describing: decoded.error))")
                #expect(decoded.bytes.count == bytesBefore)
            }
        }
    }

    @Test("A wrong CRC-32 turns what ISA-L accepts into an error: never output on a mismatch",
          arguments: LenientManifest.rows.filter { if case .ok = $0.fast { true } else { false } })
    func fastNeedsTheTrailer(_ row: LenientFixture) throws {
        var compressed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: row.path)))
        compressed[compressed.count - 8] ^= 1
        let decoded = unpack(compressed, inflater: .isal)
        let error = try #require(decoded.gzipError)
        #expect(["crc-mismatch", "invalid-deflate"].contains(error.kind), "\(error)")
        #expect(unpack(compressed, inflater: .zlib).gzipError == zlibError(row))
    }
}

import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// `unpack` inflates with ISA-L behind a read-ahead worker and a write-behind worker; what it
/// writes and reports must still be zlib's, to the byte: the same bytes before the damage and
/// the same one-line error (message and offset). From a file, a member is read again by
/// seeking; from a pipe, from the copy kept of it.
@Suite("unpack of damaged files: zlib's bytes and error, from a file and from a pipe", .onDedicatedThreads)
struct UnpackDecoderCLITests {
    @Test("Each damaged fixture: standard output and the error line equal zlib's decode",
          arguments: FixtureManifest.rows(.error))
    func damagedFixture(row: FixtureRow) throws {
        let reference = zlibDecode(row.path)
        guard let error = reference.error else {
            Issue.record("zlib decodes \(row.file) without an error")
            return
        }
        if error.kind == "trailing-garbage" { return }   // a warning with exit 2: FixtureCLITests
        try withScratch { scratch in
            let fromFile = scratch.ioPath("from-file")
            let direct = try gzstream(["unpack", "-c", row.path], in: scratch, stdoutPath: fromFile)
            #expect(direct.status == 1, "\(direct)")
            #expect(direct.err == "gzstream: \(row.path): \(error)\n")
            // The one leniency of ISA-L (GzipInputStream.Inflater.isal): the 21 literals of a
            // block whose distance code zlib rejects at its header come out before the error.
            let expected = row.file == "corpus/zlib/infcover-invalid-distances-set.gz"
                ? [UInt8](repeating: 3, count: 21) : reference.bytes
            #expect(try readBytes(fromFile) == expected, "from the file")

            let fromPipe = scratch.ioPath("from-pipe")
            let piped = try shell(#"cat "$1" | "$0" unpack -c > "$2""#, [row.path, fromPipe], in: scratch)
            #expect(piped.status == 1, "\(piped)")
            #expect(piped.err == "gzstream: standard input: \(error)\n")
            #expect(try readBytes(fromPipe) == expected, "from a pipe")
        }
    }

    /// Decodes `path` with zlib in one pass: the bytes before the first error, and the error.
    private func zlibDecode(_ path: String) -> (bytes: [UInt8], error: GzipError?) {
        let stream = try! GzipInputStream(wrapping: FileInputStream(path: path), trailingGarbage: .ignore, inflater: .zlib)
        defer { stream.close() }
        stream.open()
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
            if count <= 0 {
                if stream.trailingGarbage != nil {
                    return (bytes, .trailingGarbage(offset: 0, length: 0))
                }
                return (bytes, count < 0 ? stream.streamError as? GzipError : nil)
            }
            bytes += buffer[0..<count]
        }
    }

    /// libdeflate (and so bgzip) decodes the reserved codes; these members carry the CRC-32 and
    /// ISIZE of what it makes of them, and plain unpack once kept those bytes with exit 0.
    @Test("A BGZF member using a reserved code (RFC 1951 §3.2.6), CRC-32 and ISIZE matching libdeflate's reading: unpack, --strict and test all give zlib's bytes and error",
          arguments: ["regressions/bgzf-reserved-distance-code.bgz", "regressions/bgzf-reserved-length-code.bgz"])
    func reservedCodeInBGZF(file: String) throws {
        let path = PackageLocations.fixtures.appendingPathComponent(file).path
        let reference = zlibDecode(path)
        let error = try #require(reference.error)
        #expect(error.kind == "invalid-deflate")
        try withScratch { scratch in
            let fast = try gzstream(["unpack", "-c", path], in: scratch)
            #expect(fast.status == 1 && fast.err == "gzstream: \(path): \(error)\n", "\(fast)")
            #expect(fast.stdout == reference.bytes)
            let strict = try gzstream(["unpack", "-c", "--strict", path], in: scratch)
            #expect(strict.status == 1 && strict.err == "gzstream: \(path): \(error)\n")
            #expect(strict.stdout == reference.bytes)
            let tested = try gzstream(["test", path], in: scratch)
            #expect(tested.status == 1 && tested.err == "gzstream: \(path): \(error)\n")
        }
    }
}

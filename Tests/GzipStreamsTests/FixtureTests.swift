import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// A row of `fixtures/manifest.tsv` (see `fixtures/README.md`), as TestSupport reads it.
typealias Fixture = FixtureRow

extension FixtureRow {
    /// Every row of the manifest; empty when it cannot be read (a test then fails on the count).
    static var all: [FixtureRow] { FixtureManifest.rows }

    /// Second passes through a one-byte-per-read inner stream are skipped above this size (the
    /// 4 GiB + 7 file and the 100,000-member CVE file), to keep the run short.
    static let oneBytePassLimit = 1 << 20
}

@Suite("Fixtures: fixtures/manifest.tsv through the library", .onDedicatedThreads)
struct FixtureTests {
    @Test("The manifest lists 182 fixtures, every one present, with a known expectation")
    func manifestIsComplete() throws {
        let rows = FixtureManifest.lines
        #expect(rows.count == 182)
        #expect(Fixture.all.count == rows.count, "a manifest row has an unknown expectation")
        for fixture in Fixture.all {
            #expect(FileManager.default.fileExists(atPath: fixture.path), "missing \(fixture.file)")
        }
    }

    @Test("Each fixture gives the manifest's result", arguments: Fixture.all)
    func fixture(_ fixture: Fixture) throws {
        switch fixture.expectation {
        case .ok(let sha256):
            let stream = try GzipInputStream(wrapping: FileInputStream(path: fixture.path))
            let output = try sha256OfOutput(stream, readSize: 256 * 1024)
            stream.close()
            #expect(output.error == nil, "unexpected error: \(String(describing: output.error))")
            #expect(output.sha256 == sha256)
            if let size = fixture.statedOutputSize {
                #expect(output.byteCount == size)
            }
            #expect(stream.uncompressedByteCount == output.byteCount)
            #expect(stream.memberCount >= 1)
            #expect(stream.streamStatus == .closed)
            try checkOneBytePass(fixture, firstPass: output)

        case .error(let kinds):
            let stream = try GzipInputStream(wrapping: FileInputStream(path: fixture.path))
            let output = try sha256OfOutput(stream, readSize: 256 * 1024)
            stream.close()
            let error = try #require(output.gzipError, "expected \(kinds), got \(String(describing: output.error))")
            #expect(kinds.contains(error.kind), "expected \(kinds), got \(error)")
            #expect(stream.streamStatus == .error)
            try checkOneBytePass(fixture, firstPass: output)

        case .roundtrip(let sha256):
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
            #expect(try GzipStreamsTests.sha256(of: raw) == sha256, "the raw file is not the one the manifest names")
            for level in [0, 6, 9] {
                let packed = try pack(raw, level: level)
                let unpacked = unpack(packed)
                #expect(unpacked.error == nil, "level \(level): \(String(describing: unpacked.error))")
                #expect(unpacked.bytes == raw, "level \(level): the round trip changed the bytes")
            }
            let direct = unpack(raw)
            #expect(direct.gzipError?.kind == "bad-magic", "raw input: \(String(describing: direct.error))")
            #expect(direct.gzipError == .notGzip(offset: 0))
        }
    }

    /// Decodes the fixture again from memory through an inner stream that gives one byte per
    /// read; the output's SHA-256, or the error with its offsets, must be the first pass's.
    private func checkOneBytePass(_ fixture: Fixture, firstPass: HashedOutput) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        guard bytes.count <= Fixture.oneBytePassLimit else { return }
        let stream = gunzipStream(bytes, oneByteInner: true)
        let output = try sha256OfOutput(stream, readSize: 256 * 1024)
        stream.close()
        if let firstError = firstPass.gzipError {
            #expect(output.gzipError == firstError, "one byte per read: \(String(describing: output.error))")
        } else {
            #expect(output.error == nil, "one byte per read: \(String(describing: output.error))")
            #expect(output.sha256 == firstPass.sha256, "one byte per read gave other bytes")
            #expect(output.byteCount == firstPass.byteCount)
        }
    }
}

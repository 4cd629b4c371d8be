import Foundation
import Testing

// fixtures/lenient/manifest.tsv, written by fixtures/lenient/make-lenient-deflate.py: deflate data
// that ISA-L or libdeflate accept and zlib rejects, with zlib's verdict and the fast path's.

/// One row of `fixtures/lenient/manifest.tsv`.
public struct LenientFixture: Sendable, CustomTestStringConvertible {
    /// What the fast path (ISA-L, zlib taking a member over where ISA-L fails) gives.
    public enum Fast: Sendable, Equatable {
        /// The member decodes to `size` bytes with this SHA-256 (its CRC-32 and ISIZE match them).
        case ok(sha256: String, size: Int)
        /// zlib's error at `offset` after `bytesBefore` bytes.
        case invalidDeflate(offset: Int64, bytesBefore: Int)
    }

    /// The file's name in `fixtures/lenient/`.
    public var file: String
    /// zlib's error: always `invalid-deflate` (`GzipError.kind`).
    public var zlibKind: String
    /// The byte offset in the file where zlib stopped, the byte that showed the error included.
    public var zlibOffset: Int64
    /// zlib's message (`msg` of its `z_stream`).
    public var zlibMessage: String
    /// The bytes zlib gives before its error.
    public var zlibBytesBefore: Int
    public var fast: Fast
    /// What is wrong with the deflate data.
    public var notes: String

    public var testDescription: String { file }
    /// The absolute path of the file.
    public var path: String { LenientManifest.folder.appendingPathComponent(file).path }
}

/// The rows of `fixtures/lenient/manifest.tsv`.
public enum LenientManifest {
    public static let folder = PackageLocations.fixtures.appendingPathComponent("lenient", isDirectory: true)

    /// Every row; a row that cannot be read is left out (a test then fails on the count).
    public static let rows: [LenientFixture] = {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("manifest.tsv"), encoding: .utf8) else {
            return []
        }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count == 9, let offset = Int64(columns[2]), let before = Int(columns[4]),
                  let size = Int(columns[7]) else { return nil }
            let fast: LenientFixture.Fast
            switch columns[5] {
            case "ok": fast = .ok(sha256: columns[6], size: size)
            case "invalid-deflate":
                guard let fastOffset = Int64(columns[6]) else { return nil }
                fast = .invalidDeflate(offset: fastOffset, bytesBefore: size)
            default: return nil
            }
            return LenientFixture(file: columns[0], zlibKind: columns[1], zlibOffset: offset, zlibMessage: columns[3],
                                  zlibBytesBefore: before, fast: fast, notes: columns[8])
        }
    }()
}

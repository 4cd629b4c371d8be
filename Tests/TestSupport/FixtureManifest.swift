import Foundation
import Testing

// fixtures/manifest.tsv, read once for every suite (fixtures/README.md says how each fixture
// was made): file, source, expectation, SHA-256 or error kinds, notes.

/// One row of `fixtures/manifest.tsv`.
public struct FixtureRow: Sendable, CustomTestStringConvertible {
    /// The third column: what reading the file must give.
    public enum Kind: String, Sendable { case ok, error, roundtrip }

    /// The third and fourth columns together.
    public enum Expectation: Sendable, Equatable {
        /// Unpacks to bytes with this SHA-256.
        case ok(sha256: String)
        /// Unpacking fails with an error of one of these kinds (`GzipError.kind`).
        case error(kinds: [String])
        /// A raw file with this SHA-256: pack then unpack must give it back.
        case roundtrip(sha256: String)
    }

    /// The path below `fixtures/`.
    public var file: String
    /// Where the file came from.
    public var source: String
    public var kind: Kind
    /// The fourth column: the SHA-256 of the right output (`ok`, `roundtrip`) or the error
    /// kinds separated by `|` (`error`).
    public var value: String
    public var notes: String

    public var testDescription: String { file }
    /// The absolute path of the file.
    public var path: String { PackageLocations.fixtures.appendingPathComponent(file).path }
    public var errorKinds: [String] { value.split(separator: "|").map(String.init) }
    public var allowsTrailingGarbage: Bool { errorKinds.contains("trailing-garbage") }

    public var expectation: Expectation {
        switch kind {
        case .ok: .ok(sha256: value)
        case .error: .error(kinds: errorKinds)
        case .roundtrip: .roundtrip(sha256: value)
        }
    }

    /// The output size the notes state ("152089 bytes out / …"), when they state one.
    public var statedOutputSize: Int64? {
        guard let match = notes.firstMatch(of: /^(\d+) bytes out/) else { return nil }
        return Int64(match.1)
    }

    /// From the notes of a trailing-garbage row: what the members before the garbage decode to,
    /// "decode to N B (sha256 X)".
    public var outputBeforeFault: (size: Int, sha256: String)? {
        guard let match = notes.firstMatch(of: /decode to (\d+) B \(sha256 ([0-9a-f]{64})\)/) else { return nil }
        return (Int(match.1)!, String(match.2))
    }

    /// The size of the file in bytes; 0 when it cannot be read.
    public var fileSize: Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}

/// The rows of `fixtures/manifest.tsv`.
public enum FixtureManifest {
    public static let url = PackageLocations.fixtures.appendingPathComponent("manifest.tsv")

    /// The manifest's lines below its header, as text; empty when it cannot be read.
    public static let lines: [Substring] = {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return Array(text.split(separator: "\n").dropFirst())
    }()

    /// Every row with a known expectation; a row with another is left out (a test then fails
    /// on the count: ``lines`` still has it).
    public static let rows: [FixtureRow] = lines.compactMap { line in
        let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard columns.count >= 4, let kind = FixtureRow.Kind(rawValue: columns[2]) else { return nil }
        return FixtureRow(file: columns[0], source: columns[1], kind: kind, value: columns[3],
                          notes: columns.count > 4 ? columns[4] : "")
    }

    /// The rows of one kind.
    public static func rows(_ kind: FixtureRow.Kind) -> [FixtureRow] {
        rows.filter { $0.kind == kind }
    }
}

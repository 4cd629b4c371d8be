import Foundation
import Testing

// Where the package's files are, and the programs tests compare against.

/// Places in the package, found from this file's path (`Tests/TestSupport/Locations.swift`).
public enum PackageLocations {
    /// The package root.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `fixtures/` below the package root.
    public static let fixtures: URL = root.appendingPathComponent("fixtures", isDirectory: true)

    /// The version in the top-level `VERSION` file, the one place it is changed (without the
    /// newline). `gzstream --version`, the CHANGELOG, the README and the Debian package are
    /// checked against it.
    /// - Throws: Foundation's error when the file cannot be read.
    public static func version() throws -> String {
        try String(contentsOf: root.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The text of `fixtures/<relativePath>`, read as UTF-8: expected output kept as data rather
    /// than as a second copy in Swift source.
    /// - Throws: Foundation's error when the file cannot be read.
    public static func fixtureText(_ relativePath: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent(relativePath), encoding: .utf8)
    }
}

/// A program that tests compare against or drive, and the Debian package that installs it.
/// `make test` run as root (as in CI) installs every one; for anyone else a test that needs a
/// missing one is skipped, and says which and why (`.requires(.bgzip)`), rather than passing
/// unchecked.
public struct Tool: Sendable {
    public var name: String
    public var debianPackage: String

    public init(name: String, debianPackage: String) {
        self.name = name
        self.debianPackage = debianPackage
    }

    /// The executable in `/usr/bin`, `/bin` or `/usr/local/bin`, or `nil` when it is not
    /// installed. Looked up on each use: nothing is cached.
    public var path: String? {
        for directory in ["/usr/bin", "/bin", "/usr/local/bin"] {
            let path = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    public static let gzip = Tool(name: "gzip", debianPackage: "gzip")
    public static let pigz = Tool(name: "pigz", debianPackage: "pigz")
    public static let bgzip = Tool(name: "bgzip", debianPackage: "tabix")
    /// ISA-L's command-line gzip.
    public static let igzip = Tool(name: "igzip", debianPackage: "isal")
    public static let gztool = Tool(name: "gztool", debianPackage: "gztool")
    public static let python3 = Tool(name: "python3", debianPackage: "python3")
    public static let tar = Tool(name: "tar", debianPackage: "tar")
    public static let rsync = Tool(name: "rsync", debianPackage: "rsync")
    /// util-linux's, for a pseudo-terminal.
    public static let script = Tool(name: "script", debianPackage: "bsdutils")
    /// To see the system calls a run makes, and in what order (`--synchronous`).
    public static let strace = Tool(name: "strace", debianPackage: "strace")
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where `tool` is installed; elsewhere it is reported as skipped, with
    /// the tool and its Debian package named.
    public static func requires(_ tool: Tool) -> Self {
        .enabled(if: tool.path != nil, Comment(rawValue: "needs \(tool.name), which is not installed (Debian package: \(tool.debianPackage))"))
    }
}

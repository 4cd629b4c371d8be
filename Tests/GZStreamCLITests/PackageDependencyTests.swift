import Foundation
import Testing
import TestSupport

// The README's dependency line, `.package(url: "<where you cloned it from>", from: "0.1.0")`,
// used verbatim by a new package: it resolves against a clone of this repository whose HEAD
// carries the tag VERSION names, builds, and the program runs.

extension Tool {
    /// To clone this repository and tag the clone.
    static let git = Tool(name: "git", debianPackage: "git")
}

/// Set to 1 to run the scratch package's build: a clean debug build of ByteStreams and
/// GzipStreams, 52 s on the busy 2-core development machine, too much to add to every
/// `make test`. `make dependency-test` sets it (and CI runs that).
let dependencyTestVariable = "GZSTREAM_DEPENDENCY_TEST"

@Suite("The README's dependency line", .onDedicatedThreads)
struct PackageDependencyTests {
    static let placeholder = "<where you cloned it from>"

    /// The README's `.package(url: …, from: …)` line as it is written, and the version it asks for.
    static func readmeDependency() throws -> (line: String, version: String) {
        let readme = try String(contentsOf: PackageLocations.root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: ".package(url: \"\(placeholder)\", from: \""),
                                 "README.md has no `.package(url: \"\(placeholder)\", from: …)` line")
        let end = try #require(readme.range(of: "\")", range: start.upperBound..<readme.endIndex))
        return (String(readme[start.lowerBound..<end.upperBound]), String(readme[start.upperBound..<end.lowerBound]))
    }

    @Test("It asks for the version in VERSION")
    func asksForVersion() throws {
        #expect(try Self.readmeDependency().version == PackageLocations.version())
    }

    @Test("A scratch package with that line, against a clone tagged VERSION, builds offline and runs",
          .requires(.git),
          .enabled(if: ProcessInfo.processInfo.environment[dependencyTestVariable] == "1",
                   Comment(rawValue: "a clean build of the library, about a minute: set \(dependencyTestVariable)=1 (make dependency-test)")),
          .timeLimit(.minutes(15)))
    func scratchPackageBuilds() throws {
        let (line, version) = try Self.readmeDependency()
        try withScratch { scratch in
            // The clone is named gzstream, so the package's identity is the one the README's
            // product dependency names.
            let clone = scratch.work.appendingPathComponent("gzstream").path
            let app = scratch.work.appendingPathComponent("app")
            let sources = app.appendingPathComponent("Sources/App")
            try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
            let dependency = line.replacingOccurrences(of: Self.placeholder, with: clone)
            try """
            // swift-tools-version:6.0
            import PackageDescription

            let package = Package(
                name: "App",
                platforms: [.macOS(.v15)],
                dependencies: [
                    \(dependency),
                ],
                targets: [
                    .executableTarget(name: "App", dependencies: [.product(name: "GzipStreams", package: "gzstream")]),
                ]
            )

            """.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
            try """
            import GzipStreams

            let data = Array("hello, gzip\\n".utf8)
            let packed = try data.gzipped()
            let plain = try packed.gunzipped(maximumOutputSize: 1 << 20)
            print(plain == data ? "round trip through \\(packed.count) bytes" : "round trip changed the data")

            """.write(to: sources.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
            // The tag is made in the clone only: this repository's own tags are a release's
            // business. The committed HEAD is what is cloned; uncommitted changes are not in it.
            // No network: the only dependency is a local path, and SwiftPM's shared cache is
            // not used, so nothing from an earlier run is resolved instead.
            let result = try shell("""
                set -eu
                git clone --quiet --no-hardlinks "$1" "$2"
                git -C "$2" tag -f "$3" HEAD >/dev/null
                command -v swift >/dev/null || { echo "no swift on PATH" >&2; exit 127; }
                cd "$4"
                swift build --disable-dependency-cache >build.log 2>&1 || { cat build.log >&2; exit 1; }
                .build/debug/App
                """, [PackageLocations.root.path, clone, version, app.path], in: scratch, timeout: 900)
            #expect(result.status == 0, "\(result)")
            #expect(result.out == "round trip through 32 bytes\n", "\(result)")
            let resolved = try String(contentsOf: app.appendingPathComponent("Package.resolved"), encoding: .utf8)
            #expect(resolved.contains("\"version\" : \"\(version)\""), "Package.resolved: \(resolved)")
        }
    }
}

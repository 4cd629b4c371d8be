import Foundation
import Testing
import TestSupport

/// docs/layout.md is the map a newcomer opens first: every Swift file under `Sources/`,
/// `Examples/` and `Fuzz/` has one line there, under the heading of its folder, and every line
/// names a file that exists. A file added, moved or removed without its line fails here.
@Suite struct SourceLayoutTests {
    /// The folders (relative to the package root, ending in "/") and, in each, the `.swift`
    /// file names layout.md gives a line to, in order; a name given twice appears twice.
    static func documentedFiles() throws -> [String: [String]] {
        let text = try String(contentsOf: PackageLocations.root.appendingPathComponent("docs/layout.md"), encoding: .utf8)
        var folder: String?
        var files: [String: [String]] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                // A folder's heading: "### `Sources/GzipStreams/Reader/`"; any other heading
                // ends the folder's list.
                let parts = line.split(separator: "`")
                folder = parts.count >= 2 && parts[1].hasSuffix("/") ? String(parts[1]) : nil
            } else if line.hasPrefix("- `"), let folder {
                let name = line.dropFirst(3).prefix { $0 != "`" }
                if name.hasSuffix(".swift") { files[folder, default: []].append(String(name)) }
            }
        }
        return files
    }

    /// The `.swift` files under `Sources/` and `Examples/`, by folder as above.
    static func sourceFiles() -> [String: [String]] {
        var files: [String: [String]] = [:]
        let root = PackageLocations.root
        for top in ["Sources", "Examples", "Fuzz"] {
            let base = root.appendingPathComponent(top)
            guard let walker = FileManager.default.enumerator(atPath: base.path) else { continue }
            while let relative = walker.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                let path = top + "/" + relative
                let slash = path.lastIndex(of: "/")!
                files[String(path[...slash]), default: []].append(String(path[path.index(after: slash)...]))
            }
        }
        return files
    }

    @Test func everySourceFileHasOneLine() throws {
        let documented = try Self.documentedFiles()
        let present = Self.sourceFiles()
        #expect(!present.isEmpty)
        for (folder, names) in present.sorted(by: { $0.key < $1.key }) {
            for name in names.sorted() {
                let lines = documented[folder, default: []].filter { $0 == name }.count
                #expect(lines == 1, "docs/layout.md has \(lines) lines for \(folder)\(name) under the heading `\(folder)`")
            }
        }
    }

    @Test func everyLineNamesAFile() throws {
        let documented = try Self.documentedFiles()
        let present = Self.sourceFiles()
        #expect(!documented.isEmpty)
        for (folder, names) in documented.sorted(by: { $0.key < $1.key }) {
            for name in names where !present[folder, default: []].contains(name) {
                Issue.record("docs/layout.md names \(folder)\(name), which does not exist")
            }
        }
    }
}

import Foundation
import Testing
import TestSupport

// The helps and the version: the program's map, each command's help (and each cache action's),
// gzip mode's, all within 80 columns; --version with the version of every library the binary
// calls.

extension Tool {
    /// The versions the system's development packages declare, to check --version against
    /// something it does not compute itself.
    static let pkgConfig = Tool(name: "pkg-config", debianPackage: "pkgconf")
}

/// Each way to ask for help, and the fixture (fixtures/cli/) that it prints.
let helpRequests: [(arguments: [String], fixture: String)] = [
    (["--help"], "help.txt"), (["-h"], "help.txt"), (["help"], "help.txt"), (["-d", "--help"], "help.txt"),
    (["pack", "--help"], "help-pack.txt"), (["help", "pack"], "help-pack.txt"),
    (["unpack", "-h", "file"], "help-unpack.txt"), (["help", "unpack"], "help-unpack.txt"),
    (["test", "--help"], "help-test.txt"), (["list", "--json", "-h"], "help-list.txt"),
    (["index", "--help"], "help-index.txt"), (["help", "index"], "help-index.txt"),
    (["send", "--help"], "help-send.txt"), (["receive", "-h", "0"], "help-receive.txt"),
    (["help", "receive"], "help-receive.txt"), (["help", "cache"], "cache-help.txt"),
    (["cache", "--help"], "cache-help.txt"), (["help", "gzip"], "help-gzip.txt"),
    (["cache", "put", "-h", "k"], "help-cache-put.txt"), (["cache", "get", "k", "--help"], "help-cache-get.txt"),
    (["cache", "list", "-h"], "help-cache-list.txt"), (["cache", "remove", "--help"], "help-cache-remove.txt"),
    (["cache", "clear", "-h"], "help-cache-clear.txt"), (["cache", "prune", "-h"], "help-cache-prune.txt"),
]

@Suite("help and version", .onDedicatedThreads)
struct HelpCLITests {
    @Test("each help goes to standard output with exit 0, as its fixture", arguments: helpRequests)
    func help(arguments: [String], fixture: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(result.out == cliText(fixture), "\(arguments)")
        }
    }

    @Test("called as gzip, gunzip or zcat, --help and -h print gzip mode's help", arguments: ["gzip", "gunzip", "zcat"])
    func gzipModeHelp(name: String) throws {
        try withScratch { scratch in
            for option in ["--help", "-h"] {
                let result = try runAsGzip(["-k", option, "file"], linkName: name, in: scratch)
                #expect(result.status == 0 && result.err == "", "\(result)")
                // The usage line names the program as it was called, as GNU gzip's does.
                let expected = cliText("help-gzip.txt")
                #expect(result.out == expected.replacingOccurrences(of: "Usage: gzstream ", with: "Usage: \(name) "))
                #expect(result.out.hasPrefix("Usage: \(name) [OPTION]... [FILE]...\n"))
            }
        }
    }

    @Test("every line of every help fits in 80 columns")
    func width() throws {
        try withScratch { scratch in
            for arguments in Set(helpRequests.map(\.arguments)) {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.out.count > 200, "\(arguments): \(result)")
                for line in result.out.split(separator: "\n") {
                    #expect(line.count <= 80, "\(arguments): \(line)")
                }
            }
        }
    }

    @Test("help with no such command, or two, is a usage error", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["help", "nope"], "no help for 'nope' (COMMAND: gzip, pack, unpack, test, list, index, send, receive, cache)"),
    ])
    func unknownTopic(arguments: [String], message: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1 && result.out == "", "\(result)")
            #expect(result.err == usageError(message))
        }
    }

    @Test("--version and -V name gzstream's version, then each library's as pkg-config gives it",
          .requires(.pkgConfig))
    func version() throws {
        let pkgConfig = try #require(Tool.pkgConfig.path)
        try withScratch { scratch in
            var expected = "gzstream \(try PackageLocations.version())\n"
            for (name, module) in [("zlib", "zlib"), ("libdeflate", "libdeflate"), ("ISA-L", "libisal"),
                                   ("libsodium", "libsodium"), ("SQLite", "sqlite3")] {
                let declared = try run(pkgConfig, ["--modversion", module], in: scratch)
                #expect(declared.status == 0, "\(declared)")
                expected += "\(name) \(declared.out)"
            }
            for arguments in [["--version"], ["-V"], ["pack", "-V"], ["cache", "--version"]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 0 && result.err == "", "\(result)")
                #expect(result.out == expected, "\(arguments)")
            }
            let gzip = try runAsGzip(["-V"], in: scratch)
            #expect(gzip.status == 0 && gzip.out == expected && gzip.err == "", "\(gzip)")
        }
    }

    @Test("The version is VERSION's in --version, the CHANGELOG's newest entry and the README's package example")
    func versionInOnePlace() throws {
        try withScratch { scratch in
            let version = try PackageLocations.version()
            let parts = version.split(separator: ".", omittingEmptySubsequences: false)
            #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) },
                    "VERSION holds \(version.debugDescription), not MAJOR.MINOR.PATCH")
            let result = try gzstream(["--version"], in: scratch)
            let firstLine = try #require(result.out.split(separator: "\n").first)
            // toolVersion (Sources/GZStreamCLI/Help/HelpText.swift) is VERSION's copy.
            #expect(firstLine == "gzstream \(version)", "\(result)")
            let changelog = try String(contentsOf: PackageLocations.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
            let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") && $0.first(where: \.isNumber) != nil }
            #expect(newest?.hasPrefix("## \(version) ") == true, "CHANGELOG's newest entry: \(newest ?? "none")")
            let readme = try String(contentsOf: PackageLocations.root.appendingPathComponent("README.md"), encoding: .utf8)
            #expect(readme.contains("from: \"\(version)\""), "README's .package(url:from:) example names \(version)")
        }
    }
}

import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// gzip mode while it runs, next to GNU gzip 1.12: gzstream is run through a link named `gzip`,
// so that its messages start as gzip's do, and both are run with the same arguments on the same
// files; standard output, standard error and the exit status must be byte for byte gzip's, and
// the files left the same. Crafted inputs cover what may follow a member and the faults gzip
// names; clean files cover -v's lines.

/// Runs `arguments` with gzstream as `gzip` in one scratch directory and GNU gzip in another,
/// each holding `files` (modification time ``GzipModeRunCLITests/fixedTime``), standard input
/// the file `input` of each when given.
/// - Returns: Both results, and both trees afterwards.
func besideGzip(_ arguments: [String], files: [String: [UInt8]], input: String? = nil)
    throws -> (ours: RunResult, gzip: RunResult, ourTree: [String: TreeEntry], gzipTree: [String: TreeEntry]) {
    try withScratch { mine in
        try withScratch { reference in
            for scratch in [mine, reference] {
                for (name, bytes) in files {
                    if let slash = name.lastIndex(of: "/") {
                        try FileManager.default.createDirectory(atPath: scratch.path(String(name[..<slash])),
                                                                withIntermediateDirectories: true)
                    }
                    try scratch.write(name, bytes)
                    setModificationTime(scratch.path(name), seconds: GzipModeRunCLITests.fixedTime)
                }
            }
            let ours = try run(gzipNamedLink(in: mine), arguments, in: mine, input: input.map { .file(mine.path($0)) } ?? .null)
            let gzip = try run("/usr/bin/gzip", arguments, in: reference,
                               input: input.map { .file(reference.path($0)) } ?? .null)
            return (ours, gzip, try tree(at: mine.work.path), try tree(at: reference.work.path))
        }
    }
}

/// The gzstream under test as a link named `gzip` outside `scratch`'s work directory.
func gzipNamedLink(in scratch: Scratch) throws -> String {
    let directory = scratch.root.appendingPathComponent("bin").path
    let link = directory + "/gzip"
    if !FileManager.default.fileExists(atPath: link) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Locations.binary)
    }
    return link
}

/// Expects gzstream's run to be gzip's: status, standard output, standard error, files left.
func expectLikeGzip(_ arguments: [String], files: [String: [UInt8]], input: String? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
    let (ours, gzip, ourTree, gzipTree) = try besideGzip(arguments, files: files, input: input)
    let shown = "gzip " + arguments.joined(separator: " ") + (input.map { " < " + $0 } ?? "")
    #expect(ours.status == gzip.status, "\(shown)\ngzstream: \(ours)\ngzip: \(gzip)", sourceLocation: sourceLocation)
    #expect(ours.err == gzip.err, "\(shown)\ngzstream: \(ours.err.debugDescription)\ngzip: \(gzip.err.debugDescription)",
            sourceLocation: sourceLocation)
    #expect(ours.stdout == gzip.stdout, "\(shown)\ngzstream: \(ours)\ngzip: \(gzip)", sourceLocation: sourceLocation)
    #expect(ourTree == gzipTree, "\(shown): files left", sourceLocation: sourceLocation)
}

/// A crafted compressed file.
struct CraftedInput: Sendable, CustomTestStringConvertible {
    var label: String
    var bytes: [UInt8]
    var testDescription: String { label }
}

@Suite("gzip mode while it runs: GNU gzip's words, its verdict on what follows a member, -v", .onDedicatedThreads)
struct GzipModeRunCLITests {
    static let fixedTime = 1_600_000_000

    /// `gzip -cn` of "hello world\n" (GNU gzip 1.12): no name, no time.
    static let member: [UInt8] = hexBytes("1f8b0800000000000003cb48cdc9c95728cf2fca49e102002d3b08af0c000000")

    /// ``member`` with its byte at `index` changed to `value`.
    static func member(with value: UInt8, at index: Int) -> [UInt8] {
        var bytes = member
        bytes[index] = value
        return bytes
    }

    static let crafted: [CraftedInput] = [
        // What may follow a member.
        CraftedInput(label: "a member", bytes: member),
        CraftedInput(label: "zero padding", bytes: member + [0, 0, 0]),
        CraftedInput(label: "one zero byte", bytes: member + [0]),
        CraftedInput(label: "one other byte", bytes: member + [0x41]),
        CraftedInput(label: "two other bytes", bytes: member + [0x41, 0x42]),
        CraftedInput(label: "a zero, then a byte", bytes: member + [0, 0x41]),
        CraftedInput(label: "a byte, then a zero", bytes: member + [0x41, 0]),
        CraftedInput(label: "zeros, then the gzip magic", bytes: member + [0, 0, 0x1f, 0x8b]),
        CraftedInput(label: "a lone 1f", bytes: member + [0x1f]),
        CraftedInput(label: "1f and a byte", bytes: member + [0x1f, 0x41]),
        CraftedInput(label: "1f 1f", bytes: member + [0x1f, 0x1f]),
        CraftedInput(label: "the gzip magic alone", bytes: member + [0x1f, 0x8b]),
        CraftedInput(label: "a second header cut short", bytes: member + [0x1f, 0x8b, 0x08, 0, 0]),
        CraftedInput(label: "a second member of method 9", bytes: member + [0x1f, 0x8b, 0x09, 0, 0, 0, 0, 0, 0, 3, 0, 0]),
        CraftedInput(label: "a second member with a CRC-32 error", bytes: member + member(with: 0x2e, at: 24)),
        CraftedInput(label: "a second member", bytes: member + member),
        CraftedInput(label: "compress's magic alone", bytes: member + [0x1f, 0x9d]),
        CraftedInput(label: "pack's magic alone", bytes: member + [0x1f, 0x1e]),
        CraftedInput(label: "gzip 0.5's magic alone", bytes: member + [0x1f, 0x9e]),
        CraftedInput(label: "PKZIP's magic", bytes: member + Array("PK\u{3}\u{4}".utf8)),
        // Faults in the member.
        CraftedInput(label: "a CRC-32 error", bytes: member(with: 0x2e, at: 24)),
        CraftedInput(label: "a length error", bytes: member(with: 0x0d, at: 28)),
        CraftedInput(label: "a reserved block type", bytes: Array(member.prefix(10)) + [0xff] + [UInt8](repeating: 0, count: 40)),
        CraftedInput(label: "not gzip", bytes: Array("hello\n".utf8)),
        CraftedInput(label: "empty", bytes: []),
        CraftedInput(label: "a lone 1f first", bytes: [0x1f]),
        CraftedInput(label: "a header cut short", bytes: Array(member.prefix(6))),
        CraftedInput(label: "a trailer cut short", bytes: Array(member.dropLast(4))),
        CraftedInput(label: "method 9", bytes: member(with: 9, at: 2)),
        CraftedInput(label: "FLG bit 5, encrypted", bytes: member(with: 0x20, at: 3)),
        CraftedInput(label: "FLG bit 6", bytes: member(with: 0x40, at: 3)),
        CraftedInput(label: "a wrong header CRC", bytes: [0x1f, 0x8b, 8, 2, 0, 0, 0, 0, 0, 3, 0x12, 0x34] + member.dropFirst(10)),
    ]

    @Test("gzip -dc FILE, gzip -dc < FILE, gzip -t FILE, gzip -tv FILE and gzip -d FILE of crafted files: gzip's output, words, status and files",
          .requires(.gzip), arguments: crafted)
    func craftedLikeGzip(input: CraftedInput) throws {
        let files = ["f.gz": input.bytes]
        try expectLikeGzip(["-dc", "f.gz"], files: files)
        try expectLikeGzip(["-dc"], files: files, input: "f.gz")
        try expectLikeGzip(["-t", "f.gz"], files: files)
        // gzip 1.12 keeps the output and removes the input after a second member of an unknown
        // method (exit 1); gzstream removes nothing after an error.
        if input.label != "a second member of method 9" {
            try expectLikeGzip(["-d", "f.gz"], files: files)
        }
        // -dv's ratio is left out here: after a member gzip counts only the last member's output
        // against all the input (docs/cli.md).
        try expectLikeGzip(["-tv", "f.gz"], files: files)
    }

    @Test("Data after a member in a format gzip also decodes (compress, LZH) is an error here, the output before it kept",
          arguments: [("compress (LZW)", [0x1f, 0x9d, 0x90] as [UInt8]), ("LZH", [0x1f, 0xa0])])
    func otherFormatAfterMember(format: String, magic: [UInt8]) throws {
        try withScratch { scratch in
            try scratch.write("f.gz", Self.member + magic)
            let result = try run(gzipNamedLink(in: scratch), ["-dc", "f.gz"], in: scratch)
            #expect(result.status == 1)
            #expect(result.out == "hello world\n")
            #expect(result.err == "gzip: f.gz: \(format) data after the gzip data -- not supported\n")
        }
    }

    // MARK: -v

    static let aText = sampleText(byteCount: 5000, seed: 41)
    static let bText = sampleText(byteCount: 7000, seed: 42)

    /// a, b and empty plain; b.gz, e.gz (of an empty file) and sub/c.gz made by GNU gzip.
    static func verboseFiles() throws -> [String: [UInt8]] {
        try withScratch { scratch in
            try scratch.write("b", bText)
            try scratch.write("e", [])
            try FileManager.default.createDirectory(atPath: scratch.path("sub"), withIntermediateDirectories: true)
            try scratch.write("sub/c", aText)
            for name in ["b", "e", "sub/c"] { setModificationTime(scratch.path(name), seconds: fixedTime) }
            #expect(try run("/usr/bin/gzip", ["b", "e", "sub/c"], in: scratch).status == 0)
            return ["a": aText, "b": bText, "empty": [], "b.gz": try scratch.read("b.gz"),
                    "e.gz": try scratch.read("e.gz"), "sub/c.gz": try scratch.read("sub/c.gz")]
        }
    }

    @Test("-v when decompressing, testing and listing: gzip's lines byte for byte", .requires(.gzip), arguments: [
        ["-dv", "b.gz"], ["-dvk", "b.gz", "sub/c.gz"], ["-dcv", "b.gz"], ["-dcvk", "e.gz"], ["-dv", "e.gz"],
        ["-tv", "b.gz", "e.gz", "sub/c.gz"], ["-tvq", "b.gz"], ["-lv", "b.gz"], ["-lv", "e.gz"], ["-l", "sub/c.gz"],
        ["-dv", "a"],
    ])
    func verboseLikeGzip(arguments: [String]) throws {
        try expectLikeGzip(arguments, files: Self.verboseFiles())
    }

    @Test("-v with a GZIDX index beside the file: gzip's lines byte for byte, none of gzstream's own", .requires(.gzip),
          arguments: [["-tv", "b.gz"], ["-dv", "b.gz"], ["-dcv", "b.gz"], ["-dvk", "b.gz"]])
    func verboseWithIndexLikeGzip(arguments: [String]) throws {
        var files = try Self.verboseFiles()
        let compressed = try #require(files["b.gz"])
        files["b.gz.gzidx"] = try withScratch { scratch in
            try scratch.write("b.gz", compressed)
            #expect(try gzstream(["index", "b.gz"], in: scratch).status == 0)
            return try scratch.read("b.gz.gzidx")
        }
        try expectLikeGzip(arguments, files: files)
    }

    @Test("-l of several files: gzip's rows; the totals line's ratio is gzstream's (docs/cli.md)", .requires(.gzip), arguments: [
        ["-lv", "b.gz", "e.gz"], ["-l", "b.gz", "sub/c.gz"],
    ])
    func listSeveralLikeGzip(arguments: [String]) throws {
        let (ours, gzip, _, _) = try besideGzip(arguments, files: Self.verboseFiles())
        #expect(ours.status == 0 && gzip.status == 0 && ours.err == gzip.err, "\(ours)")
        let ourLines = ours.out.split(separator: "\n")
        let gzipLines = gzip.out.split(separator: "\n")
        #expect(ourLines.dropLast() == gzipLines.dropLast())
        #expect(ourLines.last.map { Self.maskingRatio(String($0)) } == gzipLines.last.map { Self.maskingRatio(String($0)) })
    }

    @Test("Names gzip passes over, in its words: no colon after the name", .requires(.gzip), arguments: [
        ["b.gz"], ["sub"], ["-d", "sub"], ["-t", "sub"], ["-rv", "sub"], ["-S", ".gz", "-k", "sub/c.gz"],
    ])
    func passedOverLikeGzip(arguments: [String]) throws {
        try expectLikeGzip(arguments, files: Self.verboseFiles())
    }

    @Test("-v of standard input: ' OK' for -t, nothing for -d, as gzip", .requires(.gzip), arguments: [
        ["-tv"], ["-dv"], ["-dcv"], ["-lv"],
    ])
    func verboseStandardInputLikeGzip(arguments: [String]) throws {
        try expectLikeGzip(arguments, files: Self.verboseFiles(), input: "b.gz")
    }

    /// `-v`'s line with its ratio replaced by `R`: the ratio of a file gzstream compressed is its
    /// own compressor's.
    static func maskingRatio(_ text: String) -> String {
        text.replacingOccurrences(of: #"[ -][ 0-9]{0,3}[0-9]\.[0-9]%"#, with: "R", options: .regularExpression)
    }

    @Test("-v when compressing: gzip's words, and gzip's ratio of gzstream's own output", .requires(.gzip), arguments: [
        (["-v", "a", "empty"], nil as String?), (["-vk", "a"], nil), (["-cv", "a"], nil), (["-cvk", "a"], nil), (["-v"], "a"),
        (["-vk", "empty"], nil),
    ])
    func verboseCompressing(arguments: [String], input: String?) throws {
        let (ours, gzip, _, _) = try besideGzip(arguments, files: Self.verboseFiles(), input: input)
        #expect(ours.status == gzip.status && ours.status == 0, "\(ours)")
        #expect(Self.maskingRatio(ours.err) == Self.maskingRatio(gzip.err), "\(ours.err.debugDescription) \(gzip.err.debugDescription)")
        #expect(ours.err != Self.maskingRatio(ours.err), "a ratio is shown: \(ours.err.debugDescription)")
        if arguments.contains("empty") {
            // Of no bytes, gzip's ratio is 0.
            #expect(ours.err.hasSuffix("empty:\t  0.0% -- \(arguments.contains("-vk") ? "created" : "replaced with") empty.gz\n"))
        }
        if arguments == ["-vk", "a"] {
            // gzip's ratio: the deflate data (less the 12-byte header with the name "a" and the
            // 8-byte trailer) against the plain bytes.
            try withScratch { scratch in
                try scratch.write("a", Self.aText)
                let kept = try run(gzipNamedLink(in: scratch), ["-vk", "a"], in: scratch)
                let packed = try scratch.read("a.gz").count
                let ratio = String(format: "%5.1f%%", 100 * Double(Self.aText.count - (packed - 20)) / Double(Self.aText.count))
                #expect(kept.err == "a:\t\(ratio) -- created a.gz\n")
            }
        }
    }
}

/// Bytes from hexadecimal digits.
func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

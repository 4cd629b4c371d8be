import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// gzip mode (no command word; gunzip, zcat and gzcat through argv[0]) against GNU gzip run
// with the same arguments on the same files: the exit status, the files left, their contents,
// times and permissions, and standard output must be gzip's; gzstream's standard error is
// checked exactly. Then tar -I, -S, -0, zcat -f and -l beyond what gzip can check.

/// What standard input holds for a case: nothing, a plain file, or a gzip file.
enum CaseInput: Sendable { case none, plain, gzip }

/// A file a case adds to the common set before running.
enum CaseExtra: Sendable {
    case none
    /// `a.txt.gz` already exists.
    case packedExists
    /// `b.txt` already exists.
    case unpackedExists
    /// `a.txt.gz` is a symbolic link to nothing.
    case packedDanglingLink
    /// `original.txt`, the name stored in `named.gz`, already exists.
    case storedNameExists
}

struct GzipModeCase: Sendable, CustomTestStringConvertible {
    var arguments: [String]
    var input: CaseInput = .none
    var extra: CaseExtra = .none
    /// gzstream's standard error, exactly.
    var stderr = ""
    /// Standard output is gzip data: compared decoded, with its header fields.
    var compressedOutput = false

    var testDescription: String {
        var text = (["gzstream"] + arguments).joined(separator: " ")
        switch input {
        case .none: break
        case .plain: text += " < plain"
        case .gzip: text += " < gzip"
        }
        switch extra {
        case .none: break
        case .packedExists: text += " (a.txt.gz exists)"
        case .unpackedExists: text += " (b.txt exists)"
        case .packedDanglingLink: text += " (a.txt.gz -> nowhere)"
        case .storedNameExists: text += " (original.txt exists)"
        }
        return text
    }
}

@Suite("gzip mode: gzstream as gzip, gunzip and zcat", .onDedicatedThreads)
struct GzipModeCLITests {
    static let aText = sampleText(byteCount: 5000, seed: 21)
    static let bText = sampleText(byteCount: 7000, seed: 22)
    static let fixedTime = 1_600_000_000

    static let cases: [GzipModeCase] = [
        // Standard input to standard output, as tar -I runs it.
        GzipModeCase(arguments: [], input: .plain, compressedOutput: true),
        GzipModeCase(arguments: ["-1", "-c"], input: .plain, compressedOutput: true),
        GzipModeCase(arguments: ["-d"], input: .gzip),
        GzipModeCase(arguments: ["-dc"], input: .gzip),
        GzipModeCase(arguments: ["--decompress", "--stdout", "-"], input: .gzip),
        GzipModeCase(arguments: ["-t"], input: .gzip),
        // Files: packed and removed, unless -k or -c.
        GzipModeCase(arguments: ["a.txt"]),
        GzipModeCase(arguments: ["a.txt", "d.txt"]),
        GzipModeCase(arguments: ["-k", "a.txt"]),
        GzipModeCase(arguments: ["--keep", "a.txt"]),
        GzipModeCase(arguments: ["-c", "a.txt"], compressedOutput: true),
        GzipModeCase(arguments: ["-c", "a.txt", "d.txt"], compressedOutput: true),
        GzipModeCase(arguments: ["-9", "a.txt"]),
        GzipModeCase(arguments: ["--fast", "a.txt"]),
        GzipModeCase(arguments: ["--best", "-k", "a.txt"]),
        GzipModeCase(arguments: ["-n", "a.txt"]),
        GzipModeCase(arguments: ["-N", "a.txt"]),
        // A file named like a command.
        GzipModeCase(arguments: ["--", "pack"]),
        GzipModeCase(arguments: ["./pack"]),
        // Unpacked and removed, unless -k or -c.
        GzipModeCase(arguments: ["-d", "b.txt.gz"]),
        GzipModeCase(arguments: ["--uncompress", "b.txt.gz"]),
        GzipModeCase(arguments: ["-dk", "b.txt.gz"]),
        GzipModeCase(arguments: ["-dc", "b.txt.gz", "multi.gz"]),
        GzipModeCase(arguments: ["-d", "x.tgz"]),
        GzipModeCase(arguments: ["-k", "-d", "multi.gz"]),
        GzipModeCase(arguments: ["-dN", "named.gz"]),
        GzipModeCase(arguments: ["-dn", "named.gz"]),
        // Test.
        GzipModeCase(arguments: ["-t", "b.txt.gz"]),
        GzipModeCase(arguments: ["--test", "b.txt.gz", "multi.gz", "named.gz"]),
        GzipModeCase(arguments: ["-tc", "b.txt.gz"]),
        GzipModeCase(arguments: ["-t", "a.txt"], stderr: "\ngzstream: a.txt: not in gzip format\n"),
        // Names gzip skips, and existing outputs.
        GzipModeCase(arguments: ["-d", "a.txt"], stderr: "gzstream: a.txt: unknown suffix -- ignored\n"),
        GzipModeCase(arguments: ["-qd", "a.txt"]),
        GzipModeCase(arguments: ["b.txt.gz"], stderr: "gzstream: b.txt.gz already has .gz suffix -- unchanged\n"),
        GzipModeCase(arguments: ["-q", "b.txt.gz"]),
        GzipModeCase(arguments: ["-f", "b.txt.gz"]),
        GzipModeCase(arguments: ["a.txt"], extra: .packedExists,
                     stderr: "gzstream: a.txt.gz already exists;\tnot overwritten\n"),
        GzipModeCase(arguments: ["-f", "a.txt"], extra: .packedExists),
        GzipModeCase(arguments: ["-d", "b.txt.gz"], extra: .unpackedExists,
                     stderr: "gzstream: b.txt already exists;\tnot overwritten\n"),
        GzipModeCase(arguments: ["-df", "b.txt.gz"], extra: .unpackedExists),
        // Existing outputs found as the output is put in place: a dangling link (found before
        // reading, as it exists), and the name stored in the header (known once it is read).
        GzipModeCase(arguments: ["a.txt"], extra: .packedDanglingLink,
                     stderr: "gzstream: a.txt.gz already exists;\tnot overwritten\n"),
        // gzip 1.12 says so under -q too.
        GzipModeCase(arguments: ["-q", "a.txt"], extra: .packedDanglingLink,
                     stderr: "gzstream: a.txt.gz already exists;\tnot overwritten\n"),
        GzipModeCase(arguments: ["-dN", "named.gz"], extra: .storedNameExists,
                     stderr: "gzstream: original.txt already exists;\tnot overwritten\n"),
        GzipModeCase(arguments: ["-dNq", "named.gz"], extra: .storedNameExists,
                     stderr: "gzstream: original.txt already exists;\tnot overwritten\n"),
        // -S.
        GzipModeCase(arguments: ["-S", ".zz", "a.txt"]),
        GzipModeCase(arguments: ["--suffix=.zz", "-k", "a.txt"]),
        GzipModeCase(arguments: ["-d", "-S", ".zz", "c.zz"]),
        GzipModeCase(arguments: ["-dS.zz", "c.zz"]),
        GzipModeCase(arguments: ["-d", "c.zz"], stderr: "gzstream: c.zz: unknown suffix -- ignored\n"),
        GzipModeCase(arguments: ["-S", "z", "-d", "c.zz", "b.txt.gz"]),
        GzipModeCase(arguments: ["-S", ".zz", "c.zz"], stderr: "gzstream: c.zz already has .zz suffix -- unchanged\n"),
        // -l: gzip's table, the same for single-member files.
        GzipModeCase(arguments: ["-l", "b.txt.gz"]),
        GzipModeCase(arguments: ["-lv", "b.txt.gz"]),
        GzipModeCase(arguments: ["-lq", "b.txt.gz"]),
        GzipModeCase(arguments: ["--list", "x.tgz"]),
        GzipModeCase(arguments: ["-lN", "named.gz"]),
        GzipModeCase(arguments: ["-lvN", "named.gz"]),
        GzipModeCase(arguments: ["-l", "-S", ".zz", "c.zz"]),
        GzipModeCase(arguments: ["-l"], input: .gzip),
        GzipModeCase(arguments: ["-lv"], input: .gzip),
        // -f with -c: what is not gzip is copied.
        GzipModeCase(arguments: ["-dcf", "a.txt", "b.txt.gz"]),
        GzipModeCase(arguments: ["-cdf"], input: .plain),
        GzipModeCase(arguments: ["-c", "-d", "-f", "multi.gz", "d.txt", "empty"]),
    ]

    /// The same files in `scratch` for every case: plain files, and gzip files made by GNU gzip.
    static func makeFiles(_ scratch: Scratch, extra: CaseExtra) throws {
        try scratch.write("a.txt", aText)
        try scratch.write("d.txt", "short\n")
        try scratch.write("pack", "a file named pack\n")
        try scratch.write("b.txt", bText)
        try scratch.write("c", "suffix zz\n")
        try scratch.write("x.tar", sampleText(byteCount: 3000, seed: 23))
        try scratch.write("original.txt", "stored name\n")
        try scratch.write("empty", [])
        for name in try scratch.listing() { setModificationTime(scratch.path(name), seconds: fixedTime) }
        try expectSuccess(run("/usr/bin/gzip", ["b.txt"], in: scratch))
        try expectSuccess(run("/usr/bin/gzip", ["-S", ".zz", "c"], in: scratch))
        try expectSuccess(run("/usr/bin/gzip", ["-c", "x.tar"], in: scratch, stdoutPath: scratch.path("x.tgz")))
        try expectSuccess(run("/usr/bin/gzip", ["-c", "original.txt"], in: scratch, stdoutPath: scratch.path("named.gz")))
        let first = try run("/usr/bin/gzip", ["-c", "d.txt"], in: scratch)
        let second = try run("/usr/bin/gzip", ["-c", "pack"], in: scratch)
        try scratch.write("multi.gz", first.stdout + second.stdout)
        try FileManager.default.removeItem(atPath: scratch.path("x.tar"))
        try FileManager.default.removeItem(atPath: scratch.path("original.txt"))
        switch extra {
        case .none: break
        case .packedExists: try scratch.write("a.txt.gz", first.stdout)
        case .unpackedExists: try scratch.write("b.txt", "old\n")
        case .packedDanglingLink: break
        case .storedNameExists: try scratch.write("original.txt", "old\n")
        }
        for name in try scratch.listing() { setModificationTime(scratch.path(name), seconds: fixedTime) }
        // After the times are set: utimensat follows a link, and this one leads nowhere.
        if extra == .packedDanglingLink { #expect(symlink("nowhere", scratch.path("a.txt.gz")) == 0) }
    }

    @Test("gzip mode leaves what GNU gzip leaves: status, files, contents, times, standard output", arguments: cases)
    func sameAsGzip(testCase: GzipModeCase) throws {
        try withScratch { mine in
            try withScratch { reference in
                try Self.makeFiles(mine, extra: testCase.extra)
                try Self.makeFiles(reference, extra: testCase.extra)
                func input(_ scratch: Scratch) -> Input {
                    switch testCase.input {
                    case .none: return .null
                    case .plain: return .file(scratch.path("a.txt"))
                    case .gzip: return .file(scratch.path("b.txt.gz"))
                    }
                }
                let ours = try gzstream(testCase.arguments, in: mine, input: input(mine))
                let gzip = try run("/usr/bin/gzip", testCase.arguments, in: reference, input: input(reference))
                #expect(ours.status == gzip.status, "gzstream: \(ours)\ngzip: \(gzip)")
                #expect(ours.err == testCase.stderr, "\(ours)")
                #expect(gzip.err.isEmpty == testCase.stderr.isEmpty,
                        "gzip said \(gzip.err.debugDescription)")
                let names = try mine.listing()
                let referenceNames = try reference.listing()
                #expect(names == referenceNames)
                for name in names where reference.exists(name) {
                    if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: reference.path(name)) {
                        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: mine.path(name)) == target, "\(name)")
                        continue
                    }
                    try expectSameFile(name, mine, reference)
                }
                if testCase.compressedOutput {
                    #expect(headerFields(ours.stdout) == headerFields(gzip.stdout))
                    #expect(try decoded(ours.stdout, in: mine) == decoded(gzip.stdout, in: reference))
                } else {
                    #expect(ours.stdout == gzip.stdout, "gzstream: \(ours.out.debugDescription)\ngzip: \(gzip.out.debugDescription)")
                }
            }
        }
    }

    /// `name` in `mine` matches gzip's: the same plain bytes (gzip data: the same decoded bytes
    /// and header fields), modification time and permissions.
    func expectSameFile(_ name: String, _ mine: Scratch, _ reference: Scratch) throws {
        let ours = try mine.read(name)
        let theirs = try reference.read(name)
        if theirs.starts(with: [0x1f, 0x8b]) && ours != theirs {
            #expect(headerFields(ours) == headerFields(theirs), "\(name)")
            #expect(try gunzip(mine.path(name), in: mine) == gunzip(reference.path(name), in: reference), "\(name)")
        } else {
            #expect(ours == theirs, "\(name)")
        }
        let ourStatus = fileStatus(mine.path(name))
        let theirStatus = fileStatus(reference.path(name))
        #expect(ourStatus?.modificationSeconds == theirStatus?.modificationSeconds, "\(name)")
        #expect(ourStatus?.permissions == theirStatus?.permissions, "\(name)")
    }

    func decoded(_ bytes: [UInt8], in scratch: Scratch) throws -> [UInt8]? {
        let path = scratch.ioPath("decode")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try gunzip(path, in: scratch)
    }
}

// MARK: Helpers

func expectSuccess(_ result: RunResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
}

/// What is at a path of a tree: a folder, a file's bytes, or a symbolic link's target.
enum TreeEntry: Equatable {
    case directory
    case file([UInt8])
    case link(String)
}

/// Every path under `root` (relative) and what is there, links not followed.
func tree(at root: String) throws -> [String: TreeEntry] {
    var entries: [String: TreeEntry] = [:]
    for relative in try FileManager.default.subpathsOfDirectory(atPath: root) {
        let path = root + "/" + relative
        var info = stat()
        guard lstat(path, &info) == 0 else { continue }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: entries[relative] = .directory
        case S_IFLNK: entries[relative] = .link(try FileManager.default.destinationOfSymbolicLink(atPath: path))
        default: entries[relative] = .file(try readBytes(path))
        }
    }
    return entries
}

/// The plain bytes of a one-member gzip file whose deflate data is only stored blocks
/// (RFC 1951 §3.2.4: BTYPE 00, then LEN and NLEN on a byte boundary), or `nil` when a block is
/// of another type or the file has more than the member.
func storedBlocksContent(_ member: [UInt8]) -> [UInt8]? {
    guard let fields = headerFields(member), fields.flags & ~0x08 == 0 else { return nil }
    var index = 10 + (fields.fileName.map { $0.utf8.count + 1 } ?? 0)
    var plain: [UInt8] = []
    while true {
        guard index + 5 <= member.count, (member[index] >> 1) & 3 == 0 else { return nil }
        let length = Int(member[index + 1]) | Int(member[index + 2]) << 8
        let complement = Int(member[index + 3]) | Int(member[index + 4]) << 8
        guard length ^ complement == 0xffff, index + 5 + length <= member.count else { return nil }
        plain += member[(index + 5)..<(index + 5 + length)]
        let final = member[index] & 1 == 1
        index += 5 + length
        if final { break }
    }
    return index + 8 == member.count ? plain : nil
}

import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `gzstream test` and `gzstream list` end to end, through the built binary: exit statuses,
// exact standard output and error, and every member's offset, sizes and CRC-32 checked against
// python3's zlib, which walks the members on its own.

// MARK: An independent member walk

/// Walks the members of a gzip file with python3's zlib (which checks each header CRC, CRC-32
/// and ISIZE itself) and prints, as JSON, each member's offset, compressed and uncompressed
/// size and CRC-32, and where the members end. Input is fed 4 KiB at a time and only CRCs are
/// kept, so memory stays small for big outputs and files of many members.
let memberWalker = #"""
import json, sys, zlib
data = open(sys.argv[1], 'rb').read()
view = memoryview(data)
members, pos = [], 0
while data[pos:pos + 2] == b'\x1f\x8b':
    d = zlib.decompressobj(31)
    p, size, crc = pos, 0, 0
    while not d.eof:
        if p >= len(data):
            sys.exit('member at %d is cut short' % pos)
        chunk = view[p:p + 4096]
        p += len(chunk)
        out = d.decompress(chunk)
        size += len(out)
        crc = zlib.crc32(out, crc)
    end = p - len(d.unused_data)
    members.append({'offset': pos, 'compressedSize': end - pos, 'uncompressedSize': size, 'crc32': '%08x' % crc})
    pos = end
print(json.dumps({'members': members, 'end': pos}))
"""#

/// One member as python3 found it, or as `list --json` printed it.
struct MemberFacts: Equatable, CustomStringConvertible {
    var offset: Int64
    var compressedSize: Int64
    var uncompressedSize: Int64
    var crc32: String
    var description: String { "@\(offset) \(compressedSize) -> \(uncompressedSize) crc \(crc32)" }
}

struct Walk {
    var members: [MemberFacts]
    /// Where the last member ends.
    var end: Int64
}

/// The members of the gzip file at `path`, by ``memberWalker``.
func pythonWalk(_ path: String, in scratch: Scratch) throws -> Walk {
    let python = try #require(Tool.python3.path, "python3 is needed as the reference")
    let result = try run(python, ["-c", memberWalker, path], in: scratch)
    try #require(result.status == 0, "python3 walk of \(path): \(result)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    let members = try #require(object["members"] as? [[String: Any]])
    return Walk(members: try members.map(memberFacts), end: try #require(int64(object["end"])))
}

func int64(_ value: Any?) -> Int64? {
    (value as? NSNumber)?.int64Value
}

func memberFacts(_ object: [String: Any]) throws -> MemberFacts {
    MemberFacts(offset: try #require(int64(object["offset"])),
                compressedSize: try #require(int64(object["compressedSize"])),
                uncompressedSize: try #require(int64(object["uncompressedSize"])),
                crc32: try #require(object["crc32"] as? String))
}

/// The one file object of a `list --json` run over one file, parsed by Foundation.
func listedFile(_ result: RunResult) throws -> [String: Any] {
    let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout))
    let files = try #require(parsed as? [[String: Any]], "list --json must print an array: \(result)")
    try #require(files.count == 1, "one file object per file: \(result)")
    return files[0]
}

/// The `test -v` line for `name`.
func okLine(_ name: String, members: Int, bytes: Int64) -> String {
    "gzstream: \(name): OK (\(members) member\(members == 1 ? "" : "s"), \(bytes) bytes)\n"
}

/// MTIME as `list` shows it: ISO 8601 in UTC, or `-` for 0.
func isoUTC(_ mtime: Int) -> String {
    guard mtime != 0 else { return "-" }
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(mtime)))
}

/// The big fixture: 4 GiB + 7 zero bytes in one member (ISIZE 7).
let bigFixture = "corpus/gnu-gzip/list-big-derived-4GiB-plus-7-zeros.gz"

/// Manifest rows of small enough output to walk and decode more than once.
func smallRows(_ expectation: FixtureRow.Kind) -> [FixtureRow] {
    FixtureManifest.rows(expectation).filter { ($0.statedOutputSize ?? 0) < pipedOutputThreshold }
}

/// A one-member gzip file whose header has FCOMMENT `comment`, and no data.
func memberWithComment(_ comment: [UInt8]) -> [UInt8] {
    [0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 3] + comment + [0]
        + [0x03, 0x00]  // an empty fixed-Huffman block
        + [UInt8](repeating: 0, count: 8)  // CRC-32 and ISIZE of no data
}

@Suite("gzstream test and list", .onDedicatedThreads)
struct InspectCLITests {
    // MARK: test

    @Test("test: exit 0, nothing on stdout or stderr, no file made, on every ok fixture",
          arguments: smallRows(.ok))
    func testAcceptsGoodFixture(row: FixtureRow) throws {
        try withScratch { scratch in
            try scratch.copyFixture(row.file, as: "data.gz")
            let result = try gzstream(["test", "data.gz"], in: scratch)
            #expect(result.status == 0, "\(result)")
            #expect(result.out == "")
            #expect(result.err == "")
            #expect(try scratch.listing() == ["data.gz"])
        }
    }

    @Test("test of a bad fixture: exit 1 and one line naming the file; trailing garbage: exit 2 and the warning",
          arguments: FixtureManifest.rows(.error))
    func testRejectsBadFixture(row: FixtureRow) throws {
        try withScratch { scratch in
            try scratch.copyFixture(row.file, as: "data.gz")
            let result = try gzstream(["test", "data.gz"], in: scratch)
            #expect(result.out == "")
            #expect(try scratch.listing() == ["data.gz"])
            #expect(result.signal == nil && !result.timedOut, "\(result)")
            if row.errorKinds == ["trailing-garbage"] || (row.allowsTrailingGarbage && result.status == 2) {
                #expect(result.status == 2, "\(result)")
                #expect(result.err == "gzstream: data.gz: decompression OK, trailing garbage ignored\n")
                return
            }
            #expect(result.status == 1, "\(result)")
            #expect(result.errLines.count == 1, "\(result)")
            let prefix = "gzstream: data.gz: "
            #expect(result.err.hasPrefix(prefix), "\(result)")
            let message = String(result.err.dropFirst(prefix.count))
            let allowed = row.errorKinds.flatMap { messagePrefixes[$0] ?? [] }
            #expect(allowed.contains { message.hasPrefix($0) }, "\(message.debugDescription) is not \(row.value)")
        }
    }

    @Test("test -v and list --json give the members python3 finds, with the manifest's output size", .requires(.python3),
          arguments: smallRows(.ok))
    func membersMatchPython(row: FixtureRow) throws {
        try withScratch { scratch in
            let path = try scratch.copyFixture(row.file, as: "data.gz")
            let walk = try pythonWalk(path, in: scratch)
            let total = walk.members.reduce(Int64(0)) { $0 + $1.uncompressedSize }
            if let size = row.statedOutputSize { #expect(total == size, "python3 disagrees with the manifest") }

            let verbose = try gzstream(["test", "-v", "data.gz"], in: scratch)
            #expect(verbose.status == 0, "\(verbose)")
            #expect(verbose.out == "")
            #expect(verbose.err == okLine("data.gz", members: walk.members.count, bytes: total))

            let listed = try gzstream(["list", "--json", "data.gz"], in: scratch)
            #expect(listed.status == 0, "\(listed)")
            #expect(listed.err == "")
            let file = try listedFile(listed)
            #expect(file["file"] as? String == "data.gz")
            let members = try #require(file["members"] as? [[String: Any]])
            let facts = try members.map(memberFacts)
            #expect(facts == walk.members)
            #expect(members.enumerated().allSatisfy { int64($1["index"]) == Int64($0 + 1) }, "indexes count from 1")
            #expect(int64(file["memberCount"]) == Int64(walk.members.count))
            #expect(int64(file["uncompressedSize"]) == total)
            let fileSize = Int64(try readBytes(path).count)
            #expect(int64(file["compressedSize"]) == fileSize, "every byte is read, zero padding included")
            #expect(file["trailingGarbage"] is NSNull)
            #expect(file["error"] is NSNull)
            #expect(try scratch.listing() == ["data.gz"])
        }
    }

    @Test("list --json of a bad fixture: an error object {kind, offset, message} and exit 1, or trailingGarbage and exit 2", .requires(.python3),
          arguments: FixtureManifest.rows(.error))
    func listReportsErrors(row: FixtureRow) throws {
        try withScratch { scratch in
            let path = try scratch.copyFixture(row.file, as: "data.gz")
            let fileSize = Int64(try readBytes(path).count)
            let result = try gzstream(["list", "--json", "data.gz"], in: scratch)
            let file = try listedFile(result)
            let members = try #require(file["members"] as? [[String: Any]])
            #expect(int64(file["memberCount"]) == Int64(members.count))
            if result.status == 2 {
                #expect(row.allowsTrailingGarbage, "\(result)")
                #expect(result.err == "gzstream: data.gz: decompression OK, trailing garbage ignored\n")
                #expect(file["error"] is NSNull)
                let garbage = try #require(file["trailingGarbage"] as? [String: Any], "\(result)")
                let offset = try #require(int64(garbage["offset"]))
                #expect(int64(garbage["length"]) == fileSize - offset, "the garbage runs to the end")
                let walk = try pythonWalk(path, in: scratch)
                #expect(offset == walk.end, "the garbage starts where python3's last member ends")
                #expect(try members.map(memberFacts) == walk.members)
                return
            }
            #expect(result.status == 1, "\(result)")
            #expect(file["trailingGarbage"] is NSNull)
            let error = try #require(file["error"] as? [String: Any], "\(result)")
            let kind = try #require(error["kind"] as? String)
            #expect(row.errorKinds.contains(kind), "kind \(kind), manifest \(row.value)")
            let message = try #require(error["message"] as? String)
            #expect(result.err == "gzstream: data.gz: \(message)\n", "the JSON message is the one on stderr")
            if kind == "empty-input" {
                #expect(error["offset"] is NSNull)
            } else {
                let offset = try #require(int64(error["offset"]), "\(error)")
                #expect(offset >= 0 && offset <= fileSize)
                #expect(message.contains("at byte \(offset)"), "\(message)")
            }
        }
    }

    // MARK: Usage and odd inputs

    @Test("usage errors: exit 1, a line and where help is on stderr, nothing on stdout", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["test", "-c", "a.gz"], "test writes no output: -c, -o and --rm do not apply"),
        (["list", "-o", "x", "a.gz"], "list writes no output: -c, -o and --rm do not apply"),
        (["test", "--json", "a.gz"], "--json applies to list and index --plan"),
    ] as [([String], String)])
    func usageErrors(arguments: [String], message: String) throws {
        try withScratch { scratch in
            try scratch.write("a.gz", memberWithComment([0x61]))
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == usageError(message))
            #expect(try scratch.listing() == ["a.gz"])
        }
    }

    @Test("a directory as standard input: exit 1 and one line", arguments: ["unpack", "test", "list"])
    func directoryAsStandardInput(mode: String) throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("dir"), withIntermediateDirectories: false)
            let result = try gzstream([mode], in: scratch, input: .file(scratch.path("dir")))
            #expect(result.status == 1, "\(result)")
            #expect(result.signal == nil && !result.timedOut)
            #expect(result.errLines.count == 1, "\(result)")
            #expect(result.err.hasPrefix("gzstream: standard input: "), "\(result)")
            if mode != "list" { #expect(result.out == "") }
            #expect(try scratch.listing() == ["dir"])
        }
    }

    @Test("test of a directory without -r: gzip's warning, exit 2; the other files are still tested")
    func testDirectory() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("d.gz"), withIntermediateDirectories: false)
            try scratch.copyFixture("corpus/gnu-gzip/smallx2.gz", as: "ok.gz")
            let alone = try gzstream(["test", "d.gz"], in: scratch)
            #expect(alone.status == 2)
            #expect(alone.out == "")
            #expect(alone.err == "gzstream: d.gz: is a directory -- ignored\n")
            let both = try gzstream(["test", "-v", "d.gz", "ok.gz"], in: scratch)
            #expect(both.status == 2)
            #expect(both.err == "gzstream: d.gz: is a directory -- ignored\n" + okLine("ok.gz", members: 2, bytes: 2))
            #expect(try scratch.listing() == ["d.gz", "ok.gz"])
        }
    }
}

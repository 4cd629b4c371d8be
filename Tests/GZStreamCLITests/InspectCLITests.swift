import Foundation
import Testing
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
private let memberWalker = #"""
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
private struct MemberFacts: Equatable, CustomStringConvertible {
    var offset: Int64
    var compressedSize: Int64
    var uncompressedSize: Int64
    var crc32: String
    var description: String { "@\(offset) \(compressedSize) -> \(uncompressedSize) crc \(crc32)" }
}

private struct Walk {
    var members: [MemberFacts]
    /// Where the last member ends.
    var end: Int64
}

/// The members of the gzip file at `path`, by ``memberWalker``.
private func pythonWalk(_ path: String, in scratch: Scratch) throws -> Walk {
    let python = try #require(Locations.tool("python3"), "python3 is needed as the reference")
    let result = try run(python, ["-c", memberWalker, path], in: scratch)
    try #require(result.status == 0, "python3 walk of \(path): \(result)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    let members = try #require(object["members"] as? [[String: Any]])
    return Walk(members: try members.map(memberFacts), end: try #require(int64(object["end"])))
}

private func int64(_ value: Any?) -> Int64? {
    (value as? NSNumber)?.int64Value
}

private func memberFacts(_ object: [String: Any]) throws -> MemberFacts {
    MemberFacts(offset: try #require(int64(object["offset"])),
                compressedSize: try #require(int64(object["compressedSize"])),
                uncompressedSize: try #require(int64(object["uncompressedSize"])),
                crc32: try #require(object["crc32"] as? String))
}

/// The one file object of a `list --json` run over one file, parsed by Foundation.
private func listedFile(_ result: RunResult) throws -> [String: Any] {
    let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout))
    let files = try #require(parsed as? [[String: Any]], "list --json must print an array: \(result)")
    try #require(files.count == 1, "one file object per file: \(result)")
    return files[0]
}

/// The `test -v` line for `name`.
private func okLine(_ name: String, members: Int, bytes: Int64) -> String {
    "gzstream: \(name): OK (\(members) member\(members == 1 ? "" : "s"), \(bytes) bytes)\n"
}

/// MTIME as `list` shows it: ISO 8601 in UTC, or `-` for 0.
private func isoUTC(_ mtime: Int) -> String {
    guard mtime != 0 else { return "-" }
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(mtime)))
}

/// The big fixture: 4 GiB + 7 zero bytes in one member (ISIZE 7).
private let bigFixture = "corpus/gnu-gzip/list-big-derived-4GiB-plus-7-zeros.gz"

/// Manifest rows of small enough output to walk and decode more than once.
private func smallRows(_ expectation: FixtureRow.Expectation) -> [FixtureRow] {
    Manifest.rows(expectation).filter { ($0.expectedOutputSize ?? 0) < pipedOutputThreshold }
}

/// A one-member gzip file whose header has FCOMMENT `comment`, and no data.
private func memberWithComment(_ comment: [UInt8]) -> [UInt8] {
    [0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 3] + comment + [0]
        + [0x03, 0x00]  // an empty fixed-Huffman block
        + [UInt8](repeating: 0, count: 8)  // CRC-32 and ISIZE of no data
}

@Suite("gzstream test and list")
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
          arguments: Manifest.rows(.error))
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
            if let size = row.expectedOutputSize { #expect(total == size, "python3 disagrees with the manifest") }

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
          arguments: Manifest.rows(.error))
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

    // MARK: list, exactly

    @Test("list of smallx2.gz: two rows of \"\\n\" (offsets 0 and 21, 21 bytes each, CRC-32 32d70693), then the total", .requires(.python3))
    func listSmallx2() throws {
        try withScratch { scratch in
            try scratch.copyFixture("corpus/gnu-gzip/smallx2.gz", as: "smallx2.gz")
            let result = try gzstream(["list", "smallx2.gz"], in: scratch)
            #expect(result.status == 0)
            #expect(result.err == "")
            #expect(result.out == """
                smallx2.gz:
                member       offset    compressed    uncompressed     saved  crc32     mtime                 os  name
                     1            0            21               1  -2000.0%  32d70693  -                     3   -
                     2           21            21               1  -2000.0%  32d70693  -                     3   -
                 total                         42               2  -2000.0%  2 members

                """)
            let walk = try pythonWalk(scratch.path("smallx2.gz"), in: scratch)
            #expect(walk.members == [MemberFacts(offset: 0, compressedSize: 21, uncompressedSize: 1, crc32: "32d70693"),
                                     MemberFacts(offset: 21, compressedSize: 21, uncompressedSize: 1, crc32: "32d70693")])
        }
    }

    @Test("list of a file packed from three inputs: one row each, with python3's offsets, sizes and CRC-32, names and MTIMEs", .requires(.python3))
    func listBuiltMultiMember() throws {
        try withScratch { scratch in
            let inputs: [(name: String, bytes: [UInt8], mtime: Int)] = [
                ("alpha.txt", sampleText(byteCount: 10_000, seed: 5), 1_700_000_000),
                ("empty", [], 31_536_000),
                ("noise.bin", randomBytes(byteCount: 5_000, seed: 6), 0),
            ]
            for input in inputs {
                try scratch.write(input.name, input.bytes)
                setModificationTime(scratch.path(input.name), seconds: input.mtime)
            }
            let packed = try gzstream(["pack", "-c"] + inputs.map(\.name), in: scratch,
                                      stdoutPath: scratch.path("multi.gz"))
            // MTIME 0 means none: a file of time 0 is stored without one, with gzip's warning.
            #expect(packed.status == 2, "\(packed)")
            #expect(packed.err == "gzstream: noise.bin: warning: file timestamp out of range for gzip format\n")
            let walk = try pythonWalk(scratch.path("multi.gz"), in: scratch)
            try #require(walk.members.count == 3)
            #expect(walk.members.map(\.uncompressedSize) == inputs.map { Int64($0.bytes.count) })
            let fileSize = Int64(try scratch.read("multi.gz").count)
            #expect(walk.end == fileSize)

            let table = try gzstream(["list", "multi.gz"], in: scratch)
            #expect(table.status == 0 && table.err == "", "\(table)")
            let lines = table.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            try #require(lines.count == 7, "\(table)")
            #expect(lines[0] == "multi.gz:")
            #expect(lines[1].split(separator: " ") == ["member", "offset", "compressed", "uncompressed", "saved", "crc32",
                                                        "mtime", "os", "name"])
            for (index, (input, member)) in zip(inputs, walk.members).enumerated() {
                let columns = lines[2 + index].split(separator: " ").map(String.init)
                try #require(columns.count == 9, "\(lines[2 + index])")
                #expect(columns[0] == String(index + 1))
                #expect(columns[1] == String(member.offset))
                #expect(columns[2] == String(member.compressedSize))
                #expect(columns[3] == String(member.uncompressedSize))
                if member.uncompressedSize == 0 {
                    #expect(columns[4] == "-")
                } else {
                    let saved = (1 - Double(member.compressedSize) / Double(member.uncompressedSize)) * 100
                    let shown = try #require(Double(columns[4].dropLast()), "\(columns[4])")
                    #expect(columns[4].hasSuffix("%") && abs(shown - saved) <= 0.05 + 1e-9, "\(columns[4]) vs \(saved)")
                }
                #expect(columns[5] == member.crc32)
                #expect(columns[6] == isoUTC(input.mtime))
                #expect(columns[7] == "3")
                #expect(columns[8] == input.name)
            }
            let totalColumns = lines[5].split(separator: " ").map(String.init)
            #expect(totalColumns.first == "total")
            #expect(totalColumns.dropFirst().prefix(2) == [String(fileSize),
                                                            String(inputs.reduce(0) { $0 + $1.bytes.count })])
            #expect(lines[5].hasSuffix("  3 members"))
            #expect(lines[6] == "")

            let json = try gzstream(["list", "--json", "multi.gz"], in: scratch)
            #expect(json.status == 0 && json.err == "", "\(json)")
            let file = try listedFile(json)
            let members = try #require(file["members"] as? [[String: Any]])
            #expect(try members.map(memberFacts) == walk.members)
            #expect(members.map { $0["name"] as? String } == inputs.map(\.name))
            #expect(members.map { int64($0["mtime"]) } == inputs.map { Int64($0.mtime) })
            #expect(members.map { int64($0["os"]) } == [3, 3, 3])
            #expect(members.allSatisfy { $0["comment"] is NSNull && $0["extra"] is NSNull })
            #expect(int64(file["memberCount"]) == 3)
            #expect(int64(file["compressedSize"]) == fileSize)
        }
    }

    @Test("list shows every header field of gunzip-11-all-header-fields.gz: name, MTIME in UTC, OS, comment, extra")
    func listHeaderFields() throws {
        try withScratch { scratch in
            try scratch.copyFixture("corpus/go-gzip/gunzip-11-all-header-fields.gz", as: "all.gz")
            // MTIME 0x4af9f070 = 1257894000, OS 0xaa, FEXTRA "zz" + 5 + "abcde", FNAME "f1l3n4m3.tXt",
            // FCOMMENT bytes 01…ff (ISO 8859-1), FHCRC fd92; an empty stored block.
            let comment = (1...255).map { byte -> String in
                let scalar = Unicode.Scalar(UInt8(byte))
                return byte < 0x20 || (0x7f..<0xa0).contains(byte) ? "\\u{\(String(byte, radix: 16))}" : String(scalar)
            }.joined()
            let table = try gzstream(["list", "all.gz"], in: scratch)
            #expect(table.status == 0 && table.err == "", "\(table)")
            #expect(table.out == """
                all.gz:
                member       offset    compressed    uncompressed     saved  crc32     mtime                 os  name
                     1            0           305               0         -  00000000  \(isoUTC(1_257_894_000))  170 f1l3n4m3.tXt  comment: \(comment)  extra: 9 bytes 7a7a05006162636465
                 total                        305               0         -  1 member

                """)
            #expect(isoUTC(1_257_894_000) == "2009-11-10T23:00:00Z")

            let json = try gzstream(["list", "--json", "all.gz"], in: scratch)
            #expect(json.status == 0 && json.err == "", "\(json)")
            let file = try listedFile(json)
            let member = try #require((file["members"] as? [[String: Any]])?.first)
            #expect(member["name"] as? String == "f1l3n4m3.tXt")
            #expect(int64(member["mtime"]) == 1_257_894_000)
            #expect(int64(member["os"]) == 170)
            #expect(int64(member["xfl"]) == 0)
            #expect((member["headerCRC"] as? NSNumber)?.boolValue == true)
            #expect((member["text"] as? NSNumber)?.boolValue == false)
            #expect(member["extra"] as? String == "7a7a05006162636465")
            #expect(member["crc32"] as? String == "00000000")
            #expect(int64(member["compressedSize"]) == 305)
            #expect(int64(member["uncompressedSize"]) == 0)
            #expect((member["comment"] as? String)?.hasSuffix("\u{FE}\u{FF}") == true, "FCOMMENT ends in bytes fe ff")
        }
    }

    /// `list --json` carries FCOMMENT (and FNAME) as JSON strings, not in the escaped form made
    /// for a terminal: a control byte 01 is the character U+0001 (`"\u0001"`), and a comment
    /// that is the six characters `\u{1}` stays those six characters, so a program reading the
    /// JSON tells the two headers apart and gets each comment back.
    @Test("list --json tells a comment holding byte 01 from one holding the text \\u{1}")
    func jsonCommentIsUnambiguous() throws {
        try withScratch { scratch in
            try scratch.write("control.gz", memberWithComment([0x01]))
            try scratch.write("text.gz", memberWithComment(Array(#"\u{1}"#.utf8)))
            var comments: [String] = []
            for name in ["control.gz", "text.gz"] {
                let result = try gzstream(["list", "--json", name], in: scratch)
                #expect(result.status == 0 && result.err == "", "\(result)")
                let member = try #require((try listedFile(result)["members"] as? [[String: Any]])?.first)
                comments.append(try #require(member["comment"] as? String))
            }
            #expect(comments[0] == "\u{1}", "byte 01 as the character U+0001; got \(comments[0].debugDescription)")
            #expect(comments[1] == #"\u{1}"#)
            #expect(comments[0] != comments[1], "two different comments, one JSON value")
        }
    }

    @Test("list --json of trailing garbage: the member, trailingGarbage {offset 24, length 4}, exit 2 and the warning")
    func listTrailingGarbage() throws {
        try withScratch { scratch in
            try scratch.copyFixture("corpus/gnu-gzip/mixed-gz-then-plain.gz", as: "mixed.gz")
            let result = try gzstream(["list", "--json", "mixed.gz"], in: scratch)
            #expect(result.status == 2)
            #expect(result.err == "gzstream: mixed.gz: decompression OK, trailing garbage ignored\n")
            let file = try listedFile(result)
            let members = try #require(file["members"] as? [[String: Any]])
            #expect(try members.map(memberFacts) == [MemberFacts(offset: 0, compressedSize: 24, uncompressedSize: 4,
                                                                 crc32: "d21e7467")])
            #expect(int64(file["memberCount"]) == 1)
            #expect(int64(file["uncompressedSize"]) == 4)
            #expect(int64(file["compressedSize"]) == 28)
            let garbage = try #require(file["trailingGarbage"] as? [String: Any])
            #expect(int64(garbage["offset"]) == 24)
            #expect(int64(garbage["length"]) == 4)
            #expect(file["error"] is NSNull)
            // The plain table says the same in its total line.
            let table = try gzstream(["list", "mixed.gz"], in: scratch)
            #expect(table.status == 2)
            #expect(table.out.contains("  1 member, 4 bytes of trailing garbage at 24\n"), "\(table)")
        }
    }

    @Test("list --json of a corrupt file: error {kind crc-mismatch, offset 22, message}, exit 1, the message on stderr")
    func listCorruptFile() throws {
        try withScratch { scratch in
            let path = try scratch.copyFixture("corpus/flate2/corrupt-crc-derived.gz", as: "bad.gz")
            let bytes = try readBytes(path)
            let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[22 + $1]) << UInt32(8 * $1) }
            #expect(bytes.count == 30 && stored == 0x5ca4_43cb)
            let result = try gzstream(["list", "--json", "bad.gz"], in: scratch)
            #expect(result.status == 1)
            let message = "CRC-32 mismatch in member 1 at byte 22 (stored 5ca443cb, computed 5ca44334)"
            #expect(result.err == "gzstream: bad.gz: \(message)\n")
            let file = try listedFile(result)
            #expect((file["members"] as? [Any])?.isEmpty == true, "no member was checked")
            #expect(int64(file["memberCount"]) == 0)
            let error = try #require(file["error"] as? [String: Any])
            #expect(error["kind"] as? String == "crc-mismatch")
            #expect(int64(error["offset"]) == 22)
            #expect(error["message"] as? String == message)
            #expect(file["trailingGarbage"] is NSNull)
        }
    }

    @Test("list and test -v of 4 GiB + 7 zeros: uncompressedSize 4294967303 exactly, not ISIZE 7",
          .enabled(if: FileManager.default.fileExists(atPath: Locations.fixtures.appendingPathComponent(bigFixture).path)))
    func listBigFile() throws {
        try withScratch { scratch in
            let path = try scratch.copyFixture(bigFixture, as: "big.gz")
            let bytes = try readBytes(path)
            let trailer = Array(bytes.suffix(8))
            let crc = trailer.prefix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << UInt32(8 * $1.offset) }
            #expect(Array(trailer.suffix(4)) == [7, 0, 0, 0], "ISIZE is the size mod 2^32")

            let listed = try gzstream(["list", "--json", "big.gz"], in: scratch, timeout: 300)
            #expect(listed.status == 0 && listed.err == "", "\(listed)")
            let file = try listedFile(listed)
            let members = try #require(file["members"] as? [[String: Any]])
            try #require(members.count == 1)
            #expect(int64(members[0]["uncompressedSize"]) == 4_294_967_303)
            #expect(int64(members[0]["compressedSize"]) == Int64(bytes.count))
            #expect(int64(members[0]["offset"]) == 0)
            let hexCRC = String(crc, radix: 16)
            #expect(members[0]["crc32"] as? String == String(repeating: "0", count: 8 - hexCRC.count) + hexCRC)
            #expect(int64(file["uncompressedSize"]) == 4_294_967_303)

            let tested = try gzstream(["test", "-v", "big.gz"], in: scratch, timeout: 300)
            #expect(tested.status == 0, "\(tested)")
            #expect(tested.out == "")
            #expect(tested.err == okLine("big.gz", members: 1, bytes: 4_294_967_303))
            #expect(try scratch.listing() == ["big.gz"])
        }
    }

    // MARK: Usage and odd inputs

    @Test("usage errors: exit 1, Error: line and the usage on stderr, nothing on stdout", arguments: [
        (["test", "-c", "a.gz"], "test writes no output: -c, -o and --rm do not apply"),
        (["list", "-o", "x", "a.gz"], "list writes no output: -c, -o and --rm do not apply"),
        (["test", "--rm", "a.gz"], "test writes no output: -c, -o and --rm do not apply"),
        (["unpack", "--json", "a.gz"], "--json applies to list only"),
        (["test", "--json", "a.gz"], "--json applies to list only"),
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

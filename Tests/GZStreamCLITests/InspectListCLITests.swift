import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// gzstream test and list, continued: list, exactly.

extension InspectCLITests {
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
                ("noise.bin", randomBytes(count: 5_000, seed: 6), 0),
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
}

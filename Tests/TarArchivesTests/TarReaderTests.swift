import ByteStreams
import Foundation
import TarArchives
import Testing
import TestSupport

/// ``TarReader`` and ``TarScanner`` on archives GNU tar 1.34 makes, field by field against
/// Python's tarfile; and on archives damaged on purpose.
@Suite(.onDedicatedThreads, .requires(.tar), .requires(.python3))
struct TarReaderTests {
    /// A tree with short names: a file, an empty file, a symlink, a hard link, directories, a
    /// name that is not UTF-8.
    static let basicTree = """
        mkdir -p tree/dir/sub && printf 'hello\\n' > tree/a.txt && : > tree/empty && seq 1 3000 > tree/dir/numbers \
        && ln -s a.txt tree/link && ln tree/a.txt tree/dir/hard && printf 'x' > "tree/$(printf 'caf\\351')" \
        && chmod 751 tree/dir/sub && chmod 600 tree/empty
        """
    /// A tree with names over 100 bytes (a 61-byte directory and a 61-byte file), over 255
    /// (four such levels), and a symlink whose target is over 100 bytes.
    static let longTree = """
        d=$(printf 'd%.0s' $(seq 60)); f=$(printf 'f%.0s' $(seq 60)); mkdir -p tree/$d/$d/$d/$d \
        && printf 'one\\n' > tree/$d/$f && printf 'two\\n' > tree/$d/$d/$d/$d/$f && ln -s $d/$d/$d/$d/$f tree/longlink
        """
    static let tarOptions = "--sort=name --mtime=@1700000000 --owner=0 --group=0"

    @Test(arguments: [("gnu", basicTree), ("ustar", basicTree), ("pax", basicTree), ("v7", basicTree),
                      ("gnu", longTree), ("pax", longTree)])
    func membersMatchPythonsTarfile(format: String, tree: String) throws {
        try withTemporaryDirectory { scratch in
            _ = try shell("\(tree) && tar --format=\(format) \(Self.tarOptions) -C tree -cf out.tar .", in: scratch)
            let archive = Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar")))
            let members = try readMembers(archive)
            let oracle = try pythonMembers(of: scratch.appendingPathComponent("out.tar"), in: scratch)
            try #require(members.count == oracle.count)
            for ((entry, content), expected) in zip(members, oracle) {
                var path = entry.path
                if entry.kind == .directory { while path.count > 1, path.last == UInt8(ascii: "/") { path.removeLast() } }
                #expect(path.hex == expected["name"] as? String, "\(entry.pathString)")
                let type = expected["type"] as? String == "\0" ? "0" : expected["type"] as? String
                #expect(String(UnicodeScalar(entry.kind.typeflag)) == type, "\(entry.pathString)")
                #expect(entry.size == expected["size"] as? Int)
                #expect(Int(entry.mode) == expected["mode"] as? Int)
                #expect(entry.userID == expected["uid"] as? Int && entry.groupID == expected["gid"] as? Int)
                #expect(entry.userName.hex == expected["uname"] as? String && entry.groupName.hex == expected["gname"] as? String)
                #expect(entry.modificationTime == TarEntry.Timestamp(seconds: 1_700_000_000))
                #expect(entry.linkTarget.hex == expected["link"] as? String)
                #expect(entry.headerOffset == expected["offset"] as? Int, "\(entry.pathString)")
                #expect(entry.dataOffset == expected["data"] as? Int, "\(entry.pathString)")
                #expect(content.count == entry.size)
                if entry.kind == .regular, let name = String(validating: entry.path, as: UTF8.self) {
                    let onDisk = try Data(contentsOf: scratch.appendingPathComponent("tree").appendingPathComponent(name))
                    #expect(content == Array(onDisk), "\(entry.pathString)")
                } else if entry.kind == .regular {
                    #expect(entry.path.suffix(4) == [0x63, 0x61, 0x66, 0xe9] && content == [UInt8(ascii: "x")])
                }
            }
            #expect(members.contains { $0.0.path.count > 255 } || format != "pax" || !tree.contains("seq 60"))
        }
    }

    /// The scanner fed one byte at a time, or 7, or 513, sees what it sees fed the whole archive.
    @Test func piecesOfAnySizeScanAlike() throws {
        try withTemporaryDirectory { scratch in
            _ = try shell("\(Self.longTree) && tar --format=pax \(Self.tarOptions) -C tree -cf out.tar .", in: scratch)
            let archive = Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar")))
            let whole = scanEntries(archive, pieceSize: archive.count)
            #expect(whole.error == nil && whole.entries.count > 5)
            for pieceSize in [1, 7, 513] {
                let pieces = scanEntries(archive, pieceSize: pieceSize)
                #expect(pieces.entries == whole.entries && pieces.dataCounts == whole.dataCounts && pieces.error == nil)
            }
            #expect(whole.dataCounts == whole.entries.map(\.size))
        }
    }

    /// A uid over ustar's 7 octal digits: GNU tar stores it base-256.
    @Test func base256UserID() throws {
        try withTemporaryDirectory { scratch in
            _ = try shell("mkdir tree && : > tree/f && tar --format=gnu --owner=:3000000 --group=:4000000 -C tree -cf out.tar f",
                          in: scratch)
            let archive = Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar")))
            #expect(archive[TarFormat.Field.userID.lowerBound] == 0x80)
            let members = try readMembers(archive)
            #expect(members.map(\.0.userID) == [3_000_000] && members.map(\.0.groupID) == [4_000_000])
        }
    }

    /// A base-256 size near `Int.max` (a hostile header): refused as a bad size, not a crash
    /// rounding it up to whole blocks or adding it to the offset.
    @Test(arguments: [[UInt8](repeating: 0xff, count: 7), [0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x00]])
    func sizeNearIntMaxIsRefused(low: [UInt8]) throws {
        var header = [UInt8](repeating: 0, count: TarFormat.blockSize)
        header.replaceSubrange(0..<4, with: Array("huge".utf8))
        header.replaceSubrange(100..<108, with: Array("0000644\0".utf8))
        header.replaceSubrange(124..<136, with: [0x80, 0, 0, 0, 0x7f] + low)
        header[156] = UInt8(ascii: "0")
        header.replaceSubrange(257..<265, with: Array("ustar\000".utf8))
        header.replaceSubrange(148..<156, with: [UInt8](repeating: 32, count: 8))
        let sum = header.reduce(0) { $0 + Int($1) }
        header.replaceSubrange(148..<156, with: Array(String(format: "%06o\0 ", sum).utf8))
        let archive = header + [UInt8](repeating: UInt8(ascii: "x"), count: 512) + [UInt8](repeating: 0, count: 1024)
        let scanned = scanEntries(archive, pieceSize: 512)
        #expect(scanned.entries.isEmpty)
        #expect(scanned.error == TarError(.badNumber(field: "size"), offset: 0))
    }

    /// Sparse files (ten runs of data in 3 MB of holes, made with truncate and dd) through GNU tar
    /// `-S` in each sparse format: the runs put where the map says give the file back.
    @Test(arguments: ["--format=gnu", "--format=pax --sparse-version=0.0", "--format=pax --sparse-version=0.1",
                      "--format=pax --sparse-version=1.0"])
    func sparseFiles(options: String) throws {
        try withTemporaryDirectory { scratch in
            _ = try shell("""
                mkdir tree && truncate -s 3000000 tree/sp && for i in 0 1 2 3 4 5 6 7 8 9; do \
                seq $i 900 | dd of=tree/sp bs=1 seek=$((i * 290000 + 7)) conv=notrunc 2>/dev/null; done \
                && tar \(options) -S --hole-detection=raw \(Self.tarOptions) -C tree -cf out.tar sp
                """, in: scratch)
            let archive = Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar")))
            let members = try readMembers(archive)
            try #require(members.count == 1)
            let (entry, content) = members[0]
            #expect(entry.pathString.hasSuffix("sp") && !entry.pathString.contains("GNUSparse"))
            #expect(entry.kind == .sparse && entry.realSize == 3_000_000)
            let map = try #require(entry.sparseMap)
            #expect(map.count >= 10)
            var file = [UInt8](repeating: 0, count: entry.realSize)
            var position = 0
            for run in map {
                file.replaceSubrange(run.offset..<(run.offset + run.length), with: content[position..<(position + run.length)])
                position += run.length
            }
            #expect(position == content.count)
            #expect(file == Array(try Data(contentsOf: scratch.appendingPathComponent("tree/sp"))))
            let listed = String(decoding: try shell("tar -tvf out.tar", in: scratch), as: UTF8.self)
            #expect(listed.contains(" 3000000 "))
        }
    }

    /// pax records GNU tar does not write: a time with a fraction, before 1970, a large uid, a
    /// global header followed by a member's override, a cleared value.
    @Test func paxRecordsFromPython() throws {
        try withTemporaryDirectory { scratch in
            _ = try shell("""
                python3 -c "
                import io, tarfile
                t = tarfile.open('out.tar', 'w', format=tarfile.PAX_FORMAT, pax_headers={'uname': 'global', 'gid': '77'})
                for name, headers in [('a', {'mtime': '1700000000.25', 'uid': '5000000'}), ('b', {'mtime': '-1.25', 'uname': ''})]:
                    i = tarfile.TarInfo(name); i.size = 3; i.uname = 'header'; i.pax_headers = headers
                    t.addfile(i, io.BytesIO(b'abc'))
                t.close()"
                """, in: scratch)
            let members = try readMembers(Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar"))))
            try #require(members.count == 2)
            #expect(members[0].0.modificationTime == TarEntry.Timestamp(seconds: 1_700_000_000, nanoseconds: 250_000_000))
            #expect(members[0].0.userID == 5_000_000 && members[0].0.groupID == 77)
            #expect(members[0].0.userName == Array("global".utf8))
            #expect(members[1].0.modificationTime == TarEntry.Timestamp(seconds: -2, nanoseconds: 750_000_000))
            #expect(members[1].0.userName == Array("header".utf8))
            #expect(members.map(\.1) == [Array("abc".utf8), Array("abc".utf8)])
        }
    }

    /// A NUL inside a pax path, and a record whose length is one too many.
    @Test func malformedPaxRecords() throws {
        try withTemporaryDirectory { scratch in
            _ = try shell("""
                python3 -c "
                import io, tarfile
                t = tarfile.open('nul.tar', 'w', format=tarfile.PAX_FORMAT)
                i = tarfile.TarInfo('x'); i.pax_headers = {'path': 'a\\x00b'}; t.addfile(i)
                t.close()
                t = tarfile.open('long.tar', 'w', format=tarfile.PAX_FORMAT)
                i = tarfile.TarInfo('x'); i.pax_headers = {'comment': 'hello'}; t.addfile(i)
                t.close()"
                """, in: scratch)
            let nul = Array(try Data(contentsOf: scratch.appendingPathComponent("nul.tar")))
            #expect(failure { _ = try readMembers(nul) } == TarError(.nulInName, offset: 0))
            var long = Array(try Data(contentsOf: scratch.appendingPathComponent("long.tar")))
            let record = Array("17 comment=hello\n".utf8)
            let at = try #require((0..<(long.count - record.count)).first { Array(long[$0..<($0 + record.count)]) == record })
            long[at + 1] = UInt8(ascii: "8")
            let longError = failure { _ = try readMembers(long) }
            if case .badExtendedHeader? = longError?.reason {
                #expect(longError?.offset == 0)
            } else {
                Issue.record("a record one byte too long gave \(String(describing: longError))")
            }
        }
    }

    /// A flipped byte in the second member's header; the archive cut at every block boundary and
    /// inside data.
    @Test func damagedArchives() throws {
        try withTemporaryDirectory { scratch in
            _ = try shell("\(Self.basicTree) && tar --format=gnu \(Self.tarOptions) -C tree -cf out.tar .", in: scratch)
            let archive = Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar")))
            let entries = try readMembers(archive).map(\.0)
            var flipped = archive
            flipped[entries[2].headerOffset + 5] ^= 0x20
            let flippedError = failure { _ = try readMembers(flipped) }
            if case .badChecksum? = flippedError?.reason {
                #expect(flippedError?.offset == entries[2].headerOffset)
            } else {
                Issue.record("a flipped header byte gave \(String(describing: flippedError))")
            }
            let end = entries.last!.endOffset
            for cut in stride(from: 0, through: end, by: TarFormat.blockSize) {
                let whole = entries.filter { $0.endOffset <= cut }
                let prefix = Array(archive[0..<cut])
                if let inside = entries.first(where: { $0.headerOffset < cut && cut < $0.endOffset }) {
                    #expect(failure { _ = try readMembers(prefix) } == TarError(.truncated, offset: inside.headerOffset), "cut at \(cut)")
                } else {
                    #expect(try readMembers(prefix).map(\.0) == whole, "cut at \(cut)")
                }
            }
            let numbers = try #require(entries.first { $0.size > 1000 })
            let cutData = Array(archive[0..<(numbers.dataOffset + 1000)])
            #expect(failure { _ = try readMembers(cutData) } == TarError(.truncated, offset: numbers.headerOffset))
            #expect(try readMembers(Array(archive[0..<(end + 512)])).map(\.0) == entries, "one end block is enough")
        }
    }

    /// A content stream gives exactly the member's bytes, and fails once the reader moved on.
    @Test func contentStreamsAreBounded() throws {
        try withTemporaryDirectory { scratch in
            _ = try shell("\(Self.basicTree) && tar --format=ustar \(Self.tarOptions) -C tree -cf out.tar .", in: scratch)
            let archive = Array(try Data(contentsOf: scratch.appendingPathComponent("out.tar")))
            let reader = TarReader(MemoryInputStream(bytes: archive), bufferSize: 512)
            var numbers: TarReader.Member?
            while let member = try reader.next() {
                if member.entry.pathString == "./dir/numbers" { numbers = member; break }
            }
            let member = try #require(numbers)
            var collected: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 100_000)
            while true {
                let count = member.content.read(&buffer, maxLength: 1 + collected.count % 3000)
                if count <= 0 { break }
                collected += buffer[0..<count]
            }
            #expect(collected.count == member.entry.size && member.content.streamStatus == .atEnd)
            let next = try #require(try reader.next())
            #expect(next.entry.pathString == "./dir/sub/")
            #expect(member.content.read(&buffer, maxLength: 10) == 0)
        }
    }
}

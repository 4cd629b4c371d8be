import ByteStreams
import Foundation
import GzipStreams
import RatarmountIndexes
import TarArchives
import Testing
import TestSupport

/// RatarmountIndex on the index ratarmount wrote for fixtures/ratarmount/ratarmount.tar.gz
/// (fixtures/ratarmount/README.md), and on cut and foreign bytes.
@Suite("ratarmount's index read as untrusted input")
struct RatarmountIndexTests {
    static let archiveSize: Int64 = 106_336

    static func databaseBytes() throws -> [UInt8] {
        Array(try Data(contentsOf: PackageLocations.fixtures.appendingPathComponent("ratarmount/ratarmount.tar.gz.index.sqlite")))
    }

    @Test("the fixture: every member with its offsets, kinds and link, and rapidgzip's gzip index")
    func fixture() throws {
        let index = try RatarmountIndex(databaseBytes: try Self.databaseBytes(), compressedSize: Self.archiveSize)
        let long = "tree/docs/deeper/" + String(repeating: "a-rather-long-file-name-", count: 5) + "end.txt"
        let entries = index.members.entries
        #expect(entries.map(\.pathString) == ["tree/", "tree/README", "tree/docs/", "tree/docs/big.txt", "tree/docs/deeper/",
                                               long, "tree/docs/readme-link", "tree/zz-last.txt"])
        #expect(entries.map(\.headerOffset) == [0, 512, 2048, 2560, 243_200, 243_712, 248_320, 248_832])
        // The long name's record starts at its GNU `L` header: three blocks before its data.
        #expect(entries[5].dataOffset == 243_712 + 3 * 512 && entries[5].size == 3001)
        #expect(entries[6].kind == .symbolicLink && entries[6].linkTargetString == "../README")
        #expect(entries[0].kind == .directory && entries[0].mode == 0o755 && entries[1].mode == 0o644)
        #expect(entries[1].modificationTime.seconds == 1_704_164_645)
        #expect(index.members.entry(atPath: Array("tree/zz-last.txt".utf8))?.size == 5001)
        #expect(index.recordedArchiveSize == Self.archiveSize)
        #expect(index.gzipIndexTable == "gztoolindex" && index.gzipIndex?.points.count == 3)
    }

    @Test("bound to the archive's size")
    func otherSize() throws {
        #expect(throws: RatarmountIndexError(reason: "made for another file: it records an archive of 106336 bytes, this one has 106335",
                                             table: "metadata")) {
            try RatarmountIndex(databaseBytes: try Self.databaseBytes(), compressedSize: Self.archiveSize - 1)
        }
    }

    @Test("a database larger than the archive can need is refused before SQLite sees it")
    func tooLarge() throws {
        let bytes = try Self.databaseBytes()
        #expect(RatarmountIndex.maximumFileSize(compressedSize: 0) == 64 << 20)
        #expect(RatarmountIndex.maximumFileSize(compressedSize: 1 << 40) == RatarmountIndex.maximumFileSize)
        #expect(throws: RatarmountIndexError.self) {
            try RatarmountIndex(databaseBytes: bytes + [UInt8](repeating: 0, count: 64 << 20), compressedSize: 0)
        }
    }

    @Test("read from a descriptor into SQLite's own buffer: the index the bytes give; the size bound checked before any read; read errors kept apart")
    func fromDescriptor() throws {
        let bytes = try Self.databaseBytes()
        let path = PackageLocations.fixtures.appendingPathComponent("ratarmount/ratarmount.tar.gz.index.sqlite").path
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let expected = try RatarmountIndex(databaseBytes: bytes, compressedSize: Self.archiveSize)
        // byteCount as fstat gave it; and larger, as for a file that shrank since: read as it is.
        for count in [bytes.count, bytes.count + 4096] {
            let index = try RatarmountIndex(databaseDescriptor: descriptor, byteCount: count, path: path, compressedSize: Self.archiveSize)
            #expect(index.members == expected.members && index.recordedArchiveSize == expected.recordedArchiveSize)
            #expect(index.gzipIndexTable == expected.gzipIndexTable && index.gzipIndex?.points == expected.gzipIndex?.points)
        }
        // Descriptor -1 is never read: the bound and the empty file are refused first.
        #expect(throws: RatarmountIndexError(reason: "\((64 << 20) + 1) bytes, more than an index of a file of 0 bytes can need")) {
            try RatarmountIndex(databaseDescriptor: -1, byteCount: (64 << 20) + 1, path: path, compressedSize: 0)
        }
        #expect(throws: RatarmountIndexError(reason: "an empty file, not an SQLite database")) {
            try RatarmountIndex(databaseDescriptor: -1, byteCount: 0, path: path, compressedSize: Self.archiveSize)
        }
        // A read that fails is the read's error (I/O), not a verdict on the index.
        #expect(throws: ByteStreamError.self) {
            try RatarmountIndex(databaseDescriptor: -1, byteCount: 100, path: path, compressedSize: Self.archiveSize)
        }
    }

    // (A cut inside the last page is not among them: SQLite then drops that page, which none of
    // the queries reads, and the index is whole.)
    @Test("a cut file is an error, never a crash", arguments: [0, 1, 99, 100, 4095, 4096, 8192, 20000, 40000])
    func cut(_ length: Int) throws {
        let bytes = try Self.databaseBytes()
        #expect(throws: RatarmountIndexError.self) {
            try RatarmountIndex(databaseBytes: Array(bytes.prefix(length)), compressedSize: Self.archiveSize)
        }
    }

    @Test("paths compare as ratarmount normalises them",
          arguments: [("tree/", "tree"), ("./tree/a", "tree/a"), ("/tree//a/", "tree/a"), ("a/./b/../c", "a/c"),
                      ("../../etc", "etc"), (".", ""), ("a/b", "a/b")])
    func pathKey(_ path: String, _ key: String) {
        #expect(RatarmountIndex.pathKey(Array(path.utf8)) == Array(key.utf8))
    }

    @Test("the error names table and row")
    func description() {
        #expect(RatarmountIndexError(reason: "offset is text, not an integer", table: "files", row: 2).description
            == "table files, row 2: offset is text, not an integer")
        #expect(RatarmountIndexError(reason: "x", table: "metadata").description == "table metadata: x")
        #expect(RatarmountIndexError(reason: "x").description == "x")
    }
}

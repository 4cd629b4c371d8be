import ByteStreams
import Foundation
import Testing
import TarArchives
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The extractor's files: content and sizes, sparse runs, replacing, modes, times, directories.
@Suite struct TarExtractorFileTests {
    @Test func theLastOfDuplicateNamesWins() throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.file("f", "one"), .file("f", "two"), .symbolicLink("l", to: "f"), .file("l", "three")],
                                      into: sandbox.destination)
            #expect(outcome.allExtracted)
            #expect(sandbox.text("f") == "two")
            #expect(sandbox.status("l")?.isRegularFile == true && sandbox.text("l") == "three")
            #expect(sandbox.destinationListing() == ["f", "l"], "no temporary file is left")
        }
    }

    @Test func anExistingFileIsReplacedOnlyWhenAsked() throws {
        try Sandbox.with { sandbox in
            try Data("before".utf8).write(to: URL(fileURLWithPath: sandbox.destination + "/f"))
            let refused = try extract([.file("f", "after"), .symbolicLink("f", to: "g")], into: sandbox.destination)
            #expect(refused.reason(0) == .exists && refused.reason(1) == .exists)
            let error = try #require(refused.errors[0] as? ExtractionError)
            #expect(error.description == "f (tar member at byte 0): the file exists; not replaced (use -f to replace it)")
            #expect(sandbox.text("f") == "before")

            let options = TarExtractor.Options(overwritesExisting: true, creationMask: 0o022)
            let replaced = try extract([.file("f", "after")], into: sandbox.destination, options: options)
            #expect(replaced.allExtracted)
            #expect(sandbox.text("f") == "after")
        }
    }

    /// A symbolic link where a file is to go is replaced itself, never written through.
    @Test func anExistingLinkIsReplacedNotFollowed() throws {
        try Sandbox.with { sandbox in
            try FileManager.default.createSymbolicLink(atPath: sandbox.destination + "/f", withDestinationPath: sandbox.outside + "/keep")
            let refused = try extract([.file("f", "through")], into: sandbox.destination)
            #expect(refused.reason(0) == .exists)
            let options = TarExtractor.Options(overwritesExisting: true, creationMask: 0o022)
            let replaced = try extract([.file("f", "replaced")], into: sandbox.destination, options: options)
            #expect(replaced.allExtracted)
            #expect(sandbox.status("f")?.isRegularFile == true && sandbox.text("f") == "replaced")
        }
    }

    /// Content shorter or longer than the header's size: an error, and no file (nor temporary)
    /// left behind.
    @Test(arguments: [(5, "abc"), (2, "abc"), (1, "")])
    func contentOfTheWrongLengthLeavesNoFile(size: Int, text: String) throws {
        try Sandbox.with { sandbox in
            var member = Member.file("d/f", text)
            member.entry.size = size
            member.entry.realSize = size
            let outcome = try extract([member], into: sandbox.destination)
            let actual = text.utf8.count > size ? size + 1 : text.utf8.count
            #expect(outcome.reason(0) == .contentLength(expected: size, actual: actual))
            #expect(sandbox.destinationListing() == ["d/"])
        }
    }

    @Test(arguments: [0, 1, 4095, 4096, 4097, 65536, 65537, 1 << 20 + 1])
    func contentIsWrittenExactly(size: Int) throws {
        try Sandbox.with { sandbox in
            let bytes = sampleBytes(count: size, seed: UInt64(size))
            let member = Member(entry: TarEntry(path: Array("f".utf8), kind: .regular, size: size), content: bytes)
            let outcome = try extract([member], into: sandbox.destination)
            #expect(outcome.allExtracted)
            #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.destination + "/f")) == Data(bytes))
        }
    }

    @Test func sparseRunsAreWrittenWithHoles() throws {
        try Sandbox.with { sandbox in
            let map = [TarEntry.SparseRegion(offset: 0, length: 4), TarEntry.SparseRegion(offset: 1 << 20, length: 4),
                       TarEntry.SparseRegion(offset: 4 << 20, length: 0)]
            let member = Member(entry: TarEntry(path: Array("s".utf8), kind: .sparse, size: 8, sparseMap: map, realSize: 4 << 20),
                                content: Array("headtail".utf8))
            let outcome = try extract([member], into: sandbox.destination)
            #expect(outcome.allExtracted)
            let data = try Data(contentsOf: URL(fileURLWithPath: sandbox.destination + "/s"))
            var expected = Data(count: 4 << 20)
            expected.replaceSubrange(0..<4, with: Data("head".utf8))
            expected.replaceSubrange((1 << 20)..<((1 << 20) + 4), with: Data("tail".utf8))
            #expect(data == expected)
            var info = stat()
            #expect(stat(sandbox.destination + "/s", &info) == 0)
            #expect(Int(info.st_blocks) * 512 < 1 << 20, "the holes take no space")
        }
    }

    @Test(arguments: [
        ([(0, 4), (2, 4)], 8, 16, "run 2 starts at 2, before the end of the one before (4)"),
        ([(0, 4), (14, 4)], 8, 16, "run 2 ends past the file's size of 16 bytes"),
        ([(0, 4), (8, 2)], 8, 16, "the runs hold 6 bytes, the member 8"),
        ([(-1, 4), (8, 4)], 8, 16, "run 1 has a negative offset or length"),
    ])
    func badSparseMapsAreRefused(runs: [(Int, Int)], size: Int, realSize: Int, detail: String) throws {
        try Sandbox.with { sandbox in
            let map = runs.map { TarEntry.SparseRegion(offset: $0.0, length: $0.1) }
            let member = Member(entry: TarEntry(path: Array("s".utf8), kind: .sparse, size: size, sparseMap: map, realSize: realSize),
                                content: [UInt8](repeating: 1, count: size))
            let outcome = try extract([member], into: sandbox.destination)
            #expect(outcome.reason(0) == .badSparseMap(detail: detail))
            #expect(sandbox.destinationListing() == [])
        }
    }

    /// Set-user-ID and set-group-ID are dropped and the umask applied, unless asked.
    @Test(arguments: [(UInt32(0o4755), false, UInt32(0o755)), (0o7777, false, 0o1755), (0o6777, false, 0o755), (0o666, false, 0o644),
                      (0o4755, true, 0o4755), (0o2777, true, 0o2777)])
    func modesAreMasked(stored: UInt32, preserving: Bool, expected: UInt32) throws {
        try Sandbox.with { sandbox in
            let options = TarExtractor.Options(preservesPermissions: preserving, creationMask: 0o022)
            let outcome = try extract([.file("f", "x", mode: stored), .directory("d", mode: stored)],
                                      into: sandbox.destination, options: options)
            #expect(outcome.allExtracted)
            #expect(sandbox.status("f")?.mode.permissionBits == expected)
            #expect(sandbox.status("d")?.mode.permissionBits == expected)
        }
    }

    /// A read-only directory gets its mode after its files are written; its time is the one
    /// stored, not the time of the writes into it.
    @Test func directoriesGetTheirModesAndTimesLast() throws {
        try Sandbox.with { sandbox in
            let time = TarEntry.Timestamp(seconds: 1_234_567_890, nanoseconds: 5)
            let outcome = try extract([.directory("ro", mode: 0o555, mtime: time), .directory("ro/inner", mode: 0o500, mtime: time),
                                       .file("ro/inner/f", "x"), .file("ro/g", "y")], into: sandbox.destination)
            #expect(outcome.allExtracted)
            #expect(sandbox.text("ro/inner/f") == "x" && sandbox.text("ro/g") == "y")
            #expect(sandbox.status("ro")?.mode.permissionBits == 0o555)
            #expect(sandbox.status("ro/inner")?.mode.permissionBits == 0o500)
            #expect(sandbox.status("ro")?.modificationTime == FileInfo.Timestamp(seconds: 1_234_567_890, nanoseconds: 5))
            #expect(sandbox.status("ro/inner")?.modificationTime == FileInfo.Timestamp(seconds: 1_234_567_890, nanoseconds: 5))
            _ = chmod(sandbox.destination + "/ro/inner", 0o755)
            _ = chmod(sandbox.destination + "/ro", 0o755)
        }
    }

    /// Members that go down a path deeper than the directories the extractor holds open, out to
    /// a sibling and back down: every file lands where named, and every directory, a name
    /// sorting between a directory and its children (`d0-x` beside `d0/…`) too, gets its own
    /// mode and time at the end.
    @Test func deepAndBranchingPathsAllGetTheirAttributes() throws {
        try Sandbox.with { sandbox in
            let depth = 40
            let names = (0..<depth).map { index in (0...index).map { "d\($0)" }.joined(separator: "/") }
            func time(_ index: Int) -> TarEntry.Timestamp { TarEntry.Timestamp(seconds: 1_000_000 + Int64(index), nanoseconds: 7) }
            func mode(_ index: Int) -> UInt32 { index.isMultiple(of: 2) ? 0o700 : 0o751 }
            var members = names.indices.map { Member.directory(names[$0], mode: mode($0), mtime: time($0)) }
            members += [.file(names[depth - 1] + "/f", "deep"), .file(names[1] + "/f", "shallow"),
                        .directory("d0-x", mode: 0o711, mtime: time(100)), .file("d0-x/f", "beside"),
                        .file(names[depth - 1] + "/g", "deep again"), .file(names[20] + "/f", "middle"), .file("top", "top")]
            let outcome = try extract(members, into: sandbox.destination)
            #expect(outcome.allExtracted)
            #expect(sandbox.text(names[depth - 1] + "/f") == "deep" && sandbox.text(names[depth - 1] + "/g") == "deep again")
            #expect(sandbox.text(names[1] + "/f") == "shallow" && sandbox.text(names[20] + "/f") == "middle")
            #expect(sandbox.text("d0-x/f") == "beside" && sandbox.text("top") == "top")
            for (index, name) in names.enumerated() {
                #expect(sandbox.status(name)?.mode.permissionBits == mode(index), "\(name)")
                #expect(sandbox.status(name)?.modificationTime == FileInfo.Timestamp(seconds: 1_000_000 + index, nanoseconds: 7), "\(name)")
            }
            #expect(sandbox.status("d0-x")?.mode.permissionBits == 0o711)
            #expect(sandbox.status("d0-x")?.modificationTime == FileInfo.Timestamp(seconds: 1_000_100, nanoseconds: 7))
        }
    }

    @Test func timesKeepTheirNanoseconds() throws {
        try Sandbox.with { sandbox in
            let time = TarEntry.Timestamp(seconds: 1_600_000_000, nanoseconds: 123_456_789)
            var link = Member.symbolicLink("l", to: "f")
            link.entry.modificationTime = TarEntry.Timestamp(seconds: 1_500_000_000, nanoseconds: 987_654_321)
            let outcome = try extract([.file("f", "x", mtime: time), link,
                                       .file("old", "y", mtime: TarEntry.Timestamp(seconds: -86_400))], into: sandbox.destination)
            #expect(outcome.allExtracted)
            #expect(sandbox.status("f")?.modificationTime == FileInfo.Timestamp(seconds: 1_600_000_000, nanoseconds: 123_456_789))
            #expect(sandbox.status("l")?.modificationTime == FileInfo.Timestamp(seconds: 1_500_000_000, nanoseconds: 987_654_321))
            #expect(sandbox.status("old")?.modificationTime == FileInfo.Timestamp(seconds: -86_400, nanoseconds: 0))
        }
    }

    /// Owners are left alone unless asked; asked, as root, the stored IDs are applied.
    @Test func ownersAreAppliedOnlyWhenAsked() throws {
        try Sandbox.with { sandbox in
            var file = Member.file("f", "x")
            file.entry.userID = 4321
            file.entry.groupID = 8765
            _ = try extract([file], into: sandbox.destination)
            #expect(sandbox.status("f")?.owner == geteuid())
            guard geteuid() == 0 else { return }
            file.entry.path = Array("g".utf8)
            let options = TarExtractor.Options(preservesOwner: true, creationMask: 0o022)
            _ = try extract([file], into: sandbox.destination, options: options)
            #expect(sandbox.status("g")?.owner == 4321 && sandbox.status("g")?.group == 8765)
        }
    }

    /// A content stream's own error comes through as it is, and leaves no file.
    @Test func contentErrorsComeThroughUnchanged() throws {
        try Sandbox.with { sandbox in
            let extractor = try TarExtractor(destinationPath: sandbox.destination)
            let content = FileInputStream(path: sandbox.root + "/no-such-file")
            let entry = TarEntry(path: Array("f".utf8), kind: .regular, size: 3)
            #expect(throws: ByteStreamError.self) { try extractor.extract(entry, content: content) }
            #expect(sandbox.destinationListing() == [])
        }
    }
}

extension UInt32 {
    /// The permission bits of an `st_mode`, set-ID and sticky included.
    var permissionBits: UInt32 { self & 0o7777 }
}

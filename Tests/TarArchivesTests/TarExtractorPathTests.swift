import ByteStreams
import Foundation
import Testing
import TarArchives
import TestSupport

/// The extractor's rules for names and links: every hostile case of a tar archive that could
/// write outside the destination, each refused (or neutralised) with nothing changed outside.
@Suite struct TarExtractorPathTests {
    @Test(arguments: ["../x", "a/../../x", "a/..", "..", "./../x", "/../x", "a/b/../../../x"])
    func parentComponentsAreRefused(path: String) throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.file(path, "escaped")], into: sandbox.destination)
            #expect(outcome.reason(0) == .parentDirectoryComponent)
            #expect(sandbox.destinationListing() == [])
            #expect(FileManager.default.fileExists(atPath: sandbox.root + "/x") == false)
        }
    }

    /// A PAX `path` record is just the entry's path: the same rules, whatever header carried it.
    @Test func parentComponentsInLinksAreRefusedToo() throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.directory("d/../../d"), .symbolicLink("../l", to: "x"), .hardLink("../h", to: "x")],
                                      into: sandbox.destination)
            #expect(outcome.errors.indices.allSatisfy { outcome.reason($0) == .parentDirectoryComponent })
            #expect(sandbox.destinationListing() == [])
        }
    }

    @Test func absoluteNamesLandInsideWithOneWarning() throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.file("/etc/x", "one"), .file("//etc/y", "two"), .file("./z", "three")],
                                      into: sandbox.destination)
            #expect(outcome.allExtracted)
            #expect(sandbox.text("etc/x") == "one")
            #expect(sandbox.text("etc/y") == "two")
            #expect(sandbox.text("z") == "three")
            #expect(outcome.warnings.map(\.reason) == [.strippedLeadingSlash])
            #expect(outcome.warnings.first?.description == "removing leading \"/\" from member names")
        }
    }

    @Test func aNulInANameIsRefused() throws {
        try Sandbox.with { sandbox in
            var member = Member.file("a", "x")
            member.entry.path = Array("a\0/../../x".utf8)
            let outcome = try extract([member], into: sandbox.destination)
            #expect(outcome.reason(0) == .nulInName)
            let error = try #require(outcome.errors[0] as? ExtractionError)
            #expect(error.description == "a\\000/../../x (tar member at byte 0): a name with a NUL byte; not extracted")
        }
    }

    @Test func emptyNamesAreRefusedAndTheDestinationItselfIsLeftAlone() throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.file("./", "x"), .directory("./", mode: 0o700), .directory("/", mode: 0o700)],
                                      into: sandbox.destination)
            #expect(outcome.reason(0) == .emptyName)
            #expect(outcome.errors[1] == nil && outcome.errors[2] == nil)
            var info = stat()
            #expect(lstat(sandbox.destination, &info) == 0 && info.st_mode & 0o777 == 0o755)
        }
    }

    /// Absolute symbolic link targets and relative ones that climb out are refused by default.
    @Test(arguments: ["/tmp", "..", "../outside", "a/../..", "x/../../y", "", "./../x"])
    func linksOutsideAreRefused(target: String) throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.symbolicLink("l", to: target)], into: sandbox.destination)
            #expect(outcome.reason(0) == .linkTargetOutsideDestination(target: Array(target.utf8)))
            #expect(sandbox.destinationListing() == [])
        }
    }

    /// `b -> .` stays inside, but `b/..` then climbs from where `b` points: a `..` after a
    /// name is refused.
    @Test func aClimbThroughAnEarlierLinkIsRefused() throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.symbolicLink("b", to: "."), .symbolicLink("c", to: "b/../outside")],
                                      into: sandbox.destination)
            #expect(outcome.errors[0] == nil)
            #expect(outcome.reason(1) == .linkTargetOutsideDestination(target: Array("b/../outside".utf8)))
        }
    }

    @Test func linksInsideAreMade() throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.file("f", "data"), .symbolicLink("d/e/l", to: "../../f"), .symbolicLink("m", to: "./f"),
                                       .symbolicLink("n", to: "d/e"), .symbolicLink("o", to: "d/e/../../f"),
                                       .symbolicLink("p", to: "n/../f"), .symbolicLink("q", to: "later/../f")],
                                      into: sandbox.destination)
            #expect(outcome.errors[0..<5].allSatisfy { $0 == nil })
            #expect(sandbox.text("o") == "data")
            // Through a link, or a name not there yet, a ".." is refused.
            #expect(outcome.reason(5) == .linkTargetOutsideDestination(target: Array("n/../f".utf8)))
            #expect(outcome.reason(6) == .linkTargetOutsideDestination(target: Array("later/../f".utf8)))
            #expect(sandbox.linkTarget("d/e/l") == "../../f")
            #expect(sandbox.text("d/e/l") == "data")
            #expect(sandbox.linkTarget("m") == "./f")
            #expect(sandbox.status("n")?.isSymbolicLink == true)
        }
    }

    /// Even where links outside are allowed, no later member is written through a link: not
    /// one to an absolute directory, not one to `..`.
    @Test(arguments: ["ABSOLUTE", ".."])
    func laterMembersNeverFollowALink(target: String) throws {
        try Sandbox.with { sandbox in
            let linkTarget = target == "ABSOLUTE" ? sandbox.outside : target
            let options = TarExtractor.Options(allowsLinksOutsideDestination: true, creationMask: 0o022)
            let outcome = try extract([.symbolicLink("a", to: linkTarget), .file("a/keep", "overwritten"),
                                       .file("a/outside/keep", "overwritten"), .directory("a/sub"),
                                       .hardLink("a/h", to: "a")], into: sandbox.destination, options: options)
            #expect(outcome.errors[0] == nil)
            #expect(outcome.reason(1) == .symbolicLinkInPath(component: Array("a".utf8)))
            #expect(outcome.reason(2) == .symbolicLinkInPath(component: Array("a".utf8)))
            #expect(outcome.reason(3) == .symbolicLinkInPath(component: Array("a".utf8)))
            #expect(outcome.reason(4) == .hardLinkTargetNotRegularFile(target: Array("a".utf8)))
            #expect(sandbox.destinationListing() == ["a"])
        }
    }

    /// A link the destination held before is not followed either.
    @Test func aLinkAlreadyInTheDestinationIsNotFollowed() throws {
        try Sandbox.with { sandbox in
            try FileManager.default.createSymbolicLink(atPath: sandbox.destination + "/a", withDestinationPath: sandbox.outside)
            let outcome = try extract([.file("a/keep", "overwritten"), .file("a/new", "x")], into: sandbox.destination)
            #expect(outcome.reason(0) == .symbolicLinkInPath(component: Array("a".utf8)))
            #expect(outcome.reason(1) == .symbolicLinkInPath(component: Array("a".utf8)))
        }
    }

    @Test func aFileOnThePathIsNotADirectory() throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.file("a", "file"), .file("a/b", "x")], into: sandbox.destination)
            #expect(outcome.reason(1) == .notADirectoryInPath(component: Array("a".utf8)))
            #expect(sandbox.text("a") == "file")
        }
    }

    /// The 2025–26 Python tarfile bypass: a hard link to a symbolic link the archive made, then
    /// a file written through the hard link.
    @Test func aHardLinkToASymbolicLinkIsRefused() throws {
        try Sandbox.with { sandbox in
            let options = TarExtractor.Options(allowsLinksOutsideDestination: true, creationMask: 0o022)
            let outcome = try extract([.symbolicLink("s", to: sandbox.outside + "/keep"), .hardLink("h", to: "s"),
                                       .file("h", "overwritten")], into: sandbox.destination, options: options)
            #expect(outcome.errors[0] == nil)
            #expect(outcome.reason(1) == .hardLinkTargetNotRegularFile(target: Array("s".utf8)))
            #expect(outcome.errors[2] == nil)
            #expect(sandbox.text("h") == "overwritten" && sandbox.status("h")?.isRegularFile == true)
        }
    }

    @Test(arguments: ["../outside/keep", "/../outside/keep", "f/../../outside/keep"])
    func hardLinksOutsideAreRefused(target: String) throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.file("f", "x"), .hardLink("h", to: target)], into: sandbox.destination)
            #expect(outcome.reason(1) == .linkTargetOutsideDestination(target: Array(target.utf8)))
            #expect(sandbox.status("h") == nil)
        }
    }

    /// Only a file an earlier member wrote: not a later one, not one the destination had.
    @Test func hardLinksToFilesNotExtractedAreRefused() throws {
        try Sandbox.with { sandbox in
            try Data("before".utf8).write(to: URL(fileURLWithPath: sandbox.destination + "/old"))
            let outcome = try extract([.hardLink("h", to: "later"), .file("later", "x"), .hardLink("g", to: "old"),
                                       .directory("d"), .hardLink("i", to: "d")], into: sandbox.destination)
            #expect(outcome.reason(0) == .hardLinkTargetNotExtracted(target: Array("later".utf8)))
            #expect(outcome.reason(2) == .hardLinkTargetNotExtracted(target: Array("old".utf8)))
            #expect(outcome.reason(4) == .hardLinkTargetNotRegularFile(target: Array("d".utf8)))
            #expect(sandbox.destinationListing() == ["d/", "later", "old"])
        }
    }

    @Test func hardLinksToEarlierFilesShareTheirInode() throws {
        try Sandbox.with { sandbox in
            let outcome = try extract([.file("d/f", "shared"), .hardLink("e/h", to: "d/f"), .hardLink("/d/g", to: "/d/f")],
                                      into: sandbox.destination)
            #expect(outcome.allExtracted)
            let file = try #require(sandbox.status("d/f"))
            #expect(sandbox.status("e/h")?.isSameFile(as: file) == true)
            #expect(sandbox.status("d/g")?.isSameFile(as: file) == true)
            #expect(file.linkCount == 3)
        }
    }

    @Test func devicesAndFIFOsAreSkippedWithAWarning() throws {
        try Sandbox.with { sandbox in
            let members = [
                Member(entry: TarEntry(path: Array("dev/null".utf8), kind: .characterDevice, deviceMajor: 1, deviceMinor: 3,
                                       headerOffset: 0)),
                Member(entry: TarEntry(path: Array("sda".utf8), kind: .blockDevice, deviceMajor: 8, headerOffset: 512)),
                Member(entry: TarEntry(path: Array("pipe".utf8), kind: .fifo, headerOffset: 1024)),
                Member(entry: TarEntry(path: Array("v".utf8), kind: .other(UInt8(ascii: "V")), headerOffset: 1536)),
            ]
            let outcome = try extract(members, into: sandbox.destination)
            #expect(outcome.allExtracted)
            #expect(sandbox.destinationListing() == [])
            #expect(outcome.warnings.map(\.description) == [
                "dev/null (tar member at byte 0): a character device, skipped",
                "sda (tar member at byte 512): a block device, skipped",
                "pipe (tar member at byte 1024): a FIFO, skipped",
                "v (tar member at byte 1536): unknown type 'V', skipped",
            ])
        }
    }

    /// A component longer than `NAME_MAX` is the system's `ENAMETOOLONG`, as an error.
    @Test(arguments: ["LONG", "LONG/f", "d/LONG"])
    func overlongComponentsAreErrors(pattern: String) throws {
        try Sandbox.with { sandbox in
            let path = pattern.replacingOccurrences(of: "LONG", with: String(repeating: "n", count: 300))
            let outcome = try extract([.file(path, "x")], into: sandbox.destination)
            guard case .system(let error)? = outcome.reason(0) else {
                Issue.record("expected a system error, got \(String(describing: outcome.errors[0]))")
                return
            }
            #expect(error.errno == Errno.nameTooLong)
            #expect(sandbox.destinationListing().allSatisfy { $0 == "d/" })
        }
    }
}

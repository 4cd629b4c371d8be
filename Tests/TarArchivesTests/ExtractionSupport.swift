import ByteStreams
import Foundation
import TarArchives
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// Hand-made members and what an extraction of them did, for the extractor's tests.

/// A member and the bytes of its content stream.
struct Member {
    var entry: TarEntry
    var content: [UInt8] = []

    static func file(_ path: String, _ text: String = "", mode: UInt32 = 0o644,
                     mtime: TarEntry.Timestamp = TarEntry.Timestamp(seconds: 1_000_000_000)) -> Member {
        let bytes = Array(text.utf8)
        return Member(entry: TarEntry(path: Array(path.utf8), kind: .regular, size: bytes.count, mode: mode,
                                      modificationTime: mtime), content: bytes)
    }

    static func directory(_ path: String, mode: UInt32 = 0o755,
                          mtime: TarEntry.Timestamp = TarEntry.Timestamp(seconds: 1_000_000_000)) -> Member {
        Member(entry: TarEntry(path: Array(path.utf8), kind: .directory, mode: mode, modificationTime: mtime))
    }

    static func symbolicLink(_ path: String, to target: String) -> Member {
        Member(entry: TarEntry(path: Array(path.utf8), kind: .symbolicLink, mode: 0o777, linkTarget: Array(target.utf8)))
    }

    static func hardLink(_ path: String, to target: String) -> Member {
        Member(entry: TarEntry(path: Array(path.utf8), kind: .hardLink, linkTarget: Array(target.utf8)))
    }
}

/// What extracting a list of members did: each member's error (`nil`: extracted), the error
/// of ``TarExtractor/finish()``, and the warnings in order.
struct Outcome {
    var errors: [(any Error)?]
    var finishError: (any Error)?
    var warnings: [ExtractionWarning]

    /// The reason of member `index`'s ``ExtractionError``, if it had one.
    func reason(_ index: Int) -> ExtractionError.Reason? {
        (errors[index] as? ExtractionError)?.reason
    }

    var allExtracted: Bool { errors.allSatisfy { $0 == nil } && finishError == nil }
}

/// Extracts `members` in order into `destination` (one extractor, going on after errors),
/// then finishes.
func extract(_ members: [Member], into destination: String,
             options: TarExtractor.Options = TarExtractor.Options(creationMask: 0o022)) throws -> Outcome {
    final class Warnings { var list: [ExtractionWarning] = [] }
    let warnings = Warnings()
    let extractor = try TarExtractor(destinationPath: destination, options: options) { warnings.list.append($0) }
    var errors: [(any Error)?] = []
    for member in members {
        do {
            try extractor.extract(member.entry, content: MemoryInputStream(bytes: member.content))
            errors.append(nil)
        } catch {
            errors.append(error)
        }
    }
    var finishError: (any Error)?
    do { try extractor.finish() } catch { finishError = error }
    return Outcome(errors: errors, finishError: finishError, warnings: warnings.list)
}

/// A scratch directory holding `dest/` (the destination) and `outside/` (with one file,
/// `outside/keep`), and a listing of everything outside `dest/` to compare after.
struct Sandbox {
    let root: String
    var destination: String { root + "/dest" }
    var outside: String { root + "/outside" }

    static func with(_ body: (Sandbox) throws -> Void) throws {
        try withTemporaryDirectory(prefix: "tar-extract") { url in
            let sandbox = Sandbox(root: url.path)
            try FileManager.default.createDirectory(atPath: sandbox.destination, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: sandbox.outside, withIntermediateDirectories: false)
            try Data("keep".utf8).write(to: URL(fileURLWithPath: sandbox.outside + "/keep"))
            let before = try sandbox.outsideListing()
            try body(sandbox)
            #expect(try sandbox.outsideListing() == before, "nothing outside the destination changed")
        }
    }

    /// Every path under the root but not under `dest/`, with the content of each file: what an
    /// extraction must never change.
    func outsideListing() throws -> [String] {
        Self.walk(root).filter { $0 != "dest/" && !$0.hasPrefix("dest/") }.map { relative in
            let content = (try? Data(contentsOf: URL(fileURLWithPath: root + "/" + relative)))
                .map { String(decoding: $0, as: UTF8.self) } ?? "-"
            return "\(relative) \(content)"
        }
    }

    /// The paths under `dest/`, sorted, directories with a trailing `/`.
    func destinationListing() -> [String] {
        Self.walk(destination)
    }

    /// The paths under `directory`, sorted, directories with a trailing `/`; a symbolic link is
    /// listed, never followed.
    static func walk(_ directory: String, prefix: String = "") -> [String] {
        var listing: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            var info = stat()
            let path = directory + "/" + name
            guard lstat(path, &info) == 0 else { continue }
            if FileInfo(info).isDirectory {
                listing.append(prefix + name + "/")
                listing += walk(path, prefix: prefix + name + "/")
            } else {
                listing.append(prefix + name)
            }
        }
        return listing.sorted()
    }

    /// The text of the file at `relative` under `dest/`, or `nil`.
    func text(_ relative: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: destination + "/" + relative))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `lstat(2)` of `relative` under `dest/`, or `nil` when it does not exist.
    func status(_ relative: String) -> FileInfo? {
        var info = stat()
        guard lstat(destination + "/" + relative, &info) == 0 else { return nil }
        return FileInfo(info)
    }

    /// The target of the symbolic link at `relative` under `dest/`.
    func linkTarget(_ relative: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: destination + "/" + relative)
    }
}

import ByteStreams
import Foundation
import StreamCache
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// The cache directory must be one only the effective user can change, and entries another user
// owns are never data. Giving a file to another user needs root: those tests are skipped,
// with the reason shown, when not run as root (CI runs as root).

/// The uid of `nobody` on Debian and most Linux systems: the attacker of these tests.
private let nobody: uid_t = 65534

private let needsRoot = Testing.ConditionTrait.enabled(if: geteuid() == 0, "needs root to give files to another user (nobody, uid 65534)")

/// Every operation of `cache`, each expected to throw `expected`.
private func expectRefusedEverywhere(_ cache: DiskCache, _ expected: CacheDirectoryError,
                                     sourceLocation: SourceLocation = #_sourceLocation) {
    let operations: [(String, () throws -> Void)] = [
        ("store", { try cache.store(Array("value".utf8), forKey: "k") }),
        ("data", { _ = try cache.data(forKey: "k") }),
        ("inputStream", { _ = try cache.inputStream(forKey: "k", verifyingFirst: true) }),
        ("entries", { _ = try cache.entries() }),
        ("prune", { _ = try cache.prune() }),
        ("removeEntry", { _ = try cache.removeEntry(forKey: "k") }),
        ("removeAll", { _ = try cache.removeAll() }),
    ]
    for (name, operation) in operations {
        do {
            try operation()
            Issue.record("\(name): not refused", sourceLocation: sourceLocation)
        } catch let error as CacheDirectoryError {
            #expect(error == expected, "\(name)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(name): \(error)", sourceLocation: sourceLocation)
        }
    }
}

@Suite("Cache directory: trusted or refused", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct CacheDirectoryTrustTests {
    @Test("a directory owned by another user is refused by every operation, with a message that says why",
          needsRoot)
    func foreignDirectory() throws {
        try withOwnerOnlyTemporaryDirectory { scratch in
            let directory = scratch + "/cache"
            let cache = try DiskCache(directory: directory)
            try cache.store(Array("root's value".utf8), forKey: "k")
            try #require(chown(directory, nobody, gid_t(nobody)) == 0)
            let expected = CacheDirectoryError(path: directory, reason: .owner(nobody, effectiveUser: 0))
            expectRefusedEverywhere(cache, expected)
            #expect(expected.description == directory + ": untrusted cache directory: owned by uid 65534 "
                + "(it must be owned by uid 0, the effective user, and writable by no one else)")
            // Nothing was changed in it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
        }
    }

    @Test("a directory group or others may write is refused by every operation; 0700, 0750 and 0755 are used",
          arguments: [0o770, 0o777, 0o707, 0o720, 0o702, 0o1777] as [mode_t])
    func writableByOthers(mode: mode_t) throws {
        try withOwnerOnlyTemporaryDirectory { scratch in
            let directory = scratch + "/cache"
            let cache = try DiskCache(directory: directory)
            try cache.store(Array("value".utf8), forKey: "k")
            try #require(chmod(directory, mode) == 0)
            let expected = CacheDirectoryError(path: directory, reason: .writableByOthers(mode: UInt32(mode)))
            expectRefusedEverywhere(cache, expected)
            if mode == 0o777 {
                #expect(expected.message == "untrusted cache directory: writable by group or others (mode 0777; "
                    + "it must be writable by its owner only)")
            }
            for trusted: mode_t in [0o755, 0o750, 0o700] {
                try #require(chmod(directory, trusted) == 0)
                #expect(try cache.data(forKey: "k").value == Data("value".utf8), "mode \(String(trusted, radix: 8))")
            }
        }
    }

    @Test("a symbolic link as the cache directory is refused, also written with a slash at its end; nothing is made")
    func symbolicLink() throws {
        try withOwnerOnlyTemporaryDirectory { scratch in
            let real = scratch + "/real"
            try #require(mkdir(real, 0o700) == 0)
            let link = scratch + "/link"
            try #require(symlink(real, link) == 0)
            for path in [link, link + "/", link + "//"] {
                let cache = try DiskCache(directory: path)
                expectRefusedEverywhere(cache, CacheDirectoryError(path: path, reason: .symbolicLink))
            }
            // A link to a directory that is not there yet: not made through the link either.
            let dangling = scratch + "/dangling"
            try #require(symlink(scratch + "/missing", dangling) == 0)
            expectRefusedEverywhere(try DiskCache(directory: dangling), CacheDirectoryError(path: dangling, reason: .symbolicLink))
            #expect(try FileManager.default.contentsOfDirectory(atPath: real).isEmpty)
            #expect(!fileExists(scratch + "/missing"))
        }
    }

    @Test("a file as the cache directory is not a directory; a file above it is the system's error")
    func notDirectory() throws {
        try withOwnerOnlyTemporaryDirectory { scratch in
            let file = scratch + "/file"
            try writeFileBytes([1], to: file)
            expectRefusedEverywhere(try DiskCache(directory: file), CacheDirectoryError(path: file, reason: .notDirectory))
            #expect(throws: ByteStreamError.self) { try DiskCache(directory: file + "/sub").store([1], forKey: "k") }
            #expect(throws: ByteStreamError.self) { try DiskCache(directory: file + "/sub").entries() }
        }
    }

    @Test("a directory made by a store is 0700 and its parents are made too; an existing 0755 one keeps its mode")
    func madeDirectory() throws {
        try withOwnerOnlyTemporaryDirectory { scratch in
            let directory = scratch + "/a/b/cache"
            try DiskCache(directory: directory).store([1, 2, 3], forKey: "k")
            #expect(try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int == 0o700)
            let existing = scratch + "/existing"
            try #require(mkdir(existing, 0o755) == 0 && chmod(existing, 0o755) == 0)
            try DiskCache(directory: existing).store([1, 2, 3], forKey: "k")
            #expect(try FileManager.default.attributesOfItem(atPath: existing)[.posixPermissions] as? Int == 0o755)
        }
    }
}

@Suite("Cache entries owned by another user", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct ForeignEntryTests {
    @Test("an unencrypted entry another user wrote for our key is a miss, never its bytes, and is removed", needsRoot)
    func foreignUnencryptedEntry() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            try cache.store(Array("root's value".utf8), forKey: "k")
            // The attacker's entry, valid in every byte (an unencrypted name is a plain hash of
            // the key), in place of root's, and owned by the attacker who wrote it.
            let attacker = try DiskCache(directory: directory)
            try attacker.store(Array("attacker's bytes".utf8), forKey: "k")
            let path = entryPath(cache, "k")
            try #require(chown(path, nobody, gid_t(nobody)) == 0)
            let listed = try cache.entries()
            #expect(listed.count == 1 && listed.first?.plainSize == nil && listed.first?.isEncrypted == nil)
            #expect(try cache.data(forKey: "k").miss == .damaged(.foreignOwner(nobody)))
            #expect(!fileExists(path))
            // Through a stream, verified or not, and through both tiers: never data.
            for verifyingFirst in [false, true] {
                try attacker.store(Array("attacker's bytes".utf8), forKey: "k")
                try #require(chown(path, nobody, gid_t(nobody)) == 0)
                #expect(try cache.inputStream(forKey: "k", verifyingFirst: verifyingFirst).miss == .damaged(.foreignOwner(nobody)))
            }
            try attacker.store(Array("attacker's bytes".utf8), forKey: "k")
            try #require(chown(path, nobody, gid_t(nobody)) == 0)
            #expect(try TwoTierCache(disk: cache).data(forKey: "k").miss == .damaged(.foreignOwner(nobody)))
            #expect(CacheMiss.damaged(.foreignOwner(nobody)).description
                == "damaged entry removed: entry file owned by uid 65534, not by this user")
        }
    }

    @Test("prune counts and evicts entries another user owns; removeAll removes them", needsRoot)
    func foreignEntriesPrunedAndRemoved() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, maximumSize: 0)
            let unlimited = try DiskCache(directory: directory)
            try unlimited.store(Array("one".utf8), forKey: "one")
            try #require(chown(entryPath(cache, "one"), nobody, gid_t(nobody)) == 0)
            #expect(try cache.prune().evictedCount == 1)
            try unlimited.store(Array("two".utf8), forKey: "two")
            try #require(chown(entryPath(cache, "two"), nobody, gid_t(nobody)) == 0)
            #expect(try unlimited.removeAll() == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }
}

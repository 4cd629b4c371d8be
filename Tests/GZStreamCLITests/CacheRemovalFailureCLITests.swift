import Foundation
import StreamCache
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `gzstream cache prune` and `put --max-size` when the files the limits say to remove cannot
// be removed: one line that names the file, why, and the limit left unmet; exit 1.

@Suite("gzstream cache: files the limits cannot remove", .onDedicatedThreads)
struct CacheRemovalFailureCLITests {
    /// Puts `keys` (10 000 random bytes each), the first least recently used.
    /// - Returns: Each entry file's size.
    private func putAged(_ keys: [String], in cache: CacheUnderTest) async throws -> [String: Int64] {
        var sizes: [String: Int64] = [:]
        for (index, key) in keys.enumerated() {
            try await cache.put(key, randomBytes(count: 10_000, seed: UInt64(index)))
            setModificationTime(try cache.entryPath(key), seconds: 1_700_000_001 + index)
            sizes[key] = try #require(fileStatus(try cache.entryPath(key))).size
        }
        return sizes
    }

    @Test("prune in a read-only cache directory: one line with the file, why and the limit unmet; exit 1; nothing removed",
          .enabled(if: geteuid() != 0 || Tool.setpriv.path != nil,
                   "as root, needs setpriv (Debian package: util-linux) to drop CAP_DAC_OVERRIDE"))
    func pruneReadOnlyDirectory() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let sizes = try await putAged(["old", "new"], in: cache)
            let before = cache.files()
            #expect(chmod(cache.directory, 0o500) == 0)
            defer { _ = chmod(cache.directory, 0o700) }
            let arguments = ["cache", "--dir", cache.directory, "prune", "--max-size", "0"]
            // Root may write any directory: without CAP_DAC_OVERRIDE it may not write this one.
            let result = if geteuid() == 0 {
                try await runAsync(try #require(Tool.setpriv.path),
                                   ["--bounding-set=-dac_override", "--inh-caps=-all", Locations.binary] + arguments, in: scratch)
            } else {
                try await gzstreamAsync(arguments, in: scratch)
            }
            #expect(result.status == 1 && result.out == "", "\(result)")
            #expect(result.err == "gzstream: cache: cannot remove 2 files (\(try cache.entryPath("old")): Permission denied; "
                    + "and 1 more); \(sizes["old"]! + sizes["new"]!) bytes left, over --max-size 0\n")
            #expect(cache.files() == before)
        }
    }

    @Test("put --max-size: an old entry that cannot be removed is said, the next one still goes, the new one stays; exit 1",
          .needsImmutableFiles)
    func putWithUnremovableEntry() async throws {
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let sizes = try await putAged(["old", "middle"], in: cache)
            let stuck = try cache.entryPath("old")
            #expect(setImmutable(stuck, true))
            defer { _ = setImmutable(stuck, false) }
            // Room for the new entry alone: "old" and "middle" are to go, "old" cannot.
            let limit = sizes["middle"]! + 1000
            let input = try scratch.write("input", randomBytes(count: 10_000, seed: 7))
            let put = try await cache.run(["put", "new", input, "--max-size", String(limit)])
            let newSize = try #require(fileStatus(try cache.entryPath("new"))).size
            #expect(put.status == 1 && put.out == "", "\(put)")
            #expect(put.err == "gzstream: cache: cannot remove 1 file (\(stuck): Operation not permitted); "
                    + "\(sizes["old"]! + newSize) bytes left, over --max-size \(limit)\n")
            #expect(try cache.files() == ["old", "new"].map { try cache.name($0) }.sorted())
            // Once it can be removed, a prune meets the limit and says nothing.
            _ = setImmutable(stuck, false)
            let pruned = try await cache.run(["prune", "--max-size", String(limit)])
            #expect(pruned.status == 0 && pruned.out == "" && pruned.err == "", "\(pruned)")
            #expect(cache.files() == [try cache.name("new")])
        }
    }
}

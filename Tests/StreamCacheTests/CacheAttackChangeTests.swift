import ByteStreams
import Dispatch
import Foundation
import GzipStreams
import StreamCache
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// Hostile situations for the cache: files changed while read, limits, odd keys. The helpers
// are in CacheAttackTests.swift.

// MARK: Files changed while read

@Suite("Cache attack: files changed while read", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct CacheAttackChangingFileTests {
    @Test("an entry replaced by a store while read: the reader gets the old value whole; the new entry stays", arguments: [false, true])
    func replacedWhileRead(encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: encrypted ? testKey() : nil)
            let old = sampleBytes(count: 300_000, seed: 1), new = sampleBytes(count: 200_000, seed: 2)
            try cache.store(old, forKey: "k")
            guard case .hit(let stream, _) = try cache.inputStream(forKey: "k") else { Issue.record("miss"); return }
            defer { stream.close() }
            let first = try stream.readChunk(maxLength: 1000)
            try cache.store(new, forKey: "k")
            #expect(first + (try stream.readToEnd()) == old)
            #expect(try cache.data(forKey: "k").value == Data(new))
        }
    }

    @Test("a damaged entry replaced by a store while read: the reader fails, the new entry is not removed", arguments: [false, true])
    func damagedReplacedWhileRead(encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: encrypted ? testKey() : nil)
            let old = sampleBytes(count: 300_000, seed: 1), new = sampleBytes(count: 200_000, seed: 2)
            try cache.store(old, forKey: "k")
            let path = entryPath(cache, "k")
            try writeFileBytes(Array(try fileBytes(path).dropLast(3)), to: path)
            guard case .hit(let stream, _) = try cache.inputStream(forKey: "k") else { Issue.record("miss"); return }
            defer { stream.close() }
            try cache.store(new, forKey: "k")
            #expect(throws: CacheMiss.self) { _ = try stream.readToEnd() }
            #expect(try cache.data(forKey: "k").value == Data(new))
        }
    }

    @Test("a file that keeps growing while read does not keep the reader", arguments: [false, true])
    func growingFile(encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: encrypted ? testKey() : nil)
            let plain = sampleBytes(count: 100_000, seed: 3)
            try cache.store(plain, forKey: "k")
            let path = entryPath(cache, "k")
            let originalSize = try fileBytes(path).count
            guard case .hit(let stream, _) = try cache.inputStream(forKey: "k") else { Issue.record("miss"); return }
            defer { stream.close() }
            // The first growth comes before the reader goes on.
            do {
                let fd = open(path, O_WRONLY)
                try #require(fd >= 0)
                ftruncate(fd, off_t(originalSize + (64 << 20)))
                close(fd)
            }
            let done = QueueGuarded(false, label: "test.done")
            let writerGaveUp = QueueGuarded(false, label: "test.gave-up")
            let writer = Thread {
                let fd = open(path, O_WRONLY)
                guard fd >= 0 else { return }
                defer { close(fd) }
                var size = off_t(originalSize + (64 << 20))
                // Grows the file (sparse zeros) by 64 MiB a step, faster than anyone reads.
                for _ in 0..<3000 {
                    if done.withLock({ $0 }) { return }
                    size += 64 << 20
                    ftruncate(fd, size)
                    usleep(1000)
                }
                writerGaveUp.withLock { $0 = true }
                ftruncate(fd, off_t(originalSize))
            }
            writer.start()
            let result = Result { try stream.readToEnd() }
            done.withLock { $0 = true }
            while !writer.isFinished { usleep(1000) }
            #expect(!writerGaveUp.withLock { $0 }, "the reader kept reading until the writer stopped")
            switch result {
            case .success(let bytes): #expect(bytes == plain)
            case .failure(let error): #expect(error is CacheMiss, "\(error)")
            }
        }
    }
}

// MARK: Limits

@Suite("Cache attack: limits", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct CacheAttackLimitTests {
    @Test("maximumSize 0 keeps nothing (a store applies the limit to all); an entry exactly at the limit is kept")
    func zeroAndExactLimits() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory)
            try unlimited.store(Array("other".utf8), forKey: "other")
            let zero = try DiskCache(directory: directory, maximumSize: 0)
            let info = try zero.store(sampleBytes(count: 1000), forKey: "k")
            #expect(info.storedSize > 0)
            #expect(try zero.data(forKey: "k").miss == .notFound)
            #expect(try directoryNames(directory).isEmpty)
            let size = try unlimited.store(sampleBytes(count: 1000), forKey: "exact").storedSize
            try unlimited.removeAll()
            let exact = try DiskCache(directory: directory, maximumSize: Int(size))
            try exact.store(sampleBytes(count: 1000), forKey: "exact")
            #expect(try exact.data(forKey: "exact").value == Data(sampleBytes(count: 1000)))
        }
    }

    @Test("the entry just stored stays even when the others' times are in the future; ties go by name")
    func justStoredStaysUnderClockSkew() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory)
            let future = Int(Date().timeIntervalSince1970) + 86_400
            var size: Int64 = 0
            for key in ["a", "b", "c"] {
                size = max(size, try unlimited.store(sampleBytes(count: 1000, seed: 1), forKey: key).storedSize)
                setFileTime(entryPath(unlimited, key), seconds: future)
            }
            let limited = try DiskCache(directory: directory, maximumSize: Int(2 * size))
            try limited.store(sampleBytes(count: 1000, seed: 1), forKey: "new")
            #expect(fileExists(entryPath(limited, "new")))
            // Equal times: the names decide, smallest first.
            let names = ["a", "b", "c"].map(limited.entryFileName(forKey:)).sorted()
            #expect(try limited.entries().map(\.name).sorted() == [names[2], limited.entryFileName(forKey: "new")].sorted())
        }
    }

    @Test("prune: expired entries go first, then the least recently used; temporary files count for neither")
    func pruneOrder() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory)
            let now = Int(Date().timeIntervalSince1970)
            var size: Int64 = 0
            for (index, key) in ["expired", "old", "middle", "recent"].enumerated() {
                size = max(size, try unlimited.store(sampleBytes(count: 1000, seed: 2), forKey: key).storedSize)
                setFileTime(entryPath(unlimited, key), seconds: now - [100_000, 3000, 2000, 1000][index])
            }
            // A fresh temporary file larger than everything: neither counted nor removed.
            try writeFileBytes(sampleBytes(count: 100_000), to: directory + "/.tmp-00000000000000ff")
            let limited = try DiskCache(directory: directory, maximumSize: Int(2 * size), maximumAge: .seconds(86_400))
            let result = try limited.prune()
            #expect(result.expiredCount == 1 && result.evictedCount == 1 && result.abandonedTemporaryCount == 0)
            #expect(try limited.entries().map(\.name) == ["middle", "recent"].map(limited.entryFileName(forKey:)))
            #expect(fileExists(directory + "/.tmp-00000000000000ff"))
        }
    }
}

// MARK: Keys

@Suite("Cache attack: keys", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct CacheAttackKeyTests {
    static let oddKeys: [String] = [
        "", "\0", "a\0b", "a\0c", "../../../etc/passwd", "/", ".", "..", ".tmp-0123456789abcdef",
        String(repeating: "ab", count: 32), String(repeating: "AB", count: 32), "é", "e\u{301}", "\u{1F600}",
        "\u{FEFF}", String(repeating: "k", count: 1 << 20), String(repeating: "k", count: (1 << 20) + 1),
    ]

    @Test("odd keys (empty, NUL, paths, 64 hex digits, decomposed accents, 1 MiB) are distinct entries in the directory", arguments: [false, true])
    func oddKeys(encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: encrypted ? testKey() : nil)
            for (index, key) in Self.oddKeys.enumerated() { try cache.store(Array("value \(index)".utf8), forKey: key) }
            let names = Self.oddKeys.map(cache.entryFileName(forKey:))
            #expect(Set(names).count == Self.oddKeys.count)
            #expect(try directoryNames(directory) == names.sorted())
            for (index, key) in Self.oddKeys.enumerated() {
                #expect(try cache.data(forKey: key).value == Data("value \(index)".utf8), "key \(index)")
            }
        }
    }

    @Test("canonically equivalent keys (é, e + U+0301) keep their own values through both tiers")
    func canonicallyEquivalentKeys() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory, key: testKey()))
            let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
            try cache.store(Data("composed".utf8), forKey: composed)
            try cache.store(Data("decomposed".utf8), forKey: decomposed)
            #expect(try cache.data(forKey: composed).value == Data("composed".utf8))
            #expect(try cache.data(forKey: decomposed).value == Data("decomposed".utf8))
            cache.memory.removeAllObjects()
            #expect(try cache.data(forKey: composed).value == Data("composed".utf8))
            #expect(try cache.data(forKey: decomposed).value == Data("decomposed".utf8))
            // The disk tier alone tells them apart, and so does the memory tier alone.
            #expect(try cache.disk.data(forKey: composed).value == Data("composed".utf8))
            let memory = MemoryCache<Int>()
            memory.setObject(1, forKey: composed)
            memory.setObject(2, forKey: decomposed)
            #expect(memory.count == 2 && memory.object(forKey: composed) == 1 && memory.object(forKey: decomposed) == 2)
            memory.removeObject(forKey: decomposed)
            #expect(memory.keys == [composed] && memory.keys.first?.unicodeScalars.count == 4)
        }
    }

    @Test("names differ between keyed and unkeyed caches and between keys; no file holds the key")
    func namesAndKeys() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let plain = try DiskCache(directory: directory)
            let keyed = try DiskCache(directory: directory, key: testKey())
            let other = try DiskCache(directory: directory, key: otherKey())
            let again = try DiskCache(directory: directory, key: testKey())
            for key in ["", "k", String(repeating: "x", count: 100_000)] {
                let names = [plain, keyed, other].map { $0.entryFileName(forKey: key) }
                #expect(Set(names).count == 3)
                #expect(again.entryFileName(forKey: key) == keyed.entryFileName(forKey: key))
                for cache in [plain, keyed, other] { try cache.store(sampleBytes(count: 10_000), forKey: key) }
                #expect(try plain.data(forKey: key).value != nil && keyed.data(forKey: key).value != nil && other.data(forKey: key).value != nil)
            }
            let keyHex = testKeyBytes.map { String(format: "%02x", $0) }.joined()
            for name in try directoryNames(directory) {
                let bytes = try fileBytes(directory + "/" + name)
                #expect(!contains(bytes, testKeyBytes) && !contains(bytes, otherKeyBytes) && !contains(bytes, Array(keyHex.utf8)))
                #expect(!name.contains(keyHex))
            }
        }
    }
}

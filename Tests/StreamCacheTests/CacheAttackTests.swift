import ByteStreams
import Dispatch
import Foundation
import GzipStreams
import StreamCache
import Testing
#if canImport(Glibc)
import Glibc
#endif

// Hostile inputs and situations for the cache: odd directory contents, hand-made entries
// (gzip bombs, lying headers, huge chunks), files changed while read, odd keys, and threads.

// MARK: Helpers

/// The 32 bytes of an entry file name (64 hexadecimal digits).
private func hashBytes(ofFileName name: String) -> [UInt8] {
    let digits = Array(name.utf8)
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

/// The 16-byte entry header: `GZSC`, version 1, flags, two zero bytes, the plain size.
private func entryHeader(encrypted: Bool, plainSize: UInt64) -> [UInt8] {
    Array("GZSC".utf8) + [1, encrypted ? 1 : 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: plainSize >> UInt64(56 - 8 * $0)) }
}

/// A gzip member of `input`'s bytes bound (FEXTRA subfield `GC`) to `key`'s entry in `cache`,
/// encrypted with `encryptionKey` when given: the payload of an entry, made by hand.
private func boundPayload(_ cache: DiskCache, key: String, input: ByteInputStream, level: Int = 6,
                          encryptionKey: SecretStreamKey? = nil, chunkSize: Int = SecretStreamFraming.defaultChunkSize) throws -> [UInt8] {
    let hash = hashBytes(ofFileName: cache.entryFileName(forKey: key))
    let memory = MemoryOutputStream()
    let payload: ByteOutputStream = if let encryptionKey {
        try EncryptingOutputStream(wrapping: memory, key: encryptionKey, chunkSize: chunkSize, closesInnerStream: false)
    } else { memory }
    let gzip = try GzipOutputStream(wrapping: payload, level: level, header: GzipHeader(extraField: [0x47, 0x43, 32, 0] + hash),
                                    closesInnerStream: encryptionKey != nil)
    try gzip.openOrThrow()
    try input.copy(to: gzip, chunkSize: 64 << 10)
    try gzip.closeOrThrow()
    return Array(memory.data)
}

/// Reads a stream to its end in pieces, keeping only the count and whether the bytes were
/// all zero; rethrows its error.
private func drain(_ stream: ByteInputStream) throws -> Int64 {
    var total: Int64 = 0
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
        let count = chunk.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
        if count < 0 { throw stream.streamError ?? POSIXError(.EIO) }
        if count == 0 { return total }
        total += Int64(count)
    }
}

private func isEmpty(_ result: PruneResult) -> Bool {
    result.expiredCount == 0 && result.evictedCount == 0 && result.abandonedTemporaryCount == 0 && result.removedBytes == 0
}

private func directoryNames(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

// MARK: Directory contents

@Suite("Cache attack: odd directory contents", .timeLimit(.minutes(2)))
struct CacheAttackDirectoryTests {
    @Test("names with signs (+0+0…, .tmp-+0…) or other letters are neither entries nor temporary files: kept")
    func signedHexNames() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, maximumSize: 0)
            // UInt8("+f", radix: 16) is 15, and UInt8("-0", radix: 16) is 0.
            let names = [String(repeating: "+0", count: 32), String(repeating: "-0", count: 32),
                         String(repeating: "+f", count: 32), "+" + String(repeating: "a", count: 63),
                         ".tmp-" + String(repeating: "+0", count: 8), ".tmp-" + String(repeating: "z", count: 16)]
            for name in names {
                try writeFileBytes(Array("not an entry".utf8), to: directory + "/" + name)
                setFileTime(directory + "/" + name, seconds: 1_000_000)
            }
            #expect(try cache.entries().isEmpty)
            _ = try cache.prune()
            #expect(try directoryNames(directory) == names.sorted())
            #expect(try cache.removeAll() == 0)
            #expect(try directoryNames(directory) == names.sorted())
        }
    }

    @Test("a directory under an entry's or a temporary file's name: removeAll removes the rest and does not throw")
    func directoriesUnderEntryNames() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            try cache.store(Array("value".utf8), forKey: "k")
            let entryDirectory = directory + "/" + cache.entryFileName(forKey: "directory")
            let temporaryDirectory = directory + "/.tmp-0123456789abcdef"
            try FileManager.default.createDirectory(atPath: entryDirectory, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: false)
            setFileTime(temporaryDirectory, seconds: 1_000_000)
            #expect(isEmpty(try cache.prune()))
            #expect(try cache.removeAll() == 1)
            #expect(try directoryNames(directory) == [".tmp-0123456789abcdef", cache.entryFileName(forKey: "directory")])
        }
    }

    @Test("a socket under an entry's name is a damaged miss, not an error")
    func socketUnderEntryName() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let path = entryPath(cache, "socket")
            let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            #expect(socket >= 0)
            defer { close(socket) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let pathBytes = Array(path.utf8)
            try #require(pathBytes.count < MemoryLayout.size(ofValue: address.sun_path))
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            try #require(bound == 0)
            #expect(try cache.data(forKey: "socket").miss == .damaged(.notCacheEntry))
            #expect(try cache.entries().isEmpty)
        }
    }

}

// MARK: Hand-made entries

@Suite("Cache attack: hand-made entries", .timeLimit(.minutes(2)))
struct CacheAttackCraftedEntryTests {
    /// Every way to look `key` up: data, a stream read to its end, a verified stream, and the
    /// two-tier cache's data and stream (with a promotion limit of 1 MiB).
    func lookups(_ cache: DiskCache, _ key: String) throws -> [String: Result<Int64, Error>] {
        var results: [String: Result<Int64, Error>] = [:]
        let path = entryPath(cache, key)
        let saved = try fileBytes(path)
        func run(_ name: String, _ body: () throws -> Int64) {
            try? writeFileBytes(saved, to: path)
            results[name] = Result { try body() }
        }
        run("data") {
            switch try cache.data(forKey: key) {
            case .hit(let data, _): Int64(data.count)
            case .miss(let miss): throw miss
            }
        }
        for verifying in [false, true] {
            run("stream verifying \(verifying)") {
                switch try cache.inputStream(forKey: key, verifyingFirst: verifying) {
                case .hit(let stream, _): defer { stream.close() }; return try drain(stream)
                case .miss(let miss): throw miss
                }
            }
        }
        run("two-tier data") {
            switch try TwoTierCache(disk: cache).data(forKey: key) {
            case .hit(let data, _): Int64(data.count)
            case .miss(let miss): throw miss
            }
        }
        run("two-tier stream") {
            switch try TwoTierCache(disk: cache).inputStream(forKey: key) {
            case .hit(let stream, _): defer { stream.close() }; return try drain(stream)
            case .miss(let miss): throw miss
            }
        }
        return results
    }

    /// Expects every lookup to be a damaged miss and the file removed after each.
    func expectDamagedEverywhere(_ cache: DiskCache, _ key: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (name, result) in try lookups(cache, key) {
            switch result {
            case .success(let count): Issue.record("\(name): a hit of \(count) bytes", sourceLocation: sourceLocation)
            case .failure(let error):
                if case .damaged = error as? CacheMiss {} else { Issue.record("\(name): \(error)", sourceLocation: sourceLocation) }
            }
        }
        #expect(!fileExists(entryPath(cache, key)), sourceLocation: sourceLocation)
    }

    @Test("a plain size raised in the header is a damaged miss for a lookup with a limit too, not a lasting error",
          arguments: [false, true])
    func raisedSizeWithLimit(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: encrypted ? testKey() : nil)
            let twoTier = TwoTierCache(disk: cache)
            for lookup in ["disk", "two-tier"] {
                try cache.store(sampleBytes(count: 1000), forKey: "k")
                let path = entryPath(cache, "k")
                var bytes = try fileBytes(path)
                bytes[10] = 0x01  // 2^40 bytes and more
                try writeFileBytes(bytes, to: path)
                let result = lookup == "disk" ? try cache.data(forKey: "k", limit: 1 << 20) : try twoTier.data(forKey: "k", limit: 1 << 20)
                #expect(result.miss == .damaged(.sizeMismatch(stored: Int64(bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }), decoded: 1000)),
                        "\(lookup)")
                #expect(!fileExists(path), "\(lookup)")
            }
            // A real entry over the limit still throws, and stays.
            try cache.store(sampleBytes(count: 300_000), forKey: "large")
            #expect(throws: ByteStreamError.self) { _ = try cache.data(forKey: "large", limit: 100_000) }
            #expect(try cache.data(forKey: "large", limit: 300_000).value?.count == 300_000)
        }
    }

}

// MARK: Files changed while read

@Suite("Cache attack: files changed while read", .timeLimit(.minutes(2)))
struct CacheAttackChangingFileTests {
    @Test("a file that keeps growing while read does not keep the reader", arguments: [false, true])
    func growingFile(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
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

@Suite("Cache attack: limits", .timeLimit(.minutes(2)))
struct CacheAttackLimitTests {
}

// MARK: Keys

@Suite("Cache attack: keys", .timeLimit(.minutes(2)))
struct CacheAttackKeyTests {
    static let oddKeys: [String] = [
        "", "\0", "a\0b", "a\0c", "../../../etc/passwd", "/", ".", "..", ".tmp-0123456789abcdef",
        String(repeating: "ab", count: 32), String(repeating: "AB", count: 32), "é", "e\u{301}", "\u{1F600}",
        "\u{FEFF}", String(repeating: "k", count: 1 << 20), String(repeating: "k", count: (1 << 20) + 1),
    ]

    @Test("canonically equivalent keys (é, e + U+0301) keep their own values through both tiers")
    func canonicallyEquivalentKeys() throws {
        try withTemporaryDirectory { directory in
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

}

// MARK: Threads

/// An input that gives `bytes` but waits, before its first byte, until released.
private final class GatedInputStream: ByteInputStream, @unchecked Sendable {
    private let bytes: [UInt8]
    private var position = 0
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)

    init(bytes: [UInt8]) {
        self.bytes = bytes
        super.init()
    }

    override func openBacking() throws {}
    override func closeBacking() throws {}

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if position == 0 {
            started.signal()
            release.wait()
        }
        let count = min(maxLength, bytes.count - position)
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + position, count: count) }
        position += count
        return count
    }
}

@Suite("Cache attack: threads", .timeLimit(.minutes(2)))
struct CacheAttackThreadTests {
    @Test("a lookup during a store of a large value does not leave the old value in memory once the store is done")
    func lookupDuringLargeStore() throws {
        try withTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory), promotionLimit: 10_000)
            let old = Data(sampleBytes(count: 1_000, seed: 1)), new = sampleBytes(count: 100_000, seed: 2)
            try cache.store(old, forKey: "k")
            let input = GatedInputStream(bytes: new)
            let stored = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = try? cache.store(from: input, forKey: "k")
                stored.signal()
            }
            input.started.wait()
            // The store is under way: the disk still holds the old value, and so may a lookup.
            #expect(try cache.data(forKey: "k").value == old)
            input.release.signal()
            stored.wait()
            let after = try cache.data(forKey: "k")
            #expect(after.value == Data(new), "after the store: \(after.tier.map { "\($0)" } ?? "miss"), \(after.value?.count ?? -1) bytes")
        }
    }

    @Test("stores of one key from 4 threads at once leave memory agreeing with the disk")
    func overlappingStores() throws {
        try withTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory), promotionLimit: 1 << 20)
            var disagreements = 0
            for round in 0..<150 {
                DispatchQueue.concurrentPerform(iterations: 4) { thread in
                    _ = try? cache.store(Data(sampleBytes(count: 2_000 + 1_000 * thread, seed: UInt64(round * 4 + thread))), forKey: "k")
                }
                if let fromMemory = cache.memory.object(forKey: "k"), fromMemory != (try cache.disk.data(forKey: "k").value) {
                    disagreements += 1
                }
            }
            #expect(disagreements == 0)
        }
    }

    @Test("a lookup never removes a valid entry renamed over the link or damaged file it opened", arguments: ["link", "damaged"])
    func removalRace(kind: String) throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let plain = sampleBytes(count: 2_000, seed: 4)
            try cache.store(plain, forKey: "k")
            let path = entryPath(cache, "k")
            // Beside the entries (a directory the cache leaves alone): the valid entry, and a
            // damaged copy, each linked under the entry's name by rename(2), as another process's
            // store would put them there.
            let keep = directory + "/keep"
            try #require(mkdir(keep, 0o700) == 0)
            try #require(link(path, keep + "/valid") == 0)
            try writeFileBytes(Array(try fileBytes(path).dropLast()), to: keep + "/damaged")
            let stop = QueueGuarded(false, label: "test.stop")
            let wrong = SharedCount()
            let reader = DispatchGroup()
            DispatchQueue.global().async(group: reader) {
                while !stop.withLock({ $0 }) {
                    if let found = try? cache.data(forKey: "k").value, found != Data(plain) { wrong.add() }
                }
            }
            var lost = 0
            for _ in 0..<10_000 {
                // The thing a lookup removes…
                unlink(keep + "/bad")
                if kind == "link" {
                    symlink("/nonexistent", keep + "/bad")
                } else {
                    link(keep + "/damaged", keep + "/bad")
                }
                rename(keep + "/bad", path)
                usleep(20)
                // …then the valid entry over it.
                unlink(keep + "/good")
                link(keep + "/valid", keep + "/good")
                rename(keep + "/good", path)
                usleep(50)
                // Its names: keep/valid and the entry's (and a removal's temporary name).
                var info = stat()
                if stat(keep + "/valid", &info) == 0, info.st_nlink < 2 { lost += 1 }
            }
            stop.withLock { $0 = true }
            reader.wait()
            #expect(wrong.value == 0)
            #expect(lost == 0, "valid entries removed by lookups that had opened something else")
        }
    }

    @Test("a lookup during a removal does not bring the value back into memory")
    func lookupDuringRemoval() throws {
        try withTemporaryDirectory { directory in
            let cache = TwoTierCache(disk: try DiskCache(directory: directory), promotionLimit: 1 << 20)
            let value = Data(sampleBytes(count: 200_000, seed: 1))
            var resurrected = 0
            for _ in 0..<300 {
                try cache.store(value, forKey: "k")
                cache.memory.removeAllObjects()
                let group = DispatchGroup()
                DispatchQueue.global().async(group: group) { _ = try? cache.data(forKey: "k") }
                DispatchQueue.global().async(group: group) { _ = try? cache.removeValue(forKey: "k") }
                group.wait()
                if try cache.data(forKey: "k").value != nil { resurrected += 1 }
            }
            #expect(resurrected == 0)
        }
    }
}

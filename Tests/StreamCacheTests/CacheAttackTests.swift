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

/// The 16-byte entry header: `GZSC`, version 2, flags, two zero bytes, the plain size.
private func entryHeader(encrypted: Bool, plainSize: UInt64) -> [UInt8] {
    Array("GZSC".utf8) + [2, encrypted ? 1 : 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: plainSize >> UInt64(56 - 8 * $0)) }
}

/// An encrypted entry's header and its seal, made by hand as the format says: an encrypted
/// stream of no plaintext, chunk size 1, whose chunk 1 binds the header, the name hash and the
/// payload's first 33 bytes.
private func sealedHeader(_ cache: DiskCache, key: String, plainSize: UInt64, payload: [UInt8],
                          sealKey: SecretStreamKey) throws -> [UInt8] {
    let header = entryHeader(encrypted: true, plainSize: plainSize)
    let memory = MemoryOutputStream()
    let seal = try EncryptingOutputStream(wrapping: memory, key: sealKey, chunkSize: 1,
                                          additionalData: header + hashBytes(ofFileName: cache.entryFileName(forKey: key))
                                              + Array(payload.prefix(33)))
    try seal.openOrThrow()
    try seal.closeOrThrow()
    return header + Array(memory.data)
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

    @Test("uppercase, 63- and 65-digit names are not entries; a chmod 000 entry is still an entry")
    func otherNames() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey())
            try cache.store(Array("value".utf8), forKey: "k")
            let name = cache.entryFileName(forKey: "k")
            let odd = [name.uppercased(), String(name.dropLast()), name + "0", "." + name.dropFirst()]
            for oddName in odd { try FileManager.default.copyItem(atPath: directory + "/" + name, toPath: directory + "/" + oddName) }
            #expect(try cache.entries().map(\.name) == [name])
            let limited = try DiskCache(directory: directory, key: testKey(), maximumSize: 0)
            _ = try limited.prune()
            #expect(try directoryNames(directory) == odd.sorted())
            try cache.store(Array("value".utf8), forKey: "k")
            #expect(chmod(directory + "/" + name, 0) == 0)
            if geteuid() == 0 {
                // Root reads it anyway.
                #expect(try cache.data(forKey: "k").value == Data("value".utf8))
            } else {
                #expect(throws: ByteStreamError.self) { _ = try cache.data(forKey: "k") }
            }
            #expect(try cache.removeAll() == 1)
            #expect(try directoryNames(directory) == odd.sorted())
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

    @Test("an empty directory is an invalid argument, not the root directory")
    func emptyDirectory() throws {
        // "" + "/" + name would put the entries in "/", while listing "" fails.
        #expect(throws: ByteStreamError.self) { _ = try DiskCache(directory: "") }
        #expect(throws: ByteStreamError.self) { _ = try DiskCache(directory: "", key: testKey()) }
    }

    @Test("a link to a file outside the directory is never followed, listed, evicted, or its target removed")
    func linkOutside() throws {
        try withTemporaryDirectory { outside in
            try withTemporaryDirectory { directory in
                let cache = try DiskCache(directory: directory, maximumSize: 0)
                let unlimited = try DiskCache(directory: outside)
                try unlimited.store(Array("outside value".utf8), forKey: "k")
                let target = entryPath(unlimited, "k")
                // A valid entry of this key, outside: the link still is not followed.
                try FileManager.default.createSymbolicLink(atPath: entryPath(cache, "k"), withDestinationPath: target)
                try FileManager.default.createSymbolicLink(atPath: entryPath(cache, "other"), withDestinationPath: target)
                try FileManager.default.createSymbolicLink(atPath: directory + "/.tmp-0123456789abcdef", withDestinationPath: target)
                #expect(try cache.entries().isEmpty)
                #expect(isEmpty(try cache.prune()))
                #expect(try cache.data(forKey: "k").miss == .damaged(.notCacheEntry))
                #expect(try cache.inputStream(forKey: "other", verifyingFirst: true).miss == .damaged(.notCacheEntry))
                #expect(try cache.removeAll() == 0)
                #expect(try directoryNames(directory).isEmpty)
                #expect(try fileBytes(target).count > 16)
                #expect(try unlimited.data(forKey: "k").value == Data("outside value".utf8))
            }
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

    @Test("a gzip bomb (256 MiB of zeros) under a header saying 1000 bytes is a damaged miss in every lookup")
    func bombUnderSmallSize() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let bomb = try boundPayload(cache, key: "k", input: RepeatingInputStream(block: [UInt8](repeating: 0, count: 1 << 20), count: 256),
                                        level: 9)
            try writeFileBytes(entryHeader(encrypted: false, plainSize: 1000) + bomb, to: entryPath(cache, "k"))
            try expectDamagedEverywhere(cache, "k")
        }
    }

    @Test("a header saying Int64.max bytes over a small valid member is a damaged miss in every lookup")
    func hugePlainSize() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let member = try boundPayload(cache, key: "k", input: MemoryInputStream(bytes: sampleBytes(count: 5000)))
            try writeFileBytes(entryHeader(encrypted: false, plainSize: UInt64(Int64.max)) + member, to: entryPath(cache, "k"))
            try expectDamagedEverywhere(cache, "k")
            // More than Int64.max: an invalid header.
            try writeFileBytes(entryHeader(encrypted: false, plainSize: UInt64.max) + member, to: entryPath(cache, "k"))
            #expect(try cache.data(forKey: "k").miss == .damaged(.invalidHeader(offset: 8)))
        }
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
                // With a key the header's seal fails first; without, the size is found out by reading.
                let stored = Int64(bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                #expect(result.miss == .damaged(encrypted ? .headerNotAuthenticated : .sizeMismatch(stored: stored, decoded: 1000)),
                        "\(lookup)")
                #expect(!fileExists(path), "\(lookup)")
            }
            // A real entry over the limit still throws, and stays.
            try cache.store(sampleBytes(count: 300_000), forKey: "large")
            #expect(throws: ByteStreamError.self) { _ = try cache.data(forKey: "large", limit: 100_000) }
            #expect(try cache.data(forKey: "large", limit: 300_000).value?.count == 300_000)
        }
    }

    @Test("a valid member followed by a second member (a bomb, or empty), or by garbage, is a damaged miss")
    func secondMember() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let plain = sampleBytes(count: 5000)
            let first = try boundPayload(cache, key: "k", input: MemoryInputStream(bytes: plain))
            let bomb = try boundPayload(cache, key: "k", input: RepeatingInputStream(block: [UInt8](repeating: 0, count: 1 << 20), count: 64), level: 9)
            let empty = try boundPayload(cache, key: "k", input: MemoryInputStream(bytes: []))
            for tail in [bomb, empty, empty + empty, [0x1f], Array("garbage".utf8)] {
                try writeFileBytes(entryHeader(encrypted: false, plainSize: 5000) + first + tail, to: entryPath(cache, "k"))
                try expectDamagedEverywhere(cache, "k")
            }
        }
    }

    @Test("a valid entry written with the largest chunk size (16 MiB) reads back; a forged 16 MiB prefix is a damaged miss")
    func largestChunkSize() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey())
            let plain = sampleBytes(count: 3 << 20, seed: 5)
            let payload = try boundPayload(cache, key: "k", input: MemoryInputStream(bytes: plain), encryptionKey: testKey(),
                                           chunkSize: 16 << 20)
            try writeFileBytes(sealedHeader(cache, key: "k", plainSize: UInt64(plain.count), payload: payload, sealKey: testKey())
                               + payload, to: entryPath(cache, "k"))
            #expect(try cache.data(forKey: "k").value == Data(plain))
            #expect(try lookupBytes(cache, "k", verifyingFirst: true) == plain)
            // Without the key: the same framing with another key's chunks.
            let forged = try boundPayload(cache, key: "k", input: MemoryInputStream(bytes: plain), encryptionKey: otherKey(),
                                          chunkSize: 16 << 20)
            // Sealed with the right key, so that the payload's own check is the one that fails.
            try writeFileBytes(sealedHeader(cache, key: "k", plainSize: UInt64(plain.count), payload: forged, sealKey: testKey())
                               + forged, to: entryPath(cache, "k"))
            try expectDamagedEverywhere(cache, "k")
            // A prefix claiming 16 MiB chunks, then a chunk length past it.
            var cut = Array(forged.prefix(33)) + [0x01, 0x00, 0x00, 0x12]
            cut += [UInt8](repeating: 0, count: 100)
            try writeFileBytes(sealedHeader(cache, key: "k", plainSize: UInt64(plain.count), payload: cut, sealKey: testKey())
                               + cut, to: entryPath(cache, "k"))
            try expectDamagedEverywhere(cache, "k")
        }
    }

    @Test("zero bytes appended to an unencrypted entry (a crash's zero-filled tail) are skipped: the value read back is exact")
    func zeroPadding() throws {
        try withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let plain = sampleBytes(count: 5000)
            try cache.store(plain, forKey: "k")
            let path = entryPath(cache, "k")
            try writeFileBytes(try fileBytes(path) + [UInt8](repeating: 0, count: 4096), to: path)
            // gzip readers skip zero padding after the last member, and so does the cache: a hit,
            // and its bytes are exactly those stored.
            for verifying in [false, true] {
                #expect(try lookupBytes(cache, "k", verifyingFirst: verifying) == plain)
            }
            #expect(try cache.data(forKey: "k").value == Data(plain))
        }
    }
}

// MARK: Files changed while read

@Suite("Cache attack: files changed while read", .timeLimit(.minutes(2)))
struct CacheAttackChangingFileTests {
    @Test("an entry replaced by a store while read: the reader gets the old value whole; the new entry stays", arguments: [false, true])
    func replacedWhileRead(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
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
        try withTemporaryDirectory { directory in
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
    @Test("maximumSize 0 keeps nothing (a store applies the limit to all); an entry exactly at the limit is kept")
    func zeroAndExactLimits() throws {
        try withTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory)
            try unlimited.store(Array("other".utf8), forKey: "other")
            let zero = try DiskCache(directory: directory, maximumSize: 0)
            let info = try zero.store(sampleBytes(count: 1000), forKey: "k")
            #expect(info.storedSize > 0)
            #expect(try zero.data(forKey: "k").miss == .notFound)
            #expect(try directoryNames(directory).isEmpty)
            let size = try unlimited.store(sampleBytes(count: 1000), forKey: "exact").storedSize
            try unlimited.removeAll()
            let exact = try DiskCache(directory: directory, maximumSize: size)
            try exact.store(sampleBytes(count: 1000), forKey: "exact")
            #expect(try exact.data(forKey: "exact").value == Data(sampleBytes(count: 1000)))
        }
    }

    @Test("the entry just stored stays even when the others' times are in the future; ties go by name")
    func justStoredStaysUnderClockSkew() throws {
        try withTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory)
            let future = Int(Date().timeIntervalSince1970) + 86_400
            var size: Int64 = 0
            for key in ["a", "b", "c"] {
                size = max(size, try unlimited.store(sampleBytes(count: 1000, seed: 1), forKey: key).storedSize)
                setFileTime(entryPath(unlimited, key), seconds: future)
            }
            let limited = try DiskCache(directory: directory, maximumSize: 2 * size)
            try limited.store(sampleBytes(count: 1000, seed: 1), forKey: "new")
            #expect(fileExists(entryPath(limited, "new")))
            // Equal times: the names decide, smallest first.
            let names = ["a", "b", "c"].map(limited.entryFileName(forKey:)).sorted()
            #expect(try limited.entries().map(\.name).sorted() == [names[2], limited.entryFileName(forKey: "new")].sorted())
        }
    }

    @Test("prune: expired entries go first, then the least recently used; temporary files count for neither")
    func pruneOrder() throws {
        try withTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory)
            let now = Int(Date().timeIntervalSince1970)
            var size: Int64 = 0
            for (index, key) in ["expired", "old", "middle", "recent"].enumerated() {
                size = max(size, try unlimited.store(sampleBytes(count: 1000, seed: 2), forKey: key).storedSize)
                setFileTime(entryPath(unlimited, key), seconds: now - [100_000, 3000, 2000, 1000][index])
            }
            // A fresh temporary file larger than everything: neither counted nor removed.
            try writeFileBytes(sampleBytes(count: 100_000), to: directory + "/.tmp-00000000000000ff")
            let limited = try DiskCache(directory: directory, maximumSize: 2 * size, maximumAge: .seconds(86_400))
            let result = try limited.prune()
            #expect(result.expiredCount == 1 && result.evictedCount == 1 && result.abandonedTemporaryCount == 0)
            #expect(try limited.entries().map(\.name) == ["middle", "recent"].map(limited.entryFileName(forKey:)))
            #expect(fileExists(directory + "/.tmp-00000000000000ff"))
        }
    }
}

// MARK: Keys

@Suite("Cache attack: keys", .timeLimit(.minutes(2)))
struct CacheAttackKeyTests {
    static let oddKeys: [String] = [
        "", "\0", "a\0b", "a\0c", "../../../etc/passwd", "/", ".", "..", ".tmp-0123456789abcdef",
        String(repeating: "ab", count: 32), String(repeating: "AB", count: 32), "é", "e\u{301}", "\u{1F600}",
        "\u{FEFF}", String(repeating: "k", count: 1 << 20), String(repeating: "k", count: (1 << 20) + 1),
    ]

    @Test("odd keys (empty, NUL, paths, 64 hex digits, decomposed accents, 1 MiB) are distinct entries in the directory", arguments: [false, true])
    func oddKeys(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
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

    @Test("names differ between keyed and unkeyed caches and between keys; no file holds the key")
    func namesAndKeys() throws {
        try withTemporaryDirectory { directory in
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

    @Test("8 threads store, look up, verify, remove and prune 6 keys through two DiskCaches (one limited) and two TwoTierCaches")
    func manyThreadsOneDirectory() throws {
        try withTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory, key: testKey())
            let limited = try DiskCache(directory: directory, key: testKey(), maximumSize: 150_000)
            let tiers = [TwoTierCache(memory: MemoryCache(countLimit: 3), disk: unlimited, promotionLimit: 8_000),
                         TwoTierCache(memory: MemoryCache(totalCostLimit: 20_000), disk: limited, promotionLimit: 8_000)]
            // Each key has three values: 3 kB (kept in memory), 30 kB and 90 kB (disk only).
            @Sendable func value(_ key: Int, _ version: Int) -> [UInt8] {
                sampleBytes(count: [3_000, 30_000, 90_000][version], seed: UInt64(key * 10 + version))
            }
            let problems = QueueGuarded([String](), label: "test.problems")
            @Sendable func check(_ found: [UInt8]?, _ miss: CacheMiss?, key: Int, _ what: String) {
                if let found {
                    if !(0..<3).contains(where: { value(key, $0) == found }) { problems.withLock { $0.append("\(what): wrong \(found.count) bytes") } }
                } else if miss != .notFound {
                    problems.withLock { $0.append("\(what): \(miss.map { "\($0)" } ?? "nil")") }
                }
            }
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                var generator = SplitMix64(seed: UInt64(100 + thread))
                for _ in 0..<60 {
                    let key = Int(generator.next() % 6), version = Int(generator.next() % 3)
                    let disk = generator.next() % 2 == 0 ? unlimited : limited
                    let tier = tiers[Int(generator.next() % 2)]
                    do {
                        switch generator.next() % 9 {
                        case 0: try disk.store(value(key, version), forKey: "key \(key)")
                        case 1: try tier.store(Data(value(key, version)), forKey: "key \(key)")
                        case 2: try tier.store(from: MemoryInputStream(bytes: value(key, version)), forKey: "key \(key)")
                        case 3:
                            let lookup = try disk.data(forKey: "key \(key)")
                            check(lookup.value.map(Array.init), lookup.miss, key: key, "disk data")
                        case 4:
                            let lookup = try tier.data(forKey: "key \(key)")
                            check(lookup.value.map(Array.init), lookup.miss, key: key, "tier data")
                        case 5:
                            let lookup = try disk.inputStream(forKey: "key \(key)", verifyingFirst: generator.next() % 2 == 0)
                            if case .hit(let stream, _) = lookup {
                                defer { stream.close() }
                                check(try stream.readToEnd(), nil, key: key, "disk stream")
                            } else {
                                check(nil, lookup.miss, key: key, "disk stream")
                            }
                        case 6:
                            let lookup = try tier.inputStream(forKey: "key \(key)")
                            if case .hit(let stream, _) = lookup {
                                defer { stream.close() }
                                check(try stream.readToEnd(), nil, key: key, "tier stream")
                            } else {
                                check(nil, lookup.miss, key: key, "tier stream")
                            }
                        case 7: try tier.removeValue(forKey: "key \(key)")
                        default:
                            _ = try limited.prune()
                            _ = try unlimited.entries()
                        }
                    } catch {
                        problems.withLock { $0.append("thread \(thread): \(error)") }
                    }
                }
            }
            #expect(problems.withLock { $0 } == [])
            #expect(try directoryNames(directory).allSatisfy { !$0.hasPrefix(".tmp-") })
            // What is left is whole. (Memory need not agree with the disk here: each TwoTierCache
            // has its own memory tier, which the other's stores and the limited disk's
            // evictions do not change, as with two processes.)
            for key in 0..<6 {
                let onDisk = try unlimited.data(forKey: "key \(key)")
                check(onDisk.value.map(Array.init), onDisk.miss, key: key, "after")
            }
            #expect(problems.withLock { $0 } == [])
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

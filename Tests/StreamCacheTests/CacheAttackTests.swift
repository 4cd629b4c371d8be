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

// Hostile inputs and situations for the cache: odd directory contents, hand-made entries
// (gzip bombs, lying headers, huge chunks), files changed while read, odd keys, and threads.

// MARK: Helpers

/// The 32 bytes of an entry file name (64 hexadecimal digits).
func hashBytes(ofFileName name: String) -> [UInt8] {
    let digits = Array(name.utf8)
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

/// The 16-byte entry header: `GZSC`, version 2, flags, two zero bytes, the plain size.
func entryHeader(encrypted: Bool, plainSize: UInt64) -> [UInt8] {
    Array("GZSC".utf8) + [2, encrypted ? 1 : 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: plainSize >> UInt64(56 - 8 * $0)) }
}

/// An encrypted entry's header and its seal, made by hand as the format says: an encrypted
/// stream of no plaintext, chunk size 1, whose chunk 1 binds the header, the name hash and the
/// payload's first 33 bytes.
func sealedHeader(_ cache: DiskCache, key: String, plainSize: UInt64, payload: [UInt8],
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
func boundPayload(_ cache: DiskCache, key: String, input: ByteInputStream, level: Int = 6,
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
func drain(_ stream: ByteInputStream) throws -> Int64 {
    var total: Int64 = 0
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
        let count = chunk.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
        if count < 0 { throw stream.streamError ?? POSIXError(.EIO) }
        if count == 0 { return total }
        total += Int64(count)
    }
}

func isEmpty(_ result: PruneResult) -> Bool {
    result.expiredCount == 0 && result.evictedCount == 0 && result.abandonedTemporaryCount == 0 && result.removedBytes == 0
}

func directoryNames(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

// MARK: Directory contents

@Suite("Cache attack: odd directory contents", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct CacheAttackDirectoryTests {
    @Test("names with signs (+0+0…, .tmp-+0…) or other letters are neither entries nor temporary files: kept")
    func signedHexNames() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
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
        try withOwnerOnlyTemporaryDirectory { directory in
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
        try withOwnerOnlyTemporaryDirectory { directory in
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
        try withOwnerOnlyTemporaryDirectory { directory in
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
        try withOwnerOnlyTemporaryDirectory { outside in
            try withOwnerOnlyTemporaryDirectory { directory in
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

@Suite("Cache attack: hand-made entries", .onDedicatedThreads, .timeLimit(.minutes(2)))
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
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let bomb = try boundPayload(cache, key: "k", input: RepeatingInputStream(block: [UInt8](repeating: 0, count: 1 << 20), count: 256),
                                        level: 9)
            try writeFileBytes(entryHeader(encrypted: false, plainSize: 1000) + bomb, to: entryPath(cache, "k"))
            try expectDamagedEverywhere(cache, "k")
        }
    }

    @Test("a header saying Int64.max bytes over a small valid member is a damaged miss in every lookup")
    func hugePlainSize() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
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
        try withOwnerOnlyTemporaryDirectory { directory in
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
        try withOwnerOnlyTemporaryDirectory { directory in
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
        try withOwnerOnlyTemporaryDirectory { directory in
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
        try withOwnerOnlyTemporaryDirectory { directory in
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


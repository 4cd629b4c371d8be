import Foundation
import GzipStreams
import StreamCache
import Testing
import TestSupport

@Suite("Disk cache: round trips", .onDedicatedThreads, .timeLimit(.minutes(10)))
struct DiskCacheRoundTripTests {
    @Test("stored bytes come back, through a stream and as Data",
          arguments: [0, 1, 4095, 4096, 4097, 65536, 65537, (1 << 20) + 1], [false, true])
    func roundTrip(size: Int, encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: encrypted ? testKey() : nil)
            let plain = sampleBytes(count: size, seed: UInt64(size))
            let info = try cache.store(plain, forKey: "entry \(size)")
            #expect(info.plainSize == Int64(size))
            #expect(info.isEncrypted == encrypted)
            #expect(info.name == cache.entryFileName(forKey: "entry \(size)"))
            #expect(try lookupBytes(cache, "entry \(size)") == plain)
            #expect(try lookupBytes(cache, "entry \(size)", verifyingFirst: true) == plain)
            let lookup = try cache.data(forKey: "entry \(size)")
            #expect(lookup.value == Data(plain))
            #expect(lookup.tier == .disk)
            let listed = try cache.entries()
            #expect(listed.count == 1)
            #expect(listed.first?.storedSize == Int64(try fileBytes(entryPath(cache, "entry \(size)")).count))
            #expect(listed.first?.plainSize == Int64(size))
        }
    }

    @Test("a 2 GiB + 1 MiB entry streams in and out, checked byte for byte (peak RSS: make bench-cache)")
    func largeStreamedEntry() async throws {
        // Checked here: an issue recorded on another thread belongs to no test.
        let result = try await onOwnThread { try Self.largeRoundTrip() }
        #expect(result.stored == 2049 << 20)
        #expect(result.read == 2049 << 20)
        #expect(result.mismatchedPieces == 0)
    }

    /// Stores 2049 MiB, reads it back: the plain size stored, the bytes read (-1 for a miss)
    /// and the number of pieces that differ.
    static func largeRoundTrip() throws -> (stored: Int64, read: Int, mismatchedPieces: Int) {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey(), compressionLevel: 0)
            let block = sampleBytes(count: 1 << 20, seed: 7)
            // More than 2^31 bytes: ISIZE wraps (RFC 1952 §2.3.1), the header's plain size does
            // not. Level 0 (stored blocks) keeps this test to seconds; deflate at every level is
            // tested elsewhere, and make bench-cache round-trips 3 GiB at the default level.
            let source = RepeatingInputStream(block: block, count: 2049)
            let info = try cache.store(from: source, forKey: "big")
            guard case .hit(let stream, _) = try cache.inputStream(forKey: "big") else {
                return (info.plainSize ?? -1, -1, 0)
            }
            defer { stream.close() }
            var offset = 0
            var mismatches = 0
            while true {
                let chunk = try stream.readChunk(maxLength: 1 << 16)
                if chunk.isEmpty { break }
                // memcmp in pieces that do not cross the end of the block.
                var done = 0
                while done < chunk.count {
                    let blockOffset = (offset + done) % block.count
                    let length = min(chunk.count - done, block.count - blockOffset)
                    let differs = chunk.withUnsafeBytes { read in
                        block.withUnsafeBytes { memcmp(read.baseAddress! + done, $0.baseAddress! + blockOffset, length) != 0 }
                    }
                    if differs { mismatches += 1 }
                    done += length
                }
                offset += chunk.count
            }
            return (info.plainSize ?? -1, offset, mismatches)
        }
    }

    @Test("a store replaces the entry; remove and removeAll empty the directory")
    func replaceAndRemove() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey())
            try cache.store(Array("first".utf8), forKey: "k")
            try cache.store(Array("second".utf8), forKey: "k")
            #expect(try lookupBytes(cache, "k") == Array("second".utf8))
            #expect(try cache.removeEntry(forKey: "k"))
            #expect(try !cache.removeEntry(forKey: "k"))
            #expect(try cache.inputStream(forKey: "k").miss == .notFound)
            try cache.store(Array("a".utf8), forKey: "a")
            try cache.store(Array("b".utf8), forKey: "b")
            #expect(try cache.removeAll() == 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test("lookups, listing and pruning of a missing directory create nothing; the first store creates it, mode 0700")
    func directoryMadeByFirstStore() throws {
        try withOwnerOnlyTemporaryDirectory { scratch in
            let directory = scratch + "/a/b/cache"
            let cache = try DiskCache(directory: directory, key: testKey(), maximumSize: 1 << 20, maximumAge: .seconds(60))
            #expect(try cache.data(forKey: "k").miss == .notFound)
            #expect(try cache.entries().isEmpty)
            #expect(try cache.prune().removedBytes == 0)
            #expect(try cache.removeAll() == 0)
            #expect(!fileExists(scratch + "/a"))
            try cache.store(Array("value".utf8), forKey: "k")
            let mode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
            #expect(mode == 0o700)
            #expect(try cache.data(forKey: "k").value == Data("value".utf8))
        }
    }

    @Test("an entry holds neither the plain text, the key nor the encryption key")
    func entryHoldsNoSecrets() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey())
            let key = "https://example.com/secret-report.pdf"
            let plain = sampleBytes(count: 100_000, seed: 3)
            try cache.store(plain, forKey: key)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(names == [cache.entryFileName(forKey: key)])
            #expect(names.allSatisfy { !$0.contains("example") && $0.count == 64 })
            let stored = try fileBytes(entryPath(cache, key))
            for start in stride(from: 0, to: plain.count - 32, by: 9_973) {
                #expect(!contains(stored, Array(plain[start..<start + 32])))
            }
            #expect(!contains(stored, Array(key.utf8)))
            #expect(!contains(stored, testKeyBytes))
            // Without a key the names are plain hashes, different from the keyed ones.
            let plainCache = try DiskCache(directory: directory)
            #expect(plainCache.entryFileName(forKey: key) != cache.entryFileName(forKey: key))
        }
    }

    @Test("a failing input stores nothing and keeps the old entry")
    func failingInput() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey())
            try cache.store(Array("old".utf8), forKey: "k")
            let broken = try GzipInputStream(wrapping: MemoryInputStream(bytes: [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff]))
            #expect(throws: GzipError.self) { try cache.store(from: broken, forKey: "k") }
            #expect(try lookupBytes(cache, "k") == Array("old".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
        }
    }
}

@Suite("Disk cache: damage is a miss", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct DiskCacheDamageTests {
    static let plain = sampleBytes(count: 200_000, seed: 11)

    /// A cache holding `plain` under "k", and the path of its file.
    func storedEntry(_ directory: String, encrypted: Bool) throws -> (DiskCache, String) {
        let cache = try DiskCache(directory: directory, key: encrypted ? testKey() : nil)
        try cache.store(Self.plain, forKey: "k")
        return (cache, entryPath(cache, "k"))
    }

    @Test("a file cut anywhere is a miss, and removed", arguments: [false, true])
    func cut(encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let (cache, path) = try storedEntry(directory, encrypted: encrypted)
            let whole = try fileBytes(path)
            for length in [0, 2, 4, 10, 15, 16, 17, 30, 60, 100, 1000, whole.count / 2, whole.count - 8, whole.count - 1] {
                try writeFileBytes(Array(whole.prefix(length)), to: path)
                let lookup = try cache.data(forKey: "k")
                guard case .damaged = lookup.miss else {
                    Issue.record("cut at \(length): \(lookup.miss.map(String.init(describing:)) ?? "hit")")
                    continue
                }
                #expect(!fileExists(path), "cut at \(length)")
            }
        }
    }

    @Test("a streamed read that reaches a cut throws damaged and removes the entry", arguments: [false, true])
    func cutFoundWhileStreaming(encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let (cache, path) = try storedEntry(directory, encrypted: encrypted)
            let whole = try fileBytes(path)
            try writeFileBytes(Array(whole.prefix(whole.count - 5)), to: path)
            guard case .hit(let stream, _) = try cache.inputStream(forKey: "k") else {
                Issue.record("the first bytes are whole: expected a hit")
                return
            }
            defer { stream.close() }
            #expect(throws: CacheMiss.self) { _ = try stream.readToEnd() }
            #expect(!fileExists(path))
            // Verified first, the same cut is a miss.
            try cache.store(Self.plain, forKey: "k")
            try writeFileBytes(Array(try fileBytes(path).dropLast(5)), to: path)
            guard case .damaged = try cache.inputStream(forKey: "k", verifyingFirst: true).miss else {
                Issue.record("verified lookup of a cut entry was not a damaged miss")
                return
            }
            #expect(!fileExists(path))
        }
    }

    @Test("a flipped bit is a miss and removed, never wrong data", arguments: [false, true])
    func flippedBit(encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let (cache, path) = try storedEntry(directory, encrypted: encrypted)
            let whole = try fileBytes(path)
            let positions = Array(0..<60) + [whole.count / 3, whole.count / 2, whole.count - 10, whole.count - 8,
                                             whole.count - 5, whole.count - 1]
            var unnoticed: [Int] = []
            for position in positions {
                var damaged = whole
                damaged[position] ^= 0x10
                try writeFileBytes(damaged, to: path)
                let lookup = try cache.data(forKey: "k")
                if case .damaged = lookup.miss {
                    #expect(!fileExists(path), "flip at \(position)")
                } else {
                    // Only bytes that change nothing read back may go unnoticed.
                    #expect(lookup.value == Data(Self.plain), "flip at \(position)")
                    unnoticed.append(position)
                }
                try writeFileBytes(whole, to: path)
            }
            // Encrypted, every byte is authenticated. Unencrypted, gzip checks neither MTIME,
            // XFL and OS (member bytes 4–9, file bytes 20–25) nor padding bits (RFC 1951 §3.2.4).
            #expect(encrypted ? unnoticed.isEmpty : Set(unnoticed).isSubset(of: Set(20...25).union([whole.count - 9])),
                    "unnoticed: \(unnoticed)")
            #expect(try cache.data(forKey: "k").value == Data(Self.plain))
        }
    }

    @Test("two entries' files swapped: both are misses (bound to another key; encrypted, the header's seal), and removed",
          arguments: [false, true])
    func swapped(encrypted: Bool) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: encrypted ? testKey() : nil)
            try cache.store(Array("value of a".utf8), forKey: "a")
            try cache.store(Array("value of b".utf8), forKey: "b")
            let a = entryPath(cache, "a"), b = entryPath(cache, "b")
            try FileManager.default.moveItem(atPath: a, toPath: directory + "/swap")
            try FileManager.default.moveItem(atPath: b, toPath: a)
            try FileManager.default.moveItem(atPath: directory + "/swap", toPath: b)
            // The seal binds the name hash: an encrypted entry is found out before its payload.
            let damage: CacheMiss.Damage = encrypted ? .headerNotAuthenticated : .boundToAnotherKey
            #expect(try cache.data(forKey: "a").miss == .damaged(damage))
            #expect(try cache.data(forKey: "b").miss == .damaged(damage))
            #expect(!fileExists(a) && !fileExists(b))
        }
    }

    @Test("an entry written with another key is a miss (authentication fails), and removed")
    func wrongKey() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey())
            let other = try DiskCache(directory: directory, key: otherKey())
            try other.store(Self.plain, forKey: "k")
            // Another key names entries differently: a plain miss, and the entry is left alone.
            #expect(try cache.data(forKey: "k").miss == .notFound)
            #expect(fileExists(entryPath(other, "k")))
            // Under this key's name, the other key's entry fails authentication: its header's
            // seal, the first thing checked.
            try FileManager.default.moveItem(atPath: entryPath(other, "k"), toPath: entryPath(cache, "k"))
            #expect(try cache.entries().map(\.plainSize) == [nil])
            #expect(try cache.data(forKey: "k").miss == .damaged(.headerNotAuthenticated))
            #expect(!fileExists(entryPath(cache, "k")))
        }
    }

    @Test("an encrypted entry read without a key, and a plain one read with a key, are misses")
    func encryptionMismatch() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let keyed = try DiskCache(directory: directory, key: testKey())
            let plain = try DiskCache(directory: directory)
            try keyed.store(Self.plain, forKey: "k")
            try FileManager.default.moveItem(atPath: entryPath(keyed, "k"), toPath: entryPath(plain, "k"))
            #expect(try plain.data(forKey: "k").miss == .damaged(.encryptionMismatch(entryIsEncrypted: true)))
            try plain.store(Self.plain, forKey: "k")
            try FileManager.default.moveItem(atPath: entryPath(plain, "k"), toPath: entryPath(keyed, "k"))
            #expect(try keyed.data(forKey: "k").miss == .damaged(.encryptionMismatch(entryIsEncrypted: false)))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test("a link, a FIFO or a directory under an entry's name is a miss, never followed or blocked on")
    func notRegularFiles() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey())
            try cache.store(Self.plain, forKey: "target")
            let target = entryPath(cache, "target")
            try FileManager.default.createSymbolicLink(atPath: entryPath(cache, "link"), withDestinationPath: target)
            #expect(try cache.data(forKey: "link").miss == .damaged(.notCacheEntry))
            #expect(!fileExists(entryPath(cache, "link")))
            #expect(try cache.data(forKey: "target").value == Data(Self.plain))
            #expect(mkfifo(entryPath(cache, "fifo"), 0o600) == 0)
            #expect(try cache.data(forKey: "fifo").miss == .damaged(.notCacheEntry))
            try FileManager.default.createDirectory(atPath: entryPath(cache, "directory"), withIntermediateDirectories: false)
            #expect(try cache.data(forKey: "directory").miss == .damaged(.notCacheEntry))
            #expect(try cache.entries().map(\.name) == [cache.entryFileName(forKey: "target")])
        }
    }

    @Test("with a key, a plain size changed in the header is not listed, and is a miss before any decoding",
          arguments: [Int64(199_999), 200_001, 0, Int64.max])
    func sizeChanged(size: Int64) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let (cache, path) = try storedEntry(directory, encrypted: true)
            #expect(try cache.entries().map(\.plainSize) == [Int64(Self.plain.count)])
            var bytes = try fileBytes(path)
            for index in 0..<8 { bytes[8 + index] = UInt8(truncatingIfNeeded: UInt64(size) >> UInt64(56 - 8 * index)) }
            try writeFileBytes(bytes, to: path)
            let listed = try cache.entries()
            #expect(listed.map(\.plainSize) == [nil] && listed.map(\.isEncrypted) == [nil])
            #expect(listed.map(\.storedSize) == [Int64(bytes.count)])
            #expect(try cache.data(forKey: "k").miss == .damaged(.headerNotAuthenticated))
            #expect(!fileExists(path))
        }
    }

    @Test("without a key, a plain size changed in the header is a miss once the entry is read")
    func sizeChangedWithoutKey() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let (cache, path) = try storedEntry(directory, encrypted: false)
            var bytes = try fileBytes(path)
            bytes[15] ^= 1
            try writeFileBytes(bytes, to: path)
            // Not authenticated: listed as the file says (the documented limit without a key).
            #expect(try cache.entries().map(\.plainSize) == [Int64(Self.plain.count ^ 1)])
            #expect(try cache.data(forKey: "k").miss == .damaged(.sizeMismatch(stored: Int64(Self.plain.count ^ 1),
                                                                               decoded: Int64(Self.plain.count))))
        }
    }

    @Test("with a key, a changed flags byte is not listed and is a miss; version 1 entries are unsupported misses",
          arguments: [UInt8(0), 3, 0x81])
    func flagsChanged(flags: UInt8) throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let (cache, path) = try storedEntry(directory, encrypted: true)
            var bytes = try fileBytes(path)
            bytes[5] = flags
            try writeFileBytes(bytes, to: path)
            #expect(try cache.entries().map(\.plainSize) == [nil])
            let expected: CacheMiss.Damage = flags == 0 ? .encryptionMismatch(entryIsEncrypted: false) : .invalidHeader(offset: 5)
            #expect(try cache.data(forKey: "k").miss == .damaged(expected))
            #expect(!fileExists(path))
            // The format before the seal: version 1.
            try cache.store(Self.plain, forKey: "k")
            bytes = try fileBytes(path)
            bytes[4] = 1
            try writeFileBytes(bytes, to: path)
            #expect(try cache.entries().map(\.plainSize) == [nil])
            #expect(try cache.data(forKey: "k").miss == .damaged(.unsupportedVersion(1)))
        }
    }
}

@Suite("Disk cache: limits", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct DiskCacheLimitTests {
    @Test("over the size limit, least recently used entries go first; a hit counts as a use")
    func sizeEvictionOrder() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let unlimited = try DiskCache(directory: directory, key: testKey())
            for (index, key) in ["a", "b", "c"].enumerated() {
                try unlimited.store(sampleBytes(count: 10_000, seed: UInt64(index)), forKey: key)
                setFileTime(entryPath(unlimited, key), seconds: 1_000_000 + index * 100)
            }
            // A hit on "a" makes it the most recently used.
            #expect(try unlimited.data(forKey: "a").value != nil)
            let size = try unlimited.entries().map(\.storedSize).max()!
            let limited = try DiskCache(directory: directory, key: testKey(), maximumSize: Int(3 * size + size / 2))
            try limited.store(sampleBytes(count: 10_000, seed: 9), forKey: "d")
            #expect(!fileExists(entryPath(limited, "b")))
            #expect(fileExists(entryPath(limited, "c")) && fileExists(entryPath(limited, "a")) && fileExists(entryPath(limited, "d")))
            try limited.store(sampleBytes(count: 10_000, seed: 10), forKey: "e")
            #expect(!fileExists(entryPath(limited, "c")))
            #expect(try limited.entries().map(\.name).sorted() == ["a", "d", "e"].map { limited.entryFileName(forKey: $0) }.sorted())
        }
    }

    @Test("an entry larger than the size limit is not kept, and evicts nothing else")
    func entryLargerThanLimit() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, maximumSize: 2_000)
            try cache.store(Array("small".utf8), forKey: "small")
            let info = try cache.store(sampleBytes(count: 100_000, seed: 1), forKey: "large")
            #expect(info.storedSize > 2_000)
            #expect(!fileExists(entryPath(cache, "large")))
            #expect(fileExists(entryPath(cache, "small")))
        }
    }

    @Test("entries older than the age limit are misses, and prune removes them")
    func ageLimit() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, key: testKey(), maximumAge: .seconds(3600))
            for key in ["old", "older", "fresh"] { try cache.store(Array(key.utf8), forKey: key) }
            let now = Int(Date().timeIntervalSince1970)
            setFileTime(entryPath(cache, "old"), seconds: now - 7200)
            setFileTime(entryPath(cache, "older"), seconds: now - 86_400)
            guard case .expired(let age) = try cache.data(forKey: "old").miss else {
                Issue.record("expected expired")
                return
            }
            #expect((7199...7300).contains(age))
            #expect(!fileExists(entryPath(cache, "old")))
            let result = try cache.prune()
            #expect(result.expiredCount == 1)
            #expect(try cache.entries().map(\.name) == [cache.entryFileName(forKey: "fresh")])
            #expect(try cache.data(forKey: "fresh").value == Data("fresh".utf8))
        }
    }

    @Test("prune removes abandoned temporary files more than an hour old, and keeps other files")
    func abandonedTemporaryFiles() throws {
        try withOwnerOnlyTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            try writeFileBytes([1, 2, 3], to: directory + "/.tmp-0123456789abcdef")
            try writeFileBytes([1, 2, 3], to: directory + "/.tmp-fedcba9876543210")
            try writeFileBytes([1, 2, 3], to: directory + "/README")
            setFileTime(directory + "/.tmp-0123456789abcdef", seconds: Int(Date().timeIntervalSince1970) - 7200)
            #expect(try cache.prune().abandonedTemporaryCount == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [".tmp-fedcba9876543210", "README"])
            #expect(try cache.entries().isEmpty)
        }
    }

    @Test("the default directory follows XDG_CACHE_HOME when absolute, else HOME")
    func defaultDirectory() {
        #expect(DiskCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "/var/tmp/xdg", "HOME": "/home/someone"])
                == "/var/tmp/xdg/gzstream")
        #expect(DiskCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/home/someone"])
                == "/home/someone/.cache/gzstream")
        #expect(DiskCache.defaultDirectory(environment: ["HOME": "/home/someone"]) == "/home/someone/.cache/gzstream")
        #expect(DiskCache.defaultDirectory(environment: [:]) == nil)
    }
}

/// `count` copies of `block`, read in pieces: a large input without a large buffer.
final class RepeatingInputStream: ByteInputStream {
    private let block: [UInt8]
    private var remaining: Int
    private var position = 0

    init(block: [UInt8], count: Int) {
        self.block = block
        remaining = block.count * count
        super.init()
    }

    override func openBacking() throws {}
    override func closeBacking() throws {}

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = min(maxLength, remaining, block.count - position)
        block.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + position, count: count) }
        position = (position + count) % block.count
        remaining -= count
        return count
    }
}

import ByteStreams
import Foundation
import GzipStreams
import SecretStreams
import Testing
import TestSupport

@Suite("SecretStreams: round trips, framing and composition with gzip", .onDedicatedThreads)
struct RoundTripTests {
    static let chunk = SecretStreamFraming.defaultChunkSize
    static let sizes = [0, 1, chunk - 1, chunk, chunk + 1, 2 * chunk, (3 << 20) + 7]

    @Test("Round trip at the edge sizes: the same plaintext, and 33 + n + 21 × (n / C + 1) bytes", arguments: sizes)
    func roundTrip(size: Int) throws {
        let key = try testKey()
        let plain = randomBytes(count: size, seed: UInt64(size))
        let encrypted = try encrypt(plain, key: key)
        #expect(encrypted.count == 33 + size + 21 * (size / Self.chunk + 1))
        let result = try decrypt(encrypted, key: key)
        #expect(result.error == nil)
        #expect(result.plaintext == plain)
    }

    @Test("Small chunk sizes, written and read in odd pieces and one inner byte per read",
          arguments: [1, 7, 16], [0, 1, 15, 16, 17, 100])
    func smallChunks(chunkSize: Int, size: Int) throws {
        let key = try testKey()
        let plain = randomBytes(count: size, seed: 9)
        let encrypted = try encrypt(plain, key: key, chunkSize: chunkSize, writeSize: 3)
        #expect(encrypted.count == 33 + size + 21 * (size / chunkSize + 1))
        for oneByteReads in [false, true] {
            let result = try decrypt(encrypted, key: key, readSize: 5, oneByteReads: oneByteReads)
            #expect(result.error == nil)
            #expect(result.plaintext == plain)
        }
    }

    @Test("The framing: magic GZSS, version 1, the chunk size big-endian, then the 24-byte header and chunk 1's length")
    func framing() throws {
        let encrypted = try encrypt(Array("abc".utf8), key: try testKey(), chunkSize: 0x0102_03)
        #expect(Array(encrypted[0..<9]) == [0x47, 0x5A, 0x53, 0x53, 1, 0x00, 0x01, 0x02, 0x03])
        #expect(Array(encrypted[33..<37]) == [0, 0, 0, 3 + 17])
        #expect(encrypted.count == 33 + 4 + 3 + 17)
    }

    @Test("Two encryptions of the same plaintext differ (a random header each time)")
    func freshHeader() throws {
        let key = try testKey()
        let plain = Array("same text".utf8)
        #expect(try encrypt(plain, key: key) != encrypt(plain, key: key))
    }

    @Test("The encrypted bytes hold neither the plaintext nor the key")
    func nothingInTheClear() throws {
        let plain = Array(String(repeating: "a secret line of the cache entry\n", count: 5000).utf8)
        let encrypted = try encrypt(plain, key: try testKey(), chunkSize: 4096)
        #expect(!contains(encrypted, Array("a secret line".utf8)))
        for start in stride(from: 0, to: 32 - 8, by: 4) {
            #expect(!contains(encrypted, Array(testKeyBytes[start..<(start + 8)])))
        }
    }

    @Test("Compose with gzip: plain → GzipOutputStream → EncryptingOutputStream → memory, and back")
    func gzipInside() throws {
        let key = try testKey()
        var generator = SplitMix64(seed: 5)
        let words = ["cache", "entry", "gzip", "sodium", "chunk", "\n"].map { Array($0.utf8) }
        var plain: [UInt8] = []
        while plain.count < 1 << 20 { plain += words[Int(generator.next() % 6)] + [0x20] }
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: try EncryptingOutputStream(wrapping: memory, key: key))
        try gzip.openOrThrow()
        try gzip.writeAll(plain)
        try gzip.closeOrThrow()
        let encrypted = [UInt8](memory.data)
        #expect(encrypted.count < plain.count / 2)
        #expect(!contains(encrypted, Array("cache entry".utf8)))

        let reader = try GzipInputStream(wrapping: try DecryptingInputStream(wrapping: MemoryInputStream(bytes: encrypted),
                                                                             key: key))
        defer { reader.close() }
        #expect(try reader.readToEnd() == plain)

        // A flipped bit is found by the decryption before gzip sees any changed byte.
        var damaged = encrypted
        damaged[damaged.count / 2] ^= 0x10
        let damagedReader = try GzipInputStream(
            wrapping: try DecryptingInputStream(wrapping: MemoryInputStream(bytes: damaged), key: key))
        defer { damagedReader.close() }
        #expect(throws: SecretStreamError.self) { try damagedReader.readToEnd() }
    }

    @Test("Lifecycle: close twice; read after close; the counts; abandon leaves a truncated stream")
    func lifecycle() throws {
        let key = try testKey()
        let memory = MemoryOutputStream()
        let writer = try EncryptingOutputStream(wrapping: memory, key: key, chunkSize: 10)
        try writer.openOrThrow()
        try writer.writeAll(randomBytes(count: 25))
        #expect(writer.plaintextByteCount == 25)
        #expect(writer.encryptedByteCount == 33 + 2 * 31)
        writer.abandon()
        writer.close()
        #expect(writer.streamStatus == .closed)
        let result = try decrypt([UInt8](memory.data), key: key)
        #expect(result.secretStreamError == .truncated(chunk: 3, offset: 33 + 2 * 31))
        #expect(result.plaintext == randomBytes(count: 20))

        let reader = try DecryptingInputStream(wrapping: MemoryInputStream(bytes: try encrypt([1, 2, 3], key: key)), key: key)
        #expect(try reader.readToEnd() == [1, 2, 3])
        #expect(reader.encryptedByteCount == 33 + 4 + 3 + 17)
        #expect(reader.chunkSize == SecretStreamFraming.defaultChunkSize)
        reader.close()
        reader.close()
        var byte: UInt8 = 0
        #expect(reader.read(&byte, maxLength: 1) == -1)
        #expect(reader.streamStatus == .closed)
    }

    @Test("A chunk size outside 1...16 MiB is invalidArgument before anything is opened", arguments: [0, -1, (16 << 20) + 1])
    func chunkSizeRange(chunkSize: Int) throws {
        let memory = MemoryOutputStream()
        #expect {
            _ = try EncryptingOutputStream(wrapping: memory, key: try testKey(), chunkSize: chunkSize)
        } throws: { error in
            guard let error = error as? ByteStreamError, case .invalidArgument(let name, _) = error.code else { return false }
            return name == "chunkSize"
        }
        #expect(memory.streamStatus == .notOpen)
    }
}

import ByteStreams
import Foundation
import SecretStreams
import Testing
import TestSupport

@Suite("SecretStreams: derived session keys, authentication tags, random bytes and the reader's chunk-size limit", .onDedicatedThreads)
struct SessionKeyTests {
    @Test("A derived key depends on the key, the label and the context, and is the same for the same three")
    func derivation() throws {
        let key = try testKey()
        let challenge = randomBytes(count: 32, seed: 5)
        func bytes(_ key: SecretStreamKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }
        let first = bytes(try key.derived(label: "data", context: challenge))
        #expect(first.count == 32 && first != testKeyBytes)
        #expect(bytes(try key.derived(label: "data", context: challenge)) == first)
        #expect(bytes(try key.derived(label: "ack", context: challenge)) != first)
        #expect(bytes(try key.derived(label: "data", context: randomBytes(count: 32, seed: 6))) != first)
        #expect(bytes(try SecretStreamKey.generate().derived(label: "data", context: challenge)) != first)
        // A stream made under one session's key does not authenticate under another's.
        let plain = randomBytes(count: 1000)
        let encrypted = try encrypt(plain, key: try key.derived(label: "data", context: challenge))
        let replayed = try decrypt(encrypted, key: try key.derived(label: "data", context: randomBytes(count: 32, seed: 6)))
        #expect(replayed.plaintext.isEmpty)
        #expect(replayed.secretStreamError == .authenticationFailed(chunk: 1, offset: 33))
    }

    @Test("An authentication tag verifies with its key and message only")
    func tags() throws {
        let key = try testKey()
        let message = Array("GZOK".utf8) + [0, 0, 0, 1]
        let tag = key.authenticationTag(for: message)
        #expect(tag.count == SecretStreamKey.tagByteCount)
        #expect(key.verifiesTag(tag, for: message))
        #expect(!key.verifiesTag(tag, for: message + [0]))
        #expect(!key.verifiesTag(Array(tag.dropLast()), for: message))
        let other = try SecretStreamKey.generate()
        #expect(!other.verifiesTag(tag, for: message))
    }

    @Test("Random bytes differ from call to call")
    func random() throws {
        let first = try secureRandomBytes(count: 32)
        let second = try secureRandomBytes(count: 32)
        #expect(first.count == 32 && first != second)
        #expect(try secureRandomBytes(count: 0) == [])
    }

    @Test("A reader with maximumChunkSize refuses a larger announced chunk size at the prefix, before any chunk")
    func chunkSizeLimit() throws {
        let key = try testKey()
        let encrypted = try encrypt(randomBytes(count: 200_000), key: key, chunkSize: 128 << 10)
        let reader = try DecryptingInputStream(wrapping: MemoryInputStream(bytes: encrypted), key: key,
                                               maximumChunkSize: 64 << 10)
        #expect(throws: SecretStreamError.chunkSizeOverLimit(128 << 10, limit: 64 << 10, offset: 5)) {
            try reader.openOrThrow()
            _ = try reader.readChunk(maxLength: 4096)
        }
        #expect(SecretStreamError.chunkSizeOverLimit(131072, limit: 65536, offset: 5).description
            == "chunk size 131072 at byte 5 is over this reader's limit of 65536 bytes")
        #expect(reader.chunkSize == 0, "nothing was allocated for the announced size")
        // At the limit, it reads.
        let plain = randomBytes(count: 100_000)
        let atLimit = try DecryptingInputStream(wrapping: MemoryInputStream(bytes: try encrypt(plain, key: key)), key: key,
                                                maximumChunkSize: 64 << 10)
        try atLimit.openOrThrow()
        #expect(try atLimit.readToEnd() == plain)
        #expect(throws: ByteStreamError.self) {
            _ = try DecryptingInputStream(wrapping: MemoryInputStream(bytes: []), key: key, maximumChunkSize: 0)
        }
    }
}

import ByteStreams
import Foundation
import SecretStreams
import TestSupport

// Helpers of the SecretStreams tests alone: a fixed key, encrypting and decrypting in memory.
// Seeded data, the one-byte inner stream and temporary directories come from TestSupport.

/// The fixed key bytes the tests use: 0x01, 0x02, … 0x20.
let testKeyBytes = (1...32).map { UInt8($0) }

func testKey() throws -> SecretStreamKey { try SecretStreamKey(bytes: testKeyBytes) }

/// `plain` encrypted with `key` in chunks of `chunkSize` bytes, written in pieces of
/// `writeSize` bytes.
func encrypt(_ plain: [UInt8], key: SecretStreamKey, chunkSize: Int = SecretStreamFraming.defaultChunkSize,
             writeSize: Int = 10_000) throws -> [UInt8] {
    let memory = MemoryOutputStream()
    let stream = try EncryptingOutputStream(wrapping: memory, key: key, chunkSize: chunkSize)
    try stream.openOrThrow()
    var start = 0
    while start < plain.count {
        let end = min(plain.count, start + writeSize)
        try stream.writeAll(plain[start..<end])
        start = end
    }
    try stream.closeOrThrow()
    return [UInt8](memory.data)
}

/// What a reader gets from `encrypted`: the plaintext given out before the end or the error,
/// and the error (`nil` when the stream reached its end).
struct Decryption {
    var plaintext: [UInt8]
    var error: (any Error)?

    var secretStreamError: SecretStreamError? { error as? SecretStreamError }
}

/// Decrypts `encrypted` with `key`, reading `readSize` bytes at a time, one inner byte per
/// inner read when `oneByteReads`.
func decrypt(_ encrypted: [UInt8], key: SecretStreamKey, readSize: Int = 4096, oneByteReads: Bool = false) throws -> Decryption {
    let memory = MemoryInputStream(bytes: encrypted)
    let inner: ByteInputStream = oneByteReads ? OneByteInputStream(wrapping: memory) : memory
    let stream = try DecryptingInputStream(wrapping: inner, key: key)
    defer { stream.close() }
    stream.open()
    var plain: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: readSize)
    while true {
        let count = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: readSize) }
        if count < 0 { return Decryption(plaintext: plain, error: stream.streamError) }
        if count == 0 { return Decryption(plaintext: plain, error: nil) }
        plain += buffer[0..<count]
    }
}

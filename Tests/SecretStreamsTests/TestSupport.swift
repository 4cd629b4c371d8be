import ByteStreams
import Foundation
import SecretStreams

// Helpers shared by the SecretStreams tests: seeded data, a fixed key, encrypting and
// decrypting in memory, an inner stream that reads one byte at a time, and temporary files.

/// SplitMix64: the same numbers on every run for the same seed.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` bytes from a generator started at `seed`.
func randomBytes(count: Int, seed: UInt64 = 1) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) }
    }
    return Array(bytes.prefix(count))
}

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

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
    }
    return false
}

/// Reads its inner stream one byte per read: every field and chunk arrives in pieces.
final class OneByteInputStream: ByteInputStream, @unchecked Sendable {
    private let inner: ByteInputStream
    init(wrapping inner: ByteInputStream) {
        self.inner = inner
        super.init()
    }

    override func openBacking() throws {
        if inner.streamStatus == .notOpen { inner.open() }
        try inner.throwIfFailed()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.read(buffer, maxLength: 1)
        if count < 0 { throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
        return count
    }
}

/// A new empty directory below the system's temporary directory, removed by `body`'s end.
func withTemporaryDirectory<Result>(_ body: (URL) throws -> Result) throws -> Result {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("secretstreams-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

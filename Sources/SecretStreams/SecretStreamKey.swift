import ByteStreams
import CSodium

/// A 32-byte key for ``EncryptingOutputStream`` and ``DecryptingInputStream``
/// (`crypto_secretstream_xchacha20poly1305_KEYBYTES`).
///
/// The bytes live in memory this object allocates, are never copied into arrays it hands out,
/// and are zeroed (`sodium_memzero`) when it is released. Immutable, so safe to share between
/// threads.
public final class SecretStreamKey: @unchecked Sendable {
    /// The key size in bytes: 32.
    public static let byteCount = 32

    private let storage: UnsafeMutablePointer<UInt8>

    private init(uninitialized: ()) {
        storage = .allocate(capacity: Self.byteCount)
        storage.initialize(repeating: 0, count: Self.byteCount)
    }

    /// A key holding a copy of `bytes`.
    /// - Parameter bytes: Exactly 32 bytes.
    /// - Throws: ``ByteStreamError``'s `invalidArgument` (named `bytes`) for another length;
    ///   ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start.
    public convenience init(bytes: some Collection<UInt8>) throws {
        try requireArgument(bytes.count == Self.byteCount, "bytes",
                            "a key must be \(Self.byteCount) bytes, not \(bytes.count)", operation: "create SecretStreamKey")
        try requireSodium()
        self.init(uninitialized: ())
        var index = 0
        for byte in bytes {
            storage[index] = byte
            index += 1
        }
    }

    /// A new random key from libsodium's generator.
    /// - Throws: ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start.
    /// Wraps `crypto_secretstream_xchacha20poly1305_keygen`.
    public static func generate() throws -> SecretStreamKey {
        try requireSodium()
        let key = SecretStreamKey(uninitialized: ())
        crypto_secretstream_xchacha20poly1305_keygen(key.storage)
        return key
    }

    /// The key read from a file of exactly 32 raw bytes (no encoding, no newline).
    /// - Parameter path: The key file.
    /// - Throws: ``SecretStreamError/invalidKeyFile(path:byteCount:)`` when the file holds
    ///   another number of bytes; the file's I/O error (``ByteStreamError``); a libsodium failure.
    /// Blocks while the file is read. The bytes read pass through no buffer but the key's own
    /// and one of 33 bytes, zeroed before returning.
    public convenience init(contentsOfFile path: String) throws {
        try requireSodium()
        let file = FileInputStream(path: path)
        defer { file.close() }
        try file.openOrThrow()
        let room = Self.byteCount + 1
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: room)
        defer {
            sodium_memzero(buffer, room)
            buffer.deallocate()
        }
        var total: Int64 = 0
        var discard: [UInt8] = []
        while true {
            // Up to 33 bytes are kept (one more than a key, to tell a longer file); past that,
            // the rest is only counted, for the message.
            let count: Int
            if total < Int64(room) {
                count = file.read(buffer + Int(total), maxLength: room - Int(total))
            } else {
                if discard.isEmpty { discard = [UInt8](repeating: 0, count: ByteStream.defaultChunkSize) }
                count = discard.withUnsafeMutableBufferPointer { file.read($0.baseAddress!, maxLength: $0.count) }
            }
            if count < 0 { try file.throwIfFailed() }
            if count <= 0 { break }
            total += Int64(count)
        }
        guard total == Int64(Self.byteCount) else {
            throw SecretStreamError.invalidKeyFile(path: path, byteCount: total)
        }
        self.init(uninitialized: ())
        storage.update(from: buffer, count: Self.byteCount)
    }

    deinit {
        sodium_memzero(storage, Self.byteCount)
        storage.deallocate()
    }

    /// Lends the 32 key bytes, to save a generated key; do not keep the pointer.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: storage, count: Self.byteCount))
    }

    /// The key for libsodium's calls.
    var pointer: UnsafePointer<UInt8> { UnsafePointer(storage) }
}

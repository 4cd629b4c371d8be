import ByteStreams
import CSodium

// What a two-party transfer over a pre-shared key needs on top of a secretstream: fresh random
// bytes for a challenge, keys derived per session and per direction, and a tag that proves the
// peer holds the key. Only libsodium's primitives, never home-made constructions.

/// `count` random bytes from libsodium's generator (the system's CSPRNG).
/// - Parameter count: The number of bytes, 0 or more.
/// - Throws: ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start.
/// Does not block once the system's generator is seeded. Thread-safe.
/// Wraps libsodium's `randombytes_buf`.
public func secureRandomBytes(count: Int) throws -> [UInt8] {
    precondition(count >= 0, "a negative count of random bytes")
    try requireSodium()
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
    return bytes
}

extension SecretStreamKey {
    /// A key for one purpose in one session, derived from this (pre-shared) key: BLAKE2b-256
    /// keyed with this key over `label`'s UTF-8 bytes, a zero byte, then `context`. Another
    /// label or context gives an unrelated key, so a stream made for one session or direction
    /// does not authenticate in another.
    /// - Parameters:
    ///   - label: What the key is for (a direction, a message), not empty; no zero byte.
    ///   - context: The session's fresh bytes (a challenge), any length.
    /// - Returns: A 32-byte key in guarded, locked memory, with no ``fileExposure``.
    /// - Throws: ``SecretStreamError/sodiumFailure(function:)``.
    /// Thread-safe. Wraps libsodium's keyed `crypto_generichash` (BLAKE2b), which its
    /// documentation gives for deriving keys from a key and a context longer than `crypto_kdf`'s.
    public func derived(label: String, context: [UInt8]) throws -> SecretStreamKey {
        precondition(!label.isEmpty && !label.utf8.contains(0), "a derivation label is not empty and has no zero byte")
        let derived = try SecretStreamKey(exposure: nil)
        let input = Array(label.utf8) + [0] + context
        let code = input.withUnsafeBufferPointer { message in
            crypto_generichash(derived.storage, Self.byteCount, message.baseAddress, UInt64(message.count),
                               storage, Self.byteCount)
        }
        guard code == 0 else { throw SecretStreamError.sodiumFailure(function: "crypto_generichash") }
        return derived
    }

    /// The size of an ``authenticationTag(for:)``: 32 bytes (`crypto_auth_BYTES`).
    public static let tagByteCount = 32

    /// A tag over `message` that only a holder of this key can make (HMAC-SHA-512-256).
    /// - Parameter message: The bytes to authenticate.
    /// - Returns: 32 bytes.
    /// Thread-safe. Wraps libsodium's `crypto_auth`.
    public func authenticationTag(for message: [UInt8]) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: Self.tagByteCount)
        message.withUnsafeBufferPointer { bytes in
            _ = crypto_auth(&tag, bytes.baseAddress, UInt64(bytes.count), storage)
        }
        return tag
    }

    /// Whether `tag` is this key's ``authenticationTag(for:)`` of `message`, compared in
    /// constant time.
    /// - Parameters:
    ///   - tag: The tag received; another length than 32 bytes is `false`.
    ///   - message: The bytes it should authenticate.
    /// Thread-safe. Wraps libsodium's `crypto_auth_verify`.
    public func verifiesTag(_ tag: [UInt8], for message: [UInt8]) -> Bool {
        guard tag.count == Self.tagByteCount else { return false }
        return message.withUnsafeBufferPointer { bytes in
            crypto_auth_verify(tag, bytes.baseAddress, UInt64(bytes.count), storage) == 0
        }
    }
}

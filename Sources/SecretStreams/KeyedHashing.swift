import ByteStreams
import CSodium

// The hashing and key derivation other modules of this package need (the cache names its entry
// files with them), kept here so that libsodium is called from this one module.

/// The 32-byte BLAKE2b hash of `input`, keyed with `key` when one is given, else plain.
/// - Parameters:
///   - input: The bytes to hash, any length.
///   - key: The hash key (its 32 bytes), or `nil` for an unkeyed hash.
/// - Returns: 32 bytes.
/// Does not block. Thread-safe. Wraps libsodium's `crypto_generichash`.
package func blake2bHash(_ input: [UInt8], key: SecretStreamKey?) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    if let key {
        key.withUnsafeBytes { bytes in
            _ = crypto_generichash(&out, out.count, input, UInt64(input.count),
                                   bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
    } else {
        _ = crypto_generichash(&out, out.count, input, UInt64(input.count), nil, 0)
    }
    return out
}

extension SecretStreamKey {
    /// Subkey `id` of this (master) key for `context`: another id or context gives an unrelated
    /// key, so the master key itself serves one purpose only.
    /// - Parameters:
    ///   - id: The subkey's number.
    ///   - context: Exactly 8 ASCII bytes naming the purpose (`crypto_kdf_CONTEXTBYTES`).
    /// - Returns: A 32-byte key in guarded, locked memory, with no ``fileExposure``.
    /// - Throws: ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start or
    ///   allocate.
    /// Does not block. Thread-safe. Wraps libsodium's `crypto_kdf_derive_from_key`.
    package func subkey(id: UInt64, context: String) throws -> SecretStreamKey {
        precondition(context.utf8.count == 8, "a key derivation context is 8 bytes")
        try requireSodium()
        var subkey = [UInt8](repeating: 0, count: Self.byteCount)
        defer { sodium_memzero(&subkey, subkey.count) }
        let contextBytes = Array(context.utf8).map { CChar(bitPattern: $0) }
        _ = withUnsafeBytes { master in
            crypto_kdf_derive_from_key(&subkey, subkey.count, id, contextBytes,
                                       master.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return try SecretStreamKey(bytes: subkey)
    }
}

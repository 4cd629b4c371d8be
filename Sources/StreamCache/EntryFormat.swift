import ByteStreams
import GzipStreams
import SecretStreams

/// How one disk entry is laid out. The file is named by ``EntryName`` and holds:
///
/// | bytes | field |
/// |---|---|
/// | 0–3 | magic `GZSC` |
/// | 4 | format version, 2 |
/// | 5 | flags: bit 0 set when the payload is encrypted |
/// | 6–7 | zero |
/// | 8–15 | the plain size in bytes, big-endian |
/// | 16–69 | encrypted only: the header's seal (below) |
/// | 16– or 70– | the payload: one gzip member (RFC 1952), encrypted with ``EncryptingOutputStream`` when a key is set |
///
/// The member's FEXTRA field (RFC 1952 §2.3.1.1) holds one subfield `GC` with the 32-byte
/// name hash, so a file moved under another entry's name is found out; encrypted, that binding
/// is authenticated. The plain size is checked against the bytes decoded, so a changed size is
/// found out too, at the end of a read.
///
/// The seal authenticates the header before anything is decoded, so that a listing shows only
/// sizes the key holder wrote: it is an encrypted stream (``SecretStreamFraming``, chunk size
/// 1) of no plaintext, one final chunk, 54 bytes, whose chunk 1 binds as additional data the
/// header (bytes 0–15), the name hash and the payload's first 33 bytes (its prefix and its
/// random secretstream header), so a header changed, moved to another name or put before
/// another payload fails. It is written last, once the plain size is known: chunk 1 of the
/// payload itself goes out long before the end of a streamed store, so the header cannot be
/// its additional data. Without a key nothing is authenticated: the header's sizes are what
/// anyone who could write the file wrote, checked only by reading the entry whole.
///
/// Version 1 (no seal) is not read: such an entry is a damaged miss, removed, as a cache
/// can afford (it is stored again by the next put).
enum EntryFormat {
    static let magic: [UInt8] = Array("GZSC".utf8)
    static let version: UInt8 = 2
    static let headerByteCount = 16
    /// The seal of an encrypted entry's header: 9 + 24 + 4 + 17 bytes.
    static let sealByteCount = SecretStreamFraming.prefixByteCount + SecretStreamFraming.headerByteCount
        + SecretStreamFraming.lengthByteCount + SecretStreamFraming.chunkOverhead
    /// The payload's prefix and secretstream header, which the seal binds.
    static let payloadHeadByteCount = SecretStreamFraming.prefixByteCount + SecretStreamFraming.headerByteCount
    /// What a lookup or listing reads first: header, seal and payload head.
    static let leadingByteCount = headerByteCount + sealByteCount + payloadHeadByteCount
    static let encryptedFlag: UInt8 = 1
    /// The FEXTRA subfield ID: `G`, `C`.
    static let subfieldID: [UInt8] = [0x47, 0x43]

    struct Header: Equatable {
        var isEncrypted: Bool
        var plainSize: Int64
    }

    /// Where the payload starts: after the header, and the seal when encrypted.
    static func payloadOffset(isEncrypted: Bool) -> Int {
        isEncrypted ? headerByteCount + sealByteCount : headerByteCount
    }

    /// The seal's additional data: the header, the name hash, the payload's head.
    private static func sealedBytes(header: [UInt8], name: EntryName, payloadHead: [UInt8]) -> [UInt8] {
        header + name.hash + payloadHead
    }

    /// The seal of an encrypted entry whose first 16 bytes are `header` and whose payload
    /// starts with `payloadHead` (33 bytes).
    /// - Throws: ``SecretStreamError/sodiumFailure(function:)``; the memory stream's errors.
    static func seal(header: [UInt8], name: EntryName, payloadHead: [UInt8], key: SecretStreamKey) throws -> [UInt8] {
        let output = MemoryOutputStream()
        let stream = try EncryptingOutputStream(wrapping: output, key: key, chunkSize: 1,
                                                additionalData: sealedBytes(header: header, name: name, payloadHead: payloadHead))
        try stream.openOrThrow()
        try stream.closeOrThrow()
        return Array(output.data)
    }

    /// Checks the seal in an encrypted entry's leading bytes (``leadingByteCount`` of them, or
    /// fewer when the file is shorter, which fails).
    /// - Throws: ``DamageFound`` (`headerNotAuthenticated`) when the seal does not
    ///   authenticate the header, the name and the payload's head with `key`.
    static func checkSeal(_ leading: [UInt8], name: EntryName, key: SecretStreamKey) throws(DamageFound) {
        let sealEnd = headerByteCount + sealByteCount
        guard leading.count >= leadingByteCount else { throw DamageFound(damage: .headerNotAuthenticated) }
        let bound = sealedBytes(header: Array(leading[0..<headerByteCount]), name: name,
                                payloadHead: Array(leading[sealEnd..<leadingByteCount]))
        do {
            let stream = try DecryptingInputStream(wrapping: MemoryInputStream(bytes: leading[headerByteCount..<sealEnd]),
                                                   key: key, additionalData: bound)
            defer { stream.close() }
            guard try stream.readToEnd(limit: 0).isEmpty else { throw DamageFound(damage: .headerNotAuthenticated) }
        } catch {
            throw DamageFound(damage: .headerNotAuthenticated)
        }
    }

    static func encode(_ header: Header) -> [UInt8] {
        var bytes = magic + [version, header.isEncrypted ? encryptedFlag : 0, 0, 0]
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(header.plainSize) >> UInt64(shift))) }
        return bytes
    }

    /// The header in `bytes` (the file's first 16 or more, or fewer when it is shorter).
    /// - Throws: ``DamageFound`` saying why it is not one.
    static func decode(_ bytes: [UInt8]) throws(DamageFound) -> Header {
        guard bytes.count >= 4, Array(bytes[0..<4]) == magic else {
            // A file cut inside the magic is as much "not an entry" as one with another magic.
            throw DamageFound(damage: bytes.count < 4 && magic.starts(with: bytes) ? .truncated(offset: Int64(bytes.count)) : .notCacheEntry)
        }
        guard bytes.count >= headerByteCount else { throw DamageFound(damage: .truncated(offset: Int64(bytes.count))) }
        guard bytes[4] == version else { throw DamageFound(damage: .unsupportedVersion(bytes[4])) }
        guard bytes[5] & ~encryptedFlag == 0 else { throw DamageFound(damage: .invalidHeader(offset: 5)) }
        guard bytes[6] == 0, bytes[7] == 0 else { throw DamageFound(damage: .invalidHeader(offset: bytes[6] == 0 ? 7 : 6)) }
        let size = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard size <= UInt64(Int64.max) else { throw DamageFound(damage: .invalidHeader(offset: 8)) }
        return Header(isEncrypted: bytes[5] & encryptedFlag != 0, plainSize: Int64(size))
    }

    /// The gzip header of an entry's member: MTIME 0, and FEXTRA with the `GC` subfield.
    static func gzipHeader(for name: EntryName) -> GzipHeader {
        GzipHeader(extraField: subfieldID + [UInt8(name.hash.count), 0] + name.hash)
    }

    /// Whether a member's header binds it to `name`.
    static func isBound(_ header: GzipHeader?, to name: EntryName) -> Bool {
        header?.extraField == gzipHeader(for: name).extraField
    }
}

/// An entry's file name: the 32-byte BLAKE2b hash of the key's UTF-8 bytes, in lowercase
/// hexadecimal. With an encryption key the hash is keyed (by a subkey derived from it), so the
/// names tell nothing about the keys to anyone without it; without one, it is a plain hash.
///
/// The hash is libsodium's `crypto_generichash`, through SecretStreams.
struct EntryName: Hashable, Sendable {
    let hash: [UInt8]
    var fileName: String { hexDigits(hash) }

    init(key: String, hashKey: SecretStreamKey?) {
        hash = blake2bHash(Array(key.utf8), key: hashKey)
    }

    /// The name of an entry file: exactly 64 lowercase hexadecimal digits (`0-9`, `a-f`), as
    /// ``fileName`` writes them; any other name (uppercase, a sign, another length) is `nil`.
    init?(fileName: String) {
        let utf8 = Array(fileName.utf8)
        guard utf8.count == 64, let bytes = Self.lowercaseHexBytes(utf8) else { return nil }
        hash = bytes
    }

    /// The bytes that `digits`, pairs of lowercase hexadecimal digits, spell; `nil` for any other
    /// character. (`UInt8(_:radix:)` would also take a sign, `+f` or `-0`, and uppercase.)
    static func lowercaseHexBytes(_ digits: [UInt8]) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// The key for name hashes under `key`: a subkey, so the encryption key itself is used for
    /// nothing but encryption (subkey 1, context `gzcache_`).
    static func hashKey(derivedFrom key: SecretStreamKey) throws -> SecretStreamKey {
        try key.subkey(id: 1, context: "gzcache_")
    }
}

/// `bytes` in lowercase hexadecimal, two digits each: entry and temporary file names.
func hexDigits(_ bytes: [UInt8]) -> String {
    bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// Damage found by a check of this module, on its way to becoming a ``CacheMiss``.
struct DamageFound: Error {
    var damage: CacheMiss.Damage
}

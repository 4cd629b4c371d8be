import CSodium

/// The on-disk framing of an encrypted stream, version 1, and its sizes in bytes.
///
/// ```
/// offset  size       field
/// 0       4          magic "GZSS" (47 5a 53 53)
/// 4       1          version, 1
/// 5       4          plaintext chunk size C, big-endian, 1...maximumChunkSize (16 MiB)
/// 9       24         secretstream header (crypto_secretstream_xchacha20poly1305_HEADERBYTES)
/// 33      4 + L      chunk 1: its length L, big-endian, then L bytes of ciphertext:
///                    L = plaintext bytes + 17 (ABYTES: the encrypted tag byte and the
///                    16-byte Poly1305 MAC), 17 <= L <= C + 17
/// …       4 + L      further chunks
/// ```
///
/// A writer fills every chunk with C plaintext bytes (tag MESSAGE) and ends with one chunk of
/// the remaining 0 to C - 1 bytes tagged FINAL (`crypto_secretstream_xchacha20poly1305_TAG_FINAL`);
/// nothing follows it. Each chunk's additional data is its 4-byte length, preceded for chunk 1
/// by the 9-byte prefix and, before it, the caller's own additional data when there is some
/// (`additionalData(chunk:prefix:lengthField:bound:)`), so a changed prefix or length, or
/// bytes the caller keeps elsewhere and binds, fail authentication. A file of `n`
/// plaintext bytes is `33 + n + 21 × (n / C + 1)` bytes long.
///
/// The lengths let a reader find the end of the final chunk without reading further, so that
/// a cut is reported as truncation, bytes after the final chunk as trailing data, and only
/// changed bytes (or a wrong key) as an authentication failure.
public enum SecretStreamFraming {
    /// The magic at the start: `GZSS`.
    public static let magic: [UInt8] = [0x47, 0x5A, 0x53, 0x53]
    /// The version this module writes and reads.
    public static let version: UInt8 = 1
    /// Magic, version and chunk size: 9 bytes.
    public static let prefixByteCount = 9
    /// The secretstream header: 24 bytes (`crypto_secretstream_xchacha20poly1305_HEADERBYTES`).
    public static let headerByteCount = 24
    /// What libsodium adds to each chunk's plaintext: 17 bytes
    /// (`crypto_secretstream_xchacha20poly1305_ABYTES`).
    public static let chunkOverhead = 17
    /// The length field before each chunk: 4 bytes.
    public static let lengthByteCount = 4
    /// The plaintext chunk size when none is given: 64 KiB.
    public static let defaultChunkSize = 64 << 10
    /// The largest plaintext chunk size: 16 MiB, so that a damaged or hostile prefix cannot
    /// make a reader allocate more than about twice that.
    public static let maximumChunkSize = 16 << 20
    /// The chunk sizes writers and readers accept, in bytes.
    static let chunkSizes = 1...maximumChunkSize

    /// A 4-byte big-endian length.
    static func encode(length: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(length).bigEndian, Array.init)
    }

    /// Chunk `chunk`'s additional data: its 4-byte length field, preceded for chunk 1 by `bound`
    /// (the caller's, not stored in the stream; empty for none) and the 9-byte prefix. With
    /// nothing bound, chunk 1's is the prefix and the length, as before there was a choice.
    /// - Parameters:
    ///   - chunk: The chunk's number, 1 for the first.
    ///   - prefix: The stream's 9-byte prefix.
    ///   - lengthField: The chunk's 4-byte big-endian length field.
    ///   - bound: Bytes the writer and the reader both know, bound to the stream by chunk 1.
    static func additionalData(chunk: Int, prefix: [UInt8], lengthField: [UInt8], bound: [UInt8]) -> [UInt8] {
        chunk == 1 ? bound + prefix + lengthField : lengthField
    }

    /// The 9-byte prefix for `chunkSize`.
    static func prefix(chunkSize: Int) -> [UInt8] {
        magic + [version] + encode(length: chunkSize)
    }
}

/// libsodium's `sodium_init()`, called once (Swift runs a global's initialiser once, thread-safely).
private let sodiumInitResult = sodium_init()

/// Initialises libsodium once per process; later calls only check the result.
/// - Throws: ``SecretStreamError/sodiumFailure(function:)`` when `sodium_init` failed.
func requireSodium() throws(SecretStreamError) {
    if sodiumInitResult < 0 { throw .sodiumFailure(function: "sodium_init") }
}

import ByteStreams
import CSodium

/// Takes plaintext and writes it, encrypted and authenticated with libsodium's
/// `crypto_secretstream_xchacha20poly1305`, to an inner output stream.
///
/// `ByteStream.open()` opens the inner stream if it is not open yet and writes the 9-byte
/// prefix and the 24-byte secretstream header; writes collect plaintext into chunks of
/// `chunkSize` bytes, each written encrypted (a 4-byte length, then `chunkSize + 17` bytes, tag
/// MESSAGE) as soon as it is full; `ByteStream.close()` writes the rest, 0 to
/// `chunkSize - 1` bytes, as the final chunk (tag FINAL) and closes the inner stream unless `closesInnerStream` is `false`. The
/// framing is ``SecretStreamFraming``'s. A failure while finishing leaves the status `.error`
/// with the error in `ByteStream.streamError`: check it (or use `closeOrThrow()`) before
/// trusting the output. ``abandon()`` closes without the final chunk, so a reader reports the
/// output truncated.
///
/// What it protects: the confidentiality and integrity of the plaintext; a reader with the key
/// /// detects any changed, reordered, dropped or appended chunk and a cut anywhere. What it does
/// not: the plaintext's length is visible (the output is 33 + n + 21 × (n / chunkSize + 1)
/// bytes for n plaintext bytes); nothing is protected from whoever holds the
/// key; the chunk size and the fact that this is an encrypted gzstream file are in the clear.
///
/// Memory: one plaintext buffer of `chunkSize` bytes and one ciphertext buffer of
/// `chunkSize + 21` bytes, allocated at creation, whatever the amount of data. The
/// secretstream state (key material) is zeroed when the stream is released.
///
/// Unscheduled, a write takes every byte offered and blocks as the inner stream does.
/// Scheduled, it does not follow its inner stream's readiness: the delegate is told "has space
/// available" after every write (do not schedule the inner stream). Not thread-safe.
///
/// Errors: the inner stream's errors come through unchanged;
/// ``SecretStreamError/sodiumFailure(function:)`` when libsodium fails.
/// Wraps `crypto_secretstream_xchacha20poly1305_init_push` and `…_push`.
public final class EncryptingOutputStream: ByteOutputStream {
    private let inner: ByteOutputStream
    private let key: SecretStreamKey
    private let closesInnerStream: Bool
    private let additionalData: [UInt8]
    /// The plaintext bytes per chunk.
    public let chunkSize: Int
    private let plaintext: UnsafeMutablePointer<UInt8>
    private var plaintextCount = 0
    private let ciphertext: UnsafeMutablePointer<UInt8>
    private let state: UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>
    private var pushing = false
    private var chunkNumber = 0
    private var abandoned = false
    /// The plaintext bytes taken so far.
    public private(set) var plaintextByteCount: Int64 = 0
    /// The encrypted bytes written to the inner stream so far, prefix and header included.
    public private(set) var encryptedByteCount: Int64 = 0

    /// A stream that encrypts into `inner` with `key`.
    /// - Parameters:
    ///   - inner: Where the encrypted bytes go.
    ///   - key: The 32-byte key; kept (not copied) for the stream's life.
    ///   - chunkSize: Plaintext bytes per chunk, `1...SecretStreamFraming.maximumChunkSize`
    ///     (16 MiB); default 64 KiB. Recorded in the prefix; the reader needs no setting.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    ///   - additionalData: Bytes kept outside the stream (a file header, say) that chunk 1
    ///     authenticates: a reader must give the same bytes to ``DecryptingInputStream``, or
    ///     chunk 1 fails. Not written, not encrypted. Default: none.
    /// - Throws: `ByteStreamError`'s `invalidArgument` for a `chunkSize` out of range (nothing
    ///   is allocated then); ``SecretStreamError/sodiumFailure(function:)``.
    public init(wrapping inner: ByteOutputStream, key: SecretStreamKey,
                chunkSize: Int = SecretStreamFraming.defaultChunkSize, closesInnerStream: Bool = true,
                additionalData: [UInt8] = []) throws {
        try requireArgument(chunkSize, in: SecretStreamFraming.chunkSizes, "chunkSize",
                            operation: "create EncryptingOutputStream")
        try requireSodium()
        self.inner = inner
        self.key = key
        self.chunkSize = chunkSize
        self.closesInnerStream = closesInnerStream
        self.additionalData = additionalData
        plaintext = .allocate(capacity: chunkSize)
        ciphertext = .allocate(capacity: SecretStreamFraming.lengthByteCount + chunkSize + SecretStreamFraming.chunkOverhead)
        state = .allocate(capacity: 1)
        super.init()
    }

    deinit {
        sodium_memzero(state, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        sodium_memzero(plaintext, chunkSize)
        state.deallocate()
        plaintext.deallocate()
        ciphertext.deallocate()
    }

    /// Opens the inner stream unless it is open and writes the prefix and the secretstream
    /// header.
    override public func openBacking() throws {
        try inner.openUnlessOpened()
        var header = [UInt8](repeating: 0, count: SecretStreamFraming.headerByteCount)
        guard crypto_secretstream_xchacha20poly1305_init_push(state, &header, key.pointer) == 0 else {
            throw SecretStreamError.sodiumFailure(function: "crypto_secretstream_xchacha20poly1305_init_push")
        }
        pushing = true
        try emit(SecretStreamFraming.prefix(chunkSize: chunkSize) + header)
    }

    /// Takes all `maxLength` bytes, encrypting and writing each chunk as soon as it is full.
    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        var taken = 0
        while taken < maxLength {
            let count = min(maxLength - taken, chunkSize - plaintextCount)
            (plaintext + plaintextCount).update(from: buffer + taken, count: count)
            plaintextCount += count
            taken += count
            // A full chunk goes at once: the final chunk is always shorter than chunkSize.
            if plaintextCount == chunkSize { try push(final: false) }
        }
        plaintextByteCount += Int64(maxLength)
        return maxLength
    }

    /// Closes the stream without the final chunk: what reached the inner stream is reported
    /// truncated by a reader, so partial data is never mistaken for whole data. For a writer
    /// whose input failed. Closes the inner stream as `ByteStream.close()` does.
    public func abandon() {
        abandoned = true
        close()
    }

    /// Writes the final chunk (unless abandoned or failed), zeroes the state and the plaintext
    /// buffer, and closes the inner stream when `closesInnerStream`; throws the first error.
    override public func closeBacking() throws {
        var firstError: (any Error)?
        if streamStatus != .error, !abandoned, pushing {
            do {
                try push(final: true)
            } catch {
                firstError = error
            }
        }
        pushing = false
        sodium_memzero(state, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        sodium_memzero(plaintext, chunkSize)
        if closesInnerStream {
            inner.close()
            if firstError == nil, inner.streamStatus == .error { firstError = inner.streamError }
        }
        if let firstError { throw firstError }
    }

    /// Encrypts the buffered plaintext as one chunk and writes it with its length.
    private func push(final: Bool) throws {
        chunkNumber += 1
        let lengthField = SecretStreamFraming.encode(length: plaintextCount + SecretStreamFraming.chunkOverhead)
        let additional = SecretStreamFraming.additionalData(chunk: chunkNumber, prefix: SecretStreamFraming.prefix(chunkSize: chunkSize),
                                                            lengthField: lengthField, bound: additionalData)
        let tag = final ? UInt8(crypto_secretstream_xchacha20poly1305_tag_final())
                        : UInt8(crypto_secretstream_xchacha20poly1305_tag_message())
        let lengthCount = SecretStreamFraming.lengthByteCount
        lengthField.withUnsafeBufferPointer { ciphertext.update(from: $0.baseAddress!, count: lengthCount) }
        var length: UInt64 = 0
        let code = additional.withUnsafeBufferPointer { ad in
            crypto_secretstream_xchacha20poly1305_push(state, ciphertext + lengthCount, &length, plaintext,
                                                       UInt64(plaintextCount), ad.baseAddress, UInt64(ad.count), tag)
        }
        guard code == 0 else {
            throw SecretStreamError.sodiumFailure(function: "crypto_secretstream_xchacha20poly1305_push")
        }
        plaintextCount = 0
        try emit(UnsafeRawBufferPointer(start: ciphertext, count: lengthCount + Int(length)))
    }

    private func emit(_ bytes: UnsafeRawBufferPointer) throws {
        try inner.writeAll(bytes)
        encryptedByteCount += Int64(bytes.count)
    }

    private func emit(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try emit($0) }
    }
}

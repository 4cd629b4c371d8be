import ByteStreams
import CSodium

/// Reads an encrypted stream (``SecretStreamFraming``, written by ``EncryptingOutputStream``)
/// from an inner input stream and yields its plaintext, checking every chunk with libsodium's
/// `crypto_secretstream_xchacha20poly1305_pull`.
///
/// The first read checks the 9-byte prefix (magic, version, chunk size) and takes the 24-byte
/// secretstream header; then each chunk is read whole, authenticated and decrypted, and only
/// then is its plaintext given out. After the chunk tagged final, the inner stream must end: the
/// read that would return `0` first checks that no byte follows.
///
/// Plaintext is tentative until the end: every byte given out belongs to an authenticated
/// chunk, in order, but only reaching the end (a read returning `0`, status `.atEnd`) proves
/// that nothing was cut off. A reader that stops at an error must discard what it read.
///
/// Errors (sticky, in `ByteStream.streamError`), each with the byte offset in the encrypted
/// input: ``SecretStreamError/notSecretStream(offset:)`` (not this format: bad magic),
/// ``SecretStreamError/unsupportedVersion(_:offset:)``,
/// ``SecretStreamError/invalidChunkSize(_:offset:)``,
/// ``SecretStreamError/truncated(chunk:offset:)`` (the input ends before the end of the final
/// chunk, wherever it is cut), ``SecretStreamError/invalidChunkLength(_:chunk:offset:)``,
/// ``SecretStreamError/authenticationFailed(chunk:offset:)`` (wrong key, changed or reordered
/// chunk), ``SecretStreamError/trailingData(offset:)``. The inner stream's errors come through
/// unchanged. A wrong key fails at chunk 1, a wrong file at the magic.
///
/// Memory: once the prefix is read, one ciphertext buffer of `chunkSize + 17` bytes and one
/// plaintext buffer of `chunkSize` bytes, with `chunkSize` from the prefix (at most
/// `maximumChunkSize`, 16 MiB by default),
/// whatever the size of the input. The secretstream state and the plaintext buffer are zeroed
/// at close.
///
/// Ownership: opens `inner` at `ByteStream.open()` if it is not open yet; closes it at
/// `ByteStream.close()` unless `closesInnerStream` is `false`. Reads block as the inner
/// stream's do. Scheduled, it does not follow its inner stream's readiness: the delegate is
/// told "has bytes available" after every read (do not schedule the inner stream; if it is
/// scheduled and has nothing yet, a read returns `0` with the status left `.open`, and a later
/// read goes on where it stopped). Not thread-safe.
///
/// Wraps `crypto_secretstream_xchacha20poly1305_init_pull` and `…_pull`.
public final class DecryptingInputStream: ByteInputStream {
    private enum Phase { case head, length, body, plaintext, end }

    private let inner: ByteInputStream
    private let key: SecretStreamKey
    private let closesInnerStream: Bool
    private let additionalData: [UInt8]
    /// The largest chunk size this reader accepts from the prefix, in bytes.
    private let maximumChunkSize: Int
    private var phase = Phase.head
    /// The prefix and the secretstream header.
    private var head = [UInt8](repeating: 0, count: SecretStreamFraming.prefixByteCount + SecretStreamFraming.headerByteCount)
    private var lengthField = [UInt8](repeating: 0, count: SecretStreamFraming.lengthByteCount)
    /// The bytes of the field or chunk being read that are there so far.
    private var filled = 0
    /// The plaintext chunk size from the prefix; 0 until it is read.
    public private(set) var chunkSize = 0
    private var ciphertext: UnsafeMutablePointer<UInt8>?
    private var plaintext: UnsafeMutablePointer<UInt8>?
    private var bodyLength = 0
    private var plaintextCount = 0
    private var plaintextPosition = 0
    private var chunkNumber = 0
    private var chunkStart: Int64 = 0
    private var finalSeen = false
    private let state: UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>
    /// The encrypted bytes read from the inner stream so far.
    public private(set) var encryptedByteCount: Int64 = 0
    /// The plaintext bytes given out so far.
    public private(set) var plaintextByteCount: Int64 = 0

    /// A stream that decrypts `inner` with `key`.
    /// - Parameters:
    ///   - inner: The encrypted bytes.
    ///   - key: The 32-byte key they were encrypted with; kept (not copied) for the stream's life.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    ///   - additionalData: The bytes the writer bound to chunk 1 (``EncryptingOutputStream``'s
    ///     `additionalData`); others fail chunk 1's authentication. Default: none.
    ///   - maximumChunkSize: The largest plaintext chunk size the prefix may announce, in
    ///     bytes, `1...SecretStreamFraming.maximumChunkSize` (the default): a larger one is
    ///     ``SecretStreamError/chunkSizeOverLimit(_:limit:offset:)`` before anything is
    ///     allocated, so a peer that is not yet authenticated cannot make this reader buffer
    ///     more than about twice that.
    /// - Throws: `ByteStreamError`'s `invalidArgument` for a `maximumChunkSize` out of range;
    ///   ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start.
    public init(wrapping inner: ByteInputStream, key: SecretStreamKey, closesInnerStream: Bool = true,
                additionalData: [UInt8] = [], maximumChunkSize: Int = SecretStreamFraming.maximumChunkSize) throws {
        try requireArgument(maximumChunkSize, in: SecretStreamFraming.chunkSizes, "maximumChunkSize",
                            operation: "create DecryptingInputStream")
        try requireSodium()
        self.maximumChunkSize = maximumChunkSize
        self.inner = inner
        self.key = key
        self.closesInnerStream = closesInnerStream
        self.additionalData = additionalData
        state = .allocate(capacity: 1)
        super.init()
    }

    deinit {
        releaseBuffers()
        state.deallocate()
    }

    /// Opens the inner stream unless it is open; the prefix and header are read by the first
    /// read.
    override public func openBacking() throws {
        try inner.openUnlessOpened()
    }

    /// Releases the buffers and closes the inner stream when `closesInnerStream`.
    override public func closeBacking() throws {
        releaseBuffers()
        if closesInnerStream {
            inner.close()
            if inner.streamStatus == .error, let error = inner.streamError { throw error }
        }
    }

    /// Gives out plaintext of chunks that have authenticated, reading and decrypting the next
    /// chunk when none is left; `0` only after the final chunk.
    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        while true {
            switch phase {
            case .plaintext:
                if plaintextPosition < plaintextCount, let plaintext {
                    let count = min(maxLength, plaintextCount - plaintextPosition)
                    buffer.update(from: plaintext + plaintextPosition, count: count)
                    plaintextPosition += count
                    plaintextByteCount += Int64(count)
                    return count
                }
                phase = finalSeen ? .end : .length
                filled = 0
            case .head:
                let complete = try head.withUnsafeMutableBufferPointer { try fill($0.baseAddress!, count: $0.count) }
                try startPulling(complete: complete)
                phase = .length
                filled = 0
            case .length:
                if filled == 0 {
                    chunkNumber += 1
                    chunkStart = encryptedByteCount
                }
                guard try lengthField.withUnsafeMutableBufferPointer({ try fill($0.baseAddress!, count: $0.count) }) else {
                    throw SecretStreamError.truncated(chunk: chunkNumber, offset: encryptedByteCount)
                }
                let length = lengthField.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                let overhead = SecretStreamFraming.chunkOverhead
                guard (overhead...(chunkSize + overhead)).contains(Int(length)) else {
                    throw SecretStreamError.invalidChunkLength(length, chunk: chunkNumber, offset: chunkStart)
                }
                bodyLength = Int(length)
                phase = .body
                filled = 0
            case .body:
                guard let ciphertext, let plaintext else { preconditionFailure("buffers are made with the prefix") }
                guard try fill(ciphertext, count: bodyLength) else {
                    throw SecretStreamError.truncated(chunk: chunkNumber, offset: encryptedByteCount)
                }
                try pull(ciphertext, into: plaintext)
                phase = .plaintext
            case .end:
                var byte: UInt8 = 0
                let offset = encryptedByteCount
                if try fill(&byte, count: 1) { throw SecretStreamError.trailingData(offset: offset) }
                return 0
            }
        }
    }

    /// Checks the prefix, allocates the chunk buffers and starts libsodium's pull state.
    /// - Parameter complete: Whether all 33 bytes are there (else the input ended early).
    private func startPulling(complete: Bool) throws {
        let available = complete ? head.count : filled
        let magic = SecretStreamFraming.magic
        guard head[0..<min(available, magic.count)].elementsEqual(magic.prefix(available)) else {
            throw SecretStreamError.notSecretStream(offset: 0)
        }
        if available > 4, head[4] != SecretStreamFraming.version {
            throw SecretStreamError.unsupportedVersion(head[4], offset: 4)
        }
        if available >= SecretStreamFraming.prefixByteCount {
            let size = head[5..<9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard SecretStreamFraming.chunkSizes.contains(Int(size)) else {
                throw SecretStreamError.invalidChunkSize(size, offset: 5)
            }
            guard Int(size) <= maximumChunkSize else {
                throw SecretStreamError.chunkSizeOverLimit(size, limit: maximumChunkSize, offset: 5)
            }
            chunkSize = Int(size)
        }
        guard complete else { throw SecretStreamError.truncated(chunk: 0, offset: encryptedByteCount) }
        let code = head.withUnsafeBufferPointer {
            crypto_secretstream_xchacha20poly1305_init_pull(state, $0.baseAddress! + SecretStreamFraming.prefixByteCount,
                                                            key.pointer)
        }
        guard code == 0 else {
            throw SecretStreamError.sodiumFailure(function: "crypto_secretstream_xchacha20poly1305_init_pull")
        }
        ciphertext = .allocate(capacity: chunkSize + SecretStreamFraming.chunkOverhead)
        plaintext = .allocate(capacity: chunkSize)
    }

    /// Authenticates and decrypts the chunk in `ciphertext` (its length in `bodyLength`).
    private func pull(_ ciphertext: UnsafeMutablePointer<UInt8>, into plaintext: UnsafeMutablePointer<UInt8>) throws {
        let additional = SecretStreamFraming.additionalData(chunk: chunkNumber, prefix: Array(head[0..<SecretStreamFraming.prefixByteCount]),
                                                            lengthField: lengthField, bound: additionalData)
        var count: UInt64 = 0
        var tag: UInt8 = 0
        let code = additional.withUnsafeBufferPointer { ad in
            crypto_secretstream_xchacha20poly1305_pull(state, plaintext, &count, &tag, ciphertext, UInt64(bodyLength),
                                                       ad.baseAddress, UInt64(ad.count))
        }
        guard code == 0 else {
            throw SecretStreamError.authenticationFailed(chunk: chunkNumber, offset: chunkStart)
        }
        plaintextCount = Int(count)
        plaintextPosition = 0
        finalSeen = tag == UInt8(crypto_secretstream_xchacha20poly1305_tag_final())
    }

    /// Reads from the inner stream into `buffer` until `count` bytes of it are there, counting
    /// from `filled` (kept across calls, so a read that would block goes on later).
    /// - Returns: `false` when the input ended first.
    private func fill(_ buffer: UnsafeMutablePointer<UInt8>, count: Int) throws -> Bool {
        while filled < count {
            let read = inner.read(buffer + filled, maxLength: count - filled)
            if read < 0 { throw inner.streamErrorOrFallback(operation: "read") }
            if read == 0 {
                if inner.streamStatus == .open { throw WouldBlock() }
                return false
            }
            filled += read
            encryptedByteCount += Int64(read)
        }
        return true
    }

    /// Zeroes and frees the chunk buffers and zeroes the pull state.
    private func releaseBuffers() {
        sodium_memzero(state, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        if let plaintext {
            sodium_memzero(plaintext, chunkSize)
            plaintext.deallocate()
        }
        ciphertext?.deallocate()
        plaintext = nil
        ciphertext = nil
    }
}

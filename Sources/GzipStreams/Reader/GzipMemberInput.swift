import ByteStreams

/// The compressed input of a gzip reader: one buffer of `chunkSize` bytes allocated once and
/// refilled from an inner stream, byte-wise peek and take for headers, trailers and what follows
/// a member, and the decoder's view of the unread bytes (``buffer`` from ``start`` to ``end``).
/// As Go's `gzip.Reader` feeds its header parser and its inflater from one buffered reader,
/// ``GzipInputStream``, ``GzipIndexBuilder`` and ``BGZFMemberFramer`` read through this; the
/// member framing itself (header, trailer, what follows) is written once, in ``GzipMemberSource``.
///
/// Besides reading, it can give bytes back: the up to 8 bytes ISA-L read past a member's end
/// (``pushBack(_:)``); the bytes of a parsing step that a scheduled inner stream cut short
/// (``transcript``, ``giveBack(_:from:)``); and a member's deflate data from its first byte
/// again (``markForRewind(keepLimit:)``, ``rewindToMark()``), by seeking the inner stream when it
/// can (``rewindBase``), else from a copy kept while the member is read.
///
/// A reader that lends whole members (``BGZFMemberFramer``) asks for a larger buffer and
/// ``stage(_:)``s a member's bytes one after another in it.
///
/// Memory: `chunkSize + 336` bytes (or the capacity asked for), plus whatever copy is asked for.
/// Does not open or close the inner stream. Used by one thread at a time.
final class GzipMemberInput: GzipMemberSource {
    /// The most bytes ISA-L can hold past a point of the deflate data and give back: its
    /// 64-bit bit buffer (past the end of the data), or that and its buffer of a block header
    /// it began (328 bytes, past a block boundary it was asked to find).
    static let maximumReadAhead = 8 + 328

    let inner: ByteInputStream
    /// The bytes asked of the inner stream per read.
    let chunkSize: Int
    /// Whether a read of 0 bytes with the inner stream still open means "nothing yet" (a
    /// scheduled inner stream: `WouldBlock` is thrown) rather than the end.
    private let followsReadiness: Bool
    /// `capacity` bytes: by default `chunkSize + maximumReadAhead`, room for what ISA-L read
    /// ahead, put back in front.
    let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// The unread bytes are `buffer[start..<end]`.
    var start = 0
    var end = 0
    /// The compressed-input offset of `buffer[0]`.
    private(set) var bufferOffset: Int64

    /// Bytes served before the inner stream is read again: a replay, or an undone step's bytes.
    private var givenBack: [UInt8] = []
    private var givenBackCursor = 0
    /// When set, every chunk read is appended: the bytes a parsing step consumed, so that it
    /// can be undone (``giveBack(_:from:)``).
    var transcript: [UInt8]?

    /// The inner stream's offset at compressed offset 0, when it can seek (a regular file);
    /// set by the owner, `nil` for an inner stream that cannot.
    var rewindBase: Int64?
    /// Where ``rewindToMark()`` goes back to.
    private var markOffset: Int64 = 0
    /// The bytes from `markOffset` on, kept while `isKeeping` (an inner stream that cannot seek).
    private var kept: [UInt8] = []
    private var isKeeping = false
    private var keepLimit = 0

    /// Whether the last bytes before each refill are kept, for ``lastBytes``.
    var keepsLastBytes = false
    private var bytesBeforeBuffer: [UInt8] = []

    /// - Parameters:
    ///   - inner: The compressed input, read from its current position, which is `offset`.
    ///   - chunkSize: The bytes of each read, `1...ByteStream.maximumChunkSize`.
    ///   - offset: The compressed-input offset in bytes of the inner stream's next byte.
    ///   - capacity: The buffer's size in bytes, at least `chunkSize + maximumReadAhead` (the
    ///     default); a reader that ``stage(_:)``s `count` bytes needs `count + chunkSize`.
    ///   - followsReadiness: See the property; `false` for blocking readers.
    init(inner: ByteInputStream, chunkSize: Int, offset: Int64 = 0, capacity: Int? = nil, followsReadiness: Bool) {
        self.inner = inner
        self.chunkSize = chunkSize
        self.bufferOffset = offset
        self.followsReadiness = followsReadiness
        self.capacity = max(capacity ?? 0, chunkSize + Self.maximumReadAhead)
        buffer = .allocate(capacity: self.capacity)
    }

    deinit {
        buffer.deallocate()
    }

    /// The compressed-input offset in bytes of the next unread byte.
    var position: Int64 { bufferOffset + Int64(start) }

    /// Whether unread bytes are buffered.
    var hasUnreadBytes: Bool { start < end }

    /// Reads the next chunk once the buffer is used up: from the bytes given back first, else
    /// from the inner stream.
    /// - Returns: `false` at the end of the input.
    /// - Throws: The inner stream's error; `WouldBlock` when it follows readiness and has
    ///   nothing yet. Blocks as the inner stream's read blocks.
    func refill() throws -> Bool {
        if keepsLastBytes { bytesBeforeBuffer = lastBytes }
        bufferOffset += Int64(end)
        start = 0
        end = 0
        end = try read(into: buffer)
        return end > 0
    }

    /// Reads until at least `count` unread bytes lie one after another in the buffer, moving
    /// the unread bytes to its start when a read would not fit after them (at most `count`
    /// bytes move per read).
    /// - Returns: `false` when the input ends first.
    /// - Throws: As ``refill()``.
    /// - Precondition: `count + chunkSize` fits the buffer's capacity.
    func stage(_ count: Int) throws -> Bool {
        while end - start < count {
            if capacity - end < chunkSize {
                let unread = end - start
                precondition(unread + chunkSize <= capacity)
                UnsafeMutableRawPointer(buffer).copyMemory(from: buffer + start, byteCount: unread)
                bufferOffset += Int64(start)
                start = 0
                end = unread
            }
            let count = try read(into: buffer + end)
            if count == 0 { return false }
            end += count
        }
        return true
    }

    /// Reads up to `chunkSize` bytes into `destination`: from the bytes given back first, else
    /// from the inner stream; copies them where asked. - Returns: The bytes read, `0` at the end.
    private func read(into destination: UnsafeMutablePointer<UInt8>) throws -> Int {
        let count: Int
        if givenBackCursor < givenBack.count {
            count = min(chunkSize, givenBack.count - givenBackCursor)
            givenBack.withUnsafeBufferPointer { destination.update(from: $0.baseAddress! + givenBackCursor, count: count) }
            givenBackCursor += count
            if givenBackCursor == givenBack.count { givenBack = [] }
        } else {
            count = inner.read(destination, maxLength: chunkSize)
            if count < 0 {
                throw inner.streamErrorOrFallback(operation: "read")
            }
            if count == 0, followsReadiness, inner.streamStatus == .open { throw WouldBlock() }
        }
        if isKeeping { keep(destination, count: count) }
        transcript?.append(contentsOf: UnsafeBufferPointer(start: destination, count: count))
        return count
    }

    func peekByte() throws -> UInt8? {
        if start == end, try !refill() { return nil }
        return buffer[start]
    }

    func skipByte() {
        start += 1
    }

    func putBack(_ byte: UInt8) {
        pushBack([byte])
    }

    /// Reads and drops the rest of the input. - Throws: As ``refill()``.
    func skipToEnd() throws {
        start = end
        while try refill() { start = end }
    }

    /// Puts `bytes` (at most ``maximumReadAhead``), which directly precede the unread input,
    /// back in front of it.
    func pushBack(_ bytes: [UInt8]) {
        let count = bytes.count
        guard count > 0 else { return }
        precondition(count <= Self.maximumReadAhead)
        if start < count {
            let unread = end - start
            UnsafeMutableRawPointer(buffer + count).copyMemory(from: buffer + start, byteCount: unread)
            bufferOffset += Int64(start - count)
            start = count
            end = count + unread
        }
        start -= count
        for index in 0..<count { buffer[start + index] = bytes[index] }
    }

    /// Puts `bytes`, the input from compressed offset `offset` on as far as it was read, in
    /// front of everything still to be served: the input goes back to `offset`.
    func giveBack(_ bytes: [UInt8], from offset: Int64) {
        givenBack = bytes + givenBack[min(givenBackCursor, givenBack.count)...]
        givenBackCursor = 0
        bufferOffset = offset
        start = 0
        end = 0
    }

    // MARK: Rewinding to a mark

    /// Remembers the current position for ``rewindToMark()``; when the inner stream cannot seek
    /// (``rewindBase`` `nil`), keeps a copy of the bytes from here on, up to `keepLimit` bytes
    /// (reserved at once: growing by doubling would hold the old and the new copy at once).
    func markForRewind(keepLimit: Int) {
        markOffset = position
        guard rewindBase == nil else { return }
        kept.removeAll(keepingCapacity: true)
        kept.reserveCapacity(keepLimit)
        self.keepLimit = keepLimit
        isKeeping = true
        keep(buffer + start, count: end - start)
    }

    /// Stops keeping bytes for a rewind (the marked run of bytes ended).
    func stopKeeping() {
        isKeeping = false
    }

    /// Goes back to the mark: seeks the inner stream there, or serves the kept copy again.
    /// - Returns: `false` when the bytes cannot be had again (no seek, and more than the keep
    ///   limit read since the mark, or a seek the inner stream refused).
    func rewindToMark() -> Bool {
        if let rewindBase {
            guard inner.setProperty(rewindBase + markOffset, forKey: .fileCurrentOffset) else { return false }
        } else {
            guard isKeeping else { return false }
            isKeeping = false
            givenBack = kept
            givenBackCursor = 0
            kept = []
        }
        bufferOffset = markOffset
        start = 0
        end = 0
        return true
    }

    private func keep(_ bytes: UnsafePointer<UInt8>, count: Int) {
        guard kept.count + count <= keepLimit else {
            isKeeping = false
            kept.removeAll(keepingCapacity: true)
            return
        }
        kept.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
    }

    /// With ``keepsLastBytes``: the last (up to 8) bytes read before ``position``; at the end,
    /// the input's last bytes.
    var lastBytes: [UInt8] {
        let size = GzipIndexSeal.tailSize
        let from = max(0, start - size)
        let inBuffer = Array(UnsafeBufferPointer(start: buffer + from, count: start - from))
        return Array((bytesBeforeBuffer + inBuffer).suffix(size))
    }
}

import ByteStreams
import CZlib

/// Reads gzip data (RFC 1952) from an inner input stream and yields the plain bytes: it
/// parses each member's header, inflates its deflate data, and checks the trailer's CRC-32
/// and ISIZE before going on to the next member; the members of a multi-member file are
/// read one after another as one stream of bytes (RFC 1952 §2.2).
///
/// Data is tentative until the trailer is checked: the bytes of a member are returned as they
/// are inflated, so a caller that must not act on corrupt data waits for the end of the stream
/// (a read returning `0`) before trusting what it got.
///
/// A read gives what the compressed bytes read so far decode to before it reads more from the
/// inner stream (and, polled, waits for it): after a writer's sync flush
/// (`GzipOutputStream.flush()`), every byte written before the flush, with no wait for the
/// writer's next bytes.
///
/// After the last member: zero bytes (padding) are skipped; bytes that begin with the gzip
/// magic must be a valid member; anything else is trailing garbage, handled as
/// ``TrailingGarbagePolicy`` says.
///
/// Errors (``ByteStream/streamError`` after a read returns `-1`, or thrown by the throwing
/// conveniences): ``GzipError`` for malformed input, each naming the byte offset in the
/// compressed input; the inner stream's own errors unchanged.
///
/// Memory: the inflate state (zlib's about 40 KiB, ISA-L's about 50 KiB, the 32 KiB window
/// included) and one input buffer of `chunkSize` bytes, whatever the size of the input; with
/// ISA-L on an input that cannot seek, also ``replayLimit`` bytes (1 MiB) for the current member.
/// The header's FNAME and FCOMMENT keep at most ``maximumHeaderFieldLength`` bytes each (the
/// rest is read and checked but not kept).
///
/// Scheduled (``ByteStream/schedule(on:)-(DispatchQueue)``), the stream follows its inner
/// stream: it schedules the inner stream on the same scheduler and takes its events (the inner
/// stream's own delegate is set aside until this stream is unscheduled or closed), decodes
/// ahead up to one chunk (`chunkSize` bytes of plain data, allocated when first scheduled) when
/// the inner stream has bytes, and posts ``ByteStream/Event/hasBytesAvailable`` only when it
/// has plain bytes to give: a socket that delivered a few header bytes gives no event.
/// ``ByteStream/Event/endEncountered`` comes once, after the last member's trailer was checked
/// and the inner stream's end met; ``ByteStream/Event/errorOccurred`` once, with the same
/// ``GzipError`` (and offset) and after the same bytes as a polled read of the same input.
/// A read never blocks then: with nothing decoded and nothing more from the inner stream yet,
/// it returns 0 and the status stays `.open`. A header, trailer or gap between members that is
/// cut by the wait is parsed again when more comes; its bytes so far are kept meanwhile (the
/// size of one header, FNAME and FCOMMENT included).
///
/// Wraps ISA-L's `isal_inflate` (default) or zlib's `inflate`.
public final class GzipInputStream: ByteInputStream, @unchecked Sendable {
    /// What to do with bytes after the last member that are neither zero padding nor a member.
    public enum TrailingGarbagePolicy: Sendable {
        /// The read that meets them returns `-1` with ``GzipError/trailingGarbage(offset:length:)``;
        /// every byte of the members before it has already been returned.
        case fail
        /// The stream ends normally and ``trailingGarbage`` tells where they were.
        case ignore
        /// Input that is not gzip is returned unchanged, as `gzip -cdf` (`zcat -f`) does: the
        /// whole input when its first two bytes are not the gzip magic (an empty input gives no
        /// bytes and no error), and everything after a member that is not followed by the
        /// magic, zero padding included. Bytes that begin with the magic must still be a valid
        /// member. ``trailingGarbage`` stays `nil`; the bytes count in ``uncompressedByteCount``
        /// and against the output limit.
        case passThrough
    }

    /// Where the trailing garbage is: its offset in the compressed input and its length, in bytes.
    public struct TrailingGarbage: Equatable, Sendable {
        public var offset: Int64
        public var length: Int64
    }

    /// One complete, checked member, as passed to ``memberHandler``.
    public struct Member: Equatable, Sendable {
        /// 1 for the first member.
        public var index: Int
        /// The offset in bytes of the member's first header byte in the compressed input.
        public var offset: Int64
        public var header: GzipHeader
        /// The member's size in bytes in the compressed input: header, deflate data and trailer.
        public var compressedSize: Int64
        /// The number of bytes the member decoded to (exact, not modulo 2^32).
        public var uncompressedSize: Int64
        /// The CRC-32 of the decoded bytes, equal to the trailer's.
        public var crc32: UInt32
        /// `true` when FNAME or FCOMMENT was longer than ``maximumHeaderFieldLength`` and
        /// `header` holds only its start (the whole field was still read and checked).
        public var isHeaderFieldCut = false
        /// The size in bytes of the member's header in the compressed input, from the magic to
        /// the end of FHCRC (10 at least).
        public var headerSize: Int64 = 10
    }

    /// The most bytes of FNAME or FCOMMENT kept in ``header``: 64 KiB.
    public static let maximumHeaderFieldLength = 64 * 1024

    /// The read state machine. Each step of ``decode(into:maxLength:)`` runs one state; while the
    /// stream follows a scheduled inner stream that may have nothing yet, a step that parses
    /// (`streamStart`, `betweenMembers`, `trailer`) is undone and retried when more comes, and
    /// the others resume where they stopped.
    private enum State { case streamStart, deflateData, trailer, betweenMembers, padding, garbage, passingThrough, end }

    /// The deflate decoders ``GzipInputStream`` can use (RFC 1951 both).
    public enum Inflater: Sendable {
        /// zlib's `inflate`: the reference for every error and offset, and the decoder on a
        /// platform without ISA-L.
        case zlib
        /// ISA-L's `isal_inflate` (Debian `libisal-dev`), what igzip uses, and the default:
        /// about twice as fast as zlib here on a 256 MiB gzip -6 file, and the same bytes for
        /// every valid input.
        ///
        /// Damaged deflate data gets zlib's answer: when ISA-L rejects a member's deflate data,
        /// or the input ends inside it, the member is decoded again with zlib from its first
        /// deflate byte, the bytes already returned are skipped, and the rest of the member is
        /// zlib's (its bytes, its error and offset). The member's compressed bytes come back
        /// from the inner stream when it can seek (a regular file: ``ByteStream/PropertyKey/fileCurrentOffset``),
        /// otherwise from a copy kept while the member is read, up to ``replayLimit`` (1 MiB) of
        /// it. Past that limit on an input that cannot seek, the error is ISA-L's own: the same
        /// kind (`invalidDeflateData` or `truncated`), with ISA-L's reason, an offset up to 8
        /// bytes further on (ISA-L reads ahead), and perhaps fewer of the bytes before it.
        /// One leniency remains: zlib rejects a dynamic block whose distance code is incomplete
        /// or over-subscribed at its header; ISA-L only when a code it lacks is used. Such a
        /// block's literals may come out before zlib's error (zlib's
        /// `infcover-invalid-distances-set.gz`: 21 bytes, then zlib's error at zlib's offset),
        /// and a member whose block never uses the missing code decodes, when its CRC-32 and
        /// ISIZE check (found by `make fuzz`).
        case isal
    }

    private let inner: ByteInputStream
    private let closesInnerStream: Bool
    private let chunkSize: Int
    private let trailingGarbagePolicy: TrailingGarbagePolicy
    /// The decompression limit in bytes, or `nil` for none.
    public let maximumOutputSize: Int64?
    /// Which inflate decodes the deflate data.
    public let inflater: Inflater
    private var zstream: ZStream?
    private var isal: IsalInflater?
    /// The most bytes of one member's deflate data kept to decode it again with zlib when
    /// ISA-L fails on an input that cannot seek: 1 MiB (reserved once, filled as the member is
    /// read, so memory stays within 2 MiB of a small input's).
    public static let replayLimit = 1024 * 1024
    /// The inner stream's offset at open, when it can seek: where compressed offset 0 is.
    private var rewindBase: Int64?
    /// The compressed-input offset of the current member's first deflate byte.
    private var deflateStart: Int64 = 0
    /// Set when ISA-L failed in this member and zlib decodes the rest of it.
    private var memberUsesZlib = false
    /// The member's compressed bytes from `deflateStart`, kept while `isRecording`.
    private var replay: [UInt8] = []
    private var isRecording = false
    /// Bytes `refill` serves before reading the inner stream again: a member's replay.
    private var replayPending: [UInt8] = []
    private var replayCursor = 0
    /// After zlib took over a member: the bytes it decodes again that ISA-L already returned.
    private var bytesToSkip: Int64 = 0
    private var state = State.streamStart
    /// Where zero padding or trailing garbage began (states `padding` and `garbage`).
    private var garbageStart: Int64 = 0

    /// What a parsing step changes before it can fail for want of input, and the input it
    /// consumed: restored, and the input given back, when the inner stream has nothing yet.
    private struct Checkpoint {
        var state: State
        var position: Int64
        var memberIndex: Int
        var memberOffset: Int64
        /// The input from `position` on, as far as it has been read.
        var bytes: [UInt8]
    }

    /// Set during a parsing step while the stream follows its scheduled inner stream.
    private var checkpoint: Checkpoint?
    /// Watches the scheduled inner stream; set while this stream is scheduled and open.
    private var innerEvents: InnerStreamEvents?
    /// Plain bytes decoded ahead by a scheduled stream, so that it says "has bytes available"
    /// only when it has some: one chunk, allocated when first scheduled.
    private var lookahead: UnsafeMutablePointer<UInt8>?
    private var lookaheadStart = 0
    private var lookaheadEnd = 0

    private let inputBuffer: UnsafeMutablePointer<UInt8>
    private var inputStart = 0
    private var inputEnd = 0
    /// The compressed-input offset of `inputBuffer[0]`.
    private var bufferOffset: Int64 = 0

    private var memberIndex = 0
    private var memberOffset: Int64 = 0
    private var memberHeader = GzipHeader()
    private var memberHeaderFieldCut = false
    private var memberHeaderSize: Int64 = 0
    /// Under ``TrailingGarbagePolicy/passThrough``: a lone magic byte already consumed, given
    /// back before the rest of the input.
    private var passThroughLead: [UInt8] = []
    private var memberCRC: UInt32 = 0
    private var memberSize: Int64 = 0
    /// An error met after some bytes of the same inflate call: those bytes are returned first,
    /// so what a caller gets does not depend on buffer sizes.
    /// The decoder's last call filled its room: it may hold output that needs no more input,
    /// so it is asked again before the inner stream is read.
    private var decoderFilledOutput = false
    private var pendingError: GzipError?

    /// The first member's header, once it has been read (after the first read).
    public private(set) var header: GzipHeader?
    /// The number of members read and checked so far.
    public private(set) var memberCount = 0
    /// The number of plain bytes decoded so far: those returned, plus, while scheduled, up to
    /// one chunk decoded ahead.
    public private(set) var uncompressedByteCount: Int64 = 0
    /// Set when trailing garbage was met under ``TrailingGarbagePolicy/ignore`` (or `.fail`).
    public private(set) var trailingGarbage: TrailingGarbage?
    /// Called after each member's trailer has been checked, on the thread that reads (while
    /// scheduled: on the scheduler, possibly while decoding ahead of the reads).
    public var memberHandler: ((Member) -> Void)?

    /// A stream that inflates the gzip data in `inner`.
    /// - Parameters:
    ///   - inner: The compressed input.
    ///   - chunkSize: The size in bytes of each read from `inner`,
    ///     `1...ByteStream.maximumChunkSize`; default 4096.
    ///   - trailingGarbage: What to do with non-gzip bytes after the last member (and, for
    ///     ``TrailingGarbagePolicy/passThrough``, with an input that is not gzip); default `.fail`.
    ///   - maximumOutputSize: A decompression limit in bytes, `>= 0`: decoding more is
    ///     ``GzipError/outputLimitExceeded(limit:offset:)``; default none.
    ///   - inflater: The deflate decoder: ``Inflater/isal`` (the default, about twice as fast)
    ///     or ``Inflater/zlib``; they differ only as ``Inflater/isal`` says.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `chunkSize` or `maximumOutputSize` out of range; nothing is allocated then.
    public convenience init(wrapping inner: ByteInputStream, chunkSize: Int = ByteStream.defaultChunkSize,
                            trailingGarbage: TrailingGarbagePolicy = .fail, maximumOutputSize: Int64? = nil,
                            inflater: Inflater = .isal, closesInnerStream: Bool = true) throws(ByteStreamError) {
        let operation = "create GzipInputStream"
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        if let maximumOutputSize {
            try requireArgument(maximumOutputSize, in: 0...Int.max, "maximumOutputSize", operation: operation)
        }
        self.init(checkedInner: inner, chunkSize: chunkSize, trailingGarbage: trailingGarbage,
                  maximumOutputSize: maximumOutputSize, inflater: inflater, closesInnerStream: closesInnerStream)
    }

    /// The initialiser behind the public one, for arguments already checked.
    private init(checkedInner inner: ByteInputStream, chunkSize: Int, trailingGarbage: TrailingGarbagePolicy,
                 maximumOutputSize: Int64?, inflater: Inflater, closesInnerStream: Bool) {
        self.inner = inner
        self.chunkSize = chunkSize
        self.trailingGarbagePolicy = trailingGarbage
        self.maximumOutputSize = maximumOutputSize
        self.closesInnerStream = closesInnerStream
        self.inflater = inflater
        // Room for the bytes ISA-L read ahead of a member's end, put back in front.
        self.inputBuffer = .allocate(capacity: chunkSize + Self.maximumReadAhead)
        super.init()
    }

    deinit {
        zstream?.end()
        inputBuffer.deallocate()
        lookahead?.deallocate()
    }

    /// A stream that takes over a decode begun by another reader (``BGZFInputStream``'s
    /// fallback): `inner`'s first byte is the byte at `offset` of the whole compressed input, a
    /// member boundary, after `membersBefore` checked members that gave `bytesBefore` plain
    /// bytes and whose first header was `firstHeader`. Errors, member numbers, offsets, the
    /// output limit and the rules for what follows a member are then exactly those of one
    /// stream that read the whole input (with `membersBefore` 0 it is a fresh start: an empty
    /// rest is ``GzipError/emptyInput``). The inner stream is not closed.
    convenience init(resuming inner: ByteInputStream, at offset: Int64, membersBefore: Int, bytesBefore: Int64,
                     firstHeader: GzipHeader?, chunkSize: Int, trailingGarbage: TrailingGarbagePolicy,
                     maximumOutputSize: Int64?) {
        self.init(checkedInner: inner, chunkSize: chunkSize, trailingGarbage: trailingGarbage,
                  maximumOutputSize: maximumOutputSize, inflater: .isal, closesInnerStream: false)
        bufferOffset = offset
        memberIndex = membersBefore
        memberCount = membersBefore
        uncompressedByteCount = bytesBefore
        header = firstHeader
        if membersBefore > 0 { state = .betweenMembers }
    }

    /// Whether a read may return bytes. Scheduled: `true` when plain bytes are decoded ahead, or
    /// when the input buffer or the inner stream has bytes (or its end) that a read must try;
    /// a read never blocks then. Unscheduled: `true` while the stream is open, as in Cocoa.
    override public var hasBytesAvailable: Bool {
        guard streamStatus == .open else { return false }
        guard innerEvents != nil else { return true }
        return lookaheadStart < lookaheadEnd || inputStart < inputEnd || pendingError != nil
            || inner.streamStatus != .open || inner.hasBytesAvailable
    }

    /// The number of compressed bytes consumed so far.
    public var compressedByteCount: Int64 { bufferOffset + Int64(inputStart) }

    override public func openBacking() throws {
        if inner.streamStatus == .notOpen { inner.open() }
        try inner.throwIfFailed()
        switch inflater {
        case .zlib: zstream = try ZStream(inflate: ())
        case .isal:
            isal = IsalInflater()
            rewindBase = inner.property(forKey: .fileCurrentOffset) as? Int64
        }
    }

    override public func closeBacking() throws {
        zstream?.end()
        zstream = nil
        isal = nil
        if closesInnerStream {
            inner.close()
        }
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if lookaheadStart < lookaheadEnd, let lookahead {
            let count = min(maxLength, lookaheadEnd - lookaheadStart)
            buffer.update(from: lookahead + lookaheadStart, count: count)
            lookaheadStart += count
            return count
        }
        return try decode(into: buffer, maxLength: maxLength)
    }

    /// Decodes up to `maxLength` plain bytes into `buffer`: the state machine.
    /// - Returns: `1...maxLength` bytes, `0` at the end.
    /// - Throws: ``GzipError``, the inner stream's error, or `WouldBlock` when a scheduled inner
    ///   stream has nothing yet (the step that needed it is undone, to be retried).
    private func decode(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if let pendingError {
            throw pendingError
        }
        do {
            return try decodeSteps(into: buffer, maxLength: maxLength)
        } catch let wouldBlock as WouldBlock {
            rollBack()
            throw wouldBlock
        }
    }

    private func decodeSteps(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        while true {
            beginStep()
            switch state {
            case .streamStart:
                guard try peekByte() != nil else {
                    if trailingGarbagePolicy == .passThrough {
                        state = .end
                        return 0
                    }
                    throw GzipError.emptyInput
                }
                if trailingGarbagePolicy == .passThrough {
                    try readBetweenMembers()
                } else {
                    try readHeader()
                }
            case .betweenMembers:
                try readBetweenMembers()
            case .padding:
                try skipPadding()
            case .garbage:
                try skipTrailingGarbage()
            case .deflateData:
                let count = try inflate(into: buffer, maxLength: maxLength)
                if count > 0 { return count }
            case .trailer:
                try readTrailer()
            case .passingThrough:
                return try passThrough(into: buffer, maxLength: maxLength)
            case .end:
                return 0
            }
        }
    }

    // MARK: Input

    private var position: Int64 { bufferOffset + Int64(inputStart) }

    /// Reads the next chunk from the inner stream once the buffer is used up; `false` at its end.
    private func refill() throws -> Bool {
        bufferOffset += Int64(inputEnd)
        inputStart = 0
        inputEnd = 0
        let count: Int
        if replayCursor < replayPending.count {
            count = min(chunkSize, replayPending.count - replayCursor)
            replayPending.withUnsafeBufferPointer {
                inputBuffer.update(from: $0.baseAddress! + replayCursor, count: count)
            }
            replayCursor += count
            if replayCursor == replayPending.count { replayPending = [] }
        } else {
            count = inner.read(inputBuffer, maxLength: chunkSize)
            if count < 0 {
                throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read")
            }
            // A scheduled inner stream that has nothing yet returns 0 and stays open.
            if count == 0, inner.streamStatus == .open { throw WouldBlock() }
        }
        inputEnd = count
        if isRecording { record(inputBuffer, count: count) }
        checkpoint?.bytes.append(contentsOf: UnsafeBufferPointer(start: inputBuffer, count: count))
        return count > 0
    }

    /// Starts a step: a parsing step of a stream that follows a scheduled inner stream keeps
    /// what it needs to be undone; any other step needs none.
    private func beginStep() {
        guard innerEvents != nil, state == .streamStart || state == .betweenMembers || state == .trailer else {
            checkpoint = nil
            return
        }
        checkpoint = Checkpoint(state: state, position: position, memberIndex: memberIndex, memberOffset: memberOffset,
                                bytes: Array(UnsafeBufferPointer(start: inputBuffer + inputStart,
                                                                 count: inputEnd - inputStart)))
    }

    /// Undoes a parsing step that ran out of input: its state back, and the bytes it consumed
    /// put in front of the input, to be parsed again when more has come. The bytes kept are
    /// those of one header, trailer or gap between members.
    private func rollBack() {
        guard let checkpoint else { return }
        self.checkpoint = nil
        state = checkpoint.state
        memberIndex = checkpoint.memberIndex
        memberOffset = checkpoint.memberOffset
        replayPending = checkpoint.bytes + replayPending[min(replayCursor, replayPending.count)...]
        replayCursor = 0
        bufferOffset = checkpoint.position
        inputStart = 0
        inputEnd = 0
    }

    /// Keeps `count` bytes of the member's deflate data for a replay, or stops keeping them
    /// once the member has passed ``replayLimit``.
    private func record(_ bytes: UnsafePointer<UInt8>, count: Int) {
        guard replay.count + count <= replayCapacity else {
            isRecording = false
            replay.removeAll(keepingCapacity: true)
            return
        }
        replay.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
    }

    /// The most bytes kept for a replay: ``replayLimit``, or two chunks when they are larger.
    private var replayCapacity: Int { max(Self.replayLimit, 2 * chunkSize) }

    /// The most bytes ISA-L can have read past the end of deflate data: its 64-bit bit buffer.
    private static let maximumReadAhead = 8

    /// Puts `bytes`, which directly precede the unread input, back in front of it.
    private func pushBack(_ bytes: [UInt8]) {
        let count = bytes.count
        guard count > 0 else { return }
        precondition(count <= Self.maximumReadAhead)
        if inputStart < count {
            let unread = inputEnd - inputStart
            UnsafeMutableRawPointer(inputBuffer + count).copyMemory(from: inputBuffer + inputStart, byteCount: unread)
            bufferOffset += Int64(inputStart - count)
            inputStart = count
            inputEnd = count + unread
        }
        inputStart -= count
        for index in 0..<count { inputBuffer[inputStart + index] = bytes[index] }
    }

    private func peekByte() throws -> UInt8? {
        if inputStart == inputEnd, try !refill() { return nil }
        return inputBuffer[inputStart]
    }

    private func nextByte() throws -> UInt8? {
        guard let byte = try peekByte() else { return nil }
        inputStart += 1
        return byte
    }

    // MARK: Header (RFC 1952 §2.3.1)

    /// Reads a whole header, the magic included, and readies the decoder for the member's data.
    private func readHeader() throws {
        memberIndex += 1
        memberOffset = position
        var parser = GzipHeaderParser(member: memberIndex, offset: memberOffset,
                                      maximumFieldLength: Self.maximumHeaderFieldLength)
        try readHeader(with: &parser)
    }

    /// Feeds `parser` the rest of the header, then starts the member's deflate data.
    /// - Throws: The parser's ``GzipError``; ``GzipError/truncated(member:part:offset:)`` when
    ///   the input ends inside the header.
    private func readHeader(with parser: inout GzipHeaderParser) throws {
        while !parser.isDone {
            guard let byte = try nextByte() else {
                throw GzipError.truncated(member: memberIndex, part: .header, offset: position)
            }
            _ = try parser.consume(byte)
        }
        let fields = parser.header
        memberHeaderFieldCut = parser.isFieldCut
        memberHeader = fields
        memberHeaderSize = position - memberOffset
        if header == nil { header = fields }
        memberCRC = 0
        memberSize = 0
        zstream?.reset()
        decoderFilledOutput = false
        if let isal {
            isal.reset()
            memberUsesZlib = false
            deflateStart = position
            if rewindBase == nil {
                replay.removeAll(keepingCapacity: true)
                // Growing by doubling would hold the old and the new copy at once.
                replay.reserveCapacity(replayCapacity)
                isRecording = true
                record(inputBuffer + inputStart, count: inputEnd - inputStart)
            }
        }
        state = .deflateData
    }

    // MARK: Deflate data

    /// Inflates into `buffer`; returns the bytes produced, `0` when the member's deflate data
    /// ended without producing more.
    private func inflate(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if let isal, !memberUsesZlib { return try inflateWithIsal(isal, into: buffer, maxLength: maxLength) }
        if bytesToSkip > 0 {
            try skipReturnedBytes()
            if state != .deflateData { return 0 }
        }
        let (produced, error) = try inflateWithZlib(into: buffer, capacity: outputCapacity(maxLength))
        return try give(buffer, produced: produced, then: error)
    }

    /// The bytes one inflate call made, then its `failure` if any: thrown now when there are
    /// no bytes, else kept for the next read, so that what a caller gets does not depend on
    /// buffer sizes. The bytes are accounted (CRC-32, sizes, the output limit).
    private func give(_ buffer: UnsafeMutablePointer<UInt8>, produced: Int, then failure: GzipError?) throws -> Int {
        if let failure {
            if produced == 0 { throw failure }
            pendingError = failure
        }
        return try account(buffer, produced: produced)
    }

    /// One zlib inflate into `buffer`, refilling the input as needed, until it produces bytes,
    /// the deflate data ends (state `.trailer`) or the data is invalid (returned, so that the
    /// bytes before it can be given first). Accounts nothing.
    private func inflateWithZlib(into buffer: UnsafeMutablePointer<UInt8>,
                                 capacity: Int) throws -> (produced: Int, error: GzipError?) {
        guard let zstream else { throw ByteStreamError(.notOpen, operation: "read") }
        let z = zstream.pointer
        z.pointee.next_out = buffer
        z.pointee.avail_out = UInt32(capacity)
        defer {
            z.pointee.next_in = nil
            z.pointee.next_out = nil
        }
        while true {
            // Read more only when zlib needs it: after a call that filled its room, zlib may
            // hold output that needs no more input (the rest of a match, symbols whose bits it
            // took: after a sync flush, all of them). Read then, and those bytes would wait for
            // the peer's next bytes: forever, for a peer that sync-flushed and waits for an answer.
            var inputEnded = false
            if inputStart == inputEnd, !decoderFilledOutput, try !refill() {
                // zlib may still hold output without more input: one more call gives it.
                inputEnded = true
            }
            z.pointee.next_in = inputBuffer + inputStart
            z.pointee.avail_in = UInt32(inputEnd - inputStart)
            let code = CZlib.inflate(z, Z_NO_FLUSH)
            decoderFilledOutput = z.pointee.avail_out == 0
            if inputEnded, code != Z_STREAM_END, capacity == Int(z.pointee.avail_out) {
                throw GzipError.truncated(member: memberIndex, part: .deflateData, offset: position)
            }
            inputStart = inputEnd - Int(z.pointee.avail_in)
            let produced = capacity - Int(z.pointee.avail_out)
            switch code {
            case Z_STREAM_END:
                decoderFilledOutput = false
                state = .trailer
                return (produced, nil)
            case Z_OK, Z_BUF_ERROR:
                if produced > 0 { return (produced, nil) }
                if code == Z_BUF_ERROR && inputStart != inputEnd {
                    throw GzipError.zlibFailure(code: code, message: ZStream.message(for: code, stream: z))
                }
            case Z_DATA_ERROR, Z_NEED_DICT:
                return (produced, GzipError.invalidDeflateData(member: memberIndex,
                                                               message: ZStream.message(for: code, stream: z),
                                                               offset: position))
            default:
                throw GzipError.zlibFailure(code: code, message: ZStream.message(for: code, stream: z))
            }
        }
    }

    /// The room for one inflate call: `maxLength`, cut to one byte past the output limit.
    private func outputCapacity(_ maxLength: Int) -> Int {
        var capacity = min(maxLength, Int(UInt32.max))
        if let limit = maximumOutputSize {
            // One byte past the limit is enough to know it is exceeded.
            let remaining = limit - uncompressedByteCount
            if remaining < Int64(capacity) { capacity = Int(remaining) + 1 }
        }
        return capacity
    }

    /// Adds `produced` bytes at `buffer` to the member's CRC-32 and sizes, up to the output
    /// limit: past it, only the bytes up to the limit count, and the next read fails with
    /// ``GzipError/outputLimitExceeded(limit:offset:)`` (so exactly `maximumOutputSize` bytes
    /// come out, whatever the read sizes).
    /// - Returns: The bytes to return: `produced`, or fewer at the limit.
    /// - Throws: ``GzipError/outputLimitExceeded(limit:offset:)`` when no byte is left under it.
    private func account(_ buffer: UnsafeMutablePointer<UInt8>, produced: Int) throws -> Int {
        guard produced > 0 else { return 0 }
        var given = produced
        if let limit = maximumOutputSize, uncompressedByteCount + Int64(produced) > limit {
            given = Int(limit - uncompressedByteCount)
            let error = GzipError.outputLimitExceeded(limit: limit, offset: position)
            if given == 0 { throw error }
            pendingError = error
        }
        memberCRC = crc32(memberCRC, UnsafeRawBufferPointer(start: buffer, count: given))
        memberSize += Int64(given)
        uncompressedByteCount += Int64(given)
        return given
    }

    /// ``inflate(into:maxLength:)`` through ISA-L: the same contract, and the bytes ISA-L read
    /// past the deflate data are put back for the trailer. When ISA-L fails (invalid data, or
    /// the input ends inside the member), zlib takes the member over if it can (see
    /// ``Inflater/isal``), so the outcome is zlib's.
    private func inflateWithIsal(_ isal: IsalInflater, into buffer: UnsafeMutablePointer<UInt8>,
                                 maxLength: Int) throws -> Int {
        let capacity = outputCapacity(maxLength)
        var produced = 0
        var failure: GzipError?
        loop: while true {
            // As with zlib, more is read only when ISA-L needs it: after a step that filled its
            // room, its bit buffer and the input it copied aside may hold whole symbols (after a
            // sync flush, all of them). Asking it first on every read would instead return a
            // short read at each refill (unpack of a 256 MiB gzip -6 file: median 0.49 s against 0.45 s).
            if inputStart == inputEnd, !decoderFilledOutput, try !refill() {
                failure = GzipError.truncated(member: memberIndex, part: .deflateData, offset: position)
                break loop
            }
            let room = capacity - produced
            let step = isal.step(input: inputBuffer + inputStart, inputCount: inputEnd - inputStart,
                                 output: buffer + produced, outputCapacity: room)
            decoderFilledOutput = step.produced == room
            inputStart += step.consumed
            produced += step.produced
            switch step.outcome {
            case .streamEnd(let readAhead):
                decoderFilledOutput = false
                pushBack(readAhead)
                isRecording = false
                state = .trailer
                break loop
            case .progress:
                if produced > 0 { break loop }
            case .invalid(let reason):
                failure = GzipError.invalidDeflateData(member: memberIndex, message: reason, offset: position)
                break loop
            }
        }
        // On a failure the bytes of this call are left out: ISA-L can inflate a few bytes past
        // the point where zlib stops, and zlib's bytes replace them.
        if failure != nil, try continueMemberWithZlib() {
            return try inflate(into: buffer, maxLength: maxLength)
        }
        return try give(buffer, produced: produced, then: failure)
    }

    /// Decodes the current member again with zlib from its first deflate byte, skipping the
    /// bytes already returned, and leaves zlib to decode the rest of it.
    /// - Returns: `false` when the member's bytes cannot be had again (an input that cannot
    ///   seek, past ``replayLimit``).
    /// - Throws: zlib's error when it fails within the bytes already returned.
    private func continueMemberWithZlib() throws -> Bool {
        if let rewindBase {
            guard inner.setProperty(rewindBase + deflateStart, forKey: .fileCurrentOffset) else { return false }
        } else {
            guard isRecording else { return false }
            isRecording = false
            replayPending = replay
            replayCursor = 0
            replay = []
        }
        bufferOffset = deflateStart
        inputStart = 0
        inputEnd = 0
        if let zstream { zstream.reset() } else { zstream = try ZStream(inflate: ()) }
        decoderFilledOutput = false
        memberUsesZlib = true
        bytesToSkip = memberSize
        try skipReturnedBytes()
        return true
    }

    /// Decodes with zlib, and drops, the ``bytesToSkip`` bytes of the member already returned;
    /// resumable where a scheduled inner stream has nothing yet.
    /// - Throws: zlib's error when it fails within those bytes.
    private func skipReturnedBytes() throws {
        let scratchSize = 32 * 1024
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        while bytesToSkip > 0, state == .deflateData {
            let (produced, error) = try inflateWithZlib(into: scratch, capacity: Int(min(Int64(scratchSize), bytesToSkip)))
            bytesToSkip -= Int64(produced)
            if let error { throw error }
        }
        bytesToSkip = 0
    }

    // MARK: Trailer and what follows

    /// Reads and checks CRC-32 and ISIZE (RFC 1952 §2.3.1).
    private func readTrailer() throws {
        let trailerOffset = position
        var value: UInt64 = 0
        for index in 0..<GzipTrailer.size {
            guard let byte = try nextByte() else {
                throw GzipError.truncated(member: memberIndex, part: .trailer, offset: position)
            }
            value |= UInt64(byte) << UInt64(8 * index)
        }
        try GzipTrailer(littleEndian: value).check(crc32: memberCRC, plainSize: memberSize, member: memberIndex,
                                                   offset: trailerOffset)
        memberCount += 1
        memberHandler?(Member(index: memberIndex, offset: memberOffset, header: memberHeader,
                              compressedSize: position - memberOffset, uncompressedSize: memberSize,
                              crc32: memberCRC, isHeaderFieldCut: memberHeaderFieldCut,
                              headerSize: memberHeaderSize))
        state = .betweenMembers
    }

    /// Decides what follows a member (or, under ``TrailingGarbagePolicy/passThrough``, begins
    /// the input): the end, zero padding, another member, or garbage.
    private func readBetweenMembers() throws {
        let start = position
        guard let first = try peekByte() else {
            state = .end
            return
        }
        let passes = trailingGarbagePolicy == .passThrough
        switch first {
        case GzipFormat.magic.0:
            inputStart += 1
            guard let second = try peekByte() else {
                if passes {
                    passThroughLead = [first]
                    state = .passingThrough
                    return
                }
                // A lone 1f: the start of a header cut short.
                throw GzipError.truncated(member: memberIndex + 1, part: .header, offset: position)
            }
            if GzipFormat.isMagic(first, second) {
                inputStart += 1
                memberIndex += 1
                memberOffset = start
                var parser = GzipHeaderParser(member: memberIndex, offset: memberOffset,
                                              maximumFieldLength: Self.maximumHeaderFieldLength)
                _ = try parser.consume(first)
                _ = try parser.consume(second)
                try readHeader(with: &parser)
                return
            }
            if passes {
                passThroughLead = [first]
                state = .passingThrough
                return
            }
        case _ where passes:
            state = .passingThrough
            return
        case 0:
            garbageStart = start
            state = .padding
            return
        default:
            break
        }
        garbageStart = start
        state = .garbage
    }

    /// Skips zero padding after a member (state `padding`); the end of the input ends the
    /// stream, anything else makes the padding part of trailing garbage.
    private func skipPadding() throws {
        while let byte = try peekByte() {
            if byte != 0 {
                state = .garbage
                return
            }
            inputStart += 1
        }
        state = .end
    }

    /// Copies the rest of the input into `buffer` unchanged (``TrailingGarbagePolicy/passThrough``).
    /// - Returns: The bytes copied, `0` at the end of the input.
    private func passThrough(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let capacity = outputCapacity(maxLength)
        var count = 0
        if !passThroughLead.isEmpty, capacity > 0 {
            buffer[0] = passThroughLead.removeFirst()
            count = 1
        }
        if count < capacity {
            if inputStart == inputEnd {
                do {
                    _ = try refill()
                } catch is WouldBlock where count > 0 {
                    // The lead byte goes now; the rest when the inner stream has more.
                }
            }
            let copied = min(capacity - count, inputEnd - inputStart)
            (buffer + count).update(from: inputBuffer + inputStart, count: copied)
            inputStart += copied
            count += copied
        }
        if count == 0 { state = .end }
        // The bytes go through the member accounting for the output limit; no member follows,
        // so its CRC-32 and size are not looked at again.
        return try account(buffer, produced: count)
    }

    /// Reads to the end of the input to measure the garbage from ``garbageStart`` (state
    /// `garbage`), then fails or ends as the policy says.
    private func skipTrailingGarbage() throws {
        inputStart = inputEnd
        while try refill() { inputStart = inputEnd }
        let garbage = TrailingGarbage(offset: garbageStart, length: position - garbageStart)
        trailingGarbage = garbage
        state = .end
        if trailingGarbagePolicy == .fail {
            throw GzipError.trailingGarbage(offset: garbage.offset, length: garbage.length)
        }
    }
}

// MARK: Scheduling

/// A scheduled `GzipInputStream` follows its inner stream: it schedules the inner stream on its
/// own scheduler, decodes ahead one chunk when the inner stream has bytes, and says "has bytes
/// available" only once it has plain bytes to give.
extension GzipInputStream: FollowsInnerReadiness {
    package func startFollowingInnerStream() {
        guard innerEvents == nil, let scheduler else { return }
        if lookahead == nil { lookahead = .allocate(capacity: chunkSize) }
        innerEvents = InnerStreamEvents(inner: inner, scheduler: scheduler) { [weak self] event in
            if event != .openCompleted { self?.decodeAhead() }
        }
        // Bytes already in the input buffer need no event from the inner stream.
        schedulePump()
    }

    package func stopFollowingInnerStream() {
        innerEvents?.detach()
        innerEvents = nil
        checkpoint = nil
    }

    package func rearmAfterTransfer(wouldBlock: Bool) {
        if lookaheadStart < lookaheadEnd {
            post(.hasBytesAvailable)
        } else if !wouldBlock {
            // More may decode from the input already read; after a read that found nothing,
            // the inner stream's next event comes when it has more.
            schedulePump()
        }
    }

    private func schedulePump() {
        scheduler?.perform { [weak self] in self?.decodeAhead() }
    }

    /// On the scheduler: decodes one chunk into the lookahead when it is empty, then posts
    /// "has bytes available", or the end (status `.atEnd`), or the error; posts nothing when the
    /// inner stream has nothing yet (its next event calls this again).
    private func decodeAhead() {
        guard innerEvents != nil, streamStatus == .open, lookaheadStart == lookaheadEnd, let lookahead else { return }
        do {
            let count = try decode(into: lookahead, maxLength: chunkSize)
            lookaheadStart = 0
            lookaheadEnd = count
            if count > 0 {
                post(.hasBytesAvailable)
            } else {
                setStatus(.atEnd)
                post(.endEncountered)
            }
        } catch is WouldBlock {
            // The inner stream's read re-armed it.
        } catch {
            fail(error)
        }
    }
}

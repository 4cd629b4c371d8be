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
public final class GzipInputStream: ByteInputStream {
    // The stored state, by job; each job's code is in its own file (see the MARKs).

    // MARK: Settings

    private let closesInnerStream: Bool
    let trailingGarbagePolicy: TrailingGarbagePolicy
    /// The decompression limit in bytes, or `nil` for none.
    public let maximumOutputSize: Int?
    /// Which inflate decodes the deflate data.
    public let inflater: Inflater
    /// Records a GZIDX index from the decode, if given.
    let indexRecorder: GzipIndexRecorder?
    /// Where the members' trailers are checked when not on the reading thread (`nil`: here).
    public let trailerChecks: GzipTrailerChecks?

    // MARK: The state machine (decodeSteps, below)

    /// The read state machine. Each step of ``decode(into:maxLength:)`` runs one state; while the
    /// stream follows a scheduled inner stream that may have nothing yet, a step that parses
    /// (`streamStart`, `betweenMembers`, `trailer`) is undone and retried when more comes, and
    /// the others resume where they stopped. `padding` and `garbage` hold where those bytes
    /// began (and garbage its first bytes, ``TrailingGarbage/leadingBytes``).
    enum State: Equatable {
        case streamStart, deflateData, trailer, betweenMembers
        case padding(start: Int64)
        case garbage(start: Int64, leadingBytes: [UInt8])
        case passingThrough, end
    }

    var state = State.streamStart
    /// An error met after some bytes of the same inflate call: those bytes are returned first,
    /// so what a caller gets does not depend on buffer sizes.
    var pendingError: GzipError?
    /// Set during a parsing step while the stream follows its scheduled inner stream
    /// (GzipInputStream+Scheduling.swift).
    var checkpoint: Checkpoint?

    // MARK: Compressed input and member framing (GzipMemberInput.swift, GzipInputStream+Members.swift)

    /// The input buffer, refilled from the inner stream; it owns the buffer, not the stream.
    let input: GzipMemberInput
    /// The member being read: its number, offset, header, and the CRC-32 and size of the bytes
    /// decoded from it so far (`compressedSize` is set when its trailer is checked).
    var member = Member(index: 0, offset: 0, header: GzipHeader(), compressedSize: 0, uncompressedSize: 0, crc32: 0)

    // MARK: Deflate data (GzipInputStream+Inflate.swift, GzipInputStream+Replay.swift)

    var zstream: ZStream?
    var isal: IsalInflater?
    /// The decoder's last call filled its room: it may hold output that needs no more input,
    /// so it is asked again before the inner stream is read.
    var decoderFilledOutput = false
    /// Set when ISA-L failed in this member and zlib decodes the rest of it.
    var memberUsesZlib = false
    /// After zlib took over a member: the bytes it decodes again that ISA-L already returned.
    var bytesToSkip: Int64 = 0
    /// The block boundary the last inflate call stopped at, for ``indexRecorder``: the offset of
    /// the byte after the input it consumed, and the bits of the byte before that the next
    /// block begins with.
    var boundaryFound: (position: Int64, bits: Int)?

    // MARK: Scheduling (GzipInputStream+Scheduling.swift)

    /// Watches the scheduled inner stream; set while this stream is scheduled and open.
    var innerEvents: InnerStreamEvents?
    /// Plain bytes decoded ahead by a scheduled stream, so that it says "has bytes available"
    /// only when it has some: one chunk, allocated when first scheduled.
    var lookahead: UnsafeMutablePointer<UInt8>?
    var lookaheadStart = 0
    var lookaheadEnd = 0

    // MARK: Public state

    /// The first member's header, once it has been read (after the first read).
    public internal(set) var header: GzipHeader?
    /// The number of members read and checked so far.
    public internal(set) var memberCount = 0
    /// The number of plain bytes decoded so far: those returned, plus, while scheduled, up to
    /// one chunk decoded ahead.
    public internal(set) var uncompressedByteCount: Int64 = 0
    /// Set when trailing garbage was met under ``TrailingGarbagePolicy/ignore`` (or `.fail`).
    public internal(set) var trailingGarbage: TrailingGarbage?
    /// Whether the input ended with zero bytes after the last member (padding, skipped).
    public internal(set) var endedWithZeroPadding = false
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
    ///   - indexRecorder: Records a GZIDX index of the input from this stream's decode, to be
    ///     written once a read returned 0 (``GzipIndexRecorder/write(to:)``); default none.
    ///     The stream uses it from the thread that reads. Not with
    ///     ``TrailingGarbagePolicy/passThrough``: an index cannot describe bytes passed through.
    ///   - trailerChecks: Checks each member's CRC-32 and ISIZE where the bytes are written
    ///     (a ``GzipCheckingOutputStream``) instead of on the reading thread, which then does
    ///     not compute the CRC-32; default none. The caller must write every byte read, in
    ///     order, through that stream, and the data is tentative until
    ///     ``GzipTrailerChecks/finish()`` returns. ``Member/crc32`` is then the stored one.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `chunkSize` or `maximumOutputSize` out of range, or an `indexRecorder` with
    ///   ``TrailingGarbagePolicy/passThrough``; nothing is allocated then.
    public convenience init(wrapping inner: ByteInputStream, chunkSize: Int = ByteStream.defaultChunkSize,
                            trailingGarbage: TrailingGarbagePolicy = .fail, maximumOutputSize: Int? = nil,
                            inflater: Inflater = .isal, closesInnerStream: Bool = true,
                            indexRecorder: GzipIndexRecorder? = nil,
                            trailerChecks: GzipTrailerChecks? = nil) throws(ByteStreamError) {
        let operation = "create GzipInputStream"
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        if let maximumOutputSize {
            try requireArgument(maximumOutputSize, in: 0...Int.max, "maximumOutputSize", operation: operation)
        }
        if indexRecorder != nil, trailingGarbage == .passThrough {
            throw ByteStreamError(.invalidArgument(name: "indexRecorder",
                                                   message: "an index cannot describe bytes passed through unchanged"),
                                  operation: operation)
        }
        self.init(checkedInner: inner, chunkSize: chunkSize, trailingGarbage: trailingGarbage,
                  maximumOutputSize: maximumOutputSize, inflater: inflater, closesInnerStream: closesInnerStream,
                  indexRecorder: indexRecorder, trailerChecks: trailerChecks)
    }

    /// The initialiser behind the public one, for arguments already checked.
    private init(checkedInner inner: ByteInputStream, offset: Int64 = 0, chunkSize: Int,
                 trailingGarbage: TrailingGarbagePolicy, maximumOutputSize: Int?, inflater: Inflater,
                 closesInnerStream: Bool, indexRecorder: GzipIndexRecorder? = nil,
                 trailerChecks: GzipTrailerChecks? = nil) {
        self.trailingGarbagePolicy = trailingGarbage
        self.indexRecorder = indexRecorder
        self.trailerChecks = trailerChecks
        if let indexRecorder, let trailerChecks { indexRecorder.countLines(through: trailerChecks) }
        self.maximumOutputSize = maximumOutputSize
        self.closesInnerStream = closesInnerStream
        self.inflater = inflater
        self.input = GzipMemberInput(inner: inner, chunkSize: chunkSize, offset: offset, followsReadiness: true)
        // The index's seal binds it to the input's last bytes.
        input.keepsLastBytes = indexRecorder != nil
        super.init()
    }

    deinit {
        zstream?.end()
        lookahead?.deallocate()
    }

    /// A stream that takes over a decode begun by another reader (``BGZFInputStream``'s
    /// fallback): `inner`'s first byte is the byte at `offset` of the whole compressed input, a
    /// member boundary, after `membersBefore` checked members that gave `bytesBefore` plain
    /// bytes and whose first header was `firstHeader`. Errors, member numbers, offsets, the
    /// output limit and the rules for what follows a member are then exactly those of one
    /// stream that read the whole input (with `membersBefore` 0 it is a fresh start: an empty
    /// rest is ``GzipError/emptyInput``), decoding with `inflater`. The inner stream is not closed.
    convenience init(resuming inner: ByteInputStream, at offset: Int64, membersBefore: Int, bytesBefore: Int64,
                     firstHeader: GzipHeader?, chunkSize: Int, trailingGarbage: TrailingGarbagePolicy,
                     maximumOutputSize: Int?, inflater: Inflater) {
        self.init(checkedInner: inner, offset: offset, chunkSize: chunkSize, trailingGarbage: trailingGarbage,
                  maximumOutputSize: maximumOutputSize, inflater: inflater, closesInnerStream: false)
        member.index = membersBefore
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
        return lookaheadStart < lookaheadEnd || input.hasUnreadBytes || pendingError != nil
            || inner.streamStatus != .open || inner.hasBytesAvailable
    }

    /// The number of compressed bytes consumed so far.
    public var compressedByteCount: Int64 { input.position }

    /// The compressed input, read by ``input``.
    var inner: ByteInputStream { input.inner }
    /// The size in bytes of each read from the inner stream.
    var chunkSize: Int { input.chunkSize }

    override public func openBacking() throws {
        try inner.openUnlessOpened()
        switch inflater {
        case .zlib: zstream = try ZStream(inflate: ())
        case .isal:
            isal = IsalInflater()
            input.rewindBase = inner.property(forKey: .fileCurrentOffset) as? Int64
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
    func decode(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
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

    /// Runs states until one gives bytes or the end: one switch over named states, each step
    /// in the file of its job, as zlib's `gz_fetch` walks a file's members.
    private func decodeSteps(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        while true {
            beginStep()
            switch state {
            case .streamStart:
                guard try input.peekByte() != nil else {
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
            case .padding(let start):
                try skipPadding(from: start)
            case .garbage(let start, let leadingBytes):
                try skipTrailingGarbage(from: start, leadingBytes: leadingBytes)
            case .deflateData:
                let count = try inflate(into: buffer, maxLength: maxLength)
                if count > 0 { return count }
            case .trailer:
                try readTrailer()
            case .passingThrough:
                return try passThrough(into: buffer, maxLength: maxLength)
            case .end:
                indexRecorder?.finish(compressedSize: input.position, plainSize: uncompressedByteCount,
                                      memberCount: memberCount, lastBytes: input.lastBytes,
                                      trailingGarbage: trailingGarbage, endedWithZeroPadding: endedWithZeroPadding)
                return 0
            }
        }
    }
}

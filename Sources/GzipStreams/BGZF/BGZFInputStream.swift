import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads BGZF data (SAM/BAM specification §4.1) from an inner input stream and yields the plain
/// bytes, inflating on `threads` threads at once: the reading thread cuts the input into
/// whole members by their `BC` subfield (BSIZE + 1 bytes each, at most 64 KiB) without
/// inflating, `threads - 1` worker threads (one when `threads` is 1) inflate them in batches
/// (up to 512 KiB of plain bytes) with a whole-buffer decoder and check each member's CRC-32
/// and ISIZE, the reading thread inflates batches no worker has started whenever it would
/// otherwise wait for one, and the bytes are returned
/// in order (``readInPlace(maxLength:_:)`` lends them where the workers wrote them).
///
/// The decoder depends on `inflater`. With ``GzipInputStream/Inflater/zlib`` it is zlib's raw
/// inflate, and the result is exactly a ``GzipInputStream``'s with the same inflater: zlib's
/// verdict, for readers that must say whether a file is readable everywhere. With
/// ``GzipInputStream/Inflater/isal`` (the default, the fast path) it is ISA-L's
/// `isal_inflate_stateless`, which rejects what the sequential ISA-L reader rejects: the
/// reserved distance codes 30 and 31 and literal/length codes 286 and 287 are errors
/// (RFC 1951 §3.2.6), as in zlib, gzip, pigz and igzip. (libdeflate, what bgzip uses, decodes
/// them, as distance 24577 and more and length 258; it inflated the members of the 256 MiB
/// benchmark file made by `bgzip -l 6` with about a tenth less CPU time, 0.30 s against 0.33 s
/// on one core, but `fixtures/regressions/bgzf-reserved-distance-code.bgz` then decoded to
/// 40009 bytes with no error, where zlib fails after 40006.) ISA-L does accept a dynamic block
/// whose literal/length or distance code is incomplete until a missing code is used; the fast
/// path keeps such a member's bytes only when its CRC-32 and ISIZE match them, and otherwise
/// hands it to the sequential reader. Wherever zlib succeeds, the bytes are zlib's.
///
/// Apart from those members, the result is exactly ``GzipInputStream``'s for the same input,
/// `chunkSize`, `trailingGarbage`, `maximumOutputSize` and `inflater`: the same bytes, errors,
/// member numbers and offsets, counters and header. Whenever a member fails a fast check (the
/// decoder rejects it, CRC-32 or ISIZE differ, an ISIZE above 64 KiB), the next bytes are not a
/// BGZF member (a plain gzip member, zero padding, garbage, a member cut short, the end of an
/// empty input), or the output limit would be passed inside a member, the rest of the input
/// from that member's first byte on is decoded by a ``GzipInputStream`` with the same
/// `inflater` that takes over the state (member count, bytes so far, first header), so its
/// verdict is the sequential reader's. (It stays sequential to the end of the input: one
/// damaged member in a long file slows the rest.)
/// Data is tentative until a read returns `0`, as with ``GzipInputStream``.
///
/// Reads of the inner stream are the largest multiple of `chunkSize` up to 64 KiB; when the
/// sequential reader takes over, the inner stream is read on at the same offsets a
/// ``GzipInputStream`` over the whole input would read (an inner stream that returns full reads then gives the very same offsets in
/// every error, the output limit's included). A failed read of the inner stream is reported
/// once the bytes before it were decoded.
///
/// Why the reading thread helps rather than wait: it also frames the input and (in the command
/// line) writes the output, and with `threads` workers beside it on `threads` cores the
/// scheduler kept it off a core long enough for the workers to run out of framed batches.
/// Unpacking the benchmark's 256 MiB BGZF file into a file took a median 0.31 s this way
/// against 0.35 s with `threads` workers (bgzip -@ 2: 0.28 s), into a pipe 0.35 s against
/// 0.50 s (bgzip 0.40 s): 7 to 11 interleaved runs on a 2-core machine.
///
/// Memory: `2 × threads` batches at most, each allocated once when first needed and reused
/// (a batch closes at 512 KiB of plain bytes, 256 KiB of compressed bytes, or 64 members, and
/// has room for 576 KiB and 320 KiB of them: 1.8 MiB per thread), a buffer of two members and one 64 KiB read for
/// reading, and a decoder per worker (ISA-L's about 50 KiB, zlib's at most 44 KiB);
/// whatever the input size or the speed of the caller. Each worker allocates its state on its first batch; all are freed
/// when the stream closes. ``ByteStream/close()`` returns only after every worker has stopped.
///
/// ``ByteStream/open()`` opens the inner stream if it is not open yet; ``ByteStream/close()``
/// closes it unless `closesInnerStream` is `false`. Reads block while the oldest member is
/// being inflated. Not thread-safe: one thread or queue at a time reads (the worker threads are
/// internal).
///
/// Scheduled (``ByteStream/schedule(on:)-(DispatchQueue)``), it does not follow its inner
/// stream's readiness: the delegate is told "has bytes available" after every read, and a read
/// blocks as when polled. Schedule a `GzipInputStream` or `GzipOutputStream` over a pipe or
/// socket, or the pipe or socket itself, for events that never block.
///
/// Wraps ISA-L's `isal_inflate_stateless` or zlib's `inflate`, ISA-L's `crc32_gzip_refl`, and
/// ``GzipInputStream`` for what is not whole, valid BGZF members.
public final class BGZFInputStream: ByteInputStream, GzipDecodingStream, PlainBytesLending {
    /// The bytes ``startsWithBGZFMember(_:)`` looks at: 16.
    public static let signatureLength = BGZFFormat.signatureLength

    /// Whether `bytes` begin a BGZF member (SAM/BAM specification §4.1): `1f 8b 08 04` (FEXTRA),
    /// MTIME, XFL, OS, XLEN ≥ 6, then the `BC` subfield with SLEN 2 first, as every BGZF writer
    /// (htslib, bgzip, gzstream) puts it. Needs ``signatureLength`` bytes.
    public static func startsWithBGZFMember(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes(BGZFFormat.startsWithMember)
    }

    /// The default thread count: the processors this process may run on, 1 to 256 (the most
    /// `threads` takes); the same default as every parallel stream and the command line's.
    public static var defaultThreadCount: Int { GzipStreams.defaultThreadCount }

    /// Where a stream that does not start at the beginning of the file starts: at a member's
    /// first byte, found with a ``BGZFIndex`` (see ``BGZFIndex/start(containing:)``).
    public struct Start: Equatable, Sendable {
        /// The offset in bytes in the whole BGZF file of the inner stream's first byte.
        public var compressedOffset: Int64
        /// How many members come before it (for member numbers in errors; 0 or more).
        public var membersBefore: Int

        /// A start at `compressedOffset`, with `membersBefore` members before it.
        public init(compressedOffset: Int64, membersBefore: Int) {
            self.compressedOffset = compressedOffset
            self.membersBefore = membersBefore
        }
    }

    /// The inflating worker threads.
    public let threads: Int
    /// The decompression limit in bytes, or `nil` for none.
    public let maximumOutputSize: Int?
    /// Which verdict the members get: ``GzipInputStream/Inflater/zlib``'s exactly, or the fast
    /// path's (see the type's summary).
    public let inflater: GzipInputStream.Inflater
    /// The most batches of members held at once: `2 × threads` (with the reading thread
    /// helping, 4 × and 8 × `threads` measured the same).
    let window: Int
    /// The plain bytes (ISIZE summed) after which a batch of members is closed: 512 KiB. A job
    /// inflates a batch, not one member, so that the threads hand work over twice per MiB
    /// rather than sixteen times (measured: one member per job spent more time waking threads
    /// than the inflating saved; 256 KiB batches unpacked the benchmark's BGZF file in
    /// 0.42-0.53 s against 0.52-0.61 s for 128 KiB ones; with the reading thread helping,
    /// 512 KiB ones took a median 0.286 s against 0.305 s for 256 KiB and 0.284 s for 1 MiB,
    /// 11 interleaved runs).
    static let batchPlainSize = 512 * 1024
    /// The most members in one batch: 64 (many tiny members, such as empty ones).
    static let batchMemberLimit = 64

    private let inner: ByteInputStream
    private let closesInnerStream: Bool
    private let chunkSize: Int
    private let trailingGarbagePolicy: GzipInputStream.TrailingGarbagePolicy
    private let start: Start

    private var framer: BGZFMemberFramer?
    private var pipeline: OrderedPipeline<MemberInflater, Bool>?
    /// Batches submitted to the workers and not yet returned, oldest first.
    private var held: [MemberBatch] = []
    /// Batches free for reuse: at most `window` batches exist, allocated as first needed.
    private var spareBatches: [MemberBatch] = []
    /// Verdicts the pipeline delivered early, in order; each is the oldest held batch's.
    private var ready: [Bool] = []
    private var framingStopped = false
    /// The batch being returned, and how far.
    private var current: MemberBatch?
    private var currentPosition = 0
    private var ended = false
    /// The sequential reader that took over, if one did.
    private var fallback: GzipInputStream?

    private var parallelCompressedCount: Int64
    private var parallelUncompressedCount: Int64 = 0
    private var parallelMemberCount: Int
    private var parallelHeader: GzipHeader?

    /// For tests: the most batches held at once so far (submitted and not yet fully returned).
    private(set) var peakBatchesHeld = 0

    /// A stream that inflates the BGZF (or any gzip) data in `inner` on `threads` threads.
    /// - Parameters:
    ///   - inner: The compressed input.
    ///   - threads: Inflating threads, the reading thread included (see the type's summary),
    ///     `1...256`; default ``defaultThreadCount``.
    ///   - chunkSize: The size in bytes of each read from `inner`,
    ///     `1...ByteStream.maximumChunkSize`; default 4096.
    ///   - trailingGarbage: What to do with non-gzip bytes after the last member (and, for
    ///     ``GzipInputStream/TrailingGarbagePolicy/passThrough``, with an input that is not
    ///     gzip: decoded by the sequential reader); default `.fail`.
    ///   - maximumOutputSize: A decompression limit in bytes, `>= 0`: decoding more is
    ///     ``GzipError/outputLimitExceeded(limit:offset:)``; default none.
    ///   - start: Where `inner` starts in the whole file, when it was positioned at a member with
    ///     an index; default the file's start. Offsets in errors and ``compressedByteCount`` are
    ///     then the whole file's; ``uncompressedByteCount`` and the limit count from `start`.
    ///     Both of its fields are `>= 0`.
    ///   - inflater: ``GzipInputStream/Inflater/isal`` (the default): members are inflated
    ///     with ISA-L's stateless inflate and the sequential reader uses ISA-L; ``GzipInputStream/Inflater/zlib``:
    ///     zlib inflates them, and the result is exactly a zlib ``GzipInputStream``'s.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` naming the
    ///   first value out of range (`threads`, `chunkSize`, `maximumOutputSize`,
    ///   `start.compressedOffset`, `start.membersBefore`).
    public init(wrapping inner: ByteInputStream, threads: Int = BGZFInputStream.defaultThreadCount,
                chunkSize: Int = ByteStream.defaultChunkSize,
                trailingGarbage: GzipInputStream.TrailingGarbagePolicy = .fail,
                maximumOutputSize: Int? = nil, start: Start = Start(compressedOffset: 0, membersBefore: 0),
                inflater: GzipInputStream.Inflater = .isal, closesInnerStream: Bool = true) throws(ByteStreamError) {
        let operation = "create BGZFInputStream"
        try requireArgument(threads, in: threadCounts, "threads", operation: operation)
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        if let maximumOutputSize {
            try requireArgument(maximumOutputSize, in: 0...Int.max, "maximumOutputSize", operation: operation)
        }
        try requireArgument(start.compressedOffset, in: 0...Int.max, "start.compressedOffset", operation: operation)
        try requireArgument(start.membersBefore, in: 0...Int.max, "start.membersBefore", operation: operation)
        self.inner = inner
        self.threads = threads
        self.window = 2 * threads
        self.chunkSize = chunkSize
        self.trailingGarbagePolicy = trailingGarbage
        self.maximumOutputSize = maximumOutputSize
        self.inflater = inflater
        self.start = start
        self.closesInnerStream = closesInnerStream
        self.parallelCompressedCount = start.compressedOffset
        self.parallelMemberCount = start.membersBefore
        super.init()
    }

    public var compressedByteCount: Int64 { fallback?.compressedByteCount ?? parallelCompressedCount }
    public var uncompressedByteCount: Int64 { fallback?.uncompressedByteCount ?? parallelUncompressedCount }
    public var header: GzipHeader? { fallback?.header ?? parallelHeader }
    public var trailingGarbage: GzipInputStream.TrailingGarbage? { fallback?.trailingGarbage }
    /// The sequential reader takes over at zero padding after the BGZF members, and tells.
    public var endedWithZeroPadding: Bool { fallback?.endedWithZeroPadding ?? false }
    public var memberCount: Int { fallback?.memberCount ?? parallelMemberCount }
    /// Whether the sequential reader has taken over (for tests and diagnostics).
    var isSequential: Bool { fallback != nil }

    override public func openBacking() throws {
        try inner.openUnlessOpened()
        framer = BGZFMemberFramer(inner: inner, chunkSize: chunkSize, offset: start.compressedOffset)
        // The reading thread is one of the `threads`: it inflates listed batches while it waits.
        let helps = threads > 1
        pipeline = OrderedPipeline(workers: (0..<(helps ? threads - 1 : 1)).map { [inflater] _ in MemberInflater(inflater: inflater) },
                                   helper: helps ? MemberInflater(inflater: inflater) : nil,
                                   maximumInFlight: window, label: "gzstream.bgzf-inflate")
    }

    override public func closeBacking() throws {
        stopWorkers()
        held = []
        spareBatches = []
        ready = []
        current = nil
        fallback?.close()
        if closesInnerStream {
            inner.close()
        }
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if let bytes = try lendPlainBytes(maxLength: maxLength) {
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count) }
            return bytes.count
        }
        let count = fallback!.read(buffer, maxLength: maxLength)
        if count < 0 { throw fallback!.streamErrorOrFallback(operation: "read") }
        return count
    }

    /// ``ByteInputStream/read(_:maxLength:)`` without the copy: lends `body` the next
    /// `1...maxLength` plain bytes where a worker inflated them (once the sequential reader has
    /// taken over, from a temporary buffer), and consumes them. The bytes are valid only during
    /// `body`. The status, events and errors are a read's.
    /// - Returns: The number of bytes lent; `0` at the end (and for `maxLength` 0), `body` not
    ///   called; `-1` on error, with ``ByteStream/streamError`` set.
    /// - Throws: Only what `body` throws (the bytes count as read).
    public func readInPlace(maxLength: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Int {
        try lendInPlace(maxLength: maxLength, body)
    }

    var lendsInPlace: Bool { fallback == nil }

    /// The next plain bytes of the parallel path, in place (valid until the next call): at
    /// most `maxLength`, empty at the end; `nil` once the sequential reader has taken over.
    func lendPlainBytes(maxLength: Int) throws -> UnsafeRawBufferPointer? {
        while fallback == nil {
            if let batch = current {
                if currentPosition < batch.plainCount {
                    let count = min(maxLength, batch.plainCount - currentPosition)
                    let bytes = UnsafeRawBufferPointer(start: batch.plain + currentPosition, count: count)
                    currentPosition += count
                    parallelUncompressedCount += Int64(count)
                    return bytes
                }
                current = nil
                parallelMemberCount += batch.members.count
                parallelCompressedCount = batch.endOffset
                spareBatches.append(batch)
            }
            if ended { return UnsafeRawBufferPointer(start: nil, count: 0) }
            try takeNextMember()
        }
        return nil
    }

    // MARK: The parallel path

    /// Frames members into batches and submits them until `window` batches are held.
    private func topUp() throws {
        guard let framer, let pipeline else { throw ByteStreamError(.notOpen, operation: "read") }
        while !framingStopped && held.count < window {
            let batch = spareBatches.popLast() ?? MemberBatch()
            batch.removeAll()
            while !batch.isFull {
                guard let member = framer.next() else {
                    framingStopped = true
                    break
                }
                batch.append(member.bytes, offset: member.offset, frame: member.frame)
            }
            guard !batch.members.isEmpty else {
                spareBatches.append(batch)
                break
            }
            held.append(batch)
            try pipeline.submit({ inflater, isCancelled in
                isCancelled() ? false : inflater.inflate(batch)
            }, deliver: { ready.append($0) })
        }
        peakBatchesHeld = max(peakBatchesHeld, held.count)
    }

    /// Makes the next batch current, hands the rest to the sequential reader, or ends.
    private func takeNextMember() throws {
        try topUp()
        guard let framer, let pipeline else { throw ByteStreamError(.notOpen, operation: "read") }
        guard let batch = held.first else {
            if framer.isAtCleanEnd && parallelMemberCount > 0 {
                ended = true
            } else {
                startSequential(at: framer.offset, prefix: framer.unconsumed)
            }
            return
        }
        let succeeded = ready.isEmpty ? pipeline.collectNext()! : ready.removeFirst()
        if succeeded, maximumOutputSize.map({ parallelUncompressedCount + Int64(batch.plainCount) <= Int64($0) }) ?? true {
            held.removeFirst()
            if parallelHeader == nil {
                let first = batch.members[0]
                parallelHeader = BGZFFrame.header(of: UnsafeRawBufferPointer(start: batch.compressed, count: first.frame.headerSize),
                                                  headerSize: first.frame.headerSize)
            }
            current = batch
            currentPosition = 0
            return
        }
        // A member of the batch failed a check, or the limit falls inside it: the sequential
        // reader decodes from the batch's first member on, and finds what the parallel path saw.
        var prefix: [UInt8] = []
        for held in held { prefix += UnsafeBufferPointer(start: held.compressed, count: held.compressedCount) }
        prefix += framer.unconsumed
        startSequential(at: batch.members[0].offset, prefix: prefix)
    }

    /// Hands the input from `offset` on (`prefix`, then the unread inner stream) to a
    /// ``GzipInputStream`` that continues where the parallel path stopped.
    private func startSequential(at offset: Int64, prefix: [UInt8]) {
        stopWorkers()
        held = []
        spareBatches = []
        ready = []
        let spliced = PeekingInputStream(prefix: prefix, then: inner, failure: framer?.innerError,
                                         offset: offset, alignment: chunkSize)
        let sequential = GzipInputStream(resuming: spliced, at: offset, membersBefore: parallelMemberCount,
                                         bytesBefore: parallelUncompressedCount, firstHeader: parallelHeader,
                                         chunkSize: chunkSize, trailingGarbage: trailingGarbagePolicy,
                                         maximumOutputSize: maximumOutputSize, inflater: inflater)
        sequential.open()
        fallback = sequential
    }

    /// Waits for every worker and frees their decompressors.
    private func stopWorkers() {
        guard let pipeline else { return }
        pipeline.cancelAndJoin { $0.release() }
        self.pipeline = nil
    }
}

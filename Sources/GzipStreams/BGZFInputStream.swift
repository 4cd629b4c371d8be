import ByteStreams
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a reader of gzip data tells besides the bytes: the properties ``GzipInputStream`` and
/// ``BGZFInputStream`` share, so that a caller (the `gzstream` command) can use either.
public protocol GzipDecodingStream: ByteInputStream {
    /// The number of compressed bytes consumed so far.
    var compressedByteCount: Int64 { get }
    /// The number of plain bytes returned so far.
    var uncompressedByteCount: Int64 { get }
    /// The first member's header, once it has been read.
    var header: GzipHeader? { get }
    /// Where trailing garbage was met, if it was.
    var trailingGarbage: GzipInputStream.TrailingGarbage? { get }
    /// The number of members read and checked so far.
    var memberCount: Int { get }
}

extension GzipInputStream: GzipDecodingStream {}

/// Reads BGZF data (SAM/BAM specification §4.1) from an inner input stream and yields the plain
/// bytes, inflating up to `threads` members at once: the reading thread cuts the input into
/// whole members by their `BC` subfield (BSIZE + 1 bytes each, at most 64 KiB) without
/// inflating, worker threads inflate them in batches (up to 128 KiB of plain bytes) with
/// ISA-L's whole-buffer inflate and check each member's CRC-32 and ISIZE, and the bytes are
/// returned in order.
///
/// ISA-L, not libdeflate, because it is the sequential reader's decoder: libdeflate accepts
/// the reserved distance codes 30 and 31 and literal/length codes 286 and 287, which zlib and
/// ISA-L reject, so a member built around one (with a matching CRC-32) decoded here where the
/// sequential reader fails (`fixtures/regressions/bgzf-reserved-distance-code.bgz`). ISA-L's
/// own leniency (see ``GzipInputStream/Inflater/isal``) is the same on both paths. It costs
/// speed: `gzstream test` of the 256 MiB benchmark file took 0.36-0.53 s with ISA-L against
/// 0.35-0.45 s with libdeflate (5 interleaved runs each).
///
/// The result is exactly ``GzipInputStream``'s for the same input, `chunkSize`,
/// `trailingGarbage` and `maximumOutputSize`: the same bytes, errors, member numbers and
/// offsets, counters and header. Whenever a member fails a fast check (ISA-L rejects it,
/// CRC-32 or ISIZE differ, an ISIZE above 64 KiB), the next bytes are not a BGZF member (a
/// plain gzip member, zero padding, garbage, a member cut short, the end of an empty input), or
/// the output limit would be passed inside a member, the rest of the input from that member's
/// first byte on is decoded by a ``GzipInputStream`` that takes over the state (member count,
/// bytes so far, first header), so its verdict is the sequential reader's. (It stays
/// sequential to the end of the input: one damaged member in a long file slows the rest.)
/// Data is tentative until a read returns `0`, as with ``GzipInputStream``.
///
/// Reads of the inner stream are `chunkSize` bytes; when the sequential reader takes over, the
/// inner stream is read on at the same offsets a ``GzipInputStream`` over the whole input
/// would read (an inner stream that returns full reads then gives the very same offsets in
/// every error, the output limit's included). A failed read of the inner stream is reported
/// once the bytes before it were decoded.
///
/// Memory: at most `2 × threads` batches held (read and not yet returned, each up to 128 KiB
/// plain, or 64 members), a buffer of two members and one chunk for reading, and an ISA-L
/// inflate state (about 50 KiB) per worker; whatever the input size or the speed of the
/// caller. Each worker allocates its state on its first batch; they are freed when the stream
/// closes. ``ByteStream/close()`` returns only after every worker has stopped.
///
/// ``ByteStream/open()`` opens the inner stream if it is not open yet; ``ByteStream/close()``
/// closes it unless `closesInnerStream` is `false`. Reads block while the oldest member is
/// being inflated. Not thread-safe: one thread or queue at a time reads (the worker threads are
/// internal).
///
/// Wraps ISA-L's `isal_inflate_stateless` and `crc32_gzip_refl`, and ``GzipInputStream`` for
/// what is not whole, valid BGZF members.
public final class BGZFInputStream: ByteInputStream, GzipDecodingStream, @unchecked Sendable {
    /// The bytes ``startsWithBGZFMember(_:)`` looks at: 16.
    public static let signatureLength = 16

    /// Whether `bytes` begin a BGZF member (SAM/BAM specification §4.1): `1f 8b 08 04` (FEXTRA),
    /// MTIME, XFL, OS, XLEN ≥ 6, then the `BC` subfield with SLEN 2 first, as every BGZF writer
    /// (htslib, bgzip, gzstream) puts it. Needs ``signatureLength`` bytes.
    public static func startsWithBGZFMember(_ bytes: [UInt8]) -> Bool {
        bytes.count >= signatureLength && bytes[0] == 0x1f && bytes[1] == 0x8b && bytes[2] == 8
            && bytes[3] == 4 && (bytes[10] >= 6 || bytes[11] > 0) && bytes[12] == 0x42 && bytes[13] == 0x43
            && bytes[14] == 2 && bytes[15] == 0
    }

    /// The number of processors online, at least 1: the default thread count.
    /// The corresponding C function is `sysconf(_SC_NPROCESSORS_ONLN)`.
    public static var defaultThreadCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Where a stream that does not start at the beginning of the file starts: at a member's
    /// first byte, found with a ``BGZFIndex`` (see ``BGZFIndex/start(containing:)``).
    public struct Start: Equatable, Sendable {
        /// The offset in bytes in the whole BGZF file of the inner stream's first byte.
        public var compressedOffset: Int64
        /// How many members come before it (for member numbers in errors; 0 or more).
        public var membersBefore: Int

        public init(compressedOffset: Int64, membersBefore: Int) {
            self.compressedOffset = compressedOffset
            self.membersBefore = membersBefore
        }
    }

    /// The inflating worker threads.
    public let threads: Int
    /// The decompression limit in bytes, or `nil` for none.
    public let maximumOutputSize: Int64?
    /// The most batches of members held at once: `2 × threads`.
    let window: Int
    /// The plain bytes (ISIZE summed) after which a batch of members is closed: 128 KiB. A job
    /// inflates a batch, not one member, so that the threads hand work over a few times per
    /// MiB rather than sixteen (measured: one member per job spent more time waking threads
    /// than the inflating saved).
    static let batchPlainSize = 128 * 1024
    /// The most members in one batch: 64 (many tiny members, such as empty ones).
    static let batchMemberLimit = 64

    private let inner: ByteInputStream
    private let closesInnerStream: Bool
    private let chunkSize: Int
    private let trailingGarbagePolicy: GzipInputStream.TrailingGarbagePolicy
    private let start: Start

    private var framer: BGZFMemberFramer?
    private var pipeline: OrderedPipeline<MemberInflater, [UInt8]?>?
    /// Members handed to the workers and not yet returned, oldest first: their offsets and bytes.
    private var framed: [(offset: Int64, frame: BGZFFrame, bytes: [UInt8])] = []
    /// The number of members in each batch submitted and not yet returned, oldest first.
    private var batchSizes: [Int] = []
    /// Outputs the pipeline delivered early, in order; each is the oldest batch's.
    private var ready: [[UInt8]?] = []
    private var framingStopped = false
    /// The member being returned, and how far.
    private var current: [UInt8]?
    private var currentPosition = 0
    private var currentMembers = 0
    private var currentEnd: Int64 = 0
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
    ///   - threads: Inflating worker threads, 1 to 256; default ``defaultThreadCount``.
    ///   - chunkSize: The size in bytes of each read from `inner`; default 4096.
    ///   - trailingGarbage: What to do with non-gzip bytes after the last member; default `.fail`.
    ///   - maximumOutputSize: A decompression limit in bytes: decoding more is
    ///     ``GzipError/outputLimitExceeded(limit:offset:)``; default none.
    ///   - start: Where `inner` starts in the whole file, when it was positioned at a member with
    ///     an index; default the file's start. Offsets in errors and ``compressedByteCount`` are
    ///     then the whole file's; ``uncompressedByteCount`` and the limit count from `start`.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    public init(wrapping inner: ByteInputStream, threads: Int = BGZFInputStream.defaultThreadCount,
                chunkSize: Int = ByteStream.defaultChunkSize,
                trailingGarbage: GzipInputStream.TrailingGarbagePolicy = .fail,
                maximumOutputSize: Int64? = nil, start: Start = Start(compressedOffset: 0, membersBefore: 0),
                closesInnerStream: Bool = true) {
        precondition((1...256).contains(threads), "threads must be 1 to 256")
        precondition(chunkSize > 0, "chunkSize must be positive")
        precondition((maximumOutputSize ?? 0) >= 0, "maximumOutputSize must not be negative")
        precondition(start.compressedOffset >= 0 && start.membersBefore >= 0, "start must not be negative")
        self.inner = inner
        self.threads = threads
        self.window = 2 * threads
        self.chunkSize = chunkSize
        self.trailingGarbagePolicy = trailingGarbage
        self.maximumOutputSize = maximumOutputSize
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
    public var memberCount: Int { fallback?.memberCount ?? parallelMemberCount }
    /// Whether the sequential reader has taken over (for tests and diagnostics).
    var isSequential: Bool { fallback != nil }

    override public func openBacking() throws {
        if inner.streamStatus == .notOpen { inner.open() }
        try inner.throwIfFailed()
        framer = BGZFMemberFramer(inner: inner, chunkSize: chunkSize, offset: start.compressedOffset)
        pipeline = OrderedPipeline(workers: (0..<threads).map { _ in MemberInflater() },
                                   maximumInFlight: window, label: "gzstream.bgzf-inflate")
    }

    override public func closeBacking() throws {
        stopWorkers()
        framed = []
        batchSizes = []
        ready = []
        current = nil
        fallback?.close()
        if closesInnerStream {
            inner.close()
        }
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        while true {
            if let fallback {
                let count = fallback.read(buffer, maxLength: maxLength)
                if count < 0 { throw fallback.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
                return count
            }
            if let plain = current {
                if currentPosition < plain.count {
                    let count = min(maxLength, plain.count - currentPosition)
                    plain.withUnsafeBufferPointer {
                        buffer.update(from: $0.baseAddress! + currentPosition, count: count)
                    }
                    currentPosition += count
                    parallelUncompressedCount += Int64(count)
                    return count
                }
                current = nil
                parallelMemberCount += currentMembers
                parallelCompressedCount = currentEnd
            }
            if ended { return 0 }
            try takeNextMember()
        }
    }

    // MARK: The parallel path

    /// Frames members into batches and submits them until `window` batches are held.
    private func topUp() throws {
        guard let framer, let pipeline else { throw ByteStreamError(.notOpen, operation: "read") }
        while !framingStopped && batchSizes.count < window {
            var members: [[UInt8]] = []
            var headerSizes: [Int] = []
            var plainSize = 0
            while plainSize < Self.batchPlainSize && members.count < Self.batchMemberLimit {
                guard let member = framer.next() else {
                    framingStopped = true
                    break
                }
                framed.append(member)
                members.append(member.bytes)
                headerSizes.append(member.frame.headerSize)
                plainSize += storedPlainSize(ofMember: member.bytes)
            }
            guard !members.isEmpty else { break }
            batchSizes.append(members.count)
            let batch = members, batchHeaderSizes = headerSizes
            try pipeline.submit({ inflater, isCancelled in
                isCancelled() ? nil : inflater.inflate(batch, headerSizes: batchHeaderSizes)
            }, deliver: { ready.append($0) })
        }
        peakBatchesHeld = max(peakBatchesHeld, batchSizes.count)
    }

    /// Makes the next batch current, hands the rest to the sequential reader, or ends.
    private func takeNextMember() throws {
        try topUp()
        guard let framer, let pipeline else { throw ByteStreamError(.notOpen, operation: "read") }
        guard let count = batchSizes.first else {
            if framer.isAtCleanEnd && parallelMemberCount > 0 {
                ended = true
            } else {
                startSequential(at: framer.offset, prefix: framer.unconsumed)
            }
            return
        }
        let plain = ready.isEmpty ? pipeline.collectNext()! : ready.removeFirst()
        let first = framed[0]
        if let plain, maximumOutputSize.map({ parallelUncompressedCount + Int64(plain.count) <= $0 }) ?? true {
            let last = framed[count - 1]
            framed.removeFirst(count)
            batchSizes.removeFirst()
            if parallelHeader == nil {
                parallelHeader = first.bytes.withUnsafeBytes { BGZFFrame.header(of: $0, headerSize: first.frame.headerSize) }
            }
            current = plain
            currentPosition = 0
            currentMembers = count
            currentEnd = last.offset + Int64(last.frame.size)
            return
        }
        // A member of the batch failed a check, or the limit falls inside it: the sequential
        // reader decodes from the batch's first member on, and finds what the parallel path saw.
        var prefix: [UInt8] = []
        for held in framed { prefix += held.bytes }
        prefix += framer.unconsumed
        startSequential(at: first.offset, prefix: prefix)
    }

    /// Hands the input from `offset` on (`prefix`, then the unread inner stream) to a
    /// ``GzipInputStream`` that continues where the parallel path stopped.
    private func startSequential(at offset: Int64, prefix: [UInt8]) {
        stopWorkers()
        framed = []
        batchSizes = []
        ready = []
        let spliced = SplicedInputStream(prefix: prefix, inner: inner, innerError: framer?.innerError,
                                         offset: offset, alignment: chunkSize)
        let sequential = GzipInputStream(resuming: spliced, at: offset, membersBefore: parallelMemberCount,
                                         bytesBefore: parallelUncompressedCount, firstHeader: parallelHeader,
                                         chunkSize: chunkSize, trailingGarbage: trailingGarbagePolicy,
                                         maximumOutputSize: maximumOutputSize)
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

/// A worker's ISA-L inflate state, allocated on the worker's first batch and used only on that
/// worker's queue; ``release()`` frees it once the worker has stopped.
final class MemberInflater {
    /// The number of inflate states allocated and not yet freed, across the process.
    static let liveCount = Atomic<Int>(0)

    private var isal: IsalInflater?

    /// Inflates whole BGZF members, one after another into one buffer, and checks each: its
    /// deflate data must end exactly where its trailer starts and give ISIZE bytes (at most
    /// 64 KiB) whose CRC-32 is the trailer's.
    /// - Parameters:
    ///   - members: Each member's bytes, header to trailer.
    ///   - headerSizes: Where each member's deflate data starts, in bytes.
    /// - Returns: The plain bytes of all of them, or `nil` when any check fails:
    ///   the caller then lets the sequential reader find the error.
    /// Wraps ISA-L's `isal_inflate_stateless` and `crc32_gzip_refl`.
    func inflate(_ members: [[UInt8]], headerSizes: [Int]) -> [UInt8]? {
        var sizes: [Int] = []
        for member in members {
            guard member.count >= 8 else { return nil }
            let size = storedPlainSize(ofMember: member)
            guard size <= BGZFOutputStream.maximumMemberSize else { return nil }
            sizes.append(size)
        }
        if isal == nil {
            isal = IsalInflater()
            Self.liveCount.add(1, ordering: .relaxed)
        }
        let total = sizes.reduce(0, +)
        var succeeded = true
        let plain = [UInt8](unsafeUninitializedCapacity: max(total, 1)) { output, count in
            var start = 0
            for (index, member) in members.enumerated() {
                guard inflate(member, headerSize: headerSizes[index], into: output.baseAddress! + start,
                              size: sizes[index]) else {
                    succeeded = false
                    break
                }
                start += sizes[index]
            }
            count = succeeded ? total : 0
        }
        return succeeded ? plain : nil
    }

    /// Inflates one member into `output`, which holds `size` bytes (its ISIZE); `false` when a
    /// check fails: the deflate data must end in the member's last byte before the trailer.
    private func inflate(_ member: [UInt8], headerSize: Int, into output: UnsafeMutablePointer<UInt8>,
                         size: Int) -> Bool {
        let total = member.count
        let deflateCount = total - headerSize - 8
        guard deflateCount > 0, let isal else { return false }
        return member.withUnsafeBytes { input in
            let deflateData = input.baseAddress!.assumingMemoryBound(to: UInt8.self) + headerSize
            guard isal.inflateWhole(deflateData, count: deflateCount, into: output, size: size) else { return false }
            return crc32(0, UnsafeRawBufferPointer(start: output, count: size)) == loadUInt32(input, at: total - 8)
        }
    }

    /// Frees the inflate state; call only once the worker has no job left.
    func release() {
        guard isal != nil else { return }
        isal = nil
        Self.liveCount.subtract(1, ordering: .relaxed)
    }

    deinit {
        release()
    }
}

/// `prefix`, then the rest of `inner` (then `innerError`, if reading it had failed before),
/// returned in reads that never cross a multiple of `alignment` counted in offsets of the whole
/// input, so that a ``GzipInputStream`` reading it in `alignment`-byte chunks sees the same
/// chunk boundaries as one that read the whole input. Does not open or close `inner`.
final class SplicedInputStream: ByteInputStream, @unchecked Sendable {
    private let prefix: [UInt8]
    private var prefixPosition = 0
    private let inner: ByteInputStream
    private let innerError: (any Error)?
    private var offset: Int64
    private let alignment: Int

    init(prefix: [UInt8], inner: ByteInputStream, innerError: (any Error)?, offset: Int64, alignment: Int) {
        self.prefix = prefix
        self.inner = inner
        self.innerError = innerError
        self.offset = offset
        self.alignment = alignment
        super.init()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let room = min(maxLength, alignment - Int(offset % Int64(alignment)))
        var count = 0
        if prefixPosition < prefix.count {
            count = min(room, prefix.count - prefixPosition)
            prefix.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + prefixPosition, count: count) }
            prefixPosition += count
        }
        if count < room {
            if let innerError {
                if count == 0 { throw innerError }
            } else {
                let read = inner.read(buffer + count, maxLength: room - count)
                if read < 0, count == 0 {
                    throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read")
                }
                count += max(read, 0)
            }
        }
        offset += Int64(count)
        return count
    }
}

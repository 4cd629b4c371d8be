import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a gzip file through a ``GzipIndex`` (any gzip file, indexed by `gzstream index`,
/// `pack --index`, indexed_gzip, rapidgzip or gztool): its plain bytes in order, the spans
/// between access points inflated on `threads` threads at once, and from any plain offset
/// with ``seek(toPlainOffset:length:)`` without decoding what comes before the point at or
/// before it (zran.c's random access: the inflater starts at the point's bit, primed with the
/// point's 32 KiB window; RFC 1951 §3.2.5 lets a distance reach back that far).
///
/// **Checks.** Every span must end exactly where the index says the next point is (its bit,
/// the plain bytes between the two points, the next point's window as the last plain bytes),
/// and every member whose start was read is checked against its trailer (RFC 1952 §2.3.1:
/// CRC-32, joined from the chunks' with `crc32_combine`, and ISIZE). Reading from the start of
/// the file, a failure of either (damage, or an index that is not this file's) hands the rest
/// to a sequential ``GzipInputStream`` from the start of the member it is in, which skips the
/// bytes already returned (checking that their CRC-32 is the same) and gives the sequential
/// reader's bytes and errors, member numbers and offsets; ``indexMismatch`` then says what did
/// not fit. After a seek the member's start is not read, so a failure is thrown as
/// ``IndexedGzipError``.
///
/// **Decoders.** `inflater` `.isal` (the default) inflates spans with ISA-L's `isal_inflate`
/// (primed with `isal_inflate_set_dict` and its bit buffer); `.zlib` with zlib's `inflate`
/// (primed with `inflatePrime` and `inflateSetDictionary`), giving zlib's verdict on every
/// input.
///
/// **Memory:** per worker an inflate state and a 256 KiB input buffer, and for all workers at
/// most 10 MiB of plain bytes decoded ahead, in chunks of 512 KiB (2 MiB on one thread), whatever
/// the file or span size (a worker waits when no chunk is free); windows are read from the index
/// when a span starts (``GzipIndex/window(ofPoint:)``). ``writeRemaining(to:at:name:fence:)`` has the
/// workers write a regular file themselves, with one 512 KiB buffer each.
///
/// Not thread-safe: one thread reads (the workers are internal). Reads block while the oldest
/// span is being inflated. ``ByteStream/close()`` returns after every worker has stopped, and
/// closes `file` when `closesInnerStream`.
public final class IndexedGzipInputStream: ByteInputStream, GzipDecodingStream, PlainBytesLending {
    /// The size in bytes of the chunks workers decode into: 512 KiB.
    public static let chunkCapacity = 512 * 1024
    /// The plain bytes all workers together may hold decoded ahead of the reader: 10 MiB. The
    /// worker of the span being read takes chunks first, so with spans of 16 MiB on 2 threads
    /// the other is never held up (it decodes at most about half a span ahead while the first
    /// finishes).
    static let aheadBudget = 10 << 20

    /// The index the file is read through.
    public let index: GzipIndex
    /// The inflating worker threads.
    public let threads: Int
    /// The decoder of the spans (and of the sequential reader that takes over).
    public let inflater: GzipInputStream.Inflater
    /// The decompression limit in bytes, or `nil` for none.
    public let maximumOutputSize: Int?
    /// Why the index was not used for the rest of the file, once it was found not to fit.
    public internal(set) var indexMismatch: IndexedGzipError?

    let file: FileInputStream
    let closesInnerStream: Bool
    let chunkSize: Int
    let trailingGarbagePolicy: GzipInputStream.TrailingGarbagePolicy
    var fileSize: Int64 = 0
    var decoders: [SpanDecoder] = []

    var run: SpanJobs?
    /// The spans of the run that the first read starts (set by opening, so that
    /// ``writeRemaining(to:at:name:fence:)`` can give the workers the output first).
    var pendingRun: Range<Int>?
    /// The span whose items are being read.
    var span = 0
    /// The bytes being read: `count` at `chunk`, read up to `position`; `release` is the chunk
    /// buffer to give back to `pool` after them, `nil` while its worker still fills it.
    var current: (chunk: UnsafeMutablePointer<UInt8>, count: Int, position: Int,
                          release: UnsafeMutablePointer<UInt8>?, pool: ChunkBudget)?
    /// Plain bytes still to drop from the start of the run (a seek between points).
    var skip: Int64 = 0
    /// Plain bytes the workers wrote to the output file themselves, taken from them but not
    /// counted as read yet (``writeRemaining(to:at:name:fence:)``).
    var writtenPending = 0
    /// Whether the last ``writeRemaining(to:at:name:fence:)`` had the workers write (for tests).
    var workersWriteOutput = false
    /// After a seek to a point other than the first: that span's bytes of the range, kept
    /// until the span has ended where the index says the next point is (its bit, a block
    /// boundary, its plain offset, its window), so that no byte decoded from a window the
    /// data cannot vouch for is returned before that check; `nil` when nothing is held.
    var held: (span: Int, bytes: [UInt8], position: Int, checked: Bool)?
    /// Set when the first point is not where the first member's deflate data starts (or has a
    /// window there): a seek cannot start from it.
    var firstPointMisplaced: IndexedGzipError?
    /// The plain offset after which reads end (a seek with a length).
    var rangeEnd: Int64?
    /// The plain offset of the next byte a read returns.
    public internal(set) var plainOffset: Int64 = 0
    /// The plain offset just past the chunks taken from the workers.
    var chunkPlainEnd: Int64 = 0
    var ended = false
    /// Whether a failure may hand the rest to the sequential reader: only when the reading
    /// started at the start of the file (member starts known).
    var fromStart = true

    /// The current member's start (its header's offset, its first plain byte) when it was read,
    /// and the CRC-32 of its plain bytes in the chunks taken so far.
    var memberStart: (offset: Int64, plain: Int64)?
    var memberCRC: UInt32 = 0
    var membersRead = 0
    var compressedPosition: Int64 = 0
    var firstHeader: GzipHeader?
    /// Reading from the start: the last 32 KiB of plain data taken (zeros before the data), to
    /// check each point's window before any byte after the point is given.
    var tail = [UInt8](repeating: 0, count: Int(GzipIndex.defaultWindowSize))
    /// Whether `tail` is the true history (after a seek, it starts as the first point's window).
    var tailKnown = true
    var returnedCount: Int64 = 0

    var fallback: GzipInputStream?
    /// Bytes the sequential reader gives again that were already returned, and their CRC-32.
    var fallbackSkip: Int64 = 0
    var fallbackExpectedCRC: UInt32 = 0

    /// A stream over the gzip file `file` (a regular file) and its `index`.
    /// - Parameters:
    ///   - file: The compressed file; opened by ``ByteStream/open()`` if it is not open yet.
    ///   - index: The file's index: its compressed size must be the file's.
    ///   - threads: Inflating worker threads, `1...256`; default every core available.
    ///   - inflater: `.isal` (default) or `.zlib`, for the spans and the sequential reader.
    ///   - chunkSize: The size in bytes of the sequential reader's reads, if one takes over.
    ///   - trailingGarbage: What to do with bytes after the last member, as ``GzipInputStream``.
    ///   - maximumOutputSize: A decompression limit in bytes, `>= 0`, or `nil`.
    ///   - closesInnerStream: Close `file` when this stream closes; default `true`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a value
    ///   out of range.
    public init(wrapping file: FileInputStream, index: GzipIndex, threads: Int = BGZFInputStream.defaultThreadCount,
                inflater: GzipInputStream.Inflater = .isal, chunkSize: Int = ByteStream.defaultChunkSize,
                trailingGarbage: GzipInputStream.TrailingGarbagePolicy = .fail, maximumOutputSize: Int? = nil,
                closesInnerStream: Bool = true) throws(ByteStreamError) {
        let operation = "create IndexedGzipInputStream"
        try requireArgument(threads, in: threadCounts, "threads", operation: operation)
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        if let maximumOutputSize {
            try requireArgument(maximumOutputSize, in: 0...Int.max, "maximumOutputSize", operation: operation)
        }
        self.file = file
        self.index = index
        self.threads = threads
        self.inflater = inflater
        self.chunkSize = chunkSize
        self.trailingGarbagePolicy = trailingGarbage
        self.maximumOutputSize = maximumOutputSize
        self.closesInnerStream = closesInnerStream
        super.init()
    }

    public var compressedByteCount: Int64 { fallback?.compressedByteCount ?? compressedPosition }
    /// The plain bytes returned so far (since the stream opened, seeks aside).
    public var uncompressedByteCount: Int64 { returnedCount }
    public var header: GzipHeader? { fallback?.header ?? firstHeader }
    public var trailingGarbage: GzipInputStream.TrailingGarbage? { fallback?.trailingGarbage }
    public var endedWithZeroPadding: Bool { fallback?.endedWithZeroPadding ?? false }
    public var memberCount: Int { fallback?.memberCount ?? membersRead }
    /// Whether the sequential reader has taken over (for tests and diagnostics).
    public var isSequential: Bool { fallback != nil }

    /// The file's plain size: the index's, or `nil` when the index does not know it.
    public var plainSize: Int64? { index.plainSize > 0 ? Int64(index.plainSize) : nil }

    // MARK: Opening and closing

    override public func openBacking() throws {
        try file.openUnlessOpened()
        let descriptor = file.fileDescriptor
        let info = try SystemCalls.status(of: descriptor, target: file.displayName)
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw IndexedGzipError.notRegularFile }
        fileSize = Int64(info.st_size)
        guard UInt64(fileSize) == index.compressedSize else {
            throw IndexedGzipError.sizeMismatch(indexed: index.compressedSize, actual: fileSize)
        }
        try Self.checkUsable(index, fileSize: fileSize)
        if let tail = index.compressedTail {
            let count = Int(min(Int64(tail.count), fileSize))
            var last = [UInt8](repeating: 0, count: count)
            let read = try last.withUnsafeMutableBytes {
                try SystemCalls.read(descriptor, $0.baseAddress!, count, at: fileSize - Int64(count), target: file.displayName)
            }
            guard read == count, last.elementsEqual(tail.suffix(count)) else { throw IndexedGzipError.fileChanged }
        }
        for _ in 0..<threads {
            let decoder: any PrimedInflater
            switch inflater {
            case .isal:
                decoder = IsalInflater()
            case .zlib:
                let zlib = try ZStream(inflate: ())
                zlib.stopsAtBlocks = true
                decoder = zlib
            }
            decoders.append(SpanDecoder(decoder: decoder, descriptor: descriptor, fileSize: fileSize,
                                        fileName: file.displayName, index: index))
        }
        let headerEnd: Int64
        do {
            (firstHeader, headerEnd) = try readFirstHeader()
        } catch {
            // The sequential reader gives the header's error, with its offset.
            startSequential(at: 0, membersBefore: 0, plainBefore: 0)
            return
        }
        guard let first = index.points.first, first.plainOffset == 0, first.bitOffset == 0,
              Int64(first.compressedOffset) == headerEnd, !index.hasWindow(ofPoint: 0) else {
            indexMismatch = .firstPointMisplaced(headerEnd: headerEnd)
            firstPointMisplaced = indexMismatch
            startSequential(at: 0, membersBefore: 0, plainBefore: 0)
            return
        }
        start(at: 0, plain: 0, launching: false)
        memberStart = (0, 0)
    }

    override public func closeBacking() throws {
        stopRun()
        fallback?.close()
        fallback = nil
        decoders = []
        if closesInnerStream { file.close() }
    }

    // MARK: Seeking

    /// Moves to plain offset `offset`: the next read returns the byte there. Decoding starts
    /// at the last point at or before it; the bytes between are decoded and dropped.
    /// - Parameters:
    ///   - offset: A plain offset, `0...plainSize` (at the end, reads return 0).
    ///   - length: How many bytes the caller will read from there: reads end after them, and
    ///     no span past them is decoded; `nil` to read to the end.
    /// - Throws: ``ByteStreamError`` with `.notOpen` before the stream is opened. An offset past
    ///   the end is found by decoding the last span: the first read then throws
    ///   ``IndexedGzipError/offsetPastEnd(offset:size:)``.
    public func seek(toPlainOffset offset: Int64, length: Int64? = nil) throws {
        guard streamStatus == .open || streamStatus == .atEnd else { throw ByteStreamError(.notOpen, operation: "seek") }
        precondition(offset >= 0 && (length ?? 0) >= 0, "offsets and lengths are not negative")
        stopRun()
        fallback?.close()
        fallback = nil
        fallbackSkip = 0
        ended = false
        let points = index.points
        // The last point at or before the offset: points are sorted by plain offset.
        var low = 0
        var high = points.count
        while high - low > 1 {
            let middle = (low + high) / 2
            if Int64(points[middle].plainOffset) <= offset { low = middle } else { high = middle }
        }
        // A point at the end of the file is checked only by the span before it.
        if low > 0 && Int64(points[low].compressedOffset) == fileSize { low -= 1 }
        fromStart = offset == 0 && length == nil
        memberStart = low == 0 ? (0, 0) : nil
        rangeEnd = length.map { length in
            let (end, overflow) = offset.addingReportingOverflow(length)
            return overflow ? Int64.max : end
        }
        held = nil
        if low == 0, let firstPointMisplaced { throw firstPointMisplaced }
        if low > 0 && index.compressedTail == nil {
            // Another tool's index has no checksum: the point the range starts from is checked
            // by decoding the span before it, which must end there with its window.
            try checkSpan(low - 1, mustReachNext: true)
        }
        if low > 0 {
            // The bytes of the first span that the range takes, held until it is checked; a
            // span too long to hold is decoded and checked first, its bytes dropped.
            let spanEnd = low + 1 < points.count ? Int64(points[low + 1].plainOffset) : Int64.max
            let holding = min(spanEnd, rangeEnd ?? .max) - offset
            if holding <= Int64(Self.holdLimit) {
                held = (low, [], 0, false)
            } else {
                try checkSpan(low)
            }
        }
        start(at: low, plain: Int64(points[low].plainOffset))
        skip = offset - Int64(points[low].plainOffset)
        plainOffset = offset
        // A stream at its end reads again after a seek.
        if streamStatus == .atEnd { setStatus(.open) }
    }

    /// Starts workers on the spans from `first` (plain offset `plain`) to the last one a read
    /// may need; when not `launching`, the first read starts them.
    private func start(at first: Int, plain: Int64, launching: Bool = true) {
        // The history before the first span: none at the file's start; else the point's
        // window, which the checks before a seek vouch for.
        tail = [UInt8](repeating: 0, count: tail.count)
        tailKnown = first == 0
        if first > 0, let window = try? index.window(ofPoint: first), window.count == tail.count {
            tail = window
            tailKnown = true
        } else if first > 0 && !index.hasWindow(ofPoint: first) {
            tailKnown = true
        }
        for decoder in decoders { decoder.windowOverride = nil }
        span = first
        chunkPlainEnd = plain
        plainOffset = plain
        memberCRC = 0
        compressedPosition = Int64(index.points[first].compressedOffset)
        var end = index.points.count
        if let rangeEnd {
            // Spans starting at or past the range's end are not needed (one at least).
            end = first + 1
            while end < index.points.count && Int64(index.points[end].plainOffset) < rangeEnd { end += 1 }
        }
        if launching { launch(first..<end) } else { pendingRun = first..<end }
    }

    func launch(_ spans: Range<Int>) {
        pendingRun = nil
        run = SpanJobs(spans: spans, decoders: decoders, chunkLimit: threads == 1 ? 4 : Self.aheadBudget / Self.chunkCapacity,
                       chunkCapacity: Self.chunkCapacity)
    }

    /// The most plain bytes a seek holds back until its first span is checked: 32 MiB.
    static let holdLimit = 32 << 20

    /// Starts the workers again from point `point` (the current span), its window `window`
    /// rather than the index's; the bytes taken so far stay as they are.
    func restart(at point: Int, window: [UInt8]) {
        guard let end = run?.end else { return }
        stopRun()
        for decoder in decoders { decoder.windowOverride = (point, window) }
        launch(point..<end)
    }

    func stopRun() {
        pendingRun = nil
        if let current, let release = current.release { current.pool.give(release) }
        current = nil
        run?.cancelAndJoin()
        run = nil
    }

    // MARK: Reading

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        guard let lent = try lendPlainBytes(maxLength: maxLength) else {
            return try readSequential(into: buffer, maxLength: maxLength)
        }
        if let base = lent.baseAddress { buffer.update(from: base.assumingMemoryBound(to: UInt8.self), count: lent.count) }
        return lent.count
    }

    /// Lends the next plain bytes where the workers decoded them, without copying: calls `body`
    /// with at most `maxLength` of them (valid only during the call), as a read would return
    /// them, with a read's status, events and errors. Once the sequential reader has taken
    /// over, they are read into a temporary buffer.
    /// - Returns: The number of bytes lent; `0` at the end (and for `maxLength` 0), `body` not
    ///   called; `-1` on error, with ``ByteStream/streamError`` set.
    /// - Throws: Only what `body` throws (the bytes count as read).
    public func readInPlace(maxLength: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Int {
        try lendInPlace(maxLength: maxLength, body)
    }

    var lendsInPlace: Bool { fallback == nil }
}

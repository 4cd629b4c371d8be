import ByteStreams

/// Takes plain bytes and writes them, deflated, as one gzip member (RFC 1952) to an inner
/// output stream.
///
/// ``ByteStream/open()`` opens the inner stream if it is not open yet and writes the header;
/// each ``ByteOutputStream/write(_:maxLength:)`` deflates all bytes offered (unscheduled, it
/// never writes short) and passes whole compressed chunks of at most `chunkSize` bytes to the inner stream;
/// ``flush()`` makes everything written so far decodable (a zlib sync flush);
/// ``ByteStream/close()`` finishes the deflate data, writes the trailer (CRC-32 and ISIZE) and
/// closes the inner stream unless `closesInnerStream` is `false`. A failure while finishing
/// leaves the status `.error` with the error in ``ByteStream/streamError``, so check it (or
/// use `closeOrThrow()`) before trusting the output.
///
/// Memory: zlib's deflate state (about 256 KiB at the default memory level) plus one output
/// buffer of `chunkSize` bytes, whatever the amount of data.
///
/// Parallel deflate: with `threads` above 1, a `blockSize`, or an `engine`, the plain bytes
/// are cut into blocks of `blockSize` bytes deflated on `threads` worker threads and written in
/// order as one ordinary member, whose bytes then depend on the level, engine and block size
/// only, never on the thread count. The ``DeflateEngine/chunks`` engine (the default) deflates
/// independent 1 MiB chunks with libdeflate or ISA-L, about twice zlib's speed per core at a
/// size no larger than zlib's at the same level; ``DeflateEngine/zlib`` deflates 128 KiB blocks
/// with zlib, each with the 32 KiB before it as preset dictionary (pigz's design: within about
/// 0.1% of one continuous deflate's size). Memory: up to `threads + 1` blocks in flight and
/// the one being filled, each its size in plain bytes until deflated, then its deflate output,
/// plus one deflater per thread (see `BlockDeflate`): measured with 1 MiB chunks on 2 threads,
/// about 9 MiB above the process's 10 MiB at start at levels 1 to 9.
/// Every worker is joined before ``ByteStream/close()`` and ``abandon()`` return.
///
/// Scheduled (``ByteStream/schedule(on:)-(DispatchQueue)``), the stream follows its inner
/// stream: it schedules the inner stream on the same scheduler and takes its events (the inner
/// stream's own delegate is set aside until this stream is unscheduled or closed). It never
/// blocks then: compressed bytes the inner stream does not take (a full socket buffer) are
/// held, and until they are written a write takes nothing (it returns 0); a write takes at most
/// `chunkSize` plain bytes, so that what is held stays about one deflate block (tens of KiB;
/// with parallel deflate, the blocks in flight). ``ByteStream/Event/hasSpaceAvailable`` comes
/// when nothing is held and the inner stream has space, once after each write; a stream that
/// writes nothing is not told again. ``flush()`` may leave its bytes held, to be written as the
/// inner stream takes them. ``ByteStream/close()`` first takes the inner stream off the
/// scheduler (blocking again), then writes the held bytes, the rest of the deflate data and the
/// trailer: it blocks until the inner stream has taken them (as Cocoa's close is synchronous).
///
/// Errors: the inner stream's errors come through unchanged; zlib failures are
/// ``GzipError/zlibFailure(code:message:)``. Wraps zlib's `deflate`.
public final class GzipOutputStream: ByteOutputStream {
    /// The compression level used when none is given: 6, as gzip and zlib.
    public static let defaultLevel = 6
    /// The block size of parallel deflate when none is given: 128 KiB, as pigz.
    public static let defaultBlockSize = 128 << 10
    /// The smallest block size: one deflate window (RFC 1951 §2), 32 KiB.
    public static let minimumBlockSize = 32 << 10
    /// The largest block size: 1 GiB (zlib counts a block's bytes in 32 bits).
    public static let maximumBlockSize = 1 << 30

    private let inner: ByteOutputStream
    private let closesInnerStream: Bool
    /// The compression level, 0 (stored blocks) to 9 (best); to 12 with the
    /// ``DeflateEngine/chunks`` engine.
    public let level: Int
    /// The header written at the start of the member.
    public let header: GzipHeader
    private let chunkSize: Int
    /// The deflating threads: 1 deflates on the writing thread unless `blockSize` is set.
    public let threads: Int
    /// Plain bytes per parallel block, or `nil` for one continuous deflate on the writing thread.
    public let blockSize: Int?
    /// The parallel engine, or `nil` for one continuous zlib deflate on the writing thread.
    public let engine: DeflateEngine?
    /// Whether chunk boundaries are chosen from the content (``DeflateEngine/chunks`` only).
    public let isRsyncable: Bool
    /// The access points at the chunk starts, the sizes and the line table (the `\n` bytes
    /// before each point, counted by the workers), once the stream has closed without
    /// error, when made with `buildsIndex`; else `nil`. Write it with
    /// ``GzipIndex/gzidxEncoded()`` beside the file as `FILE.gz.gzidx`.
    public private(set) var index: GzipIndex?
    /// The access points so far, while building an index.
    private var accessPoints: [GzipAccessPoint]?
    /// Compressed bytes produced so far (header included), whether the inner stream took them
    /// yet or not; plain bytes of the blocks produced so far.
    private var producedCount: Int64 = 0
    private var producedPlainCount: Int64 = 0
    /// While building an index: the `\n` bytes in the blocks produced so far and before each
    /// access point, and the last plain byte, for the index's line table.
    private var producedNewlines: UInt64 = 0
    private var newlinesBefore: [UInt64] = []
    private var lastPlainByte: UInt8?
    /// The deflater of one continuous deflate (zlib's), while open without `blockSize`.
    private var zstream: ZStream?
    private var blockDeflate: BlockDeflate?
    /// The deflater's output room, `max(chunkSize, 64)` bytes.
    private let outputBuffer: UnsafeMutableRawBufferPointer
    private var crc: UInt32 = 0
    private var uncompressedCount: Int64 = 0
    /// The number of compressed bytes written to the inner stream so far, header included
    /// (bytes a scheduled stream still holds are not counted).
    public private(set) var compressedByteCount: Int64 = 0
    /// Watches the scheduled inner stream; set while this stream is scheduled and open.
    private var innerEvents: InnerStreamEvents?
    /// Compressed bytes a scheduled inner stream has not taken yet, from `heldStart` on.
    private var held: [UInt8] = []
    private var heldStart = 0
    /// Set when a write left no space: the next "has space available" is owed to the delegate.
    private var awaitingSpace = false

    /// A stream that deflates into `inner`.
    /// - Parameters:
    ///   - inner: Where the gzip member goes.
    ///   - level: Compression level, `0...9`, or `0...12` with the ``DeflateEngine/chunks``
    ///     engine; default 6.
    ///   - header: The member's header fields; default: no name, MTIME 0, OS 3 (Unix).
    ///     FEXTRA must hold at most 65535 bytes, and FNAME and FCOMMENT no zero byte (RFC 1952
    ///     §2.3.1 ends them with one).
    ///   - chunkSize: The size in bytes of the compressed chunks handed to `inner`,
    ///     `1...ByteStream.maximumChunkSize`; default 4096.
    ///   - threads: Deflating threads, `1...256`; default 1. Above 1, deflate runs in blocks
    ///     of `blockSize` bytes on that many worker threads.
    ///   - blockSize: Plain bytes per parallel block, ``minimumBlockSize`` to
    ///     ``maximumBlockSize``; `nil` (the default) is the engine's: 1 MiB for
    ///     ``DeflateEngine/chunks``, ``defaultBlockSize`` for ``DeflateEngine/zlib``.
    ///   - engine: How to deflate in parallel; `nil` (the default) is ``DeflateEngine/chunks``
    ///     when `threads` is above 1, `blockSize` is given, `level` is above 9, `rsyncable` or
    ///     `buildsIndex`, else one continuous zlib deflate on the writing thread (the least
    ///     memory). Give an engine or a block size with `threads: 1` for output identical to
    ///     any other thread count.
    ///   - rsyncable: Cut the chunks where the content says (a rolling hash of the last 64
    ///     bytes, `ContentDefinedChunker`), at least a quarter and at most twice `blockSize`,
    ///     about `blockSize` on average, as gzip's and pigz's `--rsyncable`: inserting or
    ///     deleting bytes then changes only the compressed bytes of the chunks around the
    ///     change, so rsync and deduplicating backups find the rest. ``DeflateEngine/chunks``
    ///     only; default `false`.
    ///   - buildsIndex: Record an access point at each chunk start for ``index``, and count each
    ///     chunk's `\n` bytes on its worker for the line table (about 48 bytes per chunk in
    ///     memory). ``DeflateEngine/chunks`` only; default `false`.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` naming the
    ///   first value out of range or rule broken (`level`, `rsyncable` and `buildsIndex` as
    ///   ``DeflateEngine/resolved(_:level:threads:blockSize:rsyncable:buildsIndex:operation:)``
    ///   checks them, then `header.extraField`, `header.fileName`,
    ///   `header.comment`, `chunkSize`, `threads`, `blockSize`); nothing is allocated then.
    public init(wrapping inner: ByteOutputStream, level: Int = GzipOutputStream.defaultLevel,
                header: GzipHeader = GzipHeader(), chunkSize: Int = ByteStream.defaultChunkSize,
                threads: Int = 1, blockSize: Int? = nil, engine: DeflateEngine? = nil,
                rsyncable: Bool = false, buildsIndex: Bool = false,
                closesInnerStream: Bool = true) throws(ByteStreamError) {
        let operation = "create GzipOutputStream"
        let engine = try DeflateEngine.resolved(engine, level: level, threads: threads, blockSize: blockSize,
                                                rsyncable: rsyncable, buildsIndex: buildsIndex, operation: operation)
        try header.validate(operation: operation)
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        try requireArgument(threads, in: threadCounts, "threads", operation: operation)
        if let blockSize {
            try requireArgument(blockSize, in: Self.minimumBlockSize...Self.maximumBlockSize, "blockSize",
                                operation: operation)
        }
        self.threads = threads
        self.engine = engine
        self.isRsyncable = rsyncable
        self.accessPoints = buildsIndex ? [] : nil
        self.blockSize = switch engine {
        case .chunks: blockSize ?? chunkSettings(level: level).chunkSize
        case .zlib: blockSize ?? Self.defaultBlockSize
        case nil: nil
        }
        self.inner = inner
        self.level = level
        self.header = header
        self.chunkSize = chunkSize
        self.closesInnerStream = closesInnerStream
        // zlib needs more than 6 bytes of room for a sync flush, or it repeats the flush
        // marker forever; chunks handed to the inner stream are still at most chunkSize.
        self.outputBuffer = .allocate(byteCount: max(chunkSize, 64), alignment: 1)
        super.init()
    }

    deinit {
        #if DEBUG
        warnIfDroppedOpen()
        #endif
        zstream?.end()
        outputBuffer.deallocate()
    }

    /// Whether a write may take bytes now: while the stream is open; scheduled, only when it
    /// holds no compressed bytes and its inner stream has space.
    override public var hasSpaceAvailable: Bool {
        guard super.hasSpaceAvailable else { return false }
        return innerEvents == nil || (heldStart == held.count && inner.hasSpaceAvailable)
    }

    /// The compressed bytes a scheduled stream holds for its inner stream. For tests.
    var heldByteCount: Int { held.count - heldStart }

    /// The number of plain bytes taken so far.
    public var uncompressedByteCount: Int64 { uncompressedCount }

    override public func openBacking() throws {
        try inner.openUnlessOpened()
        if let blockSize, let engine {
            let settings = engine == .chunks ? chunkSettings(level: level) : nil
            let boundaries = isRsyncable
                ? ContentDefinedChunker(minimumSize: blockSize / 4, averageSize: blockSize, maximumSize: 2 * blockSize)
                : nil
            blockDeflate = try BlockDeflate(blockSize: boundaries?.maximumSize ?? blockSize, boundaries: boundaries,
                                            threads: threads, countsNewlines: accessPoints != nil) { () throws(GzipError) in
                if let settings { return settings.makeDeflater() }
                return try ZStream(deflateLevel: level)
            }
        } else {
            zstream = try ZStream(deflateLevel: level)
        }
        // Scheduled: the header is held like any other output rather than waited for.
        if scheduler != nil { startFollowingInnerStream() }
        try emit(GzipFormat.encodeHeader(header, level: level))
    }

    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        if finished { throw ByteStreamError(.noSpaceAvailable, operation: "write") }
        var count = maxLength
        if innerEvents != nil {
            // Scheduled: nothing new is taken while compressed bytes wait for the inner stream,
            // and at most one chunk at a time, so that what is held stays small.
            try drainHeld()
            if heldStart < held.count { return 0 }
            count = min(maxLength, chunkSize)
        }
        uncompressedCount += Int64(count)
        if let blockDeflate {
            // Each block's CRC-32 is computed by its worker and joined in emit(block:).
            try blockDeflate.write(UnsafeRawBufferPointer(start: buffer, count: count), deliver: emit(block:))
            return count
        }
        crc = crc32(crc, UnsafeRawBufferPointer(start: buffer, count: count))
        // zlib takes a 32-bit length: feed large buffers in slices.
        var offset = 0
        while offset < count {
            let slice = min(count - offset, 1 << 30)
            try deflate(UnsafeRawBufferPointer(start: buffer + offset, count: slice), flush: .none)
            offset += slice
        }
        return count
    }

    /// Makes every byte written so far decodable by the reader, at a small cost in ratio:
    /// a zlib sync flush (an empty stored block that aligns to a byte boundary). In parallel,
    /// the current block or chunk ends here, early, and every block before it is written
    /// first (this waits for the workers); with the chunks engine the next chunk then starts
    /// afresh, as after any chunk. While scheduled, the flushed bytes may be held until the
    /// inner stream has space.
    /// - Throws: The inner stream's error or ``GzipError``; the stream is then in `.error`.
    public func flush() throws {
        try throwIfFailed()
        guard streamStatus == .open, !finished else { throw ByteStreamError(.notOpen, operation: "flush") }
        do {
            if let blockDeflate {
                try blockDeflate.flush(deliver: emit(block:))
            } else {
                try deflate(UnsafeRawBufferPointer(start: nil, count: 0), flush: .sync)
            }
        } catch {
            fail(error)
            throw error
        }
    }

    /// Closes the stream without finishing the member: no final deflate block and no trailer
    /// are written, so what reached the inner stream is not a valid gzip file and a reader
    /// reports it truncated. For a writer whose input failed, so that partial data is never
    /// mistaken for whole data. Closes the inner stream as ``ByteStream/close()`` does.
    public func abandon() {
        abandoned = true
        close()
    }

    /// Whether ``abandon()`` was called: the member has no trailer.
    package private(set) var abandoned = false
    /// Whether the last deflate block and the trailer have been made (``finishOutput()``).
    private var finished = false

    /// Makes the last deflate block and the trailer, and the index when one is kept.
    private func finishMember() throws {
        finished = true
        if let blockDeflate {
            try blockDeflate.finish(deliver: emit(block:))
        } else {
            try deflate(UnsafeRawBufferPointer(start: nil, count: 0), flush: .finish)
        }
        let trailer = GzipTrailer(crc32: crc, plainSize: uncompressedCount).encoded
        try emit(trailer)
        if let accessPoints, let blockSize {
            index = GzipIndex(compressedSize: UInt64(producedCount), plainSize: UInt64(uncompressedCount),
                              spacing: UInt32(clamping: blockSize), points: accessPoints)
            // The trailer is the file's last 8 bytes: the seal binds the index to them.
            index?.compressedTail = Array(trailer)
            let unterminated: UInt64 = lastPlainByte.map { $0 == 0x0A ? 0 : 1 } ?? 0
            index?.lineTable = GzipLineTable(newlinesBefore: newlinesBefore, newlineCount: producedNewlines,
                                             lineCount: producedNewlines + unterminated)
        }
    }

    override public func closeBacking() throws {
        var firstError: (any Error)?
        if streamStatus != .error, !abandoned, zstream != nil || blockDeflate != nil {
            do {
                if !finished { try finishMember() }
                // What a scheduled stream held after finishOutput(): written now that the inner
                // stream is off the scheduler and blocks again.
                try drainHeld()
            } catch {
                firstError = error
            }
        }
        zstream?.end()
        zstream = nil
        blockDeflate?.cancel()
        blockDeflate = nil
        if closesInnerStream {
            inner.close()
            if firstError == nil, inner.streamStatus == .error { firstError = inner.streamError }
        }
        if let firstError { throw firstError }
    }

    /// Deflates `input` (at most 4 GiB − 1 bytes) with `flush`, passing the deflate data to
    /// the inner stream in chunks, until zlib has taken all input (and, for a finish, ended the
    /// deflate data).
    private func deflate(_ input: UnsafeRawBufferPointer, flush: DeflateFlush) throws {
        guard let zstream else { throw ByteStreamError(.notOpen, operation: "write") }
        try zstream.deflate(input, flush: flush, through: outputBuffer) { try emitInChunks($0) }
    }

    /// Writes a deflated block and adds its CRC-32 to the member's; records its start as an
    /// access point when building an index (the chunks engine's blocks refer to nothing
    /// before them). An empty last block starts no point, unless nothing came before.
    private func emit(block: BlockDeflate.Block) throws {
        if accessPoints != nil, block.plainCount > 0 || producedPlainCount == 0 {
            accessPoints?.append(GzipAccessPoint(compressedOffset: UInt64(producedCount),
                                                 plainOffset: UInt64(producedPlainCount)))
            newlinesBefore.append(producedNewlines)
        }
        producedPlainCount += Int64(block.plainCount)
        producedNewlines += UInt64(block.newlineCount)
        if let last = block.lastByte { lastPlainByte = last }
        if let deflated = block.deflated { try emitInChunks(deflated.bytes) }
        crc = crc32Combine(crc, block.crc, secondLength: UInt64(block.plainCount))
    }

    /// Writes deflate output to the inner stream in chunks of at most `chunkSize` bytes.
    private func emitInChunks(_ bytes: UnsafeRawBufferPointer) throws {
        var start = 0
        while start < bytes.count {
            let length = min(chunkSize, bytes.count - start)
            try emit(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
            start += length
        }
    }

    /// Hands compressed bytes to the inner stream: all of them, blocking, when unscheduled
    /// (held bytes first); when scheduled, what it takes without blocking, holding the rest.
    private func emit(_ bytes: UnsafeRawBufferPointer) throws {
        producedCount += Int64(bytes.count)
        guard innerEvents != nil else {
            try drainHeld()
            try inner.writeAll(bytes)
            compressedByteCount += Int64(bytes.count)
            return
        }
        let taken = heldStart < held.count ? 0 : try writeWithoutWaiting(bytes)
        held.append(contentsOf: bytes[taken...])
    }

    /// Writes the held bytes: all of them, blocking, when unscheduled; when scheduled, what
    /// the inner stream takes without blocking.
    private func drainHeld() throws {
        guard heldStart < held.count else { return }
        try held.withUnsafeBytes { all in
            let rest = UnsafeRawBufferPointer(rebasing: all[heldStart...])
            if innerEvents == nil {
                try inner.writeAll(rest)
                compressedByteCount += Int64(rest.count)
                heldStart = all.count
            } else {
                heldStart += try writeWithoutWaiting(rest)
            }
        }
        if heldStart == held.count {
            held.removeAll(keepingCapacity: true)
            heldStart = 0
        }
    }

    /// Writes to the scheduled inner stream until it takes no more (a write returns 0).
    /// - Returns: The bytes taken.
    private func writeWithoutWaiting(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        var taken = 0
        while taken < bytes.count {
            let count = inner.write(base + taken, maxLength: bytes.count - taken)
            if count < 0 { throw inner.streamErrorOrFallback(operation: "write") }
            if count == 0 { break }
            taken += count
        }
        compressedByteCount += Int64(taken)
        return taken
    }

    private func emit(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try emit($0) }
    }
}

// MARK: Scheduling

/// A scheduled `GzipOutputStream` follows its inner stream: it schedules the inner stream on
/// its own scheduler, holds the compressed bytes the inner stream does not take, and says "has
/// space available" when it holds none and the inner stream has space.
extension GzipOutputStream: FollowsInnerReadiness {
    package func startFollowingInnerStream() {
        guard let scheduler else { return }
        if innerEvents == nil {
            innerEvents = InnerStreamEvents(inner: inner, scheduler: scheduler) { [weak self] event in
                if event == .hasSpaceAvailable { self?.innerHasSpace() }
            }
        }
        // Called again once open (the first call, from openBacking, is before).
        if streamStatus == .open { rearmAfterTransfer(wouldBlock: false) }
    }

    package func stopFollowingInnerStream() {
        innerEvents?.detach()
        innerEvents = nil
        awaitingSpace = false
    }

    package func rearmAfterTransfer(wouldBlock: Bool) {
        if hasSpaceAvailable {
            awaitingSpace = false
            post(.hasSpaceAvailable)
        } else {
            awaitingSpace = true
        }
    }

    /// On the scheduler: the inner stream has space; hands it held bytes, and tells the
    /// delegate once nothing is held if a write is waiting to hear it.
    private func innerHasSpace() {
        guard innerEvents != nil, streamStatus == .open else { return }
        do {
            try drainHeld()
        } catch {
            fail(error)
            return
        }
        if awaitingSpace, heldStart == held.count {
            awaitingSpace = false
            post(.hasSpaceAvailable)
        }
    }
}

// MARK: Swift concurrency

/// `finishAndClose()` (ByteStreams' asynchronous close) makes the end of the member while the
/// stream is still scheduled, and waits for the inner stream to take it before closing.
extension GzipOutputStream: HoldsOutputForInnerStream {
    /// Makes the last deflate block and the trailer: held while the scheduled inner stream has
    /// no room, written as it takes them. Later writes fail with
    /// ``ByteStreamError/Code-swift.enum/noSpaceAvailable``; ``ByteStream/close()`` then
    /// writes nothing more of the member.
    /// - Throws: The inner stream's error or ``GzipError``; the stream is then in `.error`.
    package func finishOutput() throws {
        try throwIfFailed()
        guard !finished, !abandoned else { return }
        do {
            try finishMember()
        } catch {
            fail(error)
            throw error
        }
    }

    package var heldOutputCount: Int { heldByteCount }
}

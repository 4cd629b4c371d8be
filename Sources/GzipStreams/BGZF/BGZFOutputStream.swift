import ByteStreams

/// Takes plain bytes and writes them as BGZF (SAM/BAM specification §4.1) to an inner output
/// stream: a series of gzip members, each holding at most ``maximumPlainMemberSize`` plain bytes
/// and at most ``maximumMemberSize`` bytes in all, each with the `BC` extra subfield that gives
/// its size, and after them the 28-byte empty member ``endOfFileMember``.
///
/// Any gzip reader decodes the result as one stream (RFC 1952 §2.2, members concatenated);
/// htslib, samtools, tabix and bgzip also read it natively, and a reader can find every member
/// without inflating, so members can be decoded in parallel or from the middle (with
/// ``index``).
///
/// Each member's header is the fixed 18 bytes htslib reads: `1f 8b 08 04`, MTIME 0, XFL 0,
/// OS 255, XLEN 6, then the subfield `B` `C`, SLEN 2, BSIZE (the member's size in bytes minus
/// 1, little-endian); no FNAME, MTIME or other field. Then the raw deflate data (RFC 1951),
/// CRC-32 and ISIZE (RFC 1952 §2.3.1).
///
/// ``ByteStream/open()`` opens the inner stream if it is not open yet; each
/// ``ByteOutputStream/write(_:maxLength:)`` takes all bytes offered (it never writes short) and
/// hands each member that fills up to a worker thread; finished members are written to the
/// inner stream in input order, in pieces of at most `chunkSize` bytes; ``flush()`` ends the
/// current member early and writes every member; ``ByteStream/close()`` writes the last
/// member and the end-of-file member and closes the inner stream unless `closesInnerStream`
/// is `false`. ``abandon()`` closes without the end-of-file member. A write blocks while
/// `2 × threads` members are in flight, until the oldest is written; close and flush block
/// until every member is written.
///
/// Members are deflated by libdeflate's whole-buffer compressor (`LibdeflateDeflater`), one
/// per worker thread (allocated by the worker on its first member, freed when the stream closes), and
/// their CRC-32 is computed on the worker too. The output depends only on the input, the level
/// and where ``flush()`` was called, never on the thread count or on how the input was split
/// into writes. Levels: 0 stores (stored deflate blocks, written here: 5 bytes of overhead per
/// member); 1 to 12 are libdeflate's levels 1 to 12, whose scale follows zlib's to 9 (10 to
/// 12 are its slow near-optimal parsing). htslib 1.16 maps its levels 4 to 9 to libdeflate's 5, 6,
/// 7, 8, 10 and 12, so the output is byte for byte bgzip's at levels 0 to 3 only; at level 6
/// it was 0.4% larger than `bgzip -l 6` on a mixed 256 MiB corpus, for about 20% less CPU
/// time. A member whose deflate data would not fit in 64 KiB is stored instead.
///
/// Memory: at most `2 × threads` members in flight and one being filled, each a plain buffer
/// of 65280 bytes and an output buffer of 64 KiB, allocated as needed and reused; plus one
/// libdeflate compressor per worker; plus, with `buildsIndex`, 16 bytes per member for the
/// index.
///
/// Errors: the inner stream's errors come through unchanged; a worker's failure is a
/// ``GzipError/libdeflateFailure(message:)``, recorded as the stream's error when its member's
/// turn to be written comes. Every worker has finished before ``ByteStream/close()`` and
/// ``abandon()`` return, and before a write that failed returns.
///
/// Not thread-safe: one thread or queue at a time writes and closes (the worker threads are
/// internal).
///
/// Scheduled (``ByteStream/schedule(on:)-(DispatchQueue)``), it does not follow its inner
/// stream's readiness: the delegate is told "has space available" after every write, and a write
/// blocks as when polled. Schedule a `GzipInputStream` or `GzipOutputStream` over a pipe or
/// socket, or the pipe or socket itself, for events that never block.
///
/// Wraps libdeflate's `libdeflate_deflate_compress` and ISA-L's `crc32_gzip_refl`.
public final class BGZFOutputStream: ByteOutputStream {
    /// The compression level used when none is given: 6, as bgzip with libdeflate.
    public static let defaultLevel = 6
    /// The most plain bytes in one member: 65280 (`0xff00`), as bgzip and htslib, so that even a
    /// stored member fits in ``maximumMemberSize``.
    public static let maximumPlainMemberSize = 0xff00
    /// The most bytes of one member, header and trailer included: 65536, as BSIZE (the size
    /// minus 1) is 16 bits (SAM/BAM specification §4.1).
    public static let maximumMemberSize = BGZFFormat.maximumMemberSize
    /// The end-of-file marker every BGZF file ends with: an empty member of 28 bytes
    /// (SAM/BAM specification §4.1.2).
    public static let endOfFileMember: [UInt8] = BGZFFormat.endOfFileMember

    /// The compression level, 0 (stored) to 12 (best).
    public let level: Int
    /// The deflating worker threads.
    public let threads: Int
    /// The index of the members written so far, or `nil` unless `buildsIndex` was given.
    public private(set) var index: BGZFIndex?
    /// The number of compressed bytes written to the inner stream so far, the end-of-file
    /// member included once written.
    public private(set) var compressedByteCount: Int64 = 0
    /// The number of members with data written so far (the end-of-file member not counted).
    public private(set) var memberCount = 0

    private let inner: ByteOutputStream
    private let closesInnerStream: Bool
    private let chunkSize: Int
    private var uncompressedCount: Int64 = 0
    /// Plain bytes in the members written so far: where the next member starts in the plain data.
    private var writtenPlainCount: Int64 = 0
    private var pipeline: OrderedPipeline<LibdeflateDeflater, BGZFMember>?
    /// The member being filled, if any.
    private var current: BGZFMember?
    /// Members written and free to fill again.
    private var spareMembers: [BGZFMember] = []
    private var abandoned = false
    /// For tests: the member (counted from 0) whose worker reports a failure.
    private let failingMember: Int?
    private var submittedCount = 0

    /// A stream that writes BGZF into `inner`.
    /// - Parameters:
    ///   - inner: Where the BGZF data goes.
    ///   - level: Compression level, `0...12`; default 6. 0 stores; 1 to 12 are libdeflate's.
    ///   - threads: Deflating worker threads, `1...256`; default 1 (which still deflates on a
    ///     worker, beside the writing thread).
    ///   - chunkSize: The most bytes per write to `inner`, `1...ByteStream.maximumChunkSize`;
    ///     default 4096.
    ///   - buildsIndex: Keep the offsets of every member for ``index`` (a `.gzi`); default
    ///     `false`.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` naming the
    ///   first value out of range (`level`, `threads`, `chunkSize`).
    public convenience init(wrapping inner: ByteOutputStream, level: Int = BGZFOutputStream.defaultLevel,
                            threads: Int = 1, chunkSize: Int = ByteStream.defaultChunkSize,
                            buildsIndex: Bool = false, closesInnerStream: Bool = true) throws(ByteStreamError) {
        try self.init(wrapping: inner, level: level, threads: threads, chunkSize: chunkSize, buildsIndex: buildsIndex,
                      closesInnerStream: closesInnerStream, failingMember: nil)
    }

    /// The designated initializer; `failingMember` makes that member's worker fail, for tests.
    init(wrapping inner: ByteOutputStream, level: Int, threads: Int, chunkSize: Int, buildsIndex: Bool,
         closesInnerStream: Bool, failingMember: Int?) throws(ByteStreamError) {
        let operation = "create BGZFOutputStream"
        try requireArgument(level, in: extendedCompressionLevels, "level", operation: operation)
        try requireArgument(threads, in: threadCounts, "threads", operation: operation)
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        self.inner = inner
        self.level = level
        self.threads = threads
        self.chunkSize = chunkSize
        self.closesInnerStream = closesInnerStream
        self.index = buildsIndex ? BGZFIndex() : nil
        self.failingMember = failingMember
        super.init()
    }

    /// The number of plain bytes taken so far.
    public var uncompressedByteCount: Int64 { uncompressedCount }

    override public func openBacking() throws {
        try inner.openUnlessOpened()
        pipeline = OrderedPipeline(workers: (0..<threads).map { _ in LibdeflateDeflater(level: level) },
                                   maximumInFlight: 2 * threads, label: "gzstream.bgzf")
    }

    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        var offset = 0
        while offset < maxLength {
            let member = current ?? takeSpareMember()
            current = member
            let count = min(Self.maximumPlainMemberSize - member.plainCount, maxLength - offset)
            (member.plain + member.plainCount).update(from: buffer + offset, count: count)
            member.plainCount += count
            offset += count
            uncompressedCount += Int64(count)
            if member.plainCount == Self.maximumPlainMemberSize { try submitCurrent() }
        }
        return maxLength
    }

    /// Ends the current member (if it holds any bytes) and writes every member to the inner
    /// stream, so that all bytes written so far are decodable from it. The members after it
    /// start afresh, so flushing often costs ratio and makes more members.
    /// - Throws: The inner stream's error or a worker's ``GzipError``; the stream is then in
    ///   `.error`. ``ByteStreamError/Code-swift.enum/notOpen`` when the stream is not open.
    public func flush() throws {
        try throwIfFailed()
        guard streamStatus == .open, let pipeline else { throw ByteStreamError(.notOpen, operation: "flush") }
        do {
            if let current, current.plainCount > 0 { try submitCurrent() }
            try pipeline.finish(deliver: write(member:))
        } catch {
            stopWorkers()
            fail(error)
            throw error
        }
    }

    /// Closes the stream without writing the members not yet written or the end-of-file
    /// member, so that what reached the inner stream is not mistaken for a whole BGZF file
    /// (bgzip and htslib warn of a missing end-of-file member). For a writer whose input
    /// failed. Joins the workers and closes the inner stream as ``ByteStream/close()`` does.
    public func abandon() {
        abandoned = true
        close()
    }

    override public func closeBacking() throws {
        var firstError: (any Error)?
        if streamStatus != .error, !abandoned, let pipeline {
            do {
                if let current, current.plainCount > 0 { try submitCurrent() }
                try pipeline.finish(deliver: write(member:))
                try Self.endOfFileMember.withUnsafeBytes { try emit($0) }
            } catch {
                firstError = error
            }
        }
        stopWorkers()
        current = nil
        spareMembers = []
        if closesInnerStream {
            inner.close()
            if firstError == nil, inner.streamStatus == .error { firstError = inner.streamError }
        }
        if let firstError { throw firstError }
    }

    /// Waits for every worker and frees their compressors; nothing more is written.
    private func stopWorkers() {
        guard let pipeline else { return }
        pipeline.cancelAndJoin { $0.end() }
        self.pipeline = nil
    }

    /// A free member: a written one, or a new one. At most `2 × threads` are in flight, so at
    /// most `2 × threads + 1` are ever made.
    private func takeSpareMember() -> BGZFMember {
        spareMembers.popLast() ?? BGZFMember()
    }

    /// Hands the current member to a worker, writing finished members while the window is full.
    private func submitCurrent() throws {
        guard let member = current, let pipeline else { throw ByteStreamError(.notOpen, operation: "write") }
        current = nil
        let failure: GzipError? = submittedCount == failingMember
            ? .libdeflateFailure(message: "test failure in member \(submittedCount)") : nil
        submittedCount += 1
        do {
            let level = level
            try pipeline.submit({ deflater, isCancelled in
                if isCancelled() {
                    member.packedCount = 0
                    return member
                }
                if let failure {
                    member.error = failure
                } else {
                    member.encode(level: level, with: deflater)
                }
                return member
            }, deliver: write(member:))
        } catch {
            // A failed write (or a worker's failure) ends the stream: no worker outlives it.
            stopWorkers()
            throw error
        }
    }

    /// Writes a finished member, records it in the index
    /// and makes it free to fill again.
    private func write(member: BGZFMember) throws {
        if let error = member.error { throw error }
        if memberCount > 0 {
            index?.entries.append(BGZFIndex.Entry(compressedOffset: UInt64(compressedByteCount),
                                                  uncompressedOffset: UInt64(writtenPlainCount)))
        }
        try emit(UnsafeRawBufferPointer(start: member.packed, count: member.packedCount))
        memberCount += 1
        writtenPlainCount += Int64(member.plainCount)
        member.plainCount = 0
        member.packedCount = 0
        spareMembers.append(member)
    }

    /// Writes `bytes` to the inner stream in pieces of at most `chunkSize` bytes.
    private func emit(_ bytes: UnsafeRawBufferPointer) throws {
        var start = 0
        while start < bytes.count {
            let length = min(chunkSize, bytes.count - start)
            try inner.writeAll(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
            compressedByteCount += Int64(length)
            start += length
        }
    }
}

/// One member's buffers: its plain bytes, filled by the writing thread, and the whole encoded
/// member, written by a worker. Handed between them through ``OrderedPipeline``, which orders
/// the accesses; reused for later members. `Sendable` is unchecked on that ordering (a member
/// belongs to the writing thread until submitted, to the worker until its job's result is
/// collected), which the compiler cannot see.
final class BGZFMember: @unchecked Sendable {
    /// ``BGZFOutputStream/maximumPlainMemberSize`` bytes.
    let plain: UnsafeMutablePointer<UInt8>
    var plainCount = 0
    /// ``BGZFOutputStream/maximumMemberSize`` bytes: header, deflate data, trailer.
    let packed: UnsafeMutablePointer<UInt8>
    var packedCount = 0
    var error: GzipError?

    init() {
        plain = .allocate(capacity: BGZFOutputStream.maximumPlainMemberSize)
        packed = .allocate(capacity: BGZFOutputStream.maximumMemberSize)
    }

    deinit {
        plain.deallocate()
        packed.deallocate()
    }
}

extension BGZFMember {
    /// Header plus trailer: 26 bytes.
    private static let framingSize = BGZFFormat.headerSize + GzipTrailer.size

    /// Encodes ``plain`` as a whole member into ``packed``: header with BSIZE, deflate data
    /// (stored at level 0, or when the deflate data would not fit in a member), CRC-32, ISIZE.
    /// Sets ``error`` when the deflater fails (no compressor could be allocated). Runs on the
    /// worker that owns `deflater`.
    func encode(level: Int, with deflater: some WholeBufferDeflater) {
        let start = BGZFFormat.headerSize
        let room = UnsafeMutableRawBufferPointer(start: packed + start,
                                                 count: BGZFOutputStream.maximumMemberSize - Self.framingSize)
        var deflatedCount = 0
        if level > 0 {
            do {
                deflatedCount = try deflater.compress(UnsafeRawBufferPointer(start: plain, count: plainCount),
                                                      dictionary: UnsafeRawBufferPointer(start: nil, count: 0),
                                                      isFinal: true, into: room) ?? 0
            } catch {
                self.error = error
                return
            }
        }
        if deflatedCount == 0 {
            // One stored block (RFC 1951 §3.2.4): BFINAL 1, BTYPE 00, LEN, NLEN, the bytes.
            packed[start] = 0x01
            GzipFormat.store(littleEndian: UInt16(plainCount), at: packed + start + 1)
            GzipFormat.store(littleEndian: ~UInt16(plainCount), at: packed + start + 3)
            (packed + start + 5).update(from: plain, count: plainCount)
            deflatedCount = 5 + plainCount
        }
        let total = deflatedCount + Self.framingSize
        BGZFFormat.storeHeader(memberSize: total, at: packed)
        let crc = crc32(0, UnsafeRawBufferPointer(start: plain, count: plainCount))
        GzipTrailer(crc32: crc, isize: UInt32(plainCount)).store(at: packed + start + deflatedCount)
        packedCount = total
        error = nil
    }
}

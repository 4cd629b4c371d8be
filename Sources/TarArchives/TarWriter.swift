import ByteStreams

/// Writes a tar archive (POSIX.1-1988 ustar headers, POSIX.1-2001 pax extended headers where a
/// value does not fit; ``TarHeaderEncoding``) to a `ByteOutputStream`: a `FileOutputStream`
/// for a `.tar`, a `GzipOutputStream` for a `.tar.gz`.
///
/// Each ``append(_:content:)`` writes a member's header blocks, then its data padded with zero
/// bytes to a 512-byte block; ``finish()`` writes the end: two zero blocks, then zero bytes up to
/// a whole record of ``recordSize`` bytes (10240 by default, the 20 blocks GNU tar's `-b 20`
/// writes, so that an archive of the same members is byte for byte what `tar --format=ustar`
/// writes; readers need neither the record nor more than one zero block).
///
/// Every member written is reported with its offsets in the tar stream (the plain bytes of a
/// `.tar.gz`): ``TarEntry/headerOffset`` (its first header block, the PAX header when there is
/// one) and ``TarEntry/dataOffset``: the value ``append(_:content:)`` returns, and
/// ``writtenEntries`` when ``keepsWrittenEntries``, so that a member index can be built in the
/// same pass. The entry reported is the member as a reader finds it: its time in whole seconds
/// unless ``storesSubsecondTimes``.
///
/// Bytes are gathered in a buffer of ``bufferSize`` bytes, allocated once, and written to the
/// output when it is full (content is read straight into it), so that small members make few
/// writes. Nothing reaches the output but through ``flush()`` (called when the buffer fills) and
/// ``finish()``.
///
/// Errors are sticky: after a ``TarWriteError`` about content, or any error of the output, every
/// later call throws that first error and nothing more is written (the archive is then cut
/// short: abandon the output, as `GzipOutputStream.abandon()` does, rather than publish it).
/// The output is not opened if it is open already, and never closed: the caller owns it (close
/// it after ``finish()``). Every call blocks while the output or a content stream does.
/// Not thread-safe: use one writer from one thread at a time.
public final class TarWriter {
    /// Where the archive goes; opened by the first write if needed, never closed.
    public let output: ByteOutputStream
    /// The bytes of the record the archive is padded to by ``finish()``: a multiple of 512.
    public let recordSize: Int
    /// Whether a PAX `mtime` record keeps the nanoseconds of a time that has them (ustar stores
    /// whole seconds; GNU tar's default formats do too).
    public let storesSubsecondTimes: Bool
    /// Whether ``writtenEntries`` collects every member written.
    public let keepsWrittenEntries: Bool
    /// The size of the buffer bytes are gathered in, in bytes.
    public let bufferSize: Int

    /// The bytes of the tar stream written so far (those still in the buffer included): the
    /// offset the next member's header gets.
    public private(set) var offset = 0
    /// Every member written, in order, with its offsets, when ``keepsWrittenEntries``; else empty.
    public private(set) var writtenEntries: [TarEntry] = []
    /// Whether ``finish()`` has written the end of the archive.
    public private(set) var isFinished = false

    private let buffer: UnsafeMutableRawBufferPointer
    private var filled = 0
    private var failure: (any Error)?

    /// A writer onto `output`.
    /// - Parameters:
    ///   - output: The stream the archive goes to, open or not; the caller keeps owning it.
    ///   - recordSize: The archive's length is made a multiple of this by ``finish()``, in
    ///     bytes: 10240 (GNU tar's default) unless given; 512 adds nothing past the two end
    ///     blocks. Must be a positive multiple of 512.
    ///   - storesSubsecondTimes: See ``storesSubsecondTimes``; `false` by default.
    ///   - keepsWrittenEntries: See ``keepsWrittenEntries``; `false` by default.
    ///   - bufferSize: Bytes gathered before each write to `output`, at least 512; 256 KiB.
    public init(output: ByteOutputStream, recordSize: Int = 10240, storesSubsecondTimes: Bool = false,
                keepsWrittenEntries: Bool = false, bufferSize: Int = 256 * 1024) {
        precondition(recordSize > 0 && recordSize % TarFormat.blockSize == 0, "a record is whole 512-byte blocks")
        precondition(bufferSize >= TarFormat.blockSize)
        self.output = output
        self.recordSize = recordSize
        self.storesSubsecondTimes = storesSubsecondTimes
        self.keepsWrittenEntries = keepsWrittenEntries
        self.bufferSize = bufferSize
        buffer = .allocate(byteCount: bufferSize, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Appends a member: its header blocks, then exactly `entry.size` bytes read from `content`,
    /// then zero bytes to the next 512-byte block.
    /// - Parameters:
    ///   - entry: The member; its ``TarEntry/headerOffset``, ``TarEntry/dataOffset``, sparse map
    ///     and real size are not read.
    ///   - content: The member's data, read from where it stands (opened if it is not open,
    ///     not closed); `nil` for a member without data (`entry.size` must then be 0).
    /// - Returns: `entry` with its offsets in the archive set.
    /// - Throws: ``TarWriteError`` for a member that cannot be encoded (nothing is written), or
    ///   ``TarWriteError/Reason/contentSizeMismatch(expected:actual:)`` when `content` ends
    ///   early or holds more than `entry.size` bytes (one byte is read past the size to find
    ///   out); a read error of `content` as it is thrown; an output error. After a content
    ///   mismatch or error the writer has failed (nothing more is written).
    @discardableResult
    public func append(_ entry: TarEntry, content: ByteInputStream?) throws -> TarEntry {
        try append(entry, content: content, strict: true).entry
    }

    /// What ``append(_:paddingContent:)`` read of a content that did not match its header.
    public struct ContentOutcome {
        /// The member as written, with its offsets.
        public var entry: TarEntry
        /// The content bytes read, at most ``TarEntry/size``; fewer when it ended early or
        /// failed (the rest of the member's data was written as zero bytes).
        public var bytesRead: Int
        /// Whether the content had more bytes than ``TarEntry/size`` (not written).
        public var hadMore: Bool
        /// The content's read error, if reading failed; the member was completed with zeros.
        public var readError: (any Error)?
    }

    /// Appends a member as ``append(_:content:)`` does, but keeps the archive whole when the
    /// content does not match: content that ends early or fails is padded with zero bytes to
    /// `entry.size`, content beyond it is not written, and the outcome says what happened (as
    /// GNU tar does with a file that changes while it is read, which it reports).
    /// - Returns: What was written and read.
    /// - Throws: ``TarWriteError`` for a member that cannot be encoded (nothing is written); an
    ///   output error.
    public func append(_ entry: TarEntry, paddingContent content: ByteInputStream) throws -> ContentOutcome {
        try append(entry, content: content, strict: false)
    }

    /// Writes the end of the archive: two zero blocks, then zero bytes up to a multiple of
    /// ``recordSize``; then flushes. Calling it again does nothing.
    /// - Throws: An output error; the writer's earlier error.
    public func finish() throws {
        try throwIfFailed()
        if isFinished { return }
        let end = offset + TarFormat.endBlockCount * TarFormat.blockSize
        let total = (end + recordSize - 1) / recordSize * recordSize
        try guarded { try putZeros(total - offset) }
        isFinished = true
        try flush()
    }

    /// Writes the bytes gathered so far to the output.
    /// - Throws: An output error (the writer has then failed); the writer's earlier error.
    public func flush() throws {
        try throwIfFailed()
        try guarded {
            if output.streamStatus == .notOpen { try output.openOrThrow() }
            try output.writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
            filled = 0
        }
    }

    private func append(_ entry: TarEntry, content: ByteInputStream?, strict: Bool) throws -> ContentOutcome {
        try throwIfFailed()
        if isFinished { throw TarWriteError(.finished, path: entry.path) }
        precondition(content != nil || entry.size == 0, "a member with data needs its content")
        let header = try TarHeaderEncoding.headerBlocks(for: entry, storesSubsecondTimes: storesSubsecondTimes)
        var written = entry
        written.headerOffset = offset
        written.dataOffset = offset + header.count
        written.sparseMap = nil
        written.realSize = entry.size
        // As a reader will find it: without a PAX time, the header holds whole seconds.
        if !storesSubsecondTimes {
            written.modificationTime = TarEntry.Timestamp(seconds: entry.modificationTime.seconds, nanoseconds: 0)
        }
        var outcome = ContentOutcome(entry: written, bytesRead: 0, hadMore: false, readError: nil)
        try guarded {
            try header.withUnsafeBytes { try put($0) }
            if let content {
                if content.streamStatus == .notOpen { try content.openOrThrow() }
                try copyContent(content, into: &outcome, strict: strict)
            }
            try putZeros(TarFormat.paddedSize(entry.size) - entry.size)
        }
        if keepsWrittenEntries { writtenEntries.append(written) }
        return outcome
    }

    /// Reads `outcome.entry.size` bytes of `content` into the buffer, then one more to see
    /// that it ends there.
    private func copyContent(_ content: ByteInputStream, into outcome: inout ContentOutcome, strict: Bool) throws {
        let size = outcome.entry.size
        var remaining = size
        while remaining > 0 {
            if filled == bufferSize { try flush() }
            let room = min(remaining, bufferSize - filled)
            let count = content.read((buffer.baseAddress! + filled).assumingMemoryBound(to: UInt8.self), maxLength: room)
            if count <= 0 {
                let error: any Error = count < 0 ? content.streamErrorOrFallback(operation: "read")
                    : TarWriteError(.contentSizeMismatch(expected: size, actual: size - remaining), path: outcome.entry.path)
                if strict { throw error }
                if count < 0 { outcome.readError = error }
                try putZeros(remaining)
                return
            }
            filled += count
            offset += count
            remaining -= count
            outcome.bytesRead += count
        }
        var probe: UInt8 = 0
        let extra = content.read(&probe, maxLength: 1)
        if extra > 0 {
            if strict {
                throw TarWriteError(.contentSizeMismatch(expected: size, actual: size + 1), path: outcome.entry.path)
            }
            outcome.hadMore = true
        } else if extra < 0 {
            let error = content.streamErrorOrFallback(operation: "read")
            if strict { throw error }
            outcome.readError = error
        }
    }

    private func put(_ bytes: UnsafeRawBufferPointer) throws {
        var start = 0
        while start < bytes.count {
            if filled == bufferSize { try flush() }
            let count = min(bytes.count - start, bufferSize - filled)
            (buffer.baseAddress! + filled).copyMemory(from: bytes.baseAddress! + start, byteCount: count)
            filled += count
            start += count
            offset += count
        }
    }

    private func putZeros(_ count: Int) throws {
        var remaining = count
        while remaining > 0 {
            if filled == bufferSize { try flush() }
            let chunk = min(remaining, bufferSize - filled)
            (buffer.baseAddress! + filled).initializeMemory(as: UInt8.self, repeating: 0, count: chunk)
            filled += chunk
            remaining -= chunk
            offset += chunk
        }
    }

    /// Runs `body`; its error becomes the writer's sticky failure.
    private func guarded(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            if failure == nil { failure = error }
            throw error
        }
    }

    private func throwIfFailed() throws {
        if let failure { throw failure }
    }
}

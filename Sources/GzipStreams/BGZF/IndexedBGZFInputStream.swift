import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a BGZF file through its `.gzi` index (``BGZFIndex``): its plain bytes in order, and
/// from any plain offset (``seek(toPlainOffset:)``, ``PlainRangeReading/read(range:)``) without
/// decoding the members before the one that holds it.
///
/// Each start is a ``BGZFInputStream`` over the file positioned at that member
/// (``BGZFIndex/start(containing:)``, ``BGZFInputStream/Start``), so the bytes, checks, errors
/// and member numbers are a ``BGZFInputStream``'s; the bytes of that member before the offset
/// are decoded and dropped (at most one member, 64 KiB). A range read goes on to the end of
/// the last member it touches, so that the member's CRC-32 and ISIZE are checked before the
/// call returns (as `bgzip -b -s` does).
///
/// A seek decodes up to the offset at once: an offset past the end is ``PlainRangeError``
/// thrown by the seek, and the stream stays usable (at the end of the data). A `.gzi` lists
/// member starts only, so the plain size is known only once the last member is decoded.
///
/// Ownership: ``ByteStream/open()`` opens `file` if it is not open yet;
/// ``ByteStream/close()`` closes it when `closesInnerStream`. The file must be a regular file
/// (it is sought with `lseek(2)`). Memory and threads: one ``BGZFInputStream`` at a time (see
/// its documentation). Reads block while members are inflated. Not thread-safe: one thread or
/// queue at a time uses it.
public final class IndexedBGZFInputStream: ByteInputStream, PlainRangeReading {
    /// The index the file is read through.
    public let index: BGZFIndex
    /// The inflating threads of each ``BGZFInputStream``.
    public let threads: Int
    /// The members' decoder (see ``BGZFInputStream``).
    public let inflater: GzipInputStream.Inflater
    /// The plain offset of the next byte a read returns.
    public private(set) var plainOffset = 0

    private let file: FileInputStream
    private let chunkSize: Int
    private let trailingGarbagePolicy: GzipInputStream.TrailingGarbagePolicy
    private let closesInnerStream: Bool
    /// The decoder from the member at `decoderStart` on.
    private var decoder: BGZFInputStream?
    private var decoderStart = BGZFIndex.Entry(compressedOffset: 0, uncompressedOffset: 0)
    /// The plain offset at which reads end (a range read), or `nil`.
    private var rangeEnd: Int?

    /// A stream over the BGZF file `file` and its `index`.
    /// - Parameters:
    ///   - file: The BGZF file (a regular file); opened by ``ByteStream/open()`` if not open.
    ///   - index: Its `.gzi` index (``BGZFIndex/init(decoding:)``, ``BGZFIndex/scan(_:chunkSize:)``).
    ///   - threads: Inflating threads, `1...256`; default every core available.
    ///   - chunkSize: The size in bytes of the reads of `file`'s data, `1...ByteStream.maximumChunkSize`;
    ///     default 4096.
    ///   - trailingGarbage: What to do with bytes after the last member, as ``BGZFInputStream``;
    ///     default `.fail`.
    ///   - inflater: As ``BGZFInputStream``'s; default ``GzipInputStream/Inflater/isal``.
    ///   - closesInnerStream: Close `file` when this stream closes; default `true`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` naming the
    ///   first value out of range (`threads`, `chunkSize`).
    public init(wrapping file: FileInputStream, index: BGZFIndex, threads: Int = BGZFInputStream.defaultThreadCount,
                chunkSize: Int = ByteStream.defaultChunkSize,
                trailingGarbage: GzipInputStream.TrailingGarbagePolicy = .fail,
                inflater: GzipInputStream.Inflater = .isal, closesInnerStream: Bool = true) throws(ByteStreamError) {
        let operation = "create IndexedBGZFInputStream"
        try requireArgument(threads, in: threadCounts, "threads", operation: operation)
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        self.file = file
        self.index = index
        self.threads = threads
        self.chunkSize = chunkSize
        self.trailingGarbagePolicy = trailingGarbage
        self.inflater = inflater
        self.closesInnerStream = closesInnerStream
        super.init()
    }

    /// A stream over the BGZF file at `path` and its index, read now from `indexPath`
    /// (default: `path` with `.gzi` added, where bgzip and `gzstream pack --bgzf --index` put
    /// it); the file itself is opened by ``ByteStream/open()``. Both are opened read-only,
    /// symbolic links followed. The other parameters are those of
    /// ``init(wrapping:index:threads:chunkSize:trailingGarbage:inflater:closesInnerStream:)``.
    /// - Throws: The error of opening or reading the index (a ``ByteStreamError`` with
    ///   `errno`), ``GzipIndexError`` for an index that is not a valid `.gzi` (at most
    ///   1 GiB is read), or an argument out of range. Blocks while the index is read.
    public convenience init(path: Pathname, indexPath: Pathname? = nil, threads: Int = BGZFInputStream.defaultThreadCount,
                            inflater: GzipInputStream.Inflater = .isal) throws {
        let indexFile = FileInputStream(path: indexPath ?? path.appending(".gzi"))
        defer { indexFile.close() }
        let index = try BGZFIndex(decoding: try indexFile.readToEnd(limit: 1 << 30))
        try self.init(wrapping: FileInputStream(path: path), index: index, threads: threads, inflater: inflater)
    }

    /// A stream over the BGZF file at `path` (its UTF-8 bytes) and its index; see
    /// ``init(path:indexPath:threads:inflater:)-(Pathname,_,_,_)``.
    public convenience init(path: String, indexPath: String? = nil, threads: Int = BGZFInputStream.defaultThreadCount,
                            inflater: GzipInputStream.Inflater = .isal) throws {
        try self.init(path: Pathname(path), indexPath: indexPath.map { Pathname($0) }, threads: threads, inflater: inflater)
    }

    override public func openBacking() throws {
        try file.openUnlessOpened()
        try startDecoder(at: BGZFIndex.Entry(compressedOffset: 0, uncompressedOffset: 0), membersBefore: 0)
    }

    override public func closeBacking() throws {
        decoder?.close()
        decoder = nil
        if closesInnerStream { file.close() }
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        guard let decoder else { return 0 }
        var count = maxLength
        if let rangeEnd { count = min(count, rangeEnd - plainOffset) }
        guard count > 0 else { return 0 }
        let read = decoder.read(buffer, maxLength: count)
        if read < 0 { throw decoder.streamErrorOrFallback(operation: "read") }
        plainOffset += read
        return read
    }

    // MARK: Seeking

    /// Moves to plain offset `offset`, opening the stream first if needed: decodes from the
    /// member that holds it (``BGZFIndex/start(containing:)``) and drops that member's bytes
    /// before it, so that the next read returns the byte at `offset`.
    /// - Parameter offset: A plain offset in bytes, `0...` the plain size (at the end, reads
    ///   return 0).
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   negative offset; ``PlainRangeError`` for an offset past the end (the stream is then at
    ///   the end, still usable); ``GzipError/notBGZF(member:offset:)`` where the index says a
    ///   member starts and none does (the index is not this file's), or
    ///   ``GzipError/truncated(member:part:offset:)`` at the file's end when the file ends
    ///   before that member (cut short); ``IndexedGzipError/pointMismatch(point:)`` when the
    ///   members before it do not add up to its plain offset (``BGZFIndex/checkStart(membersBefore:descriptor:path:)``);
    ///   a decoding error (the
    ///   stream has then failed); ``ByteStreamError`` `.notOpen` for a closed stream.
    public func seek(toPlainOffset offset: Int) throws {
        try requirePlainOffset(offset)
        if let plainSize = try position(at: offset, length: nil) {
            throw PlainRangeError(range: offset..<offset, plainSize: plainSize)
        }
    }

    /// See ``PlainRangeReading/read(range:_:)``; the last member the range touches is decoded
    /// to its end and checked before this returns.
    public func read(range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try requirePlainRange(range)
        if let plainSize = try position(at: range.lowerBound, length: range.count) {
            throw PlainRangeError(range: range, plainSize: plainSize)
        }
        let count = try lendPlainBytes(count: range.count, to: body)
        if count < range.count { throw PlainRangeError(range: range, plainSize: range.lowerBound + count) }
        try checkLastMember(before: range.upperBound)
    }

    /// Starts a decoder at the member holding `offset` and decodes up to it; reads end after
    /// `length` bytes when given. - Returns: `nil`, or the plain size when `offset` is past it.
    private func position(at offset: Int, length: Int?) throws -> Int? {
        if streamStatus == .notOpen { try openOrThrow() }
        try throwIfFailed()
        guard streamStatus == .open || streamStatus == .atEnd else { throw ByteStreamError(.notOpen, operation: "seek") }
        rangeEnd = nil
        do {
            let (entry, membersBefore) = index.start(containing: UInt64(offset))
            try file.openUnlessOpened()
            try index.checkStart(membersBefore: membersBefore, descriptor: file.fileDescriptor, path: file.displayName)
            try startDecoder(at: entry, membersBefore: membersBefore)
            plainOffset = Int(entry.uncompressedOffset)
            if streamStatus == .atEnd { setStatus(.open) }
            var skip = offset - plainOffset
            let dropped = try lendPlainBytes(count: skip, to: { _ in })
            skip -= dropped
            if skip > 0 {
                // Past the end: the stream rests at the end of the data.
                if streamStatus == .open { setStatus(.atEnd) }
                return plainOffset
            }
        } catch {
            fail(error)
            throw error
        }
        rangeEnd = length.map { offset + $0 }
        return nil
    }

    /// Seeks the file to `entry`'s member, checks that a BGZF member starts there (unless at
    /// the file's start, where any gzip data is decoded) and makes the decoder.
    private func startDecoder(at entry: BGZFIndex.Entry, membersBefore: Int) throws {
        decoder?.close()
        decoder = nil
        let compressedOffset = Int64(entry.compressedOffset)
        guard file.setProperty(compressedOffset, forKey: .fileCurrentOffset) else {
            throw ByteStreamError(.system(errno: ESPIPE), operation: "seek", target: file.displayName)
        }
        let member = try PeekingInputStream(peeking: file, length: BGZFInputStream.signatureLength)
        if compressedOffset > 0 && !BGZFInputStream.startsWithBGZFMember(member.peekedBytes) {
            // A file that ends before the member the index names was cut short (or the index
            // is another file's): not "no BGZF member there".
            let size = Int64(try SystemCalls.status(of: file.fileDescriptor, target: file.displayName).st_size)
            if compressedOffset + Int64(BGZFInputStream.signatureLength) > size {
                throw GzipError.truncated(member: membersBefore + 1, part: .header, offset: min(size, compressedOffset))
            }
            throw GzipError.notBGZF(member: membersBefore + 1, offset: compressedOffset)
        }
        let decoder = try BGZFInputStream(wrapping: member, threads: threads, chunkSize: chunkSize,
                                          trailingGarbage: trailingGarbagePolicy,
                                          start: .init(compressedOffset: compressedOffset, membersBefore: membersBefore),
                                          inflater: inflater, closesInnerStream: false)
        try decoder.openOrThrow()
        self.decoder = decoder
        decoderStart = entry
    }

    /// Decodes on to the end of the member that holds plain byte `end - 1`, so that its CRC-32
    /// and ISIZE are checked (a damaged member can give bytes before its trailer once the
    /// sequential reader has taken over). Reads still end at `end`.
    private func checkLastMember(before end: Int) throws {
        guard let decoder, end > 0 else { return }
        let next = index.entries.first { $0.uncompressedOffset >= UInt64(end) }
        let checkedThrough = next.map { Int64($0.uncompressedOffset - decoderStart.uncompressedOffset) }
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while checkedThrough.map({ decoder.uncompressedByteCount <= $0 }) ?? true {
            let read = scratch.withUnsafeMutableBufferPointer { decoder.read($0.baseAddress!, maxLength: $0.count) }
            if read < 0 {
                let error = decoder.streamErrorOrFallback(operation: "read")
                fail(error)
                throw error
            }
            if read == 0 { break }
        }
    }
}

import ByteStreams

/// What a span worker hands the reader of an ``IndexedGzipInputStream``, in order.
/// `Sendable` is unchecked for the chunk pointer: the chunk is the emitting worker's until it
/// emits the item, then the reader's until it gives the chunk back to the ``ChunkBudget``.
enum SpanItem: @unchecked Sendable {
    /// `count` plain bytes at `chunk`, within a chunk buffer of the run's pool, whose CRC-32 is
    /// `crc`, decoded from the compressed bytes before `position` (the byte of the file the
    /// worker reads next; the decoder may hold a few bits of the bytes before it). `release` is that buffer when these are its last bytes (the reader gives it back
    /// once it has read them); `nil` when the worker goes on filling the rest of it (after a
    /// member's end, so that a file of tiny members does not take a buffer per member).
    case bytes(chunk: UnsafeMutablePointer<UInt8>, count: Int, crc: UInt32, release: UnsafeMutablePointer<UInt8>?,
               position: Int64)
    /// `count` plain bytes the worker wrote to the output file itself (``SpanDecoder/output``),
    /// whose CRC-32 is `crc`, decoded from the compressed bytes before `position`; the reader
    /// gets no buffer.
    case written(count: Int, crc: UInt32, position: Int64)
    /// Before a ``spanEnd(windowExact:)`` of a worker that writes the output file: the span's
    /// last plain bytes (up to ``GzipIndex/defaultWindowSize``), which the reader gets no
    /// buffer of, for its history before the next point.
    case spanTail([UInt8])
    /// A member's deflate data and trailer ended inside the span: the trailer's CRC-32 and
    /// ISIZE (stored), where the trailer starts, and where the next member starts (its header
    /// already parsed and valid).
    case memberEnd(stored: GzipTrailer, trailerOffset: Int64, nextMemberOffset: Int64)
    /// The span ended where the index says the next point is (or, for the last span, at the
    /// end of the file after a trailer), every check passed. `windowExact`: the next point's
    /// window is byte for byte the last 32 KiB the worker decoded (or the point needs none), so
    /// the reader need not read and compare it again; `false` when it fits only through its
    /// zero bytes (a sparse window) or the worker holds less than 32 KiB of history.
    case spanEnd(windowExact: Bool)
    /// The parallel decode cannot go on from here; the reader decides what follows.
    case stop(SpanStop)
}

/// Why a span worker stopped early.
enum SpanStop: Sendable {
    /// After a member's trailer (at `offset`), the bytes are not a whole valid member header:
    /// zero padding, trailing garbage, a damaged or cut header. The sequential reader, resumed
    /// at that member boundary, gives its verdict.
    case boundary(offset: Int64)
    /// The deflate data is invalid or ends early, or the file cannot be read: the decoder's
    /// error, with the byte of the file where it was found.
    case failed(any Error)
    /// The data does not decode as the index says: the span does not end at the next point.
    case mismatch(IndexedGzipError)
    /// Writing the plain bytes to the output file failed (``SpanDecoder/output``): the error,
    /// which ends the read; no other reader could write them either.
    case writeFailed(any Error)
}

/// One worker's decoder of spans: from an access point of a ``GzipIndex`` to the next (or to
/// the end of the file), reading the compressed file with `pread(2)` and writing plain bytes
/// into chunks it takes from its run's ``ChunkBudget``. Each worker has one, used only on its thread.
///
/// A span is decoded from the bit at its point, primed with the point's window, and must end
/// exactly where the index says the next point is: the input is cut at the next point's byte,
/// the decoder must give exactly the plain bytes between the two points, and no more; when
/// the next point has a window, the last 32 KiB decoded must equal it. Member boundaries inside
/// a span are followed (trailer, then the next header, then a fresh deflate stream).
final class SpanDecoder {
    /// The bytes of one read of the compressed file: 256 KiB.
    static let inputCapacity = 256 * 1024

    private let decoder: any PrimedInflater
    private let descriptor: Int32
    private let fileSize: Int64
    private let fileName: String
    private let index: GzipIndex

    private let input = UnsafeMutablePointer<UInt8>.allocate(capacity: SpanDecoder.inputCapacity)
    private var inputFileOffset: Int64 = 0
    private var inputStart = 0
    private var inputEnd = 0
    /// Where this span's input ends in the file (the next point's byte, or the file's end).
    private var limit: Int64 = 0
    /// The last plain bytes decoded (up to the window size), to compare with the next window.
    private var tail: [UInt8] = []
    /// A window to start point `point` from instead of the index's: the plain data the reader
    /// decoded before it, when the index's window there is not exactly that (a sparse window).
    /// Set only while no run uses this decoder.
    var windowOverride: (point: Int, window: [UInt8])?
    /// Whether the decoder was started at a member's first deflate byte and has taken no input
    /// since: it rests at the start of a stream, a block boundary no inflater reports as one.
    private var atMemberStart = false
    /// Where the decoder writes the plain bytes it decodes, right after each inflater call while
    /// they are still in this core's cache, before it emits them: plain offset `p` at byte
    /// `origin + p` of the regular file open at `descriptor`, with `pwrite(2)`; `nil` when the
    /// reader writes them. Set only while no run uses this decoder. The decoder then decodes
    /// into a buffer of its own, not chunks of the run's budget, and emits
    /// ``SpanItem/written(count:crc:)`` and ``SpanItem/spanTail(_:)`` items.
    var output: (descriptor: Int32, origin: Int64, name: String, fence: OrderedOutputFence?)?
    /// The buffer a decoder that writes the output decodes into (``output``), reused.
    private var ownChunk: UnsafeMutableBufferPointer<UInt8>?
    /// Writing the output: the span's last plain bytes so far, kept once fewer than a window
    /// is left to decode.
    private var spanTail: [UInt8] = []

    init(decoder: any PrimedInflater, descriptor: Int32, fileSize: Int64, fileName: String, index: GzipIndex) {
        self.decoder = decoder
        self.descriptor = descriptor
        self.fileSize = fileSize
        self.fileName = fileName
        self.index = index
    }

    deinit {
        input.deallocate()
        ownChunk?.deallocate()
    }

    /// The buffer a decoder that writes the output decodes into, of `capacity` bytes.
    private func ownChunk(capacity: Int) -> UnsafeMutablePointer<UInt8> {
        if let ownChunk, ownChunk.count >= capacity { return ownChunk.baseAddress! }
        ownChunk?.deallocate()
        let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        ownChunk = chunk
        return chunk.baseAddress!
    }

    /// The file offset of the next input byte.
    var position: Int64 { inputFileOffset + Int64(inputStart) }

    /// Decodes span `span` (point `span` to point `span + 1`, or to the end of the file).
    /// - Parameters:
    ///   - takeChunk: Blocks until a chunk of ``IndexedGzipInputStream/chunkCapacity`` bytes is
    ///     free for the span given; `nil` when the reader was cancelled.
    ///   - emit: Hands an item to the reader.
    /// - Returns: `false` when cancelled or stopped (the worker takes no further span).
    func decode(span: Int, chunkCapacity: Int, takeChunk: (_ span: Int) -> UnsafeMutablePointer<UInt8>?,
                emit: (SpanItem) -> Void) -> Bool {
        var chunk: UnsafeMutablePointer<UInt8>?
        var chunkCount = 0
        // The bytes of the chunk from `sliceStart` on are not emitted yet; their CRC-32.
        var sliceStart = 0
        var chunkCRC: UInt32 = 0
        let output = output
        // Emits the bytes not emitted yet and gives the chunk to the reader.
        func flush() {
            if let full = chunk {
                if output != nil {
                    if chunkCount > sliceStart { emit(.written(count: chunkCount - sliceStart, crc: chunkCRC, position: position)) }
                } else {
                    emit(.bytes(chunk: full + sliceStart, count: chunkCount - sliceStart, crc: chunkCRC, release: full,
                                position: position))
                }
            }
            chunk = nil
            chunkCount = 0
            sliceStart = 0
            chunkCRC = 0
        }
        // Emits the bytes not emitted yet and keeps filling the chunk after them.
        func emitSlice() {
            guard let partly = chunk, chunkCount > sliceStart else { return }
            if output != nil {
                emit(.written(count: chunkCount - sliceStart, crc: chunkCRC, position: position))
            } else {
                emit(.bytes(chunk: partly + sliceStart, count: chunkCount - sliceStart, crc: chunkCRC, release: nil,
                            position: position))
            }
            sliceStart = chunkCount
            chunkCRC = 0
        }
        func stop(_ reason: SpanStop) -> Bool {
            flush()
            emit(.stop(reason))
            return false
        }
        let point = index.points[span]
        spanTail.removeAll(keepingCapacity: true)
        if span > 0 && Int64(point.compressedOffset) == fileSize && point.bitOffset == 0 {
            // A point at the end of the file, after the last trailer (indexed_gzip puts one
            // there): nothing follows it. The first point is where deflate data must start.
            emit(.spanEnd(windowExact: true))
            return true
        }
        let next = span + 1 < index.points.count ? index.points[span + 1] : nil
        let target = next.map { Int64($0.plainOffset - point.plainOffset) }
        limit = next.map { Int64($0.compressedOffset) } ?? fileSize
        do {
            let window = windowOverride?.point == span ? windowOverride?.window : try index.window(ofPoint: span)
            try startDecoder(at: span, window: window)
        } catch {
            return stop(.failed(error))
        }
        var produced: Int64 = 0
        var scratch: UInt8 = 0
        while true {
            let atTarget = target.map { produced == $0 } ?? false
            if !atTarget && chunk == nil {
                if output != nil {
                    chunk = ownChunk(capacity: chunkCapacity)
                } else {
                    guard let taken = takeChunk(span) else { return false }
                    chunk = taken
                }
            }
            let stepOutput: UnsafeMutablePointer<UInt8>
            var room: Int
            if atTarget {
                // One byte of room: any byte past the next point means the index is wrong.
                stepOutput = withUnsafeMutablePointer(to: &scratch) { $0 }
                room = 1
            } else {
                stepOutput = chunk! + chunkCount
                room = chunkCapacity - chunkCount
                if let target { room = Int(min(Int64(room), target - produced)) }
            }
            if inputStart == inputEnd {
                do { _ = try refill() } catch { return stop(.failed(error)) }
            }
            let step = decoder.step(input: input + inputStart, inputCount: inputEnd - inputStart,
                                    output: stepOutput, outputCapacity: room)
            inputStart += step.consumed
            if step.consumed > 0 { atMemberStart = false }

            if step.produced > 0 {
                if atTarget { return stop(.mismatch(.pointMismatch(point: span + 1))) }
                let bytes = UnsafeRawBufferPointer(start: stepOutput, count: step.produced)
                if let output {
                    // Written before they count as decoded, so that the bytes emitted are
                    // always bytes written.
                    // A closed fence: the process is ending of a signal, and the file is being cut
                    // after the bytes written in order.
                    if let fence = output.fence, !fence.beginWrite() { return stop(.writeFailed(CancellationError())) }
                    do {
                        defer { output.fence?.endWrite() }
                        try SystemCalls.write(output.descriptor, bytes, at: output.origin + Int64(point.plainOffset) + produced,
                                              target: output.name)
                    } catch {
                        return stop(.writeFailed(error))
                    }
                    if let target {
                        // The bytes of this step within the span's last window, for the reader.
                        let windowStart = target - Int64(GzipIndex.defaultWindowSize)
                        if produced + Int64(step.produced) > windowStart {
                            spanTail.append(contentsOf: bytes[Int(max(0, windowStart - produced))...])
                        }
                    }
                }
                chunkCRC = crc32(chunkCRC, bytes)
                keepTail(bytes)
                chunkCount += step.produced
                produced += Int64(step.produced)
                if chunkCount == chunkCapacity { flush() }
            }
            switch step.outcome {
            case .streamEnd(let readAhead):
                reposition(to: position - Int64(readAhead.count))
                emitSlice()
                switch finishMember() {
                case .nextMember(let item):
                    emit(item)
                case .endOfFile(let item):
                    emit(item)
                    flush()
                    // The last span reaches the end of the file; so does one that ends at a
                    // point at the end of the file (indexed_gzip puts one there).
                    guard target != nil else {
                        emit(.spanEnd(windowExact: true))
                        return true
                    }
                    return finishSpan(span, produced: produced, target: target, atEndOfFile: true, emit: emit)
                case .notMember(let item, let boundary):
                    // The member is checked first; then the sequential reader judges what follows.
                    emit(item)
                    return stop(.boundary(offset: boundary))
                case .stopped(let reason):
                    return stop(reason)
                }
            case .progress, .stalled:
                if step.consumed == 0 && step.produced == 0 && inputStart == inputEnd {
                    // The decoder holds nothing more and the span's input is all read.
                    flush()
                    return finishSpan(span, produced: produced, target: target, emit: emit)
                }
                if case .stalled(let error) = step.outcome, step.produced == 0, inputStart != inputEnd {
                    return stop(.failed(error))
                }
            case .invalid(let reason):
                return stop(.failed(GzipError.invalidDeflateData(member: 0, message: reason, offset: position)))
            case .failed(let error):
                return stop(.failed(error))
            }
        }
    }

    /// The end of a span's input with the decoder at rest: right when the span gave exactly the
    /// plain bytes between its point and the next, and its last bytes are the next point's window.
    private func finishSpan(_ span: Int, produced: Int64, target: Int64?, atEndOfFile: Bool = false,
                            emit: (SpanItem) -> Void) -> Bool {
        guard let target else {
            // The last span ends only after a trailer at the end of the file.
            emit(.stop(.failed(GzipError.truncated(member: 0, part: .deflateData, offset: position))))
            return false
        }
        guard produced == target else {
            if position < limit {
                // The file is shorter than the index says.
                emit(.stop(.failed(GzipError.truncated(member: 0, part: .deflateData, offset: position))))
            } else {
                emit(.stop(.mismatch(.pointMismatch(point: span + 1))))
            }
            return false
        }
        // The next point must be where a block starts, at its very bit: decoding from a bit
        // that is not a block's start would give other bytes, or none, from a right window.
        // (A point at the end of the file, after the last trailer, starts nothing.)
        let pendingBits = Int(index.points[span + 1].bitOffset)
        guard (atEndOfFile && pendingBits == 0) || (atMemberStart && pendingBits == 0)
                || decoder.restsAtBlockBoundary(pendingBits: pendingBits) else {
            emit(.stop(.mismatch(.pointMismatch(point: span + 1))))
            return false
        }
        let windowExact: Bool
        do {
            let window = try index.window(ofPoint: span + 1)
            if let window, !Self.window(window, fits: tail) {
                emit(.stop(.mismatch(.pointMismatch(point: span + 1))))
                return false
            }
            windowExact = window.map { $0 == tail } ?? true
        } catch {
            emit(.stop(.failed(error)))
            return false
        }
        if output != nil { emit(.spanTail(spanTail)) }
        emit(.spanEnd(windowExact: windowExact))
        return true
    }

    /// Whether the decoded `tail` (up to a window's size of the last plain bytes) fits the end
    /// of `window`: equal, except that a byte the window holds as zero may be anything, because
    /// rapidgzip writes sparse windows (the bytes no distance after the point reaches are zeroed
    /// so that the index compresses better).
    static func window(_ window: [UInt8], fits tail: [UInt8]) -> Bool {
        let end = window.suffix(tail.count)
        if end.elementsEqual(tail) { return true }
        return zip(end, tail).allSatisfy { $0 == 0 || $0 == $1 }
    }

    private enum MemberFinish {
        /// The member ended and another begins (its header read).
        case nextMember(SpanItem)
        /// The member ended at the end of the file.
        case endOfFile(SpanItem)
        /// The member ended, and what follows it (at `boundary`) is not a whole valid header.
        case notMember(SpanItem, boundary: Int64)
        case stopped(SpanStop)
    }

    /// After a member's deflate data: reads its trailer, then either ends the span (the end of
    /// the file) or reads the next member's header and starts its deflate data. The framing is
    /// ``GzipMemberSource``'s, the sequential reader's; anything but a whole valid header after
    /// the trailer is left to the sequential reader to judge.
    private func finishMember() -> MemberFinish {
        do {
            let (stored, trailerOffset) = try readTrailer(member: 0)
            let boundary = position
            let ended = SpanItem.memberEnd(stored: stored, trailerOffset: trailerOffset, nextMemberOffset: boundary)
            if boundary == fileSize { return .endOfFile(ended) }
            let following = try readFollowing(member: -1, maximumFieldLength: GzipInputStream.maximumHeaderFieldLength)
            guard case .member(var parser) = following else { return .notMember(ended, boundary: boundary) }
            do {
                try readHeader(&parser)
            } catch is GzipError {
                return .notMember(ended, boundary: boundary)
            }
            guard decoder.start(primingBits: 0, of: 0, window: nil) else {
                return .stopped(.failed(GzipError.zlibFailure(code: 0, message: "cannot restart the inflater")))
            }
            tail.removeAll(keepingCapacity: true)
            atMemberStart = true
            return .nextMember(ended)
        } catch {
            return .stopped(.failed(error))
        }
    }

    /// Primes the decoder at `point`: the high `bitOffset` bits of the byte before its
    /// compressed offset, then its window.
    private func startDecoder(at span: Int, window: [UInt8]?) throws {
        let point = index.points[span]
        var bits: UInt8 = 0
        let bitCount = Int(point.bitOffset)
        let start = Int64(point.compressedOffset)
        if bitCount > 0 {
            guard start > 0, try SystemCalls.read(descriptor, &bits, 1, at: start - 1, target: fileName) == 1 else {
                throw GzipError.truncated(member: 0, part: .deflateData, offset: start)
            }
            bits >>= UInt8(8 - bitCount)
        }
        guard decoder.start(primingBits: bitCount, of: bits, window: window) else {
            throw IndexedGzipError.badWindow(point: span)
        }
        inputFileOffset = start
        inputStart = 0
        inputEnd = 0
        tail = window ?? []
        atMemberStart = false
    }

    /// Reads the next input of the span; `false` at its end (or the file's).
    private func refill() throws -> Bool {
        let offset = position
        guard offset < limit else { return false }
        let count = Int(min(Int64(Self.inputCapacity), limit - offset))
        let read = try SystemCalls.read(descriptor, input, count, at: offset, target: fileName)
        inputFileOffset = offset
        inputStart = 0
        inputEnd = read
        return read > 0
    }

    /// Moves the input to `offset` of the file (the bytes a decoder read ahead come back).
    private func reposition(to offset: Int64) {
        if offset >= inputFileOffset && offset <= inputFileOffset + Int64(inputEnd) {
            inputStart = Int(offset - inputFileOffset)
        } else {
            inputFileOffset = offset
            inputStart = 0
            inputEnd = 0
        }
    }

    /// Keeps the last window-size bytes decoded, for the comparison with the next point's window.
    private func keepTail(_ bytes: UnsafeRawBufferPointer) {
        let size = Int(index.windowSize)
        if bytes.count >= size {
            tail.removeAll(keepingCapacity: true)
            tail.append(contentsOf: bytes.suffix(size))
        } else {
            let excess = tail.count + bytes.count - size
            if excess > 0 { tail.removeFirst(excess) }
            tail.append(contentsOf: bytes)
        }
    }
}

/// The span decoder reads its file by `pread(2)`, from an access point's byte (primed with the
/// bits before it) up to the next point's, and several decoders read one descriptor at once,
/// so it keeps its own input rather than a ``GzipMemberInput`` over a stream; the framing
/// around a member (trailer, what follows, header) is still the shared one.
extension SpanDecoder: GzipMemberSource {
    /// The next byte of the span's input, `nil` at its end. - Throws: The read's error.
    func peekByte() throws -> UInt8? {
        if inputStart == inputEnd, try !refill() { return nil }
        return input[inputStart]
    }

    func skipByte() {
        inputStart += 1
    }

    func putBack(_ byte: UInt8) {
        reposition(to: position - 1)
    }
}

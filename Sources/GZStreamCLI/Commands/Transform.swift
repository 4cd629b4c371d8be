import ByteStreams
import GzipStreams
import TarArchives

extension Command {
    struct Outcome {
        var status: ExitStatus
        var bytesIn: Int64
        var bytesOut: Int64
        var header: GzipHeader?
        /// pack --index: the index's bytes (bgzip's `.gzi` with --bgzf, else GZIDX).
        var indexBytes: [UInt8]?
        /// The first member's header and trailer bytes (GNU gzip's `header_bytes`), for gzip
        /// mode's `-v` ratio.
        var overhead: Int64 = 0
        /// `unpack --offset`: where the range starts and what led there, for `-v`'s line.
        var range: RangeRead?
        /// pack --tar --index: the members written, with their header and data offsets in the
        /// plain tar stream, for the member index beside the output (not with --bgzf).
        var tarMembers: [TarEntry]? = nil
    }

    /// Where an `unpack --offset` range started, in plain bytes, or the `--lines` written, and
    /// the index that found them (`nil`: the file was decoded from its start).
    struct RangeRead {
        var offset: Int64
        var index: Pathname?
        var lines: LineRange? = nil
    }

    /// The decoder for `input` (which it does not close). BGZF input (its first member has the
    /// `BC` subfield) is inflated on ``inflateThreads`` threads while this thread reads and
    /// writes; anything else is pipelined as pigz's: a worker reads `input` ahead, this thread
    /// inflates (ISA-L), and ``inflate(_:into:closesOutput:)`` writes behind on another.
    /// Reads of `input` are `--chunk-size` reads either way when it is given, else
    /// ``decodeReadSize`` reads for a plain gzip file. Both inflate with ``inflaterChoice``
    /// (zlib's verdict for `test`, `list` and `--strict`).
    ///
    /// With `indexRecorder` (`--write-index`), a gzip file's decode records its GZIDX index; a
    /// BGZF file is refused (its index is bgzip's `.gzi`, which `gzstream index` writes from
    /// the member headers alone, and it decodes in parallel without one), said under `name`.
    ///
    /// With `trailerChecks`, a gzip file's members are checked where ``inflate(_:into:closesOutput:inputNeverWaits:)``
    /// writes them (on its write-behind worker), so that this thread only inflates.
    func decodingStream(_ input: ByteInputStream, indexRecorder: GzipIndexRecorder? = nil,
                        trailerChecks: GzipTrailerChecks? = nil, name: String = "") throws -> any GzipDecodingStream {
        let peeked = try PeekingInputStream(peeking: input, length: BGZFInputStream.signatureLength)
        if BGZFInputStream.startsWithBGZFMember(peeked.peekedBytes) {
            if indexRecorder != nil {
                throw Reported(status: reportError(name, "is BGZF: its index is bgzip's .gzi, which "
                    + "'gzstream index' writes from the member headers (--write-index writes GZIDX for other gzip files)"))
            }
            // The member pipeline already overlaps reading, inflating and writing: a read-ahead
            // worker on top of it measured slower (0.43-0.50 s against 0.32-0.40 s for `test`
            // of the 256 MiB benchmark file).
            return try BGZFInputStream(wrapping: peeked, threads: inflateThreads, chunkSize: common.chunkSize,
                                   trailingGarbage: trailingGarbagePolicy, maximumOutputSize: maximumOutputSize,
                                   inflater: inflaterChoice)
        }
        let readSize = common.chunkSizeGiven ? common.chunkSize : Self.decodeReadSize
        let source = try ReadAheadInputStream(wrapping: peeked, chunkSize: readSize,
                                          bufferCount: Self.readAheadBytes / readSize + 1)
        return try GzipInputStream(wrapping: source, chunkSize: Self.inflateInputSize, trailingGarbage: trailingGarbagePolicy,
                               maximumOutputSize: maximumOutputSize, inflater: inflaterChoice,
                               indexRecorder: indexRecorder, trailerChecks: trailerChecks)
    }

    /// `--max-output`: the most plain bytes one input may decode to; `nil` for none, and for
    /// the commands that do not decode.
    var maximumOutputSize: Int? { options.command.decode?.maximumOutputSize }

    /// `unpack -c -f` (`zcat -f`, `gzstream -dcf`) copies what is not gzip through unchanged, as
    /// gzip does; otherwise trailing garbage is reported after the data before it.
    var trailingGarbagePolicy: GzipInputStream.TrailingGarbagePolicy {
        options.command.unpack?.output.toStandardOutput == true && common.force ? .passThrough : .ignore
    }

    /// Reads `decoder` to its end and writes what it gives to `output`, in writes of
    /// ``unpackWriteSize`` bytes, ``lendingWriteSize`` from a parallel decoder (of `--chunk-size`
    /// when it is given). A `GzipInputStream`
    /// inflates straight into the ring of a `WriteBehindOutputStream`, whose worker writes, so
    /// that inflating never waits for a write; BGZF is written from this thread, straight from
    /// the buffers its workers inflated into, while they inflate the next members. The bytes
    /// before a decoding error still reach `output` (standard output keeps them, as with gzip). Closes `output` when `closesOutput`.
    ///
    /// A decoder returns at each member's end, so a file of many tiny members would be written a
    /// member at a time (400,000 writes of 100 bytes for 40 MB). When the input never waits
    /// (`inputNeverWaits`: a regular file; a pipe may pause, and what was decoded must not wait
    /// for more), each buffer is filled before it is written, and small pieces a parallel
    /// decoder lends are gathered into writes of ``lendingWriteSize``.
    func inflate(_ decoder: any GzipDecodingStream, into output: ByteOutputStream, closesOutput: Bool,
                 inputNeverWaits: Bool = false) throws {
        let writeSize = common.chunkSizeGiven ? common.chunkSize : Self.unpackWriteSize
        if decoder.lendsPlainBytes {
            let writeSize = common.chunkSizeGiven ? common.chunkSize : Self.lendingWriteSize
            do {
                // Written straight from the buffers the workers inflated into: no copy.
                if decoder.streamStatus == .notOpen { try decoder.openOrThrow() }
                if output.streamStatus == .notOpen { try output.openOrThrow() }
                if let indexed = decoder as? IndexedGzipInputStream, let file = output as? FileOutputStream,
                   let origin = file.regularFileEndOffset {
                    // Into a regular file each worker writes the spans it decodes, with pwrite(2);
                    // a signal leaves the bytes written in order (InterruptCleanup.swift).
                    let fence = OrderedOutputFence(descriptor: file.fileDescriptor, at: origin)
                    registerOrderedOutput(fence)
                    defer {
                        releaseOrderedOutput()
                        withExtendedLifetime(fence) {}
                    }
                    _ = try indexed.writeRemaining(to: file.fileDescriptor, at: origin, name: file.displayName, fence: fence)
                    if closesOutput { try output.closeOrThrow() }
                    return
                }
                let gathered = GatheringWriter(output, capacity: inputNeverWaits ? writeSize : 0)
                do {
                    while true {
                        let count = try decoder.readInPlace(maxLength: writeSize) { try gathered.write($0) }
                        if count < 0 { throw decoder.streamErrorOrFallback(operation: "read") }
                        if count == 0 { break }
                    }
                } catch {
                    // The bytes before an error still reach the output.
                    try? gathered.flush()
                    throw error
                }
                try gathered.flush()
            } catch {
                if closesOutput { output.close() }
                throw error
            }
            if closesOutput { try output.closeOrThrow() }
            return
        }
        // The members' CRC-32s are computed on the write-behind worker as it writes, when the
        // decoder leaves them to it: unpack of the 256 MiB benchmark files spent 7% of the
        // inflating thread's time in CRC-32.
        let checks = (decoder as? GzipInputStream)?.trailerChecks
        let checked = checks.map { GzipCheckingOutputStream(wrapping: output, checks: $0, closesInnerStream: closesOutput) }
        let sink = try WriteBehindOutputStream(wrapping: checked ?? output, chunkSize: writeSize,
                                               bufferSize: max(Self.inflateOutputSize, writeSize),
                                               closesInnerStream: closesOutput)
        do {
            try decoder.openOrThrow()
            try sink.openOrThrow()
            let length = sink.bufferSize
            while try sink.withWritableBuffer(minimumCapacity: length, { buffer in
                let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
                var filled = 0
                repeat {
                    let count = decoder.read(base + filled, maxLength: length - filled)
                    if count < 0 {
                        // The bytes before the error are committed; the next read fails again.
                        if filled > 0 { break }
                        throw decoder.streamErrorOrFallback(operation: "read")
                    }
                    if count == 0 { break }
                    filled += count
                } while inputNeverWaits && filled < length
                return filled
            }) > 0 {}
        } catch {
            // A member before the failure whose trailer fails is the first error, as when the
            // reading thread checks.
            var first = error
            do {
                try sink.flush()
                try checks?.finish()
            } catch let failed as GzipError {
                first = failed
            } catch {}
            sink.close()
            throw first
        }
        try sink.closeOrThrow()
        // Standard output is not closed: its last members are checked here.
        try checks?.finish()
    }

    /// The compressed bytes read ahead of the inflater: 256 KiB.
    static let readAheadBytes = 256 * 1024
    /// The size of the read-ahead worker's reads of a gzip file when `--chunk-size` is not
    /// given: 64 KiB, what the inflater takes at once. In 4 KiB reads the worker made 14,800
    /// calls for a 60 MB file; on this machine's two vCPUs, which the kernel mostly packs the
    /// inflater and its workers onto one of, those calls cost the inflater's time too: unpack
    /// of the 256 MiB benchmark files mostly took 3-8% less in 64 KiB reads (medians of
    /// 11-15 interleaved runs; one set of four was 3% slower on one file).
    static let decodeReadSize = 64 * 1024
    /// The most compressed bytes given to the inflater at once: 64 KiB.
    static let inflateInputSize = 64 * 1024
    /// The most plain bytes the inflater makes in one call, and the size of each write-behind
    /// buffer: 512 KiB (four of them, 2 MiB in all). ISA-L keeps the last 32 KiB of each call's
    /// output as the next call's window, a copy per call, and each buffer handed over wakes the
    /// writer: in 128 KiB calls the inflating thread of unpack spent 9% more CPU time on the
    /// text benchmark corpus (3% on the mixed one) than in 512 KiB calls (medians of 7 runs,
    /// `perf record -e task-clock` of that thread); 1 MiB gained no more.
    static let inflateOutputSize = 512 * 1024
    /// The size of unpack's writes when `--chunk-size` is not given: 128 KiB. Writing 256 MiB
    /// to a file in 4 KiB writes cost about twice the system time of 128 KiB writes here (see
    /// docs/cli.md, *Unpacking*).
    static let unpackWriteSize = 128 * 1024
    /// The size of unpack's writes from the buffers of the parallel decoders (BGZF, an index)
    /// when `--chunk-size` is not given: 512 KiB, the size of their buffers, so that each buffer
    /// is written in one call while the workers decode the next ones.
    static let lendingWriteSize = 512 * 1024

    /// Packs or unpacks `input` into `output` in chunks of `chunkSize` bytes; closes `input`,
    /// and `output` when `closesOutput`. Shows progress on standard error (ProgressReporter.swift),
    /// ended before any message about the job.
    func transform(_ input: ByteInputStream, inputPath: Pathname, inputInfo: FileInfo?,
                   into output: ByteOutputStream, outputName: String, closesOutput: Bool) throws -> Outcome {
        defer { input.close() }
        let inputName = displayName(inputPath)
        // Standard output is the output that is not closed here.
        let progress = beginProgress(inputName, writesStandardOutput: !closesOutput)
        beginVerboseLine(inputName)
        defer { progress?.end(completed: false) }  // a failure that stays quiet (a closed pipe)
        let range = options.command.unpack?.range
        let source = progress?.counting(input, measuresSize: range == nil) ?? input
        let sink = progress?.counting(output, closesOutput: closesOutput) ?? output
        do {
            switch options.command {
            case .pack(let pack), .send(let pack, _):
                let threads = common.threads ?? defaultThreadCount
                var status = ExitStatus.success
                let packer: any GzipEncodingStream
                // A BGZF member's header is 18 bytes (SAM/BAM specification §4.1).
                var overhead: Int64 = 18 + 8
                if pack.bgzf {
                    // BGZF headers hold no name or time (htslib reads a fixed 18-byte header).
                    packer = try BGZFOutputStream(wrapping: sink, level: common.level, threads: threads,
                                              chunkSize: common.chunkSize, buildsIndex: pack.writeIndex,
                                              closesInnerStream: closesOutput)
                } else {
                    let header = packHeader(inputPath: inputPath, inputInfo: inputInfo)
                    overhead = encodedHeaderSize(header.fields) + 8
                    if header.timeOutOfRange {
                        // GNU gzip's warning, word for word; its exit status too.
                        diagnostics.warning(inputName, "warning: file timestamp out of range for gzip format")
                        status = .warning
                    }
                    packer = try GzipOutputStream(wrapping: sink, level: common.level, header: header.fields,
                                              chunkSize: common.chunkSize, threads: threads,
                                              blockSize: pack.blockSize, engine: pack.engine ?? .chunks,
                                              rsyncable: pack.rsyncable, buildsIndex: pack.writeIndex,
                                              closesInnerStream: closesOutput)
                }
                // The first read comes before the header, so that nothing is written when the
                // input cannot be read at all (standard input closed, or a directory). pack
                // --tar reads its operands itself (TarPacking.swift).
                let firstChunk = pack.tar == nil ? try source.readChunk(maxLength: common.chunkSize) : []
                try packer.openOrThrow()
                var tarMembers: [TarEntry]?
                do {
                    if let tar = pack.tar {
                        // A file output is written under a temporary name until complete: the
                        // walk may meet it by that name, which tar users would not recognise.
                        let written = try writeTar(tar, into: packer, output: output,
                                                   archiveName: closesOutput ? Pathname(outputName).lastComponent : nil,
                                                   keepsMembers: pack.writeIndex)
                        status = max(status, written.status)
                        tarMembers = written.members
                    } else {
                        try packer.writeAll(firstChunk)
                        try source.copy(to: packer, chunkSize: common.chunkSize)
                    }
                } catch {
                    // No trailer (or BGZF end-of-file member): partial output never looks whole.
                    packer.abandon()
                    throw error
                }
                try packer.closeOrThrow()
                progress?.end(completed: true)
                return Outcome(status: status, bytesIn: packer.uncompressedByteCount,
                               bytesOut: packer.compressedByteCount, header: nil,
                               indexBytes: packer.builtIndex?.encoded(),
                               overhead: overhead, tarMembers: tarMembers)
            case .unpack, .receive:
                if let lines = options.command.unpack?.lines {
                    foundIndexRefusal = nil
                    let outcome = try unpackLines(input, source: source, path: inputPath, lines: lines, into: sink,
                                                  closesOutput: closesOutput)
                    progress?.end(completed: true)
                    return outcome
                }
                // A range through the .gzi index seeks the file itself (BlockedUnpack.swift).
                if let range {
                    // Through a GZIDX index the file is read at offsets (its own stream, uncounted).
                    foundIndexRefusal = nil
                    // --whole-lines reads from the byte before the range on, until its last line ends.
                    let lines = options.command.unpack?.wholeLines == true
                        ? WholeLinesOutputStream(wrapping: sink, range: range, closesInnerStream: closesOutput) : nil
                    let read = lines.map { _ in PlainRange(offset: WholeLinesOutputStream.origin(of: range), length: nil) } ?? range
                    var outcome = try unpackIndexedRange(input, path: inputPath, range: read, into: lines ?? sink,
                                                         closesOutput: closesOutput)
                        ?? unpackRange(source, file: input as? FileInputStream, path: inputPath, range: read, into: lines ?? sink,
                                       closesOutput: closesOutput)
                    if let lines {
                        outcome.bytesOut = lines.passedCount
                        outcome.range?.offset = range.offset
                    }
                    progress?.end(completed: true)
                    return outcome
                }
                let indexing = try beginIndexWhileDecoding(inputPath, inputInfo: inputInfo, input: input)
                // An index being written is recorded from the whole sequential decode.
                let indexed = indexing == nil ? try indexedDecodingStream(input, progress: progress) : nil
                let decoder = try indexed?.decoder
                    ?? decodingStream(source, indexRecorder: indexing?.recorder, trailerChecks: GzipTrailerChecks(),
                                      name: inputName)
                defer { decoder.close() }
                // Standard input has no inputInfo; a regular file redirected to it never waits either.
                let regular = inputInfo?.isRegularFile
                    ?? (input as? FileInputStream).flatMap { FileInfo(descriptor: $0.fileDescriptor) }?.isRegularFile ?? false
                try inflate(decoder, into: sink, closesOutput: closesOutput, inputNeverWaits: regular)
                if let indexed { noteIndexMismatch(of: indexed.stream) }
                if let indexing { try finishIndexWhileDecoding(indexing) }
                // The last line only when no message about the job follows (trailing garbage's).
                progress?.end(completed: decoder.trailingGarbage == nil)
                var status = ExitStatus.success
                if let garbage = decoder.trailingGarbage {
                    status = try warnTrailingGarbage(inputName, garbage)
                } else if decoder.endedWithZeroPadding {
                    status = noteZeroPaddingLikeGzip(inputName)
                }
                return Outcome(status: status, bytesIn: decoder.compressedByteCount,
                               bytesOut: decoder.uncompressedByteCount, header: decoder.header,
                               overhead: decoder.header.map(encodedHeaderSize).map { $0 + 8 } ?? 0)
            case .test, .list, .index:
                preconditionFailure("test, list and index do not transform")
            }
        } catch let reported as Reported {
            throw reported   // already reported (unpackRange)
        } catch where isSystemError(error, Errno.brokenPipe) && (error as? ByteStreamError)?.target == outputName
                    && !(output is SocketOutputStream) {
            // A closed pipe ends the run quietly (or by SIGPIPE); a peer that went away is an error.
            closedPipe = outputName
            throw Reported(status: .error)
        } catch let error as ByteStreamError {
            throw Reported(status: reportError(error.target ?? inputName, describe(error)))
        } catch {
            if options.gzip != nil, let error = error as? GzipError {
                throw Reported(status: reportLikeGzip(error, subject: inputName))
            }
            throw Reported(status: reportError(inputName, describe(error)))
        }
    }

    /// The header pack writes: the input's name and MTIME unless `-n`; for standard input no
    /// name, and in gzip mode its MTIME when it is a regular file (as gzip), else none.
    /// A modification time MTIME cannot hold (before 1970-01-01 00:00:01 UTC or after
    /// 2106-02-07 06:28:15 UTC; 0 means none) is stored as 0 and flagged, never clamped
    /// (RFC 1952 §2.3.1, as GNU gzip).
    func packHeader(inputPath: Pathname, inputInfo: FileInfo?) -> (fields: GzipHeader, timeOutOfRange: Bool) {
        var header = GzipHeader()
        guard common.useName != false else { return (header, false) }
        let seconds: Int
        if let inputInfo {
            header.fileName = inputPath.baseName.bytes
            seconds = inputInfo.modificationTime.seconds
        } else if options.gzip != nil, let standardInputSeconds = standardInputModificationTime() {
            // As gzip: standard input's time (no name) when it is a regular file.
            seconds = standardInputSeconds
        } else {
            return (header, false)
        }
        guard seconds > 0, let mtime = UInt32(exactly: seconds) else { return (header, true) }
        header.modificationTime = mtime
        return (header, false)
    }

    /// The modification time in seconds of standard input when it is a regular file, else `nil`.
    /// The corresponding C function is `fstat(2)`.
    func standardInputModificationTime() -> Int? {
        guard let file = environment.standardInput as? FileInputStream else { return nil }
        guard let info = FileInfo(descriptor: file.fileDescriptor), info.isRegularFile else { return nil }
        return info.modificationTime.seconds
    }

    /// The input's access and modification times; for `unpack -N`, the header's MTIME when set.
    func outputTimes(inputInfo: FileInfo?, header: GzipHeader?)
        -> (access: FileInfo.Timestamp, modification: FileInfo.Timestamp)? {
        guard let inputInfo else { return nil }
        if options.mode == .unpack, common.useName == true, let mtime = header?.modificationTime, mtime != 0 {
            return (inputInfo.accessTime, FileInfo.Timestamp(seconds: Int(mtime), nanoseconds: 0))
        }
        return (inputInfo.accessTime, inputInfo.modificationTime)
    }
}

/// Writes what it is given to `output`, gathering pieces smaller than `capacity` into one
/// buffer first (allocated on the first small piece); a capacity of 0 writes every piece as it
/// comes. Not thread-safe.
final class GatheringWriter {
    private let output: ByteOutputStream
    private let capacity: Int
    private var buffer: [UInt8] = []

    init(_ output: ByteOutputStream, capacity: Int) {
        self.output = output
        self.capacity = capacity
    }

    /// Writes `bytes`, or keeps them to write with the next ones. Blocks while `output` does.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if buffer.count + bytes.count > capacity { try flush() }
        if bytes.count >= capacity {
            try output.writeAll(bytes)
        } else {
            if buffer.capacity < capacity { buffer.reserveCapacity(capacity) }
            buffer.append(contentsOf: bytes)
        }
    }

    /// Writes the bytes kept.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try output.writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }
}

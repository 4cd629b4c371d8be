import ByteStreams
import GzipStreams

// Any gzip file read through a GZIDX index (`gzstream index`, `pack --index`, indexed_gzip,
// rapidgzip): `unpack` and `test` inflate the spans between access points on every core, and
// `unpack --offset N --length M` decodes from the point before N only.

extension Command {
    /// The index suffix `gzstream index` writes beside a gzip file that is not BGZF.
    static let gzidxSuffix: Pathname = ".gzidx"

    /// The name of gztool's index of the file `name`, as `gztool -i` names it: `.gz` (in that
    /// case) replaced by `.gzi`, else `.gzi` added (`x.gz` → `x.gzi`, `x.tgz` → `x.tgz.gzi`).
    /// The second form is also bgzip's, so an index found there is taken only by gztool's magic.
    static func gztoolIndexName(of name: Pathname) -> Pathname {
        let gz = Array(".gz".utf8)
        guard name.bytes.count > gz.count, name.bytes.suffix(gz.count).elementsEqual(gz) else {
            return name.appending(".gzi")
        }
        return Pathname(bytes: name.bytes + Array("i".utf8))!
    }

    /// Where the index of the current operand is looked for first: `--index PATH`, or
    /// `FILE.gzidx` beside it (then gztool's: ``readIndex(at:compressedSize:bgzfData:checksBGZFIndex:)``).
    var indexLocation: (path: Pathname, explicit: Bool)? {
        if let path = options.command.indexPath { return (path, true) }
        guard let input = currentInput else { return nil }
        return (input.path.appending(Self.gzidxSuffix), false)
    }

    /// Opens and reads the operand's index: GZIDX (its windows stay in the file, each checked
    /// against the CRC-32 it had when the index was read) or gztool's format (read whole: its
    /// windows are compressed), and says where it was found. Beside the file, `FILE.gzidx` is
    /// looked for first, then (for data that is not BGZF) gztool's (``gztoolIndexName(of:)``),
    /// taken only if it starts with gztool's magic; when neither is there, `nil`.
    ///
    /// Every index must pass ``openTrustedIndex(_:name:explicit:)`` and hold no more points than
    /// the file can need (``GzipIndex/maximumPointCount(compressedSize:)``). A found index that
    /// fails any check, or cannot be read, is not used: ``noteIndexNotUsed(_:_:)`` and `nil`,
    /// and the file is decoded without it. `--index PATH` that fails is an error (thrown as
    /// ``Reported``). `compressedSize` is the gzip file's size (gztool's index lacks it).
    /// For BGZF data (`bgzfData`), `--index PATH` may also name bgzip's `.gzi` (it has no magic:
    /// anything neither GZIDX nor gztool's is read as one): `nil` is returned, for the BGZF path;
    /// with `checksBGZFIndex` the `.gzi` is read and checked first (a whole read, which does not
    /// use it), without it is left to ``unpackRange(_:file:path:range:into:closesOutput:)``, which reads it.
    func readIndex(at location: (path: Pathname, explicit: Bool), compressedSize: Int64,
                           bgzfData: Bool, checksBGZFIndex: Bool) throws -> (index: GzipIndex, path: Pathname)? {
        func read(_ path: Pathname, beside name: Pathname?, onlyGztool: Bool = false) throws -> (index: GzipIndex, path: Pathname)? {
            do {
                guard let opened = try openTrustedIndex(path, name: name, explicit: location.explicit) else { return nil }
                defer { opened.close() }
                return try readIndex(opened, name: path, compressedSize: compressedSize, bgzfData: bgzfData,
                                     checksBGZFIndex: checksBGZFIndex, onlyGztool: onlyGztool).map { ($0, path) }
            } catch let refusal as IndexRefusal {
                if location.explicit { throw Reported(status: reportError(path.description, refusal.reason)) }
                noteIndexNotUsed(path, refusal.reason)
                foundIndexRefusal = refusal.reason
                return nil
            }
        }
        if location.explicit { return try read(location.path, beside: nil) }
        guard let input = currentInput else { return nil }
        if let found = try read(location.path, beside: input.name.appending(Self.gzidxSuffix)) { return found }
        // bgzip's `.gzi` beside a BGZF file is the BGZF path's; beside other data only
        // gztool's (by its magic) is an index of it.
        guard !bgzfData else { return nil }
        return try read(Self.gztoolIndexName(of: input.path), beside: Self.gztoolIndexName(of: input.name), onlyGztool: true)
    }

    /// Reads the index in `opened` (see ``readIndex(at:compressedSize:bgzfData:checksBGZFIndex:)``),
    /// a trusted regular file, in the format its bytes say (``GzipIndexFile``). With
    /// `onlyGztool` (a name gztool shares with bgzip), anything not in gztool's format is not
    /// an index of this file: `nil`, nothing said.
    /// - Throws: ``IndexRefusal`` for an index that cannot be read or is not valid.
    private func readIndex(_ opened: OpenedInput, name path: Pathname, compressedSize: Int64,
                           bgzfData: Bool, checksBGZFIndex: Bool, onlyGztool: Bool) throws -> GzipIndex? {
        let format: GzipIndexFile.Format
        do {
            format = try GzipIndexFile.format(ofFile: opened.fileDescriptor, path: path.description)
        } catch let error as ByteStreamError {
            throw IndexRefusal(reason: describe(error))
        }
        if onlyGztool && format != .gztool { return nil }
        let maximumPoints = GzipIndex.maximumPointCount(compressedSize: compressedSize)
        do {
            if format == .gztool {
                // Its windows are read into memory: the file's size is bounded first.
                let limit = Int64(maximumPoints) * (24 + Int64(GzipIndex.defaultWindowSize) + 64)
                guard opened.info.size <= limit else {
                    throw IndexRefusal(reason: "\(opened.info.size) bytes, more than an index of a file of \(compressedSize) bytes can need")
                }
            } else if format == .gzi && options.command.indexPath != nil && bgzfData {
                let stream = try opened.stream()
                defer { stream.close() }
                if checksBGZFIndex { _ = try readBGZFIndex(stream, name: path) }
                return nil
            }
            // Data that is not BGZF has no .gzi: a file without magic is refused as not GZIDX.
            guard case .accessPoints(let index) = try GzipIndexFile(descriptor: opened.fileDescriptor, path: path.description,
                                                                    compressedSize: compressedSize, maximumPoints: maximumPoints,
                                                                    formats: [.gzidx, .gztool])
            else { return nil }
            guard index.points.count <= maximumPoints else {
                throw IndexRefusal(reason: "\(index.points.count) access points, more than the \(maximumPoints) the file can need")
            }
            return index
        } catch let error as GzipIndexError {
            throw IndexRefusal(reason: error.description)
        } catch let error as ByteStreamError {
            throw IndexRefusal(reason: describe(error))
        }
    }

    /// The decoder that reads `input` (the operand's own stream, a regular file) through its
    /// index, or `nil` when there is none to use: no index beside it, a BGZF file (its members
    /// are decoded in parallel without one), an index beside it made for another file (said
    /// in one line, unless `-q`; the file is then decoded without it), or an index that fits
    /// but cannot make the read faster (``indexedThreads(for:)``; said with `-v`). `--index PATH` that
    /// does not fit is an error. `decoder` is what to read (`stream` itself, or with progress
    /// shown, a ``ProgressedDecoder`` over it); `stream` tells afterwards whether the index fit
    /// (``noteIndexMismatch(of:)``).
    func indexedDecodingStream(_ input: ByteInputStream, progress: ProgressReporter?) throws
        -> (decoder: any GzipDecodingStream, stream: IndexedGzipInputStream)? {
        guard let file = input as? FileInputStream, let location = indexLocation,
              currentInput?.info.isRegularFile ?? true else { return nil }
        let bgzfData = startsWithBGZFMember(file)
        if !location.explicit && bgzfData { return nil }
        indexInUse = nil
        guard let (index, indexPath) = try readIndex(at: location, compressedSize: fileSize(file), bgzfData: bgzfData,
                                                     checksBGZFIndex: true) else { return nil }
        indexInUse = indexPath
        let plan = indexedThreads(for: index)
        let stream = try IndexedGzipInputStream(wrapping: file, index: index, threads: plan.threads, inflater: inflaterChoice,
                                                chunkSize: common.chunkSize, trailingGarbage: trailingGarbagePolicy,
                                                maximumOutputSize: maximumOutputSize, closesInnerStream: false)
        do {
            try stream.openOrThrow()
        } catch let error as IndexedGzipError where !location.explicit {
            stream.close()
            noteIndexNotUsed(indexPath, withRemedy(error))
            return nil
        } catch let error as IndexedGzipError {
            stream.close()
            throw Reported(status: reportError(indexPath.description, withRemedy(error)))
        }
        if let reason = plan.sequentialBecause {
            // The index was checked (a stale or foreign one is said, as when it is used); the
            // sequential reader decodes the file, as fast as the one span would be.
            stream.close()
            indexInUse = nil
            // gzip mode's -v gives gzip's lines and no others.
            if common.verbose && options.gzip == nil {
                diagnostics.note(file.displayName, "decoded sequentially, "
                    + "not through \(escapingControlCharacters(indexPath.description)): \(reason)")
            }
            return nil
        }
        if common.verbose && options.gzip == nil {
            diagnostics.note(file.displayName, "read through "
                + "\(escapingControlCharacters(indexPath.description)) (\(index.points.count) access points, "
                + "\(stream.threads) thread\(stream.threads == 1 ? "" : "s"))")
        }
        guard let progress else { return (stream, stream) }
        return (ProgressedDecoder(stream, progress: progress, size: Int64(index.compressedSize)), stream)
    }

    /// How many workers a whole read through `index` gets, and why the sequential reader is
    /// used instead when the index cannot make the read faster: with fewer than two access
    /// points there is one span, which one worker decodes as the sequential reader would.
    /// `-p N` is taken as given. Processors busy with other work are no reason to go
    /// sequential: measured on 2 cores with one and with two `yes > /dev/null` beside it, a
    /// 256 MiB read through the index still took 0.74 and 0.62 of the sequential reader's
    /// time (its workers get more of the shared cores, and it spends less CPU in all).
    func indexedThreads(for index: GzipIndex) -> (threads: Int, sequentialBecause: String?) {
        if let threads = common.threads { return (threads, nil) }
        let points = index.points.count
        if points < 2 { return (1, "it has \(points) access point\(points == 1 ? "" : "s")") }
        return (inflateThreads, nil)
    }

    /// Says that the index did not fit and the file was decoded without it.
    func noteMismatch(_ error: IndexedGzipError, _ path: Pathname) {
        noteIndexNotUsed(path, withRemedy(error))
    }

    /// `error`'s text, and for an index that does not fit the file (made for another file, or
    /// for this one before it changed), how to rebuild it.
    func withRemedy(_ error: IndexedGzipError) -> String {
        switch error {
        case .sizeMismatch, .firstPointMisplaced, .pointMismatch, .windowDiffers, .fileChanged, .undecodable, .badWindow,
             .lineCountMismatch:
            guard let input = currentInput else { return error.description }
            let output = options.command.indexPath.map { " -o \($0.description)" } ?? ""
            return "\(error); rebuild it with: gzstream index -f\(output) \(input.path.description)"
        case .notRegularFile, .unusable, .offsetPastEnd:
            return error.description
        }
    }

    /// After a decode through an index: says so if the index was found not to fit on the way
    /// (the rest was then decoded without it, from the start of the member it failed in).
    func noteIndexMismatch(of stream: IndexedGzipInputStream) {
        if let mismatch = stream.indexMismatch, let path = indexInUse { noteMismatch(mismatch, path) }
    }

    /// The size in bytes of the open `file` (`fstat(2)`), 0 when it cannot be had.
    func fileSize(_ file: FileInputStream) -> Int64 {
        guard (try? file.openOrThrow()) != nil || file.streamStatus == .open else { return 0 }
        return FileInfo(descriptor: file.fileDescriptor)?.size ?? 0
    }

    /// Whether `file` starts with a BGZF member, read at offset 0 without moving the file offset.
    func startsWithBGZFMember(_ file: FileInputStream) -> Bool {
        var bytes = [UInt8](repeating: 0, count: BGZFInputStream.signatureLength)
        guard (try? file.openOrThrow()) != nil || file.streamStatus == .open else { return false }
        let count = bytes.withUnsafeMutableBytes {
            (try? SystemCalls.read(file.fileDescriptor, $0.baseAddress!, $0.count, at: 0, target: file.displayName)) ?? 0
        }
        return count == bytes.count && BGZFInputStream.startsWithBGZFMember(bytes)
    }

    /// `unpack --offset N [--length M] FILE` through a GZIDX index: the plain bytes [N, N + M)
    /// (to the end without M), decoded from the last access point at or before N on
    /// ``inflateThreads`` threads; `nil` when the file has no GZIDX or gztool index (`--index
    /// PATH`, `FILE.gzidx`, or gztool's beside a file that is not BGZF), or
    /// `--index PATH` names a BGZF file's `.gzi`. Every span touched is checked to end where the index says. Closes `output`
    /// when `closesOutput`.
    func unpackIndexedRange(_ input: ByteInputStream, path file: Pathname, range: PlainRange, into output: ByteOutputStream,
                            closesOutput: Bool) throws -> Outcome? {
        guard let location = indexLocation, let fileStream = input as? FileInputStream,
              let (index, indexPath) = try readIndex(at: location, compressedSize: fileSize(fileStream),
                                                     bgzfData: startsWithBGZFMember(fileStream), checksBGZFIndex: false)
        else { return nil }
        let offset = range.offset
        // The data after the range is not checked, trailing garbage included.
        let stream = try IndexedGzipInputStream(wrapping: fileStream, index: index, threads: inflateThreads, inflater: inflaterChoice,
                                                chunkSize: common.chunkSize, trailingGarbage: .ignore, closesInnerStream: false)
        defer { stream.close() }
        do {
            try stream.openOrThrow()
            if let lines = output as? WholeLinesOutputStream {
                try readWholeLines(stream, index: index, into: lines)
            } else {
                try stream.seek(toPlainOffset: offset, length: range.length)
                try stream.copy(to: output, chunkSize: max(common.chunkSize, 64 << 10))
            }
        } catch let error as IndexedGzipError where options.command.indexPath == nil && !error.isOffsetPastEnd {
            // A found index that does not fit: the rest of the range is decoded from the
            // start of the file, after the bytes already written (each checked before it was).
            noteIndexNotUsed(indexPath, withRemedy(error))
            if let lines = output as? WholeLinesOutputStream {
                // The lines go on from the first byte not yet taken.
                return try unpackSequentialRange(input, offset: lines.position, length: nil, readsToEnd: true, into: output,
                                                 closesOutput: closesOutput)
            }
            let written = stream.uncompressedByteCount
            // The file itself may be damaged: the sequential decode goes on to the end, so that
            // every member's CRC-32 and ISIZE give their verdict.
            return try unpackSequentialRange(input, offset: offset + written,
                                             length: range.length.map { $0 - written }, alreadyWritten: written,
                                             readsToEnd: true, into: output, closesOutput: closesOutput)
        } catch let error as IndexedGzipError {
            if closesOutput { output.close() }
            let subject = if case .offsetPastEnd = error { file.description } else { indexPath.description }
            throw Reported(status: reportError(subject, withRemedy(error)))
        } catch {
            if closesOutput { output.close() }
            throw error
        }
        if closesOutput { try output.closeOrThrow() }
        return Outcome(status: .success, bytesIn: stream.compressedByteCount, bytesOut: stream.uncompressedByteCount, header: nil,
                       range: RangeRead(offset: offset, index: indexPath))
    }
}

extension Command {
    /// The loop of a range read without an index: chunks from `read` (into `buffer`; 0 at the
    /// end), the first `skip` plain bytes dropped, at most `remaining` written to `output`, until
    /// both are done or the data ends. Updates all three counts; `written` counts the bytes
    /// written.
    func copyRange(skip: inout Int64, remaining: inout Int64, written: inout Int64, buffer: UnsafeMutablePointer<UInt8>,
                   to output: ByteOutputStream, read: () throws -> Int) throws {
        // --whole-lines takes no more once a line starts past its range.
        while (remaining > 0 || skip > 0) && (output as? WholeLinesOutputStream)?.isDone != true {
            let count = try read()
            if count == 0 { break }
            let start = Int(min(skip, Int64(count)))
            skip -= Int64(start)
            let take = Int(min(remaining, Int64(count - start)))
            if take > 0 {
                try output.writeAll(UnsafeRawBufferPointer(start: buffer + start, count: take))
                remaining -= Int64(take)
                written += Int64(take)
            }
        }
    }
}

extension IndexedGzipError {
    var isOffsetPastEnd: Bool { if case .offsetPastEnd = self { true } else { false } }
}

extension Command {
    /// `unpack --offset N [--length M]` without a usable index: the file decoded from its first
    /// byte, the `offset` plain bytes before the range dropped, as a sequential decode gives
    /// them (`alreadyWritten` bytes of the range were written before, through an index). An
    /// offset past the end is an error. With `readsToEnd` (an index that stopped fitting on the
    /// way, which damage to the file can cause), the rest of the file is decoded too, so that
    /// a damaged member fails the run. Closes `output` when `closesOutput`.
    func unpackSequentialRange(_ input: ByteInputStream, offset: Int64, length: Int64?, alreadyWritten: Int64 = 0,
                               readsToEnd: Bool = false, into output: ByteOutputStream, closesOutput: Bool) throws -> Outcome {
        guard input.setProperty(Int64(0), forKey: .fileCurrentOffset) || input.streamStatus == .notOpen else {
            throw Reported(status: reportError(currentInput?.path.description ?? "standard input", "cannot seek to its start"))
        }
        let decoder = try decodingStream(input)
        defer { decoder.close() }
        var skip = offset
        var remaining = length ?? Int64.max
        var written: Int64 = 0
        let size = max(common.chunkSize, 64 << 10)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        do {
            try decoder.openOrThrow()
            try copyRange(skip: &skip, remaining: &remaining, written: &written, buffer: buffer, to: output) {
                let count = decoder.read(buffer, maxLength: size)
                if count < 0 { throw decoder.streamErrorOrFallback(operation: "read") }
                return count
            }
            if skip > 0 {
                let path = currentInput?.path.description ?? "standard input"
                throw Reported(status: reportError(path, "offset \(offset + alreadyWritten - written) is past the end of the data (\(offset - skip) bytes)"))
            }
            while readsToEnd {
                let count = decoder.read(buffer, maxLength: size)
                if count < 0 { throw decoder.streamErrorOrFallback(operation: "read") }
                if count == 0 { break }
            }
        } catch {
            if closesOutput { output.close() }
            throw error
        }
        if closesOutput { try output.closeOrThrow() }
        return Outcome(status: .success, bytesIn: decoder.compressedByteCount, bytesOut: written + alreadyWritten, header: nil,
                       range: RangeRead(offset: offset - alreadyWritten, index: nil))
    }
}

/// A decoder whose compressed position is shown as progress: the indexed decoder reads its
/// file at offsets (`pread(2)`), which no counting stream sees.
final class ProgressedDecoder: ByteInputStream, GzipDecodingStream {
    let inner: IndexedGzipInputStream
    private let progress: ProgressReporter

    init(_ inner: IndexedGzipInputStream, progress: ProgressReporter, size: Int64) {
        self.inner = inner
        self.progress = progress
        progress.counters.inputSize.store(size, ordering: .relaxed)
        super.init()
    }

    var compressedByteCount: Int64 { inner.compressedByteCount }
    var uncompressedByteCount: Int64 { inner.uncompressedByteCount }
    var header: GzipHeader? { inner.header }
    var trailingGarbage: GzipInputStream.TrailingGarbage? { inner.trailingGarbage }
    var memberCount: Int { inner.memberCount }
    var endedWithZeroPadding: Bool { inner.endedWithZeroPadding }
    var lendsPlainBytes: Bool { true }

    override func openBacking() throws { try inner.openUnlessOpened() }
    override func closeBacking() throws { inner.close() }
    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.read(buffer, maxLength: maxLength)
        if count < 0 { throw inner.streamErrorOrFallback(operation: "read") }
        progress.counters.bytesIn.store(inner.compressedByteCount, ordering: .relaxed)
        return count
    }
}

extension ProgressedDecoder {
    func readInPlace(maxLength: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Int {
        if inner.streamStatus == .notOpen { inner.open() }
        let count = try inner.readInPlace(maxLength: maxLength, body)
        if count < 0 { fail(inner.streamErrorOrFallback(operation: "read")) }
        progress.counters.bytesIn.store(inner.compressedByteCount, ordering: .relaxed)
        return count
    }
}

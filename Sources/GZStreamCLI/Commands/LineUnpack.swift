import ByteStreams
import GzipStreams

// `unpack --lines N[:M] FILE`: lines N through M of the plain data, as `sed -n 'N,Mp'` prints
// them, through the line table of the file's GZIDX index (gztool's `-L` from its line index),
// else decoded from the start and counted.

extension Command {
    /// `unpack --lines N[:M] FILE`: through the GZIDX index found as `--offset` finds it
    /// (``readIndex(at:compressedSize:bgzfData:checksBGZFIndex:)``) when it holds a line table
    /// (``GzipLineTable``, written by every gzstream index writer), decoded from the last
    /// access point before line N; through an index without one (another tool's), said in one
    /// line with how to rebuild it, and without any index (or for BGZF), decoded from the start
    /// of `source` and counted. Closes `output` when `closesOutput`.
    func unpackLines(_ input: ByteInputStream, source: ByteInputStream, path file: Pathname, lines: LineRange,
                     into output: ByteOutputStream, closesOutput: Bool) throws -> Outcome {
        if let location = indexLocation, let fileStream = input as? FileInputStream,
           let (index, indexPath) = try readIndex(at: location, compressedSize: fileSize(fileStream),
                                                  bgzfData: startsWithBGZFMember(fileStream), checksBGZFIndex: false) {
            if index.lineTable != nil {
                return try unpackIndexedLines(input, file: fileStream, index: index, indexPath: indexPath, lines: lines,
                                              into: output, closesOutput: closesOutput)
            }
            noteIndexNotUsed(indexPath, "it counts no lines (another tool's index, or an older gzstream's): the lines are "
                + "counted from the start; rebuild it with: gzstream index -f\(rebuildOutput) \(file.description)")
            return try unpackSequentialLines(input, lines: lines, into: output, closesOutput: closesOutput)
        }
        return try unpackSequentialLines(source, lines: lines, into: output, closesOutput: closesOutput)
    }

    /// ` -o PATH` when the index was named by `--index PATH`, for a rebuild command.
    private var rebuildOutput: String { options.command.indexPath.map { " -o \($0.description)" } ?? "" }

    /// The lines through `index`, which has a line table, with
    /// ``IndexedGzipInputStream/readLines(from:through:_:)`` (which checks the table against
    /// the data as it decodes). A found index that does not fit is said and not used: the
    /// lines are decoded from the start, after the bytes already written (each checked before
    /// it was); `--index PATH` that does not fit is an error.
    private func unpackIndexedLines(_ input: ByteInputStream, file: FileInputStream, index: GzipIndex, indexPath: Pathname,
                                    lines: LineRange, into output: ByteOutputStream, closesOutput: Bool) throws -> Outcome {
        // The data after the span where the lines end is not checked, trailing garbage included.
        let stream = try IndexedGzipInputStream(wrapping: file, index: index, threads: inflateThreads, inflater: inflaterChoice,
                                                chunkSize: common.chunkSize, trailingGarbage: .ignore, closesInnerStream: false)
        defer { stream.close() }
        var written: Int64 = 0
        do {
            try stream.openOrThrow()
            try stream.readLines(from: lines.first, through: lines.last) { piece in
                try output.writeAll(piece)
                written += Int64(piece.count)
            }
        } catch let error as IndexedGzipError where options.command.indexPath == nil
                    && (written == 0 || !error.isLineCountMismatch) {
            // A line count that does not fit is found before its span's bytes are written,
            // unless that span was too long to hold: then they may be wrong, and it is an error.
            noteIndexNotUsed(indexPath, withRemedy(error))
            return try unpackSequentialLines(input, lines: lines, alreadyWritten: written, readsToEnd: true,
                                             into: output, closesOutput: closesOutput)
        } catch let error as IndexedGzipError {
            if closesOutput { output.close() }
            throw Reported(status: reportError(indexPath.description, withRemedy(error)))
        } catch {
            if closesOutput { output.close() }
            throw error
        }
        if closesOutput { try output.closeOrThrow() }
        return Outcome(status: .success, bytesIn: stream.compressedByteCount, bytesOut: written, header: nil,
                       range: RangeRead(offset: 0, index: indexPath, lines: lines))
    }

    /// The lines decoded from the first byte of `input` and counted (``LineRangeSelector``),
    /// the first `alreadyWritten` bytes of them written before (through an index). The decode
    /// stops after the last line, or with `readsToEnd` (an index that stopped fitting on the
    /// way, which damage to the file can cause) goes on to the end, so that a damaged member
    /// fails the run. Closes `output` when `closesOutput`.
    private func unpackSequentialLines(_ input: ByteInputStream, lines: LineRange, alreadyWritten: Int64 = 0,
                                       readsToEnd: Bool = false, into output: ByteOutputStream,
                                       closesOutput: Bool) throws -> Outcome {
        guard input.setProperty(Int64(0), forKey: .fileCurrentOffset) || input.streamStatus == .notOpen else {
            throw Reported(status: reportError(currentInput?.path.description ?? "standard input", "cannot seek to its start"))
        }
        let decoder = try decodingStream(input)
        defer { decoder.close() }
        var selector = LineRangeSelector(first: lines.first, last: lines.last)
        var skip = alreadyWritten
        var written: Int64 = 0
        let size = max(common.chunkSize, 64 << 10)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        do {
            try decoder.openOrThrow()
            while !selector.isDone || readsToEnd {
                let count = decoder.read(buffer, maxLength: size)
                if count < 0 { throw decoder.streamErrorOrFallback(operation: "read") }
                if count == 0 { break }
                try selector.select(UnsafeRawBufferPointer(start: buffer, count: count)) { piece in
                    let dropped = Int(min(skip, Int64(piece.count)))
                    skip -= Int64(dropped)
                    guard dropped < piece.count else { return }
                    try output.writeAll(UnsafeRawBufferPointer(rebasing: piece[dropped...]))
                    written += Int64(piece.count - dropped)
                }
            }
        } catch {
            if closesOutput { output.close() }
            throw error
        }
        if closesOutput { try output.closeOrThrow() }
        return Outcome(status: .success, bytesIn: decoder.compressedByteCount, bytesOut: written + alreadyWritten, header: nil,
                       range: RangeRead(offset: 0, index: nil, lines: lines))
    }
}

extension IndexedGzipError {
    var isLineCountMismatch: Bool { if case .lineCountMismatch = self { true } else { false } }
}

import ByteStreams
import GzipStreams
import TarArchives

// BGZF input, read by its .gzi index: `unpack --offset N --length M` reads a range through the .gzi
// index, and `index` builds that index. (`unpack` and `test` decode BGZF on -p threads through
// CommandRunner's `decodingStream`.)

extension Command {
    /// The threads that inflate BGZF: `-p`, or every core available to the process.
    var inflateThreads: Int { common.threads ?? defaultThreadCount }

    /// `unpack --offset N [--length M] FILE.gz`: plain bytes [N, N + M) (to the end without M),
    /// found through `FILE.gz.gzi` (bgzip's index) by seeking to the member that holds byte N
    /// (a GZIDX index is tried first: ``unpackIndexedRange(_:path:range:into:closesOutput:)``);
    /// the members before it are not read, only their headers and ISIZE fields to check the
    /// entry (`compressed`, the file's own stream, is read at offsets for that). An offset at
    /// the end gives nothing; past it, an error. Closes `output` when `closesOutput`.
    func unpackRange(_ input: ByteInputStream, file compressed: FileInputStream?, path file: Pathname,
                     range: PlainRange, into output: ByteOutputStream, closesOutput: Bool) throws -> Outcome {
        let offset = range.offset
        let indexFile = options.command.indexPath ?? file.appending(".gzi")
        // Messages name both as the user reads them.
        let (path, indexPath) = (file.description, indexFile.description)
        let index: BGZFIndex
        if foundIndexRefused && options.command.indexPath == nil {
            return try unpackSequentialRange(input, offset: offset, length: range.length, into: output,
                                             closesOutput: closesOutput)
        }
        do {
            // Looked up beside the input in the directory it was opened in, never through a
            // symbolic link, and trusted as any index (IndexTrust.swift); `--index PATH` is
            // opened as named. A found index that is not trusted or not valid is not used: the
            // range is decoded from the start.
            let explicit = options.command.indexPath != nil
            let indexInput: OpenedInput
            do {
                let name = explicit ? nil : currentInput?.name.appending(".gzi")
                guard let opened = try openTrustedIndex(indexFile, name: name, explicit: explicit || currentInput == nil) else {
                    throw ByteStreamError(.system(errno: Errno.noSuchFile), operation: "open", target: indexPath)
                }
                indexInput = opened
            } catch let refusal as IndexRefusal {
                if explicit { throw Reported(status: reportError(indexPath, refusal.reason)) }
                noteIndexNotUsed(indexFile, refusal.reason)
                return try unpackSequentialRange(input, offset: offset, length: range.length, into: output,
                                                 closesOutput: closesOutput)
            }
            defer { indexInput.close() }
            let indexStream = try indexInput.stream()
            defer { indexStream.close() }
            do {
                index = try readBGZFIndex(indexStream, name: indexFile, found: !explicit,
                                          compressedSize: FileInfo(descriptor: (input as? FileInputStream)?.fileDescriptor ?? -1)?.size)
            } catch let refusal as IndexRefusal {
                noteIndexNotUsed(indexFile, refusal.reason)
                return try unpackSequentialRange(input, offset: offset, length: range.length, into: output,
                                                 closesOutput: closesOutput)
            }
        } catch where isSystemError(error, Errno.noSuchFile) && options.command.indexPath == nil {
            // The lines of a split a plan made without an index (one split, the whole file):
            // decoded from the start, as an engine would read the file.
            if output is WholeLinesOutputStream {
                return try unpackSequentialRange(input, offset: offset, length: nil, into: output, closesOutput: closesOutput)
            }
            // Only a BGZF file can have an index: say so rather than suggest building one.
            let start = try PeekingInputStream(peeking: input, length: BGZFInputStream.signatureLength).peekedBytes
            if !BGZFInputStream.startsWithBGZFMember(start) {
                throw Reported(status: reportError(path, "no index \(path).gzidx (run 'gzstream index \(path)' to build it)"))
            }
            throw Reported(status: reportError(path, "no index \(indexPath) (run 'gzstream index \(path)' to build it)"))
        }
        let (entry, membersBefore) = index.start(containing: UInt64(offset))
        try input.openUnlessOpened()
        // The file's own descriptor (`input` may count progress over it), read at offsets.
        if let descriptor = compressed?.fileDescriptor, descriptor >= 0 {
            do {
                try index.checkStart(membersBefore: membersBefore, descriptor: descriptor, path: path)
            } catch let error as IndexedGzipError {
                guard options.command.indexPath != nil else {
                    noteIndexNotUsed(indexFile, "\(error); rebuild it with: gzstream index -f \(path)")
                    return try unpackSequentialRange(input, offset: offset, length: range.length, into: output,
                                                     closesOutput: closesOutput)
                }
                throw Reported(status: reportError(indexPath, "\(error); rebuild it with: gzstream index -f -o \(indexPath) \(path)"))
            }
        }
        guard input.setProperty(Int64(entry.compressedOffset), forKey: .fileCurrentOffset) else {
            throw Reported(status: reportError(path, "cannot seek to byte \(entry.compressedOffset) (not a regular file)"))
        }
        // An index made for another file (or before the file changed) points elsewhere.
        let member = try PeekingInputStream(peeking: input, length: BGZFInputStream.signatureLength)
        guard BGZFInputStream.startsWithBGZFMember(member.peekedBytes) else {
            let problem = "no BGZF member at byte \(entry.compressedOffset), where \(indexPath) says one starts: "
                + "the index is not this file's"
            guard options.command.indexPath != nil else {
                // Found beside the file: not used; the range is decoded from the start.
                noteIndexNotUsed(indexFile, "\(problem); rebuild it with: gzstream index -f \(path)")
                return try unpackSequentialRange(input, offset: offset, length: range.length, into: output,
                                                 closesOutput: closesOutput)
            }
            throw Reported(status: reportError(path, "\(problem); rebuild it with: gzstream index -f -o \(indexPath) \(path)"))
        }
        let bgzf = try BGZFInputStream(wrapping: member, threads: inflateThreads, chunkSize: common.chunkSize,
                                       trailingGarbage: .ignore,
                                       start: .init(compressedOffset: Int64(entry.compressedOffset), membersBefore: membersBefore),
                                       inflater: inflaterChoice, closesInnerStream: false)
        defer { bgzf.close() }
        var written: Int64 = 0
        do {
            try bgzf.openOrThrow()
            var skip = offset - Int64(entry.uncompressedOffset)
            var remaining = range.length ?? Int64.max
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: common.chunkSize)
            defer { buffer.deallocate() }
            func read() throws -> Int {
                let count = bgzf.read(buffer, maxLength: common.chunkSize)
                if count < 0 { throw bgzf.streamErrorOrFallback(operation: "read") }
                return count
            }
            // Also with --length 0, the bytes before the offset are read: an offset past the
            // end is an error either way.
            try copyRange(skip: &skip, remaining: &remaining, written: &written, buffer: buffer, to: output, read: read)
            if skip > 0 {
                let size = offset - skip
                throw Reported(status: reportError(path, "offset \(offset) is past the end of the data (\(size) bytes)"))
            }
            // A member's bytes can come out before its CRC-32 and ISIZE are checked (once a
            // damaged member sent the decode down the sequential path): read on past the end of
            // the last member the range touches, so that its damage is an error, as with
            // `bgzip -b -s`.
            if written > 0 {
                let rangeEnd = UInt64(offset + written)
                let next = index.entries.first { $0.uncompressedOffset >= rangeEnd }
                let checkedThrough = next.map { Int64($0.uncompressedOffset - entry.uncompressedOffset) }
                while checkedThrough.map({ bgzf.uncompressedByteCount <= $0 }) ?? true, try read() > 0 {}
            }
        } catch {
            if closesOutput { output.close() }
            throw error
        }
        if closesOutput { try output.closeOrThrow() }
        return Outcome(status: .success, bytesIn: bgzf.compressedByteCount - Int64(entry.compressedOffset),
                       bytesOut: written, header: nil, range: RangeRead(offset: offset, index: indexFile))
    }

    /// `gzstream index FILE.gz`: writes `FILE.gz.gzi` (or `-o PATH`), byte for byte what
    /// `bgzip -r` writes, by walking the member headers without inflating. A file that is not
    /// BGZF gets a GZIDX index (``buildGzipIndex(_:input:inputInfo:index:)``). The index is written in its
    /// directory and renamed into place, never over an existing one without `-f`.
    /// `opened` is the operand opened once (``Command/openOperand(_:)``), `nil` for `-`.
    /// `index` holds `-o` and `--span`.
    func buildIndex(_ operand: Pathname, input opened: OpenedInput?, index: IndexOptions) throws -> ExitStatus {
        if let size = index.plan { return try printPlan(operand, input: opened, size: size, json: index.json) }
        guard let opened else {
            throw Reported(status: reportError("standard input", "index needs a file: the index (.gzidx, or .gzi for BGZF) is written beside it"))
        }
        try checkKind(opened.info, of: operand)
        let descriptor = opened.fileDescriptor
        let file = try opened.stream()
        // A file that does not start with a BGZF member gets indexed_gzip's GZIDX instead.
        let input: ByteInputStream
        do {
            let start = try PeekingInputStream(peeking: file, length: BGZFInputStream.signatureLength)
            if !BGZFInputStream.startsWithBGZFMember(start.peekedBytes) {
                return try buildGzipIndex(operand, input: start, inputInfo: opened.info, index: index, descriptor: descriptor)
            }
            input = start
        } catch let error as ByteStreamError {
            file.close()
            throw Reported(status: reportError(error.target ?? operand.description, describe(error)))
        }
        let indexPath = index.indexPath(of: operand, suffix: ".gzi")
        let directory = try openIndexDirectory(for: indexPath, of: operand, inputInfo: opened.info, closingOnFailure: file)
        let tarIndex = try beginTarIndex(operand, inputInfo: opened.info, index: index, closingOnFailure: file)
        let scan: BGZFIndex.Scan
        var tail = ArchiveTail(bytes: [], isSampled: false)
        // Damaged data the walk does not see (it inflates nothing) leaves the .gzi as bgzip's
        // would be, and no member index: a warning.
        var tarFailure: (any Error)?
        do {
            defer { file.close() }
            scan = try BGZFIndex.scan(input, chunkSize: max(common.chunkSize, 64 << 10))
            if let tarIndex {
                do {
                    try collectTarMembers(file, index: scan.index, into: tarIndex)
                } catch {
                    tarFailure = error
                }
                tail = try Self.compressedTail(of: descriptor, size: scan.compressedSize, path: operand.description)
            }
        } catch let error as GzipError {
            let hint = error.kind == "not-bgzf" ? "; an index needs a file of BGZF members only (no zero padding or other members after them)" : ""
            throw Reported(status: reportError(operand.description, describe(error) + hint))
        } catch let error as ByteStreamError {
            throw Reported(status: reportError(error.target ?? operand.description, describe(error)))
        }
        let temporary = try temporaryFile(in: directory, shownAs: indexPath)
        defer { temporary.discard() }
        try writeIndex(scan.index.encoded, into: temporary, path: indexPath, source: opened.info)
        try publishIndex(temporary, as: indexPath)
        reportIndexWritten(operand, members: scan.memberCount, plainSize: scan.uncompressedSize, indexPath: indexPath,
                           detail: "\(scan.index.entries.count) entries")
        guard let tarIndex else { return .success }
        if let tarFailure {
            diagnostics.warning(operand.description, "no member index: \(describe(tarFailure))")
            return .warning
        }
        return try finishTarIndex(tarIndex, operand: operand, compressedSize: scan.compressedSize,
                                  plainSize: scan.uncompressedSize, inputInfo: opened.info, tail: tail)
    }

    /// Feeds a BGZF file's plain bytes to the member index being built: decoded through its
    /// `.gzi` on -p threads from the first member, until the builder has what it needs (the
    /// first 512 bytes show the data is not a tar, or the tar's end). The walk that built the
    /// `.gzi` inflated nothing; this is the one decode a member index needs. `file` is left
    /// open for its owner.
    /// - Throws: The decoder's error (damaged data, a read that failed).
    private func collectTarMembers(_ file: FileInputStream, index: BGZFIndex, into writing: TarIndexWriting) throws {
        let plain = try IndexedBGZFInputStream(wrapping: file, index: index, threads: inflateThreads,
                                               chunkSize: max(common.chunkSize, 64 << 10), trailingGarbage: .ignore,
                                               inflater: inflaterChoice, closesInnerStream: false)
        defer { plain.close() }
        try plain.openOrThrow()
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        while writing.builder.wantsMoreData {
            let count = buffer.withUnsafeMutableBufferPointer { plain.read($0.baseAddress!, maxLength: $0.count) }
            if count < 0 { throw plain.streamErrorOrFallback(operation: "read") }
            if count == 0 { break }
            buffer.withUnsafeBytes { writing.builder.take(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }

    /// Reads bgzip's `.gzi` index from `stream` (at most 1 GiB); a file that is not one is
    /// reported under `name`.
    /// Reads bgzip's `.gzi` whole from `stream`: at most 16 bytes an entry and one entry per
    /// member (28 bytes at least) of a file of `compressedSize` bytes when it is known, else 1 GiB.
    /// - Throws: ``Reported`` (said) for a fault, or ``IndexRefusal`` when the index was
    ///   `found` beside the file (the caller says it and goes on without it).
    func readBGZFIndex(_ stream: ByteInputStream, name: Pathname, found: Bool = false, compressedSize: Int64? = nil) throws -> BGZFIndex {
        let limit = compressedSize.map { Int(min(8 + 16 * ($0 / 28 + 1), 1 << 30)) } ?? (1 << 30)
        do {
            return try BGZFIndex(decoding: try stream.readToEnd(limit: limit))
        } catch let error as GzipIndexError {
            if found { throw IndexRefusal(reason: error.description) }
            throw Reported(status: reportError(name.description, error.description))
        } catch let error as ByteStreamError where found {
            throw IndexRefusal(reason: describe(error))
        }
    }

    /// The directory that is to hold `indexPath`, opened once (the check, the temporary file and
    /// the move all take names in it), after refusing to replace an index there without `-f`,
    /// and to replace the indexed file itself (`index -f -o FILE.gz FILE.gz`, or a link to it)
    /// even with it. Closes `input` when it throws.
    ///
    /// An index beside its file (no `-o`) goes into the very directory the file was read from,
    /// by that directory's descriptor (``Command/currentInput``): opened again by its path, a
    /// directory another user can write to could be renamed, or its name swapped for a link,
    /// between the two openings, and the index would land elsewhere, in a directory of their
    /// choosing.
    func openIndexDirectory(for indexPath: Pathname, of operand: Pathname, inputInfo: FileInfo,
                            closingOnFailure input: ByteInputStream) throws -> OutputDirectory {
        do {
            let directory: OutputDirectory
            if let currentInput, indexPath.directoryPart == currentInput.path.directoryPart {
                do {
                    directory = try OutputDirectory(duplicating: currentInput.directory, path: indexPath.directoryPart)
                } catch {
                    throw Reported(status: reportError(indexPath.description, error.message))
                }
            } else {
                directory = try openDirectory(containing: indexPath)
            }
            try rejectSameFile(inputInfo, directory.info(of: indexPath.lastComponent, followsLinks: true),
                               inputName: operand.description)
            try refuseToReplaceIndex(indexPath, in: directory)
            // Found now, not when the index is moved into place after the whole decode.
            if indexPath.lastComponent.bytes.count > Self.longestName {
                throw Reported(status: reportError(indexPath.description, "cannot write: File name too long"))
            }
            return directory
        } catch {
            input.close()
            throw error
        }
    }

    /// The longest file name Linux file systems take, in bytes (`NAME_MAX`).
    static let longestName = 255

    /// With `-v`, the line that says an index was written: `FILE: N members, S bytes -> INDEX (detail)`
    /// (`1 member`).
    func reportIndexWritten(_ operand: Pathname, members: Int, plainSize: Int64, indexPath: Pathname, detail: String) {
        guard common.verbose else { return }
        diagnostics.note(operand.description, "\(counted(members, "member")), "
            + "\(plainSize) bytes -> \(escapingControlCharacters(indexPath.description)) (\(detail))")
    }
}

extension IndexOptions {
    /// Where `index` writes the index of `operand`: `-o PATH`, else beside it with `suffix`.
    func indexPath(of operand: Pathname, suffix: Pathname) -> Pathname {
        outputPath ?? operand.appending(suffix)
    }
}

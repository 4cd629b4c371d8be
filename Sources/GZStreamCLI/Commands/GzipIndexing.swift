import ByteStreams
import GzipStreams

// `gzstream index FILE.gz` for a gzip file that is not BGZF: indexed_gzip's GZIDX, built by
// decoding the whole file once (GzipIndexBuilder), beside the file as FILE.gz.gzidx; and what
// every index writer shares (index, pack --index): the refusal to replace one, its owner and
// mode, and its publication.

/// `--span SIZE`: the plain distance between GZIDX points, written as every size is
/// (SizeGrammar.swift), from 32 KiB (the window size, the least indexed_gzip takes) to
/// 4 GiB − 1 (the header's 4 bytes). A decimal number alone still counts KiB, as `--span` read
/// it first, so that a script's `--span 1024` keeps its meaning instead of asking for a point
/// every kilobyte; it is deprecated, and the parser warns (`countsKiB`).
func parseSpan(_ text: String) throws(UsageError) -> (bytes: Int, countsKiB: Bool) {
    let range = GzipIndexBuilder.minimumSpan...Int(UInt32.max)
    switch readSize(text, numberAlone: 1 << 10) {
    case .bytes(let bytes, let alone) where range.contains(bytes): return (bytes, alone)
    case .malformed: throw sizeFormsError(text, option: "--span", numberAlone: "KiB (deprecated: write 64K)")
    case .bytes, .tooLarge: throw UsageError(message: "span must be 32K to 4G - 1 (a number alone counts KiB), not '\(text)'")
    }
}

extension Command {
    /// Writes `FILE.gz.gzidx` (or `-o PATH`) for the gzip file `operand` (any members, not BGZF), whose bytes
    /// `input` gives from the first; the windows' temporary file and the index's go in the
    /// index's directory, opened once. Refuses to replace an index without `-f`; a damaged
    /// file gets the error `unpack` gives (zlib's, but for deflate data only ISA-L decodes,
    /// taken when the member's CRC-32 and ISIZE match) and no index. Trailing garbage is taken as `test`
    /// takes it: the members before it are indexed, with its warning (exit 2); zero padding
    /// passes unsaid. Closes `input`. `index` holds `-o` and `--span`.
    ///
    /// When the plain data is a tar archive, the same decode also finds its members, and their
    /// index goes beside the file as `FILE.tarix` (TarIndexing.swift; not with `--no-tar` or `-o`);
    /// `descriptor` (the file's, open while `input` is) gives the file's last bytes that bind it.
    func buildGzipIndex(_ operand: Pathname, input: ByteInputStream, inputInfo: FileInfo,
                        index: IndexOptions, descriptor: Int32) throws -> ExitStatus {
        let indexPath = index.indexPath(of: operand, suffix: Self.gzidxSuffix)
        let (directory, temporary) = try openIndexTarget(indexPath, of: operand, inputInfo: inputInfo,
                                                         closingOnFailure: input)
        defer { temporary.discard() }
        let tarIndex = try beginTarIndex(operand, inputInfo: inputInfo, index: index, closingOnFailure: input)
        var tail = ArchiveTail(bytes: [], isSampled: false)
        let output = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: false,
                                      displayName: indexPath.description)
        let summary: GzipIndexBuilder.Summary
        do {
            defer { input.close() }
            // --span asks for its spacing alone; without it the default also keeps the windows
            // within 1% of the file (GzipIndexBuilder.defaultCompressedSpan), as --write-index does.
            let builder = try index.span.map { span throws(ByteStreamError) in try GzipIndexBuilder(span: span) }
                ?? GzipIndexBuilder()
            summary = try builder.build(from: input, into: output, spillDirectory: directory.descriptor,
                                        chunkSize: max(common.chunkSize, 64 << 10), ignoresTrailingGarbage: true,
                                        inflater: inflaterChoice,
                                        plainBytes: tarIndex.map { writing in { writing.builder.take($0) } })
            if tarIndex != nil {
                tail = try Self.compressedTail(of: descriptor, size: summary.compressedSize, path: operand.description)
            }
            try output.closeOrThrow()
            try finishIndex(temporary, source: inputInfo)
        } catch let error as GzipError {
            output.close()
            throw Reported(status: reportError(operand.description, describe(error)))
        } catch let error as ByteStreamError {
            output.close()
            throw Reported(status: reportError(error.target ?? operand.description, describe(error)))
        } catch {
            output.close()
            throw Reported(status: reportError(indexPath.description, describe(error)))
        }
        try publishIndex(temporary, as: indexPath)
        reportIndexWritten(operand, members: summary.memberCount, plainSize: summary.plainSize, indexPath: indexPath,
                           detail: "\(summary.pointCount) points, \(summary.indexSize) bytes")
        var status = ExitStatus.success
        if let tarIndex {
            status = try finishTarIndex(tarIndex, operand: operand, compressedSize: summary.compressedSize,
                                        plainSize: summary.plainSize, inputInfo: inputInfo, tail: tail)
        }
        if let garbage = summary.trailingGarbage { return max(status, try warnTrailingGarbage(operand.description, garbage)) }
        return status
    }

    /// The directory that is to hold `indexPath` (``openIndexDirectory(for:of:inputInfo:closingOnFailure:)``)
    /// and a temporary file in it, to be renamed to the index once written. Closes `input`
    /// when it throws.
    func openIndexTarget(_ indexPath: Pathname, of operand: Pathname, inputInfo: FileInfo,
                         closingOnFailure input: ByteInputStream) throws -> (OutputDirectory, TemporaryFile) {
        let directory = try openIndexDirectory(for: indexPath, of: operand, inputInfo: inputInfo, closingOnFailure: input)
        do {
            return (directory, try temporaryFile(in: directory, shownAs: indexPath))
        } catch {
            input.close()
            throw error
        }
    }

    /// Refuses to replace an existing `.gzi` (or a link by that name) in `directory` without `-f`.
    func refuseToReplaceIndex(_ indexPath: Pathname, in directory: OutputDirectory) throws {
        if !common.force, directory.info(of: indexPath.lastComponent, followsLinks: false) != nil {
            throw Reported(status: reportError(indexPath.description, Self.existingOutput))
        }
    }

    /// Moves a written `.gzi` into place beside its output, in the temporary file's directory
    /// (over an existing one only with `-f`).
    func publishIndex(_ temporary: TemporaryFile, as indexPath: Pathname) throws {
        do {
            try temporary.publish(as: indexPath.lastComponent, replacing: common.force)
        } catch {
            throw Reported(status: reportError(indexPath.description, error.message))
        }
    }

    /// Writes the index's bytes (`.gzi` or GZIDX) into its temporary file, then gives it the
    /// owner and mode of the file it was made from (``finishIndex(_:source:)``), which closes it.
    func writeIndex(_ bytes: [UInt8], into temporary: TemporaryFile, path: Pathname, source: FileInfo?) throws {
        let stream = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: false,
                                      displayName: path.description)
        do {
            try stream.openOrThrow()
            try stream.writeAll(bytes)
            try stream.closeOrThrow()
            try finishIndex(temporary, source: source)
        } catch {
            stream.close()
            throw Reported(status: reportError(path.description, describe(error)))
        }
    }

    /// Sets an index's owner and mode on its temporary file's descriptor, then closes it: the
    /// owner of `source` (the file whose data it describes; where allowed, as for outputs) and
    /// ``indexPermissions(of:)``, without the group bits when the group could not be given.
    /// - Throws: ``ByteStreamError`` when closing reports an error.
    ///
    /// A file modified "in the future" (a clock set back, a `touch -d`) gives the index its own
    /// modification time, else the index would be older than the file it was just made from,
    /// and never used (``Command/checkTrust(of:explicit:)``'s staleness rule).
    func finishIndex(_ temporary: TemporaryFile, source: FileInfo?) throws {
        let owner = source.flatMap { $0.isRegularFile ? ($0.owner, $0.group) : nil }
        var times: (access: FileInfo.Timestamp, modification: FileInfo.Timestamp)?
        if let source, source.isRegularFile, let written = FileInfo(descriptor: temporary.descriptor),
           Self.isOlder(written.modificationTime, than: source.modificationTime) {
            times = (written.accessTime, source.modificationTime)
        }
        try temporary.finish(mode: indexPermissions(of: source), times: times, owner: owner, groupNeedsOwner: true)
    }
}

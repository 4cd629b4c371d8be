import ByteStreams
import GzipStreams

// `unpack --write-index` and `test --write-index`: the GZIDX index of a gzip file (not BGZF)
// recorded from the decode the command does anyway (GzipIndexRecorder), written beside the
// file as FILE.gzidx under the rules of `gzstream index`: refused over an existing index
// without -f (before anything is decoded), the owner and mode of the file it describes, made
// in its directory and renamed into place only once the whole file decoded and checked.

/// An index being recorded while one file decodes, and where it goes.
final class IndexWhileDecoding {
    let recorder: GzipIndexRecorder
    let indexPath: Pathname
    let operand: Pathname
    let source: FileInfo
    /// In the index's directory, which it holds open.
    let temporary: TemporaryFile

    init(recorder: GzipIndexRecorder, indexPath: Pathname, operand: Pathname, source: FileInfo,
         temporary: TemporaryFile) {
        self.recorder = recorder
        self.indexPath = indexPath
        self.operand = operand
        self.source = source
        self.temporary = temporary
    }

    deinit {
        // Unpublished (a failed decode): no temporary file is left.
        temporary.discard()
    }
}

extension Command {
    /// Whether this run writes each file's index while decoding it (`--write-index`).
    var writesIndexWhileDecoding: Bool {
        switch options.command {
        case .unpack(let unpack): unpack.writesIndex
        case .test(let test): test.writesIndex
        default: false
        }
    }

    /// Readies the index of `operand` for `--write-index`, before anything is decoded: opens
    /// its directory once, refuses to replace an index there without `-f`, makes the
    /// temporary file and the recorder; `nil` without `--write-index`. Closes `input` when it throws.
    /// - Throws: ``Reported`` (said).
    func beginIndexWhileDecoding(_ operand: Pathname, inputInfo: FileInfo?,
                                 input: ByteInputStream) throws -> IndexWhileDecoding? {
        guard writesIndexWhileDecoding else { return nil }
        guard let inputInfo, inputInfo.isRegularFile else {
            input.close()
            throw Reported(status: reportError(displayName(operand),
                                               "--write-index needs a regular file (its index is written beside it)"))
        }
        let indexPath = operand.appending(Self.gzidxSuffix)
        let (directory, temporary) = try openIndexTarget(indexPath, of: operand, inputInfo: inputInfo,
                                                         closingOnFailure: input)
        do {
            let recorder = try GzipIndexRecorder(spillDirectory: directory.descriptor)
            return IndexWhileDecoding(recorder: recorder, indexPath: indexPath, operand: operand, source: inputInfo,
                                      temporary: temporary)
        } catch {
            temporary.discard()
            input.close()
            throw Reported(status: reportError(indexPath.description, describe(error)))
        }
    }

    /// Writes the recorded index into its temporary file, gives it the file's owner and mode,
    /// and renames it into place; says so under `-v`. Called once the whole file decoded.
    /// - Throws: ``Reported`` (said).
    func finishIndexWhileDecoding(_ writing: IndexWhileDecoding) throws {
        let output = FileOutputStream(fileDescriptor: writing.temporary.descriptor, closesDescriptor: false,
                                      displayName: writing.indexPath.description)
        let summary: GzipIndexBuilder.Summary
        do {
            summary = try writing.recorder.write(to: output)
            try output.closeOrThrow()
            try finishIndex(writing.temporary, source: writing.source)
        } catch {
            output.close()
            throw Reported(status: reportError(writing.indexPath.description, describe(error)))
        }
        try publishIndex(writing.temporary, as: writing.indexPath)
        reportIndexWritten(writing.operand, members: summary.memberCount, plainSize: summary.plainSize,
                           indexPath: writing.indexPath,
                           detail: "\(summary.pointCount) points, \(summary.indexSize) bytes")
    }
}

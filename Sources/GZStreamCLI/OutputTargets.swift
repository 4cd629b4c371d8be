import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the output goes: standard output, a file written beside its final name and renamed into
/// place, or a device; and the index beside a BGZF file.
extension Command {
    func toStandardOutput(input: ByteInputStream, inputPath: Pathname, inputInfo: FileInfo?) throws -> ExitStatus {
        try refuseTerminal(readingStandardInput: inputPath == "-")
        let output = environment.standardOutput
        if output.streamStatus == .notOpen { output.open() }
        let outcome = try transform(input, inputPath: inputPath, inputInfo: inputInfo, into: output,
                                    outputName: "standard output", closesOutput: false)
        report(outcome, inputName: displayName(inputPath), outputName: "standard output")
        return outcome.status
    }

    /// Writes the output to `outputPath`; `inputPath` is `-` for standard input.
    func toFile(input: ByteInputStream, inputPath: Pathname, inputInfo: FileInfo?, outputPath: Pathname) throws -> ExitStatus {
        let inputName = displayName(inputPath)
        if inputPath == "-" { try refuseTerminal(readingStandardInput: true) }
        // `-o PATH` names the file itself; without -o, or with -o DIRECTORY, the name is made here.
        let explicitOutput = options.outputPath != nil && outputDirectory == nil
        if explicitOutput, let descriptor = processDescriptor(named: outputPath) {
            return try toDescriptor(descriptor, input: input, inputPath: inputPath, inputInfo: inputInfo,
                                    outputPath: outputPath)
        }
        if explicitOutput, let target = FileInfo(path: outputPath), !target.isRegularFile, !target.isDirectory {
            return try toDevice(input: input, inputPath: inputPath, inputInfo: inputInfo, target: target,
                                outputPath: outputPath)
        }
        let existing = FileInfo(path: outputPath)
        try rejectSameFile(inputInfo, existing, inputName: inputName)
        // unpack -N names the output after the header, known only once it is read: the
        // publish step checks that name.
        let outputNamedByHeader = options.mode == .unpack && options.useName == true && !explicitOutput
        // A dangling symbolic link exists too: publishing would refuse to replace it, so it
        // is found here, before the input is read.
        if !options.force, !outputNamedByHeader, existing != nil || FileInfo.isSymbolicLink(outputPath) {
            throw Reported(status: refuseExisting(outputPath.description))
        }
        // pack --bgzf --index: OUTPUT.gzi, written and published with the output.
        let indexPath = options.index ? outputPath.appending(".gzi") : nil
        if let indexPath {
            let existingIndex = FileInfo(path: indexPath)
            try rejectSameFile(inputInfo, existingIndex, inputName: inputName)
            try refuseToReplaceIndex(indexPath, existing: existingIndex)
        }
        // -o naming a symbolic link writes the file the link points to, as a shell redirection
        // would; the link itself stays. (A link to a descriptor, as /dev/stdout is, was taken above.)
        let publishPath = explicitOutput ? (symbolicLinkTarget(outputPath) ?? outputPath) : outputPath
        let temporary = try temporaryFile(besides: publishPath, shownAs: outputPath)
        defer { temporary.discard() }
        let indexTemporary = try indexPath.map { try temporaryFile(besides: $0, shownAs: $0) }
        defer { indexTemporary?.discard() }
        let output = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: true,
                                      displayName: outputPath.description)
        temporary.descriptorClosed()
        let outcome = try transform(input, inputPath: inputPath, inputInfo: inputInfo, into: output,
                                    outputName: outputPath.description, closesOutput: true)
        var finalPath = publishPath
        if outputNamedByHeader, let stored = outcome.header?.fileName, let name = safeFileName(stored) {
            finalPath = Pathname(bytes: directory(of: outputPath).bytes + name.bytes)!
        }
        try rejectSameFile(inputInfo, FileInfo(path: finalPath), inputName: inputName)
        // Messages name the path the user gave (`-o link`), not the file behind the link.
        let shownPath = (finalPath == publishPath ? outputPath : finalPath).description
        // A FIFO's or a device's mode (often 0666) is no file's: those get the umask's default.
        let permissions = inputInfo.flatMap { $0.isRegularFile ? $0.permissions : nil } ?? defaultPermissions()
        temporary.setAttributes(mode: permissions, times: outputTimes(inputInfo: inputInfo, header: outcome.header),
                                owner: inputInfo.map { ($0.owner, $0.group) })
        // The index is published first and taken back if the output cannot be, so that the
        // two appear together or not at all.
        if let indexTemporary, let indexPath {
            try writeIndex((outcome.index ?? BGZFIndex()).encoded, into: indexTemporary, path: indexPath)
            indexTemporary.setAttributes(mode: permissions, times: nil, owner: inputInfo.map { ($0.owner, $0.group) })
            try publishIndex(indexTemporary, as: indexPath)
        }
        do {
            try temporary.publish(as: finalPath, replacing: options.force)
        } catch let error as PublishError {
            if let indexPath { removeFile(indexPath) }
            // Found only now (unpack -N's stored name, a file made meanwhile): as if found first.
            if error.alreadyExists { throw Reported(status: refuseExisting(shownPath)) }
            throw Reported(status: reportError(shownPath, error.message))
        }
        report(outcome, inputName: inputName, outputName: shownPath)
        return removeInputIfAsked(inputPath, inputInfo: inputInfo, status: outcome.status)
    }

    /// `--rm` (and gzip mode's default): removes the input once its output is in place; never
    /// standard input, a FIFO or a device. The name is removed relative to the directory the
    /// input was opened in, and only if it still names the file that was read
    /// (``OpenedInput/removeName()``): a file put in its place is left, with a warning. A
    /// failure is a warning.
    /// - Returns: `status`, or a warning when the input was not removed.
    private func removeInputIfAsked(_ inputPath: Pathname, inputInfo: FileInfo?, status: ExitStatus) -> ExitStatus {
        guard options.removeInput, inputInfo?.isRegularFile == true, let input = currentInput else { return status }
        switch input.removeName() {
        case .removed:
            return status
        case .replaced:
            diagnostics.warning(displayName(inputPath), Self.replacedInput)
        case .failed(let code):
            diagnostics.warning(displayName(inputPath), "could not remove: \(String(cString: strerror(code)))")
        }
        return max(status, .warning)
    }

    static let replacedInput = "was replaced after it was read -- not removed"

    /// Refuses `--index` beside an output that is no regular file (a device, a descriptor).
    private func refuseIndex(besideNonFile outputPath: Pathname) throws {
        guard options.index else { return }
        throw Reported(status: reportError(outputPath.description,
                                           "not a regular file: --index needs one to write its .gzi beside"))
    }

    /// `-o` naming a device or FIFO (`-o /dev/null`): written into as a shell redirection would,
    /// never replaced by a regular file. No index is written beside one.
    func toDevice(input: ByteInputStream, inputPath: Pathname, inputInfo: FileInfo?, target: FileInfo,
                  outputPath: Pathname) throws -> ExitStatus {
        try refuseIndex(besideNonFile: outputPath)
        try rejectSameFile(inputInfo, target, inputName: displayName(inputPath))
        let output = FileOutputStream(path: outputPath)
        output.open()
        if let error = output.streamError {
            throw Reported(status: reportError(outputPath.description, describe(error)))
        }
        let outcome = try transform(input, inputPath: inputPath, inputInfo: inputInfo, into: output,
                                    outputName: outputPath.description, closesOutput: true)
        report(outcome, inputName: displayName(inputPath), outputName: outputPath.description)
        return outcome.status
    }

    /// Reports an output that exists and is not replaced without `-f`: an error, or in gzip
    /// mode gzip's warning (quiet under `-q`). - Returns: the status to end the file with.
    func refuseExisting(_ path: String) -> ExitStatus {
        if options.gzipMode {
            diagnostics.warning(path, Self.existingOutput)
            return .warning
        }
        return reportError(path, Self.existingOutput)
    }

    static let existingOutput = "already exists; not overwritten (use -f to overwrite)"

    /// `-o` naming a descriptor of this process (`/dev/stdout`, `/dev/fd/3`, `/proc/self/fd/N`,
    /// or a link to one): written through that descriptor itself, at its offset and with its
    /// `O_APPEND` as the shell set them, as a redirection to the path would; never checked for
    /// "already exists", never replaced. No index is written beside one. The descriptor is
    /// not closed.
    func toDescriptor(_ descriptor: Int32, input: ByteInputStream, inputPath: Pathname, inputInfo: FileInfo?,
                      outputPath: Pathname) throws -> ExitStatus {
        let inputName = displayName(inputPath)
        try refuseIndex(besideNonFile: outputPath)
        guard let target = FileInfo(descriptor: descriptor) else {
            throw Reported(status: reportError(outputPath.description, "cannot write: \(String(cString: strerror(errno)))"))
        }
        try rejectSameFile(inputInfo, target, inputName: inputName)
        let output = FileOutputStream(fileDescriptor: descriptor, closesDescriptor: false,
                                      displayName: outputPath.description)
        let outcome = try transform(input, inputPath: inputPath, inputInfo: inputInfo, into: output,
                                    outputName: outputPath.description, closesOutput: true)
        report(outcome, inputName: inputName, outputName: outputPath.description)
        return removeInputIfAsked(inputPath, inputInfo: inputInfo, status: outcome.status)
    }

    /// A temporary file beside `path`, to be renamed into place; a failure is reported
    /// naming `subject` (the path the user gave).
    func temporaryFile(besides path: Pathname, shownAs subject: Pathname) throws -> TemporaryFile {
        do {
            return try TemporaryFile(besides: path)
        } catch let error as PublishError {
            throw Reported(status: reportError(subject.description, error.message))
        }
    }

    /// Refuses to replace an existing `.gzi` (or a link by that name) without `-f`.
    func refuseToReplaceIndex(_ indexPath: Pathname, existing: FileInfo?) throws {
        if !options.force, existing != nil || FileInfo.isSymbolicLink(indexPath) {
            throw Reported(status: reportError(indexPath.description, Self.existingOutput))
        }
    }

    /// Renames a written `.gzi` into place (over an existing one only with `-f`).
    func publishIndex(_ temporary: TemporaryFile, as indexPath: Pathname) throws {
        do {
            try temporary.publish(as: indexPath, replacing: options.force)
        } catch let error as PublishError {
            throw Reported(status: reportError(indexPath.description, error.message))
        }
    }

    /// Writes the `.gzi` bytes into the index's temporary file and closes it.
    func writeIndex(_ bytes: [UInt8], into temporary: TemporaryFile, path: Pathname) throws {
        let stream = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: true,
                                      displayName: path.description)
        temporary.descriptorClosed()
        do {
            try stream.openOrThrow()
            try stream.writeAll(bytes)
            try stream.closeOrThrow()
        } catch {
            stream.close()
            throw Reported(status: reportError(path.description, describe(error)))
        }
    }

    /// Refuses to write over the input itself (also through a link): an error, input untouched.
    func rejectSameFile(_ inputInfo: FileInfo?, _ output: FileInfo?, inputName: String) throws {
        if let inputInfo, let output, output.isSameFile(as: inputInfo) {
            throw Reported(status: reportError(inputName, "input and output are the same file"))
        }
    }
}

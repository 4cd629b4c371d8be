import ByteStreams
import GzipStreams

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
    ///
    /// A file is written beside its final name and moved into place: the directory is opened
    /// once and every name in it (the checks, the temporary file, the move) is taken relative
    /// to that descriptor, so that another user who may write the directory cannot redirect
    /// what is done to the file (its owner, mode and times are set on its descriptor).
    func toFile(input: ByteInputStream, inputPath: Pathname, inputInfo: FileInfo?, outputPath: Pathname) throws -> ExitStatus {
        let inputName = displayName(inputPath)
        if inputPath == "-" { try refuseTerminal(readingStandardInput: true) }
        // `-o PATH` names the file itself; without -o, or with -o DIRECTORY, the name is made here.
        let explicitOutput = options.command.output?.outputPath != nil && outputDirectory == nil
        // -o's last component examined once: a link or FIFO another user planted is not
        // followed or written into; a descriptor of this process is written through as is.
        var examined = ExplicitOutput(path: outputPath)
        if explicitOutput {
            let target: ExplicitOutput.Target
            do throws(ExplicitOutput.Refusal) {
                target = try ExplicitOutput.classify(outputPath)
            } catch {
                throw Reported(status: reportError(outputPath.description, error.message))
            }
            switch target {
            case .processDescriptor(let descriptor):
                return try toDescriptor(descriptor, input: input, inputPath: inputPath, inputInfo: inputInfo,
                                        outputPath: outputPath)
            case .path(let found):
                examined = found
            }
        }
        if explicitOutput, !examined.untrustedLink,
           let device = try openDevice(examined.path, followsLinks: examined.followedLink, shownAs: outputPath,
                                       inputInfo: inputInfo, inputName: inputName) {
            return try toDevice(device.descriptor, target: device.info, input: input, inputPath: inputPath,
                                inputInfo: inputInfo, outputPath: outputPath)
        }
        // Beside the input (no -o): in the very directory the input was read from, by its
        // descriptor, so that a walked directory renamed or swapped for a link meanwhile cannot
        // send the output elsewhere.
        let openedDirectory: OutputDirectory
        if !explicitOutput, outputDirectory == nil, let currentInput,
           outputPath.directoryPart == currentInput.path.directoryPart {
            do {
                openedDirectory = try OutputDirectory(duplicating: currentInput.directory,
                                                      path: outputPath.directoryPart)
            } catch {
                throw Reported(status: reportError(outputPath.description, error.message))
            }
        } else {
            openedDirectory = try openDirectory(containing: outputPath)
        }
        let outputName = outputPath.lastComponent
        let existing = openedDirectory.info(of: outputName, followsLinks: true)
        try rejectSameFile(inputInfo, existing, inputName: inputName)
        // unpack -N names the output after the header, known only once it is read: the
        // publish step checks that name.
        let outputNamedByHeader = options.mode == .unpack && common.useName == true && !explicitOutput
        // A dangling symbolic link exists too: publishing would refuse to replace it, so it
        // is found here, before the input is read.
        let outputIsLink = openedDirectory.info(of: outputName, followsLinks: false)?.isSymbolicLink == true
        // Replaced with -f, or when gzip mode's question was answered yes.
        var replaces = common.force
        if !common.force, !outputNamedByHeader, existing != nil || outputIsLink {
            try confirmOverwrite(outputPath.description)
            replaces = true
        }
        // -f cannot replace a directory: said now, before the input is read and before an
        // existing index beside it is replaced.
        if existing?.isDirectory == true, !outputNamedByHeader {
            throw Reported(status: reportError(outputPath.description, "cannot write: \(Errno.text(Errno.isADirectory))"))
        }
        // pack --index: OUTPUT.gzi (--bgzf) or OUTPUT.gzidx, written and published with the
        // output, beside it.
        let indexPath = options.command.pack.flatMap { $0.writeIndex ? outputPath.appending($0.indexSuffix) : nil }
        if let indexPath {
            try rejectSameFile(inputInfo, openedDirectory.info(of: indexPath.lastComponent, followsLinks: true),
                               inputName: inputName)
            try refuseToReplaceIndex(indexPath, in: openedDirectory)
        }
        // pack --tar --index: OUTPUT.tarix too, under the same rules (TarPacking.swift).
        let tarIndexPath = packedTarIndexPath(of: outputPath)
        if let tarIndexPath {
            try rejectSameFile(inputInfo, openedDirectory.info(of: tarIndexPath.lastComponent, followsLinks: true),
                               inputName: inputName)
            try refuseToReplaceIndex(tarIndexPath, in: openedDirectory)
        }
        // -o naming a trusted symbolic link writes the file the link points to, and the link
        // stays (a link to a descriptor, as /dev/stdout is, was taken above).
        let publishPath = examined.publishPath(for: outputPath)
        let publishDirectory = publishPath == outputPath ? openedDirectory : try openDirectory(containing: publishPath,
                                                                                         shownAs: outputPath)
        let temporary = try temporaryFile(in: publishDirectory, shownAs: outputPath)
        defer { temporary.discard() }
        let indexTemporary = try indexPath.map { try temporaryFile(in: openedDirectory, shownAs: $0) }
        defer { indexTemporary?.discard() }
        let tarIndexTemporary = try tarIndexPath.map { try temporaryFile(in: openedDirectory, shownAs: $0) }
        defer { tarIndexTemporary?.discard() }
        // The temporary file keeps its descriptor: its attributes are set on it after the data.
        let output = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: false,
                                      displayName: outputPath.description)
        let outcome = try transform(input, inputPath: inputPath, inputInfo: inputInfo, into: output,
                                    outputName: outputPath.description, closesOutput: true)
        let publishName = publishPath.lastComponent
        var finalName = publishName
        if outputNamedByHeader, let stored = outcome.header?.fileName, let name = safeFileName(stored) {
            finalName = name
        }
        try rejectSameFile(inputInfo, publishDirectory.info(of: finalName, followsLinks: true), inputName: inputName)
        // Messages name the path the user gave (`-o link`), not the file behind the link.
        let shownPathname = finalName == publishName ? outputPath
            : Pathname(bytes: outputPath.directoryPart.bytes + finalName.bytes)!
        let shownPath = shownPathname.description
        // A FIFO's or a device's mode (often 0666) is no file's: those get the umask's default.
        var permissions = inputInfo.flatMap { $0.isRegularFile ? $0.permissions : nil } ?? defaultPermissions()
        var owner = inputInfo.map { ($0.owner, $0.group) }
        // -o through a symbolic link replaces the file it points to as a redirection would
        // write into it: that file keeps its owner and mode. Giving it the input's would hand
        // a file anywhere to the input's owner (root's `-f -o attacker/link` to a root-only
        // file would make it the attacker's).
        if publishPath != outputPath, let replaced = publishDirectory.info(of: finalName, followsLinks: false),
           replaced.isRegularFile {
            permissions = replaced.permissions
            owner = (replaced.owner, replaced.group)
        }
        // The member index is bound to the archive as published: read back through a second
        // descriptor, opened while the mode still lets this process read, fstat'ed once final.
        var archiveReader: Int32?
        if tarIndexTemporary != nil {
            do {
                archiveReader = try temporary.openForReading()
            } catch {
                throw Reported(status: reportError(outputPath.description, describe(error)))
            }
        }
        defer { if let archiveReader { try? SystemCalls.close(archiveReader, target: outputPath.description) } }
        do {
            try temporary.finish(mode: permissions, times: outputTimes(inputInfo: inputInfo, header: outcome.header),
                                 owner: owner, synchronous: common.synchronous)
        } catch {
            throw Reported(status: reportError(outputPath.description, describe(error)))
        }
        // The index is published first and taken back if the output cannot be, so that the
        // two appear together or not at all.
        if let indexTemporary, let indexPath {
            try writeIndex(outcome.indexBytes ?? BGZFIndex().encoded, into: indexTemporary, path: indexPath,
                           source: inputInfo)
            try publishIndex(indexTemporary, as: indexPath)
        }
        var tarIndexSize = 0
        if let tarIndexTemporary, let tarIndexPath, let archiveReader {
            do {
                tarIndexSize = try writePackedTarIndex(outcome.tarMembers ?? [], archive: archiveReader,
                                                       plainSize: outcome.bytesIn, into: tarIndexTemporary,
                                                       path: tarIndexPath)
                try publishIndex(tarIndexTemporary, as: tarIndexPath)
            } catch {
                if let indexTemporary, let indexPath { indexTemporary.unpublish(indexPath.lastComponent) }
                throw error
            }
        }
        do {
            try publish(temporary, as: finalName, replacing: replaces, shownPath: shownPath)
        } catch {
            if let indexTemporary, let indexPath { indexTemporary.unpublish(indexPath.lastComponent) }
            if let tarIndexTemporary, let tarIndexPath { tarIndexTemporary.unpublish(tarIndexPath.lastComponent) }
            throw error
        }
        // --synchronous, as gzip's: the new name is on the disk before the input is removed.
        if common.synchronous {
            do {
                try publishDirectory.synchronize()
            } catch {
                throw Reported(status: reportError(shownPath, describe(error)))
            }
        }
        report(outcome, inputName: inputName, outputName: shownPath)
        if let tarIndexPath {
            reportTarIndexWritten(shownPathname, members: outcome.tarMembers?.count ?? 0, path: tarIndexPath,
                                  size: tarIndexSize)
        }
        // The indexes that described the file replaced (not the one written now): beside the
        // name the user gave, as pack --index writes its own.
        let (staleDirectory, staleName) = publishPath == outputPath ? (publishDirectory, finalName)
            : (openedDirectory, outputPath.lastComponent)
        let besideInput = currentInput.map { $0.path.directoryPart == outputPath.directoryPart } ?? false
        let stale = removeStaleIndexes(of: staleName, in: staleDirectory, shownPath: shownPathname,
                                       kept: [indexPath, tarIndexPath].compactMap { $0?.lastComponent },
                                       inputName: options.mode == .unpack && besideInput ? currentInput?.name : nil)
        return removeInputIfAsked(inputPath, inputInfo: inputInfo, status: max(outcome.status, stale))
    }

    /// Moves the written output into place as `finalName`. An output found there only now
    /// (unpack -N's stored name, a file made meanwhile) is treated as if found first: replaced
    /// only after gzip mode's question was answered yes (``confirmOverwrite(_:)``).
    /// - Throws: ``Reported`` after saying why.
    private func publish(_ temporary: TemporaryFile, as finalName: Pathname, replacing: Bool, shownPath: String) throws {
        var failure: PublishError?
        do throws(PublishError) {
            try temporary.publish(as: finalName, replacing: replacing)
        } catch {
            failure = error
        }
        if failure?.alreadyExists == true {
            try confirmOverwrite(shownPath)
            failure = nil
            do throws(PublishError) {
                try temporary.publish(as: finalName, replacing: true)
            } catch {
                failure = error
            }
        }
        if let failure { throw Reported(status: reportError(shownPath, failure.message)) }
    }

    /// `--rm` (and gzip mode's default): removes the input once its output is in place; never
    /// standard input, a FIFO or a device. The name is removed relative to the directory the
    /// input was opened in, and only if it still names the file that was read
    /// (``OpenedInput/removeName()``): a file put in its place is left, with a warning. A
    /// failure is a warning.
    /// - Returns: `status`, or a warning when the input was not removed.
    private func removeInputIfAsked(_ inputPath: Pathname, inputInfo: FileInfo?, status: ExitStatus) -> ExitStatus {
        guard options.command.output?.removeInput == true, inputInfo?.isRegularFile == true, let input = currentInput else { return status }
        switch input.removeName() {
        case .removed:
            return status
        case .replaced:
            diagnostics.warning(displayName(inputPath), Self.replacedInput)
        case .failed(let code):
            diagnostics.warning(displayName(inputPath), "could not remove: \(Errno.text(code))")
        }
        return max(status, .warning)
    }

    static let replacedInput = "was replaced after it was read -- not removed"

    /// `-o PATH` opened once, when it names a device, a FIFO or a socket (links followed, as a
    /// shell redirection follows them); every decision is taken from the descriptor opened.
    /// - Returns: The descriptor (blocking, owned by the caller) and what `fstat(2)` says of it;
    ///   `nil` when `path` names nothing, a regular file or a directory, or a file that cannot be
    ///   opened for writing: those are written through a temporary file beside the name.
    /// - Throws: ``Reported`` when it names a device or FIFO that cannot be opened, the input
    ///   itself, or a FIFO while `--index` is asked.
    /// Blocks only on a FIFO that has no reader yet, until one comes, as a redirection does.
    /// The corresponding C function is `open(2)`, without `O_CREAT` or `O_TRUNC`: a regular
    /// file opened here is left as it was.
    private func openDevice(_ path: Pathname, followsLinks: Bool, shownAs shownPath: Pathname, inputInfo: FileInfo?,
                            inputName: String) throws -> (descriptor: Int32, info: FileInfo)? {
        let descriptor: Int32
        // Unless -o's last component was a trusted link (ExplicitOutput), a link found now was
        // put there since it was examined: not followed.
        let noFollow = followsLinks ? 0 : OpenFlag.noFollow
        do {
            // O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of holding the check.
            descriptor = try SystemCalls.open(path, flags: OpenFlag.writeOnly | OpenFlag.noControllingTerminal
                                                  | OpenFlag.nonBlocking | noFollow)
        } catch where isSystemError(error, Errno.noSuchDeviceOrAddress) {
            // Only a FIFO (or a socket) says so: refused now what would be refused once it is
            // open, rather than wait for a reader first; and one of another user's is not
            // waited on at all.
            try refuseIndex(besideNonFile: shownPath)
            let found = try? SystemCalls.info(of: path, in: SystemCalls.currentDirectory, followsLinks: followsLinks)
            if let found, !ExplicitOutput.mayWriteInto(found) {
                throw Reported(status: reportError(shownPath.description, ExplicitOutput.foreignSpecialFile(found)))
            }
            try rejectSameFile(inputInfo, found, inputName: inputName)
            do {
                descriptor = try SystemCalls.open(path, flags: OpenFlag.writeOnly | OpenFlag.noControllingTerminal | noFollow)
            } catch {
                throw Reported(status: reportError(shownPath.description, describe(error)))
            }
        } catch where isSystemError(error, Errno.tooManySymbolicLinks) && !followsLinks {
            throw Reported(status: reportError(shownPath.description, "was replaced by a symbolic link while it was examined"))
        } catch {
            // What cannot be opened is written beside its name, unless it is a device: the
            // error then is the open's.
            if let info = try? SystemCalls.info(of: path, in: SystemCalls.currentDirectory, followsLinks: followsLinks),
               !info.isRegularFile, !info.isDirectory, !info.isSymbolicLink {
                throw Reported(status: reportError(shownPath.description, describe(error)))
            }
            return nil
        }
        guard let info = FileInfo(descriptor: descriptor), !info.isRegularFile, !info.isDirectory else {
            try? SystemCalls.close(descriptor, target: shownPath.description)
            return nil
        }
        // Decided from what was opened: another user's FIFO or device may have been put there
        // since the name was examined.
        guard ExplicitOutput.mayWriteInto(info) else {
            try? SystemCalls.close(descriptor, target: shownPath.description)
            throw Reported(status: reportError(shownPath.description, ExplicitOutput.foreignSpecialFile(info)))
        }
        // O_NONBLOCK was for the open: the output is written blocking.
        try? SystemCalls.makeBlocking(descriptor, target: shownPath.description)
        return (descriptor, info)
    }

    /// Refuses `--index` beside an output that is no regular file (a device, a descriptor).
    private func refuseIndex(besideNonFile outputPath: Pathname) throws {
        guard let pack = options.command.pack, pack.writeIndex else { return }
        throw Reported(status: reportError(outputPath.description,
                                           "not a regular file: --index needs one to write its \(pack.indexSuffix) beside"))
    }

    /// `-o` naming a device or FIFO (`-o /dev/null`), opened by ``openDevice(_:inputInfo:inputName:)``:
    /// written into as a shell redirection would, never replaced by a regular file. No index is
    /// written beside one. Takes `descriptor` over and closes it.
    func toDevice(_ descriptor: Int32, target: FileInfo, input: ByteInputStream, inputPath: Pathname,
                  inputInfo: FileInfo?, outputPath: Pathname) throws -> ExitStatus {
        let output = FileOutputStream(fileDescriptor: descriptor, closesDescriptor: true,
                                      displayName: outputPath.description)
        do {
            try refuseIndex(besideNonFile: outputPath)
            try rejectSameFile(inputInfo, target, inputName: displayName(inputPath))
        } catch {
            output.close()
            throw error
        }
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
    /// mode gzip's warning (``refuseExistingLikeGzip(_:)``). - Returns: the status to end the file with.
    func refuseExisting(_ path: String) -> ExitStatus {
        if options.gzip != nil { return refuseExistingLikeGzip(path) }
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
        let target: FileInfo
        do {
            target = try SystemCalls.info(of: descriptor, target: outputPath.description)
        } catch {
            throw Reported(status: reportError(outputPath.description, "cannot write: \(errorText(error))"))
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
        try temporaryFile(in: openDirectory(containing: path, shownAs: subject), shownAs: subject)
    }

    /// A temporary file in `directory`, to be moved into place; a failure is reported naming
    /// `subject` (the path the user gave).
    func temporaryFile(in directory: OutputDirectory, shownAs subject: Pathname) throws -> TemporaryFile {
        do {
            return try TemporaryFile(in: directory)
        } catch {
            throw Reported(status: reportError(subject.description, error.message))
        }
    }

    /// The directory that holds `path`, opened once; a failure is reported naming `subject`.
    func openDirectory(containing path: Pathname, shownAs subject: Pathname? = nil) throws -> OutputDirectory {
        do {
            return try OutputDirectory(containing: path)
        } catch {
            throw Reported(status: reportError((subject ?? path).description, error.message))
        }
    }

    /// Refuses to write over the input itself (also through a link): an error, input untouched.
    func rejectSameFile(_ inputInfo: FileInfo?, _ output: FileInfo?, inputName: String) throws {
        if let inputInfo, let output, output.isSameFile(as: inputInfo) {
            throw Reported(status: reportError(inputName, "input and output are the same file"))
        }
    }
}

import ByteStreams
import GzipStreams
import TarArchives

/// `gzstream pack --tar FILE...`: the operands (files, and directories with everything under
/// them) as one tar archive (TarArchives' ``DirectoryArchiver`` into a ``TarWriter``), deflated
/// by the same engine as any pack (`-p`, levels, `--block-size`, `--bgzf`, `--index` apply as
/// they do to a file), into `FILE.tar.gz` beside the one operand (`.tar` and `-S`'s suffix), or
/// `-o ARCHIVE`, or standard output with `-c`. The output is written and published as any pack
/// output (OutputTargets.swift): beside its name, renamed into place, never replacing an
/// existing file without `-f`.
///
/// With `--index`, the member index goes beside the GZIDX (or the `.gzi` of `--bgzf`) as
/// `OUTPUT.tarix`, built from the members as they were written (no decode), and bound, owned
/// and published as `gzstream index` writes it (TarIndexing.swift):
/// ``writePackedTarIndex(_:archive:plainSize:into:path:)``.
///
/// The gzip header holds no name and no time, as `tar -czf`'s, so that the same tree with the
/// same `--mtime`, `--owner` and `--group` gives the same bytes. Problems with the files are
/// reported one line each and the walk goes on, as GNU tar's does; the archive is published
/// with what could be read. The exit status follows gzstream's (gzip's) convention, not tar's:
/// 2 (a warning) when a file changed while it was read, a socket was passed over or the
/// archive itself was met in the tree; 1 (an error) when a file could not be stored (it is
/// missing from the archive, or holds zeros for what could not be read) or the output failed.
extension Command {
    /// Runs pack --tar over every operand into one output.
    func runTarPack(_ pack: PackOptions) -> ExitStatus {
        let operands = common.files
        let first = operands[0]
        // An operand that names nothing fails the run before any output exists (GNU tar would
        // write an archive without it); one that vanishes later is reported by the walk.
        var missing = false
        for operand in operands {
            let parts = operand.lookupParts
            let path = parts.directory.appending(component: parts.name)
            if (try? SystemCalls.info(of: path, in: SystemCalls.currentDirectory, followsLinks: parts.trailingSlash)) == nil {
                diagnostics.error(operand.description, Errno.text(Errno.noSuchFile))
                missing = true
            }
        }
        if missing { return .error }
        do {
            if pack.output.toStandardOutput {
                return try toStandardOutput(input: MemoryInputStream(bytes: []), inputPath: first, inputInfo: nil)
            }
            let outputPath: Pathname
            if let path = pack.output.outputPath, outputDirectory == nil {
                outputPath = path
            } else {
                let name = try tarArchiveName(of: first)
                outputPath = outputDirectory.map { $0.appending(component: name.lastComponent) } ?? name
            }
            return try toFile(input: MemoryInputStream(bytes: []), inputPath: first, inputInfo: nil, outputPath: outputPath)
        } catch let reported as Reported {
            return reported.status
        } catch {
            return reportError(displayName(first), describe(error))
        }
    }

    /// `DIR.tar.gz` for `DIR` (trailing `/` dropped), beside it; `-S SUF` makes `DIR.tarSUF`.
    /// - Throws: ``Reported`` for an operand that names no archive (`/`, `.`, `..`).
    private func tarArchiveName(of operand: Pathname) throws -> Pathname {
        var trimmed = operand.bytes[...]
        while trimmed.last == UInt8(ascii: "/") { trimmed = trimmed.dropLast() }
        let path = Pathname(bytes: trimmed)!
        let name = path.lastComponent
        guard name != ".", name != "..", !name.isEmpty else {
            throw Reported(status: reportError(operand.description, "names no archive: give -o ARCHIVE or -c"))
        }
        return path.appending(".tar").appending(common.packSuffix)
    }

    /// Writes every operand into `packer` as one tar archive and ends it (the packer is left
    /// open for its trailer). `output` is where the packer's bytes go: a regular file there (the
    /// temporary output, or standard output redirected to a file) is not stored if the walk
    /// meets it, and is named `archiveName` in its directory in the warning when given (the
    /// temporary output's final name).
    /// - Returns: The worst of the walk's problems as an exit status, and the members written
    ///   with their offsets when `keepsMembers` (for a member index beside the output).
    /// - Throws: The output's error.
    func writeTar(_ tar: TarPackOptions, into packer: ByteOutputStream, output: ByteOutputStream,
                  archiveName: Pathname?, keepsMembers: Bool) throws -> (status: ExitStatus, members: [TarEntry]?) {
        var excluded: [(device: UInt64, inode: UInt64)] = []
        if let file = output as? FileOutputStream, let info = FileInfo(descriptor: file.fileDescriptor), info.isRegularFile {
            excluded.append((info.device, info.inode))
        }
        let writer = TarWriter(output: packer, keepsWrittenEntries: keepsMembers)
        let archiver = DirectoryArchiver(writer: writer, options: tar.archiver, excluding: excluded,
                                         excludedName: archiveName) { problem in
            let text = problem.error.map { "\(problem.message): \(errorText($0))" } ?? problem.message
            switch problem.severity {
            case .notice, .warning: self.diagnostics.warning(problem.path.description, text)
            case .error: self.diagnostics.error(problem.path.description, text)
            }
        }
        for operand in common.files {
            try archiver.archive(operand)
        }
        try writer.finish()
        let status: ExitStatus = switch archiver.worstSeverity {
        case nil, .notice?: .success
        case .warning?: .warning
        case .error?: .error
        }
        return (status, keepsMembers ? writer.writtenEntries : nil)
    }

    /// pack --tar --index: the member index beside `outputPath` (`OUTPUT.tarix`), `nil` for
    /// any other pack.
    func packedTarIndexPath(of outputPath: Pathname) -> Pathname? {
        guard let pack = options.command.pack, pack.tar != nil, pack.writeIndex else { return nil }
        return outputPath.appending(Self.tarIndexSuffix)
    }

    /// Writes the member index of the archive just packed into `temporary` (published by the
    /// caller as `path`, with the archive): `members` as the writer wrote them, bound to the
    /// archive file as published, which `archive` (a read-only descriptor on it, opened by
    /// ``TemporaryFile/openForReading()``, its attributes final) gives: its size, modification
    /// time, owner and mode (`fstat(2)`) and last bytes (`pread(2)`); `plainSize` is the tar
    /// stream's size.
    /// - Returns: The index's size in bytes.
    /// - Throws: ``Reported`` (said) when the archive cannot be read back or the index written.
    func writePackedTarIndex(_ members: [TarEntry], archive: Int32, plainSize: Int64, into temporary: TemporaryFile,
                             path: Pathname) throws -> Int {
        let info: FileInfo
        let tail: ArchiveTail
        do {
            info = try SystemCalls.info(of: archive, target: temporary.path.description)
            tail = try Self.compressedTail(of: archive, size: info.size, path: temporary.path.description)
        } catch {
            throw Reported(status: reportError(path.description, describe(error)))
        }
        let binding = Self.tarIndexBinding(of: info, compressedSize: info.size, tail: tail, plainSize: plainSize)
        return try writeTarIndex(members, binding: binding, into: temporary, path: path, archive: info)
    }
}

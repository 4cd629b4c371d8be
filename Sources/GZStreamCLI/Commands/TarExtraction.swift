import ByteStreams
import GzipStreams
import TarArchives

/// `unpack ARCHIVE.tar.gz MEMBER...` (those members, or every member under a directory named),
/// `unpack -c ARCHIVE.tar.gz MEMBER` (one member's content to standard output) and
/// `unpack --extract ARCHIVE.tar.gz` (the whole tree), into `-C DIR` or the current directory.
///
/// Every member goes through the one ``TarExtractor``, which holds the safety rules. The
/// archive is read in one pass from its start (``TarReader`` over the gzip decoder); with
/// member names, after a line saying that `gzstream index` would let them be read directly.
/// The pass goes on to the end of the gzip data, as GNU tar's does: a later member of the same
/// name replaces the earlier (an archive appended to holds the newer version last), and the
/// gzip trailers, which are the only check of the data, are at the end.
///
/// `-v` writes each member's name as stored (quoted as `list --members` shows it) once it is
/// extracted, one a line on standard output, as `tar -xv` does; with `-c` on standard error
/// before the member's content, as `tar -xvO`. `--same-owner` (as root) gives members the
/// owner and group IDs stored.
///
/// Errors: `-C DIR` that cannot be opened as a directory, and `--same-owner` when not root, are
/// one line before anything is read or written. A member refused is said (`gzstream: ARCHIVE:
/// MEMBER (tar member at byte N): …`) and the others still extracted, exit 1; a name found nowhere is said at the end, exit 1; a
/// damaged archive or gzip data stops the run, exit 1. Skipped devices and FIFOs are warnings
/// (exit 2 unless something failed). Directories get their modes and times at the end, also
/// after an error.
extension Command {
    /// A member as the extraction loop takes it: the entry, and a way to open its content.
    typealias TarMemberSource = () throws -> (entry: TarEntry, content: () throws -> ByteInputStream)?

    /// Runs a tar extraction of `archive`.
    func extractTar(_ tar: TarExtractionOptions, archive: Pathname) -> ExitStatus {
        let name = displayName(archive)
        if tar.preservesOwner && !tar.toStandardOutput && SystemCalls.effectiveUserID != 0 {
            // GNU tar tries, and fails on every member with exit 2 after writing them all;
            // here it is known before anything is written that the owners cannot be given.
            return reportError("--same-owner", "only root can give files other owners "
                + "(this is user ID \(SystemCalls.effectiveUserID)); nothing extracted")
        }
        do {
            let input = try openOperand(archive)
            currentInput = input
            defer {
                currentInput = nil
                input.close()
            }
            if input.info.isDirectory { throw refuseInput(archive, "is a directory") }
            // -C is opened before anything is read or said: a wrong one is one line.
            let extraction = tar.toStandardOutput ? nil : try openExtraction(tar, archiveName: name)
            var selection = tar.members.isEmpty ? nil : MemberSelection(tar.members)
            // Read (and bound to the archive) through the input's own descriptor, before the
            // stream takes it.
            let memberIndex = selection == nil ? nil : trustedMemberIndex()
            let file = try input.stream()
            defer { file.close() }
            if var chosen = selection, let memberIndex, let opened = try indexedArchive(file, memberIndex: memberIndex) {
                // Through the indexes: only the spans that hold the members are decoded, each
                // member's headers checked against its record first.
                defer { opened.plain.close() }
                let archiveIndex = opened.archive
                let wanted = archiveIndex.index.entries.filter { chosen.wants($0) }
                if tar.toStandardOutput {
                    // Every member of that name, in archive order, as `tar -xO` writes them.
                    let named = wanted.filter { MemberSelection.normalised($0.path) == chosen.names[0] }
                    guard !named.isEmpty else {
                        return reportError(name, "\(chosen.namesNotFound.first ?? ""): not found in the archive")
                    }
                    var status = ExitStatus.success
                    for entry in named {
                        let checked = try archiveIndex.verifiedEntry(entry)
                        status = max(status, try writeMember(checked, content: archiveIndex.content(of: checked), archiveName: name))
                        if status == .error { break }
                    }
                    return status
                }
                var remaining = wanted[...]
                let next: TarMemberSource = {
                    guard let record = remaining.popFirst() else { return nil }
                    // Extracted as its headers say (mode, owner, time), not as the record says.
                    let entry = try archiveIndex.verifiedEntry(record)
                    return (entry, { try archiveIndex.content(of: entry) })
                }
                var all: MemberSelection? = nil
                let status = try extractMembers(next: next, selecting: &all, into: extraction!, archiveName: name)
                return max(status, reportMissing(chosen, archiveName: name))
            }
            // Sequentially; --extract reads every span, through the GZIDX on threads when there is one.
            var indexed: (any GzipDecodingStream)?
            if selection == nil { indexed = try indexedDecodingStream(file, progress: nil)?.decoder }
            let decoder: any GzipDecodingStream = try indexed ?? decodingStream(file, name: name)
            defer { decoder.close() }
            let reader = TarReader(decoder)
            // The first header is read before anything is said: data that is not a tar is
            // then one line, without a hint to index it.
            var pending = try reader.next()
            let next: TarMemberSource = {
                let taken = pending
                pending = nil
                guard let member = try taken ?? reader.next() else { return nil }
                return (member.entry, { member.content })
            }
            if tar.toStandardOutput, let chosen = selection {
                // Every member of that name, as `tar -xO` writes them; then on to the end, where
                // the gzip trailers are checked.
                var status: ExitStatus?
                while let member = try next() {
                    guard status != .error, MemberSelection.normalised(member.entry.path) == chosen.names[0] else { continue }
                    status = max(status ?? .success, try writeMember(member.entry, content: member.content(), archiveName: name))
                }
                guard let status else {
                    return reportError(name, "\(chosen.namesNotFound.first ?? ""): not found in the archive")
                }
                return max(status, try readToGzipEnd(decoder, archiveName: name))
            }
            if selection != nil {
                // A member index without a gzip index to reach its members (ratarmount's holding
                // none, or a .tarix whose GZIDX is gone or was refused) is said as such.
                let missing = memberIndex == nil ? "a member index" : "a gzip index to reach its members"
                diagnostics.warning(name, "read from the start, without \(missing) "
                    + "(run '\(indexCommand(for: archive))' to read members directly)")
            }
            var status = try extractMembers(next: next, selecting: &selection, into: extraction!, archiveName: name)
            status = max(status, try readToGzipEnd(decoder, archiveName: name))
            return max(status, selection.map { reportMissing($0, archiveName: name) } ?? .success)
        } catch let reported as Reported {
            return reported.status
        } catch {
            diagnostics.error(name, describe(error))
            return .error
        }
    }

    /// The archive through its indexes, with the member index (`FILE.tarix`, or ratarmount's
    /// `FILE.index.sqlite`) already read: through the gzip index ratarmount's holds, else when
    /// the GZIDX (`FILE.gzidx`, or gztool's) or a BGZF file's `.gzi` is beside it and trusted;
    /// `nil` otherwise (a refused one is said in one line by the readers). `-v` says which
    /// indexes were read.
    private func indexedArchive(_ file: FileInputStream, memberIndex members: FoundMemberIndex) throws
        -> (archive: IndexedTarArchive, plain: any PlainRangeReading)? {
        if startsWithBGZFMember(file) {
            // A BGZF archive is read through its .gzi with gzstream's own member index, whose
            // paths are the headers' byte for byte.
            guard members.pathKey == nil else { return nil }
            return try indexedBGZFArchive(file, memberIndex: members)
        }
        let found: (index: GzipIndex, path: Pathname)
        if let held = members.gzipIndex {
            found = (held, members.path)
        } else {
            guard let location = indexLocation,
                  let read = try readIndex(at: location, compressedSize: fileSize(file), bgzfData: false, checksBGZFIndex: false)
            else { return nil }
            found = read
        }
        let plain = try IndexedGzipInputStream(wrapping: file, index: found.index, threads: 1, inflater: inflaterChoice,
                                               chunkSize: common.chunkSize, trailingGarbage: .ignore, closesInnerStream: false)
        do {
            try plain.openOrThrow()
        } catch let error as IndexedGzipError {
            plain.close()
            noteIndexNotUsed(found.path, withRemedy(error))
            return nil
        }
        // ratarmount's index was named under -v when it was read (trustedRatarmountIndex).
        if members.pathKey == nil {
            noteMembersRead(file, members: members, indexPath: found.path, points: counted(found.index.points.count, "access point"))
        }
        return (IndexedTarArchive(plain: plain, index: members.members, pathKey: members.pathKey), plain)
    }

    /// `-v`'s line for members read through the indexes, as a whole read through an index says
    /// it (IndexedUnpack.swift): the member index with its members, the GZIDX or `.gzi` with `points`.
    func noteMembersRead(_ file: FileInputStream, members: FoundMemberIndex, indexPath: Pathname, points: String) {
        guard common.verbose else { return }
        diagnostics.note(file.displayName, "members read through "
            + "\(escapingControlCharacters(members.path.description)) "
            + "(\(counted(members.members.entries.count, "member"))) and \(escapingControlCharacters(indexPath.description)) (\(points))")
    }

    /// `count` and `noun`, plural unless one: `1 member`, `3 members`.
    func counted(_ count: Int, _ noun: String, _ plural: String? = nil) -> String {
        "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
    }

    /// Says each MEMBER name that nothing matched. - Returns: `.error` if there was one.
    private func reportMissing(_ selection: MemberSelection, archiveName name: String) -> ExitStatus {
        var status = ExitStatus.success
        for missing in selection.namesNotFound {
            diagnostics.error(name, "\(missing): not found in the archive")
            status = .error
        }
        return status
    }

    /// The extractor of one run, and what its handlers record: whether a device, FIFO or
    /// unknown type was skipped (a warning), and the slot of the temporary file being written,
    /// which a SIGINT or SIGTERM removes (InterruptCleanup.swift).
    struct TarExtraction {
        final class Record {
            var skipped = false
            /// Whether the member being extracted was skipped (a device, FIFO or unknown type):
            /// `-v` names only the members written.
            var memberSkipped = false
            var pendingSlot: Int?
        }
        let extractor: TarExtractor
        let record: Record
    }

    /// Opens the destination, `-C DIR` or the current directory (a symbolic link to a directory
    /// is followed when it is the user's own or root's: the user named it), and makes the
    /// extractor that writes under it.
    /// - Throws: ``Reported`` after one line, `gzstream: -C DIR: No such file or directory`.
    private func openExtraction(_ tar: TarExtractionOptions, archiveName name: String) throws -> TarExtraction {
        let destinationPath = tar.directory ?? "."
        // Named as given, as tar names its -C operand: `-C nosuch: No such file or directory`.
        let subject = tar.directory.map { "-C \($0.description)" } ?? destinationPath.description
        // The last component of -C examined once, as -o's is: in a directory another user can
        // write (/tmp), that user may have put a link there to a directory of the victim's,
        // which GNU tar's chdir follows; it is followed only when it belongs to this user or
        // to root (the kernel's protected_symlinks rule, which is off on some systems), and
        // through the target read from the link itself.
        var openedPath = destinationPath
        if tar.directory != nil {
            // `DIR/` names the same last component: a link there would be followed by the lookup.
            var bytes = destinationPath.bytes
            while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
            let examined: ExplicitOutput
            do {
                examined = try ExplicitOutput(examining: Pathname(bytes: bytes) ?? destinationPath)
            } catch {
                throw Reported(status: reportError(subject, error.message))
            }
            if examined.untrustedLink {
                throw Reported(status: reportError(subject, "is a symbolic link of another user: not followed "
                    + "(give the directory it points to, if you trust it)"))
            }
            if examined.followedLink { openedPath = examined.path }
        }
        let destination: Int32
        do {
            // Everything under it is opened from this descriptor by the extractor, one
            // component at a time with O_NOFOLLOW.
            destination = try SystemCalls.open(openedPath, in: SystemCalls.currentDirectory,
                                               flags: SystemCalls.lookupDirectoryFlags,
                                               target: destinationPath.description)
        } catch {
            let reason = (error as? ByteStreamError).flatMap { $0.errno != nil ? $0.reason : nil } ?? describe(error)
            throw Reported(status: reportError(subject, reason))
        }
        let options = TarExtractor.Options(overwritesExisting: common.force, preservesOwner: tar.preservesOwner,
                                           allowsLinksOutsideDestination: tar.allowsLinksOutside)
        let record = TarExtraction.Record()
        let extractor = TarExtractor(destination: destination, closesDestination: true, options: options) { warning in
            if case .skippedSpecialFile = warning.reason { record.skipped = true; record.memberSkipped = true }
            if case .skippedUnknownType = warning.reason { record.skipped = true; record.memberSkipped = true }
            self.diagnostics.warning(name, warning.description)
        }
        // The member being written sits under a temporary name until it is renamed into
        // place: a SIGINT or SIGTERM meanwhile removes it.
        extractor.creatingTemporaryFile = { create in try withInterruptsHeld(create) }
        extractor.temporaryFileCreated = { directory, temporaryName, device, inode in
            record.pendingSlot = registerPendingTemporary(directory: directory, name: temporaryName, device: device, inode: inode)
        }
        extractor.temporaryFileEnded = {
            if let slot = record.pendingSlot { releasePendingTemporary(slot) }
            record.pendingSlot = nil
        }
        return TarExtraction(extractor: extractor, record: record)
    }

    /// Extracts the members `next` gives that `selection` wants (every one when `nil`) with
    /// `extraction`'s extractor; under `-v`, each one's name on standard output once it is
    /// extracted.
    /// - Throws: ``Reported`` when standard output fails (a closed pipe ends the run, as it
    ///   ends tar's); errors of `next` (damaged data). Directories get their modes and times
    ///   either way.
    private func extractMembers(next: TarMemberSource, selecting selection: inout MemberSelection?, into extraction: TarExtraction,
                                archiveName name: String) throws -> ExitStatus {
        let extractor = extraction.extractor
        var status = ExitStatus.success
        do {
            while let member = try next() {
                if selection != nil, !selection!.wants(member.entry) { continue }
                extraction.record.memberSkipped = false
                do {
                    try extractor.extract(member.entry, content: try member.content())
                } catch let refused as ExtractionError {
                    diagnostics.error(name, refused.description)
                    status = .error
                    continue
                }
                if common.verbose, !extraction.record.memberSkipped { try sayExtracted(member.entry) }
            }
        } catch {
            try? extractor.finish()
            throw error
        }
        do {
            try extractor.finish()
        } catch {
            diagnostics.error(name, describe(error))
            status = .error
        }
        return max(status, extraction.record.skipped ? .warning : .success)
    }

    /// `-v`'s line for a member extracted: its name as stored, quoted as `list --members` and
    /// `tar -xv` show it, on standard output.
    /// - Throws: ``Reported`` after saying a write error (a closed pipe is said at the end).
    private func sayExtracted(_ entry: TarEntry) throws {
        do {
            try environment.standardOutput.writeAll(TarMemberFormat.quotedName(entry.path) + [UInt8(ascii: "\n")])
        } catch {
            if isSystemError(error, Errno.brokenPipe) {
                closedPipe = "standard output"
            } else {
                diagnostics.error("standard output", describe(error))
            }
            throw Reported(status: .error)
        }
    }

    /// Reads `decoder` to its end after the tar archive's end: the gzip trailers (CRC-32 and
    /// ISIZE, RFC 1952 §2.3.1) are checked only there, so a pass that stopped at the tar's
    /// end-of-archive blocks would take a corrupt file without a word (GNU tar reads on to the
    /// end too). Returns the status of the trailing-garbage warning, as `unpack` gives it.
    /// - Throws: The decoder's error (a CRC-32 mismatch, damaged data).
    func readToGzipEnd(_ decoder: any GzipDecodingStream, archiveName name: String) throws -> ExitStatus {
        var discard = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = discard.withUnsafeMutableBufferPointer { decoder.read($0.baseAddress!, maxLength: $0.count) }
            if count < 0 { throw decoder.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read", target: name) }
            if count == 0 { break }
        }
        if let garbage = decoder.trailingGarbage { return try warnTrailingGarbage(name, garbage) }
        return .success
    }

    /// `unpack -c ARCHIVE MEMBER`: `entry`'s content, a file's, to standard output (a sparse
    /// member with its holes as zero bytes).
    private func writeMember(_ entry: TarEntry, content: @autoclosure () throws -> ByteInputStream,
                             archiveName name: String) throws -> ExitStatus {
        guard entry.kind.holdsFileContent else {
            return reportError(name, "\(entry.pathString): not a regular file; -c writes a file's content")
        }
        // As tar -xvO: the name on standard error, standard output holding the content.
        if common.verbose { diagnostics.write(String(decoding: TarMemberFormat.quotedName(entry.path), as: UTF8.self) + "\n") }
        do {
            try copyContent(of: entry, from: try content(), to: environment.standardOutput)
        } catch where isSystemError(error, Errno.brokenPipe) {
            closedPipe = "standard output"
            return .error
        }
        return .success
    }

    /// Copies a member's content to `output`: its runs, each after the zero bytes of the hole
    /// before it, for a sparse member.
    private func copyContent(of entry: TarEntry, from content: ByteInputStream, to output: ByteOutputStream) throws {
        guard let map = entry.sparseMap else {
            try content.copy(to: output, chunkSize: Self.unpackWriteSize)
            return
        }
        let zeros = [UInt8](repeating: 0, count: 64 * 1024)
        func writeZeros(_ count: Int) throws {
            var left = count
            while left > 0 {
                let step = min(left, zeros.count)
                try zeros.withUnsafeBytes { try output.writeAll(UnsafeRawBufferPointer(rebasing: $0[..<step])) }
                left -= step
            }
        }
        var position = 0
        for run in map {
            try writeZeros(max(0, run.offset - position))
            var left = run.length
            while left > 0 {
                let chunk = try content.readChunk(maxLength: min(left, zeros.count))
                guard !chunk.isEmpty else {
                    throw TarError(.truncated, offset: entry.headerOffset)
                }
                try output.writeAll(chunk)
                left -= chunk.count
            }
            position = run.offset + run.length
        }
        try writeZeros(max(0, entry.realSize - position))
    }
}

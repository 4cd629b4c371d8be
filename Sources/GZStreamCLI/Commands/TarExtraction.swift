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
/// Errors: a member refused is said (`gzstream: ARCHIVE: MEMBER (tar member at byte N): …`)
/// and the others still extracted, exit 1; a name found nowhere is said at the end, exit 1; a
/// damaged archive or gzip data stops the run, exit 1. Skipped devices and FIFOs are warnings
/// (exit 2 unless something failed). Directories get their modes and times at the end, also
/// after an error.
extension Command {
    /// A member as the extraction loop takes it: the entry, and a way to open its content.
    typealias TarMemberSource = () throws -> (entry: TarEntry, content: () throws -> ByteInputStream)?

    /// Runs a tar extraction of `archive`.
    func extractTar(_ tar: TarExtractionOptions, archive: Pathname) -> ExitStatus {
        let name = displayName(archive)
        do {
            let input = try openOperand(archive)
            currentInput = input
            defer {
                currentInput = nil
                input.close()
            }
            if input.info.isDirectory { throw refuseInput(archive, "is a directory") }
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
                let status = try extractMembers(next: next, selecting: &all, into: tar.directory, linksOutside: tar.allowsLinksOutside, archiveName: name)
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
            var status = try extractMembers(next: next, selecting: &selection, into: tar.directory, linksOutside: tar.allowsLinksOutside, archiveName: name)
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
        diagnostics.write("gzstream: \(escapingControlCharacters(file.displayName)): members read through "
            + "\(escapingControlCharacters(members.path.description)) "
            + "(\(counted(members.members.entries.count, "member"))) and \(escapingControlCharacters(indexPath.description)) (\(points))\n")
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

    /// Extracts the members `next` gives that `selection` wants (every one when `nil`), into
    /// `directory` (a symbolic link to a directory is followed: the user named it).
    private func extractMembers(next: TarMemberSource, selecting selection: inout MemberSelection?, into directory: Pathname?,
                                linksOutside: Bool, archiveName name: String) throws -> ExitStatus {
        let destinationPath = directory ?? "."
        let destination: Int32
        do {
            // The user's own -C operand is followed to the end, a symbolic link as its last
            // component too, as GNU tar's chdir follows it; everything under it is opened from
            // this descriptor by the extractor, one component at a time with O_NOFOLLOW.
            destination = try SystemCalls.open(destinationPath, in: SystemCalls.currentDirectory,
                                               flags: SystemCalls.lookupDirectoryFlags,
                                               target: destinationPath.description)
        } catch {
            throw Reported(status: reportError(destinationPath.description, describe(error)))
        }
        final class Warnings { var skipped = false }
        let warnings = Warnings()
        let extractor = TarExtractor(destination: destination, closesDestination: true,
                                     options: TarExtractor.Options(overwritesExisting: common.force,
                                                                   allowsLinksOutsideDestination: linksOutside)) { warning in
            if case .skippedSpecialFile = warning.reason { warnings.skipped = true }
            if case .skippedUnknownType = warning.reason { warnings.skipped = true }
            self.diagnostics.warning(name, warning.description)
        }
        // The member being written sits under a temporary name until it is renamed into
        // place: a SIGINT or SIGTERM meanwhile removes it (InterruptCleanup.swift).
        final class PendingSlot { var slot: Int? }
        let pending = PendingSlot()
        extractor.temporaryFileCreated = { directory, temporaryName, device, inode in
            pending.slot = registerPendingTemporary(directory: directory, name: temporaryName, device: device, inode: inode)
        }
        extractor.temporaryFileEnded = {
            if let slot = pending.slot { releasePendingTemporary(slot) }
            pending.slot = nil
        }
        var status = ExitStatus.success
        do {
            while let member = try next() {
                if selection != nil, !selection!.wants(member.entry) { continue }
                do {
                    try extractor.extract(member.entry, content: try member.content())
                } catch let refused as ExtractionError {
                    diagnostics.error(name, refused.description)
                    status = .error
                }
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
        return max(status, warnings.skipped ? .warning : .success)
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

/// The MEMBER names of `unpack ARCHIVE MEMBER...`: a member is wanted when its name is one of
/// them, or lies under one (as tar takes a directory's name for all it holds). Names are
/// compared without leading `/` and `./` and without trailing `/`, as stored names vary.
struct MemberSelection {
    /// The names, normalised.
    let names: [[UInt8]]
    /// Which names matched a member.
    private var found: [Bool]

    init(_ names: [Pathname]) {
        self.names = names.map { Self.normalised($0.bytes) }
        found = Array(repeating: false, count: names.count)
    }

    /// Whether `entry` is wanted; records which names it matched.
    mutating func wants(_ entry: TarEntry) -> Bool {
        let path = Self.normalised(entry.path)
        var wanted = false
        for (index, name) in names.enumerated() {
            if path == name {
                wanted = true
                found[index] = true
            } else if name.isEmpty || (path.count > name.count && path.starts(with: name) && path[name.count] == UInt8(ascii: "/")) {
                wanted = true
                found[index] = true
            }
        }
        return wanted
    }

    /// The names no member matched, for messages.
    var namesNotFound: [String] {
        zip(names, found).filter { !$0.1 }.map { Pathname(bytes: $0.0)?.description ?? "" }
    }

    /// `path` without leading `/` and `./`, and without trailing `/`.
    static func normalised(_ path: [UInt8]) -> [UInt8] {
        var bytes = path[...]
        while true {
            if bytes.first == UInt8(ascii: "/") {
                bytes = bytes.dropFirst()
            } else if bytes.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) {
                bytes = bytes.dropFirst(2)
            } else {
                break
            }
        }
        while bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        return Array(bytes)
    }
}

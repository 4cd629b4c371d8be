import ByteStreams
import GzipStreams
import TarArchives

// The member index of a .tar.gz (TarIndex, `F.tar.gz.tarix`): written by `gzstream index` from
// the decode that builds the GZIDX when the plain data is a tar, under the GZIDX's rules
// (refused over an existing one without -f, the archive's owner and a mode no wider than its,
// a temporary file renamed into place); and found beside an archive under the GZIDX's trust
// rules (IndexTrust.swift), bound to the archive by its size, time and last bytes.

/// A member index being collected while `gzstream index` decodes one file.
final class TarIndexWriting {
    let path: Pathname
    /// In the index's directory, which it holds open.
    let temporary: TemporaryFile
    var builder = TarIndexBuilder()

    init(path: Pathname, temporary: TemporaryFile) {
        self.path = path
        self.temporary = temporary
    }

    deinit {
        // Not a tar, or a failed decode: no temporary file is left.
        temporary.discard()
    }
}

extension Command {
    /// The suffix of the member index beside an archive: `F.tar.gz.tarix`.
    static let tarIndexSuffix: Pathname = ".tarix"

    /// Readies the member index of `operand` before anything is decoded (its directory, the
    /// refusal to replace one without -f, its temporary file); `nil` with `--no-tar` or `-o`
    /// (the member index goes beside its archive only). Closes `input` when it throws.
    /// - Throws: ``Reported`` (said).
    func beginTarIndex(_ operand: Pathname, inputInfo: FileInfo, index: IndexOptions,
                       closingOnFailure input: ByteInputStream) throws -> TarIndexWriting? {
        guard index.indexesTarMembers, index.outputPath == nil else { return nil }
        let path = operand.appending(Self.tarIndexSuffix)
        let (_, temporary) = try openIndexTarget(path, of: operand, inputInfo: inputInfo, closingOnFailure: input)
        return TarIndexWriting(path: path, temporary: temporary)
    }

    /// Once the GZIDX (or a BGZF file's `.gzi`) is in place: writes the member index when the
    /// plain data was a whole tar archive, bound to the archive (`compressedSize` bytes, `tail`
    /// from ``compressedTail(of:size:path:)``, `plainSize` bytes of tar), with the GZIDX's owner
    /// and mode rules; says so under `-v`. Not a tar: nothing. A damaged tar: a warning, no
    /// member index (the GZIDX stands).
    /// - Returns: `.success`, or `.warning` for a damaged tar.
    /// - Throws: ``Reported`` (said) when it cannot be written.
    func finishTarIndex(_ writing: TarIndexWriting, operand: Pathname, compressedSize: Int64, plainSize: Int64,
                        inputInfo: FileInfo, tail: ArchiveTail) throws -> ExitStatus {
        switch writing.builder.finish() {
        case .notTar:
            return .success
        case .damaged(let error):
            diagnostics.warning(operand.description, "no member index: \(error)")
            return .warning
        case .archive(let entries):
            let binding = Self.tarIndexBinding(of: inputInfo, compressedSize: compressedSize, tail: tail,
                                               plainSize: plainSize)
            let size = try writeTarIndex(entries, binding: binding, into: writing.temporary, path: writing.path,
                                         archive: inputInfo)
            try publishIndex(writing.temporary, as: writing.path)
            reportTarIndexWritten(operand, members: entries.count, path: writing.path, size: size)
            return .success
        }
    }

    /// What binds a member index to the archive file `info` describes (`fstat(2)` of it): its
    /// size in bytes (`compressedSize`, the bytes read or written), modification time, data
    /// (`tail`, ``compressedTail(of:size:path:)``) and plain size (`-1`: not known, when checking).
    static func tarIndexBinding(of info: FileInfo, compressedSize: Int64, tail: ArchiveTail,
                                plainSize: Int64) -> TarIndex.Binding {
        TarIndex.Binding(compressedSize: compressedSize,
                         modificationSeconds: Int64(info.modificationTime.seconds),
                         modificationNanoseconds: Int32(info.modificationTime.nanoseconds),
                         compressedTail: tail.bytes, tailIsSampled: tail.isSampled, plainSize: plainSize)
    }

    /// Encodes the member index of `entries` bound by `binding` into `temporary` (not yet
    /// published as `path`), with the owner of `archive` (the archive file's `fstat(2)`) and
    /// a mode no wider than its (``finishIndex(_:source:)``), as `gzstream index` and
    /// `pack --tar --index` both write it.
    /// - Returns: The index's size in bytes.
    /// - Throws: ``Reported`` (said) when it cannot be encoded or written.
    func writeTarIndex(_ entries: [TarEntry], binding: TarIndex.Binding, into temporary: TemporaryFile,
                       path: Pathname, archive: FileInfo) throws -> Int {
        let bytes: [UInt8]
        do {
            bytes = try TarIndex(entries: entries, binding: binding).encoded()
        } catch {
            throw Reported(status: reportError(path.description, describe(error)))
        }
        try writeIndex(bytes, into: temporary, path: path, source: archive)
        return bytes.count
    }

    /// `-v`'s line for a member index written: `gzstream: ARCHIVE: N tar members -> INDEX (SIZE bytes)`.
    func reportTarIndexWritten(_ archive: Pathname, members: Int, path: Pathname, size: Int) {
        guard common.verbose else { return }
        diagnostics.note(archive.description, "\(members) tar members -> "
            + "\(escapingControlCharacters(path.description)) (\(size) bytes)")
    }

    /// The 8 bytes of an archive's data that bind an index to it, and whether they are samples.
    struct ArchiveTail {
        var bytes: [UInt8]
        var isSampled: Bool
    }

    /// What binds an index to the first `size` bytes of the file `descriptor`: their last (up
    /// to) 8 bytes (the last gzip member's CRC-32 and ISIZE); when those are zeros (an empty
    /// last member, as BGZF's end-of-file block, the same in every BGZF file),
    /// ``TarIndex/Binding/sampledTail(head:end:)`` of their first and last 64 KiB.
    /// The corresponding C function is `pread(2)`.
    static func compressedTail(of descriptor: Int32, size: Int64, path: String) throws -> ArchiveTail {
        let last = try readFully(descriptor, count: Int(min(size, 8)), at: size - min(size, 8), path: path)
        guard TarIndex.Binding.needsSampledTail(lastBytes: last) else { return ArchiveTail(bytes: last, isSampled: false) }
        let sample = Int(min(size, Int64(TarIndex.Binding.sampleLength)))
        let head = try readFully(descriptor, count: sample, at: 0, path: path)
        let end = try readFully(descriptor, count: sample, at: size - Int64(sample), path: path)
        return ArchiveTail(bytes: TarIndex.Binding.sampledTail(head: head, end: end), isSampled: true)
    }

    /// Up to `count` bytes of `descriptor` from byte `offset` (fewer at its end).
    /// The corresponding C function is `pread(2)`.
    private static func readFully(_ descriptor: Int32, count: Int, at offset: Int64, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let read = try bytes.withUnsafeMutableBytes {
                try SystemCalls.read(descriptor, $0.baseAddress! + done, count - done, at: offset + Int64(done), target: path)
            }
            if read == 0 { break }
            done += read
        }
        return Array(bytes[0..<done])
    }

    /// The member index `path` (`input`'s name and `suffix`) beside `input`, opened once: found
    /// under ``openTrustedIndex(_:name:explicit:)``'s rules (owner, not writable by others, not
    /// older than the archive, never through a symbolic link, a directory no other user can
    /// write), no more readable than the archive, at most `limit` bytes; `nil` when there is
    /// none. The caller reads it from this descriptor and closes it.
    /// - Throws: ``IndexRefusal`` saying why it is not used (the mode's reason ends with
    ///   `remedy`); the open's errors.
    func openMemberSideFile(_ path: Pathname, suffix: Pathname, of input: OpenedInput, limit: Int64,
                            remedy: String = "") throws -> OpenedInput? {
        // --index takes no member index: a refusal says what to do instead.
        guard let opened = try openTrustedIndex(path, name: input.name.appending(suffix), explicit: false, namable: false)
        else { return nil }
        guard opened.info.permissions & 0o777 & ~(input.info.permissions & 0o777) == 0 else {
            opened.close()
            throw IndexRefusal(reason: "more readable than \(input.path.description) (mode "
                + "\(String(opened.info.permissions & 0o7777, radix: 8)))\(remedy)")
        }
        guard Int64(opened.info.size) <= limit else {
            opened.close()
            throw IndexRefusal(reason: "\(opened.info.size) bytes, more than a member index of this archive can need")
        }
        return opened
    }

    /// The bytes of the member index ``openMemberSideFile(_:suffix:of:limit:remedy:)`` opens,
    /// read once from its descriptor, at most `limit` bytes; `nil` when there is none.
    /// - Throws: As ``openMemberSideFile(_:suffix:of:limit:remedy:)``; the read's errors.
    func readMemberSideFile(_ path: Pathname, suffix: Pathname, of input: OpenedInput, limit: Int64,
                            remedy: String = "") throws -> [UInt8]? {
        guard let opened = try openMemberSideFile(path, suffix: suffix, of: input, limit: limit, remedy: remedy)
        else { return nil }
        defer { opened.close() }
        let stream = try opened.stream()
        defer { stream.close() }
        return try stream.readToEnd(limit: Int(limit))
    }

    /// The member index beside the current input (`F.tar.gz.tarix`), when there is one it may
    /// trust: found under ``openTrustedIndex(_:name:explicit:)``'s rules (owner, not writable
    /// by others, not older than the archive, never through a symbolic link, a directory no
    /// other user can write), no more readable than the archive, read once with a size bound,
    /// and bound to this archive (its size, modification time and data,
    /// ``compressedTail(of:size:path:)``). One that fails
    /// is not used: one warning line (``noteIndexNotUsed(_:_:)``) and `nil`.
    /// `plainSize` is the archive's plain size when its GZIDX says it, else the index's own is
    /// bounded by what the archive's size can hold.
    func trustedTarIndex(plainSize: Int64?) -> TarIndex? {
        guard let input = currentInput, input.info.isRegularFile else { return nil }
        let path = input.path.appending(Self.tarIndexSuffix)
        do {
            let size = input.info.size
            // The plain size a gzip file of this size can hold: deflate's ratio is at most 1032:1.
            let plainBound = plainSize ?? Int64(size) * 1032 + 1024
            let limit = Int64(TarIndex.maximumFileSize(plainSize: plainBound))
            guard let bytes = try readMemberSideFile(path, suffix: Self.tarIndexSuffix, of: input, limit: limit,
                                                     remedy: "; rebuild it with: gzstream index -f \(input.path.description)")
            else { return nil }
            let tail = try Self.compressedTail(of: input.fileDescriptor, size: Int64(size), path: input.path.description)
            let binding = Self.tarIndexBinding(of: input.info, compressedSize: Int64(size), tail: tail,
                                               plainSize: plainSize ?? -1)
            do {
                let index = try TarIndex(decoding: bytes, expecting: binding)
                guard index.binding.plainSize <= plainBound else {
                    throw IndexRefusal(reason: "a plain size of \(index.binding.plainSize) bytes, more than the archive can hold")
                }
                return index
            } catch let error as TarIndexError {
                throw IndexRefusal(reason: error.description)
            }
        } catch let refusal as IndexRefusal {
            noteIndexNotUsed(path, refusal.reason)
            return nil
        } catch {
            noteIndexNotUsed(path, describe(error))
            return nil
        }
    }
}

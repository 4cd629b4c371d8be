#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ByteStreams

/// Regular files: written under a temporary name beside their final one, checked, then renamed.
extension TarExtractor {
    /// Writes a regular, contiguous or sparse member: a new temporary file in its directory
    /// (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600), its content (sparse runs at their offsets,
    /// holes left as holes), owner, mode and time set through the descriptor, then renamed onto
    /// its name. The temporary file is removed on every error.
    func writeFile(_ entry: TarEntry, at path: ExtractionPath, content: ByteInputStream) throws {
        guard !path.components.isEmpty else { throw ExtractionError(.emptyName, entry) }
        let runs = try dataRuns(of: entry)
        let parent = try parentDirectory(of: path, entry)
        let name = Pathname(bytes: path.name)!
        let shown = displayText(entry.path)

        var opened: (descriptor: Int32, name: Pathname)?
        var created: FileInfo?
        // Runs after the rename or the removal below: until then a signal handler may need it.
        defer { if created != nil { temporaryFileEnded?() } }
        var failure: (any Error)?
        try creatingTemporaryFile {
            let file = try SystemCalls.createUniqueFile(in: parent, mode: 0o600, target: shown)
            opened = file
            do {
                created = try SystemCalls.info(of: file.descriptor, target: shown)
                if let created, let announce = temporaryFileCreated {
                    announce(parent, file.name, created.device, created.inode)
                }
            } catch {
                failure = error
            }
        }
        guard let (descriptor, temporaryName) = opened else {
            preconditionFailure("creatingTemporaryFile must run the creation it is given")
        }
        var isOpen = true
        do {
            if let failure { throw failure }
            try writeContent(of: entry, runs: runs, from: content, to: descriptor, shown: shown)
            try applyAttributes(to: descriptor, of: entry, shown: shown)
            isOpen = false
            try SystemCalls.close(descriptor, target: shown)
            try publish(temporaryName, as: name, in: parent, at: path, entry, shown: shown)
        } catch {
            if isOpen { try? SystemCalls.close(descriptor, target: shown) }
            // Removed only while the temporary name still is the file created: another user
            // who can write the directory may have put something else there.
            if let created, let found = try? SystemCalls.info(of: temporaryName, in: parent), found.isSameFile(as: created) {
                _ = try? SystemCalls.unlink(temporaryName, in: parent)
            }
            throw error
        }
        made[path.key] = Made(kind: .file, file: created!)
    }

    /// Renames the finished temporary file onto `name`. A name this extraction made (a
    /// duplicate member) is replaced; any other is first tried without replacing
    /// (`renameat2(2)` with `RENAME_NOREPLACE` where the system has it, so that the usual case
    /// costs no lookup), and what is found there replaced only when ``requireReplaceable(_:_:)``
    /// allows it.
    private func publish(_ temporaryName: Pathname, as name: Pathname, in parent: Int32, at path: ExtractionPath,
                         _ entry: TarEntry, shown: String) throws {
        if made[path.key] == nil {
            switch try SystemCalls.renameWithoutReplacing(temporaryName, in: parent, to: name, in: parent, target: shown) {
            case .some(true): return
            case .some(false): try requireReplaceable(path, entry)
            case .none:
                if try SystemCalls.info(of: name, in: parent, target: shown) != nil { try requireReplaceable(path, entry) }
            }
        }
        try SystemCalls.rename(temporaryName, in: parent, to: name, in: parent, target: shown)
    }

    /// Where the member's stored bytes go in the file: its sparse map, checked, or one run of
    /// ``TarEntry/size`` bytes at 0.
    /// - Throws: ``ExtractionError/Reason/badSparseMap(detail:)``.
    func dataRuns(of entry: TarEntry) throws -> [TarEntry.SparseRegion] {
        guard let map = entry.sparseMap else {
            guard entry.kind != .sparse else { throw ExtractionError(.badSparseMap(detail: "a sparse member without a map"), entry) }
            return [TarEntry.SparseRegion(offset: 0, length: entry.size)]
        }
        func refuse(_ detail: String) -> ExtractionError { ExtractionError(.badSparseMap(detail: detail), entry) }
        guard entry.realSize >= 0 else { throw refuse("a negative file size") }
        var end = 0
        var stored = 0
        for (index, run) in map.enumerated() {
            guard run.offset >= 0, run.length >= 0 else { throw refuse("run \(index + 1) has a negative offset or length") }
            guard run.offset >= end else { throw refuse("run \(index + 1) starts at \(run.offset), before the end of the one before (\(end))") }
            let (runEnd, overflow) = run.offset.addingReportingOverflow(run.length)
            guard !overflow, runEnd <= entry.realSize else {
                throw refuse("run \(index + 1) ends past the file's size of \(entry.realSize) bytes")
            }
            end = runEnd
            stored += run.length
        }
        guard stored == entry.size else {
            throw refuse("the runs hold \(stored) bytes, the member \(entry.size)")
        }
        return map
    }

    /// Copies the member's content into the open file: each run at its offset, then the size
    /// set to ``TarEntry/realSize`` (a trailing hole), and checks the content ends there.
    /// - Throws: ``ExtractionError/Reason/contentLength(expected:actual:)`` when the stream
    ///   ends early or holds more; ``ContentFailure`` for the stream's own error.
    private func writeContent(of entry: TarEntry, runs: [TarEntry.SparseRegion], from content: ByteInputStream,
                              to descriptor: Int32, shown: String) throws {
        if content.streamStatus == .notOpen {
            do { try content.openOrThrow() } catch { throw ContentFailure(error: error) }
        }
        var copied = 0
        for run in runs where run.length > 0 {
            if entry.sparseMap != nil {
                _ = try SystemCalls.seek(descriptor, to: Int64(run.offset), whence: SEEK_SET, target: shown)
            }
            var remaining = run.length
            while remaining > 0 {
                let count = try readContent(content, maxLength: min(remaining, Self.bufferSize))
                guard count > 0 else { throw ExtractionError(.contentLength(expected: entry.size, actual: copied), entry) }
                var written = 0
                while written < count {
                    written += try SystemCalls.write(descriptor, buffer + written, count - written, target: shown)
                }
                remaining -= count
                copied += count
            }
        }
        if try readContent(content, maxLength: 1) > 0 {
            throw ExtractionError(.contentLength(expected: entry.size, actual: copied + 1), entry)
        }
        if entry.sparseMap != nil {
            try SystemCalls.truncate(descriptor, toSize: Int64(entry.realSize), target: shown)
        }
    }

    /// One read of the content stream into the buffer: the bytes read, 0 at its end.
    private func readContent(_ content: ByteInputStream, maxLength: Int) throws -> Int {
        let count = content.read(buffer, maxLength: maxLength)
        if count < 0 {
            throw ContentFailure(error: content.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read"))
        }
        return count
    }
}

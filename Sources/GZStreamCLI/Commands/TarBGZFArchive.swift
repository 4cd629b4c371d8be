import ByteStreams
import GzipStreams
import TarArchives

// Members of a BGZF .tar.gz read through bgzip's `.gzi` and the member index (`FILE.tarix`):
// the `.gzi` found and trusted as any index beside a file, checked against the archive before
// a member is read, and an IndexedBGZFInputStream as the plain-range reader of an
// IndexedTarArchive (TarExtraction.swift uses it as it uses the GZIDX's).

extension Command {
    /// A BGZF archive through its `.gzi` (bgzip's, `FILE.gzi` beside it under the trust rules of
    /// every found index, or `--index PATH`) and the member index already read; `nil` when there
    /// is none (a refused one is said in one line). Each member's start is checked against the
    /// members before it as it is read (``IndexedBGZFInputStream/seek(toPlainOffset:)``).
    func indexedBGZFArchive(_ file: FileInputStream, memberIndex members: FoundMemberIndex) throws
        -> (archive: IndexedTarArchive, plain: any PlainRangeReading)? {
        guard let input = currentInput else { return nil }
        let explicit = options.command.indexPath != nil
        let indexPath = options.command.indexPath ?? input.path.appending(".gzi")
        let index: BGZFIndex
        do {
            guard let opened = try openTrustedIndex(indexPath, name: explicit ? nil : input.name.appending(".gzi"),
                                                    explicit: explicit) else { return nil }
            defer { opened.close() }
            let stream = try opened.stream()
            defer { stream.close() }
            index = try readBGZFIndex(stream, name: indexPath, found: !explicit, compressedSize: Int64(input.info.size))
        } catch let refusal as IndexRefusal {
            if explicit { throw Reported(status: reportError(indexPath.description, refusal.reason)) }
            noteIndexNotUsed(indexPath, refusal.reason)
            return nil
        }
        do {
            try checkFits(index, file: file)
        } catch let error as IndexedGzipError {
            let output = explicit ? " -o \(indexPath.description)" : ""
            let reason = "\(error); rebuild it with: gzstream index -f\(output) \(input.path.description)"
            if explicit { throw Reported(status: reportError(indexPath.description, reason)) }
            noteIndexNotUsed(indexPath, reason)
            return nil
        }
        let plain = try IndexedBGZFInputStream(wrapping: file, index: index, threads: inflateThreads, chunkSize: common.chunkSize,
                                               trailingGarbage: .ignore, inflater: inflaterChoice, closesInnerStream: false)
        try plain.openOrThrow()
        noteMembersRead(file, members: members, indexPath: indexPath, points: counted(index.entries.count, "entry", "entries"))
        return (IndexedTarArchive(plain: plain, index: members.members), plain)
    }

    /// Checks, before any member is read, that the `.gzi` is `file`'s: a BGZF member starts where
    /// its last entry says, at the plain offset the members before it add up to
    /// (``BGZFIndex/checkStart(membersBefore:descriptor:path:)``, a few reads per member, no
    /// inflating). Another file's index is then refused as a GZIDX that does not fit is.
    /// - Throws: ``IndexedGzipError`` `.pointMismatch`; ``ByteStreamError`` when reading fails.
    private func checkFits(_ index: BGZFIndex, file: FileInputStream) throws {
        guard let last = index.entries.last else { return }
        var signature = [UInt8](repeating: 0, count: BGZFInputStream.signatureLength)
        let count = try signature.withUnsafeMutableBytes {
            try SystemCalls.read(file.fileDescriptor, $0.baseAddress!, $0.count, at: Int64(last.compressedOffset),
                                 target: file.displayName)
        }
        guard count == signature.count, BGZFInputStream.startsWithBGZFMember(signature) else {
            throw IndexedGzipError.pointMismatch(point: index.entries.count)
        }
        try index.checkStart(membersBefore: index.entries.count, descriptor: file.fileDescriptor, path: file.displayName)
    }
}

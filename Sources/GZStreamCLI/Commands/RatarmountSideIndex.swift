import ByteStreams
import GzipStreams
import RatarmountIndexes
import TarArchives

// ratarmount's index beside an archive (`F.tar.gz.index.sqlite`), used by list --members and
// unpack of members when gzstream's own member index (`F.tar.gz.tarix`) is not there: found
// under the same trust rules as gzstream's side files (IndexTrust.swift), no more readable
// than the archive, read once through the descriptor those rules were checked on, with a size
// bound, straight into the buffer SQLite deserializes (RatarmountIndex): SQLite never opens a
// path, so the file cannot be swapped after the checks, and no journal beside it is read.

/// A member index found beside the current input: gzstream's `.tarix`, or ratarmount's
/// `.index.sqlite` with the gzip index it holds.
struct FoundMemberIndex {
    /// The members.
    let members: TarIndex
    /// ratarmount's gzip seek index; `nil` for gzstream's (whose GZIDX is found on its own) or
    /// a ratarmount index that holds none.
    let gzipIndex: GzipIndex?
    /// How the records' paths compare with the headers' (``RatarmountIndex/pathKey``); `nil`:
    /// byte for byte.
    let pathKey: (@Sendable ([UInt8]) -> [UInt8])?
    /// The index file's name, for messages.
    let path: Pathname
}

extension Command {
    /// The suffix of ratarmount's index beside an archive: `F.tar.gz.index.sqlite`.
    static let ratarmountIndexSuffix = Pathname(stringLiteral: RatarmountIndex.fileSuffix)

    /// ratarmount's index beside the current input, when there is one it may trust: found as
    /// ``openTrustedIndex(_:name:explicit:)`` finds side files (owner, not writable by others,
    /// not older than the archive, never through a symbolic link, a directory no other user can
    /// write), no more readable than the archive, at most
    /// ``RatarmountIndex/maximumFileSize(compressedSize:)`` bytes read from that descriptor, and
    /// valid (``RatarmountIndex``: every value checked, the archive size it records equal to
    /// this archive's). One that fails is not used: one warning line and `nil`. Under `-v`, a
    /// line says it is used.
    func trustedRatarmountIndex() -> FoundMemberIndex? {
        guard let input = currentInput, input.info.isRegularFile else { return nil }
        let path = input.path.appending(Self.ratarmountIndexSuffix)
        do {
            let size = Int64(input.info.size)
            guard let opened = try openMemberSideFile(path, suffix: Self.ratarmountIndexSuffix, of: input,
                                                      limit: Int64(RatarmountIndex.maximumFileSize(compressedSize: size)))
            else { return nil }
            defer { opened.close() }
            // The archive's first 10 bytes: a gzip member's header, or a plain tar's.
            var start = [UInt8](repeating: 0, count: 10)
            let count = try start.withUnsafeMutableBytes {
                try SystemCalls.read(input.fileDescriptor, $0.baseAddress!, $0.count, at: 0, target: input.path.description)
            }
            start.removeSubrange(min(count, start.count)...)
            let index: RatarmountIndex
            do {
                // Read from the checked descriptor straight into SQLite's memory: held once.
                index = try RatarmountIndex(databaseDescriptor: opened.fileDescriptor, byteCount: Int(opened.info.size),
                                            path: path.description, compressedSize: size, compressed: start.isGzip)
            } catch let error as RatarmountIndexError {
                throw IndexRefusal(reason: "ratarmount's index: \(error.description)")
            }
            if common.verbose {
                let gzip = index.gzipIndex.map { ", its gzip index (table \(index.gzipIndexTable ?? "")) with \($0.points.count) access points" }
                diagnostics.note(input.path.description, "members from "
                    + "\(escapingControlCharacters(path.description)) (ratarmount's index, \(index.members.entries.count) members"
                    + "\(gzip ?? ", no gzip index"))")
            }
            return FoundMemberIndex(members: index.members, gzipIndex: index.gzipIndex, pathKey: RatarmountIndex.pathKey, path: path)
        } catch let refusal as IndexRefusal {
            noteIndexNotUsed(path, refusal.reason)
            return nil
        } catch {
            noteIndexNotUsed(path, describe(error))
            return nil
        }
    }

    /// The member index beside the current input: gzstream's (``trustedTarIndex(plainSize:)``)
    /// when its file is there, else ratarmount's (``trustedRatarmountIndex()``).
    func trustedMemberIndex() -> FoundMemberIndex? {
        guard let input = currentInput, input.info.isRegularFile else { return nil }
        let own = input.path.appending(Self.tarIndexSuffix)
        if let index = trustedTarIndex(plainSize: nil) {
            return FoundMemberIndex(members: index, gzipIndex: nil, pathKey: nil, path: own)
        }
        // gzstream's own is there but was refused (said): ratarmount's is not looked for.
        if sideFileExists(input.name.appending(Self.tarIndexSuffix)) { return nil }
        return trustedRatarmountIndex()
    }

    /// Whether `name` exists in the current input's directory (as a name: a symbolic link counts).
    /// The corresponding C function is `fstatat(2)` with `AT_SYMLINK_NOFOLLOW`.
    /// The command that writes the current input's indexes, for a hint: with `-f` when one of
    /// them is there already (stale or refused, said before), which `gzstream index` would not
    /// replace without it.
    func indexCommand(for operand: Pathname) -> String {
        guard let input = currentInput else { return "gzstream index \(operand.description)" }
        let present = sideFileExists(input.name.appending(Self.gzidxSuffix))
            || sideFileExists(input.name.appending(Self.tarIndexSuffix))
        return "gzstream index \(present ? "-f " : "")\(operand.description)"
    }

    func sideFileExists(_ name: Pathname) -> Bool {
        guard let input = currentInput else { return false }
        do {
            return try SystemCalls.status(of: name, in: input.directory) != nil
        } catch {
            return true
        }
    }
}

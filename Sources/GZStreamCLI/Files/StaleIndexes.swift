import ByteStreams
import GzipStreams

// An index beside a gzip file describes its bytes: once a command replaces the file (pack -f,
// gzip mode, unpack to a name that is itself a gzip file's), an index left there would
// describe data that is gone. Readers catch most such indexes (another size, a point that
// does not decode), but not every one, and each says so on every read. So the writer takes
// them away, by name relative to the output's directory, as it removes its input.

extension Command {
    /// The indexes that may describe a gzip file named `name`, as each tool names them:
    /// gzstream's and indexed_gzip's GZIDX (`name.gzidx`), bgzip's `.gzi` (`name.gzi`),
    /// gzstream's member index of a tar (`name.tarix`) and gztool's
    /// (``gztoolIndexName(of:)``: `x.gz` → `x.gzi`).
    static func indexNames(of name: Pathname) -> [Pathname] {
        var names = [name.appending(gzidxSuffix), name.appending(".gzi"), name.appending(tarIndexSuffix)]
        let gztool = gztoolIndexName(of: name)
        if !names.contains(gztool) { names.append(gztool) }
        return names
    }

    /// Whether the output `outputPath` that this run wrote is a gzip file whose indexes a
    /// reader would look for: every output of pack (whatever its name), and unpack's when its
    /// own name has a gzip suffix (`x.gz.gz` → `x.gz`). Another unpacked name is plain data,
    /// whose `name.gzi` may be gztool's index of the input (`data.tar.gz` → `data.tar.gzi`).
    func writesIndexedKind(_ outputPath: Pathname) -> Bool {
        options.mode == .pack || knownSuffix(of: outputPath, custom: common.suffix) != nil
    }

    /// After the output `name` was published in `directory`: removes the indexes beside it
    /// (``indexNames(of:)``) that described the file it replaced, all but `kept` (the indexes
    /// this run wrote: the GZIDX or `.gzi`, and the member index of `pack --tar --index`) and any of the input's own (`inputName`, when the input is in the
    /// same directory). A name is removed only when it is a regular file (a symbolic link is
    /// not followed, nor removed) owned by the effective user or by root, and under gztool's
    /// name only with gztool's magic; anything else is left silently (no reader trusts it), and
    /// an index that could not be removed is said in one warning line that says what to do.
    /// - Parameters:
    ///   - directory: The output's directory, opened once; every name is taken relative to it.
    ///   - shownPath: The output as messages name it (the path the user gave, or the one made).
    /// - Returns: `.success`, or `.warning` when an index was left (GNU gzip's convention for
    ///   a file left behind).
    /// Does not block. The corresponding C functions are `fstatat(2)` and `unlinkat(2)`.
    func removeStaleIndexes(of name: Pathname, in directory: OutputDirectory, shownPath: Pathname,
                            kept: [Pathname], inputName: Pathname?) -> ExitStatus {
        guard writesIndexedKind(name) else { return .success }
        let inputIndexes = inputName.map { Self.indexNames(of: $0) } ?? []
        var status = ExitStatus.success
        for indexName in Self.indexNames(of: name) where !kept.contains(indexName) && !inputIndexes.contains(indexName) {
            let indexPath = Pathname(bytes: shownPath.directoryPart.bytes + indexName.bytes)!
            guard let problem = removeIndex(indexName, in: directory, shownAs: indexPath) else { continue }
            diagnostics.warning(indexPath.description, "stale index of \(shownPath) not removed (\(problem)); "
                + "remove it, or rebuild it with: gzstream index -f \(shownPath)")
            status = .warning
        }
        return status
    }

    /// Whether the regular file `name` in `directory` is in gztool's format by its magic
    /// (``GzipIndexFile/format(ofFile:path:)``; opened without following a link; `false` when
    /// it cannot be read).
    private static func startsWithGztoolMagic(_ name: Pathname, in directory: Int32, path: Pathname) -> Bool {
        guard let opened = try? OpenedInput(name: name, in: directory, ownsDirectory: false, path: path, followsLinks: false)
        else { return false }
        defer { opened.close() }
        return (try? GzipIndexFile.format(ofFile: opened.fileDescriptor, path: path.description)) == .gztool
    }

    /// Removes the index `name` in `directory` if it may be removed (see
    /// ``removeStaleIndexes(of:in:shownPath:kept:inputName:)``).
    /// - Returns: `nil` when it is gone (or was never there), else why it was left.
    private func removeIndex(_ name: Pathname, in directory: OutputDirectory, shownAs path: Pathname) -> String? {
        let found: FileInfo
        do {
            guard let info = try SystemCalls.info(of: name, in: directory.descriptor, target: path.description) else {
                return nil
            }
            found = info
        } catch where isSystemError(error, Errno.nameTooLong) {
            // The output's name leaves no room for an index's: none can be there.
            return nil
        } catch {
            return errorText(error)
        }
        // What no reader would use is left alone, without a word: a symbolic link (never
        // followed), anything but a regular file, another user's file (never trusted; another
        // user may have put it there, and it must not change this run's exit status), and,
        // under gztool's name, a file without gztool's magic (not an index; maybe the user's).
        guard !found.isSymbolicLink, found.isRegularFile else { return nil }
        let user = SystemCalls.effectiveUserID
        guard found.owner == user || found.owner == 0 else { return nil }
        if path.description.hasSuffix(".gzi") && !path.description.hasSuffix(".gz.gzi"),
           !Self.startsWithGztoolMagic(name, in: directory.descriptor, path: path) {
            return nil
        }
        // Between this look and the removal another user who may write the directory can swap
        // the name; no call removes a name only if it is a given inode (as with --rm).
        do {
            _ = try SystemCalls.unlink(name, in: directory.descriptor, target: path.description)
            return nil
        } catch {
            return "cannot remove: \(errorText(error))"
        }
    }
}

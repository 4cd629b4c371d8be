import ByteStreams

// Whether an index file may change what gzstream writes. An index is data from whoever owns
// it: its windows become output bytes, its offsets choose which bytes. It is read only when its
// owner is the user or root and no one else can write it, only when it is not older than the
// file it describes, and (found beside a file rather than named with --index) only in a
// directory no other user can write. A found index that fails is not used: one warning line
// (none with -q, none in gzip mode) and the file is decoded without it; a named one that fails
// is an error.

/// Why an index is not used: the reason a user reads after "not used: ".
struct IndexRefusal: Error {
    var reason: String
}

extension Command {
    /// Opens the index `name` beside the current input (in the directory the input was opened
    /// in, never following a symbolic link), or `--index PATH` as named (`explicit`), and checks
    /// it may be trusted: a regular file, owned by the user or root, writable by no one else,
    /// not older than the input; found beside the input, in a directory no other user can
    /// write. Returns `nil` when a found index does not exist.
    /// - Parameter namable: Whether `--index PATH` can take this kind of index (a GZIDX,
    ///   gztool's, a `.gzi`), so that a refusal may say to name it there; a member index
    ///   (`.tarix`, ratarmount's `.index.sqlite`) is only ever found beside its archive, and a
    ///   refusal says what to do instead.
    /// - Throws: ``IndexRefusal`` with the reason it is not used; the open's own error for a
    ///   named index that cannot be opened.
    /// The corresponding C functions are `openat(2)` with `O_NOFOLLOW` and `fstat(2)`.
    func openTrustedIndex(_ path: Pathname, name: Pathname?, explicit: Bool, namable: Bool = true) throws -> OpenedInput? {
        let opened: OpenedInput
        if explicit || name == nil {
            opened = try OpenedInput(path: path, followsLinks: true)
        } else if let name, let input = currentInput {
            do {
                opened = try OpenedInput(name: name, in: input.directory, ownsDirectory: false, path: path, followsLinks: false)
            } catch where isSystemError(error, Errno.noSuchFile) || isSystemError(error, Errno.nameTooLong) {
                // No index; or the file's name is so long that no index name fits beside it.
                return nil
            } catch where isSystemError(error, Errno.tooManySymbolicLinks) {
                throw IndexRefusal(reason: "a symbolic link (an index beside a file is never followed; "
                    + (namable ? "name it with --index)" : "put the index itself there)"))
            } catch let error as ByteStreamError {
                throw IndexRefusal(reason: describe(error))
            }
            if let problem = Self.hostileDirectory(input.directory) {
                opened.close()
                throw IndexRefusal(reason: problem + (namable ? "; name it with --index to use it"
                    : "; move the archive and its index to a directory only you can write to use it"))
            }
        } else {
            return nil
        }
        do {
            try checkTrust(of: opened.info, explicit: explicit)
        } catch {
            opened.close()
            throw error
        }
        return opened
    }

    /// Refuses an index that is not a regular file, is owned by another user (not root), is
    /// writable by group or others, or is older than the current input (stale, as make decides).
    func checkTrust(of info: FileInfo, explicit: Bool) throws(IndexRefusal) {
        guard info.isRegularFile else { throw IndexRefusal(reason: "not a regular file") }
        let user = SystemCalls.effectiveUserID
        guard info.owner == user || info.owner == 0 else {
            throw IndexRefusal(reason: "owned by uid \(info.owner), another user (an index is trusted only from you or root)")
        }
        guard info.mode & 0o022 == 0 else {
            throw IndexRefusal(reason: "writable by others (mode \(String(info.mode & 0o7777, radix: 8))); "
                + "an index is trusted only when no one else can change it")
        }
        if let input = currentInput, Self.isOlder(info.modificationTime, than: input.info.modificationTime) {
            throw IndexRefusal(reason: "older than \(input.path.description), so made before the file last changed; "
                + "rebuild it with: gzstream index -f \(input.path.description)")
        }
    }

    /// Why the directory `descriptor` is hostile ground for a side file found in it (another
    /// user can write it, so can put or swap a file there), or `nil` when it is not.
    static func hostileDirectory(_ descriptor: Int32) -> String? {
        guard let info = FileInfo(descriptor: descriptor) else { return "its directory cannot be examined" }
        let user = SystemCalls.effectiveUserID
        if info.owner != user && info.owner != 0 {
            return "its directory belongs to uid \(info.owner), another user"
        }
        if info.mode & 0o022 != 0 {
            return "its directory is writable by other users (mode \(String(info.mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    /// Whether `time` is strictly before `other`, to the nanosecond.
    static func isOlder(_ time: FileInfo.Timestamp, than other: FileInfo.Timestamp) -> Bool {
        (time.seconds, time.nanoseconds) < (other.seconds, other.nanoseconds)
    }

    /// Says that the found index at `path` is not used, and why: one line, none with `-q`
    /// and none in gzip mode (GNU gzip reads no index, so a file beside the input changes
    /// nothing it prints).
    func noteIndexNotUsed(_ path: Pathname, _ reason: String) {
        // `index --plan` fails on such an index, in one line of its own.
        guard options.gzip == nil, options.command.index?.plan == nil else { return }
        diagnostics.warning(path.description, "not used: \(reason)")
    }
}

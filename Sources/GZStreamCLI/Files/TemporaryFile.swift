import ByteStreams

// Outputs are written in a directory that another user may own and write (root compressing
// someone's files). Such a user can rename, remove or replace any name in it at any moment, so
// a name is looked up once: the directory is opened once, the temporary file is created
// relative to that descriptor and never followed if it is a link, its owner, mode and times
// are set on its own descriptor, and it is published and removed relative to the directory,
// removed only while the name still refers to the file this process created.

/// A directory opened once, in which outputs are created, examined, published and removed
/// by name relative to its descriptor: renaming or replacing the directory's path afterwards
/// does not move what happens here.
///
/// Ownership: the descriptor belongs to this object and is closed when it is released.
/// Thread safety: immutable; the calls it makes are safe from any thread.
final class OutputDirectory {
    /// The directory as the user named it (`""` for the current directory), for messages.
    let path: Pathname
    /// The open directory (read only: only names are looked up in it).
    let descriptor: Int32

    /// Opens `directory`, following symbolic links in it as the path the user typed does.
    /// - Parameter directory: a directory path; empty for the current directory.
    /// - Throws: ``PublishError`` ("cannot create output: …") when it cannot be opened.
    /// Does not block. The corresponding C function is `openat(2)` with `O_DIRECTORY`.
    init(_ directory: Pathname) throws(PublishError) {
        path = directory
        do {
            // Lookup-only (O_PATH on Linux): names are created, examined, renamed and removed
            // in it, never listed, so search and write permission are all it needs, as by path.
            descriptor = try SystemCalls.open(directory.isEmpty ? "." : directory, in: SystemCalls.currentDirectory,
                                              flags: SystemCalls.lookupDirectoryFlags)
        } catch {
            throw PublishError(cannotCreateOutput: error)
        }
    }

    /// Opens the directory that holds `file` (the part of `file` up to its last `/`).
    convenience init(containing file: Pathname) throws(PublishError) {
        try self.init(file.directoryPart)
    }

    /// The directory an input was opened in (``OpenedInput/directory``), for an output written
    /// beside that input: the same directory the input was read from, even if its path was
    /// replaced meanwhile (a `-r` walk's subdirectory swapped for a link out of the tree).
    /// - Parameters:
    ///   - descriptor: The input's directory descriptor; duplicated, so it stays the input's.
    ///   - path: The directory as messages name it.
    /// - Throws: ``PublishError`` when the descriptor cannot be duplicated.
    /// The corresponding C function is `fcntl(2)` with `F_DUPFD_CLOEXEC`.
    init(duplicating descriptor: Int32, path: Pathname) throws(PublishError) {
        self.path = path
        do {
            self.descriptor = try SystemCalls.duplicate(descriptor, target: path.description)
        } catch {
            throw PublishError(cannotCreateOutput: error)
        }
    }

    deinit {
        try? SystemCalls.close(descriptor, target: path.description)
    }

    /// What `fstatat(2)` says of `name` in this directory, or `nil` when there is no such name
    /// (or it cannot be examined). A symbolic link is described itself unless `followsLinks`.
    func info(of name: Pathname, followsLinks: Bool) -> FileInfo? {
        try? SystemCalls.info(of: name, in: descriptor, followsLinks: followsLinks)
    }

    /// Flushes the directory's entries to the disk (`--synchronous`), so that a name published
    /// in it survives a crash: the directory is opened for reading through ``descriptor`` (a
    /// lookup-only descriptor cannot be flushed) and closed again.
    /// - Throws: ``ByteStreamError`` when it cannot be opened or flushed.
    /// Blocks until the device has the data. The corresponding C functions are `openat(2)` and
    /// `fsync(2)`.
    func synchronize() throws {
        let target = path.isEmpty ? "." : path.description
        let readable = try SystemCalls.open(".", in: descriptor, flags: OpenFlag.readOnly | OpenFlag.directory,
                                            target: target)
        defer { try? SystemCalls.close(readable, target: target) }
        try SystemCalls.synchronize(readable, target: target)
    }
}

/// An output written beside its final name and moved into place only when complete, so that
/// a failure or an interruption never leaves a partial file under the final name.
///
/// Lifecycle: ``init(in:)`` creates `.gzstream-XXXXXX` (mode 0600) in the directory; the
/// caller writes ``descriptor`` (through a stream that does not close it); ``finish(mode:times:owner:synchronous:)``
/// sets the attributes on the descriptor and closes it; ``publish(as:replacing:)`` moves it into
/// place. ``discard()`` (also on release) closes the descriptor if still open and removes the
/// file unless it was published, and only while its name still refers to it.
/// While the file exists the interrupt handler (``installInterruptCleanup()``) knows it and
/// removes it.
///
/// Ownership: the descriptor and the directory belong to this object.
/// Thread safety: none; one thread uses a temporary file.
final class TemporaryFile {
    /// Where the file is; the final name is in the same directory.
    let directory: OutputDirectory
    /// The file's name in ``directory``: `.gzstream-` and six random letters or digits, a name
    /// of fixed length, so that a final name of up to `NAME_MAX` bytes still works.
    let name: Pathname
    /// The open file (write only), or `-1` once ``finish(mode:times:owner:synchronous:)`` or ``discard()``
    /// closed it.
    private(set) var descriptor: Int32
    /// The device and inode of the file created, to recognise it by its name later.
    private let device: UInt64
    private let inode: UInt64
    /// Where the interrupt handler finds this file, or `nil` when every place was taken.
    private var pendingSlot: Int?
    private var published = false

    /// Called (tests only) once the file is created, before anything else is done with it:
    /// a test replaces the file by its name there, as another user could.
    nonisolated(unsafe) static var afterCreation: ((TemporaryFile) -> Void)?

    /// Creates a new file of a random name in `directory`, never following a link and never
    /// opening an existing file (another name is drawn when it exists).
    /// - Throws: ``PublishError`` ("cannot create output: …") when it cannot be created.
    /// Does not block. The corresponding C function is `openat(2)` with `O_CREAT|O_EXCL|O_NOFOLLOW`.
    init(in directory: OutputDirectory) throws(PublishError) {
        self.directory = directory
        // Created and registered with the interrupt signals held, so that none is handled in
        // between (InterruptCleanup.swift).
        let (descriptor, name, info, pendingSlot) = try withInterruptsHeld { () throws(PublishError) in
            let (descriptor, name) = try Self.create(in: directory)
            // A descriptor just opened cannot fail fstat; were it to, device and inode 0 match no
            // file, so the name would only never be removed.
            let info = try? SystemCalls.info(of: descriptor, target: name.description)
            let slot = registerPendingTemporary(directory: directory.descriptor, name: name, device: info?.device ?? 0,
                                                inode: info?.inode ?? 0)
            return (descriptor, name, info, slot)
        }
        self.descriptor = descriptor
        self.name = name
        device = info?.device ?? 0
        inode = info?.inode ?? 0
        self.pendingSlot = pendingSlot
        Self.afterCreation?(self)
    }

    /// Creates `.gzstream-` and six random letters or digits in `directory` (mode 0600); another
    /// name is drawn when one exists. - Returns: the descriptor and the name.
    private static func create(in directory: OutputDirectory) throws(PublishError) -> (Int32, Pathname) {
        do {
            return try SystemCalls.createUniqueFile(in: directory.descriptor, mode: 0o600)
        } catch {
            throw PublishError(cannotCreateOutput: error)
        }
    }

    /// Creates the file in the directory that holds `finalPath`.
    /// - Throws: ``PublishError`` when the directory cannot be opened or the file created.
    convenience init(besides finalPath: Pathname) throws(PublishError) {
        try self.init(in: OutputDirectory(containing: finalPath))
    }

    deinit {
        discard()
    }

    /// The path of the file for messages: the directory as the user named it, and the name.
    var path: Pathname { Pathname(bytes: directory.path.bytes + name.bytes)! }

    /// Sets owner (where allowed), permission bits and times on the open file, then closes it.
    /// In that order: `fchown` clears set-user-ID and set-group-ID bits, and anything after
    /// `futimens` would change the times again. A failure to set an attribute is ignored, as
    /// GNU gzip ignores it (a user who is not root cannot give a file away).
    /// - Parameters:
    ///   - mode: the permission bits.
    ///   - times: access and modification times, to the nanosecond; `nil` leaves them.
    ///   - owner: user and group; `nil` leaves them.
    ///   - synchronous: Whether to flush the data and attributes to the disk before closing
    ///     (`--synchronous`).
    ///   - groupNeedsOwner: Whether the group bits of `mode` are cleared when `owner` could not
    ///     be set (an index, whose group bits were meant for its source's group, not the
    ///     group the file was created with).
    /// - Throws: ``ByteStreamError`` when flushing or closing reports an error (a write that
    ///   failed late, on NFS or a full quota).
    /// Does not block beyond `close(2)` (and `fsync(2)` when `synchronous`). The corresponding
    /// C functions are `fchown(2)`, `fchmod(2)`, `futimens(2)`, `fsync(2)` and `close(2)`.
    func finish(mode: UInt32, times: (access: FileInfo.Timestamp, modification: FileInfo.Timestamp)?,
                owner: (UInt32, UInt32)?, synchronous: Bool = false, groupNeedsOwner: Bool = false) throws {
        precondition(descriptor >= 0, "finish(mode:times:owner:synchronous:) twice")
        let target = path.description
        var mode = mode
        if let (user, group) = owner {
            do {
                try SystemCalls.changeOwner(of: descriptor, owner: user, group: group, target: target)
            } catch {
                if groupNeedsOwner { mode &= ~0o070 }
            }
        }
        try? SystemCalls.changeMode(of: descriptor, to: mode, target: target)
        if let times {
            try? SystemCalls.setTimes(of: descriptor, access: times.access, modification: times.modification,
                                      target: target)
        }
        if synchronous { try SystemCalls.synchronize(descriptor, target: target) }
        let fd = descriptor
        descriptor = -1
        try SystemCalls.close(fd, target: target)
    }

    /// Moves the file to `finalName` in the same directory. Without `replacing`, an existing
    /// file there is kept and the move fails (atomically: `renameat2(2)`'s `RENAME_NOREPLACE`,
    /// or where the file system has none, `linkat(2)`, which refuses to replace).
    /// - Throws: ``PublishError``: `alreadyExists` when `finalName` exists and `replacing` is
    ///   `false`; "cannot write: …" when the temporary name no longer refers to this file
    ///   (another user replaced it) or the system refuses.
    /// Does not block. The corresponding C functions are `renameat(2)`, `renameat2(2)`, or
    /// `linkat(2)` and `unlinkat(2)`.
    func publish(as finalName: Pathname, replacing: Bool) throws(PublishError) {
        // Another user who can write the directory can still swap the name between this check
        // and the move; then the link or file published is theirs, in their own directory, and
        // nothing of this file's attributes went anywhere else.
        guard isStillNamed(name) else {
            throw PublishError(message: "cannot write: its temporary file was replaced or removed while it was written")
        }
        do {
            if replacing {
                try SystemCalls.rename(name, in: directory.descriptor, to: finalName, in: directory.descriptor)
            } else if let renamed = try SystemCalls.renameWithoutReplacing(name, in: directory.descriptor, to: finalName,
                                                                            in: directory.descriptor) {
                // In one step: a link, then an unlink, would leave a moment in which another
                // user who can write the directory could take the temporary name, a second
                // name of the published file.
                if !renamed { throw PublishError(message: Command.existingOutput, alreadyExists: true) }
            } else if try SystemCalls.link(name, in: directory.descriptor, to: finalName, in: directory.descriptor) {
                removeIfStillNamed(name)
            } else {
                throw PublishError(message: Command.existingOutput, alreadyExists: true)
            }
        } catch let error as ByteStreamError {
            // File systems without hard links (EPERM, ENOTSUP on vfat): check, then rename.
            let code = error.errno ?? Errno.inputOutput
            guard !replacing, code == Errno.notPermitted || code == Errno.notSupported
                    || code == Errno.operationNotSupported || code == Errno.notImplemented,
                  directory.info(of: finalName, followsLinks: false) == nil,
                  (try? SystemCalls.rename(name, in: directory.descriptor, to: finalName, in: directory.descriptor)) != nil
            else {
                throw PublishError(message: "cannot write: \(Errno.text(code))")
            }
        } catch let error as PublishError {
            throw error
        } catch {
            throw PublishError(message: "cannot write: \(error)")
        }
        published = true
        clearPending()
    }

    /// A second descriptor on the file, read only, for reading back what was written (the
    /// first is write only): opened by its name in its directory, never through a symbolic
    /// link, and only when that name is still this file (its device and inode), so that a file
    /// another user put in its place is never read as this one. Open it before
    /// ``finish(mode:times:owner:synchronous:groupNeedsOwner:)`` (the mode then may no longer
    /// let its owner read); it stays valid after, and `fstat(2)` on it then says what was
    /// published.
    /// - Returns: The descriptor, owned by the caller.
    /// - Throws: ``ByteStreamError`` when it cannot be opened or is another file.
    /// Does not block. The corresponding C functions are `openat(2)` with `O_RDONLY|O_NOFOLLOW`
    /// and `fstat(2)`.
    func openForReading() throws -> Int32 {
        let target = path.description
        let reader = try SystemCalls.open(name, in: directory.descriptor,
                                          flags: OpenFlag.readOnly | OpenFlag.noFollow | OpenFlag.noControllingTerminal,
                                          target: target)
        guard let info = try? SystemCalls.info(of: reader, target: target), info.device == device, info.inode == inode else {
            try? SystemCalls.close(reader, target: target)
            throw ByteStreamError(.system(errno: Errno.noSuchFile), operation: "open", target: target)
        }
        return reader
    }

    /// Takes a published file back: removes `finalName` if it still refers to this file (the
    /// index, when its output could not be published).
    func unpublish(_ finalName: Pathname) {
        guard published else { return }
        removeIfStillNamed(finalName)
    }

    /// Closes the descriptor if still open and removes the file unless it was published,
    /// and only while its name refers to the file created. Safe to call more than once.
    func discard() {
        if descriptor >= 0 {
            try? SystemCalls.close(descriptor, target: path.description)
            descriptor = -1
        }
        if !published {
            removeIfStillNamed(name)
            published = true
            clearPending()
        }
    }

    /// Whether `someName` in the directory is the file this object created (not followed
    /// if it is a link). The corresponding C function is `fstatat(2)`.
    private func isStillNamed(_ someName: Pathname) -> Bool {
        guard let info = try? SystemCalls.info(of: someName, in: directory.descriptor, followsLinks: false) else {
            return false
        }
        return info.device == device && info.inode == inode
    }

    /// Removes `someName` if it is still this file. Between the check and the removal another
    /// user can only swap a name in a directory they may write anyway.
    /// The corresponding C function is `unlinkat(2)`.
    private func removeIfStillNamed(_ someName: Pathname) {
        if isStillNamed(someName) {
            _ = try? SystemCalls.unlink(someName, in: directory.descriptor)
        }
    }

    private func clearPending() {
        if let pendingSlot { releasePendingTemporary(pendingSlot) }
        pendingSlot = nil
    }
}

private extension PublishError {
    /// "cannot create output: " and the system's text for `error`'s `errno` (`EIO`'s when it
    /// has none).
    init(cannotCreateOutput error: any Error) {
        self.init(message: "cannot create output: \(Errno.text((error as? ByteStreamError)?.errno ?? Errno.inputOutput))")
    }
}

import ByteStreams

/// An input file looked up once, as GNU gzip and coreutils do since gzip's CVE-2005-0988:
/// the directory that holds it is opened, the name is opened relative to that descriptor
/// (`O_NOFOLLOW` unless following links was asked for, `O_NONBLOCK` so that a FIFO cannot
/// block the checks), and every decision is taken from `fstat(2)` of that descriptor
/// (``info``). The data is read from the same descriptor (``stream()``), and the name is
/// removed only if it still names that file (``removeName()``). A name in a directory that
/// another user can write may be replaced at any moment: this way a replacement is never
/// read, and never removed.
///
/// Ownership: the file's descriptor is owned until ``stream()`` hands it to the stream it
/// makes; the directory's descriptor is owned when the input was opened from a path (and
/// closed by ``close()``), and borrowed when it was opened in a directory the `-r` walk holds.
/// Not thread-safe: one command uses it on one thread.
final class OpenedInput {
    /// The path as the user gave it, or as `-r` found it (`dir/sub/file`): what messages say.
    let path: Pathname
    /// The descriptor of the directory that holds the file (an `O_PATH` descriptor on Linux).
    let directory: Int32
    /// The file's name in ``directory``.
    let name: Pathname
    /// Whether a symbolic link at ``name`` would have been followed to the file.
    let followsLinks: Bool
    /// What `fstat(2)` said of the opened file.
    let info: FileInfo
    private let ownsDirectory: Bool
    /// The file's descriptor, or -1 once handed to a stream or closed.
    private var descriptor: Int32

    /// Opens `name` in the open directory `directory`.
    /// - Parameters:
    ///   - name: One path component (`.` and `..` too).
    ///   - directory: An open directory descriptor. On success the input takes it over when
    ///     `ownsDirectory` (``close()`` closes it); on failure it stays the caller's.
    ///   - path: The input as messages name it.
    ///   - followsLinks: Whether a symbolic link at `name` is followed; without it a link
    ///     fails with `ELOOP`.
    ///   - requiresDirectory: Add `O_DIRECTORY` (a path given with a trailing `/`).
    /// - Throws: ``ByteStreamError`` with the `errno` of `openat`, `fstat` or `fcntl`
    ///   (`ELOOP`: `name` is a symbolic link and `followsLinks` is `false`).
    /// Does not block, also on a FIFO with no writer.
    /// The corresponding C functions are `openat(2)`, `fstat(2)` and `fcntl(2)`.
    init(name: Pathname, in directory: Int32, ownsDirectory: Bool, path: Pathname, followsLinks: Bool,
         requiresDirectory: Bool = false) throws {
        let flags = OpenFlag.readOnly | OpenFlag.nonBlocking | OpenFlag.noControllingTerminal
            | (followsLinks ? 0 : OpenFlag.noFollow) | (requiresDirectory ? OpenFlag.directory : 0)
        let fd = try SystemCalls.open(name, in: directory, flags: flags, target: path.description)
        do {
            let info = try SystemCalls.info(of: fd, target: path.description)
            // A regular file never blocks a read: it is made blocking at once, so that the
            // descriptor behaves as one opened without O_NONBLOCK wherever it is used.
            if info.isRegularFile { try SystemCalls.makeBlocking(fd, target: path.description) }
            self.info = info
        } catch {
            try? SystemCalls.close(fd, target: path.description)
            throw error
        }
        descriptor = fd
        self.directory = directory
        self.ownsDirectory = ownsDirectory
        self.name = name
        self.path = path
        self.followsLinks = followsLinks
    }

    /// Opens `path`: its directory (`.` for a bare name) once, then its last component in it
    /// (see ``init(name:in:ownsDirectory:path:followsLinks:requiresDirectory:)``). A path that
    /// ends with `/` must name a directory, and a link there is followed, as a lookup of
    /// that path would.
    /// - Throws: ``ByteStreamError`` with the `errno` of the first call that failed.
    /// Does not block. The corresponding C functions are `openat(2)` and `fstat(2)`.
    convenience init(path: Pathname, followsLinks: Bool) throws {
        let lookup = try Self.openDirectory(of: path)
        do {
            try self.init(name: lookup.name, in: lookup.directory, ownsDirectory: true, path: path,
                          followsLinks: followsLinks || lookup.trailingSlash, requiresDirectory: lookup.trailingSlash)
        } catch {
            try? SystemCalls.close(lookup.directory, target: path.description)
            throw error
        }
    }

    /// Opens the directory that holds `path`'s last component, for lookups relative to it
    /// (``SystemCalls/lookupDirectoryFlags``); see ``Pathname/lookupParts``.
    /// - Returns: The directory's descriptor, owned by the caller; the last component; whether
    ///   `path` ended with `/`.
    /// - Throws: ``ByteStreamError`` with `openat`'s `errno`.
    /// Does not block. The corresponding C function is `openat(2)`.
    static func openDirectory(of path: Pathname) throws -> (directory: Int32, name: Pathname, trailingSlash: Bool) {
        let (directoryPath, name, trailingSlash) = path.lookupParts
        let directory = try SystemCalls.open(directoryPath, in: SystemCalls.currentDirectory,
                                             flags: SystemCalls.lookupDirectoryFlags,
                                             target: path.description)
        return (directory, name, trailingSlash)
    }

    deinit {
        close()
    }

    /// The file's descriptor while the input still has it (a directory's, for `-r` to walk),
    /// else -1. Still owned by the input.
    var fileDescriptor: Int32 { descriptor }

    /// A stream that reads the opened file and closes its descriptor when it is closed. A FIFO
    /// is waited on first until a writer has come (what a blocking `open(2)` would have
    /// waited for), then every descriptor is made blocking.
    /// - Returns: The stream, which owns the descriptor from now on; call this once.
    /// - Throws: ``ByteStreamError`` with the `errno` of `poll` or `fcntl`.
    /// Blocks while a FIFO has no writer.
    /// The corresponding C functions are `poll(2)` and `fcntl(2)`.
    func stream() throws -> FileInputStream {
        precondition(descriptor >= 0, "the input's descriptor was handed over or closed already")
        if info.isFIFO { try SystemCalls.waitUntilReadable(descriptor, target: path.description) }
        try SystemCalls.makeBlocking(descriptor, target: path.description)
        let fd = descriptor
        descriptor = -1
        return FileInputStream(fileDescriptor: fd, closesDescriptor: true, displayName: path.description)
    }

    /// Closes the file's descriptor unless a stream has it, and the directory's if owned.
    /// Calling it again does nothing. The corresponding C function is `close(2)`.
    func close() {
        if descriptor >= 0 {
            try? SystemCalls.close(descriptor, target: path.description)
            descriptor = -1
        }
        if ownsDirectory, !directoryClosed {
            try? SystemCalls.close(directory, target: path.description)
            directoryClosed = true
        }
    }

    private var directoryClosed = false

    /// How ``removeName()`` ended.
    enum Removal: Equatable {
        case removed
        /// The name now names another file (or nothing that can be checked): left alone.
        case replaced
        /// `fstatat` or `unlinkat` failed with this `errno` (`ENOENT`: the name is gone).
        case failed(Int32)
    }

    /// Removes ``name`` from ``directory`` only if it still names the opened file (same
    /// device and inode, looked up without following a link); a symbolic link that was
    /// followed to open the file is removed if it still leads there. Anything else is left.
    /// A replacement made between the check and the removal cannot be excluded (no call
    /// removes a name only if it is a given inode), but the window is two system calls on
    /// a name already checked, not the whole transformation.
    /// - Returns: What happened.
    /// Does not block. The corresponding C functions are `fstatat(2)` and `unlinkat(2)`.
    func removeName() -> Removal {
        precondition(!directoryClosed, "the input's directory is closed")
        do {
            guard var found = try SystemCalls.info(of: name, in: directory, target: path.description) else {
                return .failed(Errno.noSuchFile)
            }
            if found.isSymbolicLink, followsLinks {
                guard let target = try SystemCalls.info(of: name, in: directory, followsLinks: true,
                                                        target: path.description) else { return .replaced }
                found = target
            }
            guard found.isSameFile(as: info) else { return .replaced }
            return try SystemCalls.unlink(name, in: directory, target: path.description) ? .removed
                : .failed(Errno.noSuchFile)
        } catch let error as ByteStreamError {
            return .failed(error.errno ?? Errno.inputOutput)
        } catch {
            return .failed(Errno.inputOutput)
        }
    }
}

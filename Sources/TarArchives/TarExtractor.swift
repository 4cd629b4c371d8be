import ByteStreams

/// Writes tar members into a destination directory, refusing what could reach outside it: the
/// one extractor that both the sequential (``TarEntry`` values from a reader) and the indexed
/// paths hand their members to.
///
/// Call ``extract(_:content:)`` for each member in archive order, then ``finish()``, which
/// gives directories their modes and times last, each after everything under it (as GNU tar
/// does), so that a member can still be written into a directory whose stored mode is read-only, and writing
/// into a directory does not spoil the time it was given.
///
/// The rules (each one tested in TarExtractorTests):
/// - Names: leading `/` are removed, with one ``ExtractionWarning`` (``ExtractionWarning/Reason/strippedLeadingSlash``),
///   and `.` components dropped; a `..` component or a NUL byte refuses the member.
/// - Every component is opened with `openat(2)` and `O_NOFOLLOW | O_DIRECTORY`, one at a time,
///   from the destination's descriptor: no symbolic link is ever followed while creating a
///   member, in particular not one that an earlier member created.
/// - A symbolic link's target must be relative and stay inside the destination when resolved
///   lexically from the link's directory (``Options/allowsLinksOutsideDestination`` lifts this).
/// - A hard link must name a regular file that an earlier member of this extraction wrote and
///   that is still that file; it is made with `linkat(2)` between directory descriptors,
///   without following links.
/// - Devices and FIFOs are skipped with a warning (no `mknod`); so is an unknown type.
/// - A regular file is written to a new temporary name in its directory (`O_CREAT | O_EXCL |
///   O_NOFOLLOW`, mode 0600), its size checked against the header, a sparse map validated and
///   its holes left as holes, then given its owner (only when asked and running as root),
///   mode and time (to the nanosecond) through its descriptor and renamed into place; on any
///   error the temporary name is removed.
/// - Modes lose set-user-ID and set-group-ID and are masked with the umask unless
///   ``Options/preservesPermissions``.
/// - A name this extraction made before is replaced (the last of duplicate names wins); a name
///   that was there before is replaced only with ``Options/overwritesExisting``, and a symbolic
///   link found there is replaced itself, never written through.
///
/// Errors are ``ExtractionError`` values naming the member; errors of a content stream come
/// through unchanged. After an error the extractor can go on with the next member.
///
/// Ownership: the destination descriptor is the caller's unless `closesDestination` (or the
/// path initialiser opened it); content streams stay the caller's (read, not closed). Blocking:
/// every call blocks on the file system and on reading content. Thread safety: none; one
/// thread at a time uses an extractor.
public final class TarExtractor {
    /// What the extractor may do beyond the safe defaults.
    public struct Options: Sendable {
        /// Replace a file, link or empty name that existed in the destination before this
        /// extraction (`tar --overwrite`, gzstream `-f`). Default `false`: such a member is refused
        /// with ``ExtractionError/Reason/exists``.
        public var overwritesExisting: Bool
        /// Apply members' modes as stored, set-user-ID and set-group-ID included, and not masked
        /// by the umask (`tar -p`). Default `false`: `mode & 0o1777 & ~creationMask`.
        public var preservesPermissions: Bool
        /// Give files the owner and group stored (their numeric IDs); only when the process runs
        /// as root (`tar --same-owner`). Default `false`: files belong to whoever extracts them.
        public var preservesOwner: Bool
        /// Create symbolic links whose targets are absolute or leave the destination. Default
        /// `false`: such a link is refused with ``ExtractionError/Reason/linkTargetOutsideDestination(target:)``.
        /// Hard links are always held to earlier members.
        public var allowsLinksOutsideDestination: Bool
        /// The permission bits removed from modes unless ``preservesPermissions``: by default the
        /// process's umask, read when the options are made.
        public var creationMask: UInt32

        /// The safe defaults, each changeable.
        public init(overwritesExisting: Bool = false, preservesPermissions: Bool = false, preservesOwner: Bool = false,
                    allowsLinksOutsideDestination: Bool = false, creationMask: UInt32? = nil) {
            self.overwritesExisting = overwritesExisting
            self.preservesPermissions = preservesPermissions
            self.preservesOwner = preservesOwner
            self.allowsLinksOutsideDestination = allowsLinksOutsideDestination
            self.creationMask = creationMask ?? SystemCalls.fileCreationMask()
        }
    }

    /// What this extraction made at a name: the kind, and the file (device and inode) so that a
    /// later hard link or directory pass can tell it is still the same.
    struct Made {
        enum Kind { case file, directory, symbolicLink }
        var kind: Kind
        var file: FileInfo
    }

    /// A directory whose mode, owner and time ``finish()`` applies.
    struct PendingDirectory {
        var entry: TarEntry
        var path: ExtractionPath
        var file: FileInfo
    }

    /// The destination directory's descriptor.
    let destination: Int32
    private let closesDestination: Bool
    let options: Options
    private let warningHandler: (ExtractionWarning) -> Void
    /// Every name this extraction made, by ``ExtractionPath/key``.
    var made: [[UInt8]: Made] = [:]
    var pendingDirectories: [[UInt8]: PendingDirectory] = [:]
    private var warnedAboutLeadingSlash = false

    /// Told of each temporary file the extractor creates for a member's content: the
    /// descriptor of its directory (open until ``temporaryFileEnded`` is called), its name and
    /// its device and inode; so that a program can remove it when a signal ends the process in
    /// the middle of a member, which no `catch` here sees. Called on the extracting thread.
    public var temporaryFileCreated: ((_ directory: Int32, _ name: Pathname, _ device: UInt64, _ inode: UInt64) -> Void)?
    /// Told that the temporary file last announced is gone: renamed into place or removed.
    public var temporaryFileEnded: (() -> Void)?
    /// Runs the creation of each temporary file and its announcement to
    /// ``temporaryFileCreated``, so that a program can hold off signals in between (a signal
    /// delivered as the `openat(2)` that created the file returns would find it not yet
    /// announced). The default runs them as they are. Called on the extracting thread.
    public var creatingTemporaryFile: (_ create: () throws -> Void) throws -> Void = { try $0() }
    /// The directories on the path of the last member's directory, held open from the
    /// destination down (members come grouped by directory, so the next member's directory is
    /// mostly this one or a near relative, reached without walking again from the top). Each
    /// was opened from the one before it with `O_NOFOLLOW | O_DIRECTORY`. `depth` is the number
    /// of components of `heldPath` the descriptor stands for; depths increase along the array,
    /// by one until ``maximumHeldDirectories`` is reached, after which the last entry is
    /// replaced rather than another one added (a path of thousands of components must not hold
    /// thousands of descriptors).
    var heldDirectories: [(depth: Int, descriptor: Int32)] = []
    /// The components of the deepest held directory.
    var heldPath: [[UInt8]] = []
    static let maximumHeldDirectories = 32
    /// The copy buffer, allocated once.
    let buffer: UnsafeMutablePointer<UInt8>
    static let bufferSize = 64 * 1024

    /// An extractor writing under the directory open as `destination`.
    /// - Parameters:
    ///   - destination: A directory's descriptor, opened with `O_DIRECTORY | O_NOFOLLOW` (a
    ///     lookup descriptor such as `O_PATH` is enough); the caller's unless `closesDestination`.
    ///   - closesDestination: Whether the extractor closes `destination` when it is released.
    ///   - options: What the extractor may do beyond the defaults.
    ///   - warningHandler: Told each ``ExtractionWarning`` as it happens, on the calling thread.
    public init(destination: Int32, closesDestination: Bool = false, options: Options = Options(),
                warningHandler: @escaping (ExtractionWarning) -> Void = { _ in }) {
        self.destination = destination
        self.closesDestination = closesDestination
        self.options = options
        self.warningHandler = warningHandler
        buffer = .allocate(capacity: Self.bufferSize)
    }

    /// An extractor writing under the directory `path`, opened once here with `O_DIRECTORY |
    /// O_NOFOLLOW` (a symbolic link as its last component is refused) and closed when the
    /// extractor is released.
    /// - Throws: `ByteStreamError` of `openat(2)` naming `path` (`ENOENT`, `ENOTDIR`, `ELOOP`).
    public convenience init(destinationPath path: String, options: Options = Options(),
                            warningHandler: @escaping (ExtractionWarning) -> Void = { _ in }) throws {
        let fd = try SystemCalls.open(Pathname(path), in: SystemCalls.currentDirectory,
                                      flags: SystemCalls.lookupDirectoryFlags | OpenFlag.noFollow, target: path)
        self.init(destination: fd, closesDestination: true, options: options, warningHandler: warningHandler)
    }

    deinit {
        releaseHeldDirectories()
        if closesDestination { try? SystemCalls.close(destination, target: "destination") }
        buffer.deallocate()
    }

    /// Extracts one member.
    /// - Parameters:
    ///   - entry: The member as its headers describe it.
    ///   - content: Its data: exactly ``TarEntry/size`` bytes for a file member (the stored runs
    ///     of a sparse one, in map order), read from where it stands and opened first if it is
    ///     not open; not read for other kinds (the caller's reader skips their data). Not closed.
    /// - Throws: ``ExtractionError`` when the member is refused or a system call fails (nothing
    ///   of it is then left); the content stream's own error (unchanged) when reading it fails.
    public func extract(_ entry: TarEntry, content: ByteInputStream) throws {
        let path: ExtractionPath
        do throws(ExtractionPath.Refusal) {
            let normalised = try ExtractionPath.normalising(entry.path)
            path = normalised.path
            if normalised.strippedSlash && !warnedAboutLeadingSlash {
                warnedAboutLeadingSlash = true
                warn(.strippedLeadingSlash, entry)
            }
        } catch {
            throw ExtractionError(error.reason, entry)
        }
        do {
            switch entry.kind {
            case .regular, .contiguous, .sparse: try writeFile(entry, at: path, content: content)
            case .directory: try makeDirectory(entry, at: path)
            case .symbolicLink: try makeSymbolicLink(entry, at: path)
            case .hardLink: try makeHardLink(entry, at: path)
            case .characterDevice, .blockDevice, .fifo: warn(.skippedSpecialFile(kind: entry.kind), entry)
            case .other(let typeflag): warn(.skippedUnknownType(typeflag: typeflag), entry)
            }
        } catch let failure as ContentFailure {
            throw failure.error
        } catch let error as ByteStreamError {
            throw ExtractionError(.system(error), entry)
        }
    }

    /// Gives every directory member its mode, owner (when asked, as root) and time, each after
    /// the directories under it; call once after the last member. A directory no longer the one this extraction
    /// made (replaced since) is left alone.
    /// - Throws: The first ``ExtractionError`` met; the other directories are still done.
    public func finish() throws {
        // In descending byte order of their names every directory comes before its parent
        // (a name sorts after each of its prefixes), and neighbours share most of their path,
        // so the held directories serve the walk.
        let childrenFirst = pendingDirectories.sorted { $1.key.lexicographicallyPrecedes($0.key) }
        pendingDirectories = [:]
        defer { releaseHeldDirectories() }
        var firstError: (any Error)?
        for (_, directory) in childrenFirst {
            do {
                try applyAttributes(of: directory)
            } catch let error as ByteStreamError {
                firstError = firstError ?? ExtractionError(.system(error), directory.entry)
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }

    func warn(_ reason: ExtractionWarning.Reason, _ entry: TarEntry) {
        warningHandler(ExtractionWarning(reason, memberName: entry.path, headerOffset: entry.headerOffset))
    }

    /// Closes every held directory.
    func releaseHeldDirectories() {
        for held in heldDirectories { try? SystemCalls.close(held.descriptor, target: "directory") }
        heldDirectories = []
        heldPath = []
    }

    /// A content stream's failure, carried past the wrapping of system errors unchanged.
    struct ContentFailure: Error {
        var error: any Error
    }

    /// The mode given to a file or directory of `entry`.
    func permissions(of entry: TarEntry) -> UInt32 {
        options.preservesPermissions ? entry.mode & 0o7777 : entry.mode & 0o1777 & ~options.creationMask
    }

    /// The member's modification time for `futimens(2)`; nanoseconds out of range count as 0.
    func modificationTime(of entry: TarEntry) -> FileInfo.Timestamp {
        let time = entry.modificationTime
        let nanoseconds = (0..<1_000_000_000).contains(time.nanoseconds) ? Int(time.nanoseconds) : 0
        return FileInfo.Timestamp(seconds: Int(clamping: time.seconds), nanoseconds: nanoseconds)
    }

    /// The stored owner and group, when they are to be applied and fit the system's IDs.
    func ownerToApply(of entry: TarEntry) -> (owner: UInt32, group: UInt32)? {
        guard options.preservesOwner, SystemCalls.effectiveUserID == 0,
              let owner = UInt32(exactly: entry.userID), let group = UInt32(exactly: entry.groupID) else { return nil }
        return (owner, group)
    }

    /// Sets an open file's or directory's owner (first: `chown` clears set-user-ID), mode and time.
    func applyAttributes(to fd: Int32, of entry: TarEntry, shown: String) throws {
        let target = shown
        if let ids = ownerToApply(of: entry) {
            try SystemCalls.changeOwner(of: fd, owner: ids.owner, group: ids.group, target: target)
        }
        try SystemCalls.changeMode(of: fd, to: .init(permissions(of: entry)), target: target)
        try SystemCalls.setTimes(of: fd, access: nil, modification: modificationTime(of: entry), target: target)
    }

    /// Whether the name `path`, found to exist, may be replaced: this extraction made it (a
    /// duplicate member), or replacing was asked for.
    /// - Throws: ``ExtractionError/Reason/exists`` otherwise.
    func requireReplaceable(_ path: ExtractionPath, _ entry: TarEntry) throws {
        guard made[path.key] != nil || options.overwritesExisting else { throw ExtractionError(.exists, entry) }
    }
}

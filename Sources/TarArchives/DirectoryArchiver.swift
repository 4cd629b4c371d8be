import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Walks files and directory trees into a ``TarWriter``, as `tar -c` does: each operand, then
/// everything under a directory, names in bytewise order (so that the same tree gives the same
/// archive), a directory's header before its contents.
///
/// Member names are the operand as given joined with the names below it, with leading `/` and
/// `../` removed (as GNU tar removes them, noted once) and a trailing `/` on directories.
/// What is stored: regular files (their data), directories, symbolic links (`readlinkat(2)`),
/// hard links (a second name of a file already stored, same device and inode, becomes a link
/// member naming the first), character and block devices, FIFOs (headers only); the
/// permission bits with setuid, setgid and sticky, the owner's and group's IDs and names, the
/// modification time in whole seconds. Not stored: sockets (passed over with a warning), access
/// and change times, extended attributes, ACLs, SELinux labels, file flags; holes of sparse
/// files are stored as the zero bytes they read as (the file is stored whole).
///
/// Files are opened through directory descriptors, never by a path looked up twice: the
/// operand's parent directory is opened, each name is examined with `fstatat(2)` relative to
/// its directory's descriptor and opened relative to it with `O_NOFOLLOW`, and the opened file
/// must be the one examined (same device and inode), so that a tree changed during the walk
/// never leads the walk outside it. A regular file is read to the size `fstat(2)` gave when it
/// was opened: a file that shrank is padded with zeros ("File shrank by N bytes; padding with
/// zeros"), one that grew or changed is cut there ("file changed as we read it"), both
/// warnings, as GNU tar says them. One directory descriptor is open per level being walked.
///
/// Problems with the files (cannot open, cannot read, vanished) are reported to the handler
/// given and the walk goes on, as tar's does; ``worstSeverity`` says whether any was an error.
/// Only the output's errors are thrown. Blocks on the file system and the output.
/// Not thread-safe: one walk at a time on one thread.
public final class DirectoryArchiver {
    /// A file's owner or group as the archive should name it instead of the file's own
    /// (`--owner`, `--group`): `nil` fields keep the file's.
    public struct Identity: Equatable, Sendable {
        public var name: [UInt8]?
        public var id: Int?

        public init(name: [UInt8]? = nil, id: Int? = nil) {
            self.name = name
            self.id = id
        }
    }

    /// How metadata is stored, for reproducible archives.
    public struct Options: Equatable, Sendable {
        /// Every member's modification time, instead of each file's (`--mtime=@SECONDS`).
        public var modificationTime: TarEntry.Timestamp?
        /// Every member's owner, instead of each file's.
        public var owner: Identity?
        /// Every member's group, instead of each file's.
        public var group: Identity?
        /// Store IDs only, no owner or group names (unless ``owner`` or ``group`` name one).
        public var numericOwner: Bool

        public init(modificationTime: TarEntry.Timestamp? = nil, owner: Identity? = nil, group: Identity? = nil,
                    numericOwner: Bool = false) {
            self.modificationTime = modificationTime
            self.owner = owner
            self.group = group
            self.numericOwner = numericOwner
        }
    }

    /// Something about a file the walk reported and went past.
    public struct Problem {
        /// How bad: a notice changes nothing, a warning means the archive holds the file but
        /// not as it was (or passed over something tar would too), an error that a file is
        /// missing from the archive or holds zeros for what could not be read.
        public enum Severity: Int, Comparable, Sendable {
            case notice, warning, error
            public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rawValue < rhs.rawValue }
        }

        /// The file's path as the walk reached it (the operand joined with the names below).
        public var path: Pathname
        public var severity: Severity
        /// What happened, in GNU tar's words where it has them (`file changed as we read it`).
        public var message: String
        /// The system error behind it, if any (the text a user reads follows the message).
        public var error: (any Error)?
    }

    /// The archive written to.
    public let writer: TarWriter
    public let options: Options
    /// The worst problem reported so far; `nil` when none.
    public private(set) var worstSeverity: Problem.Severity?

    private struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private let report: (Problem) -> Void
    private let excluded: Set<FileKey>
    private let excludedName: Pathname?
    private var firstNames: [FileKey: [UInt8]] = [:]
    private let names = OwnerNames()
    private var notedPrefixes: Set<String> = []

    /// A walker writing into `writer`.
    /// - Parameters:
    ///   - writer: The archive the members go into; the walker appends to it, never finishes it.
    ///   - options: How member metadata is stored (times, owner and group names or IDs).
    ///   - excluding: Files never stored, by device and inode (the archive being written, when
    ///     it lies in the tree: "file is the archive; not dumped", as GNU tar says).
    ///   - excludedName: The name such a file is shown by, in its directory as walked, when it
    ///     is found under another (the archive written under a temporary name until it is
    ///     complete); `nil` (the default) shows the name found.
    ///   - report: Called with each problem, on the walking thread.
    public init(writer: TarWriter, options: Options = Options(), excluding: [(device: UInt64, inode: UInt64)] = [],
                excludedName: Pathname? = nil, report: @escaping (Problem) -> Void) {
        self.writer = writer
        self.options = options
        self.excluded = Set(excluding.map { FileKey(device: $0.device, inode: $0.inode) })
        self.excludedName = excludedName
        self.report = report
    }

    /// Stores `operand` (a file, or a directory and everything under it); a symbolic link is
    /// stored as a link, unless the operand ends in `/` (which looks through it, as the system
    /// does).
    /// - Throws: The output's error (the archive is then unusable); ``TarWriteError`` never:
    ///   a file that cannot be stored is reported.
    public func archive(_ operand: Pathname) throws {
        let member = memberName(of: operand)
        let parts = operand.lookupParts
        let parent: Int32
        do {
            parent = try SystemCalls.open(parts.directory, in: SystemCalls.currentDirectory,
                                          flags: OpenFlag.readOnly | OpenFlag.directory, target: operand.description)
        } catch {
            return problem(operand, .error, "cannot open", error)
        }
        defer { try? SystemCalls.close(parent, target: operand.description) }
        let found: stat
        do {
            guard let status = try SystemCalls.status(of: parts.name, in: parent, followsLinks: parts.trailingSlash,
                                                      target: operand.description) else {
                return problem(operand, .error, "cannot stat", ByteStreamError(.system(errno: ENOENT), operation: "stat"))
            }
            found = status
        } catch {
            return problem(operand, .error, "cannot stat", error)
        }
        try visit(parts.name, in: parent, member: member, shown: operand, found: found, followsLink: parts.trailingSlash)
    }

    /// The member name of `operand`: trailing `/` dropped, leading `/` and `../` removed (noted).
    private func memberName(of operand: Pathname) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        var bytes = operand.bytes[...]
        while bytes.count > 1, bytes.last == slash { bytes = bytes.dropLast() }
        var removed: [UInt8] = []
        while true {
            if bytes.first == slash {
                let count = bytes.prefix { $0 == slash }.count
                removed += bytes.prefix(count)
                bytes = bytes.dropFirst(count)
            } else if bytes.starts(with: [UInt8(ascii: "."), UInt8(ascii: "."), slash]) || bytes.elementsEqual("..".utf8) {
                removed += bytes.prefix(3)
                bytes = bytes.dropFirst(3)
            } else {
                break
            }
        }
        if !removed.isEmpty {
            let text = String(decoding: removed, as: UTF8.self)
            if notedPrefixes.insert(text).inserted {
                report(Problem(path: operand, severity: .notice, message: "Removing leading `\(text)' from member names"))
            }
        }
        return Array(bytes)
    }

    private func visit(_ name: Pathname, in directory: Int32, member: [UInt8], shown: Pathname, found: stat,
                       followsLink: Bool = false) throws {
        let info = FileInfo(found)
        let key = FileKey(device: info.device, inode: info.inode)
        if excluded.contains(key) {
            let named = excludedName.map { shown.directoryPart.appending($0) } ?? shown
            return problem(named, .warning, "file is the archive; not dumped")
        }
        var entry = baseEntry(info, member: member)
        if info.isDirectory { return try visitDirectory(name, in: directory, entry: entry, shown: shown, found: info,
                                                         followsLink: followsLink) }
        if info.isSocket { return problem(shown, .warning, "socket ignored") }
        if info.linkCount > 1, let first = firstNames[key] {
            entry.kind = .hardLink
            entry.linkTarget = first
            try append(entry, shown: shown)
            return
        }
        let type = info.mode & UInt32(S_IFMT)
        switch type {
        case UInt32(S_IFREG):
            guard try storeRegularFile(name, in: directory, entry: entry, shown: shown, found: info,
                                       followsLink: followsLink) else { return }
        case UInt32(S_IFLNK):
            do {
                entry.linkTarget = try SystemCalls.readLink(name, in: directory, target: shown.description)
            } catch {
                return problem(shown, .error, "cannot readlink", error)
            }
            entry.kind = .symbolicLink
            guard try append(entry, shown: shown) else { return }
        case UInt32(S_IFCHR), UInt32(S_IFBLK):
            entry.kind = type == UInt32(S_IFCHR) ? .characterDevice : .blockDevice
            let device = UInt64(found.st_rdev)
            // Linux's encoding of a device number (glibc's gnu_dev_major and gnu_dev_minor).
            entry.deviceMajor = Int(((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff))
            entry.deviceMinor = Int((device & 0xff) | ((device >> 12) & ~0xff))
            guard try append(entry, shown: shown) else { return }
        case UInt32(S_IFIFO):
            entry.kind = .fifo
            guard try append(entry, shown: shown) else { return }
        default:
            return problem(shown, .warning, "Unknown file type; file ignored")
        }
        if info.linkCount > 1 { firstNames[key] = member }
    }

    /// The header fields every kind shares, from `info` and the options.
    private func baseEntry(_ info: FileInfo, member: [UInt8]) -> TarEntry {
        let userID = options.owner?.id ?? Int(info.owner)
        let groupID = options.group?.id ?? Int(info.group)
        let userName = options.owner?.name ?? (options.numericOwner ? [] : names.userName(UInt32(truncatingIfNeeded: userID)))
        let groupName = options.group?.name ?? (options.numericOwner ? [] : names.groupName(UInt32(truncatingIfNeeded: groupID)))
        let time = options.modificationTime
            ?? TarEntry.Timestamp(seconds: Int64(info.modificationTime.seconds), nanoseconds: Int32(info.modificationTime.nanoseconds))
        return TarEntry(path: member, kind: .regular, mode: info.mode & 0o7777, userID: userID, groupID: groupID,
                        userName: userName, groupName: groupName, modificationTime: time)
    }

    /// Opens the directory `name`, stores its header and walks its entries in bytewise order.
    private func visitDirectory(_ name: Pathname, in directory: Int32, entry: TarEntry, shown: Pathname, found: FileInfo,
                                followsLink: Bool) throws {
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.open(name, in: directory, flags: OpenFlag.readOnly | OpenFlag.directory
                                                  | (followsLink ? 0 : OpenFlag.noFollow) | OpenFlag.nonBlocking,
                                              target: shown.description)
        } catch {
            return problem(shown, .error, "cannot open", error)
        }
        defer { try? SystemCalls.close(descriptor, target: shown.description) }
        guard let opened = try? SystemCalls.info(of: descriptor, target: shown.description), opened.isSameFile(as: found) else {
            return problem(shown, .error, "was replaced while being read; not dumped")
        }
        var header = entry
        header.kind = .directory
        if !entry.path.isEmpty {
            header.path = entry.path + [UInt8(ascii: "/")]
            guard try append(header, shown: shown) else { return }
        }
        let children: [Pathname]
        do {
            children = try SystemCalls.directoryEntries(of: descriptor, target: shown.description)
                .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        } catch {
            return problem(shown, .error, "cannot read directory", error)
        }
        for child in children {
            let childShown = shown.appending(component: child)
            let childMember = entry.path.isEmpty ? child.bytes : entry.path + [UInt8(ascii: "/")] + child.bytes
            let status: stat
            do {
                guard let found = try SystemCalls.status(of: child, in: descriptor, target: childShown.description) else {
                    problem(childShown, .warning, "File removed before we read it")
                    continue
                }
                status = found
            } catch {
                problem(childShown, .error, "cannot stat", error)
                continue
            }
            try visit(child, in: descriptor, member: childMember, shown: childShown, found: status)
        }
    }

    /// Opens the regular file `name` (no link followed), checks it is the file examined, and
    /// stores it with the size `fstat(2)` gives its descriptor.
    /// - Returns: Whether it was stored.
    private func storeRegularFile(_ name: Pathname, in directory: Int32, entry: TarEntry, shown: Pathname, found: FileInfo,
                                  followsLink: Bool) throws -> Bool {
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.open(name, in: directory, flags: OpenFlag.readOnly | OpenFlag.nonBlocking
                                                  | OpenFlag.noControllingTerminal | (followsLink ? 0 : OpenFlag.noFollow),
                                              target: shown.description)
        } catch {
            problem(shown, .error, "cannot open", error)
            return false
        }
        let stream = FileInputStream(fileDescriptor: descriptor, closesDescriptor: true, displayName: shown.description)
        defer { stream.close() }
        guard let opened = try? SystemCalls.info(of: descriptor, target: shown.description), opened.isRegularFile,
              opened.isSameFile(as: found) else {
            problem(shown, .error, "was replaced while being read; not dumped")
            return false
        }
        var member = entry
        member.size = Int(opened.size)
        if options.modificationTime == nil {
            member.modificationTime = TarEntry.Timestamp(seconds: Int64(opened.modificationTime.seconds),
                                                         nanoseconds: Int32(opened.modificationTime.nanoseconds))
        }
        let outcome: TarWriter.ContentOutcome
        do {
            outcome = try writer.append(member, paddingContent: stream)
        } catch let error as TarWriteError {
            problem(shown, .error, error.description)
            return false
        }
        if let error = outcome.readError {
            problem(shown, .error, "read error at byte \(outcome.bytesRead); the rest written as zeros", error)
        } else if outcome.bytesRead < member.size {
            problem(shown, .warning, "File shrank by \(member.size - outcome.bytesRead) bytes; padding with zeros")
        } else if outcome.hadMore {
            problem(shown, .warning, "file changed as we read it")
        } else if let after = try? SystemCalls.info(of: descriptor, target: shown.description),
                  after.size != opened.size || after.modificationTime != opened.modificationTime {
            problem(shown, .warning, "file changed as we read it")
        }
        return true
    }

    /// Appends a member without data; a member that cannot be encoded is reported.
    /// - Returns: Whether it was stored.
    @discardableResult
    private func append(_ entry: TarEntry, shown: Pathname) throws -> Bool {
        do {
            try writer.append(entry, content: nil)
            return true
        } catch let error as TarWriteError {
            problem(shown, .error, error.description)
            return false
        }
    }

    private func problem(_ path: Pathname, _ severity: Problem.Severity, _ message: String, _ error: (any Error)? = nil) {
        worstSeverity = max(worstSeverity ?? severity, severity)
        report(Problem(path: path, severity: severity, message: message, error: error))
    }
}

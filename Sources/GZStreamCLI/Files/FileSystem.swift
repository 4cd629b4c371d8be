import ByteStreams

/// The CLI's lookups of a path as the user typed it: what the path names now, links followed
/// unless `followsLinks` is `false` (a link is then described itself). Each looks the name up
/// anew: for decisions about a file that was opened, use ``SystemCalls/info(of:target:)`` on its
/// descriptor.
extension FileInfo {
    /// What `stat(2)` (or `lstat(2)` without `followsLinks`) says of `path`; `nil` when it
    /// names nothing or cannot be examined.
    /// The corresponding C function is `fstatat(2)` relative to the current directory.
    init?(path: Pathname, followsLinks: Bool = true) {
        guard let info = try? SystemCalls.info(of: path, in: SystemCalls.currentDirectory, followsLinks: followsLinks)
        else { return nil }
        self = info
    }

    /// What `fstat(2)` says of an open descriptor; `nil` when it fails (use
    /// ``SystemCalls/info(of:target:)`` where the reason is reported).
    init?(descriptor: Int32) {
        guard let info = try? SystemCalls.info(of: descriptor, target: "descriptor \(descriptor)") else { return nil }
        self = info
    }

    /// Whether `path` itself is a symbolic link (`lstat(2)`).
    static func isSymbolicLink(_ path: Pathname) -> Bool {
        FileInfo(path: path, followsLinks: false)?.isSymbolicLink == true
    }
}

struct PublishError: Error {
    var message: String
    /// The final path exists already (the move without replacing was refused): in gzip mode
    /// a warning, as gzip's own check.
    var alreadyExists = false
}

/// The file `path` finally names, links followed, or `nil` when it does not exist (a link to
/// nothing). The corresponding C function is `realpath(3)`.
func existingFile(_ path: Pathname) -> Pathname? {
    try? SystemCalls.resolvedPath(path)
}

/// The descriptor of this process that `path` names, directly or through symbolic links:
/// `/dev/stdin` (0), `/dev/stdout` (1), `/dev/stderr` (2), `/dev/fd/N`, `/proc/self/fd/N` or
/// `/proc/PID/fd/N` with this process's PID; `nil` for any other path. Only the link chain is
/// read (`readlinkat(2)`); the descriptor is not checked to be open. Without `followsLinks`,
/// only `path`'s own spelling counts (a link found there was not examined: ``ExplicitOutput``).
func processDescriptor(named path: Pathname, followsLinks: Bool = true) -> Int32? {
    var current = path
    // The kernel's limit on links followed in one lookup (Linux's 40).
    for _ in 0..<40 {
        if let descriptor = descriptorNamed(current) { return descriptor }
        guard followsLinks, FileInfo.isSymbolicLink(current) else { return nil }
        guard let target = try? SystemCalls.readLink(current, in: SystemCalls.currentDirectory), !target.isEmpty else {
            return nil
        }
        // A relative target is relative to the link's directory.
        guard let next = Pathname(bytes: target.first == UInt8(ascii: "/") ? target : current.directoryPart.bytes + target) else {
            return nil
        }
        current = next
    }
    return nil
}

/// The descriptor `path` names by its spelling alone (see ``processDescriptor(named:)``).
private func descriptorNamed(_ path: Pathname) -> Int32? {
    switch path.description {
    case "/dev/stdin": return SystemCalls.standardInputDescriptor
    case "/dev/stdout": return SystemCalls.standardOutputDescriptor
    case "/dev/stderr": return SystemCalls.standardErrorDescriptor
    default: break
    }
    let text = path.description
    for prefix in ["/dev/fd/", "/proc/self/fd/", "/proc/\(SystemCalls.processID)/fd/"] where text.hasPrefix(prefix) {
        let number = text.dropFirst(prefix.count)
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int32(number) else {
            return nil
        }
        return value
    }
    return nil
}

/// The names in the open directory `descriptor`, without `.` and `..`, sorted bytewise so
/// that a walk is the same on every run.
/// - Parameters:
///   - descriptor: An open directory; it stays open and owned by the caller (the listing
///     reads a descriptor of its own).
///   - path: The directory as messages name it.
/// - Throws: ``ByteStreamError`` with the `errno` of `openat`, `fdopendir` or `readdir`.
/// Blocks on the file system only.
/// The corresponding C functions are `fdopendir(3)` and `readdir(3)`.
func directoryEntries(of descriptor: Int32, path: Pathname) throws -> [Pathname] {
    try SystemCalls.directoryEntries(of: descriptor, target: path.description)
        .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
}

/// The mode of a new file: 0666 less the process's umask.
func defaultPermissions() -> UInt32 {
    0o666 & ~SystemCalls.fileCreationMask()
}

/// The mode of an index (GZIDX, `.gzi`) derived from `source`: an index holds plain bytes
/// of the data (GZIDX windows), so it is never more readable than its source and never
/// writable by group or others: the source's read and owner-write bits, no execute, set-ID or
/// sticky bit. Without a regular source (standard input), the umask's default, narrowed the same way.
func indexPermissions(of source: FileInfo?) -> UInt32 {
    let base = source.flatMap { $0.isRegularFile ? $0.permissions : nil } ?? defaultPermissions()
    return base & 0o644
}

/// Whether `error` is a ``ByteStreamError`` from the system with errno `code`.
///
/// The CLI's `catch` clauses test errno through this, out of line: Swift 6.3.1's optimizer
/// crashes in release builds (an ownership error in CopyPropagation) on every
/// `catch let error as ByteStreamError where error.errno == Errno.x` here, ``Errno`` being
/// another module's.
@inline(never)
func isSystemError(_ error: any Error, _ code: Int32) -> Bool {
    (error as? ByteStreamError)?.errno == code
}

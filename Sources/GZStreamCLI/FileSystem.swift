import ByteStreams
import StreamCache
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat(2)` says of a file: for an input, what `fstat(2)` says of its open descriptor
/// (``OpenedInput/info``), so that every decision is about the file that is read.
struct FileInfo {
    struct Timestamp: Equatable {
        var seconds: Int
        var nanoseconds: Int
    }

    let device: UInt64
    let inode: UInt64
    let mode: mode_t
    /// The number of hard links to the file.
    let linkCount: Int
    /// The size in bytes (of a regular file; what the system says for others).
    let size: Int64
    let owner: uid_t
    let group: gid_t
    let accessTime: Timestamp
    let modificationTime: Timestamp

    /// `nil` when `stat(2)` fails; `errno` then says why. Follows symbolic links unless
    /// `followsLinks` is `false` (`lstat(2)`: a link is described itself).
    init?(path: Pathname, followsLinks: Bool = true) {
        var info = stat()
        guard path.withCString({ followsLinks ? stat($0, &info) : lstat($0, &info) }) == 0 else { return nil }
        self.init(info)
    }

    /// What `fstat(2)` says of an open descriptor; `nil` when it fails (`errno` then says why,
    /// `EBADF` for a descriptor not open).
    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The fields of a `stat` structure that `fstat(2)` or `fstatat(2)` filled.
    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        mode = info.st_mode
        linkCount = Int(info.st_nlink)
        size = Int64(info.st_size)
        owner = info.st_uid
        group = info.st_gid
        accessTime = Timestamp(seconds: Int(info.st_atim.tv_sec), nanoseconds: Int(info.st_atim.tv_nsec))
        modificationTime = Timestamp(seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
    }

    /// Whether `path` itself is a symbolic link (`lstat(2)`).
    static func isSymbolicLink(_ path: Pathname) -> Bool {
        var info = stat()
        return path.withCString { lstat($0, &info) } == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    var isDirectory: Bool { mode & S_IFMT == S_IFDIR }
    var isRegularFile: Bool { mode & S_IFMT == S_IFREG }
    var isSymbolicLink: Bool { mode & S_IFMT == S_IFLNK }
    /// The permission bits, without set-user-ID and set-group-ID.
    var permissions: mode_t { mode & 0o1777 }

    func isSameFile(as other: FileInfo) -> Bool {
        device == other.device && inode == other.inode
    }
}

struct PublishError: Error {
    var message: String
    /// The final path exists already (the move without replacing was refused): in gzip mode
    /// a warning, as gzip's own check.
    var alreadyExists = false
}

/// How many temporary files the interrupt handler can know at once: an output and its index
/// are two; the others are room to spare.
private let pendingCapacity = 4

/// A temporary file for the interrupt handler to remove: its directory's descriptor, its name
/// there, and the device and inode it had when created (a name that another user has since
/// given to another file is left alone).
private struct PendingTemporary {
    var directory: Int32 = -1
    var device: UInt64 = 0
    var inode: UInt64 = 0
    /// The name, NUL-terminated, in 32 bytes (a temporary name is 16).
    var name: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
}

/// The state of each slot of ``pendingRecords``: 0 free, 1 being written (the handler skips
/// it), 2 complete (the handler may read it). A record is written only between 1 and 2, so the
/// handler, which reads one only after seeing 2, never sees half a name.
private let pendingStates: InlineArray<4, Atomic<Int>> = InlineArray { _ in Atomic(0) }

/// The records, allocated once and never freed: a signal on one thread can read them while
/// another thread releases its slot.
private nonisolated(unsafe) let pendingRecords: UnsafeMutablePointer<PendingTemporary> = {
    let records = UnsafeMutablePointer<PendingTemporary>.allocate(capacity: pendingCapacity)
    records.initialize(repeating: PendingTemporary(), count: pendingCapacity)
    return records
}()

/// Set by the interrupt handler before it reads any record. A thread that released a slot
/// and finds it set stops there (the process is about to die of the signal): it must not
/// close the directory or reuse the slot that the handler may be reading.
private let interruptCleanupStarted = Atomic<Bool>(false)

/// Tells the interrupt handler of a temporary file. - Returns: the slot to release, or `nil`
/// when every slot is taken (the file is then not removed on a signal).
/// Thread safety: safe from any thread.
func registerPendingTemporary(directory: Int32, name: Pathname, device: UInt64, inode: UInt64) -> Int? {
    precondition(name.bytes.count < 32, "a temporary name is 16 bytes")
    for slot in 0..<pendingCapacity {
        guard pendingStates[slot].compareExchange(expected: 0, desired: 1, ordering: .sequentiallyConsistent).exchanged else {
            continue
        }
        var record = PendingTemporary(directory: directory, device: device, inode: inode)
        withUnsafeMutableBytes(of: &record.name) { buffer in
            buffer.copyBytes(from: name.bytes)
        }
        pendingRecords[slot] = record
        pendingStates[slot].store(2, ordering: .sequentiallyConsistent)
        return slot
    }
    return nil
}

/// Tells the interrupt handler that the file of `slot` is gone or published. Returns only
/// when the handler cannot be reading the slot; when the handler has started, never returns
/// (the signal ends the process).
/// Thread safety: safe from any thread; `slot` is the caller's.
func releasePendingTemporary(_ slot: Int) {
    pendingStates[slot].store(0, ordering: .sequentiallyConsistent)
    // Both sequentially consistent: either the handler saw the slot free, or this load sees
    // that the handler started, and then the record and its directory stay as they are.
    while interruptCleanupStarted.load(ordering: .sequentiallyConsistent) {
        pause()
    }
}

/// Removes every temporary file registered, each only if its name still refers to the
/// file created. Async-signal-safe: atomics, `fstatat(2)` and `unlinkat(2)` only, called
/// directly (the wrappers in SystemCalls build errors, which allocates).
private func removePendingTemporaries() {
    interruptCleanupStarted.store(true, ordering: .sequentiallyConsistent)
    for slot in 0..<pendingCapacity where pendingStates[slot].load(ordering: .sequentiallyConsistent) == 2 {
        let record = pendingRecords[slot]
        withUnsafeBytes(of: record.name) { name in
            let cName = name.baseAddress!.assumingMemoryBound(to: CChar.self)
            var info = stat()
            if fstatat(record.directory, cName, &info, AT_SYMLINK_NOFOLLOW) == 0,
               UInt64(info.st_dev) == record.device, UInt64(info.st_ino) == record.inode {
                unlinkat(record.directory, cName, 0)
            }
        }
    }
}

/// Removes the temporary outputs (and a cache entry being written) when SIGINT, SIGTERM, SIGHUP or SIGXCPU (`ulimit -t`) arrives,
/// erases the progress line shown on a terminal (``progressColumnsShown``), then dies of the
/// same signal, so an interrupted run leaves neither a partial output, a stray temporary file
/// nor a stale line.
/// A signal ignored when the process started (`nohup`, a background job of a shell without
/// job control) stays ignored, as GNU gzip leaves it.
public func installInterruptCleanup() {
    // Globals are initialised on first use: done here, not in the handler.
    _ = pendingStates[0].load(ordering: .sequentiallyConsistent)
    _ = pendingRecords
    _ = interruptCleanupStarted.load(ordering: .sequentiallyConsistent)
    _ = pendingTemporaryEntryPath.load(ordering: .sequentiallyConsistent)
    _ = progressColumnsShown.load(ordering: .sequentiallyConsistent)
    _ = progressStopped.load(ordering: .sequentiallyConsistent)
    _ = progressDrawing.load(ordering: .sequentiallyConsistent)
    for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGXCPU] {
        let previous = signal(signalNumber, SIG_IGN)
        if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
        signal(signalNumber) { received in
            removePendingTemporaries()
            if let path = UnsafePointer<CChar>(bitPattern: pendingTemporaryEntryPath.load(ordering: .sequentiallyConsistent)) {
                unlink(path)
            }
            eraseProgressLineFromSignalHandler()
            signal(received, SIG_DFL)
            raise(received)
        }
    }
}

extension FileInfo {
    /// What `fstat(2)` or `fstatat(2)` filled in.
    init(status: stat) {
        self.init(status)
    }
}

/// The file `path` finally names, links followed, or `nil` when it does not exist (a link to
/// nothing). The corresponding C function is `realpath(3)`.
func existingFile(_ path: Pathname) -> Pathname? {
    guard let resolved = path.withCString({ realpath($0, nil) }) else { return nil }
    defer { free(resolved) }
    return Pathname(cString: resolved)
}

/// The descriptor of this process that `path` names, directly or through symbolic links:
/// `/dev/stdin` (0), `/dev/stdout` (1), `/dev/stderr` (2), `/dev/fd/N`, `/proc/self/fd/N` or
/// `/proc/PID/fd/N` with this process's PID; `nil` for any other path. Only the link chain is
/// read (`readlink(2)`); the descriptor is not checked to be open. Without `followsLinks`,
/// only `path`'s own spelling counts (a link found there was not examined: ``ExplicitOutput``).
func processDescriptor(named path: Pathname, followsLinks: Bool = true) -> Int32? {
    var current = path
    // The kernel's limit on links followed in one lookup (Linux's 40).
    for _ in 0..<40 {
        if let descriptor = descriptorNamed(current) { return descriptor }
        guard followsLinks, FileInfo.isSymbolicLink(current) else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = current.withCString { readlink($0, &buffer, buffer.count - 1) }
        guard count > 0 else { return nil }
        let target = buffer[..<count].map { UInt8(bitPattern: $0) }
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
    case "/dev/stdin": return STDIN_FILENO
    case "/dev/stdout": return STDOUT_FILENO
    case "/dev/stderr": return STDERR_FILENO
    default: break
    }
    let text = path.description
    for prefix in ["/dev/fd/", "/proc/self/fd/", "/proc/\(getpid())/fd/"] where text.hasPrefix(prefix) {
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

/// The default thread count of every command (pack's deflating, BGZF's inflating, the
/// cache's): the processors this process may run on (its affinity mask,
/// ``SystemCalls/allowedProcessorCount()``), at most ``maximumThreads`` (the most the streams take).
func availableProcessorCount() -> Int {
    min(SystemCalls.allowedProcessorCount(), maximumThreads)
}

/// The mode of a new file: 0666 less the process's umask.
func defaultPermissions() -> mode_t {
    let mask = umask(0)
    umask(mask)
    return 0o666 & ~mask
}

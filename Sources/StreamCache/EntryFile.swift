import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An entry's file, open for reading: its descriptor, its owner, and the identity (device and
/// inode) it had when opened, so that removing it after damage never removes a newer file
/// another writer renamed into its place. Opened and removed relative to the cache directory's
/// descriptor, which it keeps open. Not thread-safe (closing changes it): one thread, the
/// reader's, uses it.
final class EntryFile {
    let directory: CacheDirectory
    let name: Pathname
    let descriptor: Int32
    let size: Int64
    /// The modification time: the last store or hit, in seconds since 1970.
    let lastUse: Double
    /// The file's owner; an entry is data only when it is the effective user.
    let owner: uid_t
    private let device: UInt
    private let inode: UInt
    private var isClosed = false

    /// The path, for messages.
    var path: String { directory.display(name) }

    /// Whether another user owns the file. Such a file is never read as data: whoever owns
    /// it could have written anything (an unencrypted entry is not authenticated).
    var isForeign: Bool { owner != geteuid() }

    /// Opens `name` in `directory` for reading, or returns `nil` when there is no such file.
    /// - Throws: ``DamageFound`` (`notCacheEntry`) when `name` is a symbolic link, a directory,
    ///   a FIFO or anything but a regular file (never followed or blocked on); the file
    ///   system's other errors (``ByteStreamError``).
    /// The corresponding C functions are `openat(2)` and `fstat(2)`.
    init?(opening name: Pathname, in directory: CacheDirectory) throws {
        let fd: Int32
        let display = directory.display(name)
        do {
            // O_NONBLOCK: a FIFO under an entry's name must not block the open.
            fd = try SystemCalls.open(name, in: directory.descriptor, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK, target: display)
        } catch let error as ByteStreamError where error.errno == ENOENT {
            return nil
        } catch let error as ByteStreamError where error.errno == ELOOP {
            throw DamageFound(damage: .notCacheEntry)
        } catch let error as ByteStreamError {
            // A socket (ENXIO), or a device without a driver (ENXIO, ENODEV), fails to open:
            // not a regular file either, so damage rather than an error.
            if let info = try? directory.status(of: name), info.st_mode & S_IFMT != S_IFREG {
                throw DamageFound(damage: .notCacheEntry)
            }
            throw error
        }
        let info: stat
        do {
            info = try SystemCalls.status(of: fd, target: display)
            guard info.st_mode & S_IFMT == S_IFREG else { throw DamageFound(damage: .notCacheEntry) }
        } catch {
            try? SystemCalls.close(fd, target: display)
            throw error
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        self.directory = directory
        self.name = name
        descriptor = fd
        size = Int64(info.st_size)
        lastUse = info.modificationSeconds
        owner = info.st_uid
        device = UInt(info.st_dev)
        inode = UInt(info.st_ino)
    }

    deinit { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        try? SystemCalls.close(descriptor, target: path)
    }

    /// Reads the entry's first `count` bytes (fewer when the file is shorter): the header,
    /// and for an encrypted entry its seal and the start of its payload
    /// (``EntryFormat/leadingByteCount``).
    func readLeadingBytes(_ count: Int = EntryFormat.leadingByteCount) throws -> [UInt8] {
        try readBytes(of: descriptor, count: count, at: 0, target: path)
    }

    /// Marks a hit: the modification time becomes now. Best effort: a file this user may not
    /// change (another owner's, in a shared directory) keeps its time.
    func markUsed() {
        try? SystemCalls.setTimes(of: descriptor, target: path)
    }

    /// Removes the file's name when it is still the file this object opened.
    func removeIfUnchanged() {
        Self.remove(name, in: directory) { UInt($0.st_dev) == device && UInt($0.st_ino) == inode }
    }

    /// Removes `name` from `directory` only if it is what `isDamaged` says to remove (given its
    /// `fstatat(2)`), even while other processes rename new entries into place: comparing, then
    /// calling `unlinkat(2)` would remove a new entry renamed in between. So what is there is
    /// first taken away by `renameat(2)` (atomic) to a temporary name beside it and looked at
    /// there: the damaged file is removed; anything else (a newer entry) is put back with
    /// `linkat(2)`, unless yet another file has been renamed into place meanwhile, which is
    /// newer still and stays. Meanwhile a lookup of `name` finds nothing: a miss. Best effort:
    /// a failure leaves things as they are (or a temporary name, pruned after an hour); see
    /// ``removeOrThrow(_:in:ifStill:)`` to learn of it. Every name is taken relative to the
    /// directory's descriptor.
    /// Returns whether the file was removed.
    @discardableResult
    static func remove(_ name: Pathname, in directory: CacheDirectory, ifStill isDamaged: (stat) -> Bool) -> Bool {
        (try? removeOrThrow(name, in: directory, ifStill: isDamaged)) ?? false
    }

    /// ``remove(_:in:ifStill:)``, saying why a file to remove stays.
    /// - Returns: Whether the file was removed: `false` when there is no such name, or it is
    ///   not (or no longer) what `isDamaged` says to remove.
    /// - Throws: ``ByteStreamError`` of the `fstatat(2)` or `renameat(2)` of `name` (a directory
    ///   that may not be written, a file that may not be changed), or of the `unlinkat(2)` of
    ///   the file taken aside (left there under a temporary name, pruned after an hour).
    static func removeOrThrow(_ name: Pathname, in directory: CacheDirectory, ifStill isDamaged: (stat) -> Bool) throws -> Bool {
        let fd = directory.descriptor
        let aside = Pathname(try TemporaryEntry.randomName())
        guard let seen = try directory.status(of: name), isDamaged(seen) else { return false }
        do {
            try SystemCalls.rename(name, in: fd, to: aside, in: fd, target: directory.display(name))
        } catch where (error as? ByteStreamError)?.errno == ENOENT {
            return false  // gone meanwhile: removed by another process
        }
        guard let taken = try? directory.status(of: aside) else { return false }
        if !isDamaged(taken) {
            if taken.st_mode & S_IFMT == S_IFDIR {
                // linkat(2) cannot name a directory again; it goes back if the name is still free.
                if (try? directory.status(of: name)) == nil { try? SystemCalls.rename(aside, in: fd, to: name, in: fd) }
                return false
            }
            _ = try? SystemCalls.link(aside, in: fd, to: name, in: fd)
            _ = try? directory.unlink(aside)
            return false
        }
        try directory.unlink(aside)
        return true
    }
}

/// Up to `count` bytes of the file `fd` from `offset`: fewer only at the end of the file.
/// The corresponding C function is `pread(2)`.
func readBytes(of fd: Int32, count: Int, at offset: Int64, target: String) throws -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
        let got = try bytes.withUnsafeMutableBytes {
            try SystemCalls.read(fd, $0.baseAddress! + filled, count - filled, at: offset + Int64(filled), target: target)
        }
        if got == 0 { break }
        filled += got
    }
    return Array(bytes[0..<filled])
}

extension stat {
    /// The modification time (an entry's last use), in seconds since 1970.
    var modificationSeconds: Double {
        #if canImport(Darwin)
        let time = st_mtimespec
        #else
        let time = st_mtim
        #endif
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The payload of an entry file: its bytes from the end of the header (and the seal, when
/// encrypted: ``EntryFormat/payloadOffset(isEncrypted:)``) up to the size
/// the file had when opened (``EntryFile/size``), read with `pread(2)` at an offset of its own.
/// A file that another writer extends in place while it is read (appends, or a sparse
/// `ftruncate`) is read no further than that size, so it cannot keep a reader reading; what
/// lies past it is not part of the entry that was opened. A file cut meanwhile ends early,
/// which the decoders report as truncated.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: the read offset in the file, `Int64`;
/// setting it moves it (what `GzipInputStream` does to decode a member again). Does not own
/// or close the descriptor. Reads block. Not thread-safe.
/// The corresponding C function is `pread(2)`.
final class EntryPayloadInputStream: ByteInputStream {
    private let file: EntryFile
    private var offset: Int64

    init(file: EntryFile, isEncrypted: Bool) {
        self.file = file
        offset = Int64(EntryFormat.payloadOffset(isEncrypted: isEncrypted))
        super.init()
    }

    override func openBacking() throws {}
    override func closeBacking() throws {}

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = Int(min(Int64(maxLength), max(0, file.size - offset)))
        guard count > 0 else { return 0 }
        let got = try SystemCalls.read(file.descriptor, buffer, count, at: offset, target: file.path)
        offset += Int64(got)
        return got
    }

    override func property(forKey key: ByteStream.PropertyKey) -> Any? {
        key == .fileCurrentOffset ? offset : nil
    }

    override func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffset, let newOffset = int64(value), newOffset >= 0 else { return false }
        offset = newOffset
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }
}

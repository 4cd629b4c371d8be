import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An entry's file, open for reading: its descriptor, and the identity (device and inode) it had
/// when opened, so that removing it after damage never removes a newer file another writer
/// renamed into its place.
final class EntryFile: @unchecked Sendable {
    let path: Pathname
    let descriptor: Int32
    let size: Int64
    /// The modification time: the last store or hit, in seconds since 1970.
    let lastUse: Double
    private let device: UInt
    private let inode: UInt
    private var isClosed = false

    /// Opens `path` for reading, or returns `nil` when there is no such file.
    /// - Throws: ``DamageFound`` (`notCacheEntry`) when `path` is a symbolic link, a directory,
    ///   a FIFO or anything but a regular file (never followed or blocked on); the file
    ///   system's other errors (``ByteStreamError``).
    init?(opening path: Pathname) throws {
        let fd: Int32
        do {
            // O_NONBLOCK: a FIFO under an entry's name must not block the open.
            fd = try SystemCalls.open(path, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        } catch let error as ByteStreamError where error.errno == ENOENT {
            return nil
        } catch let error as ByteStreamError where error.errno == ELOOP {
            throw DamageFound(damage: .notCacheEntry)
        } catch let error as ByteStreamError {
            // A socket (ENXIO), or a device without a driver (ENXIO, ENODEV), fails to open:
            // not a regular file either, so damage rather than an error.
            if let info = try? SystemCalls.status(ofPath: path), info.st_mode & S_IFMT != S_IFREG {
                throw DamageFound(damage: .notCacheEntry)
            }
            throw error
        }
        let info: stat
        do {
            info = try SystemCalls.status(of: fd, target: path.description)
            guard info.st_mode & S_IFMT == S_IFREG else { throw DamageFound(damage: .notCacheEntry) }
        } catch {
            try? SystemCalls.close(fd, target: path.description)
            throw error
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        self.path = path
        descriptor = fd
        size = Int64(info.st_size)
        lastUse = info.modificationSeconds
        device = UInt(info.st_dev)
        inode = UInt(info.st_ino)
    }

    deinit { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        try? SystemCalls.close(descriptor, target: path.description)
    }

    /// Reads the 16-byte entry header from the start of the file.
    func readHeader() throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: EntryFormat.headerByteCount)
        var count = 0
        while count < bytes.count {
            let got = try bytes.withUnsafeMutableBytes {
                try SystemCalls.read(descriptor, $0.baseAddress! + count, $0.count - count, target: path.description)
            }
            if got == 0 { break }
            count += got
        }
        return Array(bytes[0..<count])
    }

    /// Marks a hit: the modification time becomes now. Best effort: a file this user may not
    /// change (another owner's, in a shared directory) keeps its time.
    func markUsed() {
        try? SystemCalls.setTimes(of: descriptor, target: path.description)
    }

    /// Removes the file at `path` when it is still the file this object opened.
    func removeIfUnchanged() {
        Self.remove(path) { UInt($0.st_dev) == device && UInt($0.st_ino) == inode }
    }

    /// Removes what is at `path` only if it is what `isDamaged` says to remove (given its
    /// `lstat(2)`), even while other processes rename new entries into place: comparing, then
    /// calling `unlink(2)` would remove a new entry renamed in between. So what is there is
    /// first taken away by `rename(2)` (atomic) to a temporary name beside it and looked at
    /// there: the damaged file is removed; anything else (a newer entry) is put back with
    /// `link(2)`, unless yet another file has been renamed into place meanwhile, which is newer
    /// still and stays. Meanwhile a lookup of `path` finds nothing: a miss. Best effort: a
    /// failure leaves things as they are (or a temporary name, pruned after an hour).
    /// Returns whether the file was removed.
    @discardableResult
    static func remove(_ path: Pathname, ifStill isDamaged: (stat) -> Bool) -> Bool {
        guard let seen = try? SystemCalls.status(ofPath: path), isDamaged(seen),
              let slash = path.bytes.lastIndex(of: UInt8(ascii: "/")),
              let aside = Pathname(bytes: path.bytes[...slash] + Array(TemporaryEntry.randomName().utf8)),
              (try? SystemCalls.rename(path, to: aside)) != nil else { return false }
        guard let taken = try? SystemCalls.status(ofPath: aside) else { return false }
        if !isDamaged(taken) {
            if taken.st_mode & S_IFMT == S_IFDIR {
                // link(2) cannot name a directory again; it goes back if the name is still free.
                if (try? SystemCalls.status(ofPath: path)) == nil { try? SystemCalls.rename(aside, to: path) }
                return false
            }
            _ = try? SystemCalls.link(aside, to: path)
            _ = try? SystemCalls.unlink(aside)
            return false
        }
        _ = try? SystemCalls.unlink(aside)
        return true
    }
}

extension stat {
    /// The modification time (an entry's last use), in seconds since 1970.
    var modificationSeconds: Double { Double(st_mtim.tv_sec) + Double(st_mtim.tv_nsec) / 1e9 }
}

/// The payload of an entry file: its bytes from the end of the 16-byte header up to the size
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
final class EntryPayloadInputStream: ByteInputStream, @unchecked Sendable {
    private let file: EntryFile
    private var offset = Int64(EntryFormat.headerByteCount)

    init(file: EntryFile) {
        self.file = file
        super.init()
    }

    override func openBacking() throws {}
    override func closeBacking() throws {}

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = Int(min(Int64(maxLength), max(0, file.size - offset)))
        guard count > 0 else { return 0 }
        let got = try SystemCalls.read(file.descriptor, buffer, count, at: offset, target: file.path.description)
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

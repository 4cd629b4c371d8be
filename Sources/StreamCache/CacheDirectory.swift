import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A cache directory that cannot be trusted, so the cache refuses to use it.
///
/// Whoever can write the directory can replace an entry, and an unencrypted entry's bytes
/// are then theirs: as ssh's `StrictModes` does for `~/.ssh`, the directory must be owned by
/// the effective user and writable by no one else. Its parent directories are the user's
/// choice; its own name must not be a symbolic link (an owner of the parent could point it
/// elsewhere between two operations).
public struct CacheDirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the directory is refused.
    public enum Reason: Sendable, Equatable {
        /// The directory's name is a symbolic link.
        case symbolicLink
        /// The name is not a directory at all.
        case notDirectory
        /// Another user owns it: `owner` is its uid, `effectiveUser` this process's.
        case owner(UInt32, effectiveUser: UInt32)
        /// Its group or others may write it: `mode` is its permission bits.
        case writableByOthers(mode: UInt32)
    }

    /// The directory's path, as given.
    public var path: String
    /// What is wrong with it.
    public var reason: Reason

    /// The directory at `path` refused for `reason`.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// What is wrong and what to do, without the path: `untrusted cache directory: owned by
    /// uid 65534 (it must be owned by uid 0, the effective user, and writable by no one else)`.
    public var message: String {
        switch reason {
        case .notDirectory: "not a directory"
        case .symbolicLink: "untrusted cache directory: a symbolic link (give the directory itself)"
        case .owner(let owner, let effectiveUser):
            "untrusted cache directory: owned by uid \(owner) (it must be owned by uid \(effectiveUser), "
                + "the effective user, and writable by no one else)"
        case .writableByOthers(let mode):
            "untrusted cache directory: writable by group or others (mode 0\(String(mode, radix: 8)); "
                + "it must be writable by its owner only)"
        }
    }

    /// The message a user reads: the path and what is wrong with it.
    public var description: String { path + ": " + message }
}

/// The cache directory, open: every entry, temporary file, rename, link and removal is taken
/// relative to this descriptor (`openat(2)`, `renameat(2)`, `linkat(2)`, `unlinkat(2)`,
/// `fstatat(2)`), so the directory checked is the directory used, whatever happens to its
/// name meanwhile.
///
/// Opened with `O_DIRECTORY | O_NOFOLLOW` and checked with `fstat(2)` on the descriptor:
/// owned by the effective user, not writable by group or others, else
/// ``CacheDirectoryError``. Owns its descriptor, closed when released. Thread-safe and
/// `Sendable` by construction: nothing in it changes after opening.
final class CacheDirectory: Sendable {
    /// The path it was opened by, for messages.
    let path: Pathname
    let descriptor: Int32

    /// Opens and checks the directory at `path`.
    /// - Parameter creating: Make the directory (mode 0700, and missing parents, 0700 less
    ///   the umask) when there is none.
    /// - Returns: `nil` when there is no such directory and `creating` is `false`.
    /// - Throws: ``CacheDirectoryError`` for a directory not to trust (or not a directory);
    ///   ``ByteStreamError`` for the file system's errors. Blocks.
    static func open(_ path: Pathname, creating: Bool) throws -> CacheDirectory? {
        let name = Self.withoutTrailingSlashes(path)
        do {
            return try CacheDirectory(opening: name, shownAs: path)
        } catch let error as ByteStreamError where error.errno == ENOENT {
            guard creating else { return nil }
        }
        try makeParents(of: name)
        let made = try SystemCalls.makeDirectory(name, in: AT_FDCWD, mode: 0o700, target: path.description)
        return try CacheDirectory(opening: name, shownAs: path, madeHere: made)
    }

    private init(opening name: Pathname, shownAs path: Pathname, madeHere: Bool = false) throws {
        let fd: Int32
        do {
            fd = try SystemCalls.open(name, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW, target: path.description)
        } catch let error as ByteStreamError where error.errno == ENOTDIR || error.errno == ELOOP {
            // Linux says ENOTDIR for a link under O_DIRECTORY | O_NOFOLLOW, and for a parent
            // that is not a directory: only the name itself is told apart.
            let type = ((try? SystemCalls.status(of: name, in: AT_FDCWD))?.st_mode ?? 0) & S_IFMT
            if type == S_IFLNK { throw CacheDirectoryError(path: path.description, reason: .symbolicLink) }
            if type != 0 && type != S_IFDIR { throw CacheDirectoryError(path: path.description, reason: .notDirectory) }
            throw error
        }
        do {
            try Self.check(fd, madeHere: madeHere, path: path)
        } catch {
            try? SystemCalls.close(fd, target: path.description)
            throw error
        }
        self.path = path
        descriptor = fd
    }

    /// Refuses the open directory `fd` unless the effective user owns it and no one else may
    /// write it; one made here is first made exactly 0700 (the umask may have taken bits).
    private static func check(_ fd: Int32, madeHere: Bool, path: Pathname) throws {
        if madeHere { try SystemCalls.changeMode(of: fd, to: 0o700, target: path.description) }
        let info = try SystemCalls.status(of: fd, target: path.description)
        if info.st_uid != geteuid() {
            throw CacheDirectoryError(path: path.description, reason: .owner(UInt32(info.st_uid), effectiveUser: UInt32(geteuid())))
        }
        if info.st_mode & 0o022 != 0 {
            throw CacheDirectoryError(path: path.description, reason: .writableByOthers(mode: UInt32(info.st_mode & 0o7777)))
        }
    }

    deinit { try? SystemCalls.close(descriptor, target: path.description) }

    /// `name` in this directory, for messages: the directory's path, `/`, the name.
    func display(_ name: Pathname) -> String { path.description + "/" + name.description }

    /// The names in the directory, without `.` and `..`. The corresponding C function is
    /// `fdopendir(3)` (on a duplicate of the descriptor).
    func names() throws -> [Pathname] {
        try SystemCalls.directoryEntries(of: descriptor, target: path.description)
    }

    /// The status of `name` in the directory (a symbolic link itself), or `nil` when there is
    /// no such name. The corresponding C function is `fstatat(2)`.
    func status(of name: Pathname) throws -> stat? {
        try SystemCalls.status(of: name, in: descriptor, target: display(name))
    }

    /// Removes `name` (not a directory). Returns `false` when there was no such name.
    /// The corresponding C function is `unlinkat(2)`.
    @discardableResult
    func unlink(_ name: Pathname) throws -> Bool {
        try SystemCalls.unlink(name, in: descriptor, target: display(name))
    }

    /// `path` without the slashes at its end (`/` stays): `dir/` would follow a link `dir`.
    private static func withoutTrailingSlashes(_ path: Pathname) -> Pathname {
        var bytes = path.bytes[...]
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        return Pathname(bytes: bytes) ?? path
    }

    /// Makes the missing directories above `path`, mode 0700 (less the umask), as
    /// `mkdir -p` would; existing ones are left as they are (they are the user's choice).
    private static func makeParents(of path: Pathname) throws {
        let components = path.bytes.split(separator: UInt8(ascii: "/"))
        var prefix: [UInt8] = path.bytes.first == UInt8(ascii: "/") ? [] : Array(".".utf8)
        for component in components.dropLast() {
            prefix += [UInt8(ascii: "/")] + component
            guard let parent = Pathname(bytes: prefix) else { continue }
            try SystemCalls.makeDirectory(parent, in: AT_FDCWD, mode: 0o700)
        }
    }
}

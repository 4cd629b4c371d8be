#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File-system calls relative to an open directory descriptor, and calls on an open file's
/// descriptor, for code that must not look a name up twice.
///
/// A name in a directory that another user can write may be replaced between two calls that
/// take it (a file swapped for a symbolic link to `/etc/shadow` between a `stat` and a `chmod`:
/// GNU gzip's CVE-2005-0988). So a directory is opened once, every name is taken relative to
/// that descriptor (`openat(2)`, `fstatat(2)`, `renameat(2)`, `linkat(2)`, `unlinkat(2)`), and a
/// file's attributes are set on its own descriptor (`fchown(2)`, `fchmod(2)`, `futimens(2)`).
/// `name` is one path component or a path relative to the directory; `directory` may be
/// `AT_FDCWD`. Every call retries on `EINTR` where it can be interrupted and turns `errno`
/// into a ``ByteStreamError`` naming the operation and `target` (or the name).
extension SystemCalls {
    /// Opens `name` in `directory`; `O_CLOEXEC` is always added.
    /// - Returns: The new descriptor, owned by the caller.
    /// The corresponding C function is `openat(2)`.
    package static func open(_ name: Pathname, in directory: Int32, flags: Int32, mode: mode_t = 0o666,
                             target: String? = nil) throws -> Int32 {
        let fd = retryingOnInterrupt { name.withCString { openat(directory, $0, flags | O_CLOEXEC, mode) } }
        if fd >= 0 { return fd }
        throw ByteStreamError(.system(errno: errno), operation: "open", target: target ?? name.description)
    }

    /// The status of `name` in `directory`, or `nil` when there is no such name; a symbolic
    /// link is described itself unless `followsLinks`.
    /// The corresponding C function is `fstatat(2)`.
    package static func status(of name: Pathname, in directory: Int32, followsLinks: Bool = false,
                               target: String? = nil) throws -> stat? {
        var info = stat()
        let flags = followsLinks ? 0 : AT_SYMLINK_NOFOLLOW
        if name.withCString({ fstatat(directory, $0, &info, flags) }) == 0 { return info }
        if errno == ENOENT { return nil }
        throw ByteStreamError(.system(errno: errno), operation: "stat", target: target ?? name.description)
    }

    /// Sets an open file's owner and group. The corresponding C function is `fchown(2)`.
    package static func changeOwner(of fd: Int32, owner: uid_t, group: gid_t, target: String) throws {
        if fchown(fd, owner, group) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "change owner", target: target)
        }
    }

    /// Sets an open file's permission bits. The corresponding C function is `fchmod(2)`.
    package static func changeMode(of fd: Int32, to mode: mode_t, target: String) throws {
        if fchmod(fd, mode) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "change mode", target: target)
        }
    }

    /// Sets an open file's access and modification times, to the nanosecond; a `nil` access
    /// time is left as it is.
    /// The corresponding C function is `futimens(2)`.
    package static func setTimes(of fd: Int32, access: FileInfo.Timestamp?, modification: FileInfo.Timestamp,
                                 target: String) throws {
        var times = [timespec(access), timespec(modification)]
        if futimens(fd, &times) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "set times", target: target)
        }
    }

    /// Sets the access and modification times of `name` in `directory` itself, a symbolic link
    /// included (it is not followed), to the nanosecond; a `nil` access time is left as it is.
    /// For a symbolic link, which cannot be opened to use ``setTimes(of:access:modification:target:)``.
    /// The corresponding C function is `utimensat(2)` with `AT_SYMLINK_NOFOLLOW`.
    package static func setTimes(of name: Pathname, in directory: Int32, access: FileInfo.Timestamp?,
                                 modification: FileInfo.Timestamp, target: String? = nil) throws {
        var times = [timespec(access), timespec(modification)]
        if name.withCString({ utimensat(directory, $0, &times, AT_SYMLINK_NOFOLLOW) }) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "set times", target: target ?? name.description)
        }
    }

    /// Sets the owner and group of `name` in `directory` itself, a symbolic link included (it
    /// is not followed). The corresponding C function is `fchownat(2)` with `AT_SYMLINK_NOFOLLOW`.
    package static func changeOwner(of name: Pathname, in directory: Int32, owner: uid_t, group: gid_t,
                                    target: String? = nil) throws {
        if name.withCString({ fchownat(directory, $0, owner, group, AT_SYMLINK_NOFOLLOW) }) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "change owner", target: target ?? name.description)
        }
    }

    /// Makes `name` in `directory` a symbolic link whose target is `linkTarget`, stored as
    /// given (a relative target is resolved from the link's directory when followed), never
    /// replacing.
    /// - Returns: `false` when `name` exists already.
    /// The corresponding C function is `symlinkat(2)`.
    @discardableResult
    package static func makeSymbolicLink(_ name: Pathname, in directory: Int32, to linkTarget: Pathname,
                                         target: String? = nil) throws -> Bool {
        let result = linkTarget.withCString { to in name.withCString { symlinkat(to, directory, $0) } }
        if result == 0 { return true }
        if errno == EEXIST { return false }
        throw ByteStreamError(.system(errno: errno), operation: "create symbolic link", target: target ?? name.description)
    }

    /// Renames `name` in `directory` to `newName` in `newDirectory`, replacing what is there.
    /// The corresponding C function is `renameat(2)`.
    package static func rename(_ name: Pathname, in directory: Int32, to newName: Pathname, in newDirectory: Int32,
                               target: String? = nil) throws {
        let result = name.withCString { from in newName.withCString { to in renameat(directory, from, newDirectory, to) } }
        if result != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "rename", target: target ?? newName.description)
        }
    }

    /// Makes `newName` in `newDirectory` another name of the file `name` in `directory` names
    /// (a symbolic link is not followed), never replacing.
    /// - Returns: `false` when `newName` exists already.
    /// The corresponding C function is `linkat(2)`.
    @discardableResult
    package static func link(_ name: Pathname, in directory: Int32, to newName: Pathname, in newDirectory: Int32,
                             target: String? = nil) throws -> Bool {
        let result = name.withCString { from in newName.withCString { to in linkat(directory, from, newDirectory, to, 0) } }
        if result == 0 { return true }
        if errno == EEXIST { return false }
        throw ByteStreamError(.system(errno: errno), operation: "link", target: target ?? newName.description)
    }

    /// The target of the symbolic link `name` in `directory`, as stored (a relative target is
    /// relative to the link's directory); with an empty `name`, of the link that `directory`
    /// itself is (a descriptor opened `O_PATH|O_NOFOLLOW`), so that the link read is the one
    /// examined. A target longer than `PATH_MAX` bytes is cut there.
    /// - Returns: The target's bytes (empty only if the system returned none).
    /// - Throws: ``ByteStreamError`` with `readlinkat`'s `errno` (operation "read link"; `EINVAL`:
    ///   not a symbolic link).
    /// Does not block beyond the file system. The corresponding C function is `readlinkat(2)`.
    package static func readLink(_ name: Pathname, in directory: Int32, target: String? = nil) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = name.withCString { cName in
            buffer.withUnsafeMutableBytes { bytes in
                readlinkat(directory, cName, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count - 1)
            }
        }
        if count < 0 {
            throw ByteStreamError(.system(errno: errno), operation: "read link", target: target ?? name.description)
        }
        return Array(buffer[..<count])
    }

    /// The absolute path that `path` finally names: every symbolic link in it followed, `.`
    /// and `..` resolved. Looks `path` up anew: for messages and for a path the user chose,
    /// not for a decision about a file another user may replace.
    /// - Throws: ``ByteStreamError`` with `realpath`'s `errno` (operation "resolve"; `ENOENT`:
    ///   it names nothing, or a link to nothing).
    /// Does not block beyond the file system. The corresponding C function is `realpath(3)`.
    package static func resolvedPath(_ path: Pathname) throws -> Pathname {
        guard let resolved = path.withCString({ realpath($0, nil) }) else {
            throw ByteStreamError(.system(errno: errno), operation: "resolve", target: path.description)
        }
        defer { free(resolved) }
        return Pathname(cString: resolved)
    }

    /// Removes `name` from `directory` (an empty directory when `isDirectory`).
    /// - Returns: `false` when there was no such name.
    /// The corresponding C function is `unlinkat(2)`.
    @discardableResult
    package static func unlink(_ name: Pathname, in directory: Int32, isDirectory: Bool = false,
                               target: String? = nil) throws -> Bool {
        if name.withCString({ unlinkat(directory, $0, isDirectory ? AT_REMOVEDIR : 0) }) == 0 { return true }
        if errno == ENOENT { return false }
        throw ByteStreamError(.system(errno: errno), operation: "remove", target: target ?? name.description)
    }

    /// Makes the directory `name` in `directory` with `mode` (less the umask).
    /// - Returns: `false` when `name` exists already (as anything: the caller opens and checks it).
    /// The corresponding C function is `mkdirat(2)`.
    @discardableResult
    package static func makeDirectory(_ name: Pathname, in directory: Int32, mode: mode_t,
                                      target: String? = nil) throws -> Bool {
        if name.withCString({ mkdirat(directory, $0, mode) }) == 0 { return true }
        if errno == EEXIST { return false }
        throw ByteStreamError(.system(errno: errno), operation: "create directory", target: target ?? name.description)
    }

    /// The names in the open directory `fd`, without `.` and `..`, as bytes, in no particular
    /// order. `fd` stays open and is not moved: the listing reads a duplicate of it.
    /// The corresponding C functions are `fdopendir(3)` and `readdir(3)`.
    package static func directoryEntries(of fd: Int32, target: String) throws -> [Pathname] {
        // fdopendir takes the descriptor over (closedir closes it): hand it a duplicate,
        // opened anew so that its offset is its own.
        let duplicate = try open(".", in: fd, flags: O_RDONLY | O_DIRECTORY, target: target)
        guard let stream = fdopendir(duplicate) else {
            let code = errno
            try? close(duplicate, target: target)
            throw ByteStreamError(.system(errno: code), operation: "read directory", target: target)
        }
        defer { closedir(stream) }
        var names: [Pathname] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 {
                    throw ByteStreamError(.system(errno: errno), operation: "read directory", target: target)
                }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Pathname(bytes: $0.prefix { $0 != 0 }) }
            if let name, name != ".", name != ".." { names.append(name) }
        }
    }

    /// Renames `name` in `directory` to `newName` in `newDirectory` only if `newName` does not
    /// exist, in one step: unlike `linkat` then `unlinkat`, no moment exists in which the file
    /// has both names (another user who can write the directory could take the old name then).
    /// - Returns: `true` when renamed, `false` when `newName` exists, `nil` when the system or
    ///   the file system cannot rename without replacing (`ENOSYS`, `EINVAL`): the caller then
    ///   links and unlinks.
    /// The corresponding C function is `renameat2(2)` with `RENAME_NOREPLACE`, looked up at run
    /// time (`dlsym(3)`): Swift's Glibc module does not declare it.
    package static func renameWithoutReplacing(_ name: Pathname, in directory: Int32, to newName: Pathname,
                                               in newDirectory: Int32, target: String? = nil) throws -> Bool? {
        #if os(Linux)
        guard let renameat2 = renameat2Function else { return nil }
        // RENAME_NOREPLACE from <linux/fs.h>.
        let noReplace: UInt32 = 1
        let result = name.withCString { from in
            newName.withCString { to in renameat2(directory, from, newDirectory, to, noReplace) }
        }
        if result == 0 { return true }
        switch errno {
        case EEXIST: return false
        case ENOSYS, EINVAL: return nil
        default:
            throw ByteStreamError(.system(errno: errno), operation: "rename", target: target ?? newName.description)
        }
        #else
        return nil
        #endif
    }
}

extension timespec {
    /// A time for `futimens(2)` and `utimensat(2)`; `nil` is `UTIME_OMIT` (leave it), a macro
    /// Swift does not import: (1 << 30) - 2.
    fileprivate init(_ time: FileInfo.Timestamp?) {
        guard let time else {
            self.init(tv_sec: 0, tv_nsec: (1 << 30) - 2)
            return
        }
        self.init(tv_sec: time_t(time.seconds), tv_nsec: time.nanoseconds)
    }
}

#if os(Linux)
/// `renameat2(2)` from the C library (glibc 2.28 and later), or `nil`.
private let renameat2Function: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32)? = {
    // RTLD_DEFAULT: the global scope, the C library included.
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self)
}()
#endif

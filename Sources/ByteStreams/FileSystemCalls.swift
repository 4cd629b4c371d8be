#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system calls beside the stream calls, for modules that keep files of their own
/// (the cache): each retries on `EINTR` where the call can be interrupted and turns `errno`
/// into a ``ByteStreamError`` naming the operation and the path.
extension SystemCalls {
    /// The corresponding C function is `mkdir(2)`. An existing directory is not an error.
    package static func makeDirectory(_ path: Pathname, mode: mode_t) throws {
        if path.withCString({ mkdir($0, mode) }) == 0 || errno == EEXIST { return }
        throw ByteStreamError(.system(errno: errno), operation: "create directory", target: path.description)
    }

    /// The corresponding C function is `rename(2)`.
    package static func rename(_ source: Pathname, to destination: Pathname) throws {
        let result = source.withCString { from in destination.withCString { to in Glibc.rename(from, to) } }
        if result != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "rename", target: source.description)
        }
    }

    /// Makes `new` another name of the file `existing` names (a link is not followed). Returns
    /// `false` when `new` exists already. The corresponding C function is `link(2)`.
    @discardableResult
    package static func link(_ existing: Pathname, to new: Pathname) throws -> Bool {
        let result = existing.withCString { from in new.withCString { to in Glibc.link(from, to) } }
        if result == 0 { return true }
        if errno == EEXIST { return false }
        throw ByteStreamError(.system(errno: errno), operation: "link", target: new.description)
    }

    /// The corresponding C function is `unlink(2)`. Returns `false` when there was no such file.
    @discardableResult
    package static func unlink(_ path: Pathname) throws -> Bool {
        if path.withCString({ Glibc.unlink($0) }) == 0 { return true }
        if errno == ENOENT { return false }
        throw ByteStreamError(.system(errno: errno), operation: "remove", target: path.description)
    }

    /// The status of an open descriptor. The corresponding C function is `fstat(2)`.
    package static func status(of fd: Int32, target: String) throws -> stat {
        var info = stat()
        if fstat(fd, &info) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "stat", target: target)
        }
        return info
    }

    /// The status of the file at `path` (links not followed), or `nil` when there is none.
    /// The corresponding C function is `lstat(2)`.
    package static func status(ofPath path: Pathname) throws -> stat? {
        var info = stat()
        if path.withCString({ lstat($0, &info) }) == 0 { return info }
        if errno == ENOENT { return nil }
        throw ByteStreamError(.system(errno: errno), operation: "stat", target: path.description)
    }

    /// Sets the access and modification times of an open file, to now when `seconds` is `nil`.
    /// The corresponding C function is `futimens(2)`.
    package static func setTimes(of fd: Int32, seconds: Int? = nil, target: String) throws {
        // UTIME_NOW, a macro Swift does not import: (1 << 30) - 1.
        var times = [timespec](repeating: timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1), count: 2)
        if let seconds { times = [timespec](repeating: timespec(tv_sec: seconds, tv_nsec: 0), count: 2) }
        if futimens(fd, &times) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "set times", target: target)
        }
    }

    /// Reads up to `count` bytes at `offset` without moving the file offset; 0 only at the end
    /// of the file. The corresponding C function is `pread(2)`.
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, at offset: Int64,
                             target: String) throws -> Int {
        while true {
            let result = pread(fd, buffer, count, off_t(offset))
            if result >= 0 { return result }
            if errno == EINTR { continue }
            throw ByteStreamError(.system(errno: errno), operation: "read", target: target)
        }
    }

    /// Writes all of `bytes` at `offset` without moving the file offset.
    /// The corresponding C function is `pwrite(2)`.
    package static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, target: String) throws {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done)) }
            if result > 0 { done += result; continue }
            if result < 0 && errno == EINTR { continue }
            throw ByteStreamError(.system(errno: result < 0 ? errno : EIO), operation: "write", target: target)
        }
    }

    /// The names in a directory, without `.` and `..`, in no particular order.
    /// The corresponding C functions are `opendir(3)` and `readdir(3)`.
    package static func directoryEntries(_ path: Pathname) throws -> [String] {
        guard let directory = path.withCString({ opendir($0) }) else {
            throw ByteStreamError(.system(errno: errno), operation: "read directory", target: path.description)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

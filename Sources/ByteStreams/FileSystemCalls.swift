#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CFileSpace
#endif

/// The file-system calls on open descriptors beside the stream calls, for modules that keep
/// files of their own (calls that take names are in DirectorySystemCalls.swift): each retries
/// on `EINTR` where the call can be interrupted and turns `errno` into a ``ByteStreamError``
/// naming the operation and the target.
extension SystemCalls {
    /// The status of an open descriptor. The corresponding C function is `fstat(2)`.
    package static func status(of fd: Int32, target: String) throws -> stat {
        var info = stat()
        if fstat(fd, &info) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "stat", target: target)
        }
        return info
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

    /// Sets an open file's size to `size` bytes: cut there, or extended with a hole that reads
    /// as zero bytes (and takes no space on a file system with sparse files).
    /// The corresponding C function is `ftruncate(2)`.
    package static func truncate(_ fd: Int32, toSize size: Int64, target: String) throws {
        if retryingOnInterrupt({ ftruncate(fd, off_t(size)) }) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "truncate", target: target)
        }
    }

    /// Allocates the disk blocks of bytes `offset..<offset + length` of an open regular file
    /// ahead of writes at offsets, without changing the file's size: it grows as the writes
    /// reach those bytes, as it would have. A hint, not a promise: the writes then take blocks
    /// already allocated instead of reserving space a page at a time (ext4's delayed
    /// allocation), which takes kernel time from the thread writing. Blocks past the end of the
    /// file that no write reached stay allocated until the file is cut (`ftruncate(2)`, to its
    /// own size too) or removed.
    ///
    /// Does nothing and returns `false` on a file system other than ext2/3/4, when the file
    /// system cannot (`EOPNOTSUPP`), the space is not there (`ENOSPC`), the range ends past the
    /// process's file size limit (`RLIMIT_FSIZE`, which would raise SIGXFSZ), or off Linux; the
    /// caller writes as it would have. Blocks while the file system allocates (metadata only,
    /// no data is written).
    /// The corresponding C functions are `fstatfs(2)` and Linux's `fallocate(2)` with
    /// `FALLOC_FL_KEEP_SIZE`, called as the system call: not `posix_fallocate(3)`, which sets
    /// the size and whose fallback writes into every block of the range.
    package static func reserveSpace(_ fd: Int32, offset: Int64, length: Int64) -> Bool {
        guard offset >= 0, length > 0, offset <= Int64.max - length else { return false }
        #if os(Linux) && _pointerBitWidth(_64)
        // ext4 only, where the gain was measured (its delayed allocation a page at a time). Not
        // btrfs: it writes into preallocated extents in place, never compressed, so with
        // compress=zstd an 80 MB output took 78 MiB of disk instead of 42 MiB, for good. Others
        // (tmpfs, which takes the memory at once; xfs; network file systems) were not measured.
        guard fileSystemType(of: fd) == ext4FileSystemType else { return false }
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 else { return false }
        if limit.rlim_cur != rlim_t.max && UInt64(offset + length) > UInt64(limit.rlim_cur) { return false }
        return retryingOnInterrupt { gzstream_fallocate(fd, offset, length) } == 0
        #else
        return false
        #endif
    }

    /// The magic number of the file system that the file open at `fd` is on (`statfs`'s
    /// `f_type`, as in <linux/magic.h>), or `nil` when it cannot be known (off Linux too).
    /// The corresponding C function is `fstatfs(2)`.
    package static func fileSystemType(of fd: Int32) -> Int64? {
        #if os(Linux) && _pointerBitWidth(_64)
        var type: Int64 = 0
        return retryingOnInterrupt({ gzstream_file_system_type(fd, &type) }) == 0 ? type : nil
        #else
        return nil
        #endif
    }

    /// ext2/3/4's ``fileSystemType(of:)``: `EXT4_SUPER_MAGIC`.
    package static let ext4FileSystemType: Int64 = 0xEF53

    /// Reads up to `count` bytes at `offset` without moving the file offset; 0 only at the end
    /// of the file. The corresponding C function is `pread(2)`.
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, at offset: Int64,
                             target: String) throws -> Int {
        let result = retryingOnInterrupt { pread(fd, buffer, count, off_t(offset)) }
        if result >= 0 { return result }
        throw ByteStreamError(.system(errno: errno), operation: "read", target: target)
    }

    /// Writes all of `bytes` at `offset` without moving the file offset.
    /// The corresponding C function is `pwrite(2)`.
    package static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, target: String) throws {
        try bytes.withUnsafeBytes { try write(fd, $0, at: offset, target: target) }
    }

    /// Writes all of `bytes` at `offset` without moving the file offset; several threads may
    /// write one descriptor at once, each its own bytes. The corresponding C function is `pwrite(2)`.
    package static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64, target: String) throws {
        var done = 0
        while done < bytes.count {
            let result = retryingOnInterrupt { pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done)) }
            if result > 0 { done += result; continue }
            throw ByteStreamError(.system(errno: result < 0 ? errno : EIO), operation: "write", target: target)
        }
    }

    /// A second descriptor of the same open file (or directory), at the lowest free number,
    /// with `FD_CLOEXEC` set.
    /// - Parameters:
    ///   - fd: An open descriptor; the caller keeps owning it.
    ///   - target: The path or name errors give.
    /// - Returns: The new descriptor, owned by the caller.
    /// - Throws: ``ByteStreamError`` with `fcntl`'s `errno` (operation "duplicate").
    /// Does not block. The corresponding C function is `fcntl(2)` with `F_DUPFD_CLOEXEC`.
    package static func duplicate(_ fd: Int32, target: String) throws -> Int32 {
        let duplicate = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        if duplicate < 0 {
            throw ByteStreamError(.system(errno: errno), operation: "duplicate", target: target)
        }
        return duplicate
    }

    /// Flushes an open file's or directory's data and metadata to the storage device, so that
    /// they survive a crash of the system. A file system that cannot (`EINVAL`: a pipe, or
    /// one with no such notion) is no error, as GNU gzip's `--synchronous` takes it.
    /// - Throws: ``ByteStreamError`` with `fsync`'s `errno` (operation "sync"), such as `EIO`.
    /// Blocks until the device has the data. The corresponding C function is `fsync(2)`.
    package static func synchronize(_ fd: Int32, target: String) throws {
        if retryingOnInterrupt({ fsync(fd) }) == 0 || errno == EINVAL { return }
        throw ByteStreamError(.system(errno: errno), operation: "sync", target: target)
    }

    /// Whether `fd` is an open descriptor of a terminal. Does not block.
    /// The corresponding C function is `isatty(3)`.
    package static func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1
    }
}

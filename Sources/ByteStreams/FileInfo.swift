#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat(2)` says of a file, in Swift's types: for a file that was opened, what `fstat(2)`
/// says of its descriptor (``SystemCalls/info(of:target:)``), so that every decision is about
/// the file that is read or written, never about whatever a name refers to a moment later.
///
/// A value: it is not updated when the file changes. Thread safety: immutable, `Sendable`.
package struct FileInfo: Equatable, Sendable {
    /// A time to the nanosecond since 1970-01-01 00:00 UTC.
    package struct Timestamp: Equatable, Sendable {
        package var seconds: Int
        /// 0...999_999_999.
        package var nanoseconds: Int

        package init(seconds: Int, nanoseconds: Int) {
            self.seconds = seconds
            self.nanoseconds = nanoseconds
        }
    }

    package let device: UInt64
    package let inode: UInt64
    /// The file type and permission bits (`st_mode`).
    package let mode: UInt32
    /// The number of hard links to the file.
    package let linkCount: Int
    /// The size in bytes (of a regular file; what the system says for others).
    package let size: Int64
    /// The owner's user ID.
    package let owner: UInt32
    /// The group ID.
    package let group: UInt32
    package let accessTime: Timestamp
    package let modificationTime: Timestamp

    /// The fields of a `stat` structure that `fstat(2)` or `fstatat(2)` filled.
    package init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        mode = UInt32(info.st_mode)
        linkCount = Int(info.st_nlink)
        size = Int64(info.st_size)
        owner = UInt32(info.st_uid)
        group = UInt32(info.st_gid)
        #if canImport(Darwin)
        let (access, modification) = (info.st_atimespec, info.st_mtimespec)
        #else
        let (access, modification) = (info.st_atim, info.st_mtim)
        #endif
        accessTime = Timestamp(seconds: Int(access.tv_sec), nanoseconds: Int(access.tv_nsec))
        modificationTime = Timestamp(seconds: Int(modification.tv_sec), nanoseconds: Int(modification.tv_nsec))
    }

    private var type: UInt32 { mode & UInt32(S_IFMT) }
    package var isDirectory: Bool { type == UInt32(S_IFDIR) }
    package var isRegularFile: Bool { type == UInt32(S_IFREG) }
    package var isSymbolicLink: Bool { type == UInt32(S_IFLNK) }
    /// A FIFO (a named pipe).
    package var isFIFO: Bool { type == UInt32(S_IFIFO) }
    package var isSocket: Bool { type == UInt32(S_IFSOCK) }
    /// The permission bits and the sticky bit, without set-user-ID and set-group-ID.
    package var permissions: UInt32 { mode & 0o1777 }

    /// Whether `other` describes the same file: the same device and inode.
    package func isSameFile(as other: FileInfo) -> Bool {
        device == other.device && inode == other.inode
    }
}

extension SystemCalls {
    /// What `fstat(2)` says of an open descriptor.
    /// - Parameters:
    ///   - fd: An open descriptor; the caller keeps owning it.
    ///   - target: The path or name errors give.
    /// - Throws: ``ByteStreamError`` with `fstat`'s `errno` (operation "stat"; `EBADF` for a
    ///   descriptor not open).
    /// Does not block. The corresponding C function is `fstat(2)`.
    package static func info(of fd: Int32, target: String) throws -> FileInfo {
        FileInfo(try status(of: fd, target: target))
    }

    /// What `fstatat(2)` says of `name` in `directory` (``currentDirectory`` for a path taken
    /// as given), or `nil` when there is no such name; a symbolic link is described itself
    /// unless `followsLinks`.
    /// - Throws: ``ByteStreamError`` with `fstatat`'s `errno` other than `ENOENT`.
    /// Does not block beyond the file system. The corresponding C function is `fstatat(2)`.
    package static func info(of name: Pathname, in directory: Int32, followsLinks: Bool = false,
                             target: String? = nil) throws -> FileInfo? {
        try status(of: name, in: directory, followsLinks: followsLinks, target: target).map(FileInfo.init)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `errno` values that callers of ``SystemCalls`` test a ``ByteStreamError/errno`` for,
/// by name, and their text: a caller can decide on a failure without importing the C library.
package enum Errno {
    /// `ENOENT`: no such file or directory.
    package static let noSuchFile: Int32 = ENOENT
    /// A name longer than the file system takes (`NAME_MAX`).
    package static let nameTooLong: Int32 = ENAMETOOLONG
    /// `EPIPE`: the reading end of a pipe or socket is closed.
    package static let brokenPipe: Int32 = EPIPE
    /// `ELOOP`: a symbolic link where `O_NOFOLLOW` refused one, or too many links.
    package static let tooManySymbolicLinks: Int32 = ELOOP
    /// `ENXIO`: a FIFO opened for writing without a reader, or a socket opened as a file.
    package static let noSuchDeviceOrAddress: Int32 = ENXIO
    /// `EEXIST`: the name exists already (`O_CREAT|O_EXCL`, `linkat`, `mkdirat`).
    package static let fileExists: Int32 = EEXIST
    /// `EIO`: an input/output error; also what a failure without an `errno` is reported as.
    package static let inputOutput: Int32 = EIO
    /// `EINVAL`: an invalid argument.
    package static let invalidArgument: Int32 = EINVAL
    /// `ENOTDIR`: a component that must be a directory is not one.
    package static let notADirectory: Int32 = ENOTDIR
    /// `EISDIR`: a directory where a file was expected.
    package static let isADirectory: Int32 = EISDIR
    /// `EPERM`: the operation is not permitted (`linkat` on a file system without hard links).
    package static let notPermitted: Int32 = EPERM
    /// `ENOTSUP`: the operation is not supported (by the file system).
    package static let notSupported: Int32 = ENOTSUP
    /// `EOPNOTSUPP`: the operation is not supported (the same value as `ENOTSUP` on Linux).
    package static let operationNotSupported: Int32 = EOPNOTSUPP
    /// `ENOSYS`: the system does not implement the call.
    package static let notImplemented: Int32 = ENOSYS

    /// What the system says of `code`: `No such file or directory`.
    /// The corresponding C function is `strerror(3)`.
    package static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// The `open(2)` and `openat(2)` flags that callers of ``SystemCalls`` combine with `|`, by
/// name. `O_CLOEXEC` is not here: ``SystemCalls`` always adds it.
package enum OpenFlag {
    /// `O_RDONLY`: for reading only (0: the absence of the other access modes).
    package static let readOnly: Int32 = O_RDONLY
    /// `O_WRONLY`: for writing only.
    package static let writeOnly: Int32 = O_WRONLY
    /// `O_CREAT`: create the file when the name does not exist.
    package static let create: Int32 = O_CREAT
    /// `O_EXCL`: with ``create``, fail with `EEXIST` when the name exists (a symbolic link too).
    package static let exclusive: Int32 = O_EXCL
    /// `O_NOFOLLOW`: fail with `ELOOP` when the last component is a symbolic link.
    package static let noFollow: Int32 = O_NOFOLLOW
    /// `O_NONBLOCK`: neither the open nor later calls wait (a FIFO without a writer).
    package static let nonBlocking: Int32 = O_NONBLOCK
    /// `O_NOCTTY`: a terminal opened does not become the controlling terminal.
    package static let noControllingTerminal: Int32 = O_NOCTTY
    /// `O_DIRECTORY`: fail with `ENOTDIR` unless the name is a directory.
    package static let directory: Int32 = O_DIRECTORY
    #if os(Linux)
    /// `O_PATH` (Linux): a descriptor that only locates the file (or the symbolic link itself,
    /// with ``noFollow``), for lookups relative to it, `fstat(2)` and `readlinkat(2)`; it
    /// needs no read permission. Glibc defines `O_PATH` only for `_GNU_SOURCE`, which Swift's
    /// Glibc module does not set.
    package static let pathOnly: Int32 = 0o10_000_000
    #endif
}

extension SystemCalls {
    /// The directory argument of the `…at` calls that takes a relative name from the current
    /// directory, as the call without `at` would (`AT_FDCWD`).
    package static let currentDirectory: Int32 = AT_FDCWD
    /// The process's standard input, output and error descriptors (0, 1, 2).
    package static let standardInputDescriptor: Int32 = STDIN_FILENO
    package static let standardOutputDescriptor: Int32 = STDOUT_FILENO
    package static let standardErrorDescriptor: Int32 = STDERR_FILENO
    /// The longest name of one directory entry, in bytes (`NAME_MAX`: 255 on Linux).
    package static let maximumNameLength = Int(NAME_MAX)
    /// The `poll(2)` events of a descriptor ready to read (`POLLIN`).
    package static let readableEvents = Int16(POLLIN)
    /// The `poll(2)` events of a descriptor ready to write (`POLLOUT`).
    package static let writableEvents = Int16(POLLOUT)
}

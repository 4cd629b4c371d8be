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
    /// `EPIPE`: the reading end of a pipe or socket is closed.
    package static let brokenPipe: Int32 = EPIPE
    /// `ELOOP`: a symbolic link where `O_NOFOLLOW` refused one, or too many links.
    package static let tooManySymbolicLinks: Int32 = ELOOP
    /// `ENXIO`: a FIFO opened for writing without a reader, or a socket opened as a file.
    package static let noSuchDeviceOrAddress: Int32 = ENXIO

    /// What the system says of `code`: `No such file or directory`.
    /// The corresponding C function is `strerror(3)`.
    package static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

extension SystemCalls {
    /// The longest name of one directory entry, in bytes (`NAME_MAX`: 255 on Linux).
    package static let maximumNameLength = Int(NAME_MAX)
    /// The `poll(2)` events of a descriptor ready to read (`POLLIN`).
    package static let readableEvents = Int16(POLLIN)
    /// The `poll(2)` events of a descriptor ready to write (`POLLOUT`).
    package static let writableEvents = Int16(POLLOUT)
}

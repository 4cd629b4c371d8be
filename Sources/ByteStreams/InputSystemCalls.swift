#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Calls for reading a file that was looked up once: the input is opened with `O_NONBLOCK`
/// (a FIFO must not block the checks made on its descriptor), then made blocking again once
/// it is known what it is and that it is to be read.
extension SystemCalls {
    /// Flags for a directory descriptor used only to look names up relative to it
    /// (`openat(2)`, `fstatat(2)`, `unlinkat(2)`): on Linux `O_PATH`, which needs search
    /// permission on the directory but not read permission, as a lookup by path does; elsewhere
    /// `O_RDONLY`. `O_DIRECTORY` is included.
    package static var lookupDirectoryFlags: Int32 {
        #if os(Linux)
        return OpenFlag.pathOnly | O_DIRECTORY
        #else
        return O_RDONLY | O_DIRECTORY
        #endif
    }

    /// Clears `O_NONBLOCK` on an open descriptor, so that reads wait for data.
    /// - Parameters:
    ///   - fd: An open descriptor; the caller keeps owning it.
    ///   - target: The path or name errors give.
    /// - Throws: ``ByteStreamError`` with `fcntl`'s `errno` (operation "set blocking").
    /// Does not block.
    /// The corresponding C function is `fcntl(2)` (`F_GETFL`, `F_SETFL`).
    package static func makeBlocking(_ fd: Int32, target: String) throws {
        let flags = fcntl(fd, F_GETFL)
        if flags < 0 || (flags & O_NONBLOCK != 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
            throw ByteStreamError(.system(errno: errno), operation: "set blocking", target: target)
        }
    }

    /// Waits until a non-blocking descriptor has something to read or its other end has gone:
    /// for a FIFO opened with `O_NONBLOCK`, until a writer has opened it and written or closed
    /// it again (Linux reports no hang-up on a FIFO no writer has opened since the reader
    /// did), which is what a blocking `open(2)` of the FIFO would have waited for.
    /// - Parameters:
    ///   - fd: An open descriptor; the caller keeps owning it.
    ///   - target: The path or name errors give.
    /// - Throws: ``ByteStreamError`` with `poll`'s `errno`.
    /// Blocks, without a time limit.
    /// The corresponding C function is `poll(2)`.
    package static func waitUntilReadable(_ fd: Int32, target: String) throws {
        try wait(fd, for: Int16(POLLIN), operation: "read", target: target)
    }
}

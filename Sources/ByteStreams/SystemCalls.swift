#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place where the streams call the system: every call retries on `EINTR`, waits
/// with `poll(2)` when a descriptor is non-blocking, and turns `errno` into a ``ByteStreamError``.
package enum SystemCalls {
    /// Calls `body`, a system call that returns -1 and sets `errno` on failure, again for as
    /// long as it fails with `EINTR` (a signal arrived before it did anything), as swift-system's
    /// `retryOnInterrupt` does. Returns the first other result, `errno` still set for a caller
    /// that reads it. Blocks as long as `body` does; `close(2)` must not go through this (on
    /// Linux its descriptor is gone even when it reports `EINTR`).
    @inline(__always)
    package static func retryingOnInterrupt<Result: FixedWidthInteger>(_ body: () -> Result) -> Result {
        while true {
            let result = body()
            if result != -1 || errno != EINTR { return result }
        }
    }

    /// The corresponding C function is `open(2)`; `O_CLOEXEC` is always added.
    package static func open(_ path: Pathname, flags: Int32, mode: mode_t = 0o666) throws -> Int32 {
        let fd = retryingOnInterrupt { path.withCString { Glibc_open($0, flags | O_CLOEXEC, mode) } }
        if fd >= 0 { return fd }
        throw ByteStreamError(.system(errno: errno), operation: "open", target: path.description)
    }

    /// The corresponding C function is `read(2)`. Returns 0 only at end of file; waits with
    /// `poll(2)` when the descriptor is non-blocking and has nothing yet.
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, target: String) throws -> Int {
        while true {
            if let result = try readIfReady(fd, buffer, count, target: target) { return result }
            try wait(fd, for: Int16(POLLIN), operation: "read", target: target)
        }
    }

    /// One `read(2)` that does not wait: `nil` when a non-blocking descriptor has nothing
    /// (`EAGAIN`), 0 only at end of file. The corresponding C function is `read(2)`.
    package static func readIfReady(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int,
                            target: String) throws -> Int? {
        #if canImport(Glibc)
        let result = retryingOnInterrupt { Glibc.read(fd, buffer, count) }
        #else
        let result = retryingOnInterrupt { Darwin.read(fd, buffer, count) }
        #endif
        if result >= 0 { return result }
        if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
        throw ByteStreamError(.system(errno: errno), operation: "read", target: target)
    }

    /// The corresponding C function is `write(2)`. Returns at least 1 when `count > 0`; waits
    /// with `poll(2)` when the descriptor is non-blocking and full.
    package static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, target: String) throws -> Int {
        while true {
            if let result = try writeIfReady(fd, buffer, count, target: target), result > 0 || count == 0 {
                return result
            }
            try wait(fd, for: Int16(POLLOUT), operation: "write", target: target)
        }
    }

    /// One `write(2)` that does not wait: the bytes taken, or `nil` when a non-blocking
    /// descriptor is full (`EAGAIN`). The corresponding C function is `write(2)`.
    package static func writeIfReady(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, target: String) throws -> Int? {
        #if canImport(Glibc)
        let result = retryingOnInterrupt { Glibc.write(fd, buffer, count) }
        #else
        let result = retryingOnInterrupt { Darwin.write(fd, buffer, count) }
        #endif
        if result >= 0 { return result }
        if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
        throw ByteStreamError(.system(errno: errno), operation: "write", target: target)
    }

    /// The corresponding C function is `lseek(2)`.
    package static func seek(_ fd: Int32, to offset: Int64, whence: Int32, target: String) throws -> Int64 {
        let result = lseek(fd, off_t(offset), whence)
        if result < 0 { throw ByteStreamError(.system(errno: errno), operation: "seek", target: target) }
        return Int64(result)
    }

    /// The corresponding C function is `close(2)`. `EINTR` is not retried: on Linux the
    /// descriptor is already released.
    package static func close(_ fd: Int32, target: String) throws {
        #if canImport(Glibc)
        let result = Glibc.close(fd)
        #else
        let result = Darwin.close(fd)
        #endif
        if result != 0 && errno != EINTR {
            throw ByteStreamError(.system(errno: errno), operation: "close", target: target)
        }
    }

    /// Waits until a non-blocking descriptor is ready for `events` (or has failed or hung up,
    /// which the next call then reports), at most until `deadline` (`nil`: as long as it takes).
    /// - Throws: ``ByteStreamError`` with `ETIMEDOUT` once `deadline` has passed, or `poll`'s `errno`.
    /// The corresponding C function is `poll(2)`.
    static func wait(_ fd: Int32, for events: Int16, deadline: ContinuousClock.Instant? = nil,
                     operation: String, target: String) throws {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = deadline - .now
                if left <= .zero { throw ByteStreamError(.system(errno: ETIMEDOUT), operation: operation, target: target) }
                // Rounded up, so that a wait never ends just before the deadline and spins.
                let (seconds, attoseconds) = left.components
                milliseconds = Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            }
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw ByteStreamError(.system(errno: errno), operation: operation, target: target)
            }
        }
    }
}

// `open` is variadic in C; Glibc exposes a Swift overload taking the mode.
@inline(__always)
private func Glibc_open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}

import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file without a name that holds the windows an index builder has found until the index is
/// written: they go to the file as they are found and are copied out once, so that the builder
/// keeps no window in memory but the one it is filling, whatever the input's size.
///
/// The file is made with `O_TMPFILE` in the given directory (where the file system supports it),
/// else under a random name that is unlinked at once: either way no name is left behind, and the
/// space is freed when ``close()`` (or `deinit`) closes the descriptor. Owns its descriptor. Not
/// thread-safe: one builder uses it.
final class WindowSpillFile {
    private var descriptor: Int32
    /// The bytes written so far.
    private(set) var size: Int64 = 0

    /// Creates the file in `directory`, an open directory descriptor the caller keeps owning.
    /// - Throws: ``ByteStreamError`` with the `errno` of `openat(2)` or `unlinkat(2)`.
    /// The corresponding C functions are `openat(2)` with `O_TMPFILE`, or with `O_CREAT | O_EXCL`
    /// followed by `unlinkat(2)`.
    init(in directory: Int32) throws {
        #if os(Linux)
        // O_TMPFILE, a macro Swift does not import: __O_TMPFILE (0o20000000) | O_DIRECTORY.
        let temporaryFlag: Int32 = 0o20000000 | O_DIRECTORY
        if let fd = try? SystemCalls.open(".", in: directory, flags: temporaryFlag | O_RDWR, mode: 0o600,
                                          target: "temporary file for index windows") {
            descriptor = fd
            return
        }
        #endif
        // A file system without O_TMPFILE: a fresh name, removed as soon as it is open.
        let name = Pathname(".gzstream-windows-\(UInt64.random(in: 0...UInt64.max))")
        descriptor = try SystemCalls.open(name, in: directory, flags: O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, mode: 0o600)
        do {
            try SystemCalls.unlink(name, in: directory)
        } catch {
            close()
            throw error
        }
    }

    /// Appends one window. The corresponding C function is `pwrite(2)`.
    func append(_ window: [UInt8]) throws {
        try SystemCalls.write(descriptor, window, at: size, target: "temporary file for index windows")
        size += Int64(window.count)
    }

    /// Writes the file's bytes from the start to `output`, `chunk` bytes at a time, through one
    /// buffer, each chunk also handed to `observe` (the index's checksum). The corresponding C
    /// function is `pread(2)`.
    func copy(to output: ByteOutputStream, chunk: Int, observe: (UnsafeRawBufferPointer) -> Void = { _ in }) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < size {
            let wanted = Int(min(Int64(chunk), size - offset))
            let count = try SystemCalls.read(descriptor, buffer.baseAddress!, wanted, at: offset,
                                             target: "temporary file for index windows")
            guard count > 0 else {
                throw ByteStreamError(.system(errno: EIO), operation: "read", target: "temporary file for index windows")
            }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            observe(bytes)
            try output.writeAll(bytes)
            offset += Int64(count)
        }
    }

    /// Closes the descriptor, freeing the file's space; later calls do nothing.
    func close() {
        guard descriptor >= 0 else { return }
        try? SystemCalls.close(descriptor, target: "temporary file for index windows")
        descriptor = -1
    }

    deinit { close() }
}

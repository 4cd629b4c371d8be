import ByteStreams
import SecretStreams
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The path of a temporary entry being written: the address of a NUL-terminated C string, or
/// 0 for none, for a command's signal handler to remove when interrupted (async-signal-safe to
/// read: an atomic load, and memory that is never freed). Holds the first of the stores under
/// way when there are several.
///
/// The string lives in a buffer that is allocated once per cache directory path and never
/// freed, so a handler on another thread that loaded the address just before the store ended
/// still reads a path, never freed memory. Only the 16 hexadecimal digits of the temporary name
/// change from one store to the next in the same directory: a handler reading while they
/// change reads a name of the same directory with some digits of each, which names nothing
/// (or, at worst, another temporary file of this cache).
package let pendingTemporaryEntryPath = Atomic<UInt>(0)

/// Whether a store holds ``pendingTemporaryEntryPath`` (and so may write its buffer).
private let pendingPathTaken = Atomic<Bool>(false)

/// One buffer per directory path: the path, `/`, `.tmp-`, 16 digits and a NUL.
private let pendingPathBuffers = Mutex<[[UInt8]: UnsafeMutablePointer<UInt8>]>([:])

/// A new entry being written: a file `.tmp-` + 16 random hexadecimal digits in the cache
/// directory (so the rename into place stays on one file system), mode 0600, open for reading
/// too (the seal binds the payload's first bytes, read back), created with
/// `openat(2)` and `O_CREAT | O_EXCL | O_NOFOLLOW` relative to the directory's descriptor.
/// Published by `renameat(2)`, which replaces any entry of the same name at once; otherwise
/// discarded (closed and removed with `unlinkat(2)`). Keeps the directory open while it lives.
final class TemporaryEntry {
    static let prefix = ".tmp-"
    let directory: CacheDirectory
    let name: Pathname
    let descriptor: Int32
    /// The path, for messages.
    var path: String { directory.display(name) }
    private var isOpen = true
    /// Whether this entry holds ``pendingTemporaryEntryPath``.
    private var isPending = false

    init(in directory: CacheDirectory) throws {
        self.directory = directory
        name = Pathname(try Self.randomName())
        descriptor = try SystemCalls.open(name, in: directory.descriptor, flags: O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW,
                                          mode: 0o600, target: directory.display(name))
        isPending = pendingPathTaken.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
        if isPending { publishPending() }
    }

    /// Writes the path into its directory's never-freed buffer and publishes its address.
    private func publishPending() {
        let full = directory.path.bytes + [UInt8(ascii: "/")] + name.bytes
        let buffer = pendingPathBuffers.withLock { buffers in
            if let buffer = buffers[directory.path.bytes] { return buffer }
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: full.count + 1)
            buffer.initialize(repeating: 0, count: full.count + 1)
            buffers[directory.path.bytes] = buffer
            return buffer
        }
        full.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: full.count) }
        buffer[full.count] = 0
        pendingTemporaryEntryPath.store(UInt(bitPattern: buffer), ordering: .sequentiallyConsistent)
    }

    private func clearPending() {
        guard isPending else { return }
        isPending = false
        pendingTemporaryEntryPath.store(0, ordering: .sequentiallyConsistent)
        pendingPathTaken.store(false, ordering: .sequentiallyConsistent)
    }

    /// A new temporary file name: the prefix and 16 random lowercase hexadecimal digits.
    /// - Throws: ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start.
    static func randomName() throws -> String {
        prefix + hexDigits(try secureRandomBytes(count: 8))
    }

    /// Whether `name` is one this type makes: the prefix and 16 lowercase hexadecimal digits.
    static func isTemporary(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        return name.hasPrefix(prefix) && utf8.count == prefix.utf8.count + 16
            && EntryName.lowercaseHexBytes(Array(utf8.dropFirst(prefix.utf8.count))) != nil
    }

    /// Closes the file and renames it to `destination` in the same directory.
    func publish(as destination: Pathname) throws {
        isOpen = false
        try SystemCalls.close(descriptor, target: path)
        try SystemCalls.rename(name, in: directory.descriptor, to: destination, in: directory.descriptor,
                               target: directory.display(destination))
        clearPending()
    }

    /// Closes and removes the file, if it was not published.
    func discard() {
        if isOpen {
            isOpen = false
            try? SystemCalls.close(descriptor, target: path)
        }
        _ = try? directory.unlink(name)
        clearPending()
    }
}

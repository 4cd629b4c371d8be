import ByteStreams
import CSodium
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The path of a temporary entry being written, as a C string from `strdup` (0 for none), for
/// a command's signal handler to remove when interrupted (async-signal-safe to read). Holds the
/// first of the stores under way when there are several.
package let pendingTemporaryEntryPath = Atomic<UInt>(0)

/// A new entry being written: a file `.tmp-` + 16 random hexadecimal digits in the cache
/// directory (so the rename into place stays on one file system), mode 0600, created with
/// `O_EXCL`. Published by `rename(2)`, which replaces any entry of the same name at once;
/// otherwise discarded (closed and removed).
final class TemporaryEntry {
    static let prefix = ".tmp-"
    let path: Pathname
    let descriptor: Int32
    private var isOpen = true
    /// Whether this entry's path is the one in ``pendingTemporaryEntryPath``.
    private var isPending = false

    init(in directory: Pathname) throws {
        path = Pathname(directory.description + "/" + Self.randomName())
        descriptor = try SystemCalls.open(path, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        let copy = UInt(bitPattern: path.withCString { strdup($0) })
        isPending = pendingTemporaryEntryPath.compareExchange(expected: 0, desired: copy, ordering: .sequentiallyConsistent).exchanged
        if !isPending { free(UnsafeMutableRawPointer(bitPattern: copy)) }
    }

    private func clearPending() {
        guard isPending else { return }
        isPending = false
        free(UnsafeMutableRawPointer(bitPattern: pendingTemporaryEntryPath.exchange(0, ordering: .sequentiallyConsistent)))
    }

    /// A new temporary file name: the prefix and 16 random lowercase hexadecimal digits.
    static func randomName() -> String {
        var random = [UInt8](repeating: 0, count: 8)
        randombytes_buf(&random, random.count)
        return prefix + hexDigits(random)
    }

    /// Whether `name` is one this type makes: the prefix and 16 lowercase hexadecimal digits.
    static func isTemporary(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        return name.hasPrefix(prefix) && utf8.count == prefix.utf8.count + 16
            && EntryName.lowercaseHexBytes(Array(utf8.dropFirst(prefix.utf8.count))) != nil
    }

    /// Closes the file and renames it to `destination`.
    func publish(as destination: Pathname) throws {
        isOpen = false
        try SystemCalls.close(descriptor, target: path.description)
        try SystemCalls.rename(path, to: destination)
        clearPending()
    }

    /// Closes and removes the file, if it was not published.
    func discard() {
        if isOpen {
            isOpen = false
            try? SystemCalls.close(descriptor, target: path.description)
        }
        _ = try? SystemCalls.unlink(path)
        clearPending()
    }
}

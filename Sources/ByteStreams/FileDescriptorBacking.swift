#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The descriptor behind a file stream: opened from a path or handed over, closed only when
/// owned (also when the stream is dropped without being closed).
final class FileDescriptorBacking {
    private let path: Pathname?
    private let openFlags: Int32
    private let closesDescriptor: Bool
    let displayName: String
    private(set) var descriptor: Int32

    /// A backing that opens `path` with `flags` and owns the descriptor.
    init(path: Pathname, flags: Int32) {
        self.path = path
        self.openFlags = flags
        self.closesDescriptor = true
        self.displayName = path.description
        self.descriptor = -1
    }

    /// A backing for a descriptor opened elsewhere.
    init(descriptor: Int32, closesDescriptor: Bool, displayName: String) {
        self.path = nil
        self.openFlags = 0
        self.closesDescriptor = closesDescriptor
        self.displayName = displayName
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0, closesDescriptor { try? SystemCalls.close(descriptor, target: displayName) }
    }

    func open() throws {
        if let path { descriptor = try SystemCalls.open(path, flags: openFlags) }
    }

    func close() throws {
        guard descriptor >= 0, closesDescriptor else { return }
        let owned = descriptor
        descriptor = -1
        try SystemCalls.close(owned, target: displayName)
    }

    /// The current offset in bytes, or `nil` for pipes, terminals and closed descriptors.
    var offset: Int64? {
        guard descriptor >= 0 else { return nil }
        return try? SystemCalls.seek(descriptor, to: 0, whence: SEEK_CUR, target: displayName)
    }

    /// Seeks to `offset` bytes from the start; `false` when the descriptor cannot seek.
    func seek(to value: Any?) -> Bool {
        guard descriptor >= 0, let offset = int64(value) else { return false }
        return (try? SystemCalls.seek(descriptor, to: offset, whence: SEEK_SET, target: displayName)) != nil
    }
}

/// Accepts the integer types a caller is likely to pass for an offset (the value of
/// ``ByteStream/PropertyKey/fileCurrentOffset``).
package func int64(_ value: Any?) -> Int64? {
    switch value {
    case let number as Int64: number
    case let number as Int: Int64(number)
    case let number as UInt64: Int64(exactly: number)
    case let number as Int32: Int64(number)
    default: nil
    }
}

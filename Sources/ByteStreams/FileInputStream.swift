#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file by path, or any readable file descriptor (standard input, a pipe).
///
/// Ownership: a stream opened by path owns its descriptor and closes it on ``ByteStream/close()``;
/// a stream made from a descriptor closes it only when `closesDescriptor` is `true`.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: the read offset in bytes as `Int64`;
/// setting it seeks (`lseek(2)`), and fails on pipes and terminals.
///
/// Reads block. The corresponding C functions are `open(2)`, `read(2)`, `lseek(2)`, `close(2)`.
public final class FileInputStream: ByteInputStream, @unchecked Sendable {
    private let path: String?
    private var fd: Int32
    private let closesDescriptor: Bool
    /// A name for messages: the path, or "standard input" / "descriptor N".
    public let displayName: String

    /// A stream that opens `path` read-only on ``ByteStream/open()``. A missing or unreadable
    /// file puts the stream in `.error` with a ``ByteStreamError`` carrying `errno`.
    public init(path: String) {
        self.path = path
        self.fd = -1
        self.closesDescriptor = true
        self.displayName = path
        super.init()
    }

    /// A stream that reads `fileDescriptor`, which must stay open until the stream is closed.
    /// - Parameters:
    ///   - closesDescriptor: Close the descriptor on ``ByteStream/close()``; default `false`.
    ///   - displayName: The name errors give (a path); default "standard input" or "descriptor N".
    public init(fileDescriptor: Int32, closesDescriptor: Bool = false, displayName: String? = nil) {
        self.path = nil
        self.fd = fileDescriptor
        self.closesDescriptor = closesDescriptor
        self.displayName = displayName
            ?? (fileDescriptor == STDIN_FILENO ? "standard input" : "descriptor \(fileDescriptor)")
        super.init()
    }

    /// A stream over descriptor 0 that does not close it.
    public static func standardInput() -> FileInputStream {
        FileInputStream(fileDescriptor: STDIN_FILENO)
    }

    /// The descriptor, or `-1` before a stream made from a path is opened or after it is closed.
    public var fileDescriptor: Int32 { fd }

    override public func openBacking() throws {
        if let path {
            fd = try SystemCalls.open(path, flags: O_RDONLY)
        }
    }

    /// A stream dropped without ``ByteStream/close()`` still releases a descriptor it owns.
    deinit {
        if fd >= 0, closesDescriptor { try? SystemCalls.close(fd, target: displayName) }
    }

    override public func closeBacking() throws {
        guard fd >= 0, closesDescriptor else { return }
        let descriptor = fd
        fd = -1
        try SystemCalls.close(descriptor, target: displayName)
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        try SystemCalls.read(fd, buffer, maxLength, target: displayName)
    }

    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        guard key == .fileCurrentOffset, fd >= 0 else { return nil }
        return try? SystemCalls.seek(fd, to: 0, whence: SEEK_CUR, target: displayName)
    }

    override public func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffset, fd >= 0, let offset = int64(value) else { return false }
        guard (try? SystemCalls.seek(fd, to: offset, whence: SEEK_SET, target: displayName)) != nil else {
            return false
        }
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }
}

/// Accepts the integer types a caller is likely to pass for an offset.
func int64(_ value: Any?) -> Int64? {
    switch value {
    case let number as Int64: number
    case let number as Int: Int64(number)
    case let number as UInt64: Int64(exactly: number)
    case let number as Int32: Int64(number)
    default: nil
    }
}

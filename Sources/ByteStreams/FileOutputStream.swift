#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file by path, or any writable file descriptor (standard output, a pipe).
///
/// Ownership: a stream opened by path owns its descriptor and closes it on ``ByteStream/close()``;
/// a stream made from a descriptor closes it only when `closesDescriptor` is `true`.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: the write offset in bytes as `Int64`;
/// setting it seeks.
///
/// Writes block until the system takes at least one byte; a broken pipe is an error with
/// `errno == EPIPE` (ignore `SIGPIPE` in the process to get it rather than a signal).
/// The corresponding C functions are `open(2)`, `write(2)`, `lseek(2)`, `close(2)`.
public final class FileOutputStream: ByteOutputStream, @unchecked Sendable {
    private let path: String?
    private let append: Bool
    private var fd: Int32
    private let closesDescriptor: Bool
    /// A name for messages: the path, or "standard output" / "descriptor N".
    public let displayName: String

    /// A stream that creates or truncates `path` on ``ByteStream/open()`` (mode 0666 less the
    /// umask), or appends to it when `append` is `true`.
    public init(path: String, append: Bool = false) {
        self.path = path
        self.append = append
        self.fd = -1
        self.closesDescriptor = true
        self.displayName = path
        super.init()
    }

    /// A stream that writes `fileDescriptor`, which must stay open until the stream is closed.
    /// - Parameters:
    ///   - closesDescriptor: Close the descriptor on ``ByteStream/close()``; default `false`.
    ///   - displayName: The name errors give (a path); default "standard output",
    ///     "standard error" or "descriptor N".
    public init(fileDescriptor: Int32, closesDescriptor: Bool = false, displayName: String? = nil) {
        self.path = nil
        self.append = false
        self.fd = fileDescriptor
        self.closesDescriptor = closesDescriptor
        switch (displayName, fileDescriptor) {
        case (let name?, _): self.displayName = name
        case (nil, STDOUT_FILENO): self.displayName = "standard output"
        case (nil, STDERR_FILENO): self.displayName = "standard error"
        default: self.displayName = "descriptor \(fileDescriptor)"
        }
        super.init()
    }

    /// A stream over descriptor 1 that does not close it.
    public static func standardOutput() -> FileOutputStream {
        FileOutputStream(fileDescriptor: STDOUT_FILENO)
    }

    /// A stream over descriptor 2 that does not close it.
    public static func standardError() -> FileOutputStream {
        FileOutputStream(fileDescriptor: STDERR_FILENO)
    }

    /// The descriptor, or `-1` before a stream made from a path is opened or after it is closed.
    public var fileDescriptor: Int32 { fd }

    override public func openBacking() throws {
        if let path {
            fd = try SystemCalls.open(path, flags: O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC))
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

    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        try SystemCalls.write(fd, buffer, maxLength, target: displayName)
    }

    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        guard key == .fileCurrentOffset, fd >= 0 else { return nil }
        return try? SystemCalls.seek(fd, to: 0, whence: SEEK_CUR, target: displayName)
    }

    override public func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffset, fd >= 0, let offset = int64(value) else { return false }
        return (try? SystemCalls.seek(fd, to: offset, whence: SEEK_SET, target: displayName)) != nil
    }
}

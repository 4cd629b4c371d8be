#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file by path, or any writable file descriptor (standard output, a pipe).
///
/// Ownership: a stream opened by path owns its descriptor and closes it on ``ByteStream/close()``;
/// a stream made from a descriptor closes it only when `closesDescriptor` is `true`. A stream
/// dropped without being closed still closes a descriptor it owns.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: the write offset in bytes as `Int64`;
/// setting it seeks.
///
/// Writes block until the system takes at least one byte; a broken pipe is an error with
/// `errno == EPIPE` (ignore `SIGPIPE` in the process to get it rather than a signal). While the
/// stream is scheduled over a pipe, FIFO or terminal it is driven by readiness instead
/// (``ByteStream/schedule(on:)-(DispatchQueue)``): the descriptor is non-blocking until the
/// stream is unscheduled or closed, and a write into a full pipe takes fewer bytes, or none.
/// The corresponding C functions are `open(2)`, `write(2)`, `lseek(2)`, `close(2)`.
public final class FileOutputStream: ByteOutputStream {
    private let backing: FileDescriptorBacking

    /// A stream that creates or truncates `path` on ``ByteStream/open()`` (mode 0666 less the
    /// umask), or appends to it when `append` is `true`.
    public init(path: Pathname, append: Bool = false) {
        backing = FileDescriptorBacking(path: path, flags: O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC))
        super.init()
    }

    /// A stream that writes `path` (its UTF-8 bytes); see ``init(path:append:)-(Pathname,_)``.
    public convenience init(path: String, append: Bool = false) {
        self.init(path: Pathname(path), append: append)
    }

    /// A stream that writes `fileDescriptor`, which must stay open until the stream is closed.
    /// - Parameters:
    ///   - fileDescriptor: An open descriptor to write; the caller keeps owning it unless
    ///     `closesDescriptor` is `true`.
    ///   - closesDescriptor: Close the descriptor on ``ByteStream/close()``; default `false`.
    ///   - displayName: The name errors give (a path); default "standard output",
    ///     "standard error" or "descriptor N".
    public init(fileDescriptor: Int32, closesDescriptor: Bool = false, displayName: String? = nil) {
        let defaultName = switch fileDescriptor {
        case STDOUT_FILENO: "standard output"
        case STDERR_FILENO: "standard error"
        default: "descriptor \(fileDescriptor)"
        }
        backing = FileDescriptorBacking(descriptor: fileDescriptor, closesDescriptor: closesDescriptor,
                                        displayName: displayName ?? defaultName)
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

    /// A name for messages: the path (as ``Pathname/description`` shows it), or
    /// "standard output" / "descriptor N".
    public var displayName: String { backing.displayName }

    /// The descriptor, or `-1` before a stream made from a path is opened or after it is closed.
    public var fileDescriptor: Int32 { backing.descriptor }

    /// Where the next write goes, when bytes may instead be put there and after with
    /// `pwrite(2)` (by several threads at once), the offset then moved past them: the stream is
    /// open on a regular file, its offset is at the file's end, and the descriptor does not
    /// append (`O_APPEND`, under which Linux's `pwrite(2)` appends). `nil` otherwise: a pipe, a
    /// terminal, a socket, an offset inside the file, a stream not open. Does not block; not
    /// thread-safe. The corresponding C functions are `fstat(2)`, `fcntl(2)` (`F_GETFL`) and
    /// `lseek(2)`.
    public var regularFileEndOffset: Int64? {
        guard streamStatus == .open else { return nil }
        let descriptor = backing.descriptor
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, flags & O_APPEND == 0 else { return nil }
        let offset = lseek(descriptor, 0, SEEK_CUR)
        guard offset >= 0, offset == info.st_size else { return nil }
        return Int64(offset)
    }

    override public func openBacking() throws {
        try backing.open()
    }

    override public func closeBacking() throws {
        try backing.close()
    }

    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        if descriptorReadiness != nil {
            return try SystemCalls.writeIfReady(backing.descriptor, buffer, maxLength, target: backing.displayName) ?? 0
        }
        return try SystemCalls.write(backing.descriptor, buffer, maxLength, target: backing.displayName)
    }

    override var readinessDescriptor: (descriptor: Int32, displayName: String)? {
        (backing.descriptor, backing.displayName)
    }

    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        key == .fileCurrentOffset ? backing.offset : nil
    }

    override public func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        key == .fileCurrentOffset && backing.seek(to: value)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file by path, or any readable file descriptor (standard input, a pipe).
///
/// Ownership: a stream opened by path owns its descriptor and closes it on ``ByteStream/close()``;
/// a stream made from a descriptor closes it only when `closesDescriptor` is `true`. A stream
/// dropped without being closed still closes a descriptor it owns.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: the read offset in bytes as `Int64`;
/// setting it seeks (`lseek(2)`), and fails on pipes and terminals.
///
/// Reads block, except while the stream is scheduled over a pipe, FIFO or terminal: it is then
/// driven by readiness (``ByteStream/schedule(on:)-(DispatchQueue)``), the descriptor is
/// non-blocking until the stream is unscheduled or closed, and a read with nothing to read
/// returns 0 with the status left `.open`.
/// The corresponding C functions are `open(2)`, `read(2)`, `lseek(2)`, `close(2)`.
public final class FileInputStream: ByteInputStream {
    private let backing: FileDescriptorBacking

    /// A stream that opens `path` read-only on ``ByteStream/open()``. A missing or unreadable
    /// file puts the stream in `.error` with a ``ByteStreamError`` carrying `errno`.
    public init(path: Pathname) {
        backing = FileDescriptorBacking(path: path, flags: O_RDONLY)
        super.init()
    }

    /// A stream that opens `path` (its UTF-8 bytes) read-only on ``ByteStream/open()``; see
    /// ``init(path:)-(Pathname)``.
    public convenience init(path: String) {
        self.init(path: Pathname(path))
    }

    /// A stream that reads `fileDescriptor`, which must stay open until the stream is closed.
    /// - Parameters:
    ///   - fileDescriptor: An open descriptor to read; the caller keeps owning it unless
    ///     `closesDescriptor` is `true`.
    ///   - closesDescriptor: Close the descriptor on ``ByteStream/close()``; default `false`.
    ///   - displayName: The name errors give (a path); default "standard input" or "descriptor N".
    public init(fileDescriptor: Int32, closesDescriptor: Bool = false, displayName: String? = nil) {
        backing = FileDescriptorBacking(
            descriptor: fileDescriptor, closesDescriptor: closesDescriptor,
            displayName: displayName ?? (fileDescriptor == STDIN_FILENO ? "standard input" : "descriptor \(fileDescriptor)"))
        super.init()
    }

    /// A stream over descriptor 0 that does not close it.
    public static func standardInput() -> FileInputStream {
        FileInputStream(fileDescriptor: STDIN_FILENO)
    }

    /// A name for messages: the path (as ``Pathname/description`` shows it), or
    /// "standard input" / "descriptor N".
    public var displayName: String { backing.displayName }

    /// The descriptor, or `-1` before a stream made from a path is opened or after it is closed.
    public var fileDescriptor: Int32 { backing.descriptor }

    override public func openBacking() throws {
        try backing.open()
    }

    override public func closeBacking() throws {
        try backing.close()
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        try readDescriptor(backing.descriptor, into: buffer, maxLength: maxLength, displayName: backing.displayName)
    }

    override var readinessDescriptor: (descriptor: Int32, displayName: String)? {
        (backing.descriptor, backing.displayName)
    }

    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        key == .fileCurrentOffset ? backing.offset : nil
    }

    /// Seeking a stream at its end makes it readable again.
    override public func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffset, backing.seek(to: value) else { return false }
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }
}

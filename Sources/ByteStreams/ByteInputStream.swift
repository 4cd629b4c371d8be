/// A stream that yields bytes (Cocoa's `NSInputStream`). Abstract: use a backing such as
/// ``FileInputStream`` or ``MemoryInputStream``, or a wrapping stream such as `GzipInputStream`.
///
/// Subclasses override ``readBytes(into:maxLength:)`` and, where they can say more than
/// "try a read", ``hasBytesAvailable``.
open class ByteInputStream: ByteStream {
    /// An input stream in `.notOpen`, for subclasses to call.
    override public init() { super.init() }

    /// Reads up to `maxLength` bytes into `buffer`.
    ///
    /// - Parameters:
    ///   - buffer: Memory for at least `maxLength` bytes; only the first `n` are written.
    ///   - maxLength: The most bytes to read, `>= 0`.
    /// - Returns: The number of bytes read, `1...maxLength`; `0` at the end of the stream (and
    ///   when `maxLength` is 0); `-1` on error, with ``ByteStream/streamError`` set. A short read
    ///   is not the end of the stream.
    ///
    /// Status: `.open` → `.reading` → `.open`, `.atEnd` (posting ``ByteStream/Event/endEncountered``)
    /// or `.error`. Reading a stream that is not open returns `-1` with
    /// ``ByteStreamError/Code-swift.enum/notOpen``. Blocks until at least one byte or the end is
    /// there, except while the stream is scheduled over a pipe, FIFO, terminal or socket (or is
    /// a `GzipInputStream` over one): then it never blocks, and returns `0` with the status left
    /// `.open` when nothing can be read yet (the delegate is told "has bytes available" again
    /// when there is); only `.atEnd` means the end.
    public final func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        precondition(maxLength >= 0, "maxLength must not be negative")
        switch streamStatus {
        case .open: break
        case .atEnd: return 0
        case .error: return -1
        default:
            reject(ByteStreamError(.notOpen, operation: "read"))
            return -1
        }
        if maxLength == 0 { return 0 }
        setStatus(.reading)
        do {
            let count = try readBytes(into: buffer, maxLength: maxLength)
            precondition(count >= 0 && count <= maxLength, "readBytes returned \(count) for \(maxLength)")
            if count == 0 {
                setStatus(.atEnd)
                post(.endEncountered)
            } else {
                setStatus(.open)
                if !rearmReadiness(wouldBlock: false) { post(.hasBytesAvailable) }
            }
            return count
        } catch is WouldBlock {
            setStatus(.open)
            _ = rearmReadiness(wouldBlock: true)
            return 0
        } catch {
            fail(error)
            return -1
        }
    }

    /// Whether a read may return bytes: `true` while the stream is open and has not met its
    /// end (a read may still be needed to learn that it has), as in Cocoa. While a stream over
    /// a pipe, FIFO, terminal or socket is scheduled, `true` only when a read will not block
    /// (the descriptor has bytes, its end or an error): `poll(2)` with a zero timeout.
    open var hasBytesAvailable: Bool {
        streamStatus == .open && descriptorReadiness?.isReady ?? true
    }

    /// Gives direct access to the stream's buffered bytes, when it keeps them in memory
    /// (Cocoa's `getBuffer(_:length:)`). The bytes stay valid until the next read or close.
    ///
    /// - Returns: `true` and the pointer and count in bytes, or `false` when the stream has no
    ///   such buffer (files, wrapping streams).
    open func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                        length: UnsafeMutablePointer<Int>) -> Bool {
        false
    }

    /// The hook behind ``ByteInputStream/read(_:maxLength:)``: read `1...maxLength` bytes, or return `0` only at
    /// the end of the stream; throw on failure. Called only while the stream is open, with
    /// `maxLength > 0`. A backing that cannot block (one scheduled over a non-blocking
    /// descriptor) throws the package's `WouldBlock` when it has nothing yet.
    open func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        preconditionFailure("\(type(of: self)) must override readBytes(into:maxLength:)")
    }

    override func postReadiness() {
        post(.hasBytesAvailable)
    }

    /// ``readBytes(into:maxLength:)`` for a descriptor: blocking, or, while the stream is driven
    /// by readiness, one `read(2)` that throws `WouldBlock` when there is nothing yet.
    final func readDescriptor(_ descriptor: Int32, into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int,
                              displayName: String) throws -> Int {
        guard descriptorReadiness != nil else {
            return try SystemCalls.read(descriptor, buffer, maxLength, target: displayName)
        }
        guard let count = try SystemCalls.readIfReady(descriptor, buffer, maxLength, target: displayName) else {
            throw WouldBlock()
        }
        return count
    }
}

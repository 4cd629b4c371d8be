/// A stream that takes bytes (Cocoa's `NSOutputStream`). Abstract: use a backing such as
/// ``FileOutputStream`` or ``MemoryOutputStream``, or a wrapping stream such as `GzipOutputStream`.
///
/// Subclasses override ``writeBytes(from:maxLength:)`` and, where space can run out,
/// ``hasSpaceAvailable``.
open class ByteOutputStream: ByteStream {
    /// An output stream in `.notOpen`, for subclasses to call.
    override public init() { super.init() }

    /// Writes up to `maxLength` bytes from `buffer`.
    ///
    /// - Parameters:
    ///   - buffer: At least `maxLength` bytes to write.
    ///   - maxLength: The number of bytes offered, `>= 0`.
    /// - Returns: The number of bytes taken, `0...maxLength` (possibly fewer than offered: offer
    ///   the rest again); `-1` on error, with ``ByteStream/streamError`` set.
    ///
    /// Status: `.open` → `.writing` → `.open`, `.atEnd` (a fixed buffer became full) or `.error`.
    /// Writing a stream that is not open returns `-1` with
    /// ``ByteStreamError/Code-swift.enum/notOpen``; writing at end returns `-1` with
    /// ``ByteStreamError/Code-swift.enum/noSpaceAvailable``. Blocks until some bytes are taken,
    /// except while the stream is scheduled over a pipe, FIFO, terminal or socket (or is a
    /// `GzipOutputStream` over one): then it never blocks, and takes what the buffer has room
    /// for, possibly nothing (it returns `0`; the delegate is told "has space available" when
    /// there is room again).
    public final func write(_ buffer: UnsafePointer<UInt8>, maxLength: Int) -> Int {
        precondition(maxLength >= 0, "maxLength must not be negative")
        switch streamStatus {
        case .open: break
        case .error: return -1
        case .atEnd:
            if maxLength == 0 { return 0 }
            fail(ByteStreamError(.noSpaceAvailable, operation: "write"))
            return -1
        default:
            reject(ByteStreamError(.notOpen, operation: "write"))
            return -1
        }
        if maxLength == 0 { return 0 }
        setStatus(.writing)
        do {
            let count = try writeBytes(from: buffer, maxLength: maxLength)
            precondition(count >= 0 && count <= maxLength, "writeBytes returned \(count) for \(maxLength)")
            setStatus(.open)
            if rearmReadiness(wouldBlock: count == 0) {
                // Driven by readiness: told again when the next write will not block.
            } else if hasSpaceAvailable {
                post(.hasSpaceAvailable)
            } else if isFull {
                setStatus(.atEnd)
                post(.endEncountered)
            }
            return count
        } catch {
            fail(error)
            return -1
        }
    }

    /// Whether a write may take bytes now: `true` while the stream is open and not full. While a
    /// stream over a pipe, FIFO, terminal or socket is scheduled, `true` only when a write will
    /// not block (or fails at once): `poll(2)` with a zero timeout.
    open var hasSpaceAvailable: Bool {
        streamStatus == .open && !isFull && descriptorReadiness?.isReady ?? true
    }

    /// `true` once a stream of fixed capacity can take no more bytes; `false` for the rest.
    open var isFull: Bool { false }

    /// The hook behind ``ByteOutputStream/write(_:maxLength:)``: write `0...maxLength` bytes and return how many;
    /// throw on failure. Called only while the stream is open, with `maxLength > 0`.
    open func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        preconditionFailure("\(type(of: self)) must override writeBytes(from:maxLength:)")
    }

    override func postReadiness() {
        if hasSpaceAvailable { post(.hasSpaceAvailable) }
    }
}

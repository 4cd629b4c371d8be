import ByteStreams

// Inner streams that drive the streams under test through their slowest paths.

/// Hands out at most one byte per read, whatever was asked, so every field of a format arrives
/// in pieces. Opens its inner stream (unless it is open already) and closes it.
public final class OneByteInputStream: ByteInputStream {
    private let inner: ByteInputStream

    public init(wrapping inner: ByteInputStream) {
        self.inner = inner
        super.init()
    }

    public override func openBacking() throws {
        if inner.streamStatus == .notOpen { inner.open() }
        try inner.throwIfFailed()
    }

    public override func closeBacking() throws {
        inner.close()
    }

    public override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.read(buffer, maxLength: 1)
        if count < 0 { throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
        return count
    }
}

/// What a test's stream delegate does in its handler besides recording: read `readLength`
/// bytes on each "has bytes available", write the next `writeLength` bytes of `source` on each
/// "has space available". The recording delegates of the ByteStreams and the run-loop tests
/// build on it; each keeps its own count of what it wrote.
open class ScriptedDelegate: @unchecked Sendable {
    /// Read this many bytes on each "has bytes available"; `nil` to leave the stream alone.
    public let readLength: Int?
    /// Write the next slice of `source`, this many bytes, on each "has space available".
    public let writeLength: Int?
    /// The bytes written, slice by slice.
    public let source: [UInt8]

    public init(readLength: Int? = nil, writeLength: Int? = nil, source: [UInt8] = []) {
        self.readLength = readLength
        self.writeLength = writeLength
        self.source = source
    }

    /// The slice of `source` to write next when `offset` bytes of it are written already: at
    /// most `writeLength` bytes, empty at its end.
    public func nextSlice(after offset: Int) -> [UInt8] {
        Array(source[offset..<min(offset + (writeLength ?? 0), source.count)])
    }
}

import ByteStreams
import Synchronization

/// The bytes a job has read and written, updated from whichever threads do the work (a
/// read-ahead worker, a write-behind worker, a BGZF pipeline) and read by the timer thread.
final class ProgressCounters: Sendable {
    let bytesIn = Atomic<Int64>(0)
    let bytesOut = Atomic<Int64>(0)
    /// The input's size in bytes, or -1 when it is not a regular file.
    let inputSize = Atomic<Int64>(-1)
}

/// Passes reads through to `inner` and adds them to ``ProgressCounters/bytesIn``: bytes read,
/// so a seek back (a member decoded again by zlib) counts its bytes twice.
///
/// On open, when `measuresSize`, a ``FileInputStream`` on a regular file sets
/// ``ProgressCounters/inputSize`` to the bytes from its offset to its end (one `fstat(2)`).
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: passed through both ways; seeking a
/// stream at its end makes it readable again.
/// Ownership: opens `inner` if it is not open yet; never closes it (its owner does).
final class CountingInputStream: ByteInputStream {
    private let inner: ByteInputStream
    private let counters: ProgressCounters
    private let measuresSize: Bool

    init(wrapping inner: ByteInputStream, counters: ProgressCounters, measuresSize: Bool) {
        self.inner = inner
        self.counters = counters
        self.measuresSize = measuresSize
        super.init()
    }

    override func openBacking() throws {
        try inner.openUnlessOpened()
        if measuresSize, let file = inner as? FileInputStream {
            if let info = FileInfo(descriptor: file.fileDescriptor), info.isRegularFile {
                let offset = inner.property(forKey: .fileCurrentOffset) as? Int64 ?? 0
                counters.inputSize.store(max(0, info.size - offset), ordering: .relaxed)
            }
        }
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.read(buffer, maxLength: maxLength)
        if count < 0 { throw inner.streamErrorOrFallback(operation: "read") }
        counters.bytesIn.wrappingAdd(Int64(count), ordering: .relaxed)
        return count
    }

    override func property(forKey key: ByteStream.PropertyKey) -> Any? {
        inner.property(forKey: key)
    }

    override func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard inner.setProperty(value, forKey: key) else { return false }
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }
}

/// Passes writes through to `inner` and adds them to ``ProgressCounters/bytesOut``. A failed
/// write throws `inner`'s error unchanged (its target stays "standard output" or the path).
///
/// Ownership: opens `inner` if it is not open yet; closes it on ``ByteStream/close()`` when
/// `closesInnerStream` (then throwing its error, a failed `close(2)` say).
final class CountingOutputStream: ByteOutputStream {
    private let inner: ByteOutputStream
    private let counters: ProgressCounters
    private let closesInnerStream: Bool

    init(wrapping inner: ByteOutputStream, counters: ProgressCounters, closesInnerStream: Bool) {
        self.inner = inner
        self.counters = counters
        self.closesInnerStream = closesInnerStream
        super.init()
    }

    override func openBacking() throws {
        try inner.openUnlessOpened()
    }

    override func closeBacking() throws {
        guard closesInnerStream else { return }
        try inner.closeOrThrow()
    }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.write(buffer, maxLength: maxLength)
        if count < 0 { throw inner.streamErrorOrFallback(operation: "write") }
        counters.bytesOut.wrappingAdd(Int64(count), ordering: .relaxed)
        return count
    }

    override var isFull: Bool { inner.isFull }
}


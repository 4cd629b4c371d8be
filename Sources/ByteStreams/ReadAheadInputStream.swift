import Dispatch

/// Reads an inner input stream ahead of its reader on a Dispatch worker, so that the thread
/// that reads this stream (an inflater, say) does not wait for I/O while bytes are coming:
/// the read half of pigz's pipelined unpack.
///
/// The worker reads `inner` in reads of at most `chunkSize` bytes into a ring of `bufferCount`
/// buffers of `chunkSize` bytes each, allocated once in `init`; ``ByteInputStream/read(_:maxLength:)``
/// copies from the filled part of the ring. The worker starts when the stream opens and stops
/// when the ring has less than one free chunk, at the end of `inner` or at its error; a read that
/// leaves half the ring (at least a chunk) free starts it again, so a slow reader costs one
/// worker start per half ring, not per chunk. So it holds a thread only while it reads, and memory stays at
/// `bufferCount × chunkSize` bytes whatever the size of the input or the speed of the reader.
/// Each byte is published to the reader as soon as the inner read that brought it returns: a
/// slow pipe is passed on without waiting for a buffer to fill.
///
/// End and errors arrive in order: the reader first gets every byte read before them, then `0`
/// (end), or `-1` with ``ByteStream/streamError`` set to the inner stream's error unchanged
/// (``ByteStreamError/Code-swift.enum/innerStreamFailed`` if the inner stream set none).
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: getting it gives the reader's
/// position, the inner stream's offset less the bytes read ahead (`nil` when the inner stream
/// gives none, as for pipes); setting it stops the worker (waiting for its current inner read
/// to return), discards the bytes read ahead, seeks the inner stream and lets the worker go on
/// from there. A seek the inner stream refuses returns `false` and loses no bytes.
///
/// Ownership: ``ByteStream/open()`` opens `inner` if it is not open yet; ``ByteStream/close()``
/// closes it when `closesInnerStream` is `true` (the default). Only the worker touches `inner`
/// while it runs: do not use `inner` yourself while this stream is open.
///
/// Blocking: a read blocks only while the ring is empty and the worker is reading.
/// ``ByteStream/close()``, a seek and deinitialisation stop the worker and wait for it: the
/// worker starts no new inner read once asked to stop, but a read already blocked in the kernel
/// (a pipe or terminal with no data) cannot be interrupted, so they wait until that read returns
/// (for a pipe, until its writer writes or closes). The worker never outlives that read.
///
/// Scheduled (``ByteStream/schedule(on:)-(DispatchQueue)``), it does not follow its inner
/// stream's readiness: the delegate is told "has bytes available" after every read, and a read
/// blocks as when polled. Schedule a `GzipInputStream` or `GzipOutputStream` over a pipe or
/// socket, or the pipe or socket itself, for events that never block.
///
/// Thread safety: as every stream, use it from one thread or queue at a time; the worker is
/// internal and synchronised with a serial Dispatch queue.
public final class ReadAheadInputStream: ByteInputStream {
    /// The number of buffers (of one chunk each) when a caller gives none: 16, so 64 KiB ahead
    /// with 4 KiB chunks, the size of a Linux pipe's buffer.
    public static let defaultBufferCount = 16

    /// The most bytes the worker asks of the inner stream in one read.
    public let chunkSize: Int
    /// The number of buffers of `chunkSize` bytes in the ring.
    public let bufferCount: Int

    private let inner: ByteInputStream
    private let closesInnerStream: Bool
    private let ring: Ring
    /// The inner stream's offset when the worker last started from an empty ring, or `nil`.
    private var startOffset: Int64?
    /// `true` between a successful open and close: the ring, not the inner stream, then
    /// answers the offset.
    private var isRunning = false

    /// A stream that reads `inner` ahead.
    /// - Parameters:
    ///   - inner: The stream read ahead; opened on ``ByteStream/open()`` if not open yet.
    ///   - chunkSize: The most bytes per read of `inner`, `1...ByteStream.maximumChunkSize`;
    ///     default 4096.
    ///   - bufferCount: The number of buffers of `chunkSize` bytes read ahead, `>= 1`;
    ///     default ``defaultBufferCount``. Memory: `bufferCount × chunkSize` bytes, allocated here.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `chunkSize` or `bufferCount` out of range, or a ring of more than
    ///   ``ByteStream/maximumRingSize`` bytes.
    public init(wrapping inner: ByteInputStream, chunkSize: Int = ByteStream.defaultChunkSize,
                bufferCount: Int = ReadAheadInputStream.defaultBufferCount,
                closesInnerStream: Bool = true) throws(ByteStreamError) {
        let operation = "create ReadAheadInputStream"
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        let capacity = try requireRing(count: bufferCount, of: chunkSize, operation: operation)
        self.chunkSize = chunkSize
        self.bufferCount = bufferCount
        self.inner = inner
        self.closesInnerStream = closesInnerStream
        ring = Ring(inner: inner, capacity: capacity, chunkSize: chunkSize)
        super.init()
    }

    deinit {
        ring.stopAndJoin()
    }

    override public func openBacking() throws {
        try inner.openUnlessOpened()
        startOffset = inner.property(forKey: .fileCurrentOffset) as? Int64
        ring.reset()
        isRunning = true
        ring.startWorker()
    }

    /// Stops and joins the worker (see the type's note on a blocked inner read), then closes
    /// `inner` if this stream owns it. Bytes read ahead and not read are dropped.
    override public func closeBacking() throws {
        ring.stopAndJoin()
        isRunning = false
        if closesInnerStream { inner.close() }
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        try ring.read(into: buffer, maxLength: maxLength)
    }

    /// ``ByteStream/PropertyKey/fileCurrentOffset`` only: the reader's position in bytes, as
    /// `Int64`, or `nil` when the inner stream gives none. Does not block.
    override public func property(forKey key: ByteStream.PropertyKey) -> Any? {
        guard key == .fileCurrentOffset else { return nil }
        guard isRunning else { return inner.property(forKey: key) }
        guard let startOffset else { return nil }
        return startOffset + Int64(ring.consumedCount)
    }

    /// Seeks: see the type's documentation. Blocks until the worker's current inner read
    /// returns. Seeking a stream at its end makes it readable again.
    /// - Returns: `false` for another key, or when the inner stream refuses the offset (then
    ///   nothing read ahead is lost).
    override public func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffset else { return false }
        guard isRunning else { return inner.setProperty(value, forKey: key) }
        ring.stopAndJoin()
        defer { ring.startWorker() }
        guard inner.setProperty(value, forKey: key) else { return false }
        ring.reset()
        startOffset = inner.property(forKey: .fileCurrentOffset) as? Int64
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }

    // MARK: For tests

    /// The most bytes the ring has held at once since the stream opened.
    var largestBufferedByteCount: Int { ring.largestBufferedByteCount }
    /// The ring's size in bytes: `bufferCount × chunkSize`.
    var capacity: Int { ring.capacity }
    /// Whether the worker is running now (it stops when the ring is full).
    var workerIsRunning: Bool { ring.workerIsRunning }
    /// Whether a close or seek has asked the worker to stop and not yet let it go on.
    var workerIsStopping: Bool { ring.workerIsStopping }
}

extension ReadAheadInputStream {
    /// What the reader gets after the last byte read ahead.
    private enum Terminal {
        case end
        case error(any Error)
    }

    /// The ring and the state shared by the reader and the worker: a single-producer,
    /// single-consumer ring of bytes. Counters grow from 0 after each ``reset()``; the bytes
    /// `consumed..<produced` (modulo `capacity`) are filled and belong to the reader, the rest
    /// to the worker. A ``QueueGuarded`` holds the counters; the bytes themselves are copied
    /// outside it. `Sendable` is unchecked for what the compiler cannot see: the bytes at
    /// `storage` belong to one side at a time (by the counters), and only the worker (until it
    /// is joined) uses `inner`.
    private final class Ring: @unchecked Sendable {
        let capacity: Int
        private let chunkSize: Int
        private let inner: ByteInputStream
        private let storage: UnsafeMutablePointer<UInt8>
        private let workerQueue = DispatchQueue(label: "gzstream.read-ahead.worker")
        /// Entered by the worker while it runs, so that stopping can wait for it.
        private let worker = DispatchGroup()
        /// Signalled by the worker when `readerWaits` was set.
        private let dataReady = DispatchSemaphore(value: 0)

        private struct Counters: Sendable {
            var produced = 0
            var consumed = 0
            var terminal: Terminal?
            var running = false
            var stopping = false
            var readerWaits = false
            var largestBuffered = 0
        }

        private let counters = QueueGuarded(Counters(), label: "gzstream.read-ahead.state")

        init(inner: ByteInputStream, capacity: Int, chunkSize: Int) {
            self.inner = inner
            self.capacity = capacity
            self.chunkSize = chunkSize
            storage = .allocate(capacity: capacity)
        }

        deinit {
            storage.deallocate()
        }

        var consumedCount: Int { counters.withLock { $0.consumed } }
        var largestBufferedByteCount: Int { counters.withLock { $0.largestBuffered } }
        var workerIsRunning: Bool { counters.withLock { $0.running } }
        var workerIsStopping: Bool { counters.withLock { $0.stopping } }

        /// Empties the ring. Only while the worker is stopped.
        func reset() {
            counters.withLock { counters in
                precondition(!counters.running, "the worker must be stopped")
                counters.produced = 0
                counters.consumed = 0
                counters.terminal = nil
            }
        }

        /// Lets the worker run again after ``stopAndJoin()`` and starts it if there is room.
        func startWorker() {
            counters.withLock { counters in
                counters.stopping = false
                startWorkerIfNeeded(&counters)
            }
        }

        /// Asks the worker to stop after its current inner read and waits until it has.
        func stopAndJoin() {
            counters.withLock { $0.stopping = true }
            worker.wait()
            // Orders everything the worker did (to the inner stream too) before what follows.
            counters.withLock { precondition(!$0.running) }
        }

        /// Copies up to `maxLength` filled bytes to `buffer`, waiting while the ring is empty.
        /// - Returns: `1...maxLength`, or `0` at the end of the inner stream.
        /// - Throws: The inner stream's error, once the bytes before it are read.
        func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
            while true {
                let (available, position, outcome): (Int, Int, Terminal?) = counters.withLock { counters in
                    let available = counters.produced - counters.consumed
                    if available == 0 && counters.terminal == nil {
                        counters.readerWaits = true
                        startWorkerIfNeeded(&counters)
                    }
                    return (available, counters.consumed % capacity, counters.terminal)
                }
                if available == 0 {
                    switch outcome {
                    case .end?: return 0
                    case .error(let error)?: throw error
                    case nil:
                        dataReady.wait()
                        continue
                    }
                }
                let count = min(maxLength, available, capacity - position)
                buffer.update(from: storage + position, count: count)
                counters.withLock { counters in
                    counters.consumed += count
                    startWorkerIfNeeded(&counters)
                }
                return count
            }
        }

        /// Starts the worker when it may read: not running, not stopped, no end or error met,
        /// and half the ring (at least a chunk) free, so that one start fills many chunks
        /// rather than one per read of a slow reader. Called inside `counters`' lock.
        private func startWorkerIfNeeded(_ counters: inout Counters) {
            let free = capacity - (counters.produced - counters.consumed)
            guard !counters.running, !counters.stopping, counters.terminal == nil,
                  free >= max(chunkSize, capacity / 2) else { return }
            counters.running = true
            workerQueue.async(group: worker) { self.runWorker() }
        }

        /// The worker: reads chunks into the free part of the ring until it is full, stopped,
        /// or the inner stream ends or fails.
        private func runWorker() {
            while true {
                let region: (position: Int, length: Int)? = counters.withLock { counters in
                    if counters.stopping || counters.terminal != nil
                        || capacity - (counters.produced - counters.consumed) < chunkSize {
                        counters.running = false
                        return nil
                    }
                    let position = counters.produced % capacity
                    return (position, min(chunkSize, capacity - position))
                }
                guard let region else { return }
                let count = inner.read(storage + region.position, maxLength: region.length)
                let error = count < 0 ? inner.streamErrorOrFallback(operation: "read") : nil
                counters.withLock { counters in
                    if count > 0 {
                        counters.produced += count
                        counters.largestBuffered = max(counters.largestBuffered, counters.produced - counters.consumed)
                    } else if let error {
                        counters.terminal = .error(error)
                    } else {
                        counters.terminal = .end
                    }
                    if counters.readerWaits {
                        counters.readerWaits = false
                        dataReady.signal()
                    }
                }
            }
        }
    }
}

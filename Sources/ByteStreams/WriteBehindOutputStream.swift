import Dispatch

/// Writes to an inner output stream behind its writer on a Dispatch worker, so that the thread
/// that writes this stream (an inflater, say) does not wait for I/O while there is room: the
/// write half of pigz's pipelined unpack.
///
/// ``ByteOutputStream/write(_:maxLength:)`` copies the bytes into a ring of `bufferCount`
/// buffers of `bufferSize` bytes each, allocated once in `init`, and returns; it blocks only
/// while every buffer is full, which bounds memory at `bufferCount × bufferSize` bytes however
/// slow the inner stream is. A worker writes the filled buffers to `inner`, in order, in writes
/// of at most `chunkSize` bytes. The worker may write the bytes of the buffer the writer is still
/// filling, up to those committed, so bytes reach `inner` without waiting for a buffer to fill;
/// when the worker is busy they gather, and it gets them in whole chunks. The worker holds a
/// thread only while it has bytes to write.
///
/// ``withWritableBuffer(minimumCapacity:_:)`` lends the free part of a buffer to the caller to
/// fill in place (a decoder inflating straight into the ring), saving the copy.
///
/// Errors: the first failure of `inner` (for example `EPIPE` or `ENOSPC`, as a
/// ``ByteStreamError`` whose `errno` and `target` are the inner stream's) becomes this stream's
/// error, unchanged, on the next write, ``withWritableBuffer(minimumCapacity:_:)``, ``flush()``
/// or ``ByteStream/close()``; the bytes still in the ring are then dropped. A write the inner
/// stream takes none of (`0`: a fixed buffer is full) is
/// ``ByteStreamError/Code-swift.enum/noSpaceAvailable``.
///
/// Ownership: ``ByteStream/open()`` opens `inner` if it is not open yet; ``ByteStream/close()``
/// writes out everything, waits for the worker, then closes `inner` when `closesInnerStream` is
/// `true` (the default) and reports the first error. Only the worker touches `inner` while this
/// stream is open: do not use `inner` yourself meanwhile. A stream dropped without being closed
/// drops the bytes not yet written, waits for the worker's current inner write and leaves
/// `inner` open.
///
/// Blocking: a write, ``withWritableBuffer(minimumCapacity:_:)`` and ``flush()`` block while
/// every buffer is full; ``ByteStream/close()`` and ``flush()`` until `inner` has taken every
/// byte. An inner write blocked in the kernel cannot be interrupted: close returns only once it
/// does (for a pipe, once its reader reads or closes its end).
///
/// Scheduled (``ByteStream/schedule(on:)-(DispatchQueue)``), it does not follow its inner
/// stream's readiness: the delegate is told "has space available" after every write, and a write
/// blocks as when polled. Schedule a `GzipInputStream` or `GzipOutputStream` over a pipe or
/// socket, or the pipe or socket itself, for events that never block.
///
/// No properties: a file offset would need a ``flush()`` first (flush, then ask `inner`).
///
/// Thread safety: as every stream, use it from one thread or queue at a time; the worker is
/// internal and synchronised with a serial Dispatch queue.
public final class WriteBehindOutputStream: ByteOutputStream {
    /// The number of buffers when a caller gives none: 4.
    public static let defaultBufferCount = 4
    /// The size in bytes of a buffer when a caller gives none: 32 KiB, or `chunkSize` when
    /// that is larger. With the defaults, 128 KiB in all.
    public static let defaultBufferSize = 32 << 10

    /// The most bytes the worker offers the inner stream in one write.
    public let chunkSize: Int
    /// The size in bytes of each buffer of the ring.
    public let bufferSize: Int
    /// The number of buffers in the ring.
    public let bufferCount: Int

    private let inner: ByteOutputStream
    private let closesInnerStream: Bool
    private let ring: Ring

    /// A stream that writes behind into `inner`.
    /// - Parameters:
    ///   - inner: Where the bytes go; opened on ``ByteStream/open()`` if not open yet.
    ///   - chunkSize: The most bytes per write to `inner`, `1...ByteStream.maximumChunkSize`;
    ///     default 4096.
    ///   - bufferSize: The size in bytes of each buffer, `1...ByteStream.maximumChunkSize`;
    ///     default the larger of ``defaultBufferSize`` and `chunkSize`. Also the most
    ///     ``withWritableBuffer(minimumCapacity:_:)`` can promise.
    ///   - bufferCount: The number of buffers, `>= 1` (2 or more to overlap writer and worker);
    ///     default ``defaultBufferCount``. Memory: `bufferCount × bufferSize` bytes, allocated here.
    ///   - closesInnerStream: Close `inner` when this stream closes; default `true`.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `chunkSize`, `bufferSize` or `bufferCount` out of range, or a ring of more than
    ///   ``ByteStream/maximumRingSize`` bytes.
    public init(wrapping inner: ByteOutputStream, chunkSize: Int = ByteStream.defaultChunkSize,
                bufferSize: Int? = nil, bufferCount: Int = WriteBehindOutputStream.defaultBufferCount,
                closesInnerStream: Bool = true) throws(ByteStreamError) {
        let operation = "create WriteBehindOutputStream"
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: operation)
        let bufferSize = bufferSize ?? max(Self.defaultBufferSize, chunkSize)
        try requireArgument(bufferSize, in: ByteStream.chunkSizes, "bufferSize", operation: operation)
        try requireRing(count: bufferCount, of: bufferSize, operation: operation)
        self.chunkSize = chunkSize
        self.bufferSize = bufferSize
        self.bufferCount = bufferCount
        self.inner = inner
        self.closesInnerStream = closesInnerStream
        ring = Ring(inner: inner, chunkSize: chunkSize, bufferSize: bufferSize, bufferCount: bufferCount)
        super.init()
    }

    deinit {
        // A stream dropped without close: stop writing and wait for the worker.
        ring.abandonAndJoin()
    }

    override public func openBacking() throws {
        try inner.openUnlessOpened()
    }

    /// Takes all `maxLength` bytes, blocking while every buffer is full; fewer only when the
    /// inner stream failed meanwhile (the next call reports it).
    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        var taken = 0
        while taken < maxLength {
            let region: UnsafeMutableRawBufferPointer
            do {
                region = try ring.beginFill(minimumCapacity: 1)
            } catch {
                if taken > 0 { return taken }
                throw error
            }
            let count = min(region.count, maxLength - taken)
            region.baseAddress!.copyMemory(from: buffer + taken, byteCount: count)
            ring.commit(count)
            taken += count
        }
        return taken
    }

    /// Lends the caller the free part of the ring's current buffer to write into directly,
    /// then hands the bytes it wrote to the worker: a write without the copy.
    ///
    /// - Parameters:
    ///   - minimumCapacity: The fewest bytes `body` needs, `1...bufferSize`; default 1. A
    ///     buffer with less room left is handed to the worker first and the next one lent.
    ///   - body: Writes its bytes from the start of the buffer it is given (at least
    ///     `minimumCapacity` bytes, at most `bufferSize`) and returns how many it wrote,
    ///     `0...buffer.count`. The buffer is valid only during the call; `body` must not call
    ///     this stream. If `body` throws, nothing it wrote is kept. Bytes written before go on
    ///     to the worker meanwhile, so `body` may block (on a read, say).
    /// - Returns: The count `body` returned.
    /// - Throws: The stream's error (the inner stream's first error, unchanged), also recorded
    ///   as ``ByteStream/streamError``; ``ByteStreamError/Code-swift.enum/notOpen`` when the
    ///   stream is not open; or what `body` throws, which leaves the stream as it was;
    ///   ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `minimumCapacity` out of range, which also leaves the stream as it was (`body` is not
    ///   called). A count `body` returns out of range is a precondition failure.
    ///
    /// Status: as a write, `.open` stays `.open`, or `.error`. Blocks while every buffer is
    /// full. Posts no event.
    @discardableResult
    public func withWritableBuffer(minimumCapacity: Int = 1,
                                   _ body: (UnsafeMutableRawBufferPointer) throws -> Int) throws -> Int {
        try requireArgument(minimumCapacity, in: 1...bufferSize, "minimumCapacity", operation: "write")
        switch streamStatus {
        case .open: break
        case .error: throw streamErrorOrFallback(operation: "write")
        default:
            let error = ByteStreamError(.notOpen, operation: "write")
            reject(error)
            throw error
        }
        let region: UnsafeMutableRawBufferPointer
        do {
            region = try ring.beginFill(minimumCapacity: minimumCapacity)
        } catch {
            fail(error)
            throw error
        }
        var written = 0
        defer { ring.commit(written) }
        let count = try body(region)
        precondition((0...region.count).contains(count), "body returned \(count) for \(region.count) bytes")
        written = count
        return count
    }

    /// Waits until the worker has passed every byte written so far to the inner stream.
    /// Does not flush `inner` itself (a `GzipOutputStream` keeps its own state).
    /// - Throws: The inner stream's first error, also recorded as ``ByteStream/streamError``;
    ///   ``ByteStreamError/Code-swift.enum/notOpen`` when the stream is not open.
    public func flush() throws {
        try throwIfFailed()
        guard streamStatus == .open else { throw ByteStreamError(.notOpen, operation: "flush") }
        do {
            try ring.drain()
        } catch {
            fail(error)
            throw error
        }
    }

    /// Writes out every buffered byte, waits for the worker, closes `inner` if this stream
    /// owns it, and throws the first error: the inner stream's write error, else its close
    /// error. Blocks until the inner stream has taken every byte (for a full pipe, until its
    /// reader reads).
    override public func closeBacking() throws {
        var firstError: (any Error)?
        do {
            if streamStatus == .error {
                ring.abandonAndJoin()
            } else {
                try ring.drain()
            }
        } catch {
            firstError = error
        }
        ring.abandonAndJoin()
        if closesInnerStream {
            inner.close()
            if firstError == nil, inner.streamStatus == .error {
                firstError = inner.streamErrorOrFallback(operation: "close")
            }
        }
        if let firstError { throw firstError }
    }

    // MARK: For tests

    /// The most bytes the ring has held at once (taken and not yet written to `inner`).
    var largestBufferedByteCount: Int { ring.largestBufferedByteCount }
    /// The bytes held now.
    var bufferedByteCount: Int { ring.bufferedByteCount }
    /// How many times the writer waited because every buffer was full.
    var writerWaitCount: Int { ring.writerWaitCount }
}

extension WriteBehindOutputStream {
    /// The buffers and the state shared by the writer and the worker. Buffers are used in ring
    /// order by sequence number: `written..<queued` are handed over whole (full, or ended by
    /// ``drain()``), and `queued` is the writer's current buffer while `hasCurrent`. The worker
    /// writes the oldest buffer not yet written, from `sentInOldest` on: to its length when it
    /// was handed over, else (the current buffer) up to the bytes committed so far, while the
    /// writer fills the rest. A ``QueueGuarded`` holds that state; bytes are copied and written
    /// outside it, writer and worker on disjoint bytes. `Sendable` is unchecked for what the
    /// compiler cannot see: the bytes at `storage` belong to one side at a time (by the
    /// state), and only the worker (until it is joined) writes to `inner`.
    private final class Ring: @unchecked Sendable {
        private let inner: ByteOutputStream
        private let chunkSize: Int
        private let bufferSize: Int
        private let bufferCount: Int
        private let storage: UnsafeMutableRawPointer
        private let workerQueue = DispatchQueue(label: "gzstream.write-behind.worker")
        /// Entered by the worker while it runs, so that close can wait for it.
        private let worker = DispatchGroup()
        /// Signalled by the worker when `writerWaits` was set.
        private let progress: DispatchSemaphore

        /// What the writer and the worker share, and the moves on it (made inside the lock).
        private struct Shared: Sendable {
            var lengths: [Int]
            var queued = 0
            var written = 0
            var sentInOldest = 0
            var hasCurrent = false
            var currentCount = 0
            var running = false
            var abandoned = false
            var error: (any Error)?
            var writerWaits = false
            var buffered = 0
            var largestBuffered = 0
            var waits = 0
            /// The ring's `progress`.
            let progress: DispatchSemaphore

            /// Hands the current buffer over whole (or frees it when empty).
            mutating func queueCurrent(bufferCount: Int) {
                guard hasCurrent else { return }
                hasCurrent = false
                if currentCount > 0 {
                    lengths[queued % bufferCount] = currentCount
                    queued += 1
                }
                currentCount = 0
            }

            /// Wakes the writer if it waits.
            mutating func wakeWriter() {
                if writerWaits {
                    writerWaits = false
                    progress.signal()
                }
            }

            /// The next bytes to write, freeing buffers written to their end; `nil` when there
            /// are none (the worker then stops).
            mutating func nextJob(bufferCount: Int) -> (index: Int, start: Int, end: Int)? {
                while !abandoned, error == nil {
                    let index = written % bufferCount
                    let end: Int
                    if written < queued {
                        end = lengths[index]
                    } else if hasCurrent {
                        end = currentCount
                    } else {
                        return nil
                    }
                    if sentInOldest < end { return (index, sentInOldest, end) }
                    guard written < queued else { return nil }
                    written += 1
                    sentInOldest = 0
                    wakeWriter()
                }
                return nil
            }
        }

        private let shared: QueueGuarded<Shared>

        init(inner: ByteOutputStream, chunkSize: Int, bufferSize: Int, bufferCount: Int) {
            self.inner = inner
            self.chunkSize = chunkSize
            self.bufferSize = bufferSize
            self.bufferCount = bufferCount
            storage = .allocate(byteCount: bufferSize * bufferCount, alignment: 16)
            let progress = DispatchSemaphore(value: 0)
            self.progress = progress
            shared = QueueGuarded(Shared(lengths: Array(repeating: 0, count: bufferCount), progress: progress),
                                  label: "gzstream.write-behind.state")
        }

        deinit {
            storage.deallocate()
        }

        var largestBufferedByteCount: Int { shared.withLock { $0.largestBuffered } }
        var bufferedByteCount: Int { shared.withLock { $0.buffered } }
        var writerWaitCount: Int { shared.withLock { $0.waits } }

        /// Returns the free part of the current buffer, at least `minimumCapacity` bytes,
        /// waiting while every buffer is full; the writer owns it until ``commit(_:)``.
        /// - Throws: The inner stream's first error.
        func beginFill(minimumCapacity: Int) throws -> UnsafeMutableRawBufferPointer {
            while true {
                let region: UnsafeMutableRawBufferPointer? = try shared.withLock { shared in
                    if let error = shared.error { throw error }
                    if shared.hasCurrent && bufferSize - shared.currentCount < minimumCapacity {
                        shared.queueCurrent(bufferCount: bufferCount)
                        startWorkerIfNeeded(&shared)
                    }
                    if !shared.hasCurrent {
                        guard shared.queued - shared.written < bufferCount else {
                            shared.writerWaits = true
                            shared.waits += 1
                            return nil
                        }
                        shared.hasCurrent = true
                        shared.currentCount = 0
                    }
                    let start = storage + (shared.queued % bufferCount) * bufferSize + shared.currentCount
                    return UnsafeMutableRawBufferPointer(start: start, count: bufferSize - shared.currentCount)
                }
                if let region { return region }
                progress.wait()
            }
        }

        /// Keeps `count` bytes written at the start of the region ``beginFill(minimumCapacity:)``
        /// returned: the worker may write them from now on. A full buffer is handed over.
        func commit(_ count: Int) {
            guard count > 0 else { return }
            shared.withLock { shared in
                shared.currentCount += count
                shared.buffered += count
                shared.largestBuffered = max(shared.largestBuffered, shared.buffered)
                if shared.currentCount == bufferSize { shared.queueCurrent(bufferCount: bufferCount) }
                startWorkerIfNeeded(&shared)
            }
        }

        /// Hands every byte to the worker and waits until it has written them all.
        /// - Throws: The inner stream's first error.
        func drain() throws {
            while true {
                let done: Bool = try shared.withLock { shared in
                    if let error = shared.error { throw error }
                    shared.queueCurrent(bufferCount: bufferCount)
                    startWorkerIfNeeded(&shared)
                    if shared.written == shared.queued { return true }
                    shared.writerWaits = true
                    return false
                }
                if done { return }
                progress.wait()
            }
        }

        /// Tells the worker to stop after its current inner write, dropping what is left,
        /// and waits for it.
        func abandonAndJoin() {
            shared.withLock { $0.abandoned = true }
            worker.wait()
            // Orders everything the worker did (to the inner stream too) before what follows.
            shared.withLock { precondition(!$0.running) }
        }

        /// Starts the worker when there are bytes to write or a written buffer to free.
        /// Called inside `shared`'s lock.
        private func startWorkerIfNeeded(_ shared: inout Shared) {
            guard !shared.running, !shared.abandoned, shared.error == nil,
                  shared.buffered > 0 || shared.written < shared.queued else { return }
            shared.running = true
            workerQueue.async(group: worker) { self.runWorker() }
        }

        /// The worker: writes committed bytes in order, in writes of at most `chunkSize`,
        /// until there are none or the inner stream fails.
        private func runWorker() {
            while true {
                let job: (index: Int, start: Int, end: Int)? = shared.withLock { shared in
                    if let job = shared.nextJob(bufferCount: bufferCount) { return job }
                    shared.running = false
                    shared.wakeWriter()
                    return nil
                }
                guard let job else { return }
                let base = (storage + job.index * bufferSize).assumingMemoryBound(to: UInt8.self)
                var offset = job.start
                var failure: (any Error)?
                while offset < job.end {
                    let count = inner.write(base + offset, maxLength: min(chunkSize, job.end - offset))
                    if count < 0 {
                        failure = inner.streamErrorOrFallback(operation: "write")
                        break
                    }
                    if count == 0 {
                        failure = ByteStreamError(.noSpaceAvailable, operation: "write")
                        break
                    }
                    offset += count
                }
                shared.withLock { shared in
                    shared.buffered -= offset - job.start
                    shared.sentInOldest = offset
                    if let failure { shared.error = failure }
                }
            }
        }
    }
}

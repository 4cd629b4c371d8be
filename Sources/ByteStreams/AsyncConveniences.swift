#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

// Swift concurrency over blocking streams. The cooperative thread pool has one thread per core;
// a read or write that waits on a peer must not hold one. So:
// - a socket or pipe is waited on with a Dispatch read or write source (no thread is blocked
//   while it waits) that a cancelled task cancels;
// - the writes of `writeAll` run on a Dispatch queue, in pieces, whatever the stream.

extension ByteOutputStream {
    /// The most bytes the asynchronous ``writeAll(_:)-5fk87`` hands to one `write` call: 64 KiB.
    /// Cancellation is checked between pieces.
    public static let asyncWritePieceSize = 64 * 1024

    /// Writes all of `bytes` without holding a thread of the cooperative pool, opening the
    /// stream first if needed.
    ///
    /// The bytes go out in pieces of at most ``asyncWritePieceSize`` bytes, each written with
    /// ``write(_:maxLength:)`` on a Dispatch queue (where a full socket may block it) while the
    /// task is suspended. Before each piece to a socket or pipe, the task waits without a thread
    /// until the descriptor can take bytes (`poll(2)` says `POLLOUT`).
    ///
    /// - Parameter bytes: The bytes, in a `Sendable` sequence (`[UInt8]`, `Data`, a slice);
    ///   one that is not contiguous is copied into an array first.
    /// - Throws: `CancellationError` when the task is cancelled before a piece or while waiting
    ///   for the descriptor: the pieces before it were written, the stream stays open and
    ///   usable; the stream's error (as ``writeAll(_:)-(UnsafeRawBufferPointer)``);
    ///   ``ByteStreamError/Code-swift.enum/noSpaceAvailable`` when a fixed buffer fills.
    ///
    /// A piece already inside `write` finishes before cancellation is seen (a peer that stops
    /// reading then holds it). Thread safety: the stream is used from one thread at a time,
    /// the task's or the queue's; do not use it elsewhere until this returns. The
    /// corresponding C functions are `write(2)` or `send(2)`, and `epoll(7)` through Dispatch.
    public func writeAll<Bytes: Sequence & Sendable>(_ bytes: Bytes) async throws where Bytes.Element == UInt8 {
        if bytes.withContiguousStorageIfAvailable({ _ in true }) == nil {
            try await writePieces(of: Array(bytes))
        } else {
            try await writePieces(of: bytes)
        }
    }

    private func writePieces<Bytes: Sequence & Sendable>(of bytes: Bytes) async throws where Bytes.Element == UInt8 {
        if streamStatus == .notOpen { try openOrThrow() }
        let total = bytes.withContiguousStorageIfAvailable { $0.count }!
        var offset = 0
        while offset < total {
            try Task.checkCancellation()
            if let descriptor = waitableDescriptor(of: self) {
                try await awaitReadiness(of: descriptor, for: .write)
            }
            let start = offset
            // The task stays suspended while the queue writes, so the stream is still used by
            // one thread at a time; the compiler cannot see that across the continuation.
            nonisolated(unsafe) let stream = self
            offset += try await runOnBlockingQueue {
                try bytes.withContiguousStorageIfAvailable { buffer in
                    let count = stream.write(buffer.baseAddress! + start, maxLength: min(total - start, Self.asyncWritePieceSize))
                    if count < 0 { throw stream.streamErrorOrFallback(operation: "write") }
                    if count == 0 { throw ByteStreamError(.noSpaceAvailable, operation: "write") }
                    return count
                }!
            }
        }
    }
}

extension ByteInputStream {
    /// Before a chunk of ``chunks(maxLength:)``: checks `maxLength`, opens the stream if
    /// needed and, for a socket or pipe, waits without a thread until a read will not block,
    /// throwing `CancellationError` as soon as the task is cancelled. Runs isolated to the
    /// caller (`isolation`), so the stream never leaves the caller's actor.
    func prepareChunk(maxLength: Int, isolation: isolated (any Actor)? = #isolation) async throws {
        try requireArgument(maxLength, in: ByteStream.chunkSizes, "maxLength", operation: "read chunk")
        if streamStatus == .notOpen { try openOrThrow() }
        guard streamStatus == .open, let descriptor = waitableDescriptor(of: self) else { return }
        try Task.checkCancellation()
        try await awaitReadiness(of: descriptor, for: .read)
    }
}

/// The descriptor of a stream whose reads or writes wait on a peer (a socket, a pipe or FIFO),
/// or `nil` for memory, regular files, devices and wrapping streams, which are read as before.
private func waitableDescriptor(of stream: ByteStream) -> Int32? {
    let descriptor: Int32
    switch stream {
    case let socket as SocketInputStream: descriptor = socket.fileDescriptor
    case let socket as SocketOutputStream: descriptor = socket.fileDescriptor
    case let file as FileInputStream: descriptor = file.fileDescriptor
    case let file as FileOutputStream: descriptor = file.fileDescriptor
    default: return nil
    }
    var status = stat()
    guard descriptor >= 0, fstat(descriptor, &status) == 0 else { return nil }
    let type = status.st_mode & S_IFMT
    return type == S_IFSOCK || type == S_IFIFO ? descriptor : nil
}

/// Where the asynchronous conveniences run blocking calls.
private let blockingQueue = DispatchQueue(label: "gzstream.async-io", attributes: .concurrent)
/// Where the readiness sources deliver.
private let readinessQueue = DispatchQueue(label: "gzstream.readiness")

/// Runs `body` on ``blockingQueue`` and returns its result to the suspended task.
private func runOnBlockingQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        blockingQueue.async { continuation.resume(with: Result(catching: body)) }
    }
}

private enum Readiness { case read, write }

/// Returns when `descriptor` is ready for `readiness` (or has an error or hang-up for the next
/// call to report); throws `CancellationError` when the task is cancelled first.
/// The corresponding C functions are `poll(2)` (a first look that does not wait) and
/// `epoll(7)` through a Dispatch source.
private func awaitReadiness(of descriptor: Int32, for readiness: Readiness) async throws {
    var entry = pollfd(fd: descriptor, events: Int16(readiness == .read ? POLLIN : POLLOUT), revents: 0)
    if poll(&entry, 1, 0) > 0 { return }
    let waiter = ReadinessWaiter()
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiter.start(descriptor: descriptor, readiness: readiness, continuation: continuation)
        }
    } onCancel: {
        waiter.cancel()
    }
}

/// One wait for readiness: a Dispatch source, resumed once, by readiness or by cancellation.
/// The continuation is resumed from the source's cancel handler, so that the source has let
/// go of the descriptor before the caller may close it.
private final class ReadinessWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var source: SendableSource?
        var cancelled = false
        var finished = false
    }

    /// A Dispatch source is thread-safe (`cancel` may be called from any thread); Swift's
    /// overlay does not say so.
    private struct SendableSource: @unchecked Sendable {
        let source: any DispatchSourceProtocol
    }

    private let state = QueueGuarded(State(), label: "gzstream.async.state")

    func start(descriptor: Int32, readiness: Readiness, continuation: CheckedContinuation<Void, any Error>) {
        let source: any DispatchSourceProtocol = readiness == .read
            ? DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: readinessQueue)
            : DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: readinessQueue)
        source.setEventHandler { [self] in finish() }
        source.setCancelHandler { [self] in resume() }
        let box = SendableSource(source: source)
        let cancelledBefore = state.withLock { state in
            state.continuation = continuation
            state.source = box
            if state.cancelled { state.finished = true }
            return state.cancelled
        }
        // Activated either way: Dispatch does not allow releasing a source never activated.
        source.activate()
        if cancelledBefore { source.cancel() }
    }

    /// Called by the task's cancellation handler, possibly before ``start``.
    func cancel() {
        state.withLock { $0.cancelled = true }
        finish()
    }

    /// Stops the source once; its cancel handler resumes the task.
    private func finish() {
        let box: SendableSource? = state.withLock { state in
            if state.finished { return nil }
            state.finished = true
            return state.source
        }
        box?.source.cancel()
    }

    private func resume() {
        let (continuation, cancelled) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.cancelled)
        }
        if cancelled {
            continuation?.resume(throwing: CancellationError())
        } else {
            continuation?.resume()
        }
    }
}


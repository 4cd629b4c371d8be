#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Swift concurrency over streams that are not scheduled: before each chunk that `chunks()` and
// the line sequences read from a socket or pipe, the task waits for the descriptor on the one
// poll(2) loop (Readiness.swift) instead of blocking a thread of the cooperative pool, and a
// cancelled task stops the wait. The reads and writes of AsyncTransfers.swift go further: they
// schedule the stream, so wrapping streams (gzip) never block either.

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
        try await awaitReadiness(of: descriptor, events: Int16(POLLIN))
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

/// Returns when `descriptor` is ready for `events` (`POLLIN` or `POLLOUT`), or has an error or
/// hang-up for the next call to report; throws `CancellationError` when the task is cancelled
/// first. The descriptor must stay open until this returns. Does not block a thread: a first
/// look with a zero timeout, then a one-shot registration on the ``ReadinessLoop``.
/// The corresponding C function is `poll(2)`.
func awaitReadiness(of descriptor: Int32, events: Int16) async throws {
    var entry = pollfd(fd: descriptor, events: events, revents: 0)
    if SystemCalls.retryingOnInterrupt({ poll(&entry, 1, 0) }) > 0 { return }
    let waiter = ReadinessWaiter()
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiter.start(descriptor: descriptor, events: events, continuation: continuation)
        }
    } onCancel: {
        waiter.finish(cancelled: true)
    }
}

/// One wait for readiness: a registration on the ``ReadinessLoop``, resumed once, by readiness
/// or by cancellation, and removed before the task resumes (so the caller may then close the
/// descriptor).
private final class ReadinessWaiter: Sendable {
    private struct State: Sendable {
        var continuation: CheckedContinuation<Void, any Error>?
        var token: UInt64?
        var cancelled = false
        var finished = false
    }

    private let state = QueueGuarded(State(), label: "gzstream.async.readiness")

    func start(descriptor: Int32, events: Int16, continuation: CheckedContinuation<Void, any Error>) {
        let cancelledBefore = state.withLock { state in
            if state.cancelled {
                state.finished = true
                return true
            }
            state.continuation = continuation
            // The handler runs on the loop's thread and takes this lock, so it sees the token.
            state.token = ReadinessLoop.shared.add(descriptor, events: events) { [self] in finish(cancelled: false) }
            return false
        }
        if cancelledBefore { continuation.resume(throwing: CancellationError()) }
    }

    /// Ends the wait once: by readiness, or by the task's cancellation (possibly before ``start``).
    func finish(cancelled: Bool) {
        let (continuation, token): (CheckedContinuation<Void, any Error>?, UInt64?) = state.withLock { state in
            if cancelled { state.cancelled = true }
            guard !state.finished, state.continuation != nil else { return (nil, nil) }
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.token)
        }
        if let token { ReadinessLoop.shared.remove(token) }
        if cancelled {
            continuation?.resume(throwing: CancellationError())
        } else {
            continuation?.resume()
        }
    }
}

// Reads and writes that suspend the task instead of blocking a thread. A stream used through
// them is scheduled on an AwaitingScheduler: over a socket, pipe or FIFO its descriptor is
// non-blocking and watched by the one poll(2) loop (Readiness.swift), a wrapping stream (gzip)
// follows its inner stream there, and the work that readiness hands on runs in the task at its
// next read or write. A read with nothing yet, or a write into a full buffer, suspends the
// task until the loop says the descriptor is ready; no thread is parked per stream.

/// A wrapping output stream that holds output its scheduled inner stream has not taken yet
/// (`GzipOutputStream`): ``ByteOutputStream/finishAndClose(isolation:)`` ends it and waits for
/// the inner stream to take everything before closing, so that closing does not block.
package protocol HoldsOutputForInnerStream: ByteOutputStream {
    /// Produces what closing would write (for gzip the last deflate block and the trailer),
    /// held like any other output while the inner stream cannot take it. Writes fail after.
    func finishOutput() throws
    /// Bytes produced and not yet taken by the inner stream.
    var heldOutputCount: Int { get }
}

extension ByteStream {
    /// The stream's ``AwaitingScheduler``: scheduled on a new one if the stream is unscheduled.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` when the
    ///   stream is scheduled elsewhere (a queue or run loop), whose events the task would miss.
    func awaitingScheduler(operation: String) throws -> AwaitingScheduler {
        if let scheduler = scheduler as? AwaitingScheduler { return scheduler }
        guard scheduler == nil else {
            throw ByteStreamError(.invalidArgument(name: "scheduler",
                                                   message: "the stream is scheduled on a queue or run loop; remove it from its schedule first"),
                                  operation: operation)
        }
        let scheduler = AwaitingScheduler()
        schedule(on: scheduler)
        return scheduler
    }
}

extension ByteInputStream {
    /// Reads up to `buffer.count` bytes, suspending the task (not blocking a thread) until
    /// some have come, opening the stream first if needed.
    ///
    /// - Parameters:
    ///   - buffer: Where the bytes go; at least 1 byte long.
    ///   - isolation: The caller's actor, where the stream is used; leave the default.
    /// - Returns: The number of bytes read, `1...buffer.count`, or `0` at the end of the stream
    ///   (status `.atEnd`).
    /// - Throws: The stream's error (``ByteStream/streamError``: a ``ByteStreamError`` with
    ///   `errno`, `ECONNRESET` for a reset connection, or a wrapping stream's own error such as
    ///   `GzipError`); `CancellationError` when the task is cancelled while it waits, after
    ///   which the stream is closed (for a socket, its input half; status `.closed`);
    ///   ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` when the stream is
    ///   scheduled on a queue or run loop.
    ///
    /// The first call schedules the stream on a scheduler of its own, driven by this task: over
    /// a socket, pipe or FIFO (``SocketInputStream``, a ``FileInputStream`` of a FIFO, or a
    /// `GzipInputStream` over one) the descriptor becomes non-blocking and the task is
    /// suspended until `poll(2)` says `POLLIN`, by the one internal loop that watches every
    /// such stream. Regular files, memory and devices are read as polled streams are: the read
    /// runs on the task's thread. The stream stays scheduled so until ``ByteStream/close()``
    /// or ``ByteStream/removeFromSchedule()``; do not schedule it elsewhere meanwhile.
    /// Thread safety: one task uses the stream; the compiler keeps it there (streams are not
    /// `Sendable`). The corresponding C functions are `recv(2)` or `read(2)`, and `poll(2)`.
    public func read(into buffer: UnsafeMutableRawBufferPointer,
                     isolation: isolated (any Actor)? = #isolation) async throws -> Int {
        precondition(buffer.count > 0, "buffer must hold at least one byte")
        return try await readAwaiting(into: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                      maxLength: buffer.count)
    }

    /// Whether the asynchronous reads schedule this stream on the task's scheduler: it is
    /// unscheduled, or scheduled so already. One scheduled on a queue or run loop is read by
    /// `chunks()` and the line sequences as an unscheduled one is, waiting for its descriptor.
    var readsThroughTask: Bool { scheduler == nil || scheduler is AwaitingScheduler }

    /// One chunk of `1...maxLength` bytes read as ``read(into:isolation:)`` reads; empty at
    /// the end. For the sequences (`chunks()`, the bytes of `lines`).
    func readChunkAwaiting(maxLength: Int, isolation: isolated (any Actor)? = #isolation) async throws -> [UInt8] {
        // Not an array's own storage: its pointer must not outlive a closure, and this suspends.
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: maxLength)
        defer { buffer.deallocate() }
        let count = try await readAwaiting(into: buffer, maxLength: maxLength)
        return Array(UnsafeBufferPointer(start: buffer, count: count))
    }

    /// ``read(into:isolation:)`` into `maxLength` bytes at `buffer`, for the sequences too.
    func readAwaiting(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int,
                      isolation: isolated (any Actor)? = #isolation) async throws -> Int {
        let scheduler = try awaitingScheduler(operation: "read")
        if streamStatus == .notOpen { try openOrThrow() }
        // Work the read queued (an event's delivery holds the stream) runs before returning,
        // so that none is left to keep a stream that is dropped alive.
        defer { scheduler.runQueued() }
        while true {
            scheduler.runQueued()
            let count = read(buffer, maxLength: maxLength)
            if count > 0 { return count }
            if count < 0 { throw streamErrorOrFallback(operation: "read") }
            if streamStatus != .open { return 0 }
            do {
                try await scheduler.waitForWork()
            } catch {
                close()
                throw error
            }
        }
    }
}

extension ByteOutputStream {
    /// The most bytes ``write(contentsOf:isolation:)`` offers one `write` call: 64 KiB.
    public static let asyncWritePieceSize = 64 * 1024

    /// Writes all of `bytes`, suspending the task (not blocking a thread) while the stream has
    /// no room, opening the stream first if needed.
    ///
    /// Named apart from the blocking ``writeAll(_:)-(Bytes)``, so that the blocking call keeps
    /// compiling, without `await`, in an `async` function.
    ///
    /// - Parameters:
    ///   - bytes: The bytes (`[UInt8]`, `Data`, a slice); a sequence that is not contiguous is
    ///     copied into an array first.
    ///   - isolation: The caller's actor, where the stream is used; leave the default.
    /// - Throws: The stream's error (`EPIPE` or `ECONNRESET` for a peer that has gone);
    ///   ``ByteStreamError/Code-swift.enum/noSpaceAvailable`` when a fixed buffer fills;
    ///   `CancellationError` when the task is cancelled before a piece or while it waits: the
    ///   bytes before were taken and the stream stays open (close it, or reset it with
    ///   ``SocketOutputStream/resetsOnClose``); ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)``
    ///   when the stream is scheduled on a queue or run loop.
    ///
    /// Scheduling and blocking as ``ByteInputStream/read(into:isolation:)``: over a socket,
    /// pipe or FIFO, or a `GzipOutputStream` over one, the task is suspended until `poll(2)`
    /// says `POLLOUT`; other streams write on the task's thread. A `GzipOutputStream` may still
    /// hold compressed bytes when this returns: ``finishAndClose(isolation:)`` writes them.
    /// Thread safety: one task uses the stream. The corresponding C functions are `send(2)` or
    /// `write(2)`, and `poll(2)`.
    public func write<Bytes: Sequence>(contentsOf bytes: Bytes,
                                       isolation: isolated (any Actor)? = #isolation) async throws
        where Bytes.Element == UInt8
    {
        if bytes.withContiguousStorageIfAvailable({ _ in true }) == nil {
            try await writePieces(of: Array(bytes))
        } else {
            try await writePieces(of: bytes)
        }
    }

    private func writePieces<Bytes: Sequence>(of bytes: Bytes, isolation: isolated (any Actor)? = #isolation) async throws
        where Bytes.Element == UInt8
    {
        // Scheduled before it opens, so a gzip stream's header is held rather than waited for.
        let scheduler = try awaitingScheduler(operation: "write")
        if streamStatus == .notOpen { try openOrThrow() }
        let total = bytes.withContiguousStorageIfAvailable { $0.count }!
        defer { scheduler.runQueued() }  // as in read(into:)
        var offset = 0
        while offset < total {
            try Task.checkCancellation()
            scheduler.runQueued()
            let count = bytes.withContiguousStorageIfAvailable { buffer in
                write(buffer.baseAddress! + offset, maxLength: min(total - offset, Self.asyncWritePieceSize))
            }!
            if count < 0 { throw streamErrorOrFallback(operation: "write") }
            if count == 0 {
                if streamStatus == .atEnd { throw ByteStreamError(.noSpaceAvailable, operation: "write") }
                try await scheduler.waitForWork()
            }
            offset += count
        }
    }

    /// Waits, suspending the task (not blocking a thread), until what a wrapping stream holds
    /// for its inner stream has been taken: after a `GzipOutputStream`'s `flush()`, until the
    /// flushed bytes are in the socket, so the peer can inflate them. Returns at once for
    /// other streams, and for a stream never used asynchronously (it holds nothing).
    /// - Throws: The stream's error, or `CancellationError` when the task is cancelled while it
    ///   waits (the stream stays open).
    ///
    /// Thread safety: one task uses the stream. The corresponding C functions are `send(2)` or
    /// `write(2)`, and `poll(2)`.
    public func drain(isolation: isolated (any Actor)? = #isolation) async throws {
        guard let holding = self as? any HoldsOutputForInnerStream, holding.heldOutputCount > 0 else { return }
        let scheduler = try awaitingScheduler(operation: "drain")
        while holding.heldOutputCount > 0, streamStatus == .open {
            scheduler.runQueued()
            if holding.heldOutputCount > 0, streamStatus == .open { try await scheduler.waitForWork() }
        }
        try throwIfFailed()
    }

    /// Ends the stream and closes it, suspending the task (not blocking a thread) until what a
    /// wrapping stream still holds has been taken by its inner stream.
    ///
    /// For a `GzipOutputStream` over a socket: the last deflate block and the trailer are made,
    /// written as the socket takes them, then the stream closes (and, as configured, its inner
    /// stream, which half-closes the socket: the peer reads the end). Other streams are closed
    /// as by ``ByteStream/closeOrThrow()``.
    /// - Throws: The stream's error, or `CancellationError` when the task is cancelled while it
    ///   waits (the stream is then closed without waiting: a gzip stream blocks to write what
    ///   it held).
    ///
    /// Thread safety: one task uses the stream. The corresponding C functions are `send(2)` or
    /// `write(2)`, `poll(2)`, and what closing the stream calls (`shutdown(2)`, `close(2)`).
    public func finishAndClose(isolation: isolated (any Actor)? = #isolation) async throws {
        if let holding = self as? any HoldsOutputForInnerStream, streamStatus == .open {
            // Scheduled first, so that the end is held for the inner stream rather than waited for.
            _ = try awaitingScheduler(operation: "close")
            do {
                try holding.finishOutput()
                try await drain()
            } catch {
                close()
                throw error
            }
        }
        try closeOrThrow()
    }
}

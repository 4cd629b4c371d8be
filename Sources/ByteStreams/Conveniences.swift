// FoundationEssentials gives Data and Date without loading ICU, which keeps the process small.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ByteStream {
    /// Opens the stream and throws its error if it could not be opened.
    /// - Throws: ``ByteStream/streamError`` (for files a ``ByteStreamError`` with `errno`).
    public func openOrThrow() throws {
        open()
        try throwIfFailed()
    }

    /// Closes the stream and throws the first error it met, including one met while closing
    /// (a gzip stream's trailer that could not be written, a failed `close(2)`).
    public func closeOrThrow() throws {
        close()
        try throwIfFailed()
    }

    /// Opens the stream unless it was opened before, then throws its error if it has failed:
    /// how a wrapping stream's `openBacking` opens the stream it wraps, which its caller may
    /// have opened (or used) before handing it over.
    package func openUnlessOpened() throws {
        if streamStatus == .notOpen { open() }
        try throwIfFailed()
    }

    /// Throws ``ByteStream/streamError`` when the status is `.error`.
    public func throwIfFailed() throws {
        if streamStatus == .error {
            throw streamErrorOrFallback(operation: "stream")
        }
    }

    /// The error to throw for a call on this stream that returned -1: ``ByteStream/streamError``,
    /// or, for a stream that failed without setting one, ``ByteStreamError`` with
    /// ``ByteStreamError/Code-swift.enum/innerStreamFailed`` naming `operation` and `target`.
    package func streamErrorOrFallback(operation: String, target: String? = nil) -> any Error {
        streamError ?? ByteStreamError(.innerStreamFailed, operation: operation, target: target)
    }
}

extension ByteInputStream {
    /// Reads one chunk of at most `maxLength` bytes, opening the stream first if needed.
    /// - Parameter maxLength: The most bytes to read, `1...ByteStream.maximumChunkSize`; default
    ///   4096. A buffer of that many bytes is allocated for the call.
    /// - Returns: `1...maxLength` bytes, or an empty array at the end of the stream.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `maxLength` out of range; ``ByteStreamError/Code-swift.enum/wouldBlock`` when a
    ///   scheduled stream has nothing to read yet; the stream's error (a ``ByteStreamError``, or a wrapping
    ///   stream's own error).
    public func readChunk(maxLength: Int = ByteStream.defaultChunkSize) throws -> [UInt8] {
        try requireArgument(maxLength, in: ByteStream.chunkSizes, "maxLength", operation: "read chunk")
        if streamStatus == .notOpen { try openOrThrow() }
        var chunk = [UInt8](repeating: 0, count: maxLength)
        let count = chunk.withUnsafeMutableBufferPointer { read($0.baseAddress!, maxLength: maxLength) }
        if count < 0 { throw streamErrorOrFallback(operation: "read") }
        try throwIfNothingYet(count, operation: "read chunk")
        chunk.removeSubrange(count...)
        return chunk
    }

    /// Reads everything up to the end, for small inputs.
    /// - Parameter limit: The most bytes to accept, `>= 0`; more is an error so a huge input
    ///   cannot exhaust memory.
    /// - Throws: The stream's error, or ``ByteStreamError/Code-swift.enum/lengthLimitExceeded(limit:)``
    ///   when the input is longer than `limit` bytes; ``ByteStreamError/Code-swift.enum/wouldBlock``
    ///   when the stream is scheduled and has nothing to read yet (never a short result);
    ///   ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a negative `limit`.
    public func readToEnd(limit: Int = Int.max) throws -> [UInt8] {
        try requireArgument(limit, in: 0...Int.max, "limit", operation: "read to end")
        if streamStatus == .notOpen { try openOrThrow() }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBufferPointer { read($0.baseAddress!, maxLength: $0.count) }
            if count < 0 { throw streamErrorOrFallback(operation: "read") }
            try throwIfNothingYet(count, operation: "read to end")
            if count == 0 { return result }
            if result.count + count > limit {
                throw ByteStreamError(.lengthLimitExceeded(limit: limit), operation: "read to end")
            }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Copies this stream to `output` in chunks of `chunkSize` bytes until the end of this
    /// stream, opening either stream if needed; closes neither.
    ///
    /// Memory: one buffer of `chunkSize` bytes, whatever the size of the input; none into a
    /// ``WriteBehindOutputStream``, whose buffers are read into directly (no copy).
    /// - Parameters:
    ///   - output: Where the bytes go; opened if it is not open yet, not closed.
    ///   - chunkSize: The most bytes per read, `1...ByteStream.maximumChunkSize`; default 4096.
    /// - Returns: The number of bytes copied.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `chunkSize` out of range (nothing is opened); ``ByteStreamError/Code-swift.enum/wouldBlock``
    ///   when this stream is scheduled and has nothing to read yet, or `output` is scheduled and
    ///   full; the first error of either stream.
    @discardableResult
    public func copy(to output: ByteOutputStream, chunkSize: Int = ByteStream.defaultChunkSize) throws -> Int {
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: "copy")
        if streamStatus == .notOpen { try openOrThrow() }
        if output.streamStatus == .notOpen { try output.openOrThrow() }
        if let behind = output as? WriteBehindOutputStream {
            return try copy(into: behind, chunkSize: chunkSize)
        }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            let count = read(buffer, maxLength: chunkSize)
            if count < 0 { throw streamErrorOrFallback(operation: "read") }
            try throwIfNothingYet(count, operation: "copy")
            if count == 0 { return total }
            try output.writeAll(UnsafeRawBufferPointer(start: buffer, count: count))
            total += count
        }
    }

    /// ``copy(to:chunkSize:)`` reading straight into the ring of `output`, in reads of
    /// `chunkSize` bytes (fewer only when `output`'s buffers are smaller).
    private func copy(into output: WriteBehindOutputStream, chunkSize: Int) throws -> Int {
        let readLength = min(chunkSize, output.bufferSize)
        var total = 0
        while true {
            let count = try output.withWritableBuffer(minimumCapacity: readLength) { buffer in
                let count = read(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), maxLength: readLength)
                if count < 0 { throw streamErrorOrFallback(operation: "read") }
                return count
            }
            try throwIfNothingYet(count, operation: "copy")
            if count == 0 { return total }
            total += count
        }
    }

    /// A read that returned 0 without reaching the end: the stream is scheduled and has nothing
    /// yet. A blocking convenience must not take that for the end (and return short data).
    func throwIfNothingYet(_ count: Int, operation: String) throws {
        if count == 0, streamStatus == .open { throw ByteStreamError(.wouldBlock, operation: operation) }
    }

    /// The stream's bytes as an asynchronous sequence of chunks of at most `maxLength` bytes
    /// (`1...ByteStream.maximumChunkSize`; out of range, the first iteration throws
    /// ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)``).
    /// The stream is opened on the first iteration if needed and closed when the sequence ends
    /// or fails.
    ///
    /// Each chunk is read as ``read(into:isolation:)`` reads: over a socket or a pipe
    /// (``SocketInputStream``, a ``FileInputStream`` of a FIFO, or a `GzipInputStream` over
    /// one) the task is suspended, not blocked, until bytes come, and a cancelled task ends the
    /// iteration with `CancellationError` at once, even while waiting: the stream is then
    /// closed like after any failure (for a socket, only its input half; its status is
    /// `.closed` and its ``ByteStream/streamError`` stays `nil`). Memory and regular files are
    /// read on the task's thread. A stream scheduled on a queue or run loop stays so: a socket
    /// or pipe is then waited for on the same `poll(2)` loop, and other streams block the task.
    public func chunks(maxLength: Int = ByteStream.defaultChunkSize) -> ByteChunks {
        ByteChunks(stream: self, maxLength: maxLength)
    }
}

/// An `AsyncSequence` of a stream's bytes in chunks (``ByteInputStream/chunks(maxLength:)``).
/// Each element holds `1...maxLength` bytes; the sequence ends at the end of the stream and
/// throws the stream's error.
///
/// Not `Sendable`, as the stream it reads is not: iterate it in the task that owns the stream
/// (made there, or moved there with `sending`); the compiler refuses to share it.
public struct ByteChunks: AsyncSequence {
    /// A chunk: `1...maxLength` bytes.
    public typealias Element = [UInt8]
    let stream: ByteInputStream
    let maxLength: Int

    /// Reads the chunks; made by ``makeAsyncIterator()``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: ByteInputStream
        let maxLength: Int

        /// The next chunk, or `nil` at the end of the stream (which is then closed).
        /// - Throws: The stream's error (the stream is then closed), or `CancellationError`.
        public mutating func next() async throws -> [UInt8]? { try await next(isolation: nil) }

        // Iterated from an actor (the main actor, say), `for try await` calls this with that
        // actor, so the stream is read there. Without it the standard library's default calls
        // `next()` off the actor, and two tasks of one actor could read one stream at once.
        /// ``next()``, run isolated to `actor` (what `for try await` passes: the caller's).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? {
            if stream.streamStatus == .closed { return nil }
            do {
                let chunk: [UInt8]
                if stream.readsThroughTask {
                    try requireArgument(maxLength, in: ByteStream.chunkSizes, "maxLength", operation: "read chunk")
                    chunk = try await stream.readChunkAwaiting(maxLength: maxLength)
                } else {
                    try await stream.prepareChunk(maxLength: maxLength)
                    chunk = try stream.readChunk(maxLength: maxLength)
                }
                if chunk.isEmpty {
                    stream.close()
                    return nil
                }
                return chunk
            } catch {
                stream.close()
                throw error
            }
        }
    }

    /// An iterator over the stream's chunks; iterate the sequence once.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: stream, maxLength: maxLength)
    }
}

extension ByteOutputStream {
    /// Writes all of `bytes`, offering the rest again after each short write, opening the
    /// stream first if needed.
    /// - Throws: The stream's error; ``ByteStreamError/Code-swift.enum/noSpaceAvailable`` when a
    ///   fixed buffer fills before all bytes are written; ``ByteStreamError/Code-swift.enum/wouldBlock``
    ///   when a scheduled stream (a socket or pipe whose buffer is full) takes nothing.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        if streamStatus == .notOpen { try openOrThrow() }
        guard var next = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let count = write(next, maxLength: remaining)
            if count < 0 { throw streamErrorOrFallback(operation: "write") }
            if count == 0 {
                // A scheduled socket or pipe with a full buffer takes nothing and stays open.
                throw ByteStreamError(scheduler != nil && streamStatus == .open && !isFull ? .wouldBlock : .noSpaceAvailable,
                                      operation: "write")
            }
            next += count
            remaining -= count
        }
    }

    /// Writes all of `bytes`; see ``writeAll(_:)-(UnsafeRawBufferPointer)``.
    public func writeAll<Bytes: Sequence>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        if let done = try bytes.withContiguousStorageIfAvailable({ try writeAll(UnsafeRawBufferPointer($0)) }) {
            return done
        }
        let array = Array(bytes)
        try array.withUnsafeBytes { try writeAll($0) }
    }
}

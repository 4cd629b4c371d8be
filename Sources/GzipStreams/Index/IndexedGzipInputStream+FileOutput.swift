import ByteStreams
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Writing the rest of an IndexedGzipInputStream into a regular file at offsets: each worker
// writes the bytes it decodes while they are still in its core's cache, so that no thread
// copies every byte again from memory the other core wrote, and the write is not one serial
// stage after the decoding.

extension IndexedGzipInputStream {
    /// Decodes the rest of the file into the regular file open at `descriptor`: the next plain
    /// byte at byte `offset` of the file, the ones after it at the bytes after, with
    /// `pwrite(2)`. Read from its start (opened, not read or moved by a seek yet) and without a
    /// decompression limit, each worker writes the spans it decodes itself, as it decodes them,
    /// so that bytes past the ones read so far may be in the file before the spans before them
    /// are checked; what a later check refuses is written again by the sequential reader that
    /// takes over, or cut off. Before the workers start, the file's blocks up to the index's
    /// plain size are allocated (`fallocate(2)` on ext4, best effort, the size unchanged); the
    /// end handling below frees those no byte reached. Otherwise this thread writes what reads
    /// return (with a limit, so that no worker writes past it).
    ///
    /// On return, and when it throws, the file holds exactly the plain bytes read from `offset`
    /// on and ends after them (`ftruncate(2)`), and the descriptor's offset is at that end
    /// (`lseek(2)`), as if they had been written in order with `write(2)`: a caller writes at
    /// the end of a file (not one opened with `O_APPEND`, where `pwrite(2)` appends).
    /// Blocks until the end of the file or an error; the stream is at its end afterwards.
    ///
    /// A process that dies of a signal meanwhile would leave the workers' later spans in the
    /// file after a hole; with `fence`, its signal handler can leave the bytes written in order
    /// instead (``OrderedOutputFence/cutToOrderedEnd()``).
    /// - Parameters:
    ///   - descriptor: A regular file open for writing, owned by the caller.
    ///   - offset: Where the first byte goes, `>= 0`.
    ///   - name: The name a write error gives.
    ///   - fence: Made for `descriptor` and `offset`; every worker write passes through it, and
    ///     it follows the end of the bytes written in order.
    /// - Returns: The number of plain bytes written.
    /// - Throws: A read's errors (``GzipError``, ``IndexedGzipError``, ``ByteStreamError``) and
    ///   the write's (``ByteStreamError`` naming `name`).
    public func writeRemaining(to descriptor: Int32, at offset: Int64, name: String,
                               fence: OrderedOutputFence? = nil) throws -> Int64 {
        precondition(offset >= 0, "offsets are not negative")
        if streamStatus == .notOpen { try openOrThrow() }
        // Under a decompression limit the workers do not write: they would write spans past the
        // limit (a forged index can make a span any size) before the reader reached it.
        let positional = pendingRun != nil && fallback == nil && fromStart && plainOffset == 0 && skip == 0 && held == nil
            && maximumOutputSize == nil
        workersWriteOutput = positional
        var reserved = false
        if positional {
            for decoder in decoders { decoder.output = (descriptor, offset, name, fence) }
            // The index gives the plain size: the blocks are allocated at once, not a page at
            // a time in the workers' writes (about a seventh of their kernel time on ext4). A size
            // past deflate's largest ratio, 1032:1 (a copy of 258 bytes, RFC 1951 §3.2.5, takes
            // at least 2 bits), is not of a file this index can describe; an index wrong within
            // it costs only the space until the end, where the file is cut to the bytes written
            // (which frees the blocks past them). The size stays: a run killed by SIGKILL leaves
            // a file that ends where the writes got to, as before, not one as long as the index
            // says with zeros where no span was written.
            // (reserveSpace refuses an empty range and one whose end overflows.)
            if index.plainSize / 1032 <= index.compressedSize, let length = Int64(exactly: index.plainSize) {
                reserved = SystemCalls.reserveSpace(descriptor, offset: offset, length: length)
            }
        }
        var written: Int64 = 0
        do {
            defer {
                // No worker writes after this.
                stopRun()
                for decoder in decoders { decoder.output = nil }
            }
            if positional {
                while let count = try takeWritten(maxLength: Int.max), count > 0 {
                    written += Int64(count)
                    fence?.advance(to: offset + written)
                }
            }
            while true {
                let count = try lendInPlace(maxLength: Int.max) { bytes in
                    // The workers wrote what they lend; the sequential reader's bytes are
                    // written here (over what the workers wrote past the last check).
                    if !positional || fallback != nil {
                        try SystemCalls.write(descriptor, bytes, at: offset + written, target: name)
                    }
                }
                if count < 0 { throw streamErrorOrFallback(operation: "read") }
                if count == 0 { break }
                written += Int64(count)
                fence?.advance(to: offset + written)
            }
        } catch {
            try? Self.endFile(descriptor, at: offset + written, name: name, freeingReserved: reserved)
            throw error
        }
        try Self.endFile(descriptor, at: offset + written, name: name, freeingReserved: reserved)
        return written
    }

    /// Reading what the workers write to the output file themselves: counts the next bytes they
    /// wrote as read, at most `maxLength`; `0` at the end, `nil` once the sequential reader
    /// has taken over (it gives the rest). Blocks while the oldest span is being decoded.
    func takeWritten(maxLength: Int) throws -> Int? {
        while fallback == nil {
            if writtenPending > 0 {
                let count = try limitedCount(min(maxLength, writtenPending))
                writtenPending -= count
                plainOffset += Int64(count)
                returnedCount += Int64(count)
                return count
            }
            if ended { return 0 }
            if run == nil, let pendingRun { launch(pendingRun) }
            guard let run else { throw ByteStreamError(.notOpen, operation: "read") }
            try take(run.nextItem(), from: run)
        }
        return nil
    }

    /// Cuts off what the workers wrote past `end` and moves the descriptor's offset there. With
    /// `freeingReserved`, cuts the file at `end` even when it ends there, which on ext4 frees the
    /// blocks allocated past it that no write reached.
    private static func endFile(_ descriptor: Int32, at end: Int64, name: String, freeingReserved: Bool) throws {
        let size = try SystemCalls.status(of: descriptor, target: name).st_size
        if size > end || (freeingReserved && size == end) {
            try SystemCalls.truncate(descriptor, toSize: end, target: name)
        }
        _ = try SystemCalls.seek(descriptor, to: end, whence: SEEK_SET, target: name)
    }
}

/// What a signal handler needs to leave a file that the workers of
/// ``IndexedGzipInputStream/writeRemaining(to:at:name:fence:)`` write at offsets as writes in
/// order would have left it: the bytes up to the last one written in order, and nothing after
/// (a process killed while a worker had written a later span left a hole of zeros before it).
///
/// Thread safety: every member may be used from any thread at once; ``cutToOrderedEnd()`` from
/// a signal handler. Atomics only (`Synchronization`), and `ftruncate(2)`.
public final class OrderedOutputFence: Sendable {
    /// The file the workers write.
    public let descriptor: Int32
    private let closed = Atomic<Bool>(false)
    /// Worker writes under way.
    private let writers = Atomic<Int>(0)
    private let orderedEnd: Atomic<Int64>

    /// A fence for the file open at `descriptor` (the caller's), whose bytes written in order
    /// end at `offset` so far.
    public init(descriptor: Int32, at offset: Int64) {
        self.descriptor = descriptor
        orderedEnd = Atomic(offset)
    }

    /// Stops the workers' writes (a worker about to write stops decoding instead), waits for
    /// those under way to return, then cuts the file after the bytes written in order.
    /// Async-signal-safe; for a handler about to end the process, run on a thread that is not a
    /// worker (the workers are Dispatch threads, which block signals). The writes of the thread
    /// calling ``IndexedGzipInputStream/writeRemaining(to:at:name:fence:)`` are in order: the
    /// end moves past them once they returned. Blocks while a worker's `pwrite(2)` runs. The
    /// corresponding C function is `ftruncate(2)`.
    public func cutToOrderedEnd() {
        closed.store(true, ordering: .sequentiallyConsistent)
        while writers.load(ordering: .sequentiallyConsistent) > 0 {}
        _ = ftruncate(descriptor, off_t(orderedEnd.load(ordering: .sequentiallyConsistent)))
    }

    /// A worker is about to write: `false` once the fence is closed (it must not).
    func beginWrite() -> Bool {
        // Counted first, checked second: a cut that closed the fence before this load waits
        // for the count to fall, and one after it is seen here.
        writers.add(1, ordering: .sequentiallyConsistent)
        if closed.load(ordering: .sequentiallyConsistent) {
            writers.subtract(1, ordering: .sequentiallyConsistent)
            return false
        }
        return true
    }

    /// The worker's write returned.
    func endWrite() {
        writers.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// The bytes written in order now end at `end`.
    func advance(to end: Int64) {
        orderedEnd.store(end, ordering: .sequentiallyConsistent)
    }
}

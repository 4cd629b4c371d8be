import ByteStreams
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
    /// `pwrite(2)`. Read from its start (opened, not read or moved by a seek yet), each worker
    /// writes the spans it decodes itself, as it decodes them, so that bytes past the ones read
    /// so far may be in the file before the spans before them are checked; what a later check
    /// refuses is written again by the sequential reader that takes over, or cut off. Otherwise
    /// (after a read or a seek, or under a ``maximumOutputSize``) this thread writes what reads
    /// return: a worker writes its whole span whatever the limit, so a file of spans of
    /// gigabytes of zeros would fill the disk far past a limit meant to stop it.
    ///
    /// On return, and when it throws, the file holds exactly the plain bytes read from `offset`
    /// on and ends after them (`ftruncate(2)`), and the descriptor's offset is at that end
    /// (`lseek(2)`), as if they had been written in order with `write(2)`: a caller writes at
    /// the end of a file (not one opened with `O_APPEND`, where `pwrite(2)` appends).
    /// Blocks until the end of the file or an error; the stream is at its end afterwards.
    /// - Parameters:
    ///   - descriptor: A regular file open for writing, owned by the caller.
    ///   - offset: Where the first byte goes, `>= 0`.
    ///   - name: The name a write error gives.
    /// - Returns: The number of plain bytes written.
    /// - Throws: A read's errors (``GzipError``, ``IndexedGzipError``, ``ByteStreamError``) and
    ///   the write's (``ByteStreamError`` naming `name`).
    public func writeRemaining(to descriptor: Int32, at offset: Int64, name: String) throws -> Int64 {
        precondition(offset >= 0, "offsets are not negative")
        if streamStatus == .notOpen { try openOrThrow() }
        let positional = maximumOutputSize == nil && pendingRun != nil && fallback == nil && fromStart && plainOffset == 0 && skip == 0 && held == nil
        if positional {
            for decoder in decoders { decoder.output = (descriptor, offset, name) }
        }
        var written: Int64 = 0
        do {
            defer {
                // No worker writes after this.
                stopRun()
                for decoder in decoders { decoder.output = nil }
            }
            if positional {
                while let count = try takeWritten(maxLength: Int.max), count > 0 { written += Int64(count) }
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
            }
        } catch {
            try? Self.endFile(descriptor, at: offset + written, name: name)
            throw error
        }
        try Self.endFile(descriptor, at: offset + written, name: name)
        return written
    }

    /// Cuts off what the workers wrote past `end` and moves the descriptor's offset there.
    private static func endFile(_ descriptor: Int32, at end: Int64, name: String) throws {
        if try SystemCalls.status(of: descriptor, target: name).st_size > end {
            try SystemCalls.truncate(descriptor, toSize: end, target: name)
        }
        _ = try SystemCalls.seek(descriptor, to: end, whence: SEEK_SET, target: name)
    }
}

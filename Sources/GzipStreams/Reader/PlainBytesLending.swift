import ByteStreams

/// A decoding stream whose worker threads leave plain bytes in buffers of their own
/// (``BGZFInputStream``'s batches, ``IndexedGzipInputStream``'s chunks), which a caller can
/// write from without a copy: the one implementation of their `readInPlace(maxLength:_:)`.
protocol PlainBytesLending: ByteInputStream {
    /// Whether the parallel path still gives the bytes (no sequential reader has taken over).
    var lendsInPlace: Bool { get }
    /// The next plain bytes of the parallel path, in place (valid until the next call): at
    /// most `maxLength`, empty at the end; `nil` once the sequential reader has taken over.
    func lendPlainBytes(maxLength: Int) throws -> UnsafeRawBufferPointer?
}

extension PlainBytesLending {
    /// ``ByteInputStream/read(_:maxLength:)`` without the copy: lends `body` the next
    /// `1...maxLength` plain bytes where a worker decoded them (once the sequential reader has
    /// taken over, from a temporary buffer), and consumes them. The bytes are valid only during
    /// `body`. The status, events and errors are a read's.
    /// - Returns: The number of bytes lent; `0` at the end (and for `maxLength` 0), `body` not
    ///   called; `-1` on error, with ``ByteStream/streamError`` set.
    /// - Throws: Only what `body` throws (the bytes count as read).
    func lendInPlace(maxLength: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Int {
        precondition(maxLength >= 0, "maxLength must not be negative")
        guard streamStatus == .open, maxLength > 0, lendsInPlace else { return try readCopying(maxLength, body) }
        setStatus(.reading)
        let lent: UnsafeRawBufferPointer?
        do {
            lent = try lendPlainBytes(maxLength: maxLength)
        } catch {
            fail(error)
            return -1
        }
        setStatus(.open)
        // The end and the sequential reader go through read, which sets the status for them.
        guard let lent, !lent.isEmpty else { return try readCopying(maxLength, body) }
        post(.hasBytesAvailable)
        try body(lent)
        return lent.count
    }

    /// ``lendInPlace(maxLength:_:)`` through ``ByteInputStream/read(_:maxLength:)`` and a
    /// temporary buffer of at most 64 KiB.
    private func readCopying(_ maxLength: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Int {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, min(maxLength, 64 * 1024))) { buffer in
            let count = read(buffer.baseAddress!, maxLength: min(maxLength, buffer.count))
            if count > 0 { try body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count)) }
            return count
        }
    }
}

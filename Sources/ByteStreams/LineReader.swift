#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a stream into lines in one buffer: the engine of ``ByteInputStream/lines``,
/// ``ByteInputStream/rawLines`` and ``ByteInputStream/forEachLine(maxLength:_:)``.
///
/// The buffer holds `storage[lineStart..<end]`, the bytes read and not yet handed out. Invariant:
/// `storage[lineStart..<scanEnd]` holds no `\n`, so every byte is searched once (`memchr(3)`
/// over `scanEnd..<end` only), however many reads a line spans. Room for a read is made by
/// moving the unfinished line to the front, which moves each byte at most once while the buffer
/// is at least one line plus one read long, and otherwise by doubling the buffer, up to
/// `maxLength + 1 + readSize` bytes: the longest line allowed, the `\r` that may precede its
/// `\n`, and one read. So time is linear in the input and memory is bounded by the longest
/// line, whatever the input's size.
///
/// Thread safety: none; owned by one iterator or one call.
final class LineReader {
    /// The most bytes asked of the stream per read: 64 KiB.
    static let readSize = 64 * 1024
    /// The line lengths accepted: `1...ByteStream.maximumChunkSize` (1 GiB).
    static let lineLengths = 1...ByteStream.maximumChunkSize
    static let operation = "read lines"

    let stream: ByteInputStream
    let maxLength: Int
    private var storage: UnsafeMutablePointer<UInt8>?
    private var capacity = 0
    /// The first byte of the line not yet handed out.
    private var lineStart = 0
    /// The end of the bytes known to hold no `\n`, from `lineStart`.
    private var scanEnd = 0
    /// The end of the bytes read.
    private var end = 0
    /// The offset in the stream of `storage[0]`, counted from the reader's first read.
    private var storageOffset = 0
    /// Lines handed out so far.
    private var lineCount = 0
    /// The stream has met its end (or was closed): what is left in the buffer is the last line.
    private var streamEnded = false
    /// Every line has been handed out, or an error thrown: nothing more comes.
    private(set) var isFinished = false
    private var checkedArguments = false

    init(stream: ByteInputStream, maxLength: Int) {
        self.stream = stream
        self.maxLength = maxLength
    }

    deinit { storage?.deallocate() }

    /// The next line as `make` turns it into a value, reading and blocking as needed; `nil`
    /// at the end. The closure's buffer is valid only during the call.
    /// - Throws: The stream's error, ``ByteStreamError/Code-swift.enum/lineTooLong(lineNumber:offset:limit:)``,
    ///   ``ByteStreamError/Code-swift.enum/wouldBlock`` for a scheduled stream with nothing yet,
    ///   ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a bad `maxLength`.
    ///   After a throw the reader is finished; the stream is left as it is.
    func nextLine<Line>(_ make: (UnsafeBufferPointer<UInt8>) -> Line) throws -> Line? {
        do {
            while true {
                if let line = try bufferedLine(make) { return line }
                if isFinished { return nil }
                try checkArguments()
                if stream.streamStatus == .notOpen { try stream.openOrThrow() }
                try fill()
            }
        } catch {
            isFinished = true
            throw error
        }
    }

    /// ``nextLine(_:)`` for an asynchronous iterator: before each read, checks for cancellation
    /// and, over a socket or pipe, waits without a thread until the read will not block (as
    /// ``ByteInputStream/chunks(maxLength:)`` does). Closes the stream at the end or on an error.
    /// Runs isolated to the caller (`isolation`).
    func nextLine<Line>(isolation: isolated (any Actor)? = #isolation,
                        _ make: (UnsafeBufferPointer<UInt8>) -> Line) async throws -> Line? {
        do {
            while true {
                if let line = try bufferedLine(make) { return line }
                if isFinished {
                    stream.close()
                    return nil
                }
                try checkArguments()
                try Task.checkCancellation()
                if stream.readsThroughTask {
                    try await fillAwaiting()
                } else {
                    try await stream.prepareChunk(maxLength: Self.readSize)
                    try fill()
                }
            }
        } catch {
            isFinished = true
            stream.close()
            throw error
        }
    }

    private func checkArguments() throws {
        if checkedArguments { return }
        try requireArgument(maxLength, in: Self.lineLengths, "maxLength", operation: Self.operation)
        checkedArguments = true
    }

    /// The next complete line in the buffer, or after the end the last one unless it is empty;
    /// `nil` when more bytes must be read first, or nothing is left (``isFinished``).
    private func bufferedLine<Line>(_ make: (UnsafeBufferPointer<UInt8>) -> Line) throws -> Line? {
        if isFinished { return nil }
        guard let storage else {
            // Nothing was ever read: a stream closed before the first read.
            if streamEnded { isFinished = true }
            return nil
        }
        let newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")
        if let found = memchr(storage + scanEnd, Int32(newline), end - scanEnd) {
            let terminator = storage.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var lineEnd = terminator
            if lineEnd > lineStart && storage[lineEnd - 1] == carriageReturn { lineEnd -= 1 }
            return try handOut(lineStart..<lineEnd, next: terminator + 1, make)
        }
        scanEnd = end
        let pending = end - lineStart
        if streamEnded {
            isFinished = true
            return pending == 0 ? nil : try handOut(lineStart..<end, next: end, make)
        }
        // One byte more than the limit may be a `\r` whose `\n` is still to come.
        if pending > maxLength + 1 || (pending == maxLength + 1 && storage[end - 1] != carriageReturn) {
            throw lineTooLong()
        }
        return nil
    }

    private func handOut<Line>(_ line: Range<Int>, next: Int, _ make: (UnsafeBufferPointer<UInt8>) -> Line) throws -> Line {
        if line.count > maxLength { throw lineTooLong() }
        let value = make(UnsafeBufferPointer(start: storage! + line.lowerBound, count: line.count))
        lineCount += 1
        lineStart = next
        scanEnd = next
        return value
    }

    private func lineTooLong() -> ByteStreamError {
        ByteStreamError(.lineTooLong(lineNumber: lineCount + 1, offset: storageOffset + lineStart, limit: maxLength),
                        operation: Self.operation)
    }

    /// Reads once into the buffer, after making room for ``readSize`` bytes. A stream closed
    /// already counts as ended, as for ``ByteInputStream/chunks(maxLength:)``.
    private func fill() throws {
        if stream.streamStatus == .closed {
            streamEnded = true
            return
        }
        makeRoom()
        let count = stream.read(storage! + end, maxLength: Self.readSize)
        if count < 0 { throw stream.streamErrorOrFallback(operation: "read") }
        try stream.throwIfNothingYet(count, operation: Self.operation)
        if count == 0 { streamEnded = true } else { end += count }
    }

    /// ``fill()`` through ``ByteInputStream/read(into:isolation:)``: the task is suspended,
    /// not blocked, until the stream (a socket, or a gzip stream over one) has bytes.
    private func fillAwaiting(isolation: isolated (any Actor)? = #isolation) async throws {
        if stream.streamStatus == .closed {
            streamEnded = true
            return
        }
        makeRoom()
        let count = try await stream.readAwaiting(into: storage! + end, maxLength: Self.readSize)
        if count == 0 { streamEnded = true } else { end += count }
    }

    private func makeRoom() {
        if capacity - end >= Self.readSize { return }
        if lineStart > 0 {
            let pending = end - lineStart
            if pending > 0 { memmove(storage!, storage! + lineStart, pending) }
            storageOffset += lineStart
            scanEnd -= lineStart
            end = pending
            lineStart = 0
        }
        if capacity - end >= Self.readSize { return }
        // `end <= maxLength + 1` here (a longer unfinished line has thrown), so the cap leaves
        // room for one read.
        let newCapacity = min(max(capacity * 2, end + Self.readSize, 2 * Self.readSize),
                              maxLength + 1 + Self.readSize)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        if let storage {
            grown.initialize(from: storage, count: end)
            storage.deallocate()
        }
        storage = grown
        capacity = newCapacity
    }
}

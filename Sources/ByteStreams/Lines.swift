// Lines and bytes of any input stream, for `for try await` and for synchronous code. One engine
// (LineReader) serves the three line APIs, so they split, limit and fail alike.

extension ByteInputStream {
    /// The longest line, in bytes without its terminator, that ``lines``, ``rawLines`` and
    /// ``forEachLine(maxLength:_:)`` accept when no `maxLength` is given: 1 MiB.
    ///
    /// Long enough for any line a person or a logger writes and for most JSON-lines records;
    /// short enough that input with no newline at all (binary data, a decompression bomb)
    /// costs at most about 1 MiB of memory before it is refused.
    public static let defaultMaxLineLength = 1 << 20

    /// The stream's lines as `String`s, each at most ``defaultMaxLineLength`` (1 MiB) bytes:
    /// `for try await line in input.lines { … }`. See ``ByteLines`` for how lines are split
    /// and decoded, the errors, and when the stream is opened and closed.
    ///
    /// A property, as Foundation's `FileHandle.bytes.lines` is: a subclass cannot declare a
    /// member named `lines` (or `rawLines`) of its own.
    public var lines: ByteLines { ByteLines(stream: self, maxLength: Self.defaultMaxLineLength) }

    /// The stream's lines as `String`s, each at most `maxLength` bytes (see ``ByteLines``).
    /// - Parameter maxLength: The longest line accepted, in bytes without its terminator,
    ///   `1...ByteStream.maximumChunkSize` (1 GiB); out of range, the first iteration throws
    ///   ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)``. It bounds the
    ///   memory the sequence takes: about `maxLength` + 64 KiB at most.
    public func lines(maxLength: Int) -> ByteLines { ByteLines(stream: self, maxLength: maxLength) }

    /// The stream's lines as undecoded bytes, each at most ``defaultMaxLineLength`` (1 MiB)
    /// bytes: split and limited as ``lines`` are, for text that is not UTF-8 or that must
    /// come back byte for byte. See ``RawByteLines``.
    public var rawLines: RawByteLines { RawByteLines(stream: self, maxLength: Self.defaultMaxLineLength) }

    /// The stream's lines as undecoded bytes, each at most `maxLength` bytes; `maxLength` as
    /// for ``lines(maxLength:)``. See ``RawByteLines``.
    public func rawLines(maxLength: Int) -> RawByteLines { RawByteLines(stream: self, maxLength: maxLength) }

    /// Calls `body` with each line of the stream, in order, blocking the calling thread while
    /// it reads: ``lines`` for synchronous code. Lines are split, decoded and limited as
    /// ``ByteLines`` describes.
    ///
    /// Opens the stream if it is not open; never closes it (as ``readToEnd(limit:)`` and
    /// ``copy(to:chunkSize:)`` do not): close it when this returns or throws. Reads 64 KiB at
    /// a time into one reused buffer; the bytes read past the line where `body` throws are lost.
    /// - Parameters:
    ///   - maxLength: The longest line accepted, in bytes without its terminator,
    ///     `1...ByteStream.maximumChunkSize` (1 GiB); default ``defaultMaxLineLength`` (1 MiB).
    ///   - body: Called once per line, on the calling thread. Its error ends the reading and
    ///     is thrown unchanged.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `maxLength` out of range (nothing is opened or read);
    ///   ``ByteStreamError/Code-swift.enum/lineTooLong(lineNumber:offset:limit:)``; the
    ///   stream's error, after `body` has had every complete line before it;
    ///   ``ByteStreamError/Code-swift.enum/wouldBlock`` when the stream is scheduled and has
    ///   nothing to read yet; `body`'s error.
    ///
    /// Thread safety: uses the stream from the calling thread only; nothing else may use it
    /// until this returns. The corresponding C function is `memchr(3)`, over bytes from
    /// ``read(_:maxLength:)``.
    public func forEachLine(maxLength: Int = ByteInputStream.defaultMaxLineLength,
                            _ body: (String) throws -> Void) throws {
        let reader = LineReader(stream: self, maxLength: maxLength)
        while let line = try reader.nextLine({ String(decoding: $0, as: UTF8.self) }) {
            try body(line)
        }
    }

    /// The stream's bytes one at a time, as Foundation's `FileHandle.bytes` gives a file's,
    /// read `chunkSize` bytes at a time into one reused buffer (never one read per byte).
    ///
    /// A method rather than a property, unlike Foundation's: subclasses of
    /// ``ByteInputStream`` often keep their data in a property named `bytes`, which a
    /// property here would forbid.
    /// - Parameter chunkSize: The most bytes per read, `1...ByteStream.maximumChunkSize`;
    ///   default 4096. Out of range, the first iteration throws
    ///   ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)``.
    /// - Returns: A sequence that opens, reads and closes the stream as ``chunks(maxLength:)``
    ///   does; see ``StreamBytes``.
    public func bytes(chunkSize: Int = ByteStream.defaultChunkSize) -> StreamBytes {
        StreamBytes(stream: self, chunkSize: chunkSize)
    }
}

/// An `AsyncSequence` of a stream's lines as `String`s (``ByteInputStream/lines`` and
/// ``ByteInputStream/lines(maxLength:)``).
///
/// How lines are split, the same for ``RawByteLines`` and
/// ``ByteInputStream/forEachLine(maxLength:_:)``:
/// - A line ends at `\n` (LF, 0x0A), and a `\r` (CR) right before it is dropped too, so a file
///   with `\r\n` ends reads as one with `\n` ends. Neither is part of the line.
/// - Any other byte is part of the line: a lone `\r`, form feed, NEL, U+2028 and U+2029 do not
///   end one.
/// - An empty line is yielded as `""`. The last line is yielded without a final `\n` unless it
///   is empty: `"a\nb"` and `"a\nb\n"` both give `"a"`, `"b"`; an empty input gives nothing.
/// - A line longer than `maxLength` bytes (its terminator not counted) throws
///   ``ByteStreamError/Code-swift.enum/lineTooLong(lineNumber:offset:limit:)``, which names the
///   line's number (from 1) and the byte offset of its first byte (from where the sequence
///   began reading; 0 for a stream read from its start). It is thrown as soon as the bytes
///   read show the line is too long, without reading the rest of it.
///
/// Decoding: each line's bytes are decoded as UTF-8 (`String(decoding:as:)`); an invalid
/// sequence becomes U+FFFD, the replacement character, and never throws. A byte-order mark is
/// kept. Splitting bytes before decoding is exact for UTF-8, whose multi-byte sequences never
/// hold 0x0A or 0x0D. For other encodings, or to keep the bytes, use ``RawByteLines``.
///
/// Compared with Foundation's `AsyncLineSequence` (`FileHandle.bytes.lines`, `URL.lines`):
/// the same for `\n`, `\r\n`, a last line without a terminator and UTF-8 repair. Different:
/// empty lines are kept, so that line numbers count as `wc -l`, `grep -n` and editors count;
/// only `\n` ends a line (Foundation also ends one at a lone `\r`, VT, FF, NEL, U+2028 and
/// U+2029, which splits JSON strings and CSV fields that hold them); lines have a maximum
/// length; and the sequence is not `Sendable` (it holds a stream).
///
/// Reading: the first iteration opens the stream if it is not open; the sequence closes the
/// stream when it ends or throws (as ``ByteInputStream/chunks(maxLength:)`` does). Bytes are
/// read 64 KiB at a time into one buffer, reused for the whole input and grown only for a line
/// longer than it (to at most `maxLength` + 64 KiB); each byte is searched for `\n` once
/// (`memchr(3)`), so time is linear in the input and memory flat. Leaving the loop early leaves
/// the stream open, and the bytes the sequence read past the last line yielded are lost.
///
/// Errors: the stream's error (a ``ByteStreamError`` for I/O, a `GzipError` for damaged gzip
/// data) is thrown by the iteration that needs the bytes past the last good ones: after every
/// complete line before it. The unfinished line the error cuts is not yielded. Lines of a gzip
/// stream are tentative until their member's trailer is checked: a CRC-32 mismatch comes after
/// the damaged member's lines. After a throw the sequence ends.
///
/// Blocking and cancellation: as ``ByteInputStream/chunks(maxLength:)``. Each read runs on the
/// iterating task and blocks it (a regular file or a gzip stream is short work for a thread of
/// the cooperative pool; moving reads to another thread would need a `Sendable` stream). Over a
/// socket or pipe each read first waits without a thread until it will not block. A cancelled
/// task ends the iteration with `CancellationError` before the next read, over any stream.
///
/// Thread safety: not `Sendable`, as the stream it holds is not. Iterate it once, in the task
/// that owns the stream, and use the stream nowhere else meanwhile.
public struct ByteLines: AsyncSequence {
    /// A line, without its terminator, decoded as UTF-8 with replacement characters.
    public typealias Element = String
    let stream: ByteInputStream
    let maxLength: Int

    /// Reads the lines; made by ``makeAsyncIterator()``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: LineReader

        /// The next line, or `nil` after the last one (the stream is then closed).
        /// - Throws: As ``ByteLines`` describes; the stream is then closed.
        public mutating func next() async throws -> String? { try await next(isolation: nil) }

        // Iterated from an actor (the main actor, say), `for try await` calls this with that
        // actor, so the stream is read there. Without it the standard library's default calls
        // `next()` off the actor, and two tasks of one actor could read one stream at once.
        /// ``next()``, run isolated to `actor` (what `for try await` passes: the caller's).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> String? {
            try await reader.nextLine { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// An iterator over the lines; iterate the sequence once.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: LineReader(stream: stream, maxLength: maxLength))
    }
}

/// An `AsyncSequence` of a stream's lines as bytes (``ByteInputStream/rawLines`` and
/// ``ByteInputStream/rawLines(maxLength:)``): split, limited, opened, closed and thrown exactly
/// as ``ByteLines``, but not decoded: each element holds the line's bytes without its `\n` or
/// `\r\n`. For Latin-1 or other non-UTF-8 text, and for data that must not be changed by
/// UTF-8 repair. Costs one array per line, as a `String` does.
///
/// Thread safety: not `Sendable`, as the stream it holds is not.
public struct RawByteLines: AsyncSequence {
    /// A line's bytes, without its terminator.
    public typealias Element = [UInt8]
    let stream: ByteInputStream
    let maxLength: Int

    /// Reads the lines; made by ``makeAsyncIterator()``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: LineReader

        /// The next line's bytes, or `nil` after the last line (the stream is then closed).
        /// - Throws: As ``ByteLines`` describes; the stream is then closed.
        public mutating func next() async throws -> [UInt8]? { try await next(isolation: nil) }

        // Iterated from an actor (the main actor, say), `for try await` calls this with that
        // actor, so the stream is read there. Without it the standard library's default calls
        // `next()` off the actor, and two tasks of one actor could read one stream at once.
        /// ``next()``, run isolated to `actor` (what `for try await` passes: the caller's).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? {
            try await reader.nextLine { Array($0) }
        }
    }

    /// An iterator over the lines; iterate the sequence once.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: LineReader(stream: stream, maxLength: maxLength))
    }
}

/// An `AsyncSequence` of a stream's bytes, one `UInt8` at a time
/// (``ByteInputStream/bytes(chunkSize:)``).
///
/// Each read fills one buffer of `chunkSize` bytes, allocated at the first read and reused;
/// the bytes are then handed out from it without suspending. Opening, closing, errors (thrown
/// after every byte before them), blocking and cancellation (checked before each read) are as
/// for ``ByteInputStream/chunks(maxLength:)`` and ``ByteLines``. Leaving the loop early leaves
/// the stream open and loses the rest of the buffer.
///
/// Thread safety: not `Sendable`, as the stream it holds is not.
public struct StreamBytes: AsyncSequence {
    /// One byte of the stream.
    public typealias Element = UInt8
    let stream: ByteInputStream
    let chunkSize: Int

    /// Reads the bytes; made by ``makeAsyncIterator()``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline var buffer: [UInt8] = []
        /// The next byte to hand out in `buffer`.
        @usableFromInline var position = 0
        /// How many bytes of `buffer` the last read filled.
        @usableFromInline var count = 0
        let stream: ByteInputStream
        let chunkSize: Int
        var finished = false

        init(stream: ByteInputStream, chunkSize: Int) {
            self.stream = stream
            self.chunkSize = chunkSize
        }

        /// The next byte, or `nil` at the end of the stream (which is then closed). Reads only
        /// when the buffer is used up.
        /// - Throws: The stream's error (the stream is then closed), `CancellationError`,
        ///   ``ByteStreamError/Code-swift.enum/wouldBlock`` for a scheduled stream with nothing
        ///   yet, ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
        ///   `chunkSize` out of range.
        @inlinable
        public mutating func next() async throws -> UInt8? { try await next(isolation: nil) }

        // Iterated from an actor (the main actor, say), `for try await` calls this with that
        // actor, so the stream is read there. Without it the standard library's default calls
        // `next()` off the actor, and two tasks of one actor could read one stream at once.
        /// ``next()``, run isolated to `actor` (what `for try await` passes: the caller's).
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> UInt8? {
            if position < count {
                let byte = buffer[position]
                position += 1
                return byte
            }
            return try await nextAfterRead()
        }

        /// Reads the next chunk and returns its first byte; `nil` at the end.
        @usableFromInline
        mutating func nextAfterRead(isolation: isolated (any Actor)? = #isolation) async throws -> UInt8? {
            if finished { return nil }
            let stream = self.stream
            do {
                try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: "read bytes")
                try Task.checkCancellation()
                let read: Int
                if stream.readsThroughTask {
                    if stream.streamStatus == .closed {
                        finished = true
                        return nil
                    }
                    buffer = try await stream.readChunkAwaiting(maxLength: chunkSize)
                    read = buffer.count
                } else {
                    try await stream.prepareChunk(maxLength: chunkSize)
                    if stream.streamStatus == .closed {
                        finished = true
                        return nil
                    }
                    if buffer.count != chunkSize { buffer = [UInt8](repeating: 0, count: chunkSize) }
                    read = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
                    if read < 0 { throw stream.streamErrorOrFallback(operation: "read") }
                    try stream.throwIfNothingYet(read, operation: "read bytes")
                }
                if read == 0 {
                    finished = true
                    stream.close()
                    return nil
                }
                count = read
                position = 1
                return buffer[0]
            } catch {
                finished = true
                stream.close()
                throw error
            }
        }
    }

    /// An iterator over the bytes; iterate the sequence once.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: stream, chunkSize: chunkSize)
    }
}

// The sequences hold a stream, which one task at a time may use: they must not cross tasks.
@available(*, unavailable)
extension ByteLines: Sendable {}
@available(*, unavailable)
extension RawByteLines: Sendable {}
@available(*, unavailable)
extension StreamBytes: Sendable {}

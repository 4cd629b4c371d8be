import ByteStreams

/// Reads a tar archive from the start, one member at a time: each ``next()`` gives the member's
/// ``TarEntry`` and a stream of its data that ends after exactly ``TarEntry/size`` bytes.
/// Formats, limits and offsets as ``TarScanner`` (which does the parsing) says: ustar, GNU,
/// v7 and pax headers, GNU long names and sparse members (whose content stream gives the
/// stored runs, in order, as ``TarEntry/sparseMap`` places them).
///
/// ```swift
/// let reader = TarReader(GzipInputStream(fileAtPath: "src.tar.gz"))
/// while let member = try reader.next() {
///     print(member.entry.pathString, member.entry.size)
///     let bytes = try member.content.readToEnd()
/// }
/// ```
///
/// Ownership: the reader opens `input` if it is not open, reads it forward only, and never
/// closes it (its owner does). Data a caller did not read is skipped, unbuffered, when the next
/// member is asked for; from then on the earlier member's content stream fails with
/// `ByteStreamError` (`.notOpen`).
///
/// Errors: a malformed archive throws ``TarError`` (from ``next()``, or from a content stream's
/// read when the archive ends inside the data: `.truncated` with the member's header offset);
/// the input's own errors come through unchanged. Errors are sticky.
///
/// Blocking: reads block as `input`'s do; `input` must not be scheduled over a non-blocking
/// descriptor. Not thread-safe: use the reader and its content streams from one thread at a time.
public final class TarReader {
    /// A member: its headers and its data.
    public struct Member {
        /// The member's headers, as parsed.
        public let entry: TarEntry
        /// The member's data: exactly ``TarEntry/size`` bytes, then the end; open. Valid until the
        /// next call of ``TarReader/next()``. Closing it does not close the archive.
        public let content: ByteInputStream
    }

    private let input: ByteInputStream
    private var scanner: TarScanner
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var generation = 0
    private var finished = false
    private var failure: (any Error)?

    /// A reader of the archive `input` gives, from its first byte.
    /// - Parameters:
    ///   - input: The plain tar bytes (a `GzipInputStream` for a `.tar.gz`); opened if needed, not closed.
    ///   - limits: The caps on names, extended headers and sparse maps.
    ///   - bufferSize: The bytes read from `input` at a time, at least 512 (64 KiB by default);
    ///     large content reads go straight into the caller's memory.
    public init(_ input: ByteInputStream, limits: TarScanner.Limits = TarScanner.Limits(), bufferSize: Int = 64 << 10) {
        self.input = input
        scanner = TarScanner(limits: limits)
        buffer = [UInt8](repeating: 0, count: max(bufferSize, TarFormat.blockSize))
    }

    /// The plain offset of the next byte the parser will take.
    public var offset: Int { scanner.offset }

    /// The next member, skipping the rest of the current one's data.
    /// - Returns: The member, or `nil` at the end of the archive (its first zero block, or the
    ///   input's end right after a whole member).
    /// - Throws: ``TarError`` for a malformed or truncated archive; the input's error when it
    ///   fails. Sticky.
    public func next() throws -> Member? {
        if let failure { throw failure }
        if finished { return nil }
        generation += 1
        do {
            while true {
                if start == end, try !fill() {
                    try scanner.finish()
                    finished = true
                    return nil
                }
                let (consumed, event) = try scan(count: end - start)
                start += consumed
                switch event {
                case .entry(let entry):
                    let content = TarContentInputStream(reader: self, generation: generation)
                    content.open()
                    return Member(entry: entry, content: content)
                case .end:
                    finished = true
                    return nil
                case .data, nil:
                    continue
                }
            }
        } catch {
            failure = error
            throw error
        }
    }

    /// Reads the current member's data for its content stream.
    /// - Returns: `1...maxLength` bytes, `0` after the member's last byte.
    func readContent(generation reading: Int, into destination: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        guard reading == generation else { throw ByteStreamError(.notOpen, operation: "read") }
        if let failure { throw failure }
        do {
            let remaining = scanner.dataRemaining
            guard remaining > 0 else { return 0 }
            if start == end {
                // A large read goes straight from the input into the caller's memory.
                if maxLength >= buffer.count / 2 {
                    let count = input.read(destination, maxLength: min(maxLength, remaining))
                    if count < 0 { throw input.streamErrorOrFallback(operation: "read") }
                    if count == 0 { try scanner.finish() }
                    _ = try scanner.scan(UnsafeRawBufferPointer(start: destination, count: count))
                    return count
                }
                if try !fill() {
                    try scanner.finish()
                    return 0
                }
            }
            let (consumed, event) = try scan(count: min(end - start, maxLength))
            guard case .data(let range) = event else { preconditionFailure("member data expected") }
            buffer.withUnsafeBytes {
                destination.update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self) + start + range.lowerBound,
                                   count: range.count)
            }
            start += consumed
            return range.count
        } catch {
            failure = error
            throw error
        }
    }

    /// Feeds `count` buffered bytes from `start` to the parser.
    private func scan(count: Int) throws(TarError) -> (consumed: Int, event: TarScanner.Event?) {
        let first = start
        let result = buffer.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            Result { () throws(TarError) in try scanner.scan(UnsafeRawBufferPointer(rebasing: bytes[first..<(first + count)])) }
        }
        return try result.get()
    }

    /// Refills the empty buffer from the input.
    /// - Returns: `false` at the input's end.
    private func fill() throws -> Bool {
        if input.streamStatus == .notOpen { input.open() }
        let count = buffer.withUnsafeMutableBufferPointer { input.read($0.baseAddress!, maxLength: $0.count) }
        if count < 0 { throw input.streamErrorOrFallback(operation: "read") }
        start = 0
        end = count
        return count > 0
    }
}

/// One member's data, read through its ``TarReader``.
final class TarContentInputStream: ByteInputStream {
    private let reader: TarReader
    private let generation: Int

    init(reader: TarReader, generation: Int) {
        self.reader = reader
        self.generation = generation
        super.init()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        try reader.readContent(generation: generation, into: buffer, maxLength: maxLength)
    }
}

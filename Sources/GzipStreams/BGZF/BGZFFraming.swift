import ByteStreams

/// Cuts an input stream into whole BGZF members without inflating them: reads the inner stream
/// through a ``GzipMemberInput`` in reads of ``readSize(chunkSize:)`` bytes into its buffer,
/// allocated once with room for two largest members and a read, and lends out each member's
/// bytes. Stops at the first point that is not a whole BGZF member (the end of the input,
/// another kind of member, zero padding, garbage, a member cut short, or a failed read); the
/// bytes from there on stay in ``unconsumed``, for the sequential reader that takes over.
///
/// Used by one thread at a time. Does not open or close the inner stream.
final class BGZFMemberFramer {
    private let input: GzipMemberInput
    /// Set once a read of the inner stream returned 0.
    private(set) var innerEnded = false
    /// The inner stream's error, once a read failed; nothing more is read after it.
    private(set) var innerError: (any Error)?

    /// - Parameters:
    ///   - offset: The offset of the inner stream's next byte in the whole input, in bytes.
    init(inner: ByteInputStream, chunkSize: Int, offset: Int64) {
        let readSize = Self.readSize(chunkSize: chunkSize)
        // A read of 0 bytes is the end: the stream does not follow a scheduled inner stream.
        input = GzipMemberInput(inner: inner, chunkSize: readSize, offset: offset,
                                capacity: 2 * BGZFFrame.maximumSize + readSize, followsReadiness: false)
    }

    /// The largest multiple of `chunkSize` not above 64 KiB (`chunkSize` itself when larger): a
    /// 4 KiB read per BGZF member or so cost a system call per 14 KiB of plain bytes on the
    /// reading thread, which also writes the output; reads stay multiples of `chunkSize`, so
    /// that the sequential reader, when it takes over, reads on at a `GzipInputStream`'s offsets.
    static func readSize(chunkSize: Int) -> Int {
        max(1, 65536 / chunkSize) * chunkSize
    }

    /// The offset in the whole compressed input of the next unconsumed byte.
    var offset: Int64 { input.position }

    /// The bytes read and not handed out.
    var unconsumed: [UInt8] { Array(UnsafeBufferPointer(start: input.buffer + input.start, count: input.end - input.start)) }

    /// Whether the input ended cleanly right here: nothing staged, the inner stream at its end.
    var isAtCleanEnd: Bool { !input.hasUnreadBytes && innerEnded && innerError == nil }

    /// The next whole member: its offset, frame and bytes (lent: valid until the next call);
    /// `nil` where the input stops being whole BGZF members (see the type's summary).
    func next() -> (offset: Int64, frame: BGZFFrame, bytes: UnsafeRawBufferPointer)? {
        var frame: BGZFFrame
        parsing: while true {
            let parsed = BGZFFrame.parse(UnsafeRawBufferPointer(start: input.buffer + input.start, count: input.end - input.start))
            switch parsed {
            case .member(let found):
                frame = found
                break parsing
            case .needMore(let count):
                guard stage(count) else { return nil }
            case .notBGZF:
                return nil
            }
        }
        guard stage(frame.size) else { return nil }
        let bytes = UnsafeRawBufferPointer(start: input.buffer + input.start, count: frame.size)
        let start = input.position
        input.start += frame.size
        return (start, frame, bytes)
    }

    /// Reads until at least `count` bytes (at most ``BGZFFrame/maximumSize``) are staged;
    /// `false` when the input ends or fails first.
    private func stage(_ count: Int) -> Bool {
        guard input.end - input.start < count else { return true }
        guard !innerEnded, innerError == nil else { return false }
        do {
            if try input.stage(count) { return true }
            innerEnded = true
        } catch {
            innerError = error
        }
        return false
    }
}

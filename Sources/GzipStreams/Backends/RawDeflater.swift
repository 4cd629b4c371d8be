/// A streaming deflate backend: continues one raw deflate stream (RFC 1951, no zlib or gzip
/// wrapper) over any number of calls, as zlib's `deflate` does, so that the output of every
/// ``step(input:output:flush:)`` joined is one stream. ``GzipOutputStream`` runs its one loop,
/// ``deflate(_:flush:through:emit:)``, over zlib's (``ZStream`` made with
/// `init(deflateLevel:)`, in ZlibDeflater.swift). The writers frame the deflate data
/// themselves (RFC 1952 members, BGZF).
///
/// The library state stays at one address from init to end (zlib keeps a pointer to its
/// `z_stream`). Used by one thread at a time.
protocol RawDeflater: AnyObject {
    /// Deflates as much of `input` as fits, writing at most `output.count` bytes.
    /// - Parameters:
    ///   - input: The plain bytes offered; at most 4 GiB − 1. Bytes not consumed must be
    ///     offered again, first, in the next call.
    ///   - output: Room for deflate data; at least 64 bytes when `flush` is not ``DeflateFlush/none``
    ///     (zlib needs more than 6 bytes to end a sync flush, or it repeats the marker forever).
    ///   - flush: How to end what was taken; keep the same flush until the step says
    ///     ``DeflateStep/Outcome-swift.enum/needsInput`` or ``DeflateStep/Outcome-swift.enum/finished``.
    /// - Returns: The bytes consumed from `input` and produced into `output`, and what to do next.
    /// - Throws: ``GzipError/zlibFailure(code:message:)`` when the library fails.
    func step(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer,
              flush: DeflateFlush) throws(GzipError) -> DeflateStep
}

/// A whole-buffer deflate backend: deflates one buffer at a time into deflate data of its own,
/// as the parallel block deflater (``BlockDeflate``) and ``BGZFOutputStream`` need. zlib's
/// (``ZStream``, with a preset dictionary and a sync flush), libdeflate's
/// (``LibdeflateDeflater``, faster, no dictionary) and ISA-L's (``IsalDeflater``, fastest, no
/// dictionary); a new backend is one more conforming type, handed to the writer that should
/// use it.
///
/// Lifecycle: the library state is released once, by ``end()`` or at the latest by the
/// deinitializer; ``isLive`` tells which, so that a test can prove the pairing. Used by one
/// thread (or serial queue, such as a pipeline worker's) at a time.
protocol WholeBufferDeflater: AnyObject {
    /// Whether the deflater holds library state that ``end()`` has yet to release.
    var isLive: Bool { get }

    /// Whether ``compress(_:dictionary:isFinal:into:)`` uses its `dictionary` (zlib's does;
    /// libdeflate's and ISA-L's ignore it), so a caller need not keep one for a backend that
    /// ignores it.
    var takesDictionary: Bool { get }

    /// The output room in bytes with which ``compress(_:dictionary:isFinal:into:)`` of `count`
    /// plain bytes succeeds: the library's bound, plus room for a sync flush where the backend
    /// makes one.
    func compressBound(_ count: Int) -> Int

    /// Deflates all of `input` into `output` as deflate data that starts afresh: it refers to
    /// no earlier call's data, only to `dictionary`.
    /// - Parameters:
    ///   - input: The plain bytes; at most 1 GiB.
    ///   - dictionary: The plain bytes just before `input` (its last 32 KiB are used), which the
    ///     deflate data may refer back to (RFC 1951 §2): the decoder must have decoded them just
    ///     before. Empty for none. A backend without preset dictionaries ignores it (the output
    ///     is then only larger).
    ///   - isFinal: End with the final block (BFINAL set); `false` ends with a sync flush (an
    ///     empty stored block, byte-aligned), so that more deflate data can follow and the two
    ///     decode as one stream.
    ///   - output: Where the deflate data goes, from its start.
    /// - Returns: The number of bytes written to `output`, or `nil` when they did not fit
    ///   (what `output` holds then is undefined; try again with more room, or store).
    /// - Throws: ``GzipError/zlibFailure(code:message:)`` or
    ///   ``GzipError/libdeflateFailure(message:)`` when the library fails (out of memory).
    func compress(_ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isFinal: Bool,
                  into output: UnsafeMutableRawBufferPointer) throws(GzipError) -> Int?

    /// Releases the library state; later calls do nothing, and the deflater must not be used
    /// again. The deinitializer calls it too.
    func end()
}

/// How a streaming deflate step ends what it has taken: zlib's flush values.
enum DeflateFlush {
    /// Buffer as the compressor likes (`Z_NO_FLUSH`).
    case none
    /// Make everything taken so far decodable: an empty stored block, byte-aligned
    /// (`Z_SYNC_FLUSH`).
    case sync
    /// End the deflate data with the final block (`Z_FINISH`).
    case finish
}

/// What one ``RawDeflater/step(input:output:flush:)`` did.
struct DeflateStep {
    /// What the caller does next.
    enum Outcome {
        /// Every byte offered is taken and, for a sync flush, flushed: offer more input (or stop).
        case needsInput
        /// The output room filled up (or no progress was possible): call again with fresh room,
        /// the rest of the input and the same flush.
        case needsOutput
        /// The deflate data is complete (after ``DeflateFlush/finish``).
        case finished
    }

    /// Bytes taken from the input.
    var consumed: Int
    /// Bytes written to the output.
    var produced: Int
    var outcome: Outcome
}

extension RawDeflater {
    /// Deflates all of `input` with `flush`, through `buffer`, handing each buffer's worth of
    /// deflate data to `emit` (empty stretches included), until the input is taken and, for
    /// ``DeflateFlush/sync`` or ``DeflateFlush/finish``, flushed or finished. The one streaming
    /// deflate loop.
    /// - Parameters:
    ///   - input: Plain bytes, at most 4 GiB − 1; empty to flush or finish only.
    ///   - buffer: Output room, reused for each step; see ``step(input:output:flush:)``.
    ///   - emit: Takes the bytes of `buffer` each step produced, before the next step reuses it.
    /// - Throws: The deflater's ``GzipError``, or what `emit` throws.
    func deflate(_ input: UnsafeRawBufferPointer, flush: DeflateFlush, through buffer: UnsafeMutableRawBufferPointer,
                 emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        var rest = input
        while true {
            let step = try step(input: rest, output: buffer, flush: flush)
            rest = UnsafeRawBufferPointer(rebasing: rest[step.consumed...])
            try emit(UnsafeRawBufferPointer(rebasing: buffer[..<step.produced]))
            if step.outcome != .needsOutput { return }
        }
    }
}

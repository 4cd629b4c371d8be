import CZlib

/// What one call of a ``RawInflater`` did: the input bytes it consumed, the plain bytes it
/// wrote, and how the deflate stream stands.
struct RawInflateStep {
    var consumed: Int
    var produced: Int
    var outcome: RawInflateOutcome
}

/// How a deflate stream (RFC 1951) stands after one call of a ``RawInflater``.
enum RawInflateOutcome {
    /// It goes on: the call needs more input or more room.
    case progress
    /// The deflate data ended; `readAhead` are whole bytes after it that the decoder had
    /// already taken (ISA-L's bit buffer, at most 8), to be put back in front of the input.
    case streamEnd(readAhead: [UInt8])
    /// The data is invalid; the decoder's reason ("invalid block type", …). The step's
    /// `produced` counts only bytes a sequential zlib decode gives before the error too:
    /// zlib's own, and none of ISA-L's (see ``IsalInflater``).
    case invalid(String)
    /// The call could not progress (zlib's `Z_BUF_ERROR`): normal when no input was given, a
    /// library fault (this error) when input remains.
    case stalled(GzipError)
    /// The library itself failed (out of memory, a broken state).
    case failed(GzipError)

    /// Whether the deflate data ended in this call.
    var isStreamEnd: Bool {
        if case .streamEnd = self { return true }
        return false
    }
}

/// One raw inflate (RFC 1951, no zlib or gzip wrapper) that decodes as input comes, with its
/// state (window included) allocated once and reset per member: zlib's ``ZStream`` and
/// ``IsalInflater``. ``GzipInputStream`` runs one loop over either, generic over this
/// protocol so that the call per buffer is direct.
///
/// Used by one thread at a time.
protocol RawInflater: AnyObject {
    /// Whether, once the input has ended, a call with no input may still give output the
    /// decoder holds, so that the end of input is judged after one more call (zlib); otherwise
    /// the end of input within the data is at once a truncation.
    static var stepsAfterInputEnd: Bool { get }

    /// Starts a new deflate stream with the same settings.
    func reset()

    /// Once the input has ended inside the deflate data (and, for a decoder that
    /// ``stepsAfterInputEnd``, its last call gave nothing): the reason the data is invalid when
    /// what the decoder holds already shows it, and how many of the bytes it took come after the
    /// point where that is found; `nil` when the end is a truncation. A data error found before
    /// the end outranks the end, as in zlib and GNU gzip.
    func invalidAtEndOfInput() -> (reason: String, bytesAfter: Int)?

    /// Whether steps look for the next deflate block boundary (RFC 1951 §3.2.3) that is not the
    /// stream's end, and stop there: set by a reader that records access points
    /// (``GzipIndexRecorder``); cleared by the step that finds one.
    var seeksBlockBoundary: Bool { get set }

    /// After a step that stopped at the boundary sought: the whole bytes after the boundary
    /// that the decoder took (its own buffers hold them no more: they are to be put back in
    /// front of the input, as ``RawInflateOutcome/streamEnd(readAhead:)``'s), and the bits
    /// (0...7) of the byte before those that belong to the next block (zran's `bits`: the
    /// boundary is that many bits before the byte after it); `nil` after any other step.
    var blockBoundaryFound: (bits: Int, bytesAfter: [UInt8])? { get }

    /// Inflates from `inputCount` bytes at `input` into `outputCapacity` bytes of room at `output`.
    /// - Returns: The bytes consumed and produced, and the outcome.
    func step(input: UnsafeMutablePointer<UInt8>, inputCount: Int, output: UnsafeMutablePointer<UInt8>,
              outputCapacity: Int) -> RawInflateStep
}

// Where zlib stops with `Z_BLOCK` (RFC 1951 §3.2.3 block boundaries), as zran.c reads it: only
// zlib says (`data_type`); ISA-L's `isal_inflate` decodes across blocks, and finds one boundary
// when asked (``RawInflater/seeksBlockBoundary``) by taking its input in small pieces.
extension ZStream {
    /// After a step that stopped just after a block that is not the stream's last: the bits
    /// (0...7) of the last byte it took that belong to the next block; `nil` otherwise (inside
    /// a block, or once the last block began). Reads zlib's `data_type` after the last step:
    /// 128 when it stopped at a block boundary, 64 once the last block (BFINAL) began, plus the
    /// bits it holds.
    var bitsPastBlockBoundary: Int? { Self.bitsPastBlockBoundary(dataType: dataType) }

    /// The bits past a block boundary that is not the last that zlib's `data_type` tells, or `nil`.
    static func bitsPastBlockBoundary(dataType: Int32) -> Int? {
        let value = Int(dataType)
        return value & 128 != 0 && value & 64 == 0 ? value & 7 : nil
    }
}

/// A raw inflate of one whole deflate stream held in memory, in one call: for BGZF members
/// and other independent blocks whose plain size is known (ISIZE).
protocol WholeBufferInflater: AnyObject {
    /// Inflates one whole deflate stream, as a new stream.
    /// - Parameters:
    ///   - input: All of the deflate data, `count` bytes.
    ///   - output: Room for exactly `size` plain bytes.
    /// - Returns: `true` when the data is valid, ends in its last byte (padding bits aside) and
    ///   gives exactly `size` bytes.
    func inflateWhole(_ input: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>,
                      size: Int) -> Bool
}

extension ZStream: RawInflater {
    static var stepsAfterInputEnd: Bool { true }

    /// ``RawInflater/invalidAtEndOfInput()``: always `nil`, because zlib judges every bit it
    /// takes as it takes it; its last call (with no input) reports what it found.
    func invalidAtEndOfInput() -> (reason: String, bytesAfter: Int)? { nil }

    /// Wraps zlib's `inflate` with `Z_NO_FLUSH` (`Z_BLOCK` when ``ZStream/stopsAtBlocks`` or
    /// ``RawInflater/seeksBlockBoundary``, which `data_type` then answers); zlib
    /// never reads past the end of the deflate data, so nothing is read ahead.
    /// - Precondition: The stream inflates (``ZStream/init(inflate:)``).
    func step(input: UnsafeMutablePointer<UInt8>, inputCount: Int, output: UnsafeMutablePointer<UInt8>,
              outputCapacity: Int) -> RawInflateStep {
        let z = pointer
        z.pointee.next_in = input
        z.pointee.avail_in = UInt32(inputCount)
        z.pointee.next_out = output
        z.pointee.avail_out = UInt32(outputCapacity)
        let code = CZlib.inflate(z, stopsAtBlocks || seeksBlockBoundary ? Z_BLOCK : Z_NO_FLUSH)
        let consumed = inputCount - Int(z.pointee.avail_in)
        let produced = outputCapacity - Int(z.pointee.avail_out)
        dataType = z.pointee.data_type
        if consumed > 0 || produced > 0 { dataTypeAfterProgress = dataType }
        z.pointee.next_in = nil
        z.pointee.next_out = nil
        blockBoundaryFound = nil
        if seeksBlockBoundary, code == Z_OK, let bits = bitsPastBlockBoundary {
            seeksBlockBoundary = false
            blockBoundaryFound = (bits, [])
        }
        let outcome: RawInflateOutcome
        switch code {
        case Z_OK: outcome = .progress
        case Z_STREAM_END: outcome = .streamEnd(readAhead: [])
        case Z_BUF_ERROR: outcome = .stalled(.zlibFailure(code: code, message: Self.message(for: code, stream: z)))
        case Z_DATA_ERROR, Z_NEED_DICT: outcome = .invalid(Self.message(for: code, stream: z))
        default: outcome = .failed(.zlibFailure(code: code, message: Self.message(for: code, stream: z)))
        }
        return RawInflateStep(consumed: consumed, produced: produced, outcome: outcome)
    }
}

extension ZStream: WholeBufferInflater {
    /// ``WholeBufferInflater/inflateWhole(_:count:into:size:)``, after a reset: zlib's verdict
    /// on the whole stream, for readers that must accept exactly what zlib accepts. Wraps
    /// zlib's `inflate` with `Z_FINISH`.
    /// - Precondition: The stream inflates (``ZStream/init(inflate:)``).
    func inflateWhole(_ input: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>,
                      size: Int) -> Bool {
        guard isLive, count <= UInt32.max, size <= UInt32.max else { return false }
        reset()
        let z = pointer
        z.pointee.next_in = UnsafeMutablePointer(mutating: input)
        z.pointee.avail_in = UInt32(count)
        z.pointee.next_out = output
        z.pointee.avail_out = UInt32(size)
        let code = CZlib.inflate(z, Z_FINISH)
        let whole = code == Z_STREAM_END && z.pointee.avail_in == 0 && z.pointee.avail_out == 0
        z.pointee.next_in = nil
        z.pointee.next_out = nil
        return whole
    }
}

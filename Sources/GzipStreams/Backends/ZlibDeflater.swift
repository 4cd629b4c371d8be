import CZlib

/// zlib as a deflate backend: a ``ZStream`` made with `init(deflateLevel:)`, whose `z_stream`
/// stays at one address and whose init is paired with one `deflateEnd` (in ``ZStream/end()`` or
/// its deinitializer). The streaming backend of ``GzipOutputStream``, and the block backend of
/// parallel deflate, which needs zlib's preset dictionary and sync flush (pigz's design).
///
/// An inflating ``ZStream`` does not deflate: calling these on one is a precondition failure.
extension ZStream: RawDeflater, WholeBufferDeflater {
    var takesDictionary: Bool { true }

    /// zlib's `deflateBound` plus 64 bytes: the bound counts the data ended by finish, and a sync
    /// flush instead adds at most an empty stored block. Wraps zlib's `deflateBound`.
    func compressBound(_ count: Int) -> Int {
        Int(deflateBound(pointer, UInt(count))) + 64
    }

    /// Resets the stream, presets `dictionary`, and deflates `input` in one call ended by
    /// finish or a sync flush. Wraps zlib's `deflateReset`, `deflateSetDictionary` and `deflate`.
    func compress(_ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isFinal: Bool,
                  into output: UnsafeMutableRawBufferPointer) throws(GzipError) -> Int? {
        precondition(mode == .deflate, "an inflating ZStream cannot deflate")
        reset()
        if let base = dictionary.baseAddress, dictionary.count > 0 {
            let code = deflateSetDictionary(pointer, base.assumingMemoryBound(to: Bytef.self), UInt32(dictionary.count))
            guard code == Z_OK else {
                throw GzipError.zlibFailure(code: code, message: Self.message(for: code, stream: pointer))
            }
        }
        let step = try step(input: input, output: output, flush: isFinal ? .finish : .sync)
        return step.outcome == (isFinal ? .finished : .needsInput) ? step.produced : nil
    }

    /// One call of zlib's `deflate` over `input` and `output`. zlib's `Z_BUF_ERROR` (no progress
    /// possible) is not a failure: the step then says ``DeflateStep/Outcome-swift.enum/needsOutput``.
    /// Wraps zlib's `deflate`.
    func step(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer,
              flush: DeflateFlush) throws(GzipError) -> DeflateStep {
        precondition(mode == .deflate, "an inflating ZStream cannot deflate")
        let z = pointer
        z.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        z.pointee.avail_in = UInt32(input.count)
        z.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        z.pointee.avail_out = UInt32(output.count)
        // zlib must not keep pointers into buffers the caller may free.
        defer {
            z.pointee.next_in = nil
            z.pointee.next_out = nil
        }
        let code = CZlib.deflate(z, flush.zlibValue)
        guard code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR else {
            throw GzipError.zlibFailure(code: code, message: Self.message(for: code, stream: z))
        }
        let outcome: DeflateStep.Outcome
        if code == Z_STREAM_END {
            outcome = .finished
        } else if flush != .finish, z.pointee.avail_in == 0, z.pointee.avail_out != 0 {
            outcome = .needsInput
        } else {
            outcome = .needsOutput
        }
        return DeflateStep(consumed: input.count - Int(z.pointee.avail_in),
                           produced: output.count - Int(z.pointee.avail_out), outcome: outcome)
    }
}

extension DeflateFlush {
    /// zlib's flush value.
    var zlibValue: Int32 {
        switch self {
        case .none: Z_NO_FLUSH
        case .sync: Z_SYNC_FLUSH
        case .finish: Z_FINISH
        }
    }
}

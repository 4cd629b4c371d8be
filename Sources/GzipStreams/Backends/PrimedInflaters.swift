import CZlib

/// A raw inflater that can start inside a deflate stream, at an access point of a
/// ``GzipIndex``: the decoders of ``IndexedGzipInputStream``'s spans.
protocol PrimedInflater: RawInflater {
    /// Starts a new deflate stream whose first `bitCount` (0...7) bits are the low bits of
    /// `bits`, with `window` (at most 32 KiB of the plain data before the point) as the history
    /// that distances may reach into (RFC 1951 §3.2.5).
    /// - Returns: `false` when the library refuses the bits or the window.
    func start(primingBits bitCount: Int, of bits: UInt8, window: [UInt8]?) -> Bool

    /// Whether the inflater, having taken all its input, rests exactly at a deflate block
    /// boundary (RFC 1951 §3.2.3) that is not the end of the stream, holding `pendingBits`
    /// (0...7) bits of the next block: where an access point `pendingBits` bits before the byte
    /// after the input says the next block starts.
    func restsAtBlockBoundary(pendingBits: Int) -> Bool
}

extension IsalInflater: PrimedInflater {}

extension ZStream: PrimedInflater {
    /// Wraps zlib's `inflateReset`, `inflatePrime` and `inflateSetDictionary` (zran.c's calls).
    /// - Precondition: The stream inflates (``ZStream/init(inflate:)``).
    func start(primingBits bitCount: Int, of bits: UInt8, window: [UInt8]?) -> Bool {
        guard inflateReset(pointer) == Z_OK else { return false }
        if bitCount > 0, inflatePrime(pointer, Int32(bitCount), Int32(bits) & ((1 << Int32(bitCount)) - 1)) != Z_OK {
            return false
        }
        if let window {
            let code = window.withUnsafeBufferPointer {
                inflateSetDictionary(pointer, $0.baseAddress, UInt32($0.count))
            }
            guard code == Z_OK else { return false }
        }
        return true
    }

    /// Reads zlib's `data_type` after the last `inflate` with `Z_BLOCK` (``stopsAtBlocks``) that
    /// took input or gave output: 128 when it stopped at a block boundary, 64 when the last
    /// block was BFINAL, plus the bits it holds. (A later call without input would go on to
    /// read the next block's header from those bits.)
    func restsAtBlockBoundary(pendingBits: Int) -> Bool {
        Self.bitsPastBlockBoundary(dataType: dataTypeAfterProgress) == pendingBits
    }
}

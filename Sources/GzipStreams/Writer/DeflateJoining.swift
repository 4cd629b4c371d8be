import CZlib

// Joining independently made deflate data into one stream (RFC 1951): data that ends with its
// final block (BFINAL set, as libdeflate always ends) is made continuable by clearing that
// block's BFINAL bit and appending an empty stored block, which ends byte-aligned; whatever
// deflate data follows then decodes as the same stream. The pieces must refer to no data
// before their own start (no preset dictionary), which independently compressed chunks do
// not. zlib's examples/gzjoin.c finds the final block the same way: zlib's `inflate` with
// `Z_BLOCK` stops at every block boundary and tells the bit position there.

/// The bit positions of a deflate stream's final block: where its 3-bit header starts (whose
/// first bit is BFINAL, RFC 1951 §3.2.3) and where the block ends, counted from the first
/// byte's least significant bit (RFC 1951 §3.1.1 packs bits from the LSB).
struct FinalBlockBounds: Equatable {
    var headerBit: Int
    var endBit: Int
}

extension ZStream {
    /// Decodes `deflateData` (one whole raw deflate stream) into `scratch`, discarding the
    /// plain bytes, to find its final block. Resets the stream first; leaves it ready for the
    /// next call. Runs at zlib's inflate speed; allocates nothing.
    /// - Parameters:
    ///   - deflateData: A complete deflate stream, ended by its final block.
    ///   - scratch: Room for plain bytes, reused; any size above 0 (larger means fewer calls).
    /// - Throws: ``GzipError/zlibFailure(code:message:)`` when the data is not a complete valid
    ///   deflate stream (which would be a bug in the deflater that made it).
    /// Wraps zlib's `inflateReset` and `inflate` with `Z_BLOCK`, reading `data_type`.
    func locateFinalBlock(in deflateData: UnsafeRawBufferPointer,
                          scratch: UnsafeMutableRawBufferPointer) throws(GzipError) -> FinalBlockBounds {
        precondition(mode == .inflate, "a deflating ZStream cannot inflate")
        reset()
        let z = pointer
        defer {
            z.pointee.next_in = nil
            z.pointee.next_out = nil
        }
        z.pointee.next_in = UnsafeMutablePointer(mutating: deflateData.baseAddress?.assumingMemoryBound(to: Bytef.self))
        z.pointee.avail_in = UInt32(deflateData.count)
        // A raw stream starts with a block header; zlib does not stop before the first one.
        var blockStart = 0
        while true {
            z.pointee.next_out = scratch.baseAddress?.assumingMemoryBound(to: Bytef.self)
            z.pointee.avail_out = UInt32(scratch.count)
            let code = CZlib.inflate(z, Z_BLOCK)
            guard code == Z_OK else {
                let failure = code == Z_STREAM_END || code == Z_BUF_ERROR ? Z_DATA_ERROR : code
                throw GzipError.zlibFailure(
                    code: failure,
                    message: code == Z_OK ? "" : "deflate data to join: " + Self.message(for: code, stream: z))
            }
            let dataType = Int(z.pointee.data_type)
            // 128: stopped just after a block's end-of-block code (or a stored block's bytes);
            // 64: that block was the final one; the low 3 bits: bits of the last byte taken
            // that are not used yet.
            guard dataType & 128 != 0 else { continue }
            let position = (deflateData.count - Int(z.pointee.avail_in)) * 8 - (dataType & 7)
            if dataType & 64 != 0 { return FinalBlockBounds(headerBit: blockStart, endBit: position) }
            blockStart = position
        }
    }
}

/// Makes the deflate stream in `buffer[0..<count]` continuable: clears its final block's
/// BFINAL bit and appends an empty stored block (3 header bits, zero padding to the byte
/// boundary, then LEN 0 and NLEN 0xffff: the bytes 00 00 ff ff; RFC 1951 §3.2.4), the same
/// marker a zlib sync flush ends with.
/// - Parameters:
///   - buffer: Holds the stream from its start, and at least 5 more bytes after its end.
///   - count: The stream's length in bytes.
///   - bounds: Its final block, from ``ZStream/locateFinalBlock(in:scratch:)``.
/// - Returns: The new length: the stream's bytes up to the final block's end, plus 4 or 5.
func makeContinuable(_ buffer: UnsafeMutableRawBufferPointer, count: Int, bounds: FinalBlockBounds) -> Int {
    let end = bounds.endBit
    precondition(bounds.headerBit < end && (end + 7) / 8 <= count, "the final block lies inside the stream")
    let bytes = buffer.bindMemory(to: UInt8.self)
    bytes[bounds.headerBit >> 3] &= ~(1 << UInt8(bounds.headerBit & 7))
    // The padding bits after the final block become the stored block's header (BFINAL 0,
    // BTYPE 00) and its padding: all zero, spilling into one more byte when fewer than 3 are left.
    if end & 7 != 0 { bytes[end >> 3] &= UInt8(1 << (end & 7)) - 1 }
    var length = (end + 7) / 8
    let headerEnd = (end + 3 + 7) / 8
    precondition(headerEnd + 4 <= bytes.count, "room for the empty stored block")
    while length < headerEnd {
        bytes[length] = 0
        length += 1
    }
    for byte: UInt8 in [0x00, 0x00, 0xff, 0xff] {
        bytes[length] = byte
        length += 1
    }
    return length
}

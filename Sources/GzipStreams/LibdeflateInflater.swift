import CLibdeflate

/// One whole-buffer raw inflate (RFC 1951) through libdeflate, the fastest decoder of a deflate
/// stream held whole in memory; it has no streaming interface, so it serves only as a
/// ``WholeBufferInflater``: ``BGZFInputStream``'s fast path. libdeflate accepts the reserved
/// distance codes 30 and 31 and literal/length codes 286 and 287, which zlib rejects, so it
/// suits only data whose validity is checked otherwise (a BGZF member's CRC-32 and ISIZE; see
/// ``BGZFInputStream``). The decompressor (about 32 KiB) is allocated on first use and freed
/// with the object.
///
/// Used by one thread at a time.
final class LibdeflateInflater: WholeBufferInflater {
    private var decompressor: OpaquePointer?

    deinit {
        if let decompressor { libdeflate_free_decompressor(decompressor) }
    }

    /// ``WholeBufferInflater/inflateWhole(_:count:into:size:)``; `false` as well when the
    /// decompressor cannot be allocated. Wraps libdeflate's `libdeflate_deflate_decompress_ex`.
    func inflateWhole(_ input: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>,
                      size: Int) -> Bool {
        if decompressor == nil { decompressor = libdeflate_alloc_decompressor() }
        guard let decompressor else { return false }
        var consumed = 0
        var produced = 0
        let result = libdeflate_deflate_decompress_ex(decompressor, input, count, output, size, &consumed, &produced)
        return result == LIBDEFLATE_SUCCESS && consumed == count && produced == size
    }
}

import CLibdeflate
import Synchronization

/// libdeflate as a deflate backend: its whole-buffer compressor, faster than zlib at the same
/// level, for buffers that fit in memory whole (BGZF members). It cannot stream, take a preset
/// dictionary (``compress(_:dictionary:isFinal:into:)`` ignores it) or end with a sync flush:
/// its deflate data always ends with the final block.
///
/// The compressor is allocated by the first ``compress(_:dictionary:isFinal:into:)`` (so a
/// deflater per pipeline worker costs nothing until the worker runs) and freed by ``end()`` or
/// the deinitializer; ``liveCount`` counts the compressors not yet freed, so a test can prove
/// the pairing. Used by one thread at a time.
final class LibdeflateDeflater: WholeBufferDeflater {
    /// The number of libdeflate compressors allocated and not yet freed, across the process.
    static let liveCount = Atomic<Int>(0)

    /// libdeflate's compression level, 0 (stored blocks) to 12.
    let level: Int
    private var compressor: OpaquePointer?

    /// A deflater at libdeflate's `level`, `0...12`; nothing is allocated yet.
    init(level: Int) {
        precondition((0...12).contains(level), "libdeflate's levels are 0 to 12")
        self.level = level
    }

    deinit {
        end()
    }

    var isLive: Bool { compressor != nil }

    /// libdeflate's worst case for any of its compressors. Wraps libdeflate's
    /// `libdeflate_deflate_compress_bound`.
    func compressBound(_ count: Int) -> Int {
        libdeflate_deflate_compress_bound(nil, count)
    }

    /// Deflates `input` in one call, ended by the final block.
    /// - Precondition: `isFinal`.
    /// - Throws: ``GzipError/libdeflateFailure(message:)`` when no compressor can be allocated.
    /// Wraps libdeflate's `libdeflate_alloc_compressor` and `libdeflate_deflate_compress`.
    func compress(_ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isFinal: Bool,
                  into output: UnsafeMutableRawBufferPointer) throws(GzipError) -> Int? {
        precondition(isFinal, "libdeflate's deflate data always ends with the final block")
        if compressor == nil {
            guard let allocated = libdeflate_alloc_compressor(Int32(level)) else {
                throw GzipError.libdeflateFailure(message: "cannot allocate a compressor at level \(level)")
            }
            compressor = allocated
            Self.liveCount.add(1, ordering: .relaxed)
        }
        let count = libdeflate_deflate_compress(compressor, input.baseAddress, input.count,
                                                output.baseAddress, output.count)
        return count == 0 ? nil : count
    }

    /// Frees the compressor; call only once no job uses it any more. Wraps libdeflate's
    /// `libdeflate_free_compressor`.
    func end() {
        guard let compressor else { return }
        libdeflate_free_compressor(compressor)
        self.compressor = nil
        Self.liveCount.subtract(1, ordering: .relaxed)
    }
}

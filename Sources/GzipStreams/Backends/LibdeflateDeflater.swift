import CLibdeflate
import Synchronization

/// libdeflate as a deflate backend: its whole-buffer compressor, faster than zlib at the same
/// level, for buffers that fit in memory whole (BGZF members, the chunks of parallel pack). It
/// cannot stream or take a preset dictionary (``compress(_:dictionary:isFinal:into:)`` ignores
/// it), and its deflate data always ends with the final block; for a compress that is not
/// final, that block is found by decoding the data once with zlib (about 5 times faster than
/// the deflate at level 6) and made continuable (DeflateJoining.swift), as a sync flush would
/// end it.
///
/// The compressor is allocated by the first ``compress(_:dictionary:isFinal:into:)`` (so a
/// deflater per pipeline worker costs nothing until the worker runs), the zlib inflater and
/// its 64 KiB of scratch by the first that is not final; both are freed by ``end()`` or the
/// deinitializer. ``liveCount`` counts the compressors not yet freed, so a test can prove the
/// pairing. Used by one thread at a time.
final class LibdeflateDeflater: WholeBufferDeflater {
    /// The number of libdeflate compressors allocated and not yet freed, across the process.
    static let liveCount = Atomic<Int>(0)

    /// libdeflate's compression level, 0 (stored blocks) to 12.
    let level: Int
    private var compressor: OpaquePointer?
    /// Finds the final block of a compress that is not final.
    private var joiner: ZStream?
    private var scratch: UnsafeMutableRawBufferPointer?
    /// Plain bytes decoded at a time while finding the final block.
    private static let scratchSize = 64 << 10

    /// A deflater at libdeflate's `level`, `0...12`; nothing is allocated yet.
    init(level: Int) {
        precondition((0...12).contains(level), "libdeflate's levels are 0 to 12")
        self.level = level
    }

    deinit {
        end()
    }

    var takesDictionary: Bool { false }

    var isLive: Bool { compressor != nil }

    /// libdeflate's worst case for any of its compressors, plus the 5 bytes of the empty stored
    /// block that ends a compress that is not final. Wraps libdeflate's
    /// `libdeflate_deflate_compress_bound`.
    func compressBound(_ count: Int) -> Int {
        libdeflate_deflate_compress_bound(nil, count) + 5
    }

    /// Deflates `input` in one call, ended by the final block, or, unless `isFinal`, by an
    /// empty stored block with the final block's BFINAL cleared.
    /// - Throws: ``GzipError/libdeflateFailure(message:)`` when no compressor can be allocated;
    ///   ``GzipError/zlibFailure(code:message:)`` when zlib cannot be set up to find the final
    ///   block (out of memory) or finds libdeflate's data invalid.
    /// Wraps libdeflate's `libdeflate_alloc_compressor` and `libdeflate_deflate_compress`.
    func compress(_ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isFinal: Bool,
                  into output: UnsafeMutableRawBufferPointer) throws(GzipError) -> Int? {
        // The empty stored block needs 5 bytes after the data; libdeflate is told of less room.
        let room = isFinal ? output.count : output.count - 5
        guard room > 0 else { return nil }
        if compressor == nil {
            guard let allocated = libdeflate_alloc_compressor(Int32(level)) else {
                throw GzipError.libdeflateFailure(message: "cannot allocate a compressor at level \(level)")
            }
            compressor = allocated
            Self.liveCount.add(1, ordering: .relaxed)
        }
        let count = libdeflate_deflate_compress(compressor, input.baseAddress, input.count,
                                                output.baseAddress, room)
        guard count > 0 else { return nil }
        if isFinal { return count }
        if joiner == nil {
            joiner = try ZStream(inflate: ())
            scratch = .allocate(byteCount: Self.scratchSize, alignment: 16)
        }
        guard let joiner, let scratch else { return nil }
        let bounds = try joiner.locateFinalBlock(in: UnsafeRawBufferPointer(rebasing: output[..<count]),
                                                 scratch: scratch)
        return makeContinuable(output, count: count, bounds: bounds)
    }

    /// Frees the compressor; call only once no job uses it any more. Wraps libdeflate's
    /// `libdeflate_free_compressor`.
    func end() {
        joiner?.end()
        joiner = nil
        scratch?.deallocate()
        scratch = nil
        guard let compressor else { return }
        libdeflate_free_compressor(compressor)
        self.compressor = nil
        Self.liveCount.subtract(1, ordering: .relaxed)
    }
}

import CIsal

/// ISA-L's deflate as a whole-buffer backend: the fastest deflate here, used by the fastest
/// pack level. Each ``compress(_:dictionary:isFinal:into:)`` deflates its buffer afresh (no
/// preset dictionary: `dictionary` is ignored) and, unless `isFinal`, ends it with a full
/// flush: no final block and an empty stored block, byte-aligned, so more deflate data can
/// follow as one stream (RFC 1951 §3.2.4).
///
/// On the benchmark's two 256 MiB corpora (1 MiB pieces, one core) ISA-L's level 2 made 0.992×
/// (mixed) and 0.966× (text) zlib -1's size in a third of its level 3's time; its level 1 was
/// as fast but larger than zlib's on the mixed corpus (the table at `chunkSettings(level:)`).
///
/// The level buffer (ISA-L's default for the level: 324 KiB at level 2) and the stream state
/// (80 KiB) are allocated by the first compress and freed by ``end()`` or the deinitializer.
/// Used by one thread at a time.
final class IsalDeflater: WholeBufferDeflater {
    /// ISA-L's compression level, 1 to 3.
    let level: Int
    private var stream: UnsafeMutablePointer<isal_zstream>?
    private var levelBuffer: UnsafeMutableRawBufferPointer?

    /// A deflater at ISA-L's `level`, `1...3`; nothing is allocated yet.
    init(level: Int) {
        precondition((1...3).contains(level), "ISA-L's deflate levels are 1 to 3 (0 is not used)")
        self.level = level
    }

    deinit {
        end()
    }

    var takesDictionary: Bool { false }

    var isLive: Bool { stream != nil }

    /// Room for ISA-L's output: its stored-block fallback adds 5 bytes per 64 KiB, and the
    /// flush marker and block headers a few hundred more.
    func compressBound(_ count: Int) -> Int {
        count + count / 64 + 1024
    }

    /// Deflates `input` in one call. Wraps ISA-L's `isal_deflate_stateless_init` and
    /// `isal_deflate_stateless`.
    /// - Returns: The bytes written, or `nil` when ISA-L says the output did not fit.
    /// - Throws: Nothing: ISA-L's other failures are invalid parameters (a precondition).
    func compress(_ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer, isFinal: Bool,
                  into output: UnsafeMutableRawBufferPointer) throws(GzipError) -> Int? {
        let stream = allocateIfNeeded()
        // The whole state is zeroed first: isal_deflate_stateless_init sets only some fields,
        // and ISA-L keeps its level buffer's hash tables from an earlier call when the rest of
        // the internal state says they are set up, so the output then depended on the chunks
        // this worker deflated before (and on which worker took which chunk).
        stream.pointee = isal_zstream()
        isal_deflate_stateless_init(stream)
        stream.pointee.level = UInt32(level)
        stream.pointee.level_buf = levelBuffer?.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.pointee.level_buf_size = UInt32(levelBuffer?.count ?? 0)
        stream.pointee.flush = UInt16(FULL_FLUSH)
        stream.pointee.end_of_stream = isFinal ? 1 : 0
        stream.pointee.gzip_flag = UInt16(IGZIP_DEFLATE)
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = UInt32(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_out = UInt32(output.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        let code = isal_deflate_stateless(stream)
        if code == STATELESS_OVERFLOW { return nil }
        precondition(code == COMP_OK, "isal_deflate_stateless rejected its parameters (\(code))")
        return Int(stream.pointee.total_out)
    }

    /// Frees the stream state and the level buffer.
    func end() {
        guard let stream else { return }
        stream.deallocate()
        self.stream = nil
        levelBuffer?.deallocate()
        levelBuffer = nil
    }

    private func allocateIfNeeded() -> UnsafeMutablePointer<isal_zstream> {
        if let stream { return stream }
        let allocated = UnsafeMutablePointer<isal_zstream>.allocate(capacity: 1)
        stream = allocated
        let size = Int(gzstream_isal_level_buffer_size(Int32(level)))
        if size > 0 { levelBuffer = .allocate(byteCount: size, alignment: 16) }
        return allocated
    }
}

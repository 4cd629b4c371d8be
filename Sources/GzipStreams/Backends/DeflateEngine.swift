import ByteStreams

/// How a parallel ``GzipOutputStream`` deflates. Both write one gzip member (RFC 1952) that
/// every gzip reader decodes, whose bytes depend on the level and block size only, never on
/// the number of threads.
public enum DeflateEngine: String, Sendable, CaseIterable {
    /// Independent chunks, each deflated afresh by ISA-L (level 1) or libdeflate (levels 0
    /// and 2 to 12) on a worker thread and joined into one deflate stream: each chunk but the
    /// last has its final block's BFINAL cleared and ends with an empty stored block, so every
    /// chunk starts byte-aligned and refers to nothing before it (an access point that needs no
    /// window). About twice zlib's speed per core at a size no larger than zlib's at the same
    /// level (the table at `chunkSettings(level:)`). The default with threads.
    case chunks
    /// zlib's deflate (levels 0 to 9), as pigz does it with threads: blocks with the 32 KiB
    /// before each as preset dictionary, each ended by a sync flush; one continuous deflate
    /// on one thread. The ratio of one zlib stream, at zlib's speed.
    case zlib
}

extension DeflateEngine {
    /// The engine a ``GzipOutputStream`` made with these arguments deflates with, after the
    /// rules between them: the one place those rules are written (the stream's initialiser and
    /// the `gzstream` command, which checks a command line before it opens any file, both ask
    /// here). Levels 10 to 12, `rsyncable` and `buildsIndex` need ``chunks``.
    /// - Parameters:
    ///   - engine: The engine asked for; `nil` chooses as ``GzipOutputStream`` documents:
    ///     ``chunks`` when `threads` is above 1, `blockSize` is given, `level` is above 9,
    ///     `rsyncable` or `buildsIndex`.
    ///   - level: The compression level, 0 to 12.
    ///   - threads: Worker threads, 1 or more.
    ///   - blockSize: Plain bytes per parallel block, or `nil` for the engine's.
    ///   - rsyncable: Chunks cut where the content says.
    ///   - buildsIndex: An access point recorded at each chunk start.
    ///   - operation: What ``ByteStreamError`` names as the failed operation.
    /// - Returns: The engine, or `nil` for one continuous zlib deflate on the writing thread.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` naming the
    ///   first rule broken, in this order: `level` (outside 0 to 9 without ``chunks``, 0 to 12
    ///   with it), `rsyncable`, `buildsIndex`. Does not block; no state.
    public static func resolved(_ engine: DeflateEngine?, level: Int, threads: Int, blockSize: Int?,
                                rsyncable: Bool, buildsIndex: Bool,
                                operation: String = "create GzipOutputStream") throws(ByteStreamError) -> DeflateEngine? {
        let engine = engine ?? (threads > 1 || blockSize != nil || level > compressionLevels.upperBound
            || rsyncable || buildsIndex ? .chunks : nil)
        try requireArgument(level, in: engine == .chunks ? extendedCompressionLevels : compressionLevels, "level",
                            operation: operation)
        try requireArgument(!rsyncable || engine == .chunks, "rsyncable", "needs the chunks engine",
                            operation: operation)
        try requireArgument(!buildsIndex || engine == .chunks, "buildsIndex", "needs the chunks engine",
                            operation: operation)
        return engine
    }
}

/// The compression levels of the ``DeflateEngine/chunks`` engine and of BGZF: 0 (stored) to
/// 12; 10 to 12 are libdeflate's near-optimal parsing, beyond zlib's 9 (as pigz's 11 is).
package let extendedCompressionLevels = 0...12

/// The deflater and chunk size behind one level of the ``DeflateEngine/chunks`` engine.
struct ChunkSettings: Equatable {
    enum Backend: Equatable {
        case isal(level: Int)
        case libdeflate(level: Int)
    }

    var backend: Backend
    /// Plain bytes per chunk when the caller gives no block size.
    var chunkSize: Int

    /// The default chunk size, 1 MiB: 2 MiB chunks made output only 0.1% smaller at levels
    /// 1 to 9 on the pack corpus, and each chunk in flight costs its size twice in memory.
    static let defaultChunkSize = 1 << 20

    /// Makes one worker's deflater.
    func makeDeflater() -> any WholeBufferDeflater {
        switch backend {
        case .isal(let level): IsalDeflater(level: level)
        case .libdeflate(let level): LibdeflateDeflater(level: level)
        }
    }
}

/// The backend behind each level of the ``DeflateEngine/chunks`` engine, chosen by measurement
/// on the benchmark's two 256 MiB corpora, mixed (headers, Perl, binaries) and text (source
/// and documentation), 1 MiB chunks on one core: the fastest backend level whose output is no
/// larger than zlib's at that level on both, where one exists at a speed that pays. Sizes in
/// bytes, mixed / text, zlib's (`gzip -N`) below each:
///
/// | level | backend | output | zlib's |
/// |---|---|---|---|
/// | 0 | libdeflate 0 (stored) | | |
/// | 1 | ISA-L 2 | 82,137,368 / 53,086,340 | 82,761,473 / 54,951,044 |
/// | 2 | libdeflate 1 | 78,031,176 / 49,513,748 | 79,962,368 / 52,189,021 |
/// | 3 | libdeflate 2 | 75,509,638 / 48,215,784 | 77,924,242 / 50,285,521 |
/// | 4 | libdeflate 4 | 73,480,499 / 45,623,319 | 74,347,295 / 46,713,803 |
/// | 5 | libdeflate 5 | 71,795,437 / 44,542,827 | 72,268,171 / 44,502,083 |
/// | 6 | libdeflate 6 | 71,199,020 / 43,751,108 | 71,457,265 / 43,553,539 |
/// | 7 | libdeflate 7 | 70,859,135 / 43,350,140 | 71,213,579 / 43,319,901 |
/// | 8, 9 | libdeflate 8 | 70,586,424 / 42,997,796 | 71,017,816 / 43,095,362 (8); 70,980,701 / 43,061,034 (9) |
/// | 10–12 | libdeflate 10–12 | | (none) |
///
/// The trades: ISA-L's level 2 took a third of its level 3's time for 2.5% more output, still
/// below zlib's, pigz's and igzip's `-1` on both corpora (its level 1 is larger than zlib's on
/// the mixed one). Levels 5 to 7 are 0.07% to 0.45% larger than zlib's on text: the next
/// libdeflate level costs 25% to 45% more time there. libdeflate's level 9 took 20% more time
/// than its 8 for 0.07% (mixed) and 0.14% (text) less output, so `-9` runs level 8 and writes
/// what `-8` writes, still smaller than zlib's `-9`; levels 10 to 12 go further.
///
/// - Precondition: `level` is in ``extendedCompressionLevels``.
func chunkSettings(level: Int) -> ChunkSettings {
    precondition(extendedCompressionLevels.contains(level), "the chunks engine's levels are 0 to 12")
    let backend: ChunkSettings.Backend = switch level {
    case 1: .isal(level: 2)
    case 2: .libdeflate(level: 1)
    case 3: .libdeflate(level: 2)
    case 9: .libdeflate(level: 8)
    default: .libdeflate(level: level)
    }
    return ChunkSettings(backend: backend, chunkSize: ChunkSettings.defaultChunkSize)
}

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
/// on the 256 MiB pack corpus (1 MiB chunks, one core; zlib's size at the same level in
/// brackets): the fastest backend level whose output is no larger than zlib's.
///
/// | level | backend | size | (zlib) |
/// |---|---|---|---|
/// | 0 | libdeflate 0 (stored) | | |
/// | 1 | ISA-L 3 | 79.96 MB | (82.68) |
/// | 2 | libdeflate 1 | 78.03 | (79.88) |
/// | 3 | libdeflate 2 | 75.51 | (77.89) |
/// | 4 | libdeflate 4 | 73.48 | (74.33) |
/// | 5–9 | libdeflate 5–9 | 71.80, 71.20, 70.86, 70.59, 70.54 | (72.25, 71.43, 71.19, 71.01, 70.98) |
/// | 10–12 | libdeflate 10–12 | | (none) |
///
/// - Precondition: `level` is in ``extendedCompressionLevels``.
func chunkSettings(level: Int) -> ChunkSettings {
    precondition(extendedCompressionLevels.contains(level), "the chunks engine's levels are 0 to 12")
    let backend: ChunkSettings.Backend = switch level {
    case 1: .isal(level: 3)
    case 2: .libdeflate(level: 1)
    case 3: .libdeflate(level: 2)
    default: .libdeflate(level: level)
    }
    return ChunkSettings(backend: backend, chunkSize: ChunkSettings.defaultChunkSize)
}

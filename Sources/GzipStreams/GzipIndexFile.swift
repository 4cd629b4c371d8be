import ByteStreams

/// An index of a gzip file, as one of the index files gzstream reads and writes: bgzip's
/// `.gzi` (``BGZFIndex``: where each BGZF member starts) or access points with their windows
/// (``GzipIndex``: indexed_gzip's GZIDX, or gztool's format, read into the same shape).
///
/// A value: immutable and `Sendable`, safe to share between threads.
public enum GzipIndexFile: Equatable, Sendable {
    /// bgzip's `.gzi` of a BGZF file (htslib's bgzf.c): the start of each member after the first.
    case gzi(BGZFIndex)
    /// Access points (zlib's zran.c): read from GZIDX or gztool's format, written as GZIDX.
    case accessPoints(GzipIndex)

    /// The three formats, by the name a message gives them.
    public enum Format: String, Equatable, Sendable {
        /// bgzip's `.gzi`: a count and pairs of offsets, no magic.
        case gzi = ".gzi"
        /// indexed_gzip's GZIDX: it starts with `GZIDX`.
        case gzidx = "GZIDX"
        /// gztool's `.gzi`: 8 zero bytes, then `gzipindx` or `gzipindX`.
        case gztool = "gztool"
    }

    /// The bytes of the index's file as gzstream writes it: for ``gzi(_:)`` bgzip's `.gzi`
    /// (``BGZFIndex/encoded``), for ``accessPoints(_:)`` GZIDX (``GzipIndex/gzidxEncoded()``).
    public func encoded() -> [UInt8] {
        switch self {
        case .gzi(let index): index.encoded
        case .accessPoints(let index): index.gzidxEncoded()
        }
    }
}

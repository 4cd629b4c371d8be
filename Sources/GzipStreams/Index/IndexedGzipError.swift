/// An index that does not fit the gzip file it is used with (made for another file, or for this
/// one before it changed), or a decode through it that failed. ``IndexedGzipInputStream`` never
/// returns bytes through such an index that it has not checked: reading the whole file, it
/// decodes without the index instead (``IndexedGzipInputStream/indexMismatch`` says why);
/// reading from a seek, it throws one of these.
///
/// Apart from ``GzipIndexError`` on purpose: that one says an index *file* cannot be read
/// (its format, the reason, the byte of the file), decided before any decode; this one says a
/// readable index does not fit the gzip file it is applied to, decided against the file's bytes
/// while decoding, and its cases carry what a caller acts on (the point, the sizes; the
/// `gzstream` command names a rebuild for each). Folding it into ``GzipError`` would make an index
/// problem look like damaged gzip data, which it is not: the file may be perfect.
public enum IndexedGzipError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input is not a regular file, which the workers read at offsets (`pread(2)`).
    case notRegularFile
    /// The index was made for a compressed file of `indexed` bytes; this one has `actual`.
    case sizeMismatch(indexed: UInt64, actual: Int64)
    /// The index has no point, or its first point is not at plain offset 0 on the first byte
    /// of deflate data after the first member's header (byte `headerEnd`), where every GZIDX
    /// writer puts it.
    case firstPointMisplaced(headerEnd: Int64)
    /// Decoding from the point before `point` did not end exactly at `point` as the index says
    /// it does (at its compressed bit, after exactly the plain bytes between the two, with the
    /// point's window as the last plain bytes), or the bytes decoded through the index differ
    /// from those of a decode from the member's start: the index is not this file's.
    case pointMismatch(point: Int)
    /// The inflater refused point `point`'s window or bits.
    case badWindow(point: Int)
    /// Reading the whole file, the window of point `point` is not the 32 KiB of data before it
    /// (a sparse window, as rapidgzip writes by default, or a damaged one): the spans after it
    /// would be decoded from the wrong history.
    case windowDiffers(point: Int)
    /// The index cannot be used for decoding: `reason`.
    case unusable(String)
    /// Decoding from point `point` failed with `error` (damaged data, or an index that is not
    /// this file's); after a seek the member's start is not read, so this is the answer.
    case undecodable(point: Int, error: GzipError)
    /// A seek to `offset`, past the end of the plain data (`size` bytes).
    case offsetPastEnd(offset: Int64, size: Int64)
    /// The index carries gzstream's seal, and the file's last 8 bytes are not the ones it names:
    /// the file was changed (rewritten, or another file put in its place) after the index was made.
    case fileChanged
    /// The data does not have the lines the index's ``GzipLineTable`` says: `counted` `\n`
    /// bytes before access point `point` where the table says `indexed` (`point` `nil`: in the
    /// whole data, or, when those agree, its lines).
    case lineCountMismatch(point: Int?, counted: UInt64, indexed: UInt64)

    /// The message a user reads: what did not fit, and where. (The command line adds how to
    /// rebuild the index, naming the file.)
    public var description: String {
        switch self {
        case .notRegularFile:
            "an index can be used only with a regular file"
        case .sizeMismatch(let indexed, let actual):
            "the index is not this file's: it was made for a file of \(indexed) bytes, this one has \(actual)"
        case .firstPointMisplaced(let headerEnd):
            "the index is not this file's: its first access point is not at byte \(headerEnd), where the deflate data starts"
        case .pointMismatch(let point):
            "the data does not decode to access point \(point) as the index says (the file is damaged, or the index is not its)"
        case .badWindow(let point):
            "the index is not usable: the inflater refused the window of access point \(point)"
        case .windowDiffers(let point):
            "the window of access point \(point) is not the data before it (a sparse window, as rapidgzip writes by default, or a damaged one)"
        case .unusable(let reason):
            "the index is not usable: \(reason)"
        case .undecodable(let point, let error):
            "decoding from access point \(point) failed (a damaged file, or an index that is not this file's): \(error)"
        case .offsetPastEnd(let offset, let size):
            "offset \(offset) is past the end of the data (\(size) bytes)"
        case .fileChanged:
            "the index is stale: the file's last bytes are not those it was made from (the file changed after the index was made)"
        case .lineCountMismatch(let point?, let counted, let indexed):
            "the index's line count does not fit the data: \(counted) newlines before access point \(point), the index says \(indexed)"
        case .lineCountMismatch(nil, let counted, let indexed):
            "the index's line count does not fit the data: \(counted) in the whole data, the index says \(indexed)"
        }
    }
}

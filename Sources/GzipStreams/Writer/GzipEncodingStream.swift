import ByteStreams

/// What a writer of gzip data tells besides taking bytes: what ``GzipOutputStream`` and
/// ``BGZFOutputStream`` share, so that a caller (the `gzstream` command) can pack through
/// either without knowing which, as ``GzipDecodingStream`` does for the readers.
///
/// Not thread-safe, as the streams themselves: one thread or queue at a time writes, closes
/// and asks.
public protocol GzipEncodingStream: ByteOutputStream {
    /// The number of compressed bytes written to the inner stream so far (header, trailer
    /// and, for BGZF, the end-of-file member included once written).
    var compressedByteCount: Int64 { get }
    /// The number of plain bytes taken so far.
    var uncompressedByteCount: Int64 { get }
    /// The index the stream built, when made with `buildsIndex`: bgzip's `.gzi` for BGZF
    /// (the members written so far), access points for one gzip member (only once the stream
    /// has closed without error). `nil` otherwise. ``GzipIndexFile/encoded()`` gives the
    /// bytes of its file.
    var builtIndex: GzipIndexFile? { get }
    /// Closes the stream without ending the data (no trailer, no BGZF end-of-file member), so
    /// that a reader finds it truncated: for a writer whose input failed. Closes the inner
    /// stream as ``ByteStream/close()`` does; blocks until any worker threads have finished.
    func abandon()
}

extension GzipOutputStream: GzipEncodingStream {
    /// ``index`` as an index file: access points, written as GZIDX.
    public var builtIndex: GzipIndexFile? { index.map(GzipIndexFile.accessPoints) }
}

extension BGZFOutputStream: GzipEncodingStream {
    /// ``index`` as an index file: bgzip's `.gzi`.
    public var builtIndex: GzipIndexFile? { index.map(GzipIndexFile.gzi) }
}

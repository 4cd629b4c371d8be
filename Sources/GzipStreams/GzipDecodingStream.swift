import ByteStreams

/// What a reader of gzip data tells besides the bytes: the properties ``GzipInputStream`` and
/// ``BGZFInputStream`` share, so that a caller (the `gzstream` command) can use either.
public protocol GzipDecodingStream: ByteInputStream {
    /// The number of compressed bytes consumed so far.
    var compressedByteCount: Int64 { get }
    /// The number of plain bytes returned so far.
    var uncompressedByteCount: Int64 { get }
    /// The first member's header, once it has been read.
    var header: GzipHeader? { get }
    /// Where trailing garbage was met, if it was.
    var trailingGarbage: GzipInputStream.TrailingGarbage? { get }
    /// The number of members read and checked so far.
    var memberCount: Int { get }
    /// Whether the input ended with zero bytes after the last member (padding, skipped).
    var endedWithZeroPadding: Bool { get }
}

extension GzipInputStream: GzipDecodingStream {}

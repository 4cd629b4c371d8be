import ByteStreams

// The public types of GzipInputStream: its policies, what it reports, its decoders and limits.
extension GzipInputStream {
    /// What to do with bytes after the last member that are neither zero padding nor a member.
    public enum TrailingGarbagePolicy: Sendable {
        /// The read that meets them returns `-1` with ``GzipError/trailingGarbage(offset:length:)``;
        /// every byte of the members before it has already been returned.
        case fail
        /// The stream ends normally and ``trailingGarbage`` tells where they were.
        case ignore
        /// Input that is not gzip is returned unchanged, as `gzip -cdf` (`zcat -f`) does: the
        /// whole input when its first two bytes are not the gzip magic (an empty input gives no
        /// bytes and no error), and everything after a member that is not followed by the
        /// magic, zero padding included. Bytes that begin with the magic must still be a valid
        /// member. ``trailingGarbage`` stays `nil`; the bytes count in ``uncompressedByteCount``
        /// and against the output limit.
        case passThrough
    }

    /// Where the trailing garbage is: its offset in the compressed input and its length, in bytes.
    public struct TrailingGarbage: Equatable, Sendable {
        /// The offset in bytes of the first such byte in the compressed input.
        public var offset: Int64
        /// How many bytes follow the last member, in bytes.
        public var length: Int64
        /// Its first byte, and its second when the first is ID1 (`1f`): enough to tell zero
        /// padding followed by other bytes, or the magic of another format (``otherFormat``).
        public var leadingBytes: [UInt8] = []

        /// The format the garbage starts as, by its magic, when it is one that GNU gzip also
        /// decodes; `nil` for anything else.
        public var otherFormat: OtherCompressionFormat? {
            leadingBytes.count >= 2 ? GzipFormat.otherFormat(leadingBytes[0], leadingBytes[1]) : nil
        }
    }

    /// The other formats GNU gzip decodes, which gzstream does not: what bytes after a member
    /// may start as.
    public enum OtherCompressionFormat: String, Sendable {
        /// compress(1), `.Z`: `1f 9d`.
        case lzw = "compress (LZW)"
        /// pack(1), `.z` of old: `1f 1e`.
        case pack = "pack"
        /// SCO's LZH: `1f a0`.
        case lzh = "LZH"
        /// gzip 0.5's magic, `1f 9e`, read by GNU gzip as a gzip member.
        case oldGzip = "gzip 0.5"
    }

    /// One complete, checked member, as passed to ``memberHandler``.
    public struct Member: Equatable, Sendable {
        /// 1 for the first member.
        public var index: Int
        /// The offset in bytes of the member's first header byte in the compressed input.
        public var offset: Int64
        /// The member's header fields.
        public var header: GzipHeader
        /// The member's size in bytes in the compressed input: header, deflate data and trailer.
        public var compressedSize: Int64
        /// The number of bytes the member decoded to (exact, not modulo 2^32).
        public var uncompressedSize: Int64
        /// The CRC-32 of the decoded bytes, equal to the trailer's.
        public var crc32: UInt32
        /// `true` when FNAME or FCOMMENT was longer than ``maximumHeaderFieldLength`` and
        /// `header` holds only its start (the whole field was still read and checked).
        public var isHeaderFieldCut = false
        /// The size in bytes of the member's header in the compressed input, from the magic to
        /// the end of FHCRC (10 at least).
        public var headerSize: Int64 = 10
    }

    /// The most bytes of FNAME or FCOMMENT kept in ``header``: 64 KiB.
    public static let maximumHeaderFieldLength = 64 * 1024

    /// The deflate decoders ``GzipInputStream`` can use (RFC 1951 both).
    public enum Inflater: Sendable {
        /// zlib's `inflate`: the reference for every error and offset, and the decoder on a
        /// platform without ISA-L.
        case zlib
        /// ISA-L's `isal_inflate` (Debian `libisal-dev`), what igzip uses, and the default:
        /// about twice as fast as zlib here on a 256 MiB gzip -6 file, and the same bytes for
        /// every valid input.
        ///
        /// Damaged deflate data gets zlib's answer: when ISA-L rejects a member's deflate data,
        /// or the input ends inside it, the member is decoded again with zlib from its first
        /// deflate byte, the bytes already returned are skipped, and the rest of the member is
        /// zlib's (its bytes, its error and offset). The member's compressed bytes come back
        /// from the inner stream when it can seek (a regular file: ``ByteStream/PropertyKey/fileCurrentOffset``),
        /// otherwise from a copy kept while the member is read, up to ``replayLimit`` (1 MiB) of
        /// it. Past that limit on an input that cannot seek, the error is ISA-L's own: the same
        /// kind (`invalidDeflateData` or `truncated`), with ISA-L's reason, an offset up to 8
        /// bytes further on (ISA-L reads ahead), and perhaps fewer of the bytes before it.
        /// One leniency remains: zlib rejects a dynamic block whose literal/length or distance
        /// code is incomplete at its header; ISA-L only when a code it lacks is used. Such a
        /// block's bytes may come out before zlib's error (zlib's
        /// `infcover-invalid-distances-set.gz`: 21 bytes, then zlib's error at zlib's offset),
        /// and a member whose block never uses a missing code decodes, when its CRC-32 and
        /// ISIZE match (`fixtures/lenient/`); where they do not, the error is theirs. Use
        /// ``zlib`` for zlib's verdict on such data, as `gzstream test` does.
        case isal
    }

    /// The most bytes of one member's deflate data kept to decode it again with zlib when
    /// ISA-L fails on an input that cannot seek: 1 MiB (reserved once, filled as the member is
    /// read, so memory stays within 2 MiB of a small input's).
    public static let replayLimit = 1024 * 1024
}

/// Bytes a gzip reader takes one at a time around a member's deflate data: its header, its
/// trailer, and what follows it. The framing on top (``readHeader(_:)``, ``readTrailer(member:)``,
/// ``readFollowing(member:maximumFieldLength:)``, ``skipZeroPadding()``) is written once here for
/// every reader that takes bytes one at a time: ``GzipMemberInput`` (under ``GzipInputStream``
/// and ``GzipIndexBuilder``) and the indexed span decoder, which reads its file by `pread(2)`
/// from an access point's offset up to the next point's, and so keeps its own input. Generic,
/// so that each reader's calls are direct (no call through a witness table per byte).
protocol GzipMemberSource: AnyObject {
    /// The compressed-input offset in bytes of the next unread byte.
    var position: Int64 { get }
    /// The next byte, not taken; `nil` at the end of the input.
    /// - Throws: The input's error.
    func peekByte() throws -> UInt8?
    /// Takes the byte ``peekByte()`` just returned.
    func skipByte()
    /// Puts back `byte`, the byte just taken, so that ``position`` goes back by one.
    func putBack(_ byte: UInt8)
}

/// What follows a member's trailer (RFC 1952 §2.2), or begins an input.
enum GzipMemberFollowing {
    /// The end of the input.
    case end
    /// Another member: its magic (`1f 8b`) is taken, and the parser has taken it too.
    case member(GzipHeaderParser)
    /// A lone ID1 (`1f`) at `offset`, the last byte of the input (not taken): a header cut
    /// short, or for a reader that passes non-gzip bytes through, one such byte.
    case cutHeader(offset: Int64)
    /// A zero byte at `offset` (not taken): zero padding, unless other bytes follow the zeros.
    case zeroPadding(offset: Int64)
    /// Anything else, from `offset` on (not taken): its first byte, and its second when the
    /// first is ID1 (``GzipInputStream/TrailingGarbage/leadingBytes``).
    case other(offset: Int64, leadingBytes: [UInt8])
}

extension GzipMemberSource {
    func nextByte() throws -> UInt8? {
        guard let byte = try peekByte() else { return nil }
        skipByte()
        return byte
    }

    /// Feeds `parser` the rest of a member's header (RFC 1952 §2.3.1).
    /// - Throws: The parser's ``GzipError``; ``GzipError/truncated(member:part:offset:)`` at the
    ///   end of the input, for the parser's member; the input's error.
    func readHeader(_ parser: inout GzipHeaderParser) throws {
        while !parser.isDone {
            guard let byte = try nextByte() else {
                throw GzipError.truncated(member: parser.member, part: .header, offset: position)
            }
            _ = try parser.consume(byte)
        }
    }

    /// Reads a member's 8-byte trailer: CRC-32 and ISIZE, little-endian (RFC 1952 §2.3.1).
    /// - Parameter member: The member's number, for the error.
    /// - Returns: The trailer as stored, and its offset in the compressed input in bytes.
    /// - Throws: ``GzipError/truncated(member:part:offset:)`` (part `.trailer`) when the input
    ///   ends inside it; the input's error.
    func readTrailer(member: Int) throws -> (trailer: GzipTrailer, offset: Int64) {
        let offset = position
        var value: UInt64 = 0
        for index in 0..<GzipTrailer.size {
            guard let byte = try nextByte() else {
                throw GzipError.truncated(member: member, part: .trailer, offset: position)
            }
            value |= UInt64(byte) << UInt64(8 * index)
        }
        return (GzipTrailer(littleEndian: value), offset)
    }

    /// Tells what follows member `member` (0 before the first), looking at most two bytes ahead,
    /// as GNU gzip does: the end, another member (whose magic it takes), a lone ID1 at the end,
    /// zero padding, or anything else; only a member's magic is taken.
    /// - Parameters:
    ///   - member: The number of the member before, so the next is `member + 1`.
    ///   - maximumFieldLength: For the next member's parser.
    /// - Throws: The input's error.
    func readFollowing(member: Int, maximumFieldLength: Int) throws -> GzipMemberFollowing {
        let offset = position
        guard let first = try peekByte() else { return .end }
        switch first {
        case GzipFormat.magic.0:
            skipByte()
            guard let second = try peekByte() else {
                putBack(first)
                return .cutHeader(offset: offset)
            }
            guard GzipFormat.isMagic(first, second) else {
                putBack(first)
                return .other(offset: offset, leadingBytes: [first, second])
            }
            skipByte()
            var parser = GzipHeaderParser(member: member + 1, offset: offset, maximumFieldLength: maximumFieldLength)
            _ = try parser.consume(first)
            _ = try parser.consume(second)
            return .member(parser)
        case 0:
            return .zeroPadding(offset: offset)
        default:
            return .other(offset: offset, leadingBytes: [first])
        }
    }

    /// Takes zero bytes.
    /// - Returns: `true` when the input ends after them (padding), `false` at a byte that is not
    ///   zero (not taken).
    /// - Throws: The input's error.
    func skipZeroPadding() throws -> Bool {
        while let byte = try peekByte() {
            if byte != 0 { return false }
            skipByte()
        }
        return true
    }
}

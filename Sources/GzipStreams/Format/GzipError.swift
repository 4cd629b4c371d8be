/// A malformed gzip input or a zlib failure. Every case that concerns the input names the
/// byte offset in the compressed input where the fault was found, and, where it applies, the
/// member (1 for the first) it was found in; member 0 when the reader does not know which (a
/// read through an index that started after a seek), which the message then leaves out.
///
/// I/O failures of the wrapped stream are not `GzipError`s: they come through unchanged
/// (a `ByteStreamError` for the file and memory streams).
public enum GzipError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Where in a member the input ended.
    public enum MemberPart: String, Sendable {
        /// The member's header (RFC 1952 §2.3).
        case header
        /// The member's compressed blocks (RFC 1951).
        case deflateData = "deflate data"
        /// The member's CRC-32 and ISIZE.
        case trailer
    }

    /// The input held no bytes at all, so not even one member (RFC 1952 §2.2).
    case emptyInput
    /// The first two bytes are not the gzip magic `1f 8b` (RFC 1952 §2.3.1): not gzip data.
    case notGzip(offset: Int64)
    /// CM is not 8, deflate (RFC 1952 §2.3.1).
    case unsupportedMethod(UInt8, member: Int, offset: Int64)
    /// FLG has reserved bits 5–7 set, which RFC 1952 §2.3.1.2 says must be an error.
    case reservedFlags(UInt8, member: Int, offset: Int64)
    /// The FHCRC field does not match the low 16 bits of the header's CRC-32 (RFC 1952 §2.3.1).
    case headerCRCMismatch(member: Int, stored: UInt16, computed: UInt16, offset: Int64)
    /// The input ended inside a member's header, deflate data or trailer.
    case truncated(member: Int, part: MemberPart, offset: Int64)
    /// zlib rejected the deflate data (RFC 1951); `message` is zlib's.
    case invalidDeflateData(member: Int, message: String, offset: Int64)
    /// The CRC-32 in the trailer differs from that of the decoded data (RFC 1952 §2.3.1).
    case crcMismatch(member: Int, stored: UInt32, computed: UInt32, offset: Int64)
    /// ISIZE differs from the decoded size modulo 2^32 (RFC 1952 §2.3.1).
    case lengthMismatch(member: Int, stored: UInt32, computed: UInt32, offset: Int64)
    /// `length` bytes after the last member are neither a member nor zero padding.
    case trailingGarbage(offset: Int64, length: Int64)
    /// Decoding would produce more than `limit` bytes (the caller's decompression limit);
    /// `offset` is how far the compressed input had been read when it was found.
    case outputLimitExceeded(limit: Int64, offset: Int64)
    /// zlib itself failed (out of memory, version mismatch).
    case zlibFailure(code: Int32, message: String)
    /// libdeflate failed (a compressor could not be allocated: out of memory).
    case libdeflateFailure(message: String)
    /// Where a BGZF member was needed (to build a `.gzi` index), the bytes at `offset` are not
    /// one: another kind of gzip member (no `BC` subfield), zero padding or other bytes
    /// (SAM/BAM specification §4.1). `member` is the number the member there would have.
    case notBGZF(member: Int, offset: Int64)

    /// A stable name for the kind of fault, as the fixtures' manifest writes it:
    /// `empty-input`, `bad-magic`, `bad-header`, `header-crc`, `truncated`, `invalid-deflate`,
    /// `crc-mismatch`, `length-mismatch`, `trailing-garbage`, `output-limit`, `zlib`, `libdeflate`,
    /// `not-bgzf`.
    public var kind: String {
        switch self {
        case .emptyInput: "empty-input"
        case .notGzip: "bad-magic"
        case .unsupportedMethod, .reservedFlags: "bad-header"
        case .headerCRCMismatch: "header-crc"
        case .truncated: "truncated"
        case .invalidDeflateData: "invalid-deflate"
        case .crcMismatch: "crc-mismatch"
        case .lengthMismatch: "length-mismatch"
        case .trailingGarbage: "trailing-garbage"
        case .outputLimitExceeded: "output-limit"
        case .zlibFailure: "zlib"
        case .libdeflateFailure: "libdeflate"
        case .notBGZF: "not-bgzf"
        }
    }

    /// The byte offset in the compressed input where the fault was found, when it has one.
    public var offset: Int64? {
        switch self {
        case .emptyInput, .zlibFailure, .libdeflateFailure: nil
        case .outputLimitExceeded(_, let offset): offset
        case .notGzip(let offset), .trailingGarbage(let offset, _), .notBGZF(_, let offset): offset
        case .unsupportedMethod(_, _, let offset), .reservedFlags(_, _, let offset): offset
        case .headerCRCMismatch(_, _, _, let offset), .crcMismatch(_, _, _, let offset),
             .lengthMismatch(_, _, _, let offset): offset
        case .truncated(_, _, let offset), .invalidDeflateData(_, _, let offset): offset
        }
    }

    /// The message a user reads: what, in which member, where, and the values that differ.
    public var description: String {
        switch self {
        case .emptyInput:
            return "empty input: no gzip member"
        case .notGzip(let offset):
            return "not in gzip format (bad magic at byte \(offset))"
        case .unsupportedMethod(let method, let member, let offset):
            return "unsupported compression method \(method) in \(memberText(member)) at byte \(offset)"
        case .reservedFlags(let flags, let member, let offset):
            return "bad header in \(memberText(member)): reserved flag bits set (FLG \(hex(flags, 2))) at byte \(offset)"
        case .headerCRCMismatch(let member, let stored, let computed, let offset):
            return "header CRC mismatch in \(memberText(member)) at byte \(offset) (stored \(hex(stored, 4)), computed \(hex(computed, 4)))"
        case .truncated(let member, let part, let offset):
            return "unexpected end of input in the \(part.rawValue) of \(memberText(member)) at byte \(offset)"
        case .invalidDeflateData(let member, let message, let offset):
            return "invalid deflate data in \(memberText(member)) at byte \(offset): \(message)"
        case .crcMismatch(let member, let stored, let computed, let offset):
            return "CRC-32 mismatch in \(memberText(member)) at byte \(offset) (stored \(hex(stored, 8)), computed \(hex(computed, 8)))"
        case .lengthMismatch(let member, let stored, let computed, let offset):
            return "length mismatch in \(memberText(member)) at byte \(offset) (ISIZE \(stored), decoded \(computed) mod 2^32)"
        case .trailingGarbage(let offset, let length):
            return "trailing garbage: \(length) bytes at byte \(offset) after the last member"
        case .outputLimitExceeded(let limit, let offset):
            return "output exceeds the limit of \(limit) bytes (at byte \(offset) of the input)"
        case .zlibFailure(let code, let message):
            return "zlib failure \(code): \(message)"
        case .libdeflateFailure(let message):
            return "libdeflate failure: \(message)"
        case .notBGZF(let member, let offset):
            return "not BGZF: the bytes at byte \(offset) (\(memberText(member))) are not a BGZF member with a BC subfield"
        }
    }
}

/// "member 2", or "a member" when the number is not known (0).
private func memberText(_ member: Int) -> String {
    member > 0 ? "member \(member)" : "a member"
}

private func hex<T: BinaryInteger>(_ value: T, _ width: Int) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

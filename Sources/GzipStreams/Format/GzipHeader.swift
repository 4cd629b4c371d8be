// FoundationEssentials gives Data and Date without loading ICU, which keeps the process small.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ByteStreams

/// The header of one gzip member (RFC 1952 §2.3.1).
///
/// Text fields are bytes: RFC 1952 says FNAME and FCOMMENT are ISO 8859-1 (Latin-1) and end in
/// a zero byte, which is not stored here. ``fileNameString`` and ``commentString`` decode them.
public struct GzipHeader: Equatable, Sendable {
    /// FTEXT: the data is probably text. Informational only.
    public var isText = false
    /// MTIME: the modification time of the original file in seconds since 1970-01-01 UTC, or
    /// 0 when none is stored.
    public var modificationTime: UInt32 = 0
    /// XFL: 2 for maximum compression, 4 for the fastest (RFC 1952 §2.3.1). When writing, `nil`
    /// derives it from the compression level as GNU gzip does; a parsed header always has it.
    public var extraFlags: UInt8?
    /// OS: the file system the member was made on; 3 is Unix, 255 unknown.
    public var operatingSystem: UInt8 = GzipFormat.operatingSystemUnix
    /// FEXTRA: the extra field's bytes (XLEN of them, at most 65535), without the XLEN prefix.
    public var extraField: [UInt8]?
    /// FNAME: the original file name, without the terminating zero byte.
    public var fileName: [UInt8]?
    /// FCOMMENT: the comment, without the terminating zero byte.
    public var comment: [UInt8]?
    /// FHCRC: the header carries a CRC-16 (the low 16 bits of its CRC-32). When reading, it
    /// was present and checked.
    public var hasHeaderCRC = false

    /// A header with these fields; by default no name, no comment, MTIME 0, OS 3 (Unix).
    public init(isText: Bool = false, modificationTime: UInt32 = 0, extraFlags: UInt8? = nil,
                operatingSystem: UInt8 = 3, extraField: [UInt8]? = nil, fileName: [UInt8]? = nil,
                comment: [UInt8]? = nil, hasHeaderCRC: Bool = false) {
        self.isText = isText
        self.modificationTime = modificationTime
        self.extraFlags = extraFlags
        self.operatingSystem = operatingSystem
        self.extraField = extraField
        self.fileName = fileName
        self.comment = comment
        self.hasHeaderCRC = hasHeaderCRC
    }

    /// FNAME decoded as ISO 8859-1, or `nil`. Setting it stores ISO 8859-1 when every character
    /// fits in it, else UTF-8 (as gzip stores a name from a UTF-8 file system).
    public var fileNameString: String? {
        get { fileName.map { String(decoding: $0, latin1: ()) } }
        set { fileName = newValue.map(Array.init(latin1OrUTF8:)) }
    }

    /// FCOMMENT decoded as ISO 8859-1, or `nil`. Setting it encodes as ``fileNameString`` does.
    public var commentString: String? {
        get { comment.map { String(decoding: $0, latin1: ()) } }
        set { comment = newValue.map(Array.init(latin1OrUTF8:)) }
    }

    /// MTIME as a date, or `nil` when it is 0.
    public var modificationDate: Date? {
        modificationTime == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(modificationTime))
    }

    // Spelled once in GzipFormat; kept here for the code (and tests) that name them on the header.
    static let flagText = GzipFormat.flagText
    static let reservedFlags = GzipFormat.reservedFlags

    /// Throws unless ``encoded(level:)`` can write these fields: FEXTRA of at most 65535 bytes
    /// (XLEN is 16 bits), no zero byte in FNAME or FCOMMENT (RFC 1952 §2.3.1 ends them with one).
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` naming the
    ///   field (`header.extraField`, `header.fileName`, `header.comment`).
    func validate(operation: String) throws(ByteStreamError) {
        if let extraField {
            try requireArgument(extraField.count <= 0xffff, "header.extraField",
                                "must hold at most 65535 bytes, not \(extraField.count)", operation: operation)
        }
        for (name, field) in [("header.fileName", fileName), ("header.comment", comment)] {
            if let zero = field?.firstIndex(of: 0) {
                try requireArgument(false, name, "must not contain a zero byte (RFC 1952 §2.3.1 ends the field with one), "
                                    + "found at index \(zero)", operation: operation)
            }
        }
    }

    /// The header's bytes as RFC 1952 §2.3 lays them out, for a member deflated at `level`.
    /// - Precondition: ``validate(operation:)`` does not throw.
    func encoded(level: Int) -> [UInt8] {
        GzipFormat.encodeHeader(self, level: level)
    }
}

extension String {
    /// Decodes ISO 8859-1: each byte is the Unicode scalar of the same value.
    init(decoding bytes: [UInt8], latin1: Void) {
        self = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

extension Array where Element == UInt8 {
    /// ISO 8859-1 when every character fits in it, else UTF-8 (a name gzip would store as is).
    init(latin1OrUTF8 string: String) {
        let scalars = string.unicodeScalars
        if scalars.allSatisfy({ $0.value <= 0xff }) {
            self = scalars.map { UInt8($0.value) }
        } else {
            self = Array(string.utf8)
        }
    }
}

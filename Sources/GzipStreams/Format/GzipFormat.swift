/// RFC 1952's framing of a gzip member: its constants, the little-endian integers it is made
/// of, the fixed-header test, the header's bytes and the trailer. The one place that spells the
/// format's bytes: every reader and writer (``GzipInputStream``, ``GzipOutputStream``, BGZF in
/// both directions, the in-memory helpers, the index code) asks it, so a rule is written once.
/// BGZF's layer on top (the `BC` subfield, the end-of-file member) is in BGZFFormat.swift, its
/// header parser in GzipHeaderParser.swift.
///
/// A member is a header (10 fixed bytes: ID1 ID2 CM FLG MTIME XFL OS, then the optional
/// FEXTRA, FNAME, FCOMMENT and FHCRC fields), deflate data (RFC 1951) and an 8-byte trailer
/// (CRC-32, ISIZE), all integers little-endian (RFC 1952 §2.1, §2.3).
enum GzipFormat {
    // MARK: Constants (RFC 1952 §2.3.1)

    /// ID1 ID2: the two bytes every member starts with.
    static let magic: (UInt8, UInt8) = (0x1f, 0x8b)
    /// CM 8: deflate, the only method defined.
    static let methodDeflate: UInt8 = 8
    /// FLG bit 0, FTEXT: the data is probably text.
    static let flagText: UInt8 = 0x01
    /// FLG bit 1, FHCRC: a CRC-16 of the header follows its other fields.
    static let flagHeaderCRC: UInt8 = 0x02
    /// FLG bit 2, FEXTRA: XLEN, then XLEN bytes of subfields.
    static let flagExtra: UInt8 = 0x04
    /// FLG bit 3, FNAME: a zero-terminated file name.
    static let flagName: UInt8 = 0x08
    /// FLG bit 4, FCOMMENT: a zero-terminated comment.
    static let flagComment: UInt8 = 0x10
    /// FLG bits 5 to 7: reserved, must be zero (RFC 1952 §2.3.1.2).
    static let reservedFlags: UInt8 = 0xe0
    /// OS 3: Unix, what gzstream writes by default.
    static let operatingSystemUnix: UInt8 = 3
    /// OS 255: unknown, what BGZF writers put.
    static let operatingSystemUnknown: UInt8 = 0xff
    /// The fixed part of a header, ID1 to OS: 10 bytes.
    static let fixedHeaderSize = 10

    // MARK: Little-endian integers (RFC 1952 §2.1)

    /// The 16-bit little-endian integer at `offset` in `bytes`, which holds at least 2 bytes there.
    @inline(__always)
    static func loadUInt16(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// The 32-bit little-endian integer at `offset` in `bytes`, which holds at least 4 bytes there.
    @inline(__always)
    static func loadUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(loadUInt16(bytes, at: offset)) | UInt32(loadUInt16(bytes, at: offset + 2)) << 16
    }

    /// The 64-bit little-endian integer at `offset` in `bytes`, which holds at least 8 bytes there.
    @inline(__always)
    static func loadUInt64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(loadUInt32(bytes, at: offset)) | UInt64(loadUInt32(bytes, at: offset + 4)) << 32
    }

    /// Writes `value` little-endian at `pointer` (`T`'s size in bytes).
    @inline(__always)
    static func store<T: FixedWidthInteger>(littleEndian value: T, at pointer: UnsafeMutablePointer<UInt8>) {
        for index in 0..<MemoryLayout<T>.size {
            pointer[index] = UInt8(truncatingIfNeeded: value >> (8 * index))
        }
    }

    /// Appends `value` little-endian to `bytes` (`T`'s size in bytes).
    static func append<T: FixedWidthInteger>(littleEndian value: T, to bytes: inout [UInt8]) {
        for index in 0..<MemoryLayout<T>.size {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }

    /// The magic of the other formats GNU gzip decodes (its gzip.h): compress(1)'s LZW, pack(1),
    /// SCO's LZH and gzip 0.5's.
    static func otherFormat(_ first: UInt8, _ second: UInt8) -> GzipInputStream.OtherCompressionFormat? {
        guard first == magic.0 else { return nil }
        switch second {
        case 0x9d: return .lzw
        case 0x1e: return .pack
        case 0xa0: return .lzh
        case 0x9e: return .oldGzip
        default: return nil
        }
    }

    // MARK: Is this a member?

    /// Whether `first` and `second` are ID1 ID2, the start of a member.
    @inline(__always)
    static func isMagic(_ first: UInt8, _ second: UInt8) -> Bool {
        first == magic.0 && second == magic.1
    }

    /// Whether `bytes` start with a member's fixed header (RFC 1952 §2.3.1): at least 10 bytes,
    /// ID1 ID2, CM 8 and no reserved FLG bit; MTIME, XFL and OS may hold anything.
    static func startsWithMember(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= fixedHeaderSize && isMagic(bytes[0], bytes[1]) && bytes[2] == methodDeflate
            && bytes[3] & reservedFlags == 0
    }

    // MARK: Writing a header (RFC 1952 §2.3)

    /// XFL for a member deflated at `level`, as GNU gzip sets it: 2 at level 9 (slowest) and
    /// above (as pigz at 11), 4 at level 1 (fastest), else 0.
    static func extraFlags(level: Int) -> UInt8 {
        level >= 9 ? 2 : level == 1 ? 4 : 0
    }

    /// `header`'s bytes as RFC 1952 §2.3 lays them out, for a member deflated at `level` (which
    /// sets XFL when `header.extraFlags` is `nil`); with FHCRC, the low 16 bits of the CRC-32 of
    /// the bytes before it.
    /// - Precondition: FEXTRA holds at most 65535 bytes and FNAME and FCOMMENT no zero byte
    ///   (``GzipHeader/validate(operation:)`` checks both).
    static func encodeHeader(_ header: GzipHeader, level: Int) -> [UInt8] {
        var flags: UInt8 = 0
        if header.isText { flags |= flagText }
        if header.hasHeaderCRC { flags |= flagHeaderCRC }
        if header.extraField != nil { flags |= flagExtra }
        if header.fileName != nil { flags |= flagName }
        if header.comment != nil { flags |= flagComment }
        var bytes: [UInt8] = [magic.0, magic.1, methodDeflate, flags]
        append(littleEndian: header.modificationTime, to: &bytes)
        bytes += [header.extraFlags ?? extraFlags(level: level), header.operatingSystem]
        if let extraField = header.extraField {
            precondition(extraField.count <= 0xffff, "FEXTRA holds at most 65535 bytes")
            append(littleEndian: UInt16(extraField.count), to: &bytes)
            bytes += extraField
        }
        for field in [header.fileName, header.comment].compactMap({ $0 }) {
            precondition(!field.contains(0), "FNAME and FCOMMENT must not contain a zero byte")
            bytes += field + [0]
        }
        if header.hasHeaderCRC {
            let crc = bytes.withUnsafeBytes { crc32(0, $0) }
            append(littleEndian: UInt16(truncatingIfNeeded: crc), to: &bytes)
        }
        return bytes
    }
}

/// A member's trailer (RFC 1952 §2.3.1): the CRC-32 of the plain data and ISIZE, its size
/// modulo 2^32, each 4 bytes little-endian.
struct GzipTrailer: Equatable {
    /// The trailer's size: 8 bytes.
    static let size = 8

    /// CRC-32 of the member's plain bytes.
    var crc32: UInt32
    /// ISIZE: the member's plain size in bytes modulo 2^32.
    var isize: UInt32

    init(crc32: UInt32, isize: UInt32) {
        self.crc32 = crc32
        self.isize = isize
    }

    /// The trailer for `plainSize` bytes (counted exactly, stored modulo 2^32) whose CRC-32 is `crc32`.
    init(crc32: UInt32, plainSize: Int64) {
        self.init(crc32: crc32, isize: UInt32(truncatingIfNeeded: plainSize))
    }

    /// The trailer's 8 bytes read as one little-endian integer: CRC-32 in the low half.
    init(littleEndian value: UInt64) {
        self.init(crc32: UInt32(truncatingIfNeeded: value), isize: UInt32(truncatingIfNeeded: value >> 32))
    }

    /// The trailer in the 8 bytes at `offset` in `bytes`.
    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        self.init(crc32: GzipFormat.loadUInt32(bytes, at: offset), isize: GzipFormat.loadUInt32(bytes, at: offset + 4))
    }

    /// The trailer of a whole member: its last 8 bytes (the member holds at least them).
    init(ofMember member: UnsafeRawBufferPointer) {
        self.init(member, at: member.count - Self.size)
    }

    /// ISIZE of a whole member, from its last 4 bytes (the member holds at least its trailer).
    static func isize(ofMember member: UnsafeRawBufferPointer) -> UInt32 {
        GzipFormat.loadUInt32(member, at: member.count - 4)
    }

    /// The trailer's 8 bytes.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.size)
        GzipFormat.append(littleEndian: crc32, to: &bytes)
        GzipFormat.append(littleEndian: isize, to: &bytes)
        return bytes
    }

    /// Writes the trailer's 8 bytes at `pointer`.
    func store(at pointer: UnsafeMutablePointer<UInt8>) {
        GzipFormat.store(littleEndian: crc32, at: pointer)
        GzipFormat.store(littleEndian: isize, at: pointer + 4)
    }

    /// Whether the trailer matches plain data of `plainSize` bytes whose CRC-32 is `crc32`.
    func matches(crc32 computed: UInt32, plainSize: Int64) -> Bool {
        self == GzipTrailer(crc32: computed, plainSize: plainSize)
    }

    /// Checks the trailer against what was decoded (RFC 1952 §2.3.1): CRC-32 first, then ISIZE.
    /// - Parameters:
    ///   - computed: The CRC-32 of the decoded bytes.
    ///   - plainSize: The number of decoded bytes, exact (compared modulo 2^32).
    ///   - member: The member's number, for the error.
    ///   - offset: The trailer's offset in the compressed input, in bytes.
    /// - Throws: ``GzipError/crcMismatch(member:stored:computed:offset:)`` at `offset`, or
    ///   ``GzipError/lengthMismatch(member:stored:computed:offset:)`` at `offset + 4`.
    func check(crc32 computed: UInt32, plainSize: Int64, member: Int, offset: Int64) throws(GzipError) {
        guard crc32 == computed else {
            throw .crcMismatch(member: member, stored: crc32, computed: computed, offset: offset)
        }
        let computedSize = UInt32(truncatingIfNeeded: plainSize)
        guard isize == computedSize else {
            throw .lengthMismatch(member: member, stored: isize, computed: computedSize, offset: offset + 4)
        }
    }
}

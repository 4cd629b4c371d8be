/// BGZF's layer on RFC 1952 (SAM/BAM specification §4.1): every member's header has FEXTRA
/// alone, with a `BC` subfield (SI1 SI2 `42 43`, SLEN 2) whose BSIZE is the member's whole size
/// minus 1, so members are found without inflating; a file ends with a 28-byte empty member.
/// The one place that knows those bytes, beside ``GzipFormat``.
enum BGZFFormat {
    /// SI1 SI2 of the `BC` subfield.
    static let subfieldID: (UInt8, UInt8) = (0x42, 0x43)
    /// SLEN of the `BC` subfield: 2, BSIZE's size.
    static let subfieldLength: UInt16 = 2
    /// The header a BGZF writer puts: the fixed 10 bytes, XLEN 6, then the `BC` subfield
    /// alone: 18 bytes.
    static let headerSize = 18
    /// The bytes ``startsWithMember(_:)`` looks at: up to BSIZE, 16.
    static let signatureLength = 16
    /// The largest member, in bytes: BSIZE is 16 bits, so 65536.
    static let maximumMemberSize = 0x10000

    /// The header a BGZF writer puts in front of a member of `memberSize` bytes (header and
    /// trailer included, `26...65536`), as htslib writes it: MTIME 0, XFL 0, OS 255, XLEN 6,
    /// the `BC` subfield with BSIZE = `memberSize - 1`. Writes ``headerSize`` bytes at `pointer`.
    static func storeHeader(memberSize: Int, at pointer: UnsafeMutablePointer<UInt8>) {
        precondition(memberSize > headerSize + GzipTrailer.size && memberSize <= maximumMemberSize,
                     "a BGZF member holds 27 to 65536 bytes")
        // Stored byte by byte: once per member on every worker, so no array is made for it.
        pointer[0] = GzipFormat.magic.0
        pointer[1] = GzipFormat.magic.1
        pointer[2] = GzipFormat.methodDeflate
        pointer[3] = GzipFormat.flagExtra
        (pointer + 4).update(repeating: 0, count: 5)  // MTIME 0, XFL 0
        pointer[9] = GzipFormat.operatingSystemUnknown
        GzipFormat.store(littleEndian: UInt16(4 + subfieldLength), at: pointer + 10)
        pointer[12] = subfieldID.0
        pointer[13] = subfieldID.1
        GzipFormat.store(littleEndian: subfieldLength, at: pointer + 14)
        GzipFormat.store(littleEndian: UInt16(memberSize - 1), at: pointer + 16)
    }

    /// ``storeHeader(memberSize:at:)``'s bytes as an array.
    static func header(memberSize: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: headerSize) { buffer, count in
            storeHeader(memberSize: memberSize, at: buffer.baseAddress!)
            count = headerSize
        }
    }

    /// The end-of-file marker every BGZF file ends with (SAM/BAM specification §4.1.2): an
    /// empty member of 28 bytes, its deflate data one empty fixed block (`03 00`).
    static let endOfFileMember: [UInt8] = {
        let size = headerSize + 2 + GzipTrailer.size
        return header(memberSize: size) + [0x03, 0x00] + GzipTrailer(crc32: 0, isize: 0).encoded
    }()

    /// Whether `bytes` begin a BGZF member as every BGZF writer (htslib, bgzip, gzstream) puts
    /// it: `1f 8b 08 04` (FEXTRA), MTIME, XFL, OS, XLEN ≥ 6, then the `BC` subfield with SLEN 2
    /// first. Needs ``signatureLength`` bytes.
    static func startsWithMember(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= signatureLength && GzipFormat.isMagic(bytes[0], bytes[1])
            && bytes[2] == GzipFormat.methodDeflate && bytes[3] == GzipFormat.flagExtra
            && GzipFormat.loadUInt16(bytes, at: 10) >= 4 + subfieldLength
            && bytes[12] == subfieldID.0 && bytes[13] == subfieldID.1
            && GzipFormat.loadUInt16(bytes, at: 14) == subfieldLength
    }
}

/// Where a BGZF member's parts lie, read from its header alone (SAM/BAM specification §4.1):
/// the `BC` extra subfield gives the member's whole size, so members are found without inflating.
struct BGZFFrame: Equatable {
    /// The member's size in bytes, header and trailer included: BSIZE + 1.
    var size: Int
    /// The header's size in bytes: 12 + XLEN; the deflate data starts there.
    var headerSize: Int

    /// The largest member, in bytes: BSIZE is 16 bits, so 65536; a header alone can ask for
    /// 12 + 65535 bytes before it is known not to fit.
    static let maximumSize = 12 + 65535

    /// What the bytes at the start of a member say.
    enum Parse: Equatable {
        /// A BGZF member header.
        case member(BGZFFrame)
        /// At least this many bytes are needed to tell.
        case needMore(Int)
        /// Not a BGZF member header: not `1f 8b 08`, FLG other than FEXTRA alone, extra
        /// subfields that do not fill XLEN exactly, no `BC` subfield with SLEN 2, or a BSIZE too
        /// small for the header and trailer.
        case notBGZF
    }

    /// Parses the header at the start of `bytes` (which may hold less than a whole header).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Parse {
        let fixedCount = 12
        guard bytes.count >= fixedCount else {
            // Decide as early as the bytes allow, so that garbage is not read further than needed.
            let fixed: [UInt8] = [GzipFormat.magic.0, GzipFormat.magic.1, GzipFormat.methodDeflate, GzipFormat.flagExtra]
            for index in 0..<min(bytes.count, 4) where bytes[index] != fixed[index] { return .notBGZF }
            return .needMore(fixedCount)
        }
        guard GzipFormat.isMagic(bytes[0], bytes[1]), bytes[2] == GzipFormat.methodDeflate,
              bytes[3] == GzipFormat.flagExtra else { return .notBGZF }
        let headerSize = fixedCount + Int(GzipFormat.loadUInt16(bytes, at: 10))
        guard bytes.count >= headerSize else { return .needMore(headerSize) }
        var position = fixedCount
        var blockSize: Int?
        while position + 4 <= headerSize {
            let length = Int(GzipFormat.loadUInt16(bytes, at: position + 2))
            guard position + 4 + length <= headerSize else { return .notBGZF }
            if blockSize == nil, bytes[position] == BGZFFormat.subfieldID.0, bytes[position + 1] == BGZFFormat.subfieldID.1,
               length == Int(BGZFFormat.subfieldLength) {
                blockSize = Int(GzipFormat.loadUInt16(bytes, at: position + 4)) + 1
            }
            position += 4 + length
        }
        guard position == headerSize, let size = blockSize, size >= headerSize + GzipTrailer.size else { return .notBGZF }
        return .member(BGZFFrame(size: size, headerSize: headerSize))
    }

    /// The member's header fields, from its first `headerSize` bytes (a header ``parse(_:)``
    /// accepted: FEXTRA alone).
    static func header(of member: UnsafeRawBufferPointer, headerSize: Int) -> GzipHeader {
        let prefix = UnsafeRawBufferPointer(rebasing: member[0..<headerSize])
        guard let parsed = GzipHeaderParser.parse(prefix) else {
            preconditionFailure("a BGZF frame's header parses")
        }
        return parsed.header
    }
}

/// Parses one member's header (RFC 1952 §2.3.1) a byte at a time, so that a reader can feed it
/// from whatever its buffer holds and stop anywhere: every field (FTEXT, MTIME, XFL, OS,
/// FEXTRA, FNAME, FCOMMENT) is kept, and FHCRC is checked against the bytes before it. A reader
/// whose input ends first reports the header truncated at its own offset; the parser only says
/// whether it is done.
///
/// FNAME and FCOMMENT keep at most `maximumFieldLength` bytes each: the rest is read (and
/// covered by FHCRC) but not kept, and ``isFieldCut`` says so.
struct GzipHeaderParser {
    /// Where in the header the next byte goes.
    private enum Phase { case fixed, extraLength, extra, name, comment, headerCRC, done }

    /// The member's number (1 for the first), for errors.
    let member: Int
    /// The offset in the compressed input of the member's first byte (ID1).
    let offset: Int64
    let maximumFieldLength: Int
    /// The header bytes consumed so far; once done, the header's size.
    private(set) var count = 0
    /// The fields read so far; whole once ``consume(_:)`` returned `true`.
    private(set) var header = GzipHeader()
    /// Whether FNAME or FCOMMENT was longer than `maximumFieldLength` and was cut.
    private(set) var isFieldCut = false

    private var phase = Phase.fixed
    private var flags: UInt8 = 0
    /// The CRC-32 of the header bytes so far (FHCRC is its low 16 bits).
    private var crc: UInt32 = 0
    /// The bytes of the current part (XLEN, FEXTRA, FHCRC) read so far.
    private var partCount = 0
    /// XLEN, or the stored FHCRC, as far as read.
    private var value: UInt32 = 0

    /// - Parameters:
    ///   - member: The member's number, 1 for the first.
    ///   - offset: The offset in bytes of the member's first byte in the compressed input.
    ///   - maximumFieldLength: The most bytes of FNAME and of FCOMMENT to keep, `>= 0`.
    init(member: Int, offset: Int64, maximumFieldLength: Int) {
        self.member = member
        self.offset = offset
        self.maximumFieldLength = maximumFieldLength
    }

    /// Whether the whole header has been read.
    var isDone: Bool { phase == .done }

    /// Takes the header's next byte.
    /// - Returns: `true` when that byte ended the header.
    /// - Throws: ``GzipError/notGzip(offset:)`` when the first two bytes are not ID1 ID2;
    ///   ``GzipError/unsupportedMethod(_:member:offset:)`` for a CM other than 8;
    ///   ``GzipError/reservedFlags(_:member:offset:)`` for a reserved FLG bit;
    ///   ``GzipError/headerCRCMismatch(member:stored:computed:offset:)`` when FHCRC differs,
    ///   at the offset of FHCRC's first byte.
    /// - Precondition: The header is not done yet.
    mutating func consume(_ byte: UInt8) throws(GzipError) -> Bool {
        precondition(phase != .done, "the header is complete")
        let index = count
        count += 1
        let crcBefore = crc
        crc = withUnsafeBytes(of: byte) { crc32(crcBefore, $0) }
        switch phase {
        case .fixed:
            try takeFixed(byte, at: index)
        case .extraLength:
            value |= UInt32(byte) << (8 * UInt32(partCount))
            partCount += 1
            if partCount == 2 {
                header.extraField = []
                header.extraField!.reserveCapacity(Int(value))
                partCount = 0
                if value == 0 { advance() } else { phase = .extra }
            }
        case .extra:
            header.extraField!.append(byte)
            if header.extraField!.count == Int(value) { advance() }
        case .name, .comment:
            if byte == 0 {
                advance()
            } else if phase == .name {
                if !Self.keep(byte, in: &header.fileName, limit: maximumFieldLength) { isFieldCut = true }
            } else {
                if !Self.keep(byte, in: &header.comment, limit: maximumFieldLength) { isFieldCut = true }
            }
        case .headerCRC:
            value |= UInt32(byte) << (8 * UInt32(partCount))
            partCount += 1
            if partCount == 2 {
                // The CRC covers the bytes before FHCRC: the CRC-32 two bytes ago.
                let stored = UInt16(value)
                let computed = UInt16(truncatingIfNeeded: headerCRCBeforeField)
                guard stored == computed else {
                    throw .headerCRCMismatch(member: member, stored: stored, computed: computed,
                                             offset: offset + Int64(count - 2))
                }
                header.hasHeaderCRC = true
                phase = .done
            }
        case .done:
            break
        }
        return phase == .done
    }

    /// The header CRC as it was when FHCRC began.
    private var headerCRCBeforeField: UInt32 = 0

    private mutating func takeFixed(_ byte: UInt8, at index: Int) throws(GzipError) {
        switch index {
        case 0:
            guard byte == GzipFormat.magic.0 else { throw .notGzip(offset: offset) }
        case 1:
            guard byte == GzipFormat.magic.1 else { throw .notGzip(offset: offset) }
        case 2:
            guard byte == GzipFormat.methodDeflate else {
                throw .unsupportedMethod(byte, member: member, offset: offset + 2)
            }
        case 3:
            guard byte & GzipFormat.reservedFlags == 0 else {
                throw .reservedFlags(byte, member: member, offset: offset + 3)
            }
            flags = byte
            header.isText = byte & GzipFormat.flagText != 0
        case 4...7:
            header.modificationTime |= UInt32(byte) << (8 * UInt32(index - 4))
        case 8:
            header.extraFlags = byte
        default:
            header.operatingSystem = byte
            advance()
        }
    }

    /// Keeps a byte of FNAME or FCOMMENT, up to `limit` of them; `false` when the field is full.
    private static func keep(_ byte: UInt8, in field: inout [UInt8]?, limit: Int) -> Bool {
        guard field!.count < limit else { return false }
        field!.append(byte)
        return true
    }

    /// Moves to the next optional field FLG announces, in RFC 1952's order, or to the end.
    private mutating func advance() {
        let order: [(Phase, UInt8)] = [(.extraLength, GzipFormat.flagExtra), (.name, GzipFormat.flagName),
                                       (.comment, GzipFormat.flagComment), (.headerCRC, GzipFormat.flagHeaderCRC)]
        let finished = phase == .extra ? .extraLength : phase
        let current = order.firstIndex { $0.0 == finished } ?? -1
        phase = .done
        for (next, flag) in order[(current + 1)...] where flags & flag != 0 {
            phase = next
            break
        }
        partCount = 0
        value = 0
        // An empty FNAME or FCOMMENT is still present.
        if phase == .name { header.fileName = [] }
        if phase == .comment { header.comment = [] }
        if phase == .headerCRC { headerCRCBeforeField = crc }
    }

    /// The header at the start of `bytes`, if they hold a whole valid one.
    /// - Returns: The header and its size in bytes; `nil` when the bytes end first or are no
    ///   valid header.
    static func parse(_ bytes: UnsafeRawBufferPointer,
                      maximumFieldLength: Int = GzipInputStream.maximumHeaderFieldLength) -> (header: GzipHeader, size: Int)? {
        var parser = GzipHeaderParser(member: 1, offset: 0, maximumFieldLength: maximumFieldLength)
        for byte in bytes {
            guard let done = try? parser.consume(byte) else { return nil }
            if done { return (parser.header, parser.count) }
        }
        return nil
    }
}

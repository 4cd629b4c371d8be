/// The fixed numbers and the header fields' encodings of tar (POSIX.1-1988 §10.1.1 ustar,
/// POSIX.1-2001 pax, GNU tar's base-256 numbers): the one place that knows a header's layout.
public enum TarFormat {
    /// Every header and every run of data is a whole number of 512-byte blocks.
    public static let blockSize = 512
    /// An archive ends with two blocks of zero bytes (readers stop at the first).
    public static let endBlockCount = 2

    /// Byte ranges of a header block's fields (POSIX.1-1988 §10.1.1, Table 10-1).
    public enum Field {
        public static let name = 0..<100
        public static let mode = 100..<108
        public static let userID = 108..<116
        public static let groupID = 116..<124
        public static let size = 124..<136
        public static let modificationTime = 136..<148
        public static let checksum = 148..<156
        public static let typeflag = 156
        public static let linkName = 157..<257
        public static let magic = 257..<263
        public static let version = 263..<265
        public static let userName = 265..<297
        public static let groupName = 297..<329
        public static let deviceMajor = 329..<337
        public static let deviceMinor = 337..<345
        public static let prefix = 345..<500
    }

    /// `ustar\0` with version `00`: a POSIX archive.
    public static let ustarMagic: [UInt8] = Array("ustar\0".utf8)
    public static let ustarVersion: [UInt8] = Array("00".utf8)
    /// `ustar ` with version ` \0`: GNU tar's old format (what `tar` writes by default).
    public static let gnuMagic: [UInt8] = Array("ustar ".utf8)
    public static let gnuVersion: [UInt8] = [UInt8(ascii: " "), 0]

    /// `size` rounded up to a whole number of blocks.
    public static func paddedSize(_ size: Int) -> Int {
        (size + blockSize - 1) / blockSize * blockSize
    }

    /// The header's checksum as ustar defines it: the sum of its 512 bytes as unsigned bytes,
    /// with the 8 checksum bytes counted as spaces. Historical writers summed signed bytes;
    /// ``signedChecksum(of:)`` gives that sum, which readers also accept (as GNU tar does).
    /// - Precondition: `header.count == 512`.
    public static func checksum(of header: UnsafeRawBufferPointer) -> Int {
        precondition(header.count == blockSize)
        // All 512 bytes, then the checksum field's taken out and counted as spaces: one loop
        // without a branch, which the compiler vectorises (a member index scans every header).
        var sum = 0
        for byte in header { sum += Int(byte) }
        for index in Field.checksum { sum -= Int(header[index]) }
        return sum + 32 * Field.checksum.count
    }

    /// The historical signed-byte sum of a header (see ``checksum(of:)``).
    public static func signedChecksum(of header: UnsafeRawBufferPointer) -> Int {
        precondition(header.count == blockSize)
        var sum = 0
        for index in 0..<blockSize {
            sum += Field.checksum.contains(index) ? 32 : Int(Int8(bitPattern: header[index]))
        }
        return sum
    }

    /// Whether the block is all zero bytes: an end-of-archive block.
    public static func isZeroBlock(_ block: UnsafeRawBufferPointer) -> Bool {
        block.allSatisfy { $0 == 0 }
    }

    /// A numeric field's value: octal digits (leading spaces and zeros allowed, ended by a
    /// space or NUL), or GNU's base-256 form (the first byte's high bit set: the rest is a
    /// big-endian two's-complement number, the first byte's bit 6 its sign). An all-NUL or
    /// all-space field is 0, as tar writers leave unused fields.
    /// - Returns: The value, or `nil` when the field is neither form or does not fit `Int64`.
    public static func number(in field: UnsafeRawBufferPointer) -> Int64? {
        guard let first = field.first else { return nil }
        if first & 0x80 != 0 {
            // Base-256: the first byte's low 7 bits and the rest form a big-endian two's-
            // complement number, so 0x80… is positive and 0xff… negative.
            var value = Int64(first & 0x7f) - (first & 0x40 != 0 ? 128 : 0)
            for byte in field.dropFirst() {
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 256)
                guard !overflow else { return nil }
                value = shifted | Int64(byte)
            }
            return value
        }
        var index = field.startIndex
        while index < field.endIndex, field[index] == UInt8(ascii: " ") { index += 1 }
        var value: Int64 = 0
        while index < field.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(field[index]) {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 8)
            guard !overflow else { return nil }
            value = shifted + Int64(field[index] - UInt8(ascii: "0"))
            index += 1
        }
        // What follows the digits: only spaces and NULs.
        while index < field.endIndex {
            guard field[index] == 0 || field[index] == UInt8(ascii: " ") else { return nil }
            index += 1
        }
        return value
    }

    /// Writes `value` into a numeric field of `width` bytes: octal digits and a NUL when they
    /// fit (`width - 1` digits), else GNU base-256 when `allowBase256` (what GNU tar and
    /// libarchive read; a strict ustar reader does not, which is why PAX records are the
    /// portable way to store large values).
    /// - Returns: The field's bytes, or `nil` when the value fits neither form.
    public static func numberField(_ value: Int64, width: Int, allowBase256: Bool) -> [UInt8]? {
        if value >= 0 {
            var digits = Array(String(value, radix: 8).utf8)
            if digits.count <= width - 1 {
                digits.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - 1 - digits.count), at: 0)
                return digits + [0]
            }
        }
        guard allowBase256, width >= 2 else { return nil }
        // Big-endian two's complement in `width` bytes, then the first byte's high bit set;
        // bit 6 of the first byte is then the sign, so the value has width * 8 - 1 bits.
        var field = [UInt8](repeating: 0, count: width)
        var remaining = value
        for position in stride(from: width - 1, through: 0, by: -1) {
            field[position] = UInt8(truncatingIfNeeded: remaining)
            remaining >>= 8
        }
        guard remaining == (value < 0 ? -1 : 0), (field[0] & 0x40 != 0) == (value < 0) else { return nil }
        field[0] |= 0x80
        return field
    }

    /// A text field's bytes up to its first NUL (all of them when it has none).
    public static func text(in field: UnsafeRawBufferPointer) -> [UInt8] {
        Array(field.prefix { $0 != 0 })
    }
}

import Testing
import TarArchives

/// The header fields' codec: octal and GNU base-256 numbers, checksums, text fields.
@Suite struct TarFormatTests {
    @Test(arguments: [
        ("0000644\0", Int64(0o644)), ("     17 ", 0o17), ("00000000000\0", 0), ("\0\0\0\0\0\0\0\0", 0),
        ("        ", 0), ("77777777777\0", 0o77777777777), ("0000755 ", 0o755),
    ])
    func octalFields(text: String, value: Int64) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { TarFormat.number(in: $0) } == value)
    }

    @Test(arguments: ["12x4\0", "-12\0", "0 1\0", "9\0"])
    func malformedOctalFields(text: String) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { TarFormat.number(in: $0) } == nil)
    }

    /// GNU tar's base-256: `0x80` then big-endian bytes; `0xff…` negative (GNU tar's
    /// `to_base256`, and libarchive's reader).
    @Test func base256Fields() {
        let eightGiB: [UInt8] = [0x80, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0]
        #expect(eightGiB.withUnsafeBytes { TarFormat.number(in: $0) } == 1 << 33)
        let minusOne = [UInt8](repeating: 0xff, count: 12)
        #expect(minusOne.withUnsafeBytes { TarFormat.number(in: $0) } == -1)
        let tooWide: [UInt8] = [0x80, 0x7f] + [UInt8](repeating: 0xff, count: 10)
        #expect(tooWide.withUnsafeBytes { TarFormat.number(in: $0) } == nil)
    }

    @Test(arguments: [Int64(0), 1, 0o777, 0o77777777777, 1 << 33, Int64.max, -1, -(1 << 40), Int64.min])
    func numbersRoundTrip(value: Int64) throws {
        let field = try #require(TarFormat.numberField(value, width: 12, allowBase256: true))
        #expect(field.count == 12)
        #expect(field.withUnsafeBytes { TarFormat.number(in: $0) } == value)
        if value >= 0 && value <= 0o77777777777 {
            #expect(field.last == 0 && field.first != 0x80, "octal while it fits")
        }
    }

    @Test func numbersThatFitNoForm() {
        #expect(TarFormat.numberField(0o10000000, width: 8, allowBase256: false) == nil)
        #expect(TarFormat.numberField(-1, width: 8, allowBase256: false) == nil)
        #expect(TarFormat.numberField(1 << 62, width: 8, allowBase256: true) == nil)
        #expect(TarFormat.numberField((1 << 62) - 1, width: 8, allowBase256: true) != nil)
    }

    /// The header GNU tar 1.34 writes for `tar --format=ustar --owner=0 --group=0 --mtime=@0
    /// --mode=644 -cf t.tar a` (one empty file): it stores the checksum `011146` (4710), its
    /// unsigned byte sum with the checksum field counted as spaces.
    @Test func checksumOfAUstarHeader() {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at range: Range<Int>) {
            header.replaceSubrange(range.lowerBound..<range.lowerBound + text.utf8.count, with: text.utf8)
        }
        put("a", at: TarFormat.Field.name)
        put("0000644\0", at: TarFormat.Field.mode)
        put("0000000\0", at: TarFormat.Field.userID)
        put("0000000\0", at: TarFormat.Field.groupID)
        put("00000000000\0", at: TarFormat.Field.size)
        put("00000000000\0", at: TarFormat.Field.modificationTime)
        header[TarFormat.Field.typeflag] = UInt8(ascii: "0")
        put("ustar\0", at: TarFormat.Field.magic)
        put("00", at: TarFormat.Field.version)
        put("root", at: TarFormat.Field.userName)
        put("root", at: TarFormat.Field.groupName)
        put("0000000\0", at: TarFormat.Field.deviceMajor)
        put("0000000\0", at: TarFormat.Field.deviceMinor)
        let sum = header.withUnsafeBytes { TarFormat.checksum(of: $0) }
        let expected = 0o11146
        #expect(sum == expected)
        #expect(header.withUnsafeBytes { TarFormat.signedChecksum(of: $0) } == expected)
        header[0] = 0xe9
        #expect(header.withUnsafeBytes { TarFormat.checksum(of: $0) - TarFormat.signedChecksum(of: $0) } == 256)
    }

    @Test func kindsRoundTripTheirTypeflags() {
        for byte in UInt8(0)...UInt8(255) {
            let kind = TarEntry.Kind(typeflag: byte)
            #expect(kind.typeflag == (byte == 0 ? UInt8(ascii: "0") : byte))
        }
        #expect(TarFormat.paddedSize(0) == 0 && TarFormat.paddedSize(1) == 512 && TarFormat.paddedSize(1024) == 1024)
    }
}

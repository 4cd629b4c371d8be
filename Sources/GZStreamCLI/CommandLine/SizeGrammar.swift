// The one way every size option is written (--offset, --length, --max-output, --chunk-size,
// --span, -b, cache --max-size), so that no option reads `100` or `1.5G` differently from
// another: bytes by default; K, M, G, T, P or KiB, MiB, GiB, TiB, PiB (and numfmt's Ki, Mi, ...)
// for powers of 1024; KB, MB, GB, TB, PB for powers of 1000; B for bytes; any case. A decimal
// number may hold a fraction (`1.5G`), and what it comes to is rounded down to a whole byte, as
// util-linux reads sizes: `1.1K` is 1126 bytes. `0x` starts a hexadecimal count of bytes, with
// no unit and no fraction: `0x1B` would be 27 or 1 byte otherwise. A sign, a space or an
// exponent is not a size. Only `-b` (pigz's meaning) and `--span` (deprecated) count a decimal
// number alone in KiB.

/// What a size argument says, before its option's range is checked.
enum SizeReading: Equatable {
    /// A whole number of bytes; `alone` when it was a decimal number without a unit.
    case bytes(Int, alone: Bool)
    /// A size, but more than `Int.max` bytes.
    case tooLarge
    /// Not a size.
    case malformed
}

/// Each unit's lowercased spelling and its bytes.
private let sizeUnits: [String: Int] = {
    var units = ["b": 1]
    var binary = 1
    var decimal = 1
    for letter in ["k", "m", "g", "t", "p"] {
        binary <<= 10
        decimal *= 1000
        units[letter] = binary
        units[letter + "i"] = binary
        units[letter + "ib"] = binary
        units[letter + "b"] = decimal
    }
    return units
}()

/// Reads `text` as a size.
/// - Parameter numberAlone: The bytes a decimal number without a unit counts: 1, or 1024 for
///   `-b` and `--span`.
func readSize(_ text: String, numberAlone: Int = 1) -> SizeReading {
    let characters = Array(text.utf8)
    func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    if characters.count > 2, characters[0] == UInt8(ascii: "0"), characters[1] | 0x20 == UInt8(ascii: "x") {
        let digits = characters[2...]
        guard digits.allSatisfy({ isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20) }) else {
            return .malformed
        }
        // Only hexadecimal digits: no number means too many of them.
        guard let count = Int(String(decoding: digits, as: UTF8.self), radix: 16) else { return .tooLarge }
        return .bytes(count, alone: false)
    }
    let numberEnd = characters.firstIndex { !isDigit($0) && $0 != UInt8(ascii: ".") } ?? characters.endIndex
    let parts = characters[..<numberEnd].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    let unit = String(decoding: characters[numberEnd...], as: UTF8.self).lowercased()
    guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty }),
          let multiplier = unit.isEmpty ? numberAlone : sizeUnits[unit]
    else { return .malformed }
    // Only decimal digits: no number means too many of them.
    guard let whole = Int(String(decoding: parts[0], as: UTF8.self)) else { return .tooLarge }
    // The fraction's bytes, rounded down, digit by digit from the last, so that no fraction is
    // too long to count: ⌊(d + x) / 10⌋ = ⌊(d + ⌊x⌋) / 10⌋ for a whole d.
    var fractionBytes = 0
    if parts.count == 2 {
        for digit in parts[1].reversed() {
            fractionBytes = (Int(digit - UInt8(ascii: "0")) * multiplier + fractionBytes) / 10
        }
    }
    let (wholeBytes, overflow) = whole.multipliedReportingOverflow(by: multiplier)
    let (bytes, sumOverflow) = wholeBytes.addingReportingOverflow(fractionBytes)
    guard !overflow, !sumOverflow else { return .tooLarge }
    return .bytes(bytes, alone: unit.isEmpty)
}

/// The usage error for a size that `option` cannot read, listing the forms it takes.
/// - Parameter numberAlone: What a number alone counts, with examples.
func sizeFormsError(_ text: String, option: String, numberAlone: String = "bytes (4096, 0x1000)") -> UsageError {
    UsageError(message: "\(option) takes a size: \(numberAlone), or a number and a unit: K, M, G, T, P or KiB, MiB, ... "
        + "(powers of 1024), KB, MB, ... (powers of 1000), B (bytes), fractions allowed (1.5G); not '\(text)'")
}

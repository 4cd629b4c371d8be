import ByteStreams

// How the CLI writes numbers, times and text for people and for JSON: every table, verbose
// line and listing formats through these, so that one number always looks the same.

// MARK: Numbers

/// A percent with one decimal: `62.5%`, `-0.3%` (rounded half away from zero).
func formatPercent(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    let sign = tenths < 0 ? "-" : ""
    return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)%"
}

/// The share of `plain` bytes that packing to `packed` bytes saved, as ``formatPercent(_:)``
/// writes it; `whenEmpty` when `plain` is 0.
func percentSaved(packed: Int64, plain: Int64, whenEmpty: String = formatPercent(0)) -> String {
    plain == 0 ? whenEmpty : formatPercent((1 - Double(packed) / Double(plain)) * 100)
}

/// gzip's ratio, `%5.1f%%` of `100 * part / whole` (0 when `whole` is 0), through C's printf so
/// that it rounds as gzip's does.
func gzipRatio(_ part: Int64, _ whole: Int64) -> String {
    let value = whole == 0 ? 0 : 100 * Double(part) / Double(whole)
    return CLibrary.format(value, "%5.1f%%")
}

/// `value` in lowercase hexadecimal, zero-padded to `width` digits.
func hex<T: BinaryInteger>(_ value: T, _ width: Int) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// Each byte as two lowercase hexadecimal digits.
func hexBytes(_ bytes: [UInt8]) -> String {
    bytes.map { hex($0, 2) }.joined()
}

/// `value` as two digits at least: `07`, `42`.
func twoDigits<T: BinaryInteger>(_ value: T) -> String {
    value < 10 ? "0\(value)" : "\(value)"
}

// MARK: Columns

/// `text` right-aligned in `width` characters (never cut).
func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

/// `text` left-aligned in `width` characters (never cut).
func padRight(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
}

// MARK: Times

/// Seconds since 1970 as `YYYY-MM-DDTHH:MM:SSZ` in UTC, the fraction dropped.
/// Through C's `gmtime_r(3)` (``CLibrary/universalTime(_:)``).
func utcTimestamp(_ seconds: Double) -> String {
    guard let time = CLibrary.universalTime(Int(seconds.rounded(.down))) else { return String(Int64(seconds)) }
    return "\(time.year)-\(twoDigits(time.month))-\(twoDigits(time.day))T"
        + "\(twoDigits(time.hour)):\(twoDigits(time.minute)):\(twoDigits(time.second))Z"
}

/// `Jun  7 08:09`: gzip's `%s%3d %02d:%02d` of the local time.
/// Through C's `localtime_r(3)` (``CLibrary/localTime(_:)``).
func gzipDate(_ seconds: Int) -> String {
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    guard let time = CLibrary.localTime(seconds) else { return "??? ?? ??:??" }
    return months[time.month - 1] + pad(String(time.day), 3) + " " + twoDigits(time.hour) + ":"
        + twoDigits(time.minute)
}

// MARK: Text

/// `text` with C0 controls, DEL and C1 controls written as `\u{…}`, so that a hostile name
/// cannot drive the terminal.
func escapingControlCharacters(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
        if isControl(scalar) {
            result += "\\u{\(String(scalar.value, radix: 16))}"
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}

private func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || scalar.value == 0x7f || (0x80..<0xa0).contains(scalar.value)
}

/// A JSON string literal (RFC 8259 §7).
func jsonString(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        case _ where scalar.value < 0x20:
            result += "\\u" + hex(scalar.value, 4)
        default:
            result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}

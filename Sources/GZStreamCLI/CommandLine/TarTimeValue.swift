import ByteStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `pack --tar --mtime=VALUE`: every member's modification time, in whole seconds since
/// 1970-01-01 00:00 UTC (negative before it). What GNU tar 1.34's `--mtime` takes and reads
/// one way only, without its free-form date parser:
/// - `@SECONDS`: those seconds;
/// - a file named with a leading `/` or `.` (`./stamp`, `/etc/os-release`): its modification
///   time, a symbolic link followed, nanoseconds dropped (GNU tar takes a value so named as a
///   file, and stores whole seconds in a ustar header);
/// - an ISO 8601 date `YYYY-MM-DD` (midnight), or a date and time `YYYY-MM-DDTHH:MM[:SS]` or
///   `YYYY-MM-DD HH:MM[:SS]`, followed by `Z` (UTC) or an offset `±HH:MM` east of UTC; with
///   neither, in the local time zone (`TZ`), as GNU tar reads a date without one.
///
/// Anything else (a word, a date out of range, a local time that a daylight-saving change
/// skips, a file that is not there) is a usage error naming the value; GNU tar would take a
/// date it cannot parse as the current time, with a warning.
/// - Throws: ``UsageError``.
/// The corresponding C functions are `fstatat(2)` (the file) and `mktime(3)` (a local time).
func parseTarTime(_ text: String) throws(UsageError) -> Int64 {
    if text.hasPrefix("@") {
        guard let seconds = Int64(text.dropFirst()) else { throw tarTimeError(text) }
        return seconds
    }
    if text.hasPrefix("/") || text.hasPrefix(".") {
        let found: FileInfo?
        do {
            found = try SystemCalls.info(of: Pathname(text), in: SystemCalls.currentDirectory, followsLinks: true, target: text)
        } catch {
            throw UsageError(message: "--mtime '\(text)': cannot read the file's time: \(errorText(error))")
        }
        guard let found else { throw UsageError(message: "--mtime '\(text)': no such file (a time from a file needs one)") }
        return Int64(found.modificationTime.seconds)
    }
    guard let stamp = TarTimeStamp(text) else { throw tarTimeError(text) }
    guard let seconds = stamp.secondsSinceEpoch() else {
        throw UsageError(message: "--mtime '\(text)': that local time does not exist in this time zone")
    }
    return seconds
}

private func tarTimeError(_ text: String) -> UsageError {
    UsageError(message: "--mtime takes @SECONDS, a date YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM] "
        + "or a file named with a leading / or ./, not '\(text)'")
}

/// An ISO 8601 calendar date with an optional time and zone, its fields checked for range.
struct TarTimeStamp: Equatable {
    var year: Int, month: Int, day: Int
    var hour = 0, minute = 0, second = 0
    /// Seconds east of UTC; `nil` for local time.
    var offset: Int?

    /// Reads `YYYY-MM-DD`, then optionally `T` or a space and `HH:MM[:SS]`, then optionally
    /// `Z` or `±HH:MM` (after a time only); `nil` for anything else or a field out of range.
    init?(_ text: String) {
        let bytes = Array(text.utf8)
        var at = 0
        func digits(_ count: Int) -> Int? {
            guard at + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[at..<(at + count)] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            at += count
            return value
        }
        func take(_ character: Character) -> Bool {
            guard at < bytes.count, bytes[at] == character.asciiValue! else { return false }
            at += 1
            return true
        }
        guard let year = digits(4), take("-"), let month = digits(2), take("-"), let day = digits(2) else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
        if at < bytes.count {
            guard take("T") || take(" "), let hour = digits(2), take(":"), let minute = digits(2) else { return nil }
            (self.hour, self.minute) = (hour, minute)
            if take(":") {
                guard let second = digits(2) else { return nil }
                self.second = second
            }
            if take("Z") {
                offset = 0
            } else if at < bytes.count {
                let sign = bytes[at] == UInt8(ascii: "-") ? -1 : 1
                guard take("+") || take("-"), let hours = digits(2), take(":"), let minutes = digits(2),
                      hours <= 23, minutes <= 59 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
            guard at == bytes.count else { return nil }
        }
        guard (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day),
              hour <= 23, minute <= 59, second <= 59 else { return nil }
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// The days from 1970-01-01 to this date in the proleptic Gregorian calendar: whole
    /// 400-year eras of 146097 days, then the day of the era counted from March 1 (so that
    /// February's leap day comes last in a year).
    var daysSinceEpoch: Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// The time in seconds since the epoch: exact with a zone; in the local time zone through
    /// `mktime(3)` without one, `nil` when that wall-clock time does not exist there (skipped
    /// by a daylight-saving change).
    func secondsSinceEpoch() -> Int64? {
        if let offset {
            return Int64(daysSinceEpoch) * 86400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
        }
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month - 1)
        fields.tm_mday = Int32(day)
        fields.tm_hour = Int32(hour)
        fields.tm_min = Int32(minute)
        fields.tm_sec = Int32(second)
        fields.tm_isdst = -1
        let seconds = mktime(&fields)
        // mktime normalises a skipped time to another; the fields it wrote back say so.
        guard fields.tm_year == Int32(year - 1900), fields.tm_mon == Int32(month - 1), fields.tm_mday == Int32(day),
              fields.tm_hour == Int32(hour), fields.tm_min == Int32(minute), fields.tm_sec == Int32(second)
        else { return nil }
        return Int64(seconds)
    }
}

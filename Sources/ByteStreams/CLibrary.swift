#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library's formatting, for output that must match a C program's to the byte (GNU
/// gzip's ratio and dates): thin wrappers, so that callers need not import the C library.
/// Thread safety: every function is safe from any thread (the reentrant `_r` calls).
package enum CLibrary {
    /// A calendar date and time of day, as `struct tm` gives it, in people's numbering.
    package struct CalendarTime: Equatable, Sendable {
        /// The year, such as 2026.
        package var year: Int
        /// 1...12.
        package var month: Int
        /// 1...31.
        package var day: Int
        /// 0...23.
        package var hour: Int
        /// 0...59.
        package var minute: Int
        /// 0...60 (60 for a leap second).
        package var second: Int

        init(_ parts: tm) {
            year = Int(parts.tm_year) + 1900
            month = Int(parts.tm_mon) + 1
            day = Int(parts.tm_mday)
            hour = Int(parts.tm_hour)
            minute = Int(parts.tm_min)
            second = Int(parts.tm_sec)
        }
    }

    /// `seconds` since 1970 as a date and time in UTC, or `nil` when the year does not fit.
    /// The corresponding C function is `gmtime_r(3)`.
    package static func universalTime(_ seconds: Int) -> CalendarTime? {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return nil }
        return CalendarTime(parts)
    }

    /// `seconds` since 1970 as a date and time in the local time zone (`TZ`, else the
    /// system's), or `nil` when the year does not fit.
    /// The corresponding C function is `localtime_r(3)`.
    package static func localTime(_ seconds: Int) -> CalendarTime? {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return nil }
        return CalendarTime(parts)
    }

    /// `value` formatted by C's printf with `format`, which must hold exactly one conversion
    /// that takes a `double` (`"%5.1f%%"`); at most 63 bytes of the result are kept.
    /// The corresponding C function is `vsnprintf(3)`.
    package static func format(_ value: Double, _ format: String) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, format, $0) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// Progress on long jobs, which can run for minutes with nothing said: a line on standard error with the bytes in and out, the
// input rate, and the percent and time left when the input's size is known. On a terminal it
// is redrawn in place a few times a second once a job has run for a second, and erased at its
// end; elsewhere (`--progress` into a pipe or a log) it is one plain line per second and a last
// line when the job is done. The work counts bytes through atomics; a timer thread draws.

/// One look at a job, as the line shows it.
struct ProgressSnapshot: Equatable {
    /// Bytes read from the input so far (compressed when unpacking or testing).
    var bytesIn: Int64
    /// Bytes written so far (for `test`, plain bytes decoded).
    var bytesOut: Int64
    /// The input's size in bytes when it is a regular file, else `nil`.
    var inputSize: Int64?
    /// The input rate in bytes per second, or `nil` when not known yet.
    var bytesPerSecond: Double?
    /// For the last line of a finished job, its duration in seconds; `nil` while it runs.
    var finishedAfter: Double?
}

/// The text of the progress display: pure functions of their arguments, so that they are tested
/// without a clock or a terminal.
enum ProgressFormat {
    private static let prefixes = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]

    /// `bytes` in binary units: `0 B` to `1023 B`, then one decimal, `1.0 KiB` to `8.0 EiB`.
    /// A negative count is shown as 0.
    static func byteCount(_ bytes: Int64) -> String {
        binary(Double(max(0, bytes)), unit: "B")
    }

    /// A rate in bytes per second, as ``byteCount(_:)`` with `/s`: `0 B/s`, `85.2 MiB/s`. A rate
    /// that is not finite or is negative is shown as `0 B/s`; rates above 8 EiB/s as 8.0 EiB/s.
    static func rate(_ bytesPerSecond: Double) -> String {
        binary(bytesPerSecond, unit: "B/s")
    }

    private static func binary(_ value: Double, unit: String) -> String {
        let limit = 8.0 * 1024 * 1024 * 1024 * 1024 * 1024 * 1024  // 8 EiB: Int64's range
        let value = value.isFinite ? min(max(value, 0), limit) : 0
        if value.rounded() < 1024 { return "\(Int(value.rounded())) \(unit)" }
        var scaled = value / 1024
        var index = 0
        // 1023.96 KiB is shown as 1.0 MiB, not 1024.0 KiB.
        while (scaled * 10).rounded() >= 10240, index < prefixes.count - 1 {
            scaled /= 1024
            index += 1
        }
        let tenths = Int((scaled * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(prefixes[index])\(unit)"
    }

    /// A duration, rounded to the second: `0:07`, `59:59`, then `1:00:00` to `99:59:59`; from
    /// 100 hours on, `over 99 h`. A duration that is not finite or is negative is `0:00`.
    static func duration(seconds: Double) -> String {
        let seconds = seconds.isFinite ? max(seconds, 0) : 0
        guard seconds.rounded() < 100 * 3600 else { return "over 99 h" }
        let total = Int(seconds.rounded())
        if total < 3600 { return "\(total / 60):\(twoDigits(total % 60))" }
        return "\(total / 3600):\(twoDigits(total / 60 % 60)):\(twoDigits(total % 60))"
    }

    /// The percent of the input read: rounded down, so 100 only once all of it is read; 100
    /// for an empty input or one that grew past its size.
    static func percent(_ bytesIn: Int64, of size: Int64) -> Int {
        guard size > 0, bytesIn < size else { return 100 }
        return min(99, Int(Double(max(0, bytesIn)) / Double(size) * 100))
    }

    /// The time left at `bytesPerSecond` for the rest of an input of `size` bytes, in seconds;
    /// `nil` when there is no rate yet (or it is 0, a stalled input).
    static func secondsLeft(_ bytesIn: Int64, of size: Int64, bytesPerSecond: Double?) -> Double? {
        guard let bytesPerSecond, bytesPerSecond.isFinite, bytesPerSecond > 0 else { return nil }
        return Double(max(0, size - max(0, bytesIn))) / bytesPerSecond
    }

    /// The whole line, without a line end:
    /// `gzstream: NAME: 512.0 MiB in, 120.3 MiB out, 85.2 MiB/s, 42%, 0:07 left` while a job
    /// runs (percent and time left only with a known size, the rate and time left once there is
    /// a rate), `gzstream: NAME: 1.2 GiB in, 300.0 MiB out, 85.2 MiB/s, done in 0:14` at its end.
    /// Control characters in `name` are shown escaped, as in diagnostics.
    /// - Parameter width: The terminal's width in columns, or `nil` for no limit. The line is
    ///   kept to `width - 1` ``columns(_:)`` (so that it never wraps). What says how far the job
    ///   is stays longest: the name, the percent and the time left (without a percent, the bytes
    ///   in). Dropped first, in this order until the line fits: the rate, the bytes out, the
    ///   bytes in, the `gzstream: ` before the name; then the name loses its start (`…` shows
    ///   where); last, the line its end.
    static func line(name: String, _ snapshot: ProgressSnapshot, width: Int? = nil) -> String {
        var fields = ["\(byteCount(snapshot.bytesIn)) in", "\(byteCount(snapshot.bytesOut)) out"]
        // Indices into fields, highest first, so that each removal leaves the next one valid.
        var droppable = [1]
        if let bytesPerSecond = snapshot.bytesPerSecond {
            fields.append(rate(bytesPerSecond))
            droppable.insert(2, at: 0)
        }
        if let finishedAfter = snapshot.finishedAfter {
            fields.append("done in " + duration(seconds: finishedAfter))
        } else if let size = snapshot.inputSize {
            fields.append("\(percent(snapshot.bytesIn, of: size))%")
            droppable.append(0)
            if let left = secondsLeft(snapshot.bytesIn, of: size, bytesPerSecond: snapshot.bytesPerSecond) {
                fields.append(duration(seconds: left) + " left")
            }
        }
        let shownName = escapingControlCharacters(name)
        let full = "gzstream: \(shownName): " + fields.joined(separator: ", ")
        guard let width, columns(full) > width - 1 else { return full }
        let limit = width - 1
        for index in droppable {
            fields.remove(at: index)
            let shorter = "gzstream: \(shownName): " + fields.joined(separator: ", ")
            if columns(shorter) <= limit { return shorter }
        }
        let details = ": " + fields.joined(separator: ", ")
        if columns(shownName + details) <= limit { return shownName + details }
        let room = limit - columns(details)
        let ellipsis = "…"
        var cutName = ellipsis
        if room > columns(ellipsis) {
            let scalars = shownName.unicodeScalars
            var start = scalars.endIndex
            var kept = 0
            while start > scalars.startIndex {
                let before = scalars.index(before: start)
                let added = columns(of: scalars[before])
                if kept + added > room - columns(ellipsis) { break }
                kept += added
                start = before
            }
            cutName += String(scalars[start...])
        }
        return prefix(cutName + details, columns: limit)
    }

    /// What redraws a line of `lineColumns` columns over the one shown before (`shownColumns`
    /// wide, 0 for none) on a terminal `width` columns wide: how many spaces go after it. They
    /// cover what is left of the old line, and never go past the last column: after the
    /// terminal shrinks, a line drawn for the old width is cut at the new one (or wrapped onto
    /// the rows above, which no count of spaces reaches), so spaces past the width would wrap
    /// onto a new row and leave a stale copy above. Up to the last column itself, as terminals
    /// wait for the next character to wrap (the next draw starts with `\r`).
    static func padding(after lineColumns: Int, over shownColumns: Int, width: Int) -> Int {
        max(0, min(shownColumns, width) - lineColumns)
    }

    /// The most columns `text` can take on a terminal: 1 for an ASCII character, 2 for any
    /// other (East Asian wide characters take 2; counting the rest as 2 only shortens the line).
    static func columns(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + columns(of: $1) }
    }

    private static func columns(of scalar: Unicode.Scalar) -> Int {
        scalar.isASCII ? 1 : 2
    }

    /// The start of `text` that fits in `columns` (see ``columns(_:)``).
    private static func prefix(_ text: String, columns limit: Int) -> String {
        var result = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            used += columns(of: scalar)
            if used > limit { break }
            result.append(scalar)
        }
        return String(result)
    }
}


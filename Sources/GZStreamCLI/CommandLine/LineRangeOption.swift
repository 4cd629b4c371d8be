// `unpack --lines N[:M]`: its value and its parser, apart from the byte-count parsers.

/// `unpack --lines N[:M]`: lines N through M of the plain data, as `sed -n 'N,Mp'` prints
/// them (LineUnpack.swift).
struct LineRange: Equatable {
    /// The first line to write, from 1.
    var first: UInt64
    /// The last line to write, `>= first`; `nil` writes to the end.
    var last: UInt64?
}

/// `--lines`'s value: `N` (line N to the end) or `N:M` (lines N through M), decimal line numbers
/// from 1 with N ≤ M.
/// - Throws: ``UsageError`` naming what is wrong: not that shape, a line 0, or N > M.
func parseLineRange(_ text: String) throws(UsageError) -> LineRange {
    let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    let numbers = parts.map { part in part.allSatisfy(\.isASCII) ? UInt64(part) : nil }
    guard let first = numbers[0], numbers.count == 1 || numbers[1] != nil else {
        throw UsageError(message: "--lines takes N or N:M (line numbers from 1), not '\(text)'")
    }
    let last = numbers.count == 2 ? numbers[1] : nil
    guard first > 0 && last != 0 else { throw UsageError(message: "--lines counts lines from 1, not 0 ('\(text)')") }
    if let last, last < first {
        throw UsageError(message: "--lines N:M needs N <= M, not '\(text)' (the last line comes before the first)")
    }
    return LineRange(first: first, last: last)
}

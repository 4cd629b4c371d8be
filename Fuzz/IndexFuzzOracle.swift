// The oracle of Fuzz/IndexFileFuzzer.swift: whatever the index, a read through it must give a
// prefix of the right plain bytes, and all of them when it reports no error. An error is fine;
// wrong bytes are not. A violation is described (which read, which access point or .gzi entry
// the decode started from, and how that point differs from the truth) and ends the process with
// abort(), so that libFuzzer keeps the input.
import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#endif

/// What a read gave against what it should give: how many bytes matched, where the first wrong
/// byte was (an offset into the expected bytes), and the read's error.
struct PrefixChecker {
    let expected: ArraySlice<UInt8>
    private(set) var matched = 0
    private(set) var firstWrong: Int?
    /// The byte read at `firstWrong`, or nil when the read gave bytes past the expected end.
    private(set) var wrongByte: UInt8?

    init(expected: ArraySlice<UInt8>) { self.expected = expected }

    /// Checks the next bytes read; false once a byte is wrong (later bytes are not checked).
    mutating func take(_ piece: UnsafeRawBufferPointer) -> Bool {
        guard firstWrong == nil else { return false }
        for (offset, byte) in piece.enumerated() {
            let at = matched + offset
            if at >= expected.count || expected[expected.startIndex + at] != byte {
                firstWrong = at
                wrongByte = at < expected.count ? byte : nil
                matched = at
                return false
            }
        }
        matched += piece.count
        return true
    }

    /// The violation, if any, once the read has ended with `error` (nil for none).
    func violation(error: String?) -> String? {
        if let firstWrong {
            guard let wrongByte else { return "too-long" }
            let right = expected[expected.startIndex + firstWrong]
            return "wrong-bytes (byte \(firstWrong) of the read is \(hex(wrongByte)), should be \(hex(right)))"
        }
        if error == nil && matched < expected.count {
            return "too-short (\(matched) of \(expected.count) bytes, no error)"
        }
        return nil
    }
}

private func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
}

/// Reads `stream` (open) until it ends, fails or has given `limit` bytes, `readSize` bytes at a
/// time; after a wrong byte the rest is read unchecked, so that a report can say whether the
/// read went on to fail (the stream's output limit bounds it).
/// - Returns: The read's error, described, or nil.
func readChecking(_ stream: ByteInputStream, readSize: Int, limit: Int = .max, into checker: inout PrefixChecker) -> String? {
    var buffer = [UInt8](repeating: 0, count: readSize)
    var left = limit
    while left > 0 {
        let count = buffer.withUnsafeMutableBytes {
            stream.read($0.baseAddress!.assumingMemoryBound(to: UInt8.self), maxLength: min(readSize, left))
        }
        if count < 0 { return describe(stream.streamError) }
        if count == 0 { return nil }
        _ = buffer.withUnsafeBytes { checker.take(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        left -= count
    }
    return nil
}

/// An error as a violation report names it: its type and message.
func describe(_ error: (any Error)?) -> String {
    guard let error else { return "an error without a value" }
    return "\(type(of: error)): \(error)"
}

/// One read through an index and how it was made, for the report.
struct ReadDescription {
    /// `gzidx`, `gzidx-v0`, `gztool` or `gzi`.
    var format: String
    /// Whole (from offset 0 to the end) or a range.
    var range: (offset: Int, length: Int?)?
    var threads: Int
    var inflater: GzipInputStream.Inflater
    var api: String

    var mode: String { range == nil ? "whole" : "range" }
    var text: String {
        let what = range.map { "range at \($0.offset), length \($0.length.map(String.init) ?? "to the end")" } ?? "whole read"
        return "\(format) \(what) (\(api), \(threads) thread\(threads == 1 ? "" : "s"), \(inflater))"
    }
}

/// Prints the violation with its category and what led to it, and aborts, unless the category
/// starts with one of the comma-separated prefixes in `INDEX_FUZZ_IGNORE` (to hunt for other
/// kinds while a known one is being fixed), when it returns.
func reportViolation(_ read: ReadDescription, category: String, violation: String, error: String?, details: [String]) {
    let key = "\(read.format)-\(read.mode)/\(category)/\(violation.prefix { $0 != " " })"
    // Documented, not a violation: in a range, a zero byte of a window stands for any byte
    // (rapidgzip writes sparse windows, zeroing what nothing after the point refers to), so a
    // window whose only differences are zeros where the data is not can give wrong bytes.
    if read.mode == "range" && category.hasSuffix("/sparse-window") { return }
    var lines = ["ORACLE VIOLATION [\(key)]",
                 "  read: \(read.text)",
                 "  outcome: \(violation); the read then reported \(error ?? "no error")"]
    lines += details.map { "  " + $0 }
    abortUnlessIgnored(key, lines)
}

/// Prints `lines` and aborts, unless `key` starts with a prefix in `INDEX_FUZZ_IGNORE`.
func abortUnlessIgnored(_ key: String, _ lines: [String]) {
    if ignoredPrefixes.contains(where: { key.hasPrefix($0) }) { return }
    fputs(lines.joined(separator: "\n") + "\n", stderr)
    abort()
}

private let ignoredPrefixes: [String] = getenv("INDEX_FUZZ_IGNORE").map {
    String(cString: $0).split(separator: ",").map(String.init)
} ?? []

// MARK: Classifying a gzip access point

/// How an access point differs from the truth about the fixed gzip file.
enum PointClass: Equatable {
    /// At a block boundary with its true plain offset, and a window that is the true one (or
    /// none, at a member's start, where none is needed).
    case truePoint
    case windowDiffers(firstDifference: Int)
    /// The window differs from the true one only in bytes it holds as zero (a sparse window).
    case sparseWindow
    case noWindowMidMember
    /// At a block boundary, but its plain offset is not that boundary's.
    case plainOffsetOff(by: Int64)
    case notABlockBoundary
    case windowUnreadable

    var key: String {
        switch self {
        case .truePoint: "true-point"
        case .windowDiffers: "window-differs"
        case .sparseWindow: "sparse-window"
        case .noWindowMidMember: "no-window-mid-member"
        case .plainOffsetOff: "plain-offset-off"
        case .notABlockBoundary: "not-a-block-boundary"
        case .windowUnreadable: "window-unreadable"
        }
    }
}

extension IndexFuzzFixtures {
    /// What point `number` of `index` is, against the block boundaries and the plain data.
    func classify(point number: Int, of index: GzipIndex) -> PointClass {
        let point = index.points[number]
        guard let boundary = boundaries.first(where: {
            $0.compressedOffset == point.compressedOffset && $0.bitOffset == point.bitOffset
        }) else { return .notABlockBoundary }
        guard boundary.plainOffset == point.plainOffset else {
            return .plainOffsetOff(by: Int64(bitPattern: point.plainOffset &- boundary.plainOffset))
        }
        let stored: [UInt8]?
        do { stored = try index.window(ofPoint: number) } catch { return .windowUnreadable }
        guard let window = stored else { return boundary.isMemberStart ? .truePoint : .noWindowMidMember }
        if boundary.isMemberStart { return .truePoint }
        let truth = trueWindow(before: Int(point.plainOffset))
        guard window.count == truth.count else { return .windowDiffers(firstDifference: -1) }
        guard let first = window.indices.first(where: { window[$0] != truth[$0] }) else { return .truePoint }
        if window.indices.allSatisfy({ window[$0] == truth[$0] || window[$0] == 0 }) { return .sparseWindow }
        return .windowDiffers(firstDifference: first)
    }

    /// The point a read of plain byte `offset` starts from, as ``IndexedGzipInputStream``
    /// chooses it: the last at or before it, but not one at the end of the file.
    func startPoint(for offset: Int64, in index: GzipIndex) -> Int {
        var start = index.points.lastIndex { Int64(clamping: $0.plainOffset) <= offset } ?? 0
        if start > 0 && index.points[start].compressedOffset == UInt64(gzip.count) { start -= 1 }
        return start
    }

    /// The category of a wrong read of the gzip file that started at point `first` and went
    /// wrong at plain offset `failedAt`: the first point from `first` through the one whose span
    /// holds `failedAt` that is not true (`first-point/…` or `later-point/…`), else
    /// `all-points-true`; and a line for each point.
    func category(index: GzipIndex, first: Int, failedAt: Int64) -> (key: String, details: [String]) {
        let last = max(first, startPoint(for: failedAt, in: index))
        var details: [String] = []
        var key: String?
        for number in first...last {
            let point = index.points[number]
            let kind = classify(point: number, of: index)
            details.append("point \(number): compressed \(point.compressedOffset) bit \(point.bitOffset) plain \(point.plainOffset)"
                + " window \(index.hasWindow(ofPoint: number) ? "yes" : "no"): \(kind)")
            if key == nil && kind != .truePoint {
                key = (number == first ? "first-point/" : "later-point/") + kind.key
            }
        }
        return (key ?? "all-points-true", details)
    }

    // MARK: Classifying a .gzi entry

    /// How the `.gzi` entry a BGZF read started from differs from the file's members.
    func classify(entry: BGZFIndex.Entry, membersBefore: Int) -> String {
        if membersBefore == 0 { return "file-start" }
        guard let member = bgzfMembers.first(where: { $0.compressedOffset == entry.compressedOffset }) else {
            return "not-a-member-start"
        }
        return member.uncompressedOffset == entry.uncompressedOffset ? "true-entry" : "uncompressed-offset-off"
    }
}

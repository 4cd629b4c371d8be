#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Picks lines `first` through `last` out of plain bytes given in order, as `sed -n 'N,Mp'`
/// prints them: lines are numbered from 1, a line ends at (and includes) its `\n`, and a last
/// line without one is a line too. Feed it the bytes from the start of the data, or from a
/// point of a ``GzipLineTable`` with the `\n` bytes before it.
///
/// Each piece given to ``select(_:_:)`` is counted whole (eight bytes at a time), so that
/// ``newlines`` can be checked against a line table at any offset; only a piece in which the
/// range starts or ends is searched with `memchr(3)`. A value type, used by one thread.
public struct LineRangeSelector: Sendable {
    /// The first line to give, from 1.
    public let first: UInt64
    /// The last line to give, or `nil` to give every line from ``first`` on.
    public let last: UInt64?
    /// The `\n` bytes passed so far (before the first byte given to ``select(_:_:)``, then in
    /// the pieces given): the line being read is `newlines + 1`.
    public private(set) var newlines: UInt64
    /// The last byte given, `nil` before any.
    public private(set) var lastByte: UInt8?

    /// A selector of lines `first...last` (`last` `nil`: to the end) whose bytes start after
    /// `newlinesBefore` `\n` bytes.
    /// - Precondition: `first >= 1`, and `last`, when given, `>= first`.
    public init(first: UInt64, last: UInt64?, newlinesBefore: UInt64 = 0) {
        precondition(first >= 1 && (last ?? first) >= first, "lines are numbered from 1, the last not before the first")
        self.first = first
        self.last = last
        newlines = newlinesBefore
    }

    /// Whether the last line has been given whole: no later byte belongs to the range.
    public var isDone: Bool { last.map { newlines >= $0 } ?? false }

    /// Takes the next `bytes` of the data and calls `body` with the part of them in the range
    /// (not called when none is), counting every `\n`.
    /// - Throws: What `body` throws.
    public mutating func select(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard !bytes.isEmpty else { return }
        lastByte = bytes[bytes.count - 1]
        var rest = bytes
        while !rest.isEmpty {
            if newlines + 1 < first {
                // Before the range: pass first - 1 newlines in all.
                let wanted = first - 1 - newlines
                let count = UInt64(NewlineCounter.count(in: rest))
                guard count >= wanted else {
                    newlines += count
                    return
                }
                rest = UnsafeRawBufferPointer(rebasing: rest[Self.end(ofNewline: Int(wanted), in: rest)...])
                newlines += wanted
            } else if let last, newlines < last {
                // Inside the range, which ends with the last line's newline.
                let wanted = last - newlines
                let count = UInt64(NewlineCounter.count(in: rest))
                guard count >= wanted else {
                    try body(rest)
                    newlines += count
                    return
                }
                let cut = Self.end(ofNewline: Int(wanted), in: rest)
                try body(UnsafeRawBufferPointer(rebasing: rest[..<cut]))
                rest = UnsafeRawBufferPointer(rebasing: rest[cut...])
                newlines += wanted
            } else if last == nil {
                try body(rest)
                newlines += UInt64(NewlineCounter.count(in: rest))
                return
            } else {
                // After the range: counted only.
                newlines += UInt64(NewlineCounter.count(in: rest))
                return
            }
        }
    }

    /// The offset just past the `n`-th `\n` of `bytes`, which holds at least `n` of them.
    private static func end(ofNewline n: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        let base = bytes.baseAddress!
        var position = 0
        for _ in 0..<n {
            let found = memchr(base + position, 0x0A, bytes.count - position)!
            position = base.distance(to: UnsafeRawPointer(found)) + 1
        }
        return position
    }
}

extension IndexedGzipInputStream {
    /// Decodes lines `first` through `last` of the plain data (as ``LineRangeSelector`` numbers
    /// them) and lends their bytes to `body` in pieces, in order (each valid only during its
    /// call). With the index's ``GzipIndex/lineTable`` it decodes from the last access point
    /// before the first line (``GzipIndex/lineStart(ofLine:)``); without one, from the start.
    ///
    /// **Checks.** The line table is trusted only as far as the data bears it out: the `\n`
    /// bytes of every span decoded are counted, and the count must reach the table's at each
    /// point passed and its totals at the end of the data. So the span where the range ends is
    /// decoded to its end even when the range ends before. The bytes are held (up to 32 MiB,
    /// as a seek holds its first span) until the first of those checks has passed, so that a
    /// table that does not fit gives nothing; more is lent as it comes, and a table that does
    /// not fit is still an error after it. The count before the first point is the
    /// table's, which the index's seal vouches for (its CRC-32 and the file it is bound to),
    /// as it vouches for the points. Every span read is checked as a read after
    /// ``seek(toPlainOffset:length:)`` checks it.
    ///
    /// Lines past the end give nothing and no error, as `sed -n` prints nothing. Afterwards
    /// reads return nothing until the next seek.
    /// - Parameters:
    ///   - first: The first line, from 1.
    ///   - last: The last line, `>= first`, or `nil` for every line from `first` on.
    ///   - body: Takes each piece; an error it throws ends the read and is thrown.
    /// - Throws: ``IndexedGzipError/lineCountMismatch(point:counted:indexed:)`` when the data
    ///   does not have the `\n` bytes the line table says; ``IndexedGzipError/unusable(_:)``
    ///   for an index without access points; the errors of a read after a seek
    ///   (``IndexedGzipError``, ``GzipError``); what `body` throws. Blocks while decoding.
    /// - Precondition: `first >= 1`, and `last`, when given, `>= first`.
    public func readLines(from first: UInt64, through last: UInt64?,
                          _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        precondition(first >= 1 && (last ?? first) >= first, "lines are numbered from 1, the last not before the first")
        if streamStatus == .notOpen { try openOrThrow() }
        guard !index.points.isEmpty else { throw IndexedGzipError.unusable("it has no access points") }
        let table = index.lineTable
        let start = index.lineStart(ofLine: first) ?? (point: 0, newlinesToSkip: first - 1)
        var selector = LineRangeSelector(first: first, last: last, newlinesBefore: table?.newlinesBefore[start.point] ?? 0)
        try seek(toPlainOffset: Int64(index.points[start.point].plainOffset), length: nil)
        var nextCheck = table == nil ? index.points.count : start.point + 1
        var held: [UInt8]? = table == nil ? nil : []
        func release() throws {
            if let bytes = held, !bytes.isEmpty { try bytes.withUnsafeBytes(body) }
            held = nil
        }
        func give(_ piece: UnsafeRawBufferPointer) throws {
            guard held != nil else { return try body(piece) }
            held!.append(contentsOf: piece)
            if held!.count > Self.holdLimit { try release() }
        }
        while true {
            if nextCheck < index.points.count {
                let pointOffset = Int64(index.points[nextCheck].plainOffset)
                if plainOffset >= pointOffset {
                    let indexed = table!.newlinesBefore[nextCheck]
                    guard selector.newlines == indexed else {
                        throw IndexedGzipError.lineCountMismatch(point: nextCheck, counted: selector.newlines, indexed: indexed)
                    }
                    nextCheck += 1
                    try release()
                    if selector.isDone { return }
                    continue
                }
            } else if table == nil && selector.isDone {
                return
            }
            var room = 1 << 20
            if nextCheck < index.points.count {
                room = Int(min(Int64(room), Int64(index.points[nextCheck].plainOffset) - plainOffset))
            }
            let count = try readInPlace(maxLength: room) { try selector.select($0, give) }
            if count < 0 { throw streamErrorOrFallback(operation: "read lines") }
            if count == 0 { break }
        }
        if let table {
            // At the end of the data: its totals. The last byte is known when a byte was read.
            guard selector.newlines == table.newlineCount else {
                throw IndexedGzipError.lineCountMismatch(point: nil, counted: selector.newlines, indexed: table.newlineCount)
            }
            let lines = selector.newlines + (selector.lastByte.map { $0 == 0x0A ? 0 : 1 } ?? (table.lineCount - table.newlineCount))
            guard lines == table.lineCount else {
                throw IndexedGzipError.lineCountMismatch(point: nil, counted: lines, indexed: table.lineCount)
            }
        }
        try release()
    }
}

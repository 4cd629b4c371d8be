import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// One gzip file cut into splits for engines that run one task per split (Spark, Hadoop):
// `index --plan SIZE` cuts the plain data at the access points of the file's index, and
// `unpack --offset N --length M --whole-lines` writes the lines that start in [N, N + M), the
// rule of Hadoop's LineRecordReader, so that the splits of a plan together give every line of
// the file exactly once.

/// Passes on, of the plain bytes written to it, the lines that start in [`start`, `end`):
/// a line starts at offset 0 and after each `\n` (the separator, written with its line); the
/// line that holds `start` is skipped unless it starts there, and the last line written is
/// finished past `end`. A `\r` before a `\n` is a byte of its line (`\r\n` lines keep both
/// bytes, and a split between the two is no line start). A last line without `\n` is written
/// as it is. Once a line starts at or past `end`, ``isDone`` is true and the rest is dropped.
///
/// The bytes written must be the plain data from offset `origin` on, with `origin` at most
/// `start`, and 0 or `start - 1` (so that the byte before `start` tells whether a line starts
/// there) for the first line to be judged right. Writes always take every byte. Ownership:
/// opens `inner` if it is not open; closes it on close when `closesInnerStream`. Not
/// thread-safe, as any stream.
final class WholeLinesOutputStream: ByteOutputStream {
    private let inner: ByteOutputStream
    private let closesInnerStream: Bool
    let start: Int64
    /// `Int64.max` when the range has no end.
    let end: Int64
    /// The plain offset of the next byte written.
    private(set) var position: Int64
    /// Whether a line starts at ``position``.
    private var atLineStart: Bool
    /// Whether the line ``position`` is in is written.
    private var writingLine = false
    /// Whether a line started at or past ``end``: nothing more is written.
    private(set) var isDone = false
    /// The bytes passed on to `inner`.
    private(set) var passedCount: Int64 = 0

    /// - Parameters:
    ///   - range: The plain bytes whose lines are written, from `range.offset`, to the end
    ///     without a length.
    ///   - origin: The plain offset of the first byte written: `range.offset - 1`, or 0.
    init(wrapping inner: ByteOutputStream, range: PlainRange, closesInnerStream: Bool) {
        self.inner = inner
        self.closesInnerStream = closesInnerStream
        start = range.offset
        let (sum, overflow) = range.offset.addingReportingOverflow(range.length ?? Int64.max)
        end = overflow ? Int64.max : sum
        position = Self.origin(of: range)
        atLineStart = position == 0
        super.init()
    }

    /// Where the bytes for `range` must start: one byte before it, to see whether a line
    /// starts at its first byte; 0 for a range from the start.
    static func origin(of range: PlainRange) -> Int64 { max(range.offset - 1, 0) }

    override func openBacking() throws {
        try inner.openUnlessOpened()
    }

    override func closeBacking() throws {
        guard closesInnerStream else { return }
        try inner.closeOrThrow()
    }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        /// The index just past the first `\n` at or after `from`, or `nil`.
        func lineEnd(from: Int) -> Int? {
            guard from < maxLength, let found = memchr(buffer + from, 0x0a, maxLength - from) else { return nil }
            return buffer.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
        }
        var index = 0
        while index < maxLength && !isDone {
            if atLineStart {
                if position >= end {
                    isDone = true
                    break
                }
                writingLine = position >= start
                atLineStart = false
            }
            let count: Int
            if !writingLine {
                count = (lineEnd(from: index) ?? maxLength) - index
            } else {
                // Every line that starts before `end` is written, in one run: up to the end of
                // the line that holds byte `end - 1`, or the whole buffer when it ends before.
                let remaining = maxLength - index
                let inRange = end - position
                if inRange >= Int64(remaining) {
                    count = remaining
                } else {
                    let from = index + max(Int(max(inRange, 0)) - 1, 0)
                    count = (lineEnd(from: from) ?? maxLength) - index
                }
                try inner.writeAll(UnsafeRawBufferPointer(start: buffer + index, count: count))
                passedCount += Int64(count)
            }
            index += count
            position += Int64(count)
            atLineStart = buffer[index - 1] == 0x0a
        }
        return maxLength
    }

    override var isFull: Bool { inner.isFull }
}

/// One split of a plan: plain bytes [offset, offset + length), to the end when `length` is `nil`.
struct PlannedSplit: Equatable {
    var offset: Int64
    var length: Int64?
}

/// Cuts plain data of `plainSize` bytes (`nil`: unknown) into splits of about `size` bytes,
/// each starting at one of `points` (plain offsets, ascending, the first 0): a split ends at
/// the first point at least `size` past its start, the last one at the end.
func planSplits(points: [Int64], plainSize: Int64?, size: Int64) -> [PlannedSplit] {
    var splits: [PlannedSplit] = []
    var start: Int64 = 0
    var next = points.startIndex
    while true {
        let target = start.addingReportingOverflow(size)
        while next < points.endIndex && (points[next] <= start || (!target.overflow && points[next] < target.partialValue)) {
            next += 1
        }
        guard next < points.endIndex, plainSize.map({ points[next] < $0 }) ?? true, !target.overflow else {
            splits.append(PlannedSplit(offset: start, length: plainSize.map { $0 - start }))
            return splits
        }
        splits.append(PlannedSplit(offset: start, length: points[next] - start))
        start = points[next]
    }
}

extension Command {
    /// `index --plan SIZE FILE`: prints the splits of `FILE` (``planSplits(points:plainSize:size:)``)
    /// through its index, found beside it as `unpack` finds one and checked against the file
    /// as a read through it is (size, tail, first access point) before anything is printed;
    /// one line of text per split (`OFFSET LENGTH`, `-` for a length to the end), or with
    /// `--json` one JSON object per file. A file without an index gets one split and a
    /// warning; an index that is found but cannot be trusted, read or matched to the file is
    /// an error (a plan through it could not be read back). Writes nothing to disk.
    func printPlan(_ operand: Pathname, input opened: OpenedInput?, size: Int64, json: Bool) throws -> ExitStatus {
        guard let opened else {
            throw Reported(status: reportError("standard input", "--plan needs a file (read through the index beside it)"))
        }
        try checkKind(opened.info, of: operand)
        let fileStream = try opened.stream()
        defer { fileStream.close() }
        let compressedSize = opened.info.size
        foundIndexRefusal = nil
        let indexPath = operand.appending(Self.gzidxSuffix)
        let found = try readIndex(at: (indexPath, false), compressedSize: compressedSize, bgzfData: false,
                                  checksBGZFIndex: false)
        if let refusal = foundIndexRefusal { throw Reported(status: reportError(indexPath.description, refusal)) }
        if let (index, indexPath) = found {
            let stream = try IndexedGzipInputStream(wrapping: fileStream, index: index, threads: 1, closesInnerStream: false)
            defer { stream.close() }
            do {
                try stream.openOrThrow()
                if let mismatch = stream.indexMismatch { throw mismatch }
            } catch let error as IndexedGzipError {
                throw Reported(status: reportError(indexPath.description, withRemedy(error)))
            }
            let plainSize = stream.plainSize
            let splits = planSplits(points: index.points.map { Int64($0.plainOffset) }, plainSize: plainSize, size: size)
            return emitPlan(operand, compressedSize: compressedSize, indexPath: indexPath, plainSize: plainSize,
                            splits: splits, warning: nil, json: json)
        }
        // No index is no failure: the one split is the whole file, as an engine reads it anyway.
        let warning = "no index, so one split (run 'gzstream index \(operand.description)' to build one)"
        diagnostics.warning(operand.description, warning)
        return emitPlan(operand, compressedSize: compressedSize, indexPath: nil, plainSize: nil,
                        splits: [PlannedSplit(offset: 0, length: nil)], warning: warning, json: json)
    }

    /// Writes one plan to standard output; `.error` when it cannot be written.
    private func emitPlan(_ operand: Pathname, compressedSize: Int64, indexPath: Pathname?, plainSize: Int64?,
                          splits: [PlannedSplit], warning: String?, json: Bool) -> ExitStatus {
        let text: String
        if json {
            let items = splits.map { "{\"offset\": \($0.offset), \"length\": \($0.length.map(String.init) ?? "null")}" }
            text = "{\"file\": \(jsonString(operand.description)), \"compressedSize\": \(compressedSize), "
                + "\"index\": \(indexPath.map { jsonString($0.description) } ?? "null"), "
                + "\"plainSize\": \(plainSize.map(String.init) ?? "null"), "
                + "\"splits\": [\(items.joined(separator: ", "))], "
                + "\"warning\": \(warning.map(jsonString) ?? "null")}\n"
        } else {
            text = splits.map { "\($0.offset) \($0.length.map(String.init) ?? "-")\n" }.joined()
        }
        do {
            try environment.standardOutput.writeAll(Array(text.utf8))
        } catch {
            return reportError("standard output", describe(error))
        }
        return .success
    }

    /// `unpack --offset N --length M --whole-lines` through a GZIDX index: the plain data
    /// from just before N read to the first access point at or past N + M, then one span at a
    /// time until the last line has ended, so that every span decoded is read (and checked)
    /// to its end and none is decoded twice. `output` is the ``WholeLinesOutputStream``.
    func readWholeLines(_ stream: IndexedGzipInputStream, index: GzipIndex, into output: WholeLinesOutputStream) throws {
        let points = index.points.map { Int64($0.plainOffset) }
        func firstPoint(atOrAfter offset: Int64) -> Int64? {
            points.first { $0 >= offset && $0 > 0 }
        }
        var from = output.position
        var to = output.end == Int64.max ? nil : firstPoint(atOrAfter: output.end)
        while true {
            try stream.seek(toPlainOffset: from, length: to.map { $0 - from })
            _ = try stream.copy(to: output, chunkSize: max(common.chunkSize, 64 << 10))
            guard !output.isDone, let end = to, output.position == end else { return }
            from = end
            to = firstPoint(atOrAfter: end + 1)
        }
    }
}

import ByteStreams
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Progress on long jobs (issue 8 §5): a line on standard error with the bytes in and out, the
// input rate, and the percent and time left when the input's size is known. On a terminal it
// is redrawn in place a few times a second once a job has run for a second, and erased at its
// end; elsewhere (`--progress` into a pipe or a log) it is one plain line per second and a last
// line when the job is done. The work counts bytes through atomics; a timer thread draws.

// MARK: The line

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
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if total < 3600 { return "\(total / 60):\(two(total % 60))" }
        return "\(total / 3600):\(two(total / 60 % 60)):\(two(total % 60))"
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
    ///   kept to `width - 1` ``columns(_:)`` (so that it never wraps): the name loses its start
    ///   first (`…` shows where), then the line its end.
    static func line(name: String, _ snapshot: ProgressSnapshot, width: Int? = nil) -> String {
        var details = "\(byteCount(snapshot.bytesIn)) in, \(byteCount(snapshot.bytesOut)) out"
        if let bytesPerSecond = snapshot.bytesPerSecond { details += ", " + rate(bytesPerSecond) }
        if let finishedAfter = snapshot.finishedAfter {
            details += ", done in " + duration(seconds: finishedAfter)
        } else if let size = snapshot.inputSize {
            details += ", \(percent(snapshot.bytesIn, of: size))%"
            if let left = secondsLeft(snapshot.bytesIn, of: size, bytesPerSecond: snapshot.bytesPerSecond) {
                details += ", " + duration(seconds: left) + " left"
            }
        }
        let shownName = escapingControlCharacters(name)
        let line = "gzstream: \(shownName): \(details)"
        guard let width, columns(line) > width - 1 else { return line }
        let room = width - 1 - (columns(line) - columns(shownName))
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
        return prefix("gzstream: \(cutName): \(details)", columns: width - 1)
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

// MARK: Counting

/// The bytes a job has read and written, updated from whichever threads do the work (a
/// read-ahead worker, a write-behind worker, a BGZF pipeline) and read by the timer thread.
final class ProgressCounters: Sendable {
    let bytesIn = Atomic<Int64>(0)
    let bytesOut = Atomic<Int64>(0)
    /// The input's size in bytes, or -1 when it is not a regular file.
    let inputSize = Atomic<Int64>(-1)
}

/// Passes reads through to `inner` and adds them to ``ProgressCounters/bytesIn``: bytes read,
/// so a seek back (a member decoded again by zlib) counts its bytes twice.
///
/// On open, when `measuresSize`, a ``FileInputStream`` on a regular file sets
/// ``ProgressCounters/inputSize`` to the bytes from its offset to its end (one `fstat(2)`).
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset``: passed through both ways; seeking a
/// stream at its end makes it readable again.
/// Ownership: opens `inner` if it is not open yet; never closes it (its owner does).
final class CountingInputStream: ByteInputStream, @unchecked Sendable {
    private let inner: ByteInputStream
    private let counters: ProgressCounters
    private let measuresSize: Bool

    init(wrapping inner: ByteInputStream, counters: ProgressCounters, measuresSize: Bool) {
        self.inner = inner
        self.counters = counters
        self.measuresSize = measuresSize
        super.init()
    }

    override func openBacking() throws {
        if inner.streamStatus == .notOpen { inner.open() }
        try inner.throwIfFailed()
        if measuresSize, let file = inner as? FileInputStream {
            var info = stat()
            if fstat(file.fileDescriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                let offset = inner.property(forKey: .fileCurrentOffset) as? Int64 ?? 0
                counters.inputSize.store(max(0, Int64(info.st_size) - offset), ordering: .relaxed)
            }
        }
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.read(buffer, maxLength: maxLength)
        if count < 0 { throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
        counters.bytesIn.wrappingAdd(Int64(count), ordering: .relaxed)
        return count
    }

    override func property(forKey key: ByteStream.PropertyKey) -> Any? {
        inner.property(forKey: key)
    }

    override func setProperty(_ value: Any?, forKey key: ByteStream.PropertyKey) -> Bool {
        guard inner.setProperty(value, forKey: key) else { return false }
        if streamStatus == .atEnd { setStatus(.open) }
        return true
    }
}

/// Passes writes through to `inner` and adds them to ``ProgressCounters/bytesOut``. A failed
/// write throws `inner`'s error unchanged (its target stays "standard output" or the path).
///
/// Ownership: opens `inner` if it is not open yet; closes it on ``ByteStream/close()`` when
/// `closesInnerStream` (then throwing its error, a failed `close(2)` say).
final class CountingOutputStream: ByteOutputStream, @unchecked Sendable {
    private let inner: ByteOutputStream
    private let counters: ProgressCounters
    private let closesInnerStream: Bool

    init(wrapping inner: ByteOutputStream, counters: ProgressCounters, closesInnerStream: Bool) {
        self.inner = inner
        self.counters = counters
        self.closesInnerStream = closesInnerStream
        super.init()
    }

    override func openBacking() throws {
        if inner.streamStatus == .notOpen { inner.open() }
        try inner.throwIfFailed()
    }

    override func closeBacking() throws {
        guard closesInnerStream else { return }
        inner.close()
        try inner.throwIfFailed()
    }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.write(buffer, maxLength: maxLength)
        if count < 0 { throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "write") }
        counters.bytesOut.wrappingAdd(Int64(count), ordering: .relaxed)
        return count
    }

    override var isFull: Bool { inner.isFull }
}

// MARK: Standard error

/// Standard error as a command run writes it: its diagnostics and the progress display of the
/// job running. Writes never interleave (one serial queue), and a diagnostic first ends the
/// display (stopping and joining its timer, erasing the line), so every `gzstream: …` message
/// starts on a clean line and nothing is drawn after it.
///
/// Ownership: writes to `stream` but never closes it. Thread safety: ``write(_:)`` and
/// ``beginProgress(name:)`` from the command's thread only; a reporter's timer thread draws
/// through the internal queue.
/// The columns of the progress line shown on the terminal at descriptor 2, 0 when none: kept
/// by the console for the interrupt handler (``installInterruptCleanup()``), which erases it.
let progressColumnsShown = Atomic<Int>(0)
/// Set by the interrupt handler before it erases the line: no draw may start after it.
let progressStopped = Atomic<Bool>(false)
/// `true` while a draw writes to the terminal: the interrupt handler waits for it to end
/// before erasing, so the line it erases is the last one written (a Dekker pair with
/// ``progressStopped``: each side stores its flag, then reads the other's).
let progressDrawing = Atomic<Bool>(false)

final class StandardErrorConsole: @unchecked Sendable {
    private let stream: ByteOutputStream
    /// Whether standard error is a terminal: the line is then redrawn in place.
    let isTerminal: Bool
    /// The descriptor to ask the terminal's width, when `stream` is a ``FileOutputStream``.
    private let descriptor: Int32?
    private let guardQueue = DispatchQueue(label: "gzstream.standard-error")
    /// Guarded by guardQueue: the columns (``ProgressFormat/columns(_:)``) of the progress line
    /// on the terminal now, 0 when none is shown.
    private var shownCount = 0 {
        // Told to the interrupt handler when the line is on the process's standard error.
        didSet { if descriptor == STDERR_FILENO { progressColumnsShown.store(shownCount, ordering: .sequentiallyConsistent) } }
    }
    /// The command's thread only: the display running, if any.
    private var current: ProgressReporter?

    init(stream: ByteOutputStream, isTerminal: Bool) {
        self.stream = stream
        self.isTerminal = isTerminal
        descriptor = (stream as? FileOutputStream)?.fileDescriptor
    }

    /// Writes a diagnostic: ends the display running first (no last line), erases its line.
    func write(_ text: String) {
        endProgress(completed: false)
        guardQueue.sync {
            eraseLine()
            try? stream.writeAll(Array(text.utf8))
        }
    }

    /// Starts the display of one job (ending one still running, which should not happen).
    func beginProgress(name: String) -> ProgressReporter {
        endProgress(completed: false)
        let reporter = ProgressReporter(name: name, console: self)
        current = reporter
        reporter.start()
        return reporter
    }

    /// Ends the display running, if any: see ``ProgressReporter/end(completed:)``.
    func endProgress(completed: Bool) {
        guard let reporter = current else { return }
        current = nil
        reporter.end(completed: completed)
    }

    /// Draws `line`: on a terminal over the one shown (padded with spaces over a longer one),
    /// else as a line of its own. Called by the timer thread, and at the end of a job.
    func draw(_ line: String) {
        guardQueue.sync {
            if isTerminal {
                let count = ProgressFormat.columns(line)
                let padding = String(repeating: " ", count: max(0, shownCount - count))
                let gated = descriptor == STDERR_FILENO
                if gated {
                    progressDrawing.store(true, ordering: .sequentiallyConsistent)
                    guard !progressStopped.load(ordering: .sequentiallyConsistent) else {
                        progressDrawing.store(false, ordering: .sequentiallyConsistent)
                        return
                    }
                }
                // A signal during the write must erase all of it (FileSystem.swift's handler
                // reads the count): the widest line that may be on screen is published first.
                shownCount = max(shownCount, count)
                try? stream.writeAll(Array(("\r" + line + padding).utf8))
                shownCount = count
                if gated { progressDrawing.store(false, ordering: .sequentiallyConsistent) }
            } else {
                try? stream.writeAll(Array((line + "\n").utf8))
            }
        }
    }

    /// Erases the line shown, leaving the cursor at its start.
    func erase() {
        guardQueue.sync { eraseLine() }
    }

    /// Only on guardQueue.
    private func eraseLine() {
        guard shownCount > 0 else { return }
        try? stream.writeAll(Array(("\r" + String(repeating: " ", count: shownCount) + "\r").utf8))
        shownCount = 0
    }

    /// The terminal's width in columns, or 80 when it cannot be had (a pseudo-terminal that
    /// was given no size says 0). Asked at each draw, so a resized window is followed.
    /// The corresponding C function is `ioctl(2)` with `TIOCGWINSZ`.
    var width: Int {
        var size = winsize()
        if let descriptor, ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        return 80
    }
}

// MARK: The reporter

/// The progress display of one job (pack, unpack or test of one file): its counters, and a
/// timer thread that draws the line through the console once the job has run for
/// ``delay``, then every ``terminalInterval`` on a terminal or ``plainInterval`` elsewhere.
/// The rate is that of the input over the last ``rateWindow`` (so a stalled input shows it).
///
/// Thread safety: ``end(completed:)`` from the command's thread; the counters from any thread.
final class ProgressReporter: @unchecked Sendable {
    /// How long a job runs before its line first appears: 1 s.
    static let delay: UInt64 = 1_000_000_000
    /// Between redraws on a terminal: 250 ms.
    static let terminalInterval: UInt64 = 250_000_000
    /// Between plain lines: 1 s.
    static let plainInterval: UInt64 = 1_000_000_000
    /// The rate is measured over about the last 5 s.
    static let rateWindow: UInt64 = 5_000_000_000

    let counters = ProgressCounters()
    private let name: String
    private let console: StandardErrorConsole
    private let startTime: UInt64
    private let stopSignal = DispatchSemaphore(value: 0)
    private let timer = DispatchGroup()
    /// The timer thread's only, until it is joined: (time in ns, bytes in) at each draw, the
    /// oldest within ``rateWindow`` first.
    private var samples: [(time: UInt64, bytesIn: Int64)] = []
    /// The command's thread only.
    private var ended = false

    fileprivate init(name: String, console: StandardErrorConsole) {
        self.name = name
        self.console = console
        startTime = DispatchTime.now().uptimeNanoseconds
        samples = [(startTime, 0)]
    }

    fileprivate func start() {
        DispatchQueue(label: "gzstream.progress").async(group: timer) { [self] in
            var next = startTime + Self.delay
            let interval = console.isTerminal ? Self.terminalInterval : Self.plainInterval
            while stopSignal.wait(timeout: DispatchTime(uptimeNanoseconds: next)) == .timedOut {
                let now = DispatchTime.now().uptimeNanoseconds
                console.draw(ProgressFormat.line(name: name, snapshot(at: now),
                                                 width: console.isTerminal ? console.width : nil))
                next = now + interval
            }
        }
    }

    /// The counters now, and the rate since the oldest sample in the window. Timer thread only.
    private func snapshot(at now: UInt64) -> ProgressSnapshot {
        let bytesIn = counters.bytesIn.load(ordering: .relaxed)
        samples.append((now, bytesIn))
        while samples.count > 2, now - samples[1].time >= Self.rateWindow { samples.removeFirst() }
        let oldest = samples[0]
        let seconds = Double(now - oldest.time) / 1e9
        return ProgressSnapshot(bytesIn: bytesIn, bytesOut: counters.bytesOut.load(ordering: .relaxed),
                                inputSize: inputSize,
                                bytesPerSecond: seconds > 0 ? Double(bytesIn - oldest.bytesIn) / seconds : nil)
    }

    private var inputSize: Int64? {
        let size = counters.inputSize.load(ordering: .relaxed)
        return size >= 0 ? size : nil
    }

    /// Stops the timer and waits for it; then erases the line on a terminal, or, elsewhere,
    /// writes a last line when `completed` (the job did its work without a message). Ending
    /// twice does nothing.
    func end(completed: Bool) {
        guard !ended else { return }
        ended = true
        stopSignal.signal()
        timer.wait()
        if console.isTerminal {
            console.erase()
        } else if completed {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - startTime) / 1e9
            let bytesIn = counters.bytesIn.load(ordering: .relaxed)
            console.draw(ProgressFormat.line(name: name, ProgressSnapshot(
                bytesIn: bytesIn, bytesOut: counters.bytesOut.load(ordering: .relaxed), inputSize: inputSize,
                bytesPerSecond: seconds > 0 ? Double(bytesIn) / seconds : nil, finishedAfter: seconds)))
        }
    }

    /// `input`, counted into ``counters``; its size (a regular file's) gives the percent and
    /// the time left unless `measuresSize` is `false` (a range read through the index reads
    /// only part of the file).
    func counting(_ input: ByteInputStream, measuresSize: Bool = true) -> ByteInputStream {
        CountingInputStream(wrapping: input, counters: counters, measuresSize: measuresSize)
    }

    /// `output`, counted into ``counters``; closing it closes `output` when `closesOutput`.
    func counting(_ output: ByteOutputStream, closesOutput: Bool) -> ByteOutputStream {
        CountingOutputStream(wrapping: output, counters: counters, closesInnerStream: closesOutput)
    }

    /// Adds `count` bytes to the output count (for `test`, which writes nothing).
    func addOutput(_ count: Int) {
        counters.bytesOut.wrappingAdd(Int64(count), ordering: .relaxed)
    }
}

extension Command {
    /// Starts the progress display of one job reading `name`, or returns `nil` when it is not
    /// shown: `--progress` / `--no-progress` (the last given) decide; without them it is shown
    /// when standard error is a terminal, `-q` is not given, the job's output does not go to
    /// that terminal too (`unpack -c` on a terminal), and the command is not in gzip mode
    /// (`tar -I gzstream` must stay as quiet as gzip there). pack, unpack and test only.
    func beginProgress(_ name: String, writesStandardOutput: Bool) -> ProgressReporter? {
        guard options.mode == .pack || options.mode == .unpack || options.mode == .test else { return nil }
        let shown = options.progress
            ?? (environment.errorIsTerminal && !options.quiet && !options.gzipMode
                && !(writesStandardOutput && environment.outputIsTerminal))
        return shown ? console.beginProgress(name: name) : nil
    }
}

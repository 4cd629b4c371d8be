import ByteStreams
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The progress line on a terminal has two sides: the console draws it from the command's
// threads, and the interrupt handler erases it when a signal ends the process. They share the
// three atomics below and nothing else.

// MARK: Shared with the interrupt handler

/// The columns of the progress line shown on the terminal at descriptor 2, 0 when none: kept
/// by the console for the interrupt handler (``installInterruptCleanup()``), which erases it.
let progressColumnsShown = Atomic<Int>(0)
/// Set by the interrupt handler before it erases the line: no draw may start after it.
let progressStopped = Atomic<Bool>(false)
/// `true` while a draw writes to the terminal: the interrupt handler waits for it to end
/// before erasing, so the line it erases is the last one written (a Dekker pair with
/// ``progressStopped``: each side stores its flag, then reads the other's).
let progressDrawing = Atomic<Bool>(false)

// MARK: The terminal's size

/// How many times SIGWINCH has arrived: the terminal's size changed. Counted by the handler
/// (``watchTerminalSize()``); a timer that sees the count move redraws its line at once, to
/// the new width.
let terminalResizeCount = Atomic<Int>(0)

/// Installs, once per process, the SIGWINCH handler, which only adds one to
/// ``terminalResizeCount`` (async-signal-safe: an atomic, nothing else). With glibc's
/// `signal(3)` the calls it interrupts are restarted (`SA_RESTART`); the system-call layer
/// retries the others on `EINTR`.
private let terminalSizeWatched: Bool = {
    _ = terminalResizeCount.load(ordering: .relaxed)  // initialised here, not in the handler
    signal(SIGWINCH) { _ in terminalResizeCount.wrappingAdd(1, ordering: .relaxed) }
    return true
}()

/// Starts counting SIGWINCH (see ``terminalResizeCount``); calling it again does nothing.
func watchTerminalSize() {
    _ = terminalSizeWatched
}

/// Stops further draws, waits (at most about 200 ms: the draw may be the very thread this
/// handler interrupted) for a draw under way to end, then writes `\r`, as many spaces as the
/// progress line has columns (no more than the terminal has), `\r` to standard error, when a
/// line is shown.
/// Async-signal-safe: atomics, no allocation, `nanosleep(2)`, `ioctl(2)` and `write(2)` only.
func eraseProgressLineFromSignalHandler() {
    progressStopped.store(true, ordering: .sequentiallyConsistent)
    var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
    var pauses = 0
    while pauses < 200, progressDrawing.load(ordering: .sequentiallyConsistent) {
        nanosleep(&pause, nil)
        pauses += 1
    }
    var remaining = progressColumnsShown.exchange(0, ordering: .sequentiallyConsistent)
    guard remaining > 0 else { return }
    // A terminal shrunk since the last draw: spaces past its width would wrap onto a new row.
    // (ioctl(2) here is the system call itself, as write(2) is.)
    var size = winsize()
    if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
        remaining = min(remaining, Int(size.ws_col))
    }
    var carriageReturn = UInt8(ascii: "\r")
    _ = write(STDERR_FILENO, &carriageReturn, 1)
    let spaces: (UInt64, UInt64, UInt64, UInt64) = (0x2020_2020_2020_2020, 0x2020_2020_2020_2020,
                                                    0x2020_2020_2020_2020, 0x2020_2020_2020_2020)
    withUnsafeBytes(of: spaces) { buffer in
        while remaining > 0 {
            let written = write(STDERR_FILENO, buffer.baseAddress, min(remaining, buffer.count))
            if written <= 0 { break }
            remaining -= written
        }
    }
    _ = write(STDERR_FILENO, &carriageReturn, 1)
}

// MARK: The drawing side

/// Standard error as a command run writes it: its diagnostics and the progress display of the
/// job running. Writes never interleave (one serial queue), and a diagnostic first ends the
/// display (stopping and joining its timer, erasing the line), so every `gzstream: …` message
/// starts on a clean line and nothing is drawn after it.
///
/// Ownership: writes to `stream` but never closes it. Thread safety: ``write(_:)`` and
/// ``beginProgress(name:)`` from the command's thread only; a reporter's timer thread draws
/// through the internal lock. `Sendable` is unchecked for what the compiler cannot see: the
/// ``QueueGuarded`` screen holds `stream` (not `Sendable`), so only the lock's holder writes to
/// it, and `current` is the command's thread's.
final class StandardErrorConsole: @unchecked Sendable {
    /// Whether standard error is a terminal: the line is then redrawn in place.
    let isTerminal: Bool
    /// The descriptor to ask the terminal's width, when `stream` is a ``FileOutputStream``.
    private let descriptor: Int32?
    /// Standard error and the columns (``ProgressFormat/columns(_:)``) of the progress line on
    /// the terminal now, 0 when none is shown.
    private struct Screen {
        let stream: ByteOutputStream
        var shownCount = 0
    }

    private let screen: QueueGuarded<Screen>
    /// The command's thread only: the display running, if any.
    private var current: ProgressReporter?

    /// Reads the terminal's width in columns: ``terminalWidth(of:)`` unless a test gives its own.
    private let readWidth: @Sendable () -> Int

    /// - Parameter terminalWidth: Reads the width of the terminal (tests); by default
    ///   ``terminalWidth(of:)`` of `stream`'s descriptor.
    init(stream: ByteOutputStream, isTerminal: Bool, terminalWidth: (@Sendable () -> Int)? = nil) {
        screen = QueueGuarded(Screen(stream: stream), label: "gzstream.standard-error")
        self.isTerminal = isTerminal
        let descriptor = (stream as? FileOutputStream)?.fileDescriptor
        self.descriptor = descriptor
        readWidth = terminalWidth ?? { Self.terminalWidth(of: descriptor) }
    }

    /// Writes a diagnostic: ends the display running first (no last line), erases its line.
    func write(_ text: String) {
        endProgress(completed: false)
        screen.withLock { screen in
            eraseLine(&screen)
            try? screen.stream.writeAll(Array(text.utf8))
        }
    }

    /// Starts the display of one job (ending one still running, which should not happen).
    func beginProgress(name: String) -> ProgressReporter {
        endProgress(completed: false)
        if isTerminal && descriptor != nil { watchTerminalSize() }
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
    /// else as a line of its own. Called by the tests; see ``draw(making:)``.
    func draw(_ line: String) {
        draw(making: { _ in line })
    }

    /// Draws the line that `makeLine` makes for the terminal's width in columns (read now, so
    /// a resized window is followed; `nil` where standard error is no terminal): on a terminal
    /// over the line shown, with spaces over the rest of it up to the width at most
    /// (``ProgressFormat/padding(after:over:width:)``), else as a line of its own. Called by
    /// the timer thread, and at the end of a job.
    func draw(making makeLine: (_ width: Int?) -> String) {
        screen.withLock { screen in
            if isTerminal {
                let width = readWidth()
                let line = makeLine(width)
                let count = ProgressFormat.columns(line)
                let padding = String(repeating: " ", count: ProgressFormat.padding(after: count, over: screen.shownCount, width: width))
                let gated = descriptor == STDERR_FILENO
                if gated {
                    progressDrawing.store(true, ordering: .sequentiallyConsistent)
                    guard !progressStopped.load(ordering: .sequentiallyConsistent) else {
                        progressDrawing.store(false, ordering: .sequentiallyConsistent)
                        return
                    }
                }
                // A signal during the write must erase all of it (the interrupt handler, above,
                // reads the count): the widest line that may be on screen is published first.
                show(max(screen.shownCount, count), on: &screen)
                try? screen.stream.writeAll(Array(("\r" + line + padding).utf8))
                show(count, on: &screen)
                if gated { progressDrawing.store(false, ordering: .sequentiallyConsistent) }
            } else {
                try? screen.stream.writeAll(Array((makeLine(nil) + "\n").utf8))
            }
        }
    }

    /// Erases the line shown, leaving the cursor at its start.
    func erase() {
        screen.withLock { eraseLine(&$0) }
    }

    /// Inside the screen's lock. As many spaces as the line has columns, up to the terminal's
    /// width (it may have shrunk since the line was drawn).
    private func eraseLine(_ screen: inout Screen) {
        guard screen.shownCount > 0 else { return }
        let count = ProgressFormat.padding(after: 0, over: screen.shownCount, width: readWidth())
        try? screen.stream.writeAll(Array(("\r" + String(repeating: " ", count: count) + "\r").utf8))
        show(0, on: &screen)
    }

    /// Inside the screen's lock: `count` columns are shown, which the interrupt handler is
    /// told when the line is on the process's standard error.
    private func show(_ count: Int, on screen: inout Screen) {
        screen.shownCount = count
        if descriptor == STDERR_FILENO { progressColumnsShown.store(count, ordering: .sequentiallyConsistent) }
    }

    /// The width in columns of the terminal at `descriptor`, or 80 when it cannot be had (no
    /// descriptor, or a pseudo-terminal that was given no size says 0).
    /// The corresponding C function is `ioctl(2)` with `TIOCGWINSZ`.
    static func terminalWidth(of descriptor: Int32?) -> Int {
        var size = winsize()
        if let descriptor, ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        return 80
    }
}

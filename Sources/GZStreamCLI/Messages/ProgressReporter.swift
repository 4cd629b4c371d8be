import ByteStreams
import Dispatch

/// The progress display of one job (pack, unpack or test of one file): its counters, and a
/// timer thread that draws the line through the console once the job has run for
/// ``delay``, then every ``terminalInterval`` on a terminal (and at once, to the new width,
/// when the terminal is resized) or ``plainInterval`` elsewhere.
/// The rate is that of the input over the last ``rateWindow`` (so a stalled input shows it).
///
/// Thread safety: ``end(completed:)`` from the command's thread; the counters from any thread.
/// `Sendable` is unchecked for the two `var`s, each one thread's as its comment says (the
/// timer's `samples` until ``end(completed:)`` joins it).
final class ProgressReporter: @unchecked Sendable {
    /// How long a job runs before its line first appears: 1 s.
    static let delay: UInt64 = 1_000_000_000
    /// Between redraws on a terminal: 250 ms.
    static let terminalInterval: UInt64 = 250_000_000
    /// Between plain lines: 1 s.
    static let plainInterval: UInt64 = 1_000_000_000
    /// How soon a line on a terminal is redrawn after SIGWINCH: within 50 ms.
    static let resizeCheckInterval: UInt64 = 50_000_000
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

    init(name: String, console: StandardErrorConsole) {
        self.name = name
        self.console = console
        startTime = DispatchTime.now().uptimeNanoseconds
        samples = [(startTime, 0)]
    }

    func start() {
        DispatchQueue(label: "gzstream.progress").async(group: timer) { [self] in
            var next = startTime + Self.delay
            let interval = console.isTerminal ? Self.terminalInterval : Self.plainInterval
            // On a terminal the wait is cut in slices, so that a line shown is redrawn at once
            // (within a slice) to a new width when SIGWINCH says the terminal was resized.
            let slice = console.isTerminal ? Self.resizeCheckInterval : interval
            var resizesSeen = terminalResizeCount.load(ordering: .relaxed)
            var drawn = false
            while true {
                let wake = min(next, DispatchTime.now().uptimeNanoseconds + slice)
                guard stopSignal.wait(timeout: DispatchTime(uptimeNanoseconds: wake)) == .timedOut else { break }
                let now = DispatchTime.now().uptimeNanoseconds
                let resizes = terminalResizeCount.load(ordering: .relaxed)
                guard now >= next || (drawn && resizes != resizesSeen) else { continue }
                resizesSeen = resizes
                console.draw { width in ProgressFormat.line(name: name, snapshot(at: now), width: width) }
                drawn = true
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
        let asked: Bool?
        switch options.command {
        // pack --tar reads no input stream to measure: no progress display (yet).
        case .pack(let pack) where pack.tar != nil: return nil
        case .pack(let pack), .send(let pack, _): asked = pack.progress
        case .unpack(let unpack), .receive(let unpack, _): asked = unpack.progress
        case .test(let test): asked = test.progress
        case .list, .index: return nil
        }
        let shown = asked
            ?? (environment.errorIsTerminal && !common.quiet && options.gzip == nil
                && !(writesStandardOutput && environment.outputIsTerminal))
        return shown ? console.beginProgress(name: name) : nil
    }
}

import ByteStreams
import Foundation
@testable import GZStreamCLI
import Testing
import TestSupport

// The progress display (Progress.swift): the formatter's text, standard error shared by the
// display and the diagnostics, and the real binary on a pseudo-terminal, into a file and into
// nothing by default.

@Suite("progress: the text of the line", .onDedicatedThreads)
struct ProgressFormatTests {
    @Test("byte counts: bytes up to 1023, then one decimal in binary units up to EiB", arguments: [
        (Int64(0), "0 B"), (1, "1 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
        (4095, "4.0 KiB"), (4097, "4.0 KiB"), (1_048_524, "1023.9 KiB"), (1_048_525, "1.0 MiB"),
        (1_048_576, "1.0 MiB"), (1_048_577, "1.0 MiB"), (5 << 30, "5.0 GiB"), (1 << 40, "1.0 TiB"),
        (1 << 50, "1.0 PiB"), (1 << 60, "1.0 EiB"), (Int64.max, "8.0 EiB"), (-5, "0 B"),
    ])
    func byteCounts(bytes: Int64, text: String) {
        #expect(ProgressFormat.byteCount(bytes) == text)
    }

    @Test("rates: as byte counts per second; nothing that is not a finite positive rate breaks it", arguments: [
        (0.0, "0 B/s"), (0.4, "0 B/s"), (1023.4, "1023 B/s"), (1023.6, "1.0 KiB/s"),
        (85.2 * 1_048_576, "85.2 MiB/s"), (3.5 * 1_073_741_824, "3.5 GiB/s"), (1e30, "8.0 EiB/s"),
        (Double.infinity, "0 B/s"), (Double.nan, "0 B/s"), (-3, "0 B/s"),
    ])
    func rates(bytesPerSecond: Double, text: String) {
        #expect(ProgressFormat.rate(bytesPerSecond) == text)
    }

    @Test("durations: m:ss, then h:mm:ss, then 'over 99 h'", arguments: [
        (0.0, "0:00"), (0.4, "0:00"), (7, "0:07"), (59.6, "1:00"), (61, "1:01"), (3599, "59:59"),
        (3600, "1:00:00"), (3661, "1:01:01"), (359_999, "99:59:59"), (359_999.6, "over 99 h"),
        (1e300, "over 99 h"), (-1, "0:00"), (Double.nan, "0:00"),
    ])
    func durations(seconds: Double, text: String) {
        #expect(ProgressFormat.duration(seconds: seconds) == text)
    }

    @Test("percent: rounded down, 100 only when all is read; an empty or grown input is 100", arguments: [
        (Int64(0), Int64(100), 0), (50, 100, 50), (99, 100, 99), (999, 1000, 99), (100, 100, 100),
        (0, 0, 100), (150, 100, 100), (Int64.max - 1, Int64.max, 99), (Int64.max, Int64.max, 100),
        (1, Int64.max, 0),
    ])
    func percents(bytesIn: Int64, size: Int64, percent: Int) {
        #expect(ProgressFormat.percent(bytesIn, of: size) == percent)
    }

    @Test("time left: none without a rate or at rate 0; 0 once all is read")
    func secondsLeft() {
        #expect(ProgressFormat.secondsLeft(0, of: 100, bytesPerSecond: nil) == nil)
        #expect(ProgressFormat.secondsLeft(0, of: 100, bytesPerSecond: 0) == nil)
        #expect(ProgressFormat.secondsLeft(0, of: 100, bytesPerSecond: .nan) == nil)
        #expect(ProgressFormat.secondsLeft(50, of: 100, bytesPerSecond: 10) == 5)
        #expect(ProgressFormat.secondsLeft(150, of: 100, bytesPerSecond: 10) == 0)
        #expect(ProgressFormat.secondsLeft(0, of: 0, bytesPerSecond: 10) == 0)
    }

    @Test("lines: known and unknown size, no rate yet, an empty input, the end, very large values",
          arguments: [
        (ProgressSnapshot(bytesIn: 512 << 20, bytesOut: 126_143_488, inputSize: 1_288_490_189,
                          bytesPerSecond: 85.2 * 1_048_576, finishedAfter: nil),
         "gzstream: big.txt: 512.0 MiB in, 120.3 MiB out, 85.2 MiB/s, 41%, 0:08 left"),
        (ProgressSnapshot(bytesIn: 512 << 20, bytesOut: 126_143_488, inputSize: nil,
                          bytesPerSecond: 85.2 * 1_048_576, finishedAfter: nil),
         "gzstream: big.txt: 512.0 MiB in, 120.3 MiB out, 85.2 MiB/s"),
        (ProgressSnapshot(bytesIn: 4096, bytesOut: 10, inputSize: 8192, bytesPerSecond: nil, finishedAfter: nil),
         "gzstream: big.txt: 4.0 KiB in, 10 B out, 50%"),
        (ProgressSnapshot(bytesIn: 4096, bytesOut: 10, inputSize: 8192, bytesPerSecond: 0, finishedAfter: nil),
         "gzstream: big.txt: 4.0 KiB in, 10 B out, 0 B/s, 50%"),
        (ProgressSnapshot(bytesIn: 0, bytesOut: 0, inputSize: 0, bytesPerSecond: 0, finishedAfter: nil),
         "gzstream: big.txt: 0 B in, 0 B out, 0 B/s, 100%"),
        (ProgressSnapshot(bytesIn: 0, bytesOut: 0, inputSize: nil, bytesPerSecond: nil, finishedAfter: nil),
         "gzstream: big.txt: 0 B in, 0 B out"),
        (ProgressSnapshot(bytesIn: 1_288_490_189, bytesOut: 314_572_800, inputSize: 1_288_490_189,
                          bytesPerSecond: 85.2 * 1_048_576, finishedAfter: 14.4),
         "gzstream: big.txt: 1.2 GiB in, 300.0 MiB out, 85.2 MiB/s, done in 0:14"),
        (ProgressSnapshot(bytesIn: 0, bytesOut: 0, inputSize: nil, bytesPerSecond: nil, finishedAfter: 0),
         "gzstream: big.txt: 0 B in, 0 B out, done in 0:00"),
        (ProgressSnapshot(bytesIn: Int64.max, bytesOut: Int64.max, inputSize: Int64.max, bytesPerSecond: 1,
                          finishedAfter: nil),
         "gzstream: big.txt: 8.0 EiB in, 8.0 EiB out, 1 B/s, 100%, 0:00 left"),
        (ProgressSnapshot(bytesIn: 0, bytesOut: 0, inputSize: Int64.max, bytesPerSecond: 1, finishedAfter: nil),
         "gzstream: big.txt: 0 B in, 0 B out, 1 B/s, 0%, over 99 h left"),
        (ProgressSnapshot(bytesIn: 1 << 40, bytesOut: 1 << 41, inputSize: 3 << 40, bytesPerSecond: 1_073_741_824,
                          finishedAfter: nil),
         "gzstream: big.txt: 1.0 TiB in, 2.0 TiB out, 1.0 GiB/s, 33%, 34:08 left"),
    ])
    func lines(snapshot: ProgressSnapshot, text: String) {
        #expect(ProgressFormat.line(name: "big.txt", snapshot) == text)
    }

    @Test("a name's control characters are escaped, as in diagnostics")
    func controlCharacters() {
        let line = ProgressFormat.line(name: "a\nb\u{1b}[2J", ProgressSnapshot(bytesIn: 1, bytesOut: 2))
        #expect(line == "gzstream: a\\u{a}b\\u{1b}[2J: 1 B in, 2 B out")
    }

    @Test("on a narrow terminal the rate, the bytes out and in and `gzstream: ` go first, then the name's start; never width or more")
    func width() {
        let snapshot = ProgressSnapshot(bytesIn: 1024, bytesOut: 2048, inputSize: 4096, bytesPerSecond: 1024)
        let name = "some/long/directory/name.txt"
        let full = ProgressFormat.line(name: name, snapshot)
        #expect(full == "gzstream: some/long/directory/name.txt: 1.0 KiB in, 2.0 KiB out, 1.0 KiB/s, 25%, 0:03 left")
        #expect(ProgressFormat.line(name: name, snapshot, width: full.count + 1) == full)
        let shortened: [(width: Int, line: String)] = [
            (90, "gzstream: some/long/directory/name.txt: 1.0 KiB in, 2.0 KiB out, 25%, 0:03 left"),
            (80, "gzstream: some/long/directory/name.txt: 1.0 KiB in, 2.0 KiB out, 25%, 0:03 left"),
            (60, "gzstream: some/long/directory/name.txt: 25%, 0:03 left"),
            (50, "some/long/directory/name.txt: 25%, 0:03 left"),
            // `…` is counted as 2 columns (it is wide in East Asian terminals).
            (40, "…ng/directory/name.txt: 25%, 0:03 left"),
            (30, "…ry/name.txt: 25%, 0:03 left"),
            (20, "…t: 25%, 0:03 left"),
            (10, "…: 25%, "),
        ]
        for (width, line) in shortened {
            #expect(ProgressFormat.line(name: name, snapshot, width: width) == line, "width \(width)")
        }
        for width in [1, 2, 10, 40, 60, 79, 80, 120] {
            #expect(ProgressFormat.columns(ProgressFormat.line(name: name, snapshot, width: width)) <= width - 1)
        }
    }

    @Test("wide characters count 2 columns, so a name in them does not wrap the line either")
    func wideCharacters() {
        let snapshot = ProgressSnapshot(bytesIn: 1024, bytesOut: 2048, inputSize: 4096, bytesPerSecond: 1024)
        #expect(ProgressFormat.columns("日本語.txt") == 10)
        #expect(ProgressFormat.line(name: "日本語のファイル名.txt", snapshot, width: 76)
                == "gzstream: 日本語のファイル名.txt: 1.0 KiB in, 2.0 KiB out, 25%, 0:03 left")
        #expect(ProgressFormat.line(name: "日本語のファイル名.txt", snapshot, width: 30) == "…イル名.txt: 25%, 0:03 left")
        for width in [1, 2, 10, 40, 60, 79, 80, 120] {
            let line = ProgressFormat.line(name: "日本語のファイル名.txt", snapshot, width: width)
            #expect(ProgressFormat.columns(line) <= width - 1, "\(line)")
        }
    }
}

@Suite("progress: standard error shared by the display and the diagnostics", .onDedicatedThreads)
struct StandardErrorConsoleTests {
    private func written(_ stream: MemoryOutputStream) -> String {
        let data = stream.property(forKey: .dataWrittenToMemoryStream) as? Data ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    @Test("on a terminal: lines drawn over each other, erased before a diagnostic")
    func terminal() {
        let stream = MemoryOutputStream()
        stream.open()
        let console = StandardErrorConsole(stream: stream, isTerminal: true)
        console.draw("abc")
        console.draw("a")
        console.write("gzstream: x: problem\n")
        console.write("gzstream: y: another\n")
        #expect(written(stream) == "\rabc" + "\ra  " + "\r \r" + "gzstream: x: problem\n" + "gzstream: y: another\n")
        #expect(Screen(written(stream)).lines == ["gzstream: x: problem", "gzstream: y: another", ""])
    }

    @Test("elsewhere: plain lines, no control characters")
    func plain() {
        let stream = MemoryOutputStream()
        stream.open()
        let console = StandardErrorConsole(stream: stream, isTerminal: false)
        console.draw("abc")
        console.draw("a")
        console.write("gzstream: x: problem\n")
        #expect(written(stream) == "abc\na\ngzstream: x: problem\n")
    }

    @Test("a job shorter than a second shows nothing on a terminal; elsewhere only its last line",
          arguments: [true, false])
    func shortJob(isTerminal: Bool) {
        let stream = MemoryOutputStream()
        stream.open()
        let console = StandardErrorConsole(stream: stream, isTerminal: isTerminal)
        let reporter = console.beginProgress(name: "n")
        reporter.addOutput(5)
        console.endProgress(completed: true)
        console.endProgress(completed: true)  // ending twice does nothing
        reporter.end(completed: true)
        let text = written(stream)
        if isTerminal {
            // A loaded machine may have drawn once after a second; erased, then.
            #expect(Screen(text).lines.allSatisfy { $0.isEmpty }, "\(text.debugDescription)")
        } else {
            #expect(text.hasPrefix("gzstream: n: 0 B in, 5 B out, ") && text.contains(", done in ")
                    && text.hasSuffix("\n") && text.filter { $0 == "\n" }.count == 1, "\(text.debugDescription)")
        }
    }

    @Test("a diagnostic during a job ends its display: on a terminal on a clean line, elsewhere no last line",
          arguments: [true, false])
    func diagnosticEndsDisplay(isTerminal: Bool) {
        let stream = MemoryOutputStream()
        stream.open()
        let console = StandardErrorConsole(stream: stream, isTerminal: isTerminal)
        let reporter = console.beginProgress(name: "n")
        reporter.addOutput(5)
        console.write("gzstream: n: problem\n")
        reporter.end(completed: true)  // already ended by the diagnostic: nothing more
        let text = written(stream)
        #expect(Screen(text).lines.filter { !$0.isEmpty }.last == "gzstream: n: problem", "\(text.debugDescription)")
        #expect(text.hasSuffix("gzstream: n: problem\n"))
        if !isTerminal { #expect(!text.contains("done in")) }
    }
}

/// What a terminal shows after `text`: `\r` goes back to the start of the line, `\n` to the
/// start of the next (a terminal's output processing sends `\r\n` for a program's `\n`),
/// anything else is drawn over what is there. Lines are given without their trailing spaces.
struct Screen {
    private(set) var rows: [[Character]] = [[]]
    private(set) var row = 0
    private(set) var column = 0

    init(_ text: String) {
        for character in text {
            switch character {
            case "\r": column = 0
            case "\n":
                column = 0
                row += 1
                if row == rows.count { rows.append([]) }
            case "\r\n":  // one Character in Swift
                column = 0
                row += 1
                if row == rows.count { rows.append([]) }
            default:
                while rows[row].count <= column { rows[row].append(" ") }
                rows[row][column] = character
                column += 1
            }
        }
    }

    var lines: [String] {
        rows.map { String($0).replacing(/\ +$/, with: "") }
    }

    /// Whether the cursor is at the start of an empty line.
    var isOnCleanLine: Bool { column == 0 && lines[row].isEmpty }
}

/// Whether `line` is a progress line as `--progress` writes it where standard error is not a
/// terminal.
private func isPlainLine(_ line: Substring) -> Bool {
    line.wholeMatch(of: /gzstream: [^:]+: \d+(\.\d)? [KMGTPE]?i?B in, \d+(\.\d)? [KMGTPE]?i?B out(, \d+(\.\d)? [KMGTPE]?i?B\/s)?(, \d+%)?(, [0-9:]+ left)?(, done in [0-9:]+)?/) != nil
}

@Suite("progress: the command on a terminal, into a file, and by default into nothing", .onDedicatedThreads)
struct ProgressCLITests {
    /// Writes `first` then `second` into the shell's pipe with `pause` seconds between: a job
    /// that lasts at least that long.
    private func slowFeed(_ first: String, _ second: String, pause: String) -> String {
        "(cat \(shellQuoted(first)); sleep \(pause); cat \(shellQuoted(second)))"
    }

    /// Two gzip members (`hello ` and `world`), and the plain halves of a 128 KiB text.
    private func makeInputs(_ scratch: Scratch) throws -> (text: [UInt8], first: String, second: String) {
        let text = sampleText(byteCount: 128 * 1024, seed: 8)
        let first = try scratch.write("first", Array(text[..<(64 * 1024)]))
        let second = try scratch.write("second", Array(text[(64 * 1024)...]))
        return (text, first, second)
    }

    @Test("a slow pack on a terminal shows the line, redrawn in place, and ends on a clean line",
          .timeLimit(.minutes(1)))
    func slowPackOnTerminal() throws {
        try withScratch { scratch in
            let (text, first, second) = try makeInputs(scratch)
            let out = scratch.path("out.gz")
            let line = slowFeed(first, second, pause: "2") + " | " + shellQuoted(Locations.binary)
                + " pack -c > " + shellQuoted(out)
            let result = try runOnTerminal(line, in: scratch)
            #expect(result.status == 0 && !result.timedOut, "\(result)")
            let shown = result.out
            // 64 KiB came at once, the rest after the pause (a loaded machine may draw late).
            #expect(shown.contains(#/\rgzstream: standard input: (64|128)\.0 KiB in, /#), "\(shown.debugDescription)")
            #expect(!shown.contains("\n") && !shown.contains("\u{1b}"), "\(shown.debugDescription)")
            let screen = Screen(shown)
            #expect(screen.isOnCleanLine && screen.lines.allSatisfy { $0.isEmpty }, "\(shown.debugDescription)")
            #expect(try gunzip(out, in: scratch) == text)
        }
    }

    @Test("killed by SIGINT, SIGTERM or SIGHUP while the line is shown, it erases the line, then dies of the signal",
          .needsPseudoTerminal, .timeLimit(.minutes(1)), arguments: [("INT", 130), ("TERM", 143), ("HUP", 129)])
    func interruptedOnTerminal(signalName: String, status: Int) throws {
        try withScratch { scratch in
            let (_, first, _) = try makeInputs(scratch)
            // gzstream runs in the foreground (a background job of sh would ignore SIGINT),
            // exec'ed by a shell that wrote its PID first; the kill comes once the line shows.
            let pidPath = scratch.ioPath("pid")
            let statusPath = scratch.ioPath("status")
            let line = "{ sleep 3; kill -\(signalName) $(cat \(shellQuoted(pidPath))); } & "
                + "(cat \(shellQuoted(first)); sleep 10) | sh -c 'echo $$ > \"$1\"; exec \"$0\" pack -c > /dev/null' "
                + "\(shellQuoted(Locations.binary)) \(shellQuoted(pidPath)); echo $? > \(shellQuoted(statusPath))"
            let result = try runOnTerminal(line, in: scratch)
            #expect(!result.timedOut, "\(result)")
            #expect(try String(contentsOfFile: statusPath, encoding: .utf8) == "\(status)\n")
            let shown = result.out
            #expect(shown.contains("\rgzstream: standard input: 64.0 KiB in, "), "\(shown.debugDescription)")
            // Whatever the shell says of the signal after, no progress text is left on screen.
            #expect(!Screen(shown).lines.contains { $0.contains(" in, ") }, "\(shown.debugDescription)")
        }
    }

    @Test("an error after the line was shown starts on a clean line, and nothing is drawn after it",
          .timeLimit(.minutes(1)))
    func errorOnTerminal() throws {
        try withScratch { scratch in
            let (text, _, _) = try makeInputs(scratch)
            // A member cut short: its first 2 KiB, then (after the pause) nothing more.
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(text)).stdout
            let first = try scratch.write("cut.gz", Array(packed[..<2048]))
            let empty = try scratch.write("empty", [])
            let quiet = try gzstream(["unpack", "-c"], in: scratch, input: .file(first))
            #expect(quiet.status == 1 && quiet.errLines.count == 1, "\(quiet)")
            let line = slowFeed(first, empty, pause: "2") + " | " + shellQuoted(Locations.binary)
                + " unpack -c > /dev/null"
            let result = try runOnTerminal(line, in: scratch)
            #expect(result.status == 1 && !result.timedOut, "\(result)")
            let shown = result.out
            #expect(shown.contains("\rgzstream: standard input: 2.0 KiB in, "), "\(shown.debugDescription)")
            let screen = Screen(shown)
            #expect(screen.lines.filter { !$0.isEmpty } == [quiet.errLines[0]].map(String.init),
                    "\(shown.debugDescription)")
            #expect(screen.isOnCleanLine, "\(shown.debugDescription)")
        }
    }

    @Test("on a terminal, -q, --no-progress and gzip mode (tar -I) hide it, and so does output to that terminal",
          .timeLimit(.minutes(1)), arguments: ["pack -q -c > OUT", "pack --no-progress -c > OUT", "-c > OUT", "unpack -c"])
    func hiddenOnTerminal(command: String) throws {
        try withScratch { scratch in
            let (text, first, second) = try makeInputs(scratch)
            let out = scratch.path("out")
            // Two members, `hello ` and `world`, for unpack to write to the terminal.
            let hello = try scratch.write("hello.gz", try gzstream(["pack", "-c"], in: scratch,
                                                                    input: .bytes(Array("hello ".utf8))).stdout)
            let world = try scratch.write("world.gz", try gzstream(["pack", "-c"], in: scratch,
                                                                    input: .bytes(Array("world".utf8))).stdout)
            let unpacking = command.hasPrefix("unpack")
            let line = slowFeed(unpacking ? hello : first, unpacking ? world : second, pause: "1.5") + " | "
                + shellQuoted(Locations.binary) + " " + command.replacingOccurrences(of: "OUT", with: shellQuoted(out))
            let result = try runOnTerminal(line, in: scratch)
            #expect(result.status == 0 && !result.timedOut, "\(result)")
            if unpacking {
                #expect(result.out == "hello world", "\(result)")
            } else {
                #expect(result.out == "", "\(result)")
                #expect(try gunzip(out, in: scratch) == text)
            }
        }
    }

    @Test("by default nothing is written to a standard error that is not a terminal", .timeLimit(.minutes(1)))
    func nothingIntoAFile() throws {
        try withScratch { scratch in
            let (text, first, second) = try makeInputs(scratch)
            let out = scratch.path("out.gz")
            let result = try shell(slowFeed(first, second, pause: "1.5") + #" | "$0" pack -c > "$1""#, [out],
                                   in: scratch)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
            #expect(try gunzip(out, in: scratch) == text)
        }
    }

    @Test("--progress into a file: plain lines, a line a second, and a last one at the end",
          .timeLimit(.minutes(1)))
    func plainLinesIntoAFile() throws {
        try withScratch { scratch in
            let (text, first, second) = try makeInputs(scratch)
            let out = scratch.path("out.gz")
            let result = try shell(slowFeed(first, second, pause: "2") + #" | "$0" pack --progress -c > "$1""#,
                                   [out], in: scratch)
            #expect(result.status == 0, "\(result)")
            #expect(!result.err.contains("\r") && !result.err.contains("\u{1b}"), "\(result)")
            let lines = result.errLines
            #expect(!lines.isEmpty && lines.allSatisfy { isPlainLine($0) }, "\(result)")
            #expect(lines.last?.hasPrefix("gzstream: standard input: 128.0 KiB in, ") == true, "\(result)")
            #expect(lines.last?.contains(", done in ") == true, "\(result)")
            #expect(lines.dropLast().allSatisfy { !$0.contains("done in") }, "\(result)")
            #expect(try gunzip(out, in: scratch) == text)
        }
    }

    @Test("--progress: one last line per file, of the file's size; before -v's line; none after an error or a warning")
    func lastLines() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 10 * 1024, seed: 9)
            try scratch.write("data", text)
            let packed = try gzstream(["pack", "--progress", "-v", "-k", "data"], in: scratch)
            #expect(packed.status == 0, "\(packed)")
            #expect(packed.errLines.count == 2, "\(packed)")
            #expect(packed.errLines.first.map(isPlainLine) == true, "\(packed)")
            #expect(packed.errLines.first?.hasPrefix("gzstream: data: 10.0 KiB in, ") == true, "\(packed)")
            #expect(packed.errLines.last?.hasPrefix("gzstream: data: 10240 -> ") == true, "\(packed)")

            try scratch.write("bad.gz", Array("not gzip at all".utf8))
            let tested = try gzstream(["test", "--progress", "data.gz", "bad.gz"], in: scratch)
            #expect(tested.status == 1, "\(tested)")
            #expect(tested.errLines.count == 2, "\(tested)")
            #expect(tested.errLines.first?.hasPrefix("gzstream: data.gz: ") == true, "\(tested)")
            #expect(tested.errLines.first?.contains(" in, 10.0 KiB out, ") == true, "\(tested)")
            #expect(tested.errLines.last?.hasPrefix("gzstream: bad.gz: not in gzip format") == true, "\(tested)")

            let unpacked = try gzstream(["unpack", "--progress", "-c", "data.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.stdout == text, "\(unpacked)")
            #expect(unpacked.errLines.count == 1, "\(unpacked)")
            #expect(unpacked.errLines.first?.contains(" in, 10.0 KiB out, ") == true, "\(unpacked)")
            #expect(unpacked.errLines.first?.contains(", done in ") == true, "\(unpacked)")

            // Trailing garbage is a message about the job: no last line before it.
            try scratch.write("garbage.gz", try scratch.read("data.gz") + Array("garbage".utf8))
            for mode in ["unpack", "test"] {
                let warned = try gzstream(mode == "unpack" ? ["unpack", "--progress", "-c", "garbage.gz"]
                                                           : ["test", "--progress", "garbage.gz"], in: scratch)
                #expect(warned.status == 2, "\(warned)")
                #expect(warned.errLines == ["gzstream: garbage.gz: decompression OK, trailing garbage ignored"], "\(warned)")
            }
        }
    }

    @Test("--progress with unpack --offset: the same bytes, and a last line without a percent")
    func range() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 200_000, seed: 10)
            try scratch.write("data", text)
            #expect(try gzstream(["pack", "--bgzf", "--index", "data"], in: scratch).status == 0)
            let result = try gzstream(["unpack", "--progress", "--offset", "70000", "--length", "1000", "-c", "data.gz"],
                                      in: scratch)
            #expect(result.status == 0 && result.stdout == Array(text[70000..<71000]), "\(result)")
            // No percent: only part of the file is read.
            #expect(result.errLines.count == 1 && result.errLines[0].contains(" in, 1000 B out, ")
                    && !result.errLines[0].contains("%"), "\(result)")
        }
    }

    @Test("--progress and --no-progress do not apply to list and index", arguments: ["list", "index"])
    func notForListOrIndex(mode: String) throws {
        try withScratch { scratch in
            for option in ["--progress", "--no-progress"] {
                let result = try gzstream([mode, option, "x.gz"], in: scratch)
                #expect(result.status == 1, "\(result)")
                #expect(result.err == usageError("--progress and --no-progress apply to pack, unpack and test"))
            }
        }
    }

    /// Counting the input must not change what unpack reads: a member is read again (by seeking
    /// back through the counting stream) when ISA-L fails in it.
    @Test("each damaged fixture, from a file: the same bytes and error with --progress as without",
          arguments: FixtureManifest.rows(.error))
    func damagedFixture(row: FixtureRow) throws {
        try withScratch { scratch in
            let plain = try gzstream(["unpack", "-c", row.path], in: scratch)
            let shown = try gzstream(["unpack", "--progress", "-c", row.path], in: scratch)
            #expect(shown.status == plain.status && shown.stdout == plain.stdout, "\(shown)")
            // A slow machine may have written lines a second apart before the message.
            #expect(shown.errLines.last == plain.errLines.last, "\(shown)")
            let earlier = shown.errLines.dropLast().filter { !isPlainLine($0) || $0.contains("done") }
            if plain.status == 1 { #expect(earlier.isEmpty, "\(shown)") }
        }
    }
}

import ByteStreams
import Foundation
@testable import GZStreamCLI
import Testing
import TestSupport

// The progress line when the terminal is resized (SIGWINCH): the text for each width, what a
// redraw writes over a line drawn for a wider terminal, and the command on a pseudo-terminal
// that shrinks while the line is shown.

@Suite("progress: a terminal that is resized", .onDedicatedThreads)
struct ProgressResizeTests {
    @Test("without a percent (a pipe) the bytes in stay as long as the name")
    func widthWithoutPercent() {
        let snapshot = ProgressSnapshot(bytesIn: 65536, bytesOut: 23654, inputSize: nil, bytesPerSecond: 32768)
        let lines: [(width: Int, line: String)] = [
            (100, "gzstream: standard input: 64.0 KiB in, 23.1 KiB out, 32.0 KiB/s"),
            (60, "gzstream: standard input: 64.0 KiB in, 23.1 KiB out"),
            (40, "gzstream: standard input: 64.0 KiB in"),
            (30, "standard input: 64.0 KiB in"),
            (20, "…nput: 64.0 KiB in"),
        ]
        for (width, line) in lines {
            #expect(ProgressFormat.line(name: "standard input", snapshot, width: width) == line, "width \(width)")
        }
    }

    @Test("a redraw covers the old line with spaces up to the terminal's width at most")
    func padding() {
        #expect(ProgressFormat.padding(after: 3, over: 0, width: 80) == 0)
        #expect(ProgressFormat.padding(after: 1, over: 3, width: 80) == 2)
        #expect(ProgressFormat.padding(after: 50, over: 30, width: 80) == 0)
        // Shrunk from 80 columns to 40: up to column 40, never past it.
        #expect(ProgressFormat.padding(after: 39, over: 79, width: 40) == 1)
        #expect(ProgressFormat.padding(after: 10, over: 79, width: 40) == 30)
        #expect(ProgressFormat.padding(after: 0, over: 79, width: 40) == 40)
    }

    @Test("the console redraws and erases to the width read at each draw, so nothing wraps after a shrink")
    func consoleAfterShrink() {
        let stream = MemoryOutputStream()
        stream.open()
        let width = Locked(80)
        let console = StandardErrorConsole(stream: stream, isTerminal: true, terminalWidth: { width.value })
        var widths: [Int?] = []
        console.draw { shown in
            widths.append(shown)
            return String(repeating: "x", count: 79)
        }
        width.value = 40
        console.draw { shown in
            widths.append(shown)
            return String(repeating: "y", count: 30)
        }
        console.write("gzstream: z: problem\n")
        #expect(widths == [80, 40])
        let written = String(decoding: stream.property(forKey: .dataWrittenToMemoryStream) as? Data ?? Data(), as: UTF8.self)
        #expect(written == "\r" + String(repeating: "x", count: 79)
                + "\r" + String(repeating: "y", count: 30) + String(repeating: " ", count: 10)
                + "\r" + String(repeating: " ", count: 30) + "\r" + "gzstream: z: problem\n")
        let marker = "\u{1b}]0;resized\u{7}"
        let screen = WrappingScreen(String(written.prefix(80)) + marker + String(written.dropFirst(80)),
                                    width: 80, resizeMarker: marker, newWidth: 40)
        #expect(screen.lines == ["gzstream: z: problem", ""])
    }

    @Test("the terminal shrinks while the line is shown: redrawn at once to the new width, no stale copy left",
          .needsPseudoTerminal, .timeLimit(.minutes(1)))
    func shrinkOnTerminal() throws {
        try withScratch { scratch in
            let text = sampleText(byteCount: 128 * 1024, seed: 8)
            let first = try scratch.write("first", Array(text[..<(64 * 1024)]))
            let second = try scratch.write("second", Array(text[(64 * 1024)...]))
            let out = scratch.path("out.gz")
            // Half-way, the feed shrinks the terminal (stty sends SIGWINCH to the foreground
            // process group), then writes a title sequence that tells the screen model when.
            let marker = "\u{1b}]0;resized\u{7}"
            let feed = "(cat \(shellQuoted(first)); sleep 2; stty cols 40 < /dev/tty; "
                + #"printf '\033]0;resized\007' > /dev/tty; sleep 1.5; cat "# + shellQuoted(second) + ")"
            let line = "stty cols 100 rows 24 < /dev/tty; " + feed + " | " + shellQuoted(Locations.binary)
                + " pack -c > " + shellQuoted(out)
            let result = try runOnTerminal(line, in: scratch)
            #expect(result.status == 0 && !result.timedOut, "\(result)")
            let shown = result.out
            let parts = shown.components(separatedBy: marker)
            try #require(parts.count == 2, "\(shown.debugDescription)")
            // Drawn before the resize (a loaded machine may draw late), and after it: the job
            // goes on for 1.5 s.
            #expect(parts[1].contains(#/\rgzstream: standard input: (64|128)\.0 KiB in/#), "\(shown.debugDescription)")
            // After it, nothing written between two `\r` is wider than the terminal.
            for drawn in parts[1].split(separator: "\r") {
                #expect(ProgressFormat.columns(String(drawn)) <= 40, "\(shown.debugDescription)")
            }
            let screen = WrappingScreen(shown, width: 100, resizeMarker: marker, newWidth: 40)
            #expect(screen.lines.allSatisfy { $0.isEmpty } && screen.isOnCleanLine, "\(shown.debugDescription)")
            #expect(try gunzip(out, in: scratch) == text)
        }
    }
}

/// What a terminal such as xterm shows after `text`, `width` columns wide until
/// `resizeMarker` (a title sequence the test writes after resizing), then `newWidth`: `\r`
/// goes back to the start of the row, `\n` to the start of the next, a character written when
/// the cursor is past the last column goes to the start of the next row first (the wrap waits
/// for it), and a resize cuts every row at the new width, the cursor kept within it.
/// Terminals that rewrap rows on a resize are not modelled. Lines are given without their
/// trailing spaces.
struct WrappingScreen {
    private var rows: [[Character]] = [[]]
    private var row = 0
    private var column = 0
    private var width: Int

    init(_ text: String, width: Int, resizeMarker: String, newWidth: Int) {
        self.width = width
        let parts = text.components(separatedBy: resizeMarker)
        for (index, part) in parts.enumerated() {
            if index > 0 {
                self.width = newWidth
                rows = rows.map { Array($0.prefix(newWidth)) }
                column = min(column, newWidth - 1)
            }
            for character in part { draw(character) }
        }
    }

    private mutating func draw(_ character: Character) {
        switch character {
        case "\r": column = 0
        case "\n", "\r\n": newRow()
        default:
            if column >= width { newRow() }
            while rows[row].count <= column { rows[row].append(" ") }
            rows[row][column] = character
            column += 1
        }
    }

    private mutating func newRow() {
        column = 0
        row += 1
        if row == rows.count { rows.append([]) }
    }

    var lines: [String] {
        rows.map { String($0).replacing(/\ +$/, with: "") }
    }

    /// Whether the cursor is at the start of an empty line.
    var isOnCleanLine: Bool { column == 0 && lines[row].isEmpty }
}

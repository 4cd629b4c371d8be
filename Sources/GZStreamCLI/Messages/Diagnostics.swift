import ByteStreams
import GzipStreams

/// Writes one-line messages to standard error.
struct Diagnostics {
    let stream: ByteOutputStream
    let quiet: Bool
    /// A command's standard error: writing through it ends a progress display first, so the
    /// message starts on a clean line.
    var console: StandardErrorConsole? = nil
    /// The name messages start with: `gzstream`, or in gzip mode the last component of
    /// `argv[0]` (`gzip` through a link of that name), as GNU gzip names itself.
    var programName = "gzstream"
    /// gzip mode: a problem gzip writes straight after the name (`d is a directory -- ignored`,
    /// `f has 1 other link -- file ignored`, `x.gz already has .gz suffix -- unchanged`) follows
    /// it without the colon, as in gzip.
    var joinsAsGzip = false

    private static let phrasesAfterName = ["is a directory -- ignored", "is not a directory or a regular file",
                                           "has ", "already has "]

    func write(_ text: String) {
        if let console {
            console.write(text)
        } else {
            try? stream.writeAll(Array(text.utf8))
        }
    }

    /// `gzstream: SUBJECT: PROBLEM` on one line: control characters in either (a file name
    /// with a newline, a header's FNAME) are shown escaped.
    func error(_ subject: String, _ problem: String) {
        let separator = joinsAsGzip && Self.phrasesAfterName.contains(where: { problem.hasPrefix($0) }) ? " " : ": "
        write("\(programName): \(escapingControlCharacters(subject))\(separator)\(escapingControlCharacters(problem))\n")
    }

    func warning(_ subject: String, _ problem: String) {
        if !quiet { error(subject, problem) }
    }

    /// A `-v` line, `gzstream: SUBJECT: TEXT`, signed as errors are: control characters in the
    /// subject are shown escaped, and the caller escapes the names it quotes in `text`.
    func note(_ subject: String, _ text: String) {
        write("\(programName): \(escapingControlCharacters(subject)): \(text)\n")
    }
}

/// A failure that has been reported already, or is reported at the end of the run (a closed
/// pipe, ``Command/closedPipe``).
struct Reported: Error {
    var status: ExitStatus
    /// What was reported, for a listing that records it too.
    var problem: String?
}

extension Command {
    /// GNU gzip's warning, word for word: the data before the garbage was kept. In gzip mode
    /// the garbage is judged as gzip judges it (``judgeTrailingData(_:subject:)``).
    func warnTrailingGarbage(_ subject: String, _ garbage: GzipInputStream.TrailingGarbage) throws -> ExitStatus {
        if options.gzip != nil { return try judgeTrailingData(garbage, subject: subject) }
        diagnostics.warning(subject, "decompression OK, trailing garbage ignored")
        return .warning
    }

    func reportError(_ subject: String, _ problem: String) -> ExitStatus {
        diagnostics.error(subject, problem)
        return .error
    }

    /// How messages name an operand: "standard input" for `-` (gzip's "stdin" in gzip mode), else the path as
    /// ``Pathname/description`` shows it (octal escapes for bytes that are not UTF-8).
    func displayName(_ operand: Pathname) -> String {
        operand == "-" ? options.gzip?.standardInputName ?? "standard input" : operand.description
    }

    /// `-v`'s line for one file: its sizes and the space saved, or for an `--offset` range (or
    /// `--lines`) what was written from where, and the index that found it (no share saved: the compressed
    /// bytes read for a range are whole spans or members around it, not its own).
    func report(_ outcome: Outcome, inputName: String, outputName: String) {
        guard common.verbose else { return }
        if options.gzip != nil { return reportLikeGzip(outcome, outputName: outputName) }
        if let range = outcome.range {
            let how = range.index.map { "read through \(escapingControlCharacters($0.description))" } ?? "decoded from the start"
            if let lines = range.lines {
                let which = lines.last.map { "lines \(lines.first) to \($0)" } ?? "lines \(lines.first) to the end"
                diagnostics.note(inputName, "\(which), \(outcome.bytesOut) bytes, "
                    + "\(how) -> \(escapingControlCharacters(outputName))")
                return
            }
            diagnostics.note(inputName, "\(outcome.bytesOut) bytes from plain offset "
                + "\(range.offset), \(how) -> \(escapingControlCharacters(outputName))")
            return
        }
        let (plain, packed) = options.mode == .pack ? (outcome.bytesIn, outcome.bytesOut) : (outcome.bytesOut, outcome.bytesIn)
        diagnostics.note(inputName, "\(outcome.bytesIn) -> "
            + "\(outcome.bytesOut) bytes, \(percentSaved(packed: packed, plain: plain)) saved -> \(escapingControlCharacters(outputName))")
    }
}

func describe(_ error: any Error) -> String {
    switch error {
    case let error as GzipError:
        return error.description
    case let error as ByteStreamError:
        return "\(error.operation) failed: \(error.reason)"
    default:
        return "\(error)"
    }
}

import ByteStreams
import GzipStreams

// What gzip mode says while it runs, in GNU gzip 1.12's words: its errors about the data, its
// verdict on the bytes after the last member, its -v lines, its refusal of a terminal and its
// question before replacing an output. Each line starts with the program's name as invoked
// (``Diagnostics/programName``); gzip starts some with an empty line, and so do these.
extension Command {
    // MARK: Errors about the data

    /// Reports a decoding error as gzip words it: `invalid compressed data--crc error`, `not in
    /// gzip format`, `unexpected end of file`, … (its gzip.c, unzip.c and util.c); an error
    /// gzip does not have (the output limit, a library failure) in gzstream's words.
    /// Under `-v`, a fault in the data found after the first header follows the file's
    /// `NAME:\t`, as in gzip.
    /// - Returns: The exit status: an error.
    func reportLikeGzip(_ error: GzipError, subject: String) -> ExitStatus {
        let name = escapingControlCharacters(subject)
        let program = diagnostics.programName
        // Whether gzip finds the fault after its first header, where `-v` has begun the line.
        var inData = true
        let line: String
        switch error {
        case .notGzip:
            line = "\n\(program): \(name): not in gzip format\n"
            inData = false
        case .emptyInput:
            line = unexpectedEnd(name)
            inData = false
        case .truncated(let member, let part, _):
            line = unexpectedEnd(name)
            inData = member > 1 || part != .header
        case .invalidDeflateData:
            line = "\n\(program): \(name): invalid compressed data--format violated\n"
        case .crcMismatch:
            line = "\n\(program): \(name): invalid compressed data--crc error\n"
        case .lengthMismatch:
            line = "\n\(program): \(name): invalid compressed data--length error\n"
        case .unsupportedMethod(let method, let member, _):
            line = "\(program): \(name): unknown method \(method) -- not supported\n"
            inData = member > 1
        case .reservedFlags(let flags, let member, _):
            // FLG bit 5 was gzip's "encrypted"; 6 and 7 are reserved.
            let problem = flags & 0x20 != 0 ? "is encrypted" : "has flags 0x\(String(flags, radix: 16))"
            line = "\(program): \(name) \(problem) -- not supported\n"
            inData = member > 1
        case .headerCRCMismatch(let member, let stored, let computed, _):
            line = "\(program): \(name): header checksum 0x\(hex(stored, 4)) != computed checksum 0x\(hex(computed, 4))\n"
            inData = member > 1
        default:
            return reportError(subject, describe(error))
        }
        if inData { writeVerbosePrefix() }
        diagnostics.write(line)
        return .error
    }

    private func unexpectedEnd(_ name: String) -> String {
        "\n\(diagnostics.programName): \(name): unexpected end of file\n"
    }

    /// The bytes after the last member, judged as gzip 1.12 judges them (its `get_method` on
    /// what follows a member; zero padding alone never gets here): one byte, or the magic of
    /// compress, pack or gzip 0.5 with nothing after it, is the start of something cut short
    /// (`unexpected end of file`, an error); data in one of the formats gzip also decodes is
    /// an error here, gzstream decoding gzip only; anything else is gzip's warning
    /// `decompression OK, trailing garbage ignored` (quiet under `-q`). The output before it
    /// stays either way (on standard output; a file output is not kept after an error).
    /// - Returns: The status for a warning.
    /// - Throws: ``Reported`` with an error, after saying so.
    func judgeTrailingData(_ garbage: GzipInputStream.TrailingGarbage, subject: String) throws -> ExitStatus {
        let name = escapingControlCharacters(subject)
        let program = diagnostics.programName
        var line: String?
        if garbage.length == 1 {
            line = unexpectedEnd(name)
        } else if let format = garbage.otherFormat {
            line = garbage.length == 2 && format != .lzh ? unexpectedEnd(name)
                : "\(program): \(name): \(format.rawValue) data after the gzip data -- not supported\n"
        }
        if let line {
            writeVerbosePrefix()
            diagnostics.write(line)
            throw Reported(status: .error)
        }
        if !common.quiet {
            writeVerbosePrefix()
            diagnostics.write("\n\(program): \(name): decompression OK, trailing garbage ignored\n")
        }
        return .warning
    }

    /// Zero padding after the last member: gzip mode's `-v` says so in gzip's words, and, as in
    /// gzip, that is a warning (exit 2); otherwise it passes unsaid.
    /// - Returns: The status.
    func noteZeroPaddingLikeGzip(_ subject: String) -> ExitStatus {
        guard options.gzip != nil, common.verbose else { return .success }
        writeVerbosePrefix()
        diagnostics.write("\n\(diagnostics.programName): \(escapingControlCharacters(subject)): "
            + "decompression OK, trailing zero bytes ignored\n")
        return .warning
    }

    // MARK: -v

    /// Starts gzip's `-v` line for the file (not standard input) about to be worked on: its
    /// `NAME:\t` is written before the first message about its data, or before its result.
    func beginVerboseLine(_ inputName: String) {
        verboseName = options.gzip != nil && common.verbose && currentInput != nil ? inputName : nil
    }

    /// Writes `NAME:\t` of the file being worked on, once.
    func writeVerbosePrefix() {
        guard let name = verboseName else { return }
        verboseName = nil
        diagnostics.write("\(escapingControlCharacters(name)):\t")
    }

    /// gzip's `-v` result: `NAME:\t 53.0% -- replaced with NAME.gz` (`created` with `-k`; the
    /// output `stdout` with `-c`); for standard input only the ratio when packing, nothing when
    /// unpacking. The ratio is gzip's: the deflate data against the plain bytes, where the
    /// deflate data is the compressed size less the first member's header and one trailer.
    func reportLikeGzip(_ outcome: Outcome, outputName: String) {
        let ratio: String
        switch options.mode {
        case .pack:
            ratio = gzipRatio(outcome.bytesIn - (outcome.bytesOut - outcome.overhead), outcome.bytesIn)
        case .unpack:
            guard currentInput != nil else { return }
            ratio = gzipRatio(outcome.bytesOut - (outcome.bytesIn - outcome.overhead), outcome.bytesOut)
        case .test, .list, .index:
            return
        }
        guard currentInput != nil else { return diagnostics.write(ratio + "\n") }
        writeVerbosePrefix()
        let output = outputName == "standard output" ? "stdout" : escapingControlCharacters(outputName)
        diagnostics.write("\(ratio) -- \(common.keep ? "created" : "replaced with") \(output)\n")
    }

    /// gzip's `-t -v` result: `NAME:\t OK`, or ` OK` for standard input.
    func reportTestedLikeGzip() {
        writeVerbosePrefix()
        diagnostics.write(" OK\n")
    }

    // MARK: Terminals

    /// gzip refuses a terminal only for the data of standard input (its `treat_stdin`): to
    /// write compressed data to a terminal, or to read it from one (`-d`, `-t`; `-l` reads
    /// it). `gzip -c FILE` writes to a terminal. Quiet under `-q`.
    /// - Throws: ``Reported`` with an error.
    func refuseTerminalLikeGzip(readingStandardInput: Bool) throws {
        guard readingStandardInput, options.mode != .list else { return }
        let decompress = options.mode != .pack
        guard decompress ? environment.inputIsTerminal : environment.outputIsTerminal && options.command.outputPath == nil else {
            return
        }
        if !common.quiet {
            let program = diagnostics.programName
            diagnostics.write("\(program): compressed data not \(decompress ? "read from" : "written to") a terminal. "
                + "Use -f to force \(decompress ? "de" : "")compression.\nFor help, type: \(program) -h\n")
        }
        throw Reported(status: .error)
    }

    /// An output that exists, without `-f`: in gzip mode, with standard input a terminal and the
    /// process in the foreground, gzip's question on standard error, answered by a line of
    /// standard input (yes when it starts with `y` or `Y`); otherwise refused
    /// (``refuseExisting(_:)``).
    /// - Throws: ``Reported`` unless the answer was yes: gzip's `not overwritten` warning.
    func confirmOverwrite(_ path: String) throws {
        guard options.gzip != nil, environment.inputIsTerminal, environment.isForeground else {
            throw Reported(status: refuseExisting(path))
        }
        diagnostics.write("\(diagnostics.programName): \(escapingControlCharacters(path)) already exists; "
            + "do you wish to overwrite (y or n)? ")
        let answer = readAnswerLine()
        if answer.first == UInt8(ascii: "y") || answer.first == UInt8(ascii: "Y") { return }
        diagnostics.write("\tnot overwritten\n")
        throw Reported(status: .warning)
    }

    /// One line of standard input, without its newline; what there is at its end or on an error.
    /// Reads a byte at a time, so that nothing after the line is taken. Blocks until a line comes.
    private func readAnswerLine() -> [UInt8] {
        let input = environment.standardInput
        if input.streamStatus == .notOpen { input.open() }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while input.read(&byte, maxLength: 1) == 1, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        return line
    }

    /// gzip's refusal of an existing output without a terminal to ask on:
    /// `NAME already exists;\tnot overwritten`, a warning that GNU gzip 1.12 prints under `-q` too.
    func refuseExistingLikeGzip(_ path: String) -> ExitStatus {
        diagnostics.write("\(diagnostics.programName): \(escapingControlCharacters(path)) already exists;\tnot overwritten\n")
        return .warning
    }
}

/// The size in bytes of the header with these fields (RFC 1952 §2.3.1): gzip's `-v` ratio
/// leaves it out of the compressed size.
func encodedHeaderSize(_ header: GzipHeader) -> Int64 {
    var size = 10
    if let extra = header.extraField { size += 2 + extra.count }
    if let name = header.fileName { size += name.count + 1 }
    if let comment = header.comment { size += comment.count + 1 }
    if header.hasHeaderCRC { size += 2 }
    return Int64(size)
}

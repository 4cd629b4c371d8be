import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The standard streams a run of the command uses, and whether they are terminals.
public struct CommandEnvironment {
    public var standardInput: ByteInputStream
    public var standardOutput: ByteOutputStream
    public var standardError: ByteOutputStream
    public var inputIsTerminal: Bool
    public var outputIsTerminal: Bool
    /// Whether a run that stops at a closed pipe (`EPIPE` on an output) says so on standard
    /// error (`gzstream: standard output: Broken pipe`, GNU gzip's line when SIGPIPE is
    /// ignored). Without it the run stops quietly and ``CommandResult/brokenPipe`` tells the
    /// caller to die of SIGPIPE.
    public var reportsBrokenPipe: Bool
    /// Whether standard error is a terminal: the progress display is then shown (Progress.swift).
    public var errorIsTerminal: Bool

    public init(standardInput: ByteInputStream, standardOutput: ByteOutputStream,
                standardError: ByteOutputStream, inputIsTerminal: Bool = false, outputIsTerminal: Bool = false,
                errorIsTerminal: Bool = false, reportsBrokenPipe: Bool = false) {
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.inputIsTerminal = inputIsTerminal
        self.outputIsTerminal = outputIsTerminal
        self.reportsBrokenPipe = reportsBrokenPipe
        self.errorIsTerminal = errorIsTerminal
    }

    /// The process's descriptors 0, 1 and 2 (none is closed by the run).
    public static func process() -> CommandEnvironment {
        CommandEnvironment(standardInput: FileInputStream.standardInput(),
                           standardOutput: FileOutputStream.standardOutput(),
                           standardError: FileOutputStream.standardError(),
                           inputIsTerminal: isatty(STDIN_FILENO) == 1,
                           outputIsTerminal: isatty(STDOUT_FILENO) == 1,
                           errorIsTerminal: isatty(STDERR_FILENO) == 1)
    }
}

/// Exit statuses as GNU gzip: 0 success, 1 error, 2 warning; an error outranks a warning.
public enum ExitStatus: Int32, Comparable, Sendable {
    case success = 0
    case warning = 2
    case error = 1

    private var rank: Int { self == .success ? 0 : self == .warning ? 1 : 2 }
    public static func < (lhs: ExitStatus, rhs: ExitStatus) -> Bool { lhs.rank < rhs.rank }
}

/// How a run ended.
public struct CommandResult: Sendable {
    public var status: ExitStatus
    /// The run stopped because an output is a pipe with no reader left (`EPIPE`), after
    /// cleaning up. Unless the environment ``CommandEnvironment/reportsBrokenPipe``, nothing
    /// was said about it: a process then ends by SIGPIPE, as every filter does.
    public var brokenPipe: Bool
}

/// Runs `gzstream` with its arguments (without the program name) against `environment`.
/// - Returns: The exit status, and whether an output turned out to be a closed pipe.
public func runCommand(arguments: [String], environment: CommandEnvironment) -> CommandResult {
    let parsed: ParsedCommand
    do {
        parsed = try parseCommandLine(arguments)
    } catch {
        let diagnostics = Diagnostics(stream: environment.standardError, quiet: false)
        diagnostics.write("gzstream: Error: \(error.message)\n" + usageText)
        return CommandResult(status: .error, brokenPipe: false)
    }
    let status: ExitStatus
    var closedPipe: String?
    switch parsed {
    case .help:
        (status, closedPipe) = printOrFail(helpText, environment: environment)
    case .version:
        (status, closedPipe) = printOrFail("gzstream \(toolVersion) (zlib \(zlibRuntimeVersion))\n", environment: environment)
    case .run(let options):
        let command = Command(options: options, environment: environment)
        status = command.run()
        closedPipe = command.closedPipe
    }
    if let closedPipe, environment.reportsBrokenPipe {
        Diagnostics(stream: environment.standardError, quiet: false).error(closedPipe, "Broken pipe")
    }
    return CommandResult(status: status, brokenPipe: closedPipe != nil)
}

/// Writes `text` to standard output; a failed write is an error (`--help > /dev/full`), a
/// closed pipe a quiet one.
/// - Returns: The status, and "standard output" when it is a closed pipe.
private func printOrFail(_ text: String, environment: CommandEnvironment) -> (ExitStatus, closedPipe: String?) {
    let output = environment.standardOutput
    if output.streamStatus == .notOpen { output.open() }
    do {
        try output.writeAll(Array(text.utf8))
        return (.success, nil)
    } catch let error as ByteStreamError where error.errno == EPIPE {
        return (.error, "standard output")
    } catch {
        Diagnostics(stream: environment.standardError, quiet: false).error("standard output", describe(error))
        return (.error, nil)
    }
}

/// One run of `pack` or `unpack` over its operands.
final class Command {
    let options: Options
    let environment: CommandEnvironment
    let diagnostics: Diagnostics
    /// Standard error, shared by the diagnostics and the progress display.
    let console: StandardErrorConsole

    init(options: Options, environment: CommandEnvironment) {
        self.options = options
        self.environment = environment
        console = StandardErrorConsole(stream: environment.standardError, isTerminal: environment.errorIsTerminal)
        self.diagnostics = Diagnostics(stream: environment.standardError, quiet: options.quiet, console: console)
    }

    func run() -> ExitStatus {
        let operands = options.files.isEmpty ? ["-"] : options.files
        var status = ExitStatus.success
        let listing = options.mode == .list ? MemberListing(command: self) : nil
        listing?.begin()
        for operand in operands {
            if listing?.writeError != nil { break }
            do {
                let result: ExitStatus
                if options.mode == .index {
                    result = try buildIndex(operand)
                } else if options.mode == .test || options.mode == .list {
                    result = try inspect(operand, listing: listing)
                } else {
                    result = try process(operand)
                }
                status = max(status, result)
            } catch let reported as Reported {
                status = max(status, reported.status)
                if reported.status == .error && closedPipe != nil { break }
            } catch {
                diagnostics.error(operand == "-" ? "standard input" : operand, describe(error))
                status = max(status, .error)
            }
        }
        if let listing {
            listing.end()
            if let error = listing.writeError {
                if (error as? ByteStreamError)?.errno == EPIPE {
                    closedPipe = "standard output"
                } else {
                    diagnostics.error("standard output", describe(error))
                }
                status = .error
            }
        }
        return status
    }

    /// The output (`standard output`, or a FIFO or device named by `-o`) found to be a closed
    /// pipe: nothing more can be written there, and ``runCommand(arguments:environment:)``
    /// reports it or leaves the process to die of SIGPIPE.
    var closedPipe: String?

    private func process(_ operand: String) throws -> ExitStatus {
        if operand == "-" {
            if let outputPath = options.outputPath {
                return try toFile(input: environment.standardInput, inputName: "standard input",
                                  inputInfo: nil, outputPath: outputPath)
            }
            return try toStandardOutput(input: environment.standardInput, inputName: "standard input", inputInfo: nil)
        }
        let info = try inputInfo(operand)
        if options.toStandardOutput {
            return try toStandardOutput(input: FileInputStream(path: operand), inputName: operand, inputInfo: info)
        }
        if let outputPath = options.outputPath {
            return try toFile(input: FileInputStream(path: operand), inputName: operand, inputInfo: info,
                              outputPath: outputPath)
        }
        if !options.force, FileInfo.isSymbolicLink(operand) {
            // As GNU gzip: replacing a link's target by name is rarely what was meant.
            throw Reported(status: reportError(operand, "is a symbolic link (use -f to follow it)"))
        }
        guard let outputPath = defaultOutputPath(for: operand) else { return .warning }
        return try toFile(input: FileInputStream(path: operand), inputName: operand, inputInfo: info,
                          outputPath: outputPath)
    }
}

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

/// Runs `gzstream` with its arguments against `environment`.
/// - Parameters:
///   - arguments: Each argument's bytes as the system passed them (`argv` without the program
///     name), so that a file name that is not UTF-8 names its file.
///   - programName: `argv[0]`'s bytes: when its last path component is `gunzip`, `zcat` or
///     `gzcat` (a link to the binary), the run is gzip's `-d` or `-dc`.
///   - environment: The standard streams; none is closed.
/// - Returns: The exit status, and whether an output turned out to be a closed pipe.
public func runCommand(arguments: [[UInt8]], programName: [UInt8] = Array("gzstream".utf8),
                       environment: CommandEnvironment) -> CommandResult {
    let parsed: ParsedCommand
    do throws(UsageError) {
        parsed = try parseCommandLine(arguments, programName: baseName(Pathname(bytes: programName) ?? "gzstream"))
        if case .run(let options) = parsed, let outputPath = options.outputPath, options.files.count > 1,
           FileInfo(path: outputPath)?.isDirectory != true {
            throw UsageError(message: "-o takes one input file, or an existing directory for several")
        }
    } catch {
        let diagnostics = Diagnostics(stream: environment.standardError, quiet: false)
        diagnostics.write("gzstream: Error: \(error.message)\n" + (error.usage ?? usageText))
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
    case .cacheHelp:
        (status, closedPipe) = printOrFail(cacheHelpText, environment: environment)
    case .cache(let options):
        let command = CacheCommand(options: options, environment: environment)
        status = command.run()
        closedPipe = command.closedPipe
    }
    if let closedPipe, environment.reportsBrokenPipe {
        Diagnostics(stream: environment.standardError, quiet: false).error(closedPipe, "Broken pipe")
    }
    return CommandResult(status: status, brokenPipe: closedPipe != nil)
}

/// Runs `gzstream` with arguments and program name given as text (their UTF-8 bytes); see
/// ``runCommand(arguments:programName:environment:)-([[UInt8]],_,_)``.
public func runCommand(arguments: [String], programName: String = "gzstream",
                       environment: CommandEnvironment) -> CommandResult {
    runCommand(arguments: arguments.map { Array($0.utf8) }, programName: Array(programName.utf8),
               environment: environment)
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
    /// `-o DIR` naming an existing directory: each output is written in it under its default
    /// name (a symbolic link to a directory counts).
    let outputDirectory: Pathname?
    /// `list`'s output, shared by every file listed.
    private var listing: (any Listing)?
    /// Standard error, shared by the diagnostics and the progress display.
    let console: StandardErrorConsole

    init(options: Options, environment: CommandEnvironment) {
        self.options = options
        self.environment = environment
        console = StandardErrorConsole(stream: environment.standardError, isTerminal: environment.errorIsTerminal)
        self.diagnostics = Diagnostics(stream: environment.standardError, quiet: options.quiet, console: console)
        outputDirectory = options.outputPath.flatMap { FileInfo(path: $0)?.isDirectory == true ? $0 : nil }
    }

    func run() -> ExitStatus {
        if let network = options.network { return runOverNetwork(network) }
        let operands: [Pathname] = options.files.isEmpty ? ["-"] : options.files
        var status = ExitStatus.success
        if options.mode != .list {
            listing = nil
        } else if options.gzipMode && !options.json {
            listing = GzipListing(command: self, operandCount: operands.count)
        } else {
            listing = MemberListing(command: self)
        }
        listing?.begin()
        for operand in operands {
            if stopped { break }
            status = max(status, handle(operand))
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
    /// pipe: nothing more can be written there, and ``runCommand(arguments:programName:environment:)``
    /// reports it or leaves the process to die of SIGPIPE.
    var closedPipe: String?

    /// Whether nothing more can be done: standard output is a closed pipe, or the listing
    /// could not be written.
    private var stopped: Bool { closedPipe != nil || listing?.writeError != nil }

    /// One operand, or a file `-r` found; reports its failure.
    private func handle(_ operand: Pathname) -> ExitStatus {
        do {
            if operand != "-", let info = FileInfo(path: operand), info.isDirectory {
                return try handleDirectory(operand)
            }
            switch options.mode {
            case .index: return try buildIndex(operand)
            case .test, .list: return try inspect(operand, listing: listing)
            case .pack, .unpack: return try process(operand)
            }
        } catch let reported as Reported {
            return reported.status
        } catch {
            diagnostics.error(displayName(operand), describe(error))
            return .error
        }
    }

    /// A directory named on the command line: walked with `-r`, else passed over with GNU
    /// gzip's warning.
    private func handleDirectory(_ directory: Pathname) throws -> ExitStatus {
        guard options.recursive else {
            let problem = "is a directory -- ignored"
            diagnostics.warning(directory.description, problem)
            listing?.unreadableFile(directory.description, problem: problem)
            return .warning
        }
        if writesFiles, !options.force, FileInfo.isSymbolicLink(directory) {
            throw Reported(status: reportError(directory.description, "is a symbolic link (use -f to follow it)"))
        }
        return walk(directory)
    }

    /// Whether pack or unpack writes files (not `-c`): GNU gzip's file mode.
    private var writesFiles: Bool {
        (options.mode == .pack || options.mode == .unpack) && !options.toStandardOutput
    }

    /// `-r`: every regular file under `directory`, in bytewise order of names, handled as if
    /// named. Symbolic links are not followed, and FIFOs, devices and sockets not read (a FIFO
    /// would block the walk): each is passed over with a warning. Names pack would not pack
    /// again, or that have no suffix unpack takes, are passed over quietly (with a warning under
    /// `-v`, and ``unfitNameStatus``), as GNU gzip does; with `-c`, every regular file is taken.
    private func walk(_ directory: Pathname) -> ExitStatus {
        let names: [Pathname]
        do {
            names = try directoryEntries(directory)
        } catch {
            return reportError(directory.description, error.message)
        }
        var status = ExitStatus.success
        for name in names {
            if stopped { break }
            let path = directory.appending(component: name)
            guard let info = FileInfo(path: path, followsLinks: false) else {
                status = max(status, reportError(path.description, String(cString: strerror(errno))))
                continue
            }
            if info.isDirectory {
                status = max(status, walk(path))
            } else if info.isSymbolicLink {
                status = max(status, passOver(path, "is a symbolic link -- not followed"))
            } else if !info.isRegularFile {
                status = max(status, passOver(path, "is not a directory or a regular file -- ignored"))
            } else if (writesFiles || options.mode == .test || options.mode == .list), let problem = unfitName(path) {
                if options.verbose {
                    diagnostics.warning(path.description, problem)
                    status = max(status, unfitNameStatus)
                }
            } else {
                status = max(status, handle(path))
            }
        }
        return status
    }

    private func passOver(_ path: Pathname, _ problem: String) -> ExitStatus {
        diagnostics.warning(path.description, problem)
        return .warning
    }

    private func process(_ operand: Pathname) throws -> ExitStatus {
        if operand == "-" {
            if let outputDirectory {
                throw Reported(status: reportError("standard input", "has no name for a file in the directory "
                    + "\(outputDirectory) (give -o DIRECTORY/NAME)"))
            }
            if let outputPath = options.outputPath {
                return try toFile(input: environment.standardInput, inputPath: operand,
                                  inputInfo: nil, outputPath: outputPath)
            }
            return try toStandardOutput(input: environment.standardInput, inputPath: operand, inputInfo: nil)
        }
        let info = try inputInfo(operand)
        if options.toStandardOutput {
            return try toStandardOutput(input: FileInputStream(path: operand), inputPath: operand, inputInfo: info)
        }
        let explicitOutput = options.outputPath != nil && outputDirectory == nil
        if !options.force, !explicitOutput, FileInfo.isSymbolicLink(operand) {
            // As GNU gzip: replacing a link's target by name is rarely what was meant.
            throw Reported(status: reportError(operand.description, "is a symbolic link (use -f to follow it)"))
        }
        if !options.force, info.linkCount > 1 {
            // As GNU gzip: --rm would break the link, and the other names would keep the old data.
            let others = info.linkCount - 1
            diagnostics.warning(operand.description, "has \(others) other link\(others == 1 ? "" : "s") -- file ignored")
            return .warning
        }
        if explicitOutput, let outputPath = options.outputPath {
            return try toFile(input: FileInputStream(path: operand), inputPath: operand, inputInfo: info,
                              outputPath: outputPath)
        }
        let defaultPath = try defaultOutputPath(for: operand)
        let outputPath = outputDirectory.map { $0.appending(component: baseName(defaultPath)) } ?? defaultPath
        return try toFile(input: FileInputStream(path: operand), inputPath: operand, inputInfo: info,
                          outputPath: outputPath)
    }
}

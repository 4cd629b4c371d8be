import ByteStreams
import GzipStreams

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
    /// Whether standard error is a terminal: the progress display is then shown (ProgressReporter.swift).
    public var errorIsTerminal: Bool
    /// The `GZIP` environment variable's bytes, `nil` when it is not set (``process()`` leaves
    /// it `nil`; the program sets it): gzip mode takes the options in it that only tune the
    /// output, as gzip 1.12 does (GzipVariable.swift).
    public var gzipVariable: [UInt8]?
    /// Whether the process may ask on the terminal (gzip mode's question before replacing an
    /// output): it is not a background job that ignores SIGINT, as GNU gzip decides.
    public var isForeground = true

    public init(standardInput: ByteInputStream, standardOutput: ByteOutputStream,
                standardError: ByteOutputStream, inputIsTerminal: Bool = false, outputIsTerminal: Bool = false,
                errorIsTerminal: Bool = false, reportsBrokenPipe: Bool = false, gzipVariable: [UInt8]? = nil) {
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.inputIsTerminal = inputIsTerminal
        self.outputIsTerminal = outputIsTerminal
        self.reportsBrokenPipe = reportsBrokenPipe
        self.errorIsTerminal = errorIsTerminal
        self.gzipVariable = gzipVariable
    }

    /// The process's descriptors 0, 1 and 2 (none is closed by the run).
    public static func process() -> CommandEnvironment {
        var environment = CommandEnvironment(standardInput: FileInputStream.standardInput(),
                                             standardOutput: FileOutputStream.standardOutput(),
                                             standardError: FileOutputStream.standardError(),
                                             inputIsTerminal: SystemCalls.isTerminal(SystemCalls.standardInputDescriptor),
                                             outputIsTerminal: SystemCalls.isTerminal(SystemCalls.standardOutputDescriptor),
                                             errorIsTerminal: SystemCalls.isTerminal(SystemCalls.standardErrorDescriptor))
        environment.isForeground = runsInForeground()
        return environment
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
///   - programName: `argv[0]`'s bytes: when its last path component is `gzip`, `gunzip`, `zcat`
///     or `gzcat` (a link to the binary), the run is gzip, gzip's `-d` or `-dc`. Usage errors
///     and warnings about the command line are signed with that component.
///   - environment: The standard streams; none is closed.
/// - Returns: The exit status, and whether an output turned out to be a closed pipe.
public func runCommand(arguments: [[UInt8]], programName: [UInt8] = Array("gzstream".utf8),
                       environment: CommandEnvironment) -> CommandResult {
    let parsed: ParsedCommand
    let baseName = (Pathname(bytes: programName) ?? "gzstream").baseName
    // As coreutils and gzip sign their messages: the name the program was called by.
    let signature = GzipCompatibility.signature(of: baseName)
    let diagnostics = Diagnostics(stream: environment.standardError, quiet: false)
    do throws(UsageError) {
        parsed = try parseArguments(arguments, programName: baseName, gzipVariable: environment.gzipVariable,
                                    warn: { diagnostics.write("\(signature): \($0)\n") })
    } catch {
        diagnostics.write(error.text(signedBy: signature))
        return CommandResult(status: .error, brokenPipe: false)
    }
    let status: ExitStatus
    var closedPipe: String?
    var gzipProgram: String?
    switch parsed {
    case .help(let topic):
        (status, closedPipe) = printOrFail(topic.text(calledAs: signature), environment: environment)
    case .version:
        (status, closedPipe) = printOrFail(versionText, environment: environment)
    case .license:
        (status, closedPipe) = printOrFail(licenseText, environment: environment)
    case .run(let options):
        let command = Command(options: options, environment: environment,
                              programName: options.gzip?.programName ?? "gzstream")
        gzipProgram = options.gzip?.programName
        status = command.run()
        closedPipe = command.closedPipe
    case .cacheHelp(let action):
        (status, closedPipe) = printOrFail(action?.helpText ?? cacheHelpText, environment: environment)
    case .cache(let options):
        let command = CacheCommand(options: options, environment: environment)
        status = command.run()
        closedPipe = command.closedPipe
    }
    if let closedPipe, environment.reportsBrokenPipe {
        if let gzipProgram, closedPipe == "standard output" {
            // GNU gzip 1.12's words, after an empty line as it writes them.
            try? environment.standardError.writeAll(Array("\n\(gzipProgram): stdout: Broken pipe\n".utf8))
        } else {
            Diagnostics(stream: environment.standardError, quiet: false).error(closedPipe, "Broken pipe")
        }
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
    } catch where isSystemError(error, Errno.brokenPipe) {
        return (.error, "standard output")
    } catch {
        Diagnostics(stream: environment.standardError, quiet: false).error("standard output", describe(error))
        return (.error, nil)
    }
}

/// One run of a command (pack, unpack, test, list, index, send or receive) over its operands.
final class Command {
    /// What the command line asked for: the options every command takes, and the command's own.
    let options: Invocation
    let environment: CommandEnvironment
    let diagnostics: Diagnostics
    /// `-o DIR` naming an existing directory: each output is written in it under its default
    /// name (a symbolic link to a directory counts).
    let outputDirectory: Pathname?
    /// `list`'s output, shared by every file listed.
    private var listing: (any Listing)?
    /// Standard error, shared by the diagnostics and the progress display.
    let console: StandardErrorConsole

    /// - Parameter programName: What messages start with (``Diagnostics/programName``).
    init(options: Invocation, environment: CommandEnvironment, programName: String = "gzstream") {
        self.options = options
        self.environment = environment
        console = StandardErrorConsole(stream: environment.standardError, isTerminal: environment.errorIsTerminal)
        self.diagnostics = Diagnostics(stream: environment.standardError, quiet: options.common.quiet, console: console,
                                       programName: programName, joinsAsGzip: options.gzip != nil)
        outputDirectory = options.command.outputPath.flatMap { FileInfo(path: $0)?.isDirectory == true ? $0 : nil }
    }

    /// The options every command takes.
    var common: CommonOptions { options.common }

    func run() -> ExitStatus {
        let operands: [Pathname] = common.files.isEmpty ? ["-"] : common.files
        switch options.command {
        case .send(_, let connection):
            return runOverNetwork(connection) { try self.send(over: connection) }
        case .receive(let unpack, let connection):
            return runOverNetwork(connection) { try self.receive(over: connection, output: unpack.output) }
        case .list(let list) where list.members:
            return listTarMembers(list)
        case .list(let list):
            if options.gzip?.listsGzipTable(json: list.json) == true {
                listing = GzipListing(command: self, operandCount: operands.count)
            } else {
                listing = MemberListing(command: self, json: list.json)
            }
        case .pack(let pack) where pack.tar != nil:
            // One archive of every operand (TarPacking.swift).
            return runTarPack(pack)
        case .unpack(let unpack) where unpack.tar != nil:
            return extractTar(unpack.tar!, archive: operands[0])
        case .pack, .unpack, .test, .index:
            listing = nil
        }
        var status = ExitStatus.success
        listing?.begin()
        for operand in operands {
            if stopped { break }
            status = max(status, handle(operand))
        }
        if let listing {
            listing.end()
            if let error = listing.writeError {
                if (error as? ByteStreamError)?.errno == Errno.brokenPipe {
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

    /// The input being handled, opened once (`nil` for standard input): removal
    /// (``removeInputIfAsked(_:inputInfo:status:)``), the `.gzi` beside it and gzip's listing
    /// look names up relative to its directory.
    var currentInput: OpenedInput?
    /// The index the current input is being decoded through (`FILE.gzidx`, gztool's index
    /// beside it, or `--index PATH`), for the line that says it did not fit.
    var indexInUse: Pathname?
    /// Whether an index found beside the current input was not used (said already): a range
    /// is then decoded from the start rather than refused for want of an index.
    var foundIndexRefused: Bool { foundIndexRefusal != nil }
    /// Why that index was not used (`nil`: none was refused), for `index --plan`, which fails
    /// on it instead.
    var foundIndexRefusal: String?
    /// gzip mode's `-v`: the name of the file being worked on while its `NAME:\t` is not yet
    /// written (GzipModeMessages.swift).
    var verboseName: String?

    /// One operand; reports its failure.
    private func handle(_ operand: Pathname) -> ExitStatus {
        reportingFailure(of: operand) {
            guard operand != "-" else { return try handleInput(operand, nil) }
            let input: OpenedInput
            do {
                input = try openOperand(operand)
            } catch let reported as Reported {
                if options.mode == .test || options.mode == .list {
                    listing?.unreadableFile(displayName(operand), problem: reported.problem ?? "cannot be read")
                }
                throw reported
            }
            defer { input.close() }
            if input.info.isDirectory { return try handleDirectory(input) }
            // `gzip -d logx` may have found logx.gz (``openOperand(_:)``).
            return try handleInput(input.path, input)
        }
    }

    /// Runs `body` for `path`; a failure it did not report is reported naming `path`.
    private func reportingFailure(of path: Pathname, _ body: () throws -> ExitStatus) -> ExitStatus {
        do {
            return try body()
        } catch let reported as Reported {
            return reported.status
        } catch {
            diagnostics.error(displayName(path), describe(error))
            return .error
        }
    }

    /// An opened input that is not a directory (`nil`: standard input), by mode.
    private func handleInput(_ path: Pathname, _ input: OpenedInput?) throws -> ExitStatus {
        let outer = currentInput
        currentInput = input
        defer { currentInput = outer }
        switch options.command {
        case .index(let index): return try buildIndex(path, input: input, index: index)
        case .test, .list: return try inspect(path, input: input, listing: listing)
        case .pack(let pack): return try process(path, input: input, output: pack.output)
        case .unpack(let unpack): return try process(path, input: input, output: unpack.output)
        case .send, .receive: preconditionFailure("send and receive take no operands to handle")
        }
    }

    /// A directory named on the command line: walked with `-r`, else passed over with GNU
    /// gzip's warning. (A symbolic link to one was refused when it was opened, unless
    /// following was asked for.)
    private func handleDirectory(_ directory: OpenedInput) throws -> ExitStatus {
        guard options.command.recursive else {
            let problem = Self.directoryIgnored
            diagnostics.warning(directory.path.description, problem)
            listing?.unreadableFile(directory.path.description, problem: problem)
            return .warning
        }
        return walk(directory.fileDescriptor, path: directory.path)
    }

    /// Whether pack or unpack writes files (not `-c`): GNU gzip's file mode.
    var writesFiles: Bool {
        options.command.output.map { !$0.toStandardOutput } ?? false
    }

    /// `-r`: every regular file under the open directory `directory` (named `path` in
    /// messages), in bytewise order of names, handled as if named. Symbolic links are not
    /// followed, and FIFOs, devices and sockets not read (a FIFO would block the walk): each
    /// is passed over with a warning. Names pack would not pack again, or that have no suffix
    /// unpack takes, are passed over quietly (with a warning under `-v`, and
    /// ``unfitNameStatus``), as GNU gzip does; with `-c`, every regular file is taken.
    ///
    /// Every entry is looked up relative to its directory's descriptor (`fstatat`), then
    /// opened relative to it with `O_NOFOLLOW` and checked to be the file looked up (same
    /// device and inode): a directory or file that another user swaps for a symbolic link
    /// during the walk is passed over, so the walk never leaves its tree. One descriptor is
    /// open per level of directories being walked, closed when its level is done.
    private func walk(_ directory: Int32, path: Pathname) -> ExitStatus {
        let names: [Pathname]
        do {
            names = try directoryEntries(of: directory, path: path)
        } catch {
            return reportError(path.description, errorText(error))
        }
        var status = ExitStatus.success
        for name in names {
            if stopped { break }
            let entryPath = path.appending(component: name)
            let found: FileInfo
            do {
                guard let info = try SystemCalls.info(of: name, in: directory, target: entryPath.description) else {
                    status = max(status, reportError(entryPath.description, Errno.text(Errno.noSuchFile)))
                    continue
                }
                found = info
            } catch {
                status = max(status, reportError(entryPath.description, errorText(error)))
                continue
            }
            if found.isDirectory {
                status = max(status, walkSubdirectory(name, in: directory, path: entryPath, found: found))
            } else if found.isSymbolicLink {
                status = max(status, passOver(entryPath, Self.linkNotFollowed))
            } else if !found.isRegularFile {
                status = max(status, passOver(entryPath, notRegularFileIgnored))
            } else if (writesFiles || options.mode == .test || options.mode == .list), let problem = unfitName(entryPath) {
                if common.verbose {
                    diagnostics.warning(entryPath.description, problem)
                    status = max(status, unfitNameStatus)
                }
            } else {
                status = max(status, handleFound(name, in: directory, path: entryPath, found: found))
            }
        }
        return status
    }

    static let linkNotFollowed = "is a symbolic link -- not followed"
    /// An entry the walk looked up and then found another file under the name.
    static let replacedDuringWalk = "was replaced while being opened -- ignored"

    /// Opens the subdirectory `name` of `directory` without following a link, checks that it
    /// is the directory looked up as `found`, and walks it; its descriptor is closed after.
    private func walkSubdirectory(_ name: Pathname, in directory: Int32, path: Pathname, found: FileInfo) -> ExitStatus {
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.open(name, in: directory, flags: OpenFlag.readOnly | OpenFlag.directory
                                                  | OpenFlag.noFollow | OpenFlag.nonBlocking,
                                              target: path.description)
        } catch where isSystemError(error, Errno.tooManySymbolicLinks) || isSystemError(error, Errno.notADirectory) {
            return passOver(path, isSystemError(error, Errno.tooManySymbolicLinks) ? Self.linkNotFollowed : Self.replacedDuringWalk)
        } catch {
            return reportError(path.description, errorText(error))
        }
        defer { try? SystemCalls.close(descriptor, target: path.description) }
        let opened: FileInfo
        do {
            opened = try SystemCalls.info(of: descriptor, target: path.description)
        } catch {
            return reportError(path.description, errorText(error))
        }
        guard opened.isSameFile(as: found) else { return passOver(path, Self.replacedDuringWalk) }
        return walk(descriptor, path: path)
    }

    /// Opens the regular file `name` of `directory` without following a link, checks that it
    /// is the file looked up as `found`, and handles it.
    private func handleFound(_ name: Pathname, in directory: Int32, path: Pathname, found: FileInfo) -> ExitStatus {
        let input: OpenedInput
        do {
            input = try OpenedInput(name: name, in: directory, ownsDirectory: false, path: path, followsLinks: false)
        } catch where isSystemError(error, Errno.tooManySymbolicLinks) {
            return passOver(path, Self.linkNotFollowed)
        } catch {
            return reportError(path.description, errorText(error))
        }
        defer { input.close() }
        guard input.info.isRegularFile, input.info.isSameFile(as: found) else {
            return passOver(path, Self.replacedDuringWalk)
        }
        return reportingFailure(of: path) { try handleInput(path, input) }
    }

    private func passOver(_ path: Pathname, _ problem: String) -> ExitStatus {
        diagnostics.warning(path.description, problem)
        return .warning
    }

    /// Packs or unpacks one input to where `output` says.
    private func process(_ operand: Pathname, input opened: OpenedInput?, output: OutputOptions) throws -> ExitStatus {
        guard let opened else {
            if let outputDirectory {
                throw Reported(status: reportError("standard input", "has no name for a file in the directory "
                    + "\(outputDirectory) (give -o DIRECTORY/NAME)"))
            }
            if let outputPath = output.outputPath {
                return try toFile(input: environment.standardInput, inputPath: operand,
                                  inputInfo: nil, outputPath: outputPath)
            }
            return try toStandardOutput(input: environment.standardInput, inputPath: operand, inputInfo: nil)
        }
        // Every decision below is taken from what fstat said of the opened file; a symbolic
        // link was refused when it was opened (O_NOFOLLOW), unless following was asked for.
        let info = opened.info
        try checkKind(info, of: operand)
        if output.toStandardOutput {
            return try toStandardOutput(input: opened.stream(), inputPath: operand, inputInfo: info)
        }
        let explicitOutput = output.outputPath != nil && outputDirectory == nil
        if !common.force, info.linkCount > 1 {
            // As GNU gzip: --rm would break the link, and the other names would keep the old data.
            let others = info.linkCount - 1
            diagnostics.warning(operand.description, "has \(others) other link\(others == 1 ? "" : "s") -- file ignored")
            return .warning
        }
        if explicitOutput, let outputPath = output.outputPath {
            return try toFile(input: opened.stream(), inputPath: operand, inputInfo: info, outputPath: outputPath)
        }
        let defaultPath = try defaultOutputPath(for: operand)
        let outputPath = outputDirectory.map { $0.appending(component: defaultPath.baseName) } ?? defaultPath
        return try toFile(input: opened.stream(), inputPath: operand, inputInfo: info, outputPath: outputPath)
    }
}

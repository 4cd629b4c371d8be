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

    public init(standardInput: ByteInputStream, standardOutput: ByteOutputStream,
                standardError: ByteOutputStream, inputIsTerminal: Bool = false, outputIsTerminal: Bool = false) {
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.inputIsTerminal = inputIsTerminal
        self.outputIsTerminal = outputIsTerminal
    }

    /// The process's descriptors 0, 1 and 2 (none is closed by the run).
    public static func process() -> CommandEnvironment {
        CommandEnvironment(standardInput: FileInputStream.standardInput(),
                           standardOutput: FileOutputStream.standardOutput(),
                           standardError: FileOutputStream.standardError(),
                           inputIsTerminal: isatty(STDIN_FILENO) == 1,
                           outputIsTerminal: isatty(STDOUT_FILENO) == 1)
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

/// Runs `gzstream` with its arguments (without the program name) against `environment`.
/// - Returns: The exit status.
public func runCommand(arguments: [String], environment: CommandEnvironment) -> ExitStatus {
    let parsed: ParsedCommand
    do {
        parsed = try parseCommandLine(arguments)
    } catch {
        let diagnostics = Diagnostics(stream: environment.standardError, quiet: false)
        diagnostics.write("gzstream: Error: \(error.message)\n" + usageText)
        return .error
    }
    switch parsed {
    case .help:
        return printOrFail(helpText, environment: environment)
    case .version:
        return printOrFail("gzstream \(toolVersion) (zlib \(zlibRuntimeVersion))\n", environment: environment)
    case .run(let options):
        return Command(options: options, environment: environment).run()
    }
}

/// Writes `text` to standard output; a failed write is an error (`--help > /dev/full`).
private func printOrFail(_ text: String, environment: CommandEnvironment) -> ExitStatus {
    let output = environment.standardOutput
    if output.streamStatus == .notOpen { output.open() }
    do {
        try output.writeAll(Array(text.utf8))
        return .success
    } catch let error as ByteStreamError where error.errno == EPIPE {
        return .error
    } catch {
        Diagnostics(stream: environment.standardError, quiet: false).error("standard output", describe(error))
        return .error
    }
}

/// Writes one-line messages to standard error.
struct Diagnostics {
    let stream: ByteOutputStream
    let quiet: Bool

    func write(_ text: String) {
        try? stream.writeAll(Array(text.utf8))
    }

    /// `gzstream: SUBJECT: PROBLEM` on one line: control characters in either (a file name
    /// with a newline, a header's FNAME) are shown escaped.
    func error(_ subject: String, _ problem: String) {
        write("gzstream: \(escapingControlCharacters(subject)): \(escapingControlCharacters(problem))\n")
    }

    func warning(_ subject: String, _ problem: String) {
        if !quiet { error(subject, problem) }
    }
}

/// A failure that has been reported already, or must stay quiet (a closed pipe).
struct Reported: Error {
    var status: ExitStatus
    /// What was reported, for a listing that records it too.
    var problem: String?
}

/// One run of `pack` or `unpack` over its operands.
final class Command {
    let options: Options
    let environment: CommandEnvironment
    let diagnostics: Diagnostics

    init(options: Options, environment: CommandEnvironment) {
        self.options = options
        self.environment = environment
        self.diagnostics = Diagnostics(stream: environment.standardError, quiet: options.quiet)
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
                if reported.status == .error && brokenPipe { break }
            } catch {
                diagnostics.error(operand == "-" ? "standard input" : operand, describe(error))
                status = max(status, .error)
            }
        }
        if let listing {
            listing.end()
            if let error = listing.writeError {
                // A closed pipe stays quiet, as for unpack -c.
                if (error as? ByteStreamError)?.errno != EPIPE {
                    diagnostics.error("standard output", describe(error))
                }
                status = .error
            }
        }
        return status
    }

    /// Set once standard output is a closed pipe: nothing more can be written there.
    var brokenPipe = false

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

    // MARK: Where the output goes

    private func toStandardOutput(input: ByteInputStream, inputName: String, inputInfo: FileInfo?) throws -> ExitStatus {
        try refuseTerminal(readingStandardInput: inputInfo == nil)
        let output = environment.standardOutput
        if output.streamStatus == .notOpen { output.open() }
        let outcome = try transform(input, inputName: inputName, inputInfo: inputInfo, into: output,
                                    outputName: "standard output", closesOutput: false)
        report(outcome, inputName: inputName, outputName: "standard output")
        return outcome.status
    }

    private func toFile(input: ByteInputStream, inputName: String, inputInfo: FileInfo?, outputPath: String) throws -> ExitStatus {
        if inputInfo == nil { try refuseTerminal(readingStandardInput: true) }
        if options.outputPath != nil, let target = FileInfo(path: outputPath), !target.isRegularFile, !target.isDirectory {
            return try toDevice(input: input, inputName: inputName, inputInfo: inputInfo, target: target,
                                outputPath: outputPath)
        }
        let existing = FileInfo(path: outputPath)
        try rejectSameFile(inputInfo, existing, inputName: inputName)
        // unpack -N names the output after the header, known only once it is read: the
        // publish step checks that name.
        let outputNamedByHeader = options.mode == .unpack && options.useName == true && options.outputPath == nil
        if !options.force, !outputNamedByHeader, existing != nil {
            throw Reported(status: reportError(outputPath, "already exists; not overwritten (use -f to overwrite)"))
        }
        // pack --bgzf --index: OUTPUT.gzi, written and published with the output.
        let indexPath = options.index ? outputPath + ".gzi" : nil
        if let indexPath {
            let existingIndex = FileInfo(path: indexPath)
            try rejectSameFile(inputInfo, existingIndex, inputName: inputName)
            try refuseToReplaceIndex(indexPath, existing: existingIndex)
        }
        // -o naming a symbolic link (`-o /dev/stdout` into a file, say) writes the file the
        // link points to, as a shell redirection would; the link itself stays.
        let publishPath = options.outputPath != nil ? (symbolicLinkTarget(outputPath) ?? outputPath) : outputPath
        let temporary = try temporaryFile(besides: publishPath, shownAs: outputPath)
        defer { temporary.discard() }
        let indexTemporary = try indexPath.map { try temporaryFile(besides: $0, shownAs: $0) }
        defer { indexTemporary?.discard() }
        let output = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: true,
                                      displayName: outputPath)
        temporary.descriptorClosed()
        let outcome = try transform(input, inputName: inputName, inputInfo: inputInfo, into: output,
                                    outputName: outputPath, closesOutput: true)
        var finalPath = publishPath
        if options.mode == .unpack, options.useName == true, options.outputPath == nil,
           let stored = outcome.header?.fileName, let name = safeFileName(stored) {
            finalPath = directory(of: outputPath) + name
        }
        try rejectSameFile(inputInfo, FileInfo(path: finalPath), inputName: inputName)
        // Messages name the path the user gave (`-o link`), not the file behind the link.
        let shownPath = finalPath == publishPath ? outputPath : finalPath
        let permissions = inputInfo?.permissions ?? defaultPermissions()
        temporary.setAttributes(mode: permissions, times: outputTimes(inputInfo: inputInfo, header: outcome.header),
                                owner: inputInfo.map { ($0.owner, $0.group) })
        // The index is published first and taken back if the output cannot be, so that the
        // two appear together or not at all.
        if let indexTemporary, let indexPath {
            try writeIndex((outcome.index ?? BGZFIndex()).encoded, into: indexTemporary, path: indexPath)
            indexTemporary.setAttributes(mode: permissions, times: nil, owner: inputInfo.map { ($0.owner, $0.group) })
            try publishIndex(indexTemporary, as: indexPath)
        }
        do {
            try temporary.publish(as: finalPath, replacing: options.force)
        } catch let error as PublishError {
            if let indexPath { unlink(indexPath) }
            throw Reported(status: reportError(shownPath, error.message))
        }
        report(outcome, inputName: inputName, outputName: shownPath)
        if options.removeInput, inputInfo != nil, unlink(inputName) != 0 {
            diagnostics.warning(inputName, "could not remove: \(String(cString: strerror(errno)))")
            return max(outcome.status, .warning)
        }
        return outcome.status
    }

    /// `-o` naming a device or FIFO (`-o /dev/null`): written into as a shell redirection would,
    /// never replaced by a regular file. No index is written beside one.
    private func toDevice(input: ByteInputStream, inputName: String, inputInfo: FileInfo?, target: FileInfo,
                          outputPath: String) throws -> ExitStatus {
        if options.index {
            throw Reported(status: reportError(outputPath, "not a regular file: --index needs one to write its .gzi beside"))
        }
        try rejectSameFile(inputInfo, target, inputName: inputName)
        let output = FileOutputStream(path: outputPath)
        output.open()
        if let error = output.streamError {
            throw Reported(status: reportError(outputPath, describe(error)))
        }
        let outcome = try transform(input, inputName: inputName, inputInfo: inputInfo, into: output,
                                    outputName: outputPath, closesOutput: true)
        report(outcome, inputName: inputName, outputName: outputPath)
        return outcome.status
    }

    /// A temporary file beside `path`, to be renamed into place; a failure is reported
    /// naming `subject` (the path the user gave).
    func temporaryFile(besides path: String, shownAs subject: String) throws -> TemporaryFile {
        do {
            return try TemporaryFile(besides: path)
        } catch let error as PublishError {
            throw Reported(status: reportError(subject, error.message))
        }
    }

    /// Refuses to replace an existing `.gzi` (or a link by that name) without `-f`.
    func refuseToReplaceIndex(_ indexPath: String, existing: FileInfo?) throws {
        if !options.force, existing != nil || FileInfo.isSymbolicLink(indexPath) {
            throw Reported(status: reportError(indexPath, "already exists; not overwritten (use -f to overwrite)"))
        }
    }

    /// Renames a written `.gzi` into place (over an existing one only with `-f`).
    func publishIndex(_ temporary: TemporaryFile, as indexPath: String) throws {
        do {
            try temporary.publish(as: indexPath, replacing: options.force)
        } catch let error as PublishError {
            throw Reported(status: reportError(indexPath, error.message))
        }
    }

    /// Writes the `.gzi` bytes into the index's temporary file and closes it.
    func writeIndex(_ bytes: [UInt8], into temporary: TemporaryFile, path: String) throws {
        let stream = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: true, displayName: path)
        temporary.descriptorClosed()
        do {
            try stream.openOrThrow()
            try stream.writeAll(bytes)
            try stream.closeOrThrow()
        } catch {
            stream.close()
            throw Reported(status: reportError(path, describe(error)))
        }
    }

    /// Refuses to write over the input itself (also through a link): an error, input untouched.
    private func rejectSameFile(_ inputInfo: FileInfo?, _ output: FileInfo?, inputName: String) throws {
        if let inputInfo, let output, output.isSameFile(as: inputInfo) {
            throw Reported(status: reportError(inputName, "input and output are the same file"))
        }
    }

    // MARK: The work

    struct Outcome {
        var status: ExitStatus
        var bytesIn: Int64
        var bytesOut: Int64
        var header: GzipHeader?
        /// pack --bgzf --index: where each member starts.
        var index: BGZFIndex?
    }

    /// The decoder for `input` (which it does not close). BGZF input (its first member has the
    /// `BC` subfield) is inflated on ``inflateThreads`` threads while this thread reads and
    /// writes; anything else is pipelined as pigz's: a worker reads `input` ahead, this thread
    /// inflates (ISA-L), and ``inflate(_:into:closesOutput:)`` writes behind on another.
    /// Reads of `input` are `--chunk-size` reads either way.
    func decodingStream(_ input: ByteInputStream) -> any GzipDecodingStream {
        let peeked = PeekingInputStream(peeking: input, length: BGZFInputStream.signatureLength)
        if BGZFInputStream.startsWithBGZFMember(peeked.peekedBytes) {
            // The member pipeline already overlaps reading, inflating and writing: a read-ahead
            // worker on top of it measured slower (0.43-0.50 s against 0.32-0.40 s for `test`
            // of the 256 MiB benchmark file).
            return BGZFInputStream(wrapping: peeked, threads: inflateThreads, chunkSize: options.chunkSize,
                                   trailingGarbage: .ignore, maximumOutputSize: options.maximumOutputSize)
        }
        let source = ReadAheadInputStream(wrapping: peeked, chunkSize: options.chunkSize,
                                          bufferCount: Self.readAheadBytes / options.chunkSize + 1)
        return GzipInputStream(wrapping: source, chunkSize: Self.inflateInputSize, trailingGarbage: .ignore,
                               maximumOutputSize: options.maximumOutputSize)
    }

    /// Reads `decoder` to its end and writes what it gives to `output`, in writes of
    /// ``unpackWriteSize`` bytes (of `--chunk-size` when it is given). A `GzipInputStream`
    /// inflates straight into the ring of a `WriteBehindOutputStream`, whose worker writes, so
    /// that inflating never waits for a write; BGZF is written from this thread while its
    /// workers inflate the next members. The bytes before a decoding error still reach `output`
    /// (standard output keeps them, as with gzip). Closes `output` when `closesOutput`.
    func inflate(_ decoder: any GzipDecodingStream, into output: ByteOutputStream, closesOutput: Bool) throws {
        let writeSize = options.chunkSizeGiven ? options.chunkSize : Self.unpackWriteSize
        if decoder is BGZFInputStream {
            do {
                try decoder.copy(to: output, chunkSize: writeSize)
            } catch {
                if closesOutput { output.close() }
                throw error
            }
            if closesOutput { try output.closeOrThrow() }
            return
        }
        let sink = WriteBehindOutputStream(wrapping: output, chunkSize: writeSize,
                                           bufferSize: max(Self.inflateOutputSize, writeSize),
                                           closesInnerStream: closesOutput)
        do {
            try decoder.openOrThrow()
            try sink.openOrThrow()
            let length = sink.bufferSize
            while try sink.withWritableBuffer(minimumCapacity: length, { buffer in
                let count = decoder.read(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), maxLength: length)
                if count < 0 { throw decoder.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
                return count
            }) > 0 {}
        } catch {
            try? sink.flush()
            sink.close()
            throw error
        }
        try sink.closeOrThrow()
    }

    /// The compressed bytes read ahead of the inflater: 256 KiB.
    static let readAheadBytes = 256 * 1024
    /// The most compressed bytes given to the inflater at once: 64 KiB.
    static let inflateInputSize = 64 * 1024
    /// The most plain bytes the inflater makes in one call, and the size of each write-behind
    /// buffer: 128 KiB.
    static let inflateOutputSize = 128 * 1024
    /// The size of unpack's writes when `--chunk-size` is not given: 128 KiB. Writing 256 MiB
    /// to a file in 4 KiB writes cost about twice the system time of 128 KiB writes here (see
    /// the README's measurements).
    static let unpackWriteSize = 128 * 1024

    /// Packs or unpacks `input` into `output` in chunks of `chunkSize` bytes; closes `input`,
    /// and `output` when `closesOutput`.
    private func transform(_ input: ByteInputStream, inputName: String, inputInfo: FileInfo?,
                           into output: ByteOutputStream, outputName: String, closesOutput: Bool) throws -> Outcome {
        defer { input.close() }
        do {
            switch options.mode {
            case .pack:
                let threads = options.threads ?? availableProcessorCount()
                let packer: any PackingOutputStream
                if options.bgzf {
                    // BGZF headers hold no name or time (htslib reads a fixed 18-byte header).
                    packer = BGZFOutputStream(wrapping: output, level: options.level, threads: threads,
                                              chunkSize: options.chunkSize, buildsIndex: options.index,
                                              closesInnerStream: closesOutput)
                } else {
                    packer = GzipOutputStream(wrapping: output, level: options.level,
                                              header: packHeader(inputName: inputName, inputInfo: inputInfo),
                                              chunkSize: options.chunkSize, threads: threads,
                                              blockSize: options.blockSize ?? GzipOutputStream.defaultBlockSize,
                                              closesInnerStream: closesOutput)
                }
                try packer.openOrThrow()
                do {
                    try input.copy(to: packer, chunkSize: options.chunkSize)
                } catch {
                    // No trailer (or BGZF end-of-file member): partial output never looks whole.
                    packer.abandon()
                    throw error
                }
                try packer.closeOrThrow()
                return Outcome(status: .success, bytesIn: packer.uncompressedByteCount,
                               bytesOut: packer.compressedCount, header: nil,
                               index: (packer as? BGZFOutputStream)?.index)
            case .unpack:
                // A range through the .gzi index seeks the file itself (BlockedUnpack.swift).
                if options.rangeOffset != nil || options.rangeLength != nil {
                    return try unpackRange(input, path: inputName, into: output, closesOutput: closesOutput)
                }
                let decoder = decodingStream(input)
                defer { decoder.close() }
                try inflate(decoder, into: output, closesOutput: closesOutput)
                var status = ExitStatus.success
                if decoder.trailingGarbage != nil {
                    status = warnTrailingGarbage(inputName)
                }
                return Outcome(status: status, bytesIn: decoder.compressedByteCount,
                               bytesOut: decoder.uncompressedByteCount, header: decoder.header)
            case .test, .list, .index:
                preconditionFailure("test, list and index do not transform")
            }
        } catch let reported as Reported {
            throw reported   // already reported (unpackRange)
        } catch let error as ByteStreamError where error.errno == EPIPE && error.target == "standard output" {
            brokenPipe = true
            throw Reported(status: .error)
        } catch let error as ByteStreamError {
            throw Reported(status: reportError(error.target ?? inputName, describe(error)))
        } catch {
            throw Reported(status: reportError(inputName, describe(error)))
        }
    }

    private func packHeader(inputName: String, inputInfo: FileInfo?) -> GzipHeader {
        var header = GzipHeader()
        guard let inputInfo, options.useName != false else { return header }
        header.fileName = Array(baseName(inputName).utf8)
        header.modificationTime = UInt32(clamping: max(0, inputInfo.modificationTime.seconds))
        return header
    }

    /// The input's access and modification times; for `unpack -N`, the header's MTIME when set.
    private func outputTimes(inputInfo: FileInfo?, header: GzipHeader?)
        -> (access: FileInfo.Timestamp, modification: FileInfo.Timestamp)? {
        guard let inputInfo else { return nil }
        if options.mode == .unpack, options.useName == true, let mtime = header?.modificationTime, mtime != 0 {
            return (inputInfo.accessTime, FileInfo.Timestamp(seconds: Int(mtime), nanoseconds: 0))
        }
        return (inputInfo.accessTime, inputInfo.modificationTime)
    }

    // MARK: Checks and names

    func inputInfo(_ path: String) throws -> FileInfo {
        func refuse(_ problem: String) -> Reported {
            Reported(status: reportError(path, problem), problem: problem)
        }
        guard let info = FileInfo(path: path) else { throw refuse(String(cString: strerror(errno))) }
        if info.isDirectory { throw refuse("is a directory") }
        if !info.isRegularFile && !options.force && !options.toStandardOutput {
            throw refuse("not a regular file (use -f or -c to read it)")
        }
        return info
    }

    func refuseTerminal(readingStandardInput: Bool) throws {
        guard !options.force else { return }
        switch options.mode {
        case .pack where environment.outputIsTerminal && options.outputPath == nil:
            throw Reported(status: reportError("standard output",
                                               "compressed data not written to a terminal (use -f to force)"))
        case .unpack, .test, .list:
            guard readingStandardInput && environment.inputIsTerminal else { break }
            throw Reported(status: reportError("standard input",
                                               "compressed data not read from a terminal (use -f to force)"))
        default:
            break
        }
    }

    /// `x` → `x.gz` for pack; `x.gz` → `x` and `x.tgz` → `x.tar` for unpack. `nil` (after a
    /// warning) when the name does not fit.
    private func defaultOutputPath(for input: String) -> String? {
        switch options.mode {
        case .pack:
            for suffix in [".gz", ".tgz"] where input.lowercased().hasSuffix(suffix) {
                diagnostics.warning(input, "already has \(suffix) suffix -- unchanged")
                return nil
            }
            return input + ".gz"
        case .unpack:
            // GNU gzip's suffixes, in any case.
            let name = baseName(input).lowercased()
            for (suffix, replacement) in [(".gz", ""), (".tgz", ".tar"), (".taz", ".tar"), ("-gz", ""), (".z", ""),
                                          ("-z", ""), ("_z", "")]
            where name.hasSuffix(suffix) && name.count > suffix.count {
                return String(input.dropLast(suffix.count)) + replacement
            }
            diagnostics.warning(input, "unknown suffix -- ignored")
            return nil
        case .test, .list, .index:
            return nil
        }
    }

    // MARK: Reporting

    /// GNU gzip's warning, word for word: the data before the garbage was kept.
    func warnTrailingGarbage(_ subject: String) -> ExitStatus {
        diagnostics.warning(subject, "decompression OK, trailing garbage ignored")
        return .warning
    }

    func reportError(_ subject: String, _ problem: String) -> ExitStatus {
        diagnostics.error(subject, problem)
        return .error
    }

    private func report(_ outcome: Outcome, inputName: String, outputName: String) {
        guard options.verbose else { return }
        let (plain, packed) = options.mode == .pack ? (outcome.bytesIn, outcome.bytesOut) : (outcome.bytesOut, outcome.bytesIn)
        let saved = plain == 0 ? 0 : (1 - Double(packed) / Double(plain)) * 100
        diagnostics.write("gzstream: \(inputName): \(outcome.bytesIn) -> \(outcome.bytesOut) bytes, "
            + "\(formatPercent(saved)) saved -> \(outputName)\n")
    }
}

/// What pack needs of a compressing stream.
protocol PackingOutputStream: ByteOutputStream {
    /// Closes without ending the data, so that a reader sees it truncated.
    func abandon()
    var uncompressedByteCount: Int64 { get }
    var compressedCount: Int64 { get }
}

extension GzipOutputStream: PackingOutputStream {}
extension BGZFOutputStream: PackingOutputStream {}

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

/// `text` with C0 controls, DEL and C1 controls written as `\u{…}`.
func escapingControlCharacters(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
        if isControl(scalar) {
            result += "\\u{\(String(scalar.value, radix: 16))}"
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}

private func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || scalar.value == 0x7f || (0x80..<0xa0).contains(scalar.value)
}

func formatPercent(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    let sign = tenths < 0 ? "-" : ""
    return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)%"
}

func baseName(_ path: String) -> String {
    let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
    return trimmed.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? trimmed
}

func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[...slash])
}

/// The last path component of a stored FNAME, or `nil` when it is empty, `.`, `..` or longer
/// than a file name can be (a header must not write outside the output's directory).
func safeFileName(_ stored: [UInt8]) -> String? {
    let text = String(decoding: stored, as: UTF8.self)
    let name = baseName(text)
    guard !name.isEmpty, name != ".", name != "..", !name.contains("\0"),
          name.utf8.count <= Int(NAME_MAX) else { return nil }
    return name
}

/// The mode of a new file: 0666 less the process's umask.
func defaultPermissions() -> mode_t {
    let mask = umask(0)
    umask(mask)
    return 0o666 & ~mask
}

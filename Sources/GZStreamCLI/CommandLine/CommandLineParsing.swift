import ByteStreams
import GzipStreams

/// The program names that run as GNU gzip whatever the first argument (no command is
/// recognised, so `gzip test` packs the file `test`), each with whether it decompresses and
/// whether it writes to standard output: `gzip`, gzip's `gunzip` (`gzip -d`) and `zcat`
/// (`gzip -dc`): the last path component of `argv[0]`, as a link to the binary gives it.
private let gzipNames: [Pathname: (decompress: Bool, toStandardOutput: Bool)] = [
    "gzip": (false, false), "gunzip": (true, false), "zcat": (true, true), "gzcat": (true, true),
]

/// Parses `gzstream pack|unpack|test|list|index [OPTIONS] [FILE ...]`, or, when the first
/// argument is none of these (nor `help`), GNU gzip's command line `gzstream [OPTIONS] [FILE ...]`,
/// which also serves `gzip`, `gunzip` and `zcat` (`programName`, the last path component of
/// `argv[0]`). Options are read by an ``ArgumentScanner``, as GNU gzip reads them. Each argument
/// is the bytes the system passed: file names and `-S`'s suffix keep them all (UTF-8 or not);
/// the other options are read as UTF-8. The rules between options are
/// ``ParsedValues/validate(keepOrRemoveGiven:)``'s; what it returns to run is typed per command
/// (CommandOptions.swift).
/// - Parameters:
///   - gzipVariable: The `GZIP` environment variable, read in gzip mode only, as gzip 1.12
///     reads it (``gzipVariableArguments(_:)``): its options come before the command line's.
///   - warn: Called with a warning line to print (`GZIP`'s deprecation), even when the command
///     line is then refused.
func parseCommandLine(_ rawArguments: [[UInt8]], programName: Pathname = "gzstream", gzipVariable: [UInt8]? = nil,
                      warn: (String) -> Void = { _ in }) throws(UsageError) -> ParsedCommand {
    let first = rawArguments.first.map { String(decoding: $0, as: UTF8.self) }
    var options: ParsedValues
    var arguments = rawArguments[...]
    // gzip mode: -d, -t and -l choose the mode once every option is read.
    var decompress = false
    var test = false
    var list = false
    var networkCommand: NetworkCommand?
    let gzip = GzipCompatibility(programName: GzipCompatibility.signature(of: programName))
    if let gzipName = gzipNames[programName] {
        options = ParsedValues(mode: .pack, gzip: gzip)
        options.toStandardOutput = gzipName.toStandardOutput
        decompress = gzipName.decompress
    } else if first == "help" {
        return try parseHelpRequest(rawArguments.dropFirst())
    } else if first == "cache" {
        return try parseCacheCommandLine(Array(arguments.dropFirst()))
    } else if let first, let command = NetworkCommand(rawValue: first) {
        options = ParsedValues(mode: command == .send ? .pack : .unpack)
        networkCommand = command
        arguments = arguments.dropFirst()
    } else if let first, let mode = Invocation.Mode(rawValue: first) {
        options = ParsedValues(mode: mode)
        arguments = arguments.dropFirst()
    } else {
        options = ParsedValues(mode: .pack, gzip: gzip)
    }
    let gzipMode = options.gzip != nil
    if gzipMode, let gzipVariable {
        let taken = try gzipVariableArguments(gzipVariable)
        if taken.warns { warn("warning: GZIP environment variable is deprecated; use an alias or script") }
        arguments = (taken.arguments + arguments)[...]
    }
    if gzipMode, gzipNames[programName] == nil, let first = rawArguments.first {
        try refuseMistypedCommand(first)
    }
    // What -h shows: gzip mode's help under gzip's names, the map without a command, else the command's.
    let helpTopic = gzipNames[programName] != nil ? .gzip : gzipMode ? .overview
        : HelpTopic(rawValue: networkCommand?.rawValue ?? options.mode.rawValue) ?? .overview
    // `--rm`, `-k` or `--keep` as given; gzip mode's default depends on the output.
    var removal: Bool?
    var scanner = ArgumentScanner(arguments)
    // The options given that some command does not take, in the order given; as their values,
    // the last of `--rm` and `-k` counts (`test --rm -k` keeps, so --rm was not given).
    var given: [OptionKey] = []
    // The last --span's text when it was a number alone, which counts KiB (deprecated).
    var spanCountingKiB: String?
    /// Refuses `key` at once unless the command known so far takes it.
    func refuseUnlessTaken(_ key: OptionKey) throws(UsageError) {
        let shape = CommandShape(options, network: networkCommand)
        if !shape.takes.contains(key) { throw shape.refusal(of: key) }
    }

    while let argument = scanner.next() {
        switch argument {
        case .operand(let raw):
            options.files.append(try pathname(raw))
        case .long(let name):
            func flag() throws(UsageError) { try scanner.refuseValue(name) }
            switch name {
            case "stdout", "to-stdout": try flag(); options.toStandardOutput = true; given.append(.stdout)
            case "output": options.outputPath = try pathname(try scanner.value(for: "--output")); given.append(.output)
            case "force": try flag(); options.force = true
            case "recursive": try flag(); options.recursive = true; given.append(.recursive)
            case "level": options.level = try parseLevel(try scanner.text(for: "--level"))
            case "fast": try flag(); options.level = 1
            case "best": try flag(); options.level = compressionLevels.upperBound
            case "engine": options.engine = try parseEngine(try scanner.text(for: "--engine")); given.append(.engine)
            case "rsyncable": try flag(); options.rsyncable = true; given.append(.rsyncable)
            case "chunk-size":
                options.chunkSize = try parseChunkSize(try scanner.text(for: "--chunk-size"))
                options.chunkSizeGiven = true
            case "max-output":
                options.maximumOutputSize = Int(try parseByteCount(try scanner.text(for: "--max-output"), option: "--max-output"))
                given.append(.maximumOutput)
            case "no-name": try flag(); options.useName = false
            case "name": try flag(); options.useName = true
            case "synchronous": try flag(); options.synchronous = true
            case "rm": try flag(); removal = true; given.append(.remove)
            case "keep": try flag(); removal = false; given.removeAll { $0 == .remove }
            case "suffix": options.suffix = try parseSuffix(try scanner.value(for: "--suffix"))
            case "decompress" where gzipMode, "uncompress" where gzipMode: try flag(); decompress = true
            case "test" where gzipMode: try flag(); test = true
            case "list" where gzipMode: try flag(); list = true
            case "json": try flag(); options.json = true; given.append(.json)
            case "members": try flag(); options.members = true; given.append(.members)
            case "no-tar": try flag(); options.noTar = true; given.append(.noTar)
            case "strict": try flag(); options.strict = true; given.append(.strict)
            case "write-index": try flag(); options.writesIndex = true; given.append(.writesIndex)
            case "threads", "processes": options.threads = try parseThreads(try scanner.text(for: "--\(name)"))
            case "block-size", "blocksize":
                options.blockSize = try parseBlockSize(try scanner.text(for: "--\(name)"), option: "--\(name)")
                given.append(.blockSize)
            case "bgzf": try flag(); options.bgzf = true; given.append(.bgzf)
            case "index":
                // pack's --index is a flag; unpack and test read through the index at PATH.
                if scanner.hasInlineValue || (!gzipMode && (options.mode == .unpack || options.mode == .test)) {
                    options.indexPath = try pathname(try scanner.value(for: "--index"))
                    given.append(.indexPath)
                } else {
                    try flag()
                    options.index = true
                    given.append(.writeIndex)
                }
            case "span":
                let text = try scanner.text(for: "--span")
                let span = try parseSpan(text)
                options.span = span.bytes
                spanCountingKiB = span.countsKiB ? text : nil
                given.append(.span)
            case "offset":
                options.rangeOffset = try parseByteCount(try scanner.text(for: "--offset"), option: "--offset")
                given.append(.range)
            case "length":
                options.rangeLength = try parseByteCount(try scanner.text(for: "--length"), option: "--length")
                given.append(.range)
            case "whole-lines": try flag(); options.wholeLines = true; given.append(.wholeLines)
            case "extract": try flag(); options.extractsArchive = true; given.append(.extract)
            case "links-outside": try flag(); options.linksOutside = true; given.append(.linksOutside)
            case "same-owner": try flag(); options.sameOwner = true; given.append(.sameOwner)
            case "no-same-owner": try flag(); options.sameOwner = false; given.append(.sameOwner)
            case "directory":
                options.extractionDirectory = try pathname(try scanner.value(for: "--directory"))
                given.append(.directory)
            case "plan":
                options.plan = try parseByteCount(try scanner.text(for: "--plan"), option: "--plan")
                given.append(.plan)
            case "lines": options.lineRange = try parseLineRange(try scanner.text(for: "--lines")); given.append(.lines)
            // Met in order, as gzip: an unknown option before them is an error, and `-- -h` or
            // `-S -h` names a file or a suffix.
            case "help": try flag(); return .help(helpTopic)
            case "version": try flag(); return .version
            case "license": try flag(); return .license
            // Refused when met by a command that does not take them, before their value is read.
            case "timeout":
                try refuseUnlessTaken(.timeout)
                options.timeout = try parseTimeout(try scanner.text(for: "--timeout"))
            case "deadline":
                try refuseUnlessTaken(.deadline)
                options.deadline = try parseDeadline(try scanner.text(for: "--deadline"))
            case "key-file":
                try refuseUnlessTaken(.keyFile)
                let file = try scanner.text(for: "--key-file")
                if file.isEmpty { throw UsageError(message: "--key-file needs a file name") }
                options.keyFile = file
            // pack --tar (not gzip mode's: gzip has no such option).
            case "tar" where !gzipMode: try flag(); options.tar = true; given.append(.tar)
            case "mtime" where !gzipMode:
                options.tarModificationTime = try parseTarTime(try scanner.text(for: "--mtime"))
                given.append(.tarMetadata)
            case "owner" where !gzipMode:
                options.tarOwner = try parseTarIdentity(try scanner.text(for: "--owner"), option: "--owner")
                given.append(.tarMetadata)
            case "group" where !gzipMode:
                options.tarGroup = try parseTarIdentity(try scanner.text(for: "--group"), option: "--group")
                given.append(.tarMetadata)
            case "numeric-owner" where !gzipMode: try flag(); options.numericOwner = true; given.append(.tarMetadata)
            case "progress": try flag(); options.progress = true; given.append(.progress)
            case "no-progress": try flag(); options.progress = false; given.append(.progress)
            case "quiet", "silent": try flag(); options.quiet = true; options.verbose = false
            case "verbose": try flag(); options.verbose = true; options.quiet = false
            default: throw scanner.unrecognizedOption(name)
            }
        case .short(let letter):
            if let level = try compressionLevel(flag: letter, in: &scanner) {
                options.level = level
                continue
            }
            switch letter {
            case "h": return .help(helpTopic)
            case "V": return .version
            case "L": return .license
            case "c": options.toStandardOutput = true; given.append(.stdout)
            case "f": options.force = true
            case "r": options.recursive = true; given.append(.recursive)
            case "k": removal = false; given.removeAll { $0 == .remove }
            case "d" where gzipMode: decompress = true
            case "t" where gzipMode: test = true
            case "l" where gzipMode: list = true
            case "n": options.useName = false
            case "N": options.useName = true
            case "q": options.quiet = true; options.verbose = false
            case "v": options.verbose = true; options.quiet = false
            case "o": options.outputPath = try pathname(try scanner.value(for: "-o")); given.append(.output)
            case "p": options.threads = try parseThreads(try scanner.text(for: "-p"))
            case "b": options.blockSize = try parseBlockSize(try scanner.text(for: "-b")); given.append(.blockSize)
            case "S": options.suffix = try parseSuffix(try scanner.value(for: "-S"))
            case "C" where !gzipMode:
                options.extractionDirectory = try pathname(try scanner.value(for: "-C"))
                given.append(.directory)
            default: throw scanner.invalidOption(letter)
            }
        }
    }
    if gzipMode {
        options.mode = list ? .list : test ? .test : decompress ? .unpack : .pack
        // gzip's -t and -l imply -c (zcat -t, gzip -tc): it changes nothing.
        if options.mode == .test || options.mode == .list {
            options.toStandardOutput = false
            given.removeAll { $0 == .stdout }
        }
        if options.mode != .pack {
            // gzip and pigz take the options that only tune compression with -d, -t and -l and
            // ignore them: `tar -I 'gzip --rsyncable'` extracts with `-d --rsyncable`.
            options.rsyncable = false
            options.engine = nil
            options.blockSize = nil
            given.removeAll { $0 == .rsyncable || $0 == .engine || $0 == .blockSize }
        }
    }
    options.removeInput = removal ?? false
    options.keep = removal == false
    if let networkCommand {
        try takeNetworkOperands(&options, for: networkCommand, keepOrRemoveGiven: removal != nil)
    }
    // gzip mode has no tar members: unpack's extraction options would be ignored without a word
    // (`-d --extract t.tar.gz` wrote t.tar).
    if gzipMode, let key = given.first(where: OptionKey.tarExtraction.contains) {
        let option = switch key {
        case .extract: "--extract"
        case .directory: "--directory"
        case .linksOutside: "--links-outside"
        default: options.sameOwner ? "--same-owner" : "--no-same-owner"
        }
        throw UsageError(message: "\(option) applies to extracting tar members (gzstream unpack), not to gzip mode")
    }
    try CommandShape(options, network: networkCommand).refuseOptionsNotTaken(given)
    try options.validate(keepOrRemoveGiven: removal != nil)
    // Once the command line stands, so that a refused one prints its error alone.
    if let spanCountingKiB, !options.quiet {
        warn("warning: --span \(spanCountingKiB): a number alone counts KiB (deprecated); "
            + "write \(spanCountingKiB)K or \(spanCountingKiB)KiB")
    }
    return .run(options.invocation(network: networkCommand))
}

/// Parses a whole command line: ``parseCommandLine(_:programName:gzipVariable:warn:)``, then
/// the one rule that looks at the file system (`-o` of several inputs must name a directory).
/// - Parameters:
///   - programName: The last path component of `argv[0]`.
///   - gzipVariable: The `GZIP` environment variable's bytes, or `nil`.
///   - warn: Called with each warning line about the command line, without the signature.
/// - Returns: What to run, or the help, version or licence asked for.
/// - Throws: ``UsageError``, printed by ``UsageError/text(signedBy:)``.
func parseArguments(_ arguments: [[UInt8]], programName: Pathname, gzipVariable: [UInt8]?,
                    warn: (String) -> Void) throws(UsageError) -> ParsedCommand {
    let parsed = try parseCommandLine(arguments, programName: programName, gzipVariable: gzipVariable, warn: warn)
    // pack --tar writes one archive of all its operands: -o names it.
    if case .run(let invocation) = parsed, invocation.command.pack?.tar == nil,
       let outputPath = invocation.command.outputPath, invocation.common.files.count > 1,
       FileInfo(path: outputPath)?.isDirectory != true {
        throw UsageError(message: "-o takes one input file, or an existing directory for several")
    }
    return parsed
}

import ByteStreams

/// What the command line asked for.
struct Options: Equatable {
    enum Mode: String { case pack, unpack, test, list, index }

    var mode: Mode
    /// GNU gzip's command line (no subcommand, or called `gunzip`, `zcat` or `gzcat`): the mode
    /// comes from `-d`, `-t`, `-l`; pack and unpack remove each input unless `-k`, `-c` or `-o`;
    /// `-l` prints gzip's table; a name with a known suffix and an existing output are skipped
    /// as gzip skips them.
    var gzipMode = false
    var files: [Pathname] = []
    var toStandardOutput = false
    var outputPath: Pathname?
    var force = false
    /// `-r`: walk the directories named, taking the regular files in them (links not followed).
    var recursive = false
    var level = 6
    var chunkSize = ByteStream.defaultChunkSize
    /// Whether `--chunk-size` was given (unpack then writes in chunks of that size too).
    var chunkSizeGiven = false
    /// `-N`/`-n`: `nil` takes each mode's default (pack stores the name and MTIME; unpack does
    /// not restore them), as GNU gzip.
    var useName: Bool?
    var removeInput = false
    var quiet = false
    var verbose = false
    var maximumOutputSize: Int64?
    /// `list --json`: machine-readable output.
    var json = false
    /// `-p`/`--threads`: deflating threads for pack, inflating threads for BGZF input to unpack and
    /// test; `nil` is every core available to the process.
    var threads: Int?
    /// `-b`/`--block-size`: plain bytes per independently deflated block (pack); `nil` is
    /// pigz's 128 KiB. The output depends on this and the level, never on the thread count.
    var blockSize: Int?
    /// `--bgzf`: pack as BGZF (SAM/BAM specification §4.1) instead of one member.
    var bgzf = false
    /// `--index`: with `--bgzf`, write a bgzip-compatible `.gzi` index beside the output.
    var index = false
    /// `unpack --offset N`: the first plain byte to write, in bytes (BGZF with a `.gzi` index).
    var rangeOffset: Int64?
    /// `unpack --length M`: the most plain bytes to write from ``rangeOffset``; `nil` to the end.
    var rangeLength: Int64?
    /// `-S`/`--suffix`: what pack appends and unpack also recognises; `nil` is `.gz`. Bytes as
    /// given (UTF-8 or not), as the end of a name.
    var suffix: Pathname?

    /// The suffix pack appends: `-S`'s, else `.gz`.
    var packSuffix: Pathname { suffix ?? ".gz" }

    /// `--progress` (`true`) / `--no-progress` (`false`), the last given; `nil` shows progress
    /// when standard error is a terminal and `-q` is not given (Progress.swift).
    var progress: Bool?

    /// `send HOST:PORT` (mode pack) or `receive [HOST:]PORT` (mode unpack): the data goes over
    /// one TCP connection (Network.swift).
    var network: NetworkRun?
    /// `--timeout SECONDS` (send and receive): the longest wait to connect or to be connected
    /// to, and for each read or write on the connection to move a byte.
    var timeout: Duration?
    /// `--deadline DURATION` (send and receive): the longest a whole transfer may take, from
    /// connecting (send) or accepting (receive) to the acknowledgement.
    var deadline: DeadlineOption?
    /// `--key-file FILE` (send and receive): the pre-shared key; the data is then encrypted and
    /// authenticated, bound to receive's challenge.
    var keyFile: String?
}

/// What parsing found: options to run, or a request for help or the version.
enum ParsedCommand: Equatable {
    case run(Options)
    case help
    case version
    /// `gzstream cache …` (Cache.swift).
    case cache(CacheOptions)
    /// `gzstream cache --help`.
    case cacheHelp
}

/// A command line that cannot be run; printed as `Error: …` plus the usage.
struct UsageError: Error, Equatable {
    var message: String
    /// The usage lines printed after the message; `nil` for the command's (``usageText``).
    var usage: String? = nil
}

/// The program names that run as gzip's gunzip (`gzip -d`) and zcat (`gzip -dc`), each with
/// whether it writes to standard output: the last path component of `argv[0]`, as a link to
/// the binary gives it.
private let decompressingNames: [Pathname: Bool] = ["gunzip": false, "zcat": true, "gzcat": true]

/// Parses `gzstream pack|unpack|test|list|index [OPTIONS] [FILE ...]`, or, when the first
/// argument is none of these (nor `help`), GNU gzip's command line `gzstream [OPTIONS] [FILE ...]`,
/// which also serves `gunzip` and `zcat` (`programName`, the last path component of `argv[0]`).
/// Options are read as GNU gzip reads them: short flags may be grouped (`-cf9`), long options
/// take `--name VALUE` or `--name=VALUE`, `--` ends the options, and `-` alone is standard input.
/// Each argument is the bytes the system passed: file names and `-S`'s suffix keep them all
/// (UTF-8 or not); the other options are read as UTF-8.
func parseCommandLine(_ rawArguments: [[UInt8]], programName: Pathname = "gzstream") throws(UsageError) -> ParsedCommand {
    let arguments = rawArguments.map { String(decoding: $0, as: UTF8.self) }
    var options: Options
    var rest = Array(zip(arguments, rawArguments))[...]
    // gzip mode: -d, -t and -l choose the mode once every option is read.
    var decompress = false
    var test = false
    var list = false
    var networkCommand: NetworkCommand?
    if let toStandardOutput = decompressingNames[programName] {
        options = Options(mode: .unpack, gzipMode: true)
        options.toStandardOutput = toStandardOutput
        decompress = true
    } else if arguments.first == "help" {
        return .help
    } else if arguments.first == "cache" {
        return try parseCacheCommandLine(Array(zip(arguments, rawArguments).dropFirst()))
    } else if let first = arguments.first, let command = NetworkCommand(rawValue: first) {
        options = Options(mode: command == .send ? .pack : .unpack)
        networkCommand = command
        rest = rest.dropFirst()
    } else if let first = arguments.first, let mode = Options.Mode(rawValue: first) {
        options = Options(mode: mode)
        rest = rest.dropFirst()
    } else {
        options = Options(mode: .pack, gzipMode: true)
    }
    // `--rm`, `-k` or `--keep` as given; gzip mode's default depends on the output.
    var removal: Bool?
    var onlyFiles = false

    func value(for name: String, inline: String?) throws(UsageError) -> String {
        if let inline { return inline }
        guard let next = rest.popFirst() else { throw UsageError(message: "option \(name) needs a value") }
        return next.0
    }

    /// A value's bytes: `inline` (the end of the argument), else the next argument.
    func bytesValue(for name: String, inline: ArraySlice<UInt8>?) throws(UsageError) -> ArraySlice<UInt8> {
        guard let bytes = inline ?? rest.popFirst()?.1[...] else {
            throw UsageError(message: "option \(name) needs a value")
        }
        return bytes
    }

    /// A path's bytes: `inline` (the end of the argument), else the next argument.
    func pathValue(for name: String, inline: ArraySlice<UInt8>?) throws(UsageError) -> Pathname {
        try pathname(try bytesValue(for: name, inline: inline))
    }

    while let (argument, raw) = rest.popFirst() {
        if onlyFiles || argument == "-" || !argument.hasPrefix("-") {
            options.files.append(try pathname(raw[...]))
            continue
        }
        if argument == "--" {
            onlyFiles = true
            continue
        }
        if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            func noValue() throws(UsageError) {
                if inline != nil { throw UsageError(message: "option --\(name) takes no value") }
            }
            switch name {
            case "stdout", "to-stdout": try noValue(); options.toStandardOutput = true
            case "output":
                let equals = raw.firstIndex(of: UInt8(ascii: "="))
                options.outputPath = try pathValue(for: "--output", inline: equals.map { raw[($0 + 1)...] })
            case "force": try noValue(); options.force = true
            case "recursive": try noValue(); options.recursive = true
            case "level": options.level = try parseLevel(try value(for: "--level", inline: inline))
            case "fast": try noValue(); options.level = 1
            case "best": try noValue(); options.level = 9
            case "chunk-size":
                options.chunkSize = try parseChunkSize(try value(for: "--chunk-size", inline: inline))
                options.chunkSizeGiven = true
            case "max-output":
                options.maximumOutputSize = Int64(try parseSize(try value(for: "--max-output", inline: inline),
                                                                option: "--max-output", range: 0...Int.max))
            case "no-name": try noValue(); options.useName = false
            case "name": try noValue(); options.useName = true
            case "rm": try noValue(); removal = true
            case "keep": try noValue(); removal = false
            case "suffix":
                let equals = raw.firstIndex(of: UInt8(ascii: "="))
                options.suffix = try parseSuffix(try bytesValue(for: "--suffix", inline: equals.map { raw[($0 + 1)...] }))
            case "decompress" where options.gzipMode, "uncompress" where options.gzipMode: try noValue(); decompress = true
            case "test" where options.gzipMode: try noValue(); test = true
            case "list" where options.gzipMode: try noValue(); list = true
            case "json": try noValue(); options.json = true
            case "threads", "processes": options.threads = try parseThreads(try value(for: "--\(name)", inline: inline))
            case "block-size", "blocksize": options.blockSize = try parseBlockSize(try value(for: "--\(name)", inline: inline))
            case "bgzf": try noValue(); options.bgzf = true
            case "index": try noValue(); options.index = true
            case "offset":
                options.rangeOffset = Int64(try parseSize(try value(for: "--offset", inline: inline),
                                                          option: "--offset", range: 0...Int.max))
            case "length":
                options.rangeLength = Int64(try parseSize(try value(for: "--length", inline: inline),
                                                          option: "--length", range: 0...Int.max))
            // Met in order, as gzip: an unknown option before them is an error, and `-- -h` or
            // `-S -h` names a file or a suffix.
            case "help": try noValue(); return .help
            case "version": try noValue(); return .version
            case "timeout":
                if networkCommand == nil { throw UsageError(message: "--timeout applies to send and receive") }
                options.timeout = try parseTimeout(try value(for: "--timeout", inline: inline))
            case "deadline":
                if networkCommand == nil { throw UsageError(message: "--deadline applies to send and receive") }
                options.deadline = try parseDeadline(try value(for: "--deadline", inline: inline))
            case "key-file":
                if networkCommand == nil { throw UsageError(message: "--key-file applies to send, receive and cache") }
                let file = try value(for: "--key-file", inline: inline)
                if file.isEmpty { throw UsageError(message: "--key-file needs a file name") }
                options.keyFile = file
            case "progress": try noValue(); options.progress = true
            case "no-progress": try noValue(); options.progress = false
            case "quiet": try noValue(); options.quiet = true; options.verbose = false
            case "verbose": try noValue(); options.verbose = true; options.quiet = false
            default: throw UsageError(message: "unknown option '--\(name)'")
            }
            continue
        }
        var letters = argument.dropFirst()[...]
        while let letter = letters.popFirst() {
            switch letter {
            case "h": return .help
            case "V": return .version
            case "c": options.toStandardOutput = true
            case "f": options.force = true
            case "r": options.recursive = true
            case "k": removal = false
            case "d" where options.gzipMode: decompress = true
            case "t" where options.gzipMode: test = true
            case "l" where options.gzipMode: list = true
            case "n": options.useName = false
            case "N": options.useName = true
            case "q": options.quiet = true; options.verbose = false
            case "v": options.verbose = true; options.quiet = false
            case "0"..."9": options.level = Int(String(letter))!
            case "o":
                // The letters before `o` are ASCII, so the bytes after it start at the same offset.
                let offset = argument.utf8.count - letters.utf8.count
                options.outputPath = try pathValue(for: "-o", inline: letters.isEmpty ? nil : raw[offset...])
                letters = ""[...]
            case "p":
                options.threads = try parseThreads(try value(for: "-p", inline: letters.isEmpty ? nil : String(letters)))
                letters = ""[...]
            case "b":
                options.blockSize = try parseBlockSize(try value(for: "-b", inline: letters.isEmpty ? nil : String(letters)))
                letters = ""[...]
            case "S":
                // As for -o: the bytes after `S` start at the same offset as its letters.
                let offset = argument.utf8.count - letters.utf8.count
                options.suffix = try parseSuffix(try bytesValue(for: "-S", inline: letters.isEmpty ? nil : raw[offset...]))
                letters = ""[...]
            default:
                throw UsageError(message: "unknown option '-\(letter)'")
            }
        }
    }
    if options.gzipMode {
        options.mode = list ? .list : test ? .test : decompress ? .unpack : .pack
        // gzip's -t and -l imply -c (zcat -t, gzip -tc): it changes nothing.
        if options.mode == .test || options.mode == .list { options.toStandardOutput = false }
    }
    options.removeInput = removal ?? false
    if let networkCommand {
        try takeNetworkOperands(&options, for: networkCommand, keepOrRemoveGiven: removal != nil)
    }
    if options.mode == .test || options.mode == .list {
        if options.outputPath != nil || options.toStandardOutput || options.removeInput {
            throw UsageError(message: "\(options.mode.rawValue) writes no output: -c, -o and --rm do not apply")
        }
    }
    if options.maximumOutputSize != nil && options.mode == .pack {
        throw UsageError(message: "--max-output applies to unpack, test and list")
    }
    if options.outputPath == "-" {
        // `-o -` is standard output, as `-` is standard input among the files.
        options.outputPath = nil
        options.toStandardOutput = true
    }
    // As gzip: each input file is removed once its output file is in place, unless -k.
    if options.gzipMode, removal == nil, options.mode == .pack || options.mode == .unpack {
        options.removeInput = !options.toStandardOutput && options.outputPath == nil
    }
    if options.blockSize != nil && (options.mode != .pack || options.bgzf) {
        throw UsageError(message: "--block-size applies to pack without --bgzf (BGZF members hold 65280 bytes)")
    }
    if options.index && !options.bgzf {
        throw UsageError(message: "--index applies to pack --bgzf")
    }
    if options.mode != .pack && (options.bgzf || options.index) {
        throw UsageError(message: "--bgzf and --index apply to pack")
    }
    // Standard input, alone or among the files, is packed to standard output without -o.
    if options.index && options.outputPath == nil
        && (options.toStandardOutput || options.files.isEmpty || options.files.contains("-")) {
        throw UsageError(message: "--index needs an output file (not standard output)")
    }
    try checkBlockedOptions(options)
    if options.progress != nil && (options.mode == .list || options.mode == .index) {
        throw UsageError(message: "--progress and --no-progress apply to pack, unpack and test")
    }
    if options.json && options.mode != .list {
        throw UsageError(message: "--json applies to list only")
    }
    if let outputPath = options.outputPath {
        if outputPath.bytes.isEmpty { throw UsageError(message: "-o needs a path, not an empty one") }
        if options.toStandardOutput { throw UsageError(message: "-o and -c cannot be used together") }
        // Several files need -o to name a directory: checked when the command runs.
        if options.recursive { throw UsageError(message: "-r writes each output beside its input: -o does not apply") }
    }
    if options.recursive && options.mode == .index {
        throw UsageError(message: "-r applies to pack, unpack, test and list")
    }
    return .run(options)
}

/// An argument from `main` holds no NUL; one passed to ``runCommand(arguments:programName:environment:)`` might.
private func pathname(_ bytes: ArraySlice<UInt8>) throws(UsageError) -> Pathname {
    guard let name = Pathname(bytes: bytes) else { throw UsageError(message: "a file name cannot hold a NUL byte") }
    return name
}

/// The longest `-S` suffix: GNU gzip's 30 bytes.
let maximumSuffixLength = 30

/// `-S`'s suffix: its bytes, UTF-8 or not (a name's last bytes), 1 to 30 of them, no NUL.
private func parseSuffix(_ bytes: ArraySlice<UInt8>) throws(UsageError) -> Pathname {
    guard let suffix = Pathname(bytes: bytes) else { throw UsageError(message: "a suffix cannot hold a NUL byte") }
    guard !suffix.isEmpty, suffix.bytes.count <= maximumSuffixLength else {
        throw UsageError(message: "suffix must be 1 to \(maximumSuffixLength) bytes, not '\(suffix)'")
    }
    return suffix
}

private func parseLevel(_ text: String) throws(UsageError) -> Int {
    guard let level = Int(text), (0...9).contains(level) else {
        throw UsageError(message: "compression level must be 0 to 9, not '\(text)'")
    }
    return level
}

/// The most deflating threads `-p` accepts.
let maximumThreads = 256

func parseThreads(_ text: String) throws(UsageError) -> Int {
    guard let count = Int(text), (1...maximumThreads).contains(count) else {
        throw UsageError(message: "thread count must be 1 to \(maximumThreads), not '\(text)'")
    }
    return count
}

/// `-b N` counts KiB as pigz's does (`-b 128` is 128 KiB); `K` and `M` suffixes are also
/// taken. 32 KiB (one deflate window) to 64 MiB.
private func parseBlockSize(_ text: String) throws(UsageError) -> Int {
    let bytesText = text.last.map { $0.isNumber } == true ? text + "K" : text
    do {
        return try parseSize(bytesText, option: "--block-size", range: (32 << 10)...(64 << 20))
    } catch {
        throw UsageError(message: "block size must be 32K to 64M (a number alone counts KiB), not '\(text)'")
    }
}

/// The largest `--chunk-size`: 64 MiB. Each stream holds one buffer of this size, so a larger
/// one buys no speed and only risks memory.
let maximumChunkSize = 64 << 20

private func parseChunkSize(_ text: String) throws(UsageError) -> Int {
    try parseSize(text, option: "--chunk-size", range: 1...maximumChunkSize)
}

/// A byte count, with an optional binary suffix: `4096`, `64K`, `1M`, `2G`, `1T` (KiB, MiB, GiB, TiB).
/// `usage`: the usage lines a mistake prints (``UsageError/usage``).
func parseSize(_ text: String, option: String, range: ClosedRange<Int>, usage: String? = nil) throws(UsageError) -> Int {
    var digits = Substring(text)
    var multiplier = 1
    switch digits.last {
    case "k", "K": multiplier = 1 << 10
    case "m", "M": multiplier = 1 << 20
    case "g", "G": multiplier = 1 << 30
    case "t", "T": multiplier = 1 << 40
    default: break
    }
    if multiplier != 1 { digits = digits.dropLast() }
    guard let number = Int(digits), number >= 0 else {
        throw UsageError(message: "\(option) takes a size in bytes, not '\(text)'", usage: usage)
    }
    let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
    guard !overflow, range.contains(product) else {
        throw UsageError(message: "\(option) must be \(range.lowerBound) to \(range.upperBound) bytes, not '\(text)'",
                         usage: usage)
    }
    return product
}

/// The rules for `unpack --offset/--length` and the `index` command (BGZF, issue 7 §3).
private func checkBlockedOptions(_ options: Options) throws(UsageError) {
    let ranged = options.rangeOffset != nil || options.rangeLength != nil
    if ranged {
        if options.mode != .unpack { throw UsageError(message: "--offset and --length apply to unpack") }
        if options.files.count != 1 || options.files[0] == "-" {
            throw UsageError(message: "--offset and --length need one BGZF file (its .gzi index is read beside it)")
        }
        if !options.toStandardOutput && options.outputPath == nil {
            throw UsageError(message: "--offset and --length write to -c or -o PATH only")
        }
        if options.removeInput || options.useName == true || options.maximumOutputSize != nil {
            throw UsageError(message: "--offset and --length do not go with --rm, -N or --max-output")
        }
    }
    if options.mode == .index {
        if options.outputPath != nil || options.toStandardOutput || options.removeInput || options.maximumOutputSize != nil {
            throw UsageError(message: "index writes FILE.gzi beside each FILE: -c, -o, --rm and --max-output do not apply")
        }
        if options.files.isEmpty { throw UsageError(message: "index needs a FILE") }
    }
}

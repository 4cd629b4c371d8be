import ByteStreams
import GzipStreams
import TarArchives

/// What the command line gave, as the parser collects it (swift-argument-parser's
/// `ParsedValues`): one flat record for every command, each field the option of the same name
/// in CommandOptions.swift, where its units and default are documented. Only parsing reads and
/// writes it: once the options a command does not take are refused
/// (``CommandShape/refuseOptionsNotTaken(_:)``) and the rules between options pass
/// (``validate(keepOrRemoveGiven:)``), ``invocation(network:)`` builds the typed value a run
/// gets, and no field of another command's is left set.
struct ParsedValues: Equatable {
    var mode: Invocation.Mode
    var gzip: GzipCompatibility?
    var files: [Pathname] = []
    var toStandardOutput = false
    var outputPath: Pathname?
    var force = false
    var recursive = false
    var level = 6
    var chunkSize = ByteStream.defaultChunkSize
    var chunkSizeGiven = false
    var useName: Bool?
    var removeInput = false
    var keep = false
    var quiet = false
    var verbose = false
    var maximumOutputSize: Int?
    var strict = false
    var json = false
    /// list's `--members`.
    var members = false
    /// index's `--no-tar`.
    var noTar = false
    var threads: Int?
    var blockSize: Int?
    var engine: DeflateEngine?
    var rsyncable = false
    var bgzf = false
    /// pack's `--index` flag (``PackOptions/writeIndex``).
    var index = false
    var indexPath: Pathname?
    var writesIndex = false
    var span: Int?
    var rangeOffset: Int64?
    var rangeLength: Int64?
    var wholeLines = false
    var plan: Int64?
    var lineRange: LineRange?
    /// unpack's `--extract` (``TarExtractionOptions/wholeArchive``).
    var extractsArchive = false
    /// unpack's `--links-outside` (``TarExtractionOptions/allowsLinksOutside``).
    var linksOutside = false
    /// unpack's `--same-owner`, `--no-same-owner` (``TarExtractionOptions/preservesOwner``).
    var sameOwner = false
    /// unpack's `-C DIR` (``TarExtractionOptions/directory``).
    var extractionDirectory: Pathname?
    var synchronous = false
    var suffix: Pathname?
    var progress: Bool?
    /// `pack --tar`, and its metadata options (``TarPackOptions``).
    var tar = false
    var tarModificationTime: Int64?
    var tarOwner: DirectoryArchiver.Identity?
    var tarGroup: DirectoryArchiver.Identity?
    var numericOwner = false
    /// send's or receive's endpoint, taken from the operands (``takeNetworkOperands(_:for:keepOrRemoveGiven:)``).
    var address: NetworkAddress?
    var timeout: Duration?
    var deadline: DeadlineOption?
    var keyFile: String?

    /// The typed value of these options for the command run: send when `network` is send,
    /// receive when it is receive, else ``mode``'s command. Each command's value takes only
    /// the fields that command takes; the others were refused, so they hold their defaults.
    /// - Precondition: For send and receive, ``address`` was taken.
    func invocation(network: NetworkCommand?) -> Invocation {
        let extraction = tarExtraction(network: network)
        let common = CommonOptions(files: extraction == nil ? files : Array(files.prefix(1)), force: force, keep: keep, quiet: quiet, verbose: verbose,
                                   level: level, chunkSize: chunkSize, chunkSizeGiven: chunkSizeGiven,
                                   useName: useName, threads: threads, synchronous: synchronous, suffix: suffix)
        let output = OutputOptions(toStandardOutput: toStandardOutput, outputPath: outputPath, removeInput: removeInput)
        let decode = DecodeOptions(maximumOutputSize: maximumOutputSize, strict: strict)
        let tarOptions = DirectoryArchiver.Options(modificationTime: tarModificationTime.map { TarEntry.Timestamp(seconds: $0) },
                                                   owner: tarOwner, group: tarGroup, numericOwner: numericOwner)
        let pack = PackOptions(output: output, recursive: recursive, progress: progress, blockSize: blockSize,
                               engine: engine, rsyncable: rsyncable, bgzf: bgzf, writeIndex: index,
                               tar: tar ? TarPackOptions(archiver: tarOptions) : nil)
        let range = rangeOffset == nil && rangeLength == nil ? nil
            : PlainRange(offset: rangeOffset ?? 0, length: rangeLength)
        let unpack = UnpackOptions(output: output, decode: decode, recursive: recursive, progress: progress,
                                   indexPath: indexPath, writesIndex: writesIndex, range: range, wholeLines: wholeLines,
                                   lines: lineRange, tar: extraction)
        let command: CommandOptions
        if let network {
            guard let address else { preconditionFailure("send and receive take their address first") }
            let connection = ConnectionOptions(address: address, timeout: timeout, deadline: deadline, keyFile: keyFile)
            command = network == .send ? .send(pack, connection) : .receive(unpack, connection)
        } else {
            switch mode {
            case .pack: command = .pack(pack)
            case .unpack: command = .unpack(unpack)
            case .test: command = .test(TestOptions(decode: decode, recursive: recursive, progress: progress, indexPath: indexPath,
                                                    writesIndex: writesIndex))
            case .list: command = .list(ListOptions(decode: decode, recursive: recursive, json: json, members: members))
            case .index: command = .index(IndexOptions(outputPath: outputPath, span: span, strict: strict, plan: plan,
                                                       json: json, indexesTarMembers: !noTar))
            }
        }
        return Invocation(common: common, command: command, gzip: gzip)
    }
}

extension ParsedValues {
    /// Whether unpack extracts members of a tar archive rather than decompressing its files:
    /// `--extract` or `-C` was given, or the first FILE is named `.tar.gz` or `.tgz` and the
    /// others are names of members, not compressed files (none ends in `.gz`, `.tgz` or
    /// `-S`'s suffix: `unpack a.tar.gz b.tar.gz` still decompresses both).
    var extractsTarMembers: Bool {
        guard mode == .unpack, gzip == nil else { return false }
        if extractsArchive || extractionDirectory != nil { return true }
        guard files.count > 1, TarExtractionOptions.namesTarArchive(files[0]) else { return false }
        let compressed: [Pathname] = [".gz", ".tgz"] + (suffix.map { [$0] } ?? [])
        return !files.dropFirst().contains { file in compressed.contains { file.hasSuffixIgnoringCase($0) } }
    }

    /// unpack's tar extraction as the command line gives it, or `nil`.
    func tarExtraction(network: NetworkCommand?) -> TarExtractionOptions? {
        guard network == nil, extractsTarMembers else { return nil }
        return TarExtractionOptions(members: Array(files.dropFirst()), wholeArchive: extractsArchive,
                                    directory: extractionDirectory, toStandardOutput: toStandardOutput,
                                    allowsLinksOutside: linksOutside, preservesOwner: sameOwner)
    }
}

/// What parsing found: options to run, or a request for help or the version.
enum ParsedCommand: Equatable {
    /// A command to run over its operands.
    case run(Invocation)
    /// `--help`, `-h` or `help [COMMAND]`: the map, gzip mode's help or a command's.
    case help(HelpTopic)
    case version
    /// `-L`, `--license`: the licence, as gzip's `-L` prints its own.
    case license
    /// `gzstream cache …` (Cache.swift).
    case cache(CacheOptions)
    /// `gzstream cache --help`, or with an action (`cache get --help`) that action's help.
    case cacheHelp(CacheOptions.Action?)
}

/// A command line that cannot be run; printed as GNU gzip and coreutils print one, on two
/// lines: `PROGRAM: MESSAGE`, then `Try 'PROGRAM --help' for more information.`
struct UsageError: Error, Equatable {
    var message: String
    /// What the second line tells the user to run after the program's name: `--help`, or
    /// `cache --help` for the cache's errors; `nil` prints no second line (gzip's
    /// "invalid suffix" and "suffix contains '/'" come alone).
    var helpCommand: String? = "--help"

    /// This error pointing to `helpCommand`, unless it points to a help of its own already.
    func pointing(to helpCommand: String) -> UsageError {
        var error = self
        if error.helpCommand == "--help" { error.helpCommand = helpCommand }
        return error
    }
}

extension UsageError {
    /// What standard error shows for this error: one line and where help is, as gzip and
    /// coreutils print a usage error (`gzstream: MESSAGE`, then `Try 'gzstream --help' for more
    /// information.`), control characters escaped.
    /// - Parameter signature: The program's name as it was called (`gzstream`, `gzip`, `zcat`).
    func text(signedBy signature: String) -> String {
        "\(signature): \(escapingControlCharacters(message))\n"
            + (helpCommand.map { "Try '\(signature) \($0)' for more information.\n" } ?? "")
    }
}

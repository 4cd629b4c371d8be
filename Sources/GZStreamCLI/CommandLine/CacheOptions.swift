import ByteStreams
import GzipStreams
import StreamCache

/// What `gzstream cache` was asked to do: the action, its operands and options, as
/// ``parseCacheCommandLine(_:)`` found them; ``CacheCommand`` (Cache.swift) runs it.
struct CacheOptions: Equatable {
    enum Action: String, CaseIterable {
        case put, get, list, remove, clear, prune
    }

    var action: Action
    /// The entry's key (put, get, remove): UTF-8 text, not empty.
    var key: String?
    /// put: the input; `nil` or `-` is standard input.
    var inputPath: Pathname?
    /// get `-o`: the output; `nil` is standard output.
    var outputPath: Pathname?
    /// get: replace an existing `-o` file; remove: a missing entry is no error.
    var force = false
    /// list: JSON instead of a table.
    var json = false
    /// `--dir`; `nil` is ``DiskCache/defaultDirectory(environment:)`` of the process.
    var directory: String?
    /// `--key-file`: a file of 32 raw bytes; `nil` stores entries compressed only.
    var keyFile: String?
    /// `--max-size`, in bytes.
    var maximumSize: Int64?
    /// `--max-age`, in seconds.
    var maximumAge: Int64?
    /// put: the gzip level of the entry.
    var level = 6
    /// put: deflating threads (`-p`); `nil`: the processors available.
    var threads: Int?
    var quiet = false
    var verbose = false
}

/// Parses what follows `gzstream cache`: options anywhere, read by an ``ArgumentScanner`` as
/// the other commands read them; the first operand is the action, then its KEY and FILE. Every
/// error points to `gzstream cache --help`.
func parseCacheCommandLine(_ arguments: [[UInt8]]) throws(UsageError) -> ParsedCommand {
    var scanner = ArgumentScanner(arguments, helpCommand: cacheHelpCommand)
    var options = CacheOptions(action: .list)
    var operands: [[UInt8]] = []
    // The options given that some action does not take, in the order given.
    var given: [CacheOptions.OptionKey] = []

    /// A value parsed by a value parser (ValueParsers.swift), its error pointing to the cache's help.
    func parsed<Value>(_ parse: () throws(UsageError) -> Value) throws(UsageError) -> Value {
        do { return try parse() } catch { throw error.pointing(to: cacheHelpCommand) }
    }
    /// The action whose help `-h` shows: the first operand's, if it names one, else none (all).
    func helpAction() -> CacheOptions.Action? {
        operands.first.flatMap { CacheOptions.Action(rawValue: String(decoding: $0, as: UTF8.self)) }
    }
    /// A path the cache library takes as a `String`: UTF-8, not empty, no NUL.
    func textPath(for name: String) throws(UsageError) -> String {
        let raw = try scanner.value(for: name)
        guard !raw.isEmpty else { throw cacheUsageError("\(name) needs a path, not an empty one") }
        guard let text = String(validating: raw, as: UTF8.self), !raw.contains(0) else {
            throw cacheUsageError("\(name) must be a UTF-8 path")
        }
        return text
    }

    while let argument = scanner.next() {
        switch argument {
        case .operand(let raw):
            operands.append(raw)
        case .long(let name):
            func flag() throws(UsageError) { try scanner.refuseValue(name) }
            switch name {
            case "dir": options.directory = try textPath(for: "--dir")
            case "key-file": options.keyFile = try textPath(for: "--key-file")
            case "max-size":
                let text = try scanner.text(for: "--max-size")
                options.maximumSize = try parsed { () throws(UsageError) in try parseByteCount(text, option: "--max-size") }
            case "max-age":
                let text = try scanner.text(for: "--max-age")
                options.maximumAge = try parsed { () throws(UsageError) in try parseAge(text) }
            case "level":
                let text = try scanner.text(for: "--level")
                options.level = try parsed { () throws(UsageError) in try parseLevel(text) }
            case "threads", "processes":
                let text = try scanner.text(for: "--\(name)")
                options.threads = try parsed { () throws(UsageError) in try parseThreads(text) }
            case "output":
                let raw = try scanner.value(for: "--output")
                options.outputPath = try parsed { () throws(UsageError) in try pathname(raw) }
                given.append(.output)
            case "force": try flag(); options.force = true; given.append(.force)
            case "json": try flag(); options.json = true; given.append(.json)
            case "quiet": try flag(); options.quiet = true; options.verbose = false
            case "verbose": try flag(); options.verbose = true; options.quiet = false
            case "help": try flag(); return .cacheHelp(helpAction())
            case "version": try flag(); return .version
            default: throw scanner.unrecognizedOption(name)
            }
        case .short(let letter):
            if let level = try compressionLevel(flag: letter, in: &scanner) {
                options.level = level
                continue
            }
            switch letter {
            case "h": return .cacheHelp(helpAction())
            case "V": return .version
            case "f": options.force = true; given.append(.force)
            case "q": options.quiet = true; options.verbose = false
            case "v": options.verbose = true; options.quiet = false
            case "p":
                let text = try scanner.text(for: "-p")
                options.threads = try parsed { () throws(UsageError) in try parseThreads(text) }
            case "o":
                let raw = try scanner.value(for: "-o")
                options.outputPath = try parsed { () throws(UsageError) in try pathname(raw) }
                given.append(.output)
            default: throw scanner.invalidOption(letter)
            }
        }
    }

    guard let actionRaw = operands.first else {
        throw cacheUsageError("cache needs a command: put, get, list, remove, clear or prune")
    }
    let actionName = String(decoding: actionRaw, as: UTF8.self)
    if actionName == "help" { return .cacheHelp(nil) }
    guard let action = CacheOptions.Action(rawValue: actionName) else {
        throw cacheUsageError("unknown cache command '\(escapingControlCharacters(actionName))' "
            + "(put, get, list, remove, clear or prune)")
    }
    options.action = action
    var rest = operands.dropFirst()
    switch action {
    case .put, .get, .remove:
        guard let raw = rest.popFirst() else { throw cacheUsageError("cache \(action) needs a KEY") }
        guard let key = String(validating: raw, as: UTF8.self) else {
            throw cacheUsageError("a cache KEY must be UTF-8 text")
        }
        guard !key.isEmpty else { throw cacheUsageError("a cache KEY cannot be empty") }
        options.key = key
        if action == .put, let raw = rest.popFirst() {
            options.inputPath = try parsed { () throws(UsageError) in try pathname(raw) }
        }
        if !rest.isEmpty {
            throw cacheUsageError(action == .put ? "cache put takes a KEY and at most one FILE"
                                  : action == .get ? "cache get takes one KEY (write a file with -o FILE)"
                                  : "cache remove takes one KEY")
        }
    case .list, .clear, .prune:
        if !rest.isEmpty { throw cacheUsageError("cache \(action) takes no KEY or FILE") }
    }
    try action.refuseOptionsNotTaken(given)
    try options.validate()
    return .cache(options)
}

extension CacheOptions {
    /// An option that some cache action does not take. Every action takes the others, so that
    /// one alias can hold a cache's options.
    enum OptionKey: Sendable {
        case output, force, json
    }
}

extension CacheOptions.Action {
    /// The options this action takes beyond the common ones.
    var takes: Set<CacheOptions.OptionKey> {
        switch self {
        case .get: [.output, .force]
        case .remove: [.force]
        case .list: [.json]
        case .put, .clear, .prune: []
        }
    }

    /// Refuses the options in `given` that this action does not take, `-o` first, then `-f`,
    /// then `--json`, as the cache has always named them.
    /// - Throws: ``UsageError`` pointing to the cache's help.
    func refuseOptionsNotTaken(_ given: [CacheOptions.OptionKey]) throws(UsageError) {
        let takes = takes
        let order: [CacheOptions.OptionKey] = [.output, .force, .json]
        switch order.first(where: { given.contains($0) && !takes.contains($0) }) {
        case .output?: throw cacheUsageError("-o applies to cache get")
        case .force?: throw cacheUsageError("-f applies to cache get and remove")
        case .json?: throw cacheUsageError("--json applies to cache list")
        case nil: return
        }
    }
}

/// What a usage error of `gzstream cache` tells the user to run for help.
let cacheHelpCommand = "cache --help"

/// A usage error of `gzstream cache`, pointing to the cache's help.
func cacheUsageError(_ message: String) -> UsageError {
    UsageError(message: message, helpCommand: cacheHelpCommand)
}

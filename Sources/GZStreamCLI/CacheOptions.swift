import ByteStreams
import GzipStreams
import StreamCache
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

let cacheUsageText = """
Usage: gzstream cache put KEY [FILE]
       gzstream cache get KEY [-o FILE] [-f]
       gzstream cache list [--json]
       gzstream cache remove KEY [-f]
       gzstream cache clear
       gzstream cache prune
Options: --dir DIR, --key-file FILE, --max-size SIZE, --max-age AGE, -0 ... -9, -p N, -q, -v
Try 'gzstream cache --help' for more information.

"""

let cacheHelpText = """
Usage: gzstream cache put KEY [FILE]       store FILE (- or none: standard input) under KEY
       gzstream cache get KEY [-o FILE]    write KEY's bytes to standard output, or to FILE
       gzstream cache list [--json]        one row per entry, least recently used first
       gzstream cache remove KEY [-f]      remove KEY's entry
       gzstream cache clear                remove every entry
       gzstream cache prune                apply --max-size and --max-age now

A cache of byte streams on disk: one file per entry in the cache directory, named by a hash
of its KEY (any UTF-8 text), gzip-compressed and, with --key-file, encrypted. An entry
appears whole or not at all, so processes may share a directory; the last put of a KEY wins.
A put whose input fails stores nothing and keeps the old entry. get checks the whole entry
before it writes a byte to standard output (to -o FILE it writes a temporary file beside
FILE and renames it into place at the end); a damaged entry is removed and is a miss.

Options:
      --dir DIR         the cache directory (default: $XDG_CACHE_HOME/gzstream, or
                        $HOME/.cache/gzstream); made, mode 0700, by a put; refused
                        unless yours and writable by no one else (not a symbolic link)
      --key-file FILE   encrypt and authenticate entries with the key in FILE (32 raw
                        bytes); give the same key to every command on that cache
      --max-size SIZE   the most bytes of entry files: after each put and by prune, least
                        recently used entries are removed until the rest fit (K, M, G, T
                        suffixes: KiB, MiB, GiB, TiB)
      --max-age AGE     an entry unused for longer is a miss for get and is removed by
                        prune (seconds; s, m, h, d suffixes)
  -0 ... -9             put: compression level (default 6); also --level N
  -p, --threads N       put: deflating threads (default: the processors available)
  -o, --output FILE     get: write FILE instead of standard output (- is standard output)
  -f, --force           get: replace an existing FILE; remove: no error when there is no entry
      --json            list: JSON instead of a table
  -q, --quiet           say nothing of a miss that is not found or expired (damage is said)
  -v, --verbose         put, get: a line with the sizes; remove, clear, prune: what was removed
  -h, --help            show this help

A miss says why on standard error (gzstream: cache: KEY: not found, expired, or damaged entry
removed: ...); -q keeps a script's test for a hit quiet: gzstream cache get -q KEY -o FILE.

Exit status: 0 success (get: a hit); 1 a miss (get, remove) or an error; 2 a put whose
entry alone is larger than --max-size (stored, then removed at once).

"""

/// Parses what follows `gzstream cache`: options anywhere, as the other commands read them
/// (`-qf9` grouped, `--name VALUE` or `--name=VALUE`, `--` ends the options); the first operand
/// is the action, then its KEY and FILE.
func parseCacheCommandLine(_ arguments: [(String, [UInt8])]) throws(UsageError) -> ParsedCommand {
    var rest = arguments[...]
    var options = CacheOptions(action: .list)
    var operands: [(String, [UInt8])] = []
    var onlyOperands = false
    var outputGiven = false

    func value(for name: String, inline: ArraySlice<UInt8>?) throws(UsageError) -> (String, [UInt8]) {
        if let inline { return (String(decoding: inline, as: UTF8.self), Array(inline)) }
        guard let next = rest.popFirst() else { throw cacheUsageError("option \(name) needs a value") }
        return next
    }
    /// A path the cache library takes as a `String`: UTF-8, not empty, no NUL.
    func textPath(for name: String, inline: ArraySlice<UInt8>?) throws(UsageError) -> String {
        let (text, raw) = try value(for: name, inline: inline)
        guard !raw.isEmpty else { throw cacheUsageError("\(name) needs a path, not an empty one") }
        guard String(validating: raw, as: UTF8.self) != nil, !raw.contains(0) else {
            throw cacheUsageError("\(name) must be a UTF-8 path")
        }
        return text
    }

    while let (argument, raw) = rest.popFirst() {
        if onlyOperands || argument == "-" || !argument.hasPrefix("-") {
            operands.append((argument, raw))
            continue
        }
        if argument == "--" {
            onlyOperands = true
            continue
        }
        if argument.hasPrefix("--") {
            let body = raw.dropFirst(2)
            let nameBytes = body.prefix { $0 != UInt8(ascii: "=") }
            let name = String(decoding: nameBytes, as: UTF8.self)
            let inline: ArraySlice<UInt8>? = body.count > nameBytes.count ? body[(nameBytes.endIndex + 1)...] : nil
            func noValue() throws(UsageError) {
                if inline != nil { throw cacheUsageError("option --\(name) takes no value") }
            }
            switch name {
            case "dir": options.directory = try textPath(for: "--dir", inline: inline)
            case "key-file": options.keyFile = try textPath(for: "--key-file", inline: inline)
            case "max-size":
                let text = try value(for: "--max-size", inline: inline).0
                options.maximumSize = Int64(try parseSize(text, option: "--max-size", range: 0...Int.max, usage: cacheUsageText))
            case "max-age": options.maximumAge = try parseAge(try value(for: "--max-age", inline: inline).0)
            case "level": options.level = try parseCacheLevel(try value(for: "--level", inline: inline).0)
            case "threads", "processes": options.threads = try parseThreads(try value(for: "--\(name)", inline: inline).0)
            case "output":
                options.outputPath = try cachePathname(try value(for: "--output", inline: inline).1)
                outputGiven = true
            case "force": try noValue(); options.force = true
            case "json": try noValue(); options.json = true
            case "quiet": try noValue(); options.quiet = true; options.verbose = false
            case "verbose": try noValue(); options.verbose = true; options.quiet = false
            case "help": try noValue(); return .cacheHelp
            case "version": try noValue(); return .version
            default: throw cacheUsageError("unknown option '--\(name)'")
            }
            continue
        }
        var letters = argument.dropFirst()[...]
        while let letter = letters.popFirst() {
            switch letter {
            case "h": return .cacheHelp
            case "V": return .version
            case "f": options.force = true
            case "q": options.quiet = true; options.verbose = false
            case "v": options.verbose = true; options.quiet = false
            case "0"..."9": options.level = Int(String(letter))!
            case "p":
                options.threads = try parseThreads(try value(for: "-p", inline: letters.isEmpty ? nil : raw[(argument.utf8.count - letters.utf8.count)...]).0)
                letters = ""[...]
            case "o":
                // The letters before `o` are ASCII, so the bytes after it start at the same offset.
                let offset = argument.utf8.count - letters.utf8.count
                options.outputPath = try cachePathname(try value(for: "-o", inline: letters.isEmpty ? nil : raw[offset...]).1)
                outputGiven = true
                letters = ""[...]
            default:
                throw cacheUsageError("unknown option '-\(letter)'")
            }
        }
    }

    guard let (actionName, _) = operands.first else {
        throw cacheUsageError("cache needs a command: put, get, list, remove, clear or prune")
    }
    if actionName == "help" { return .cacheHelp }
    guard let action = CacheOptions.Action(rawValue: actionName) else {
        throw cacheUsageError("unknown cache command '\(escapingControlCharacters(actionName))' "
            + "(put, get, list, remove, clear or prune)")
    }
    options.action = action
    var arguments = operands.dropFirst()
    switch action {
    case .put, .get, .remove:
        guard let (_, raw) = arguments.popFirst() else { throw cacheUsageError("cache \(action) needs a KEY") }
        guard let key = String(validating: raw, as: UTF8.self) else {
            throw cacheUsageError("a cache KEY must be UTF-8 text")
        }
        guard !key.isEmpty else { throw cacheUsageError("a cache KEY cannot be empty") }
        options.key = key
        if action == .put, let (_, raw) = arguments.popFirst() {
            options.inputPath = try cachePathname(raw)
        }
        if !arguments.isEmpty {
            throw cacheUsageError(action == .put ? "cache put takes a KEY and at most one FILE"
                                  : action == .get ? "cache get takes one KEY (write a file with -o FILE)"
                                  : "cache remove takes one KEY")
        }
    case .list, .clear, .prune:
        if !arguments.isEmpty { throw cacheUsageError("cache \(action) takes no KEY or FILE") }
    }
    if outputGiven, action != .get { throw cacheUsageError("-o applies to cache get") }
    if options.force, action != .get, action != .remove { throw cacheUsageError("-f applies to cache get and remove") }
    if options.json, action != .list { throw cacheUsageError("--json applies to cache list") }
    if let outputPath = options.outputPath {
        if outputPath.bytes.isEmpty { throw cacheUsageError("-o needs a path, not an empty one") }
        if outputPath == "-" { options.outputPath = nil }
    }
    return .cache(options)
}

private func cacheUsageError(_ message: String) -> UsageError {
    UsageError(message: message, usage: cacheUsageText)
}

private func cachePathname(_ bytes: [UInt8]) throws(UsageError) -> Pathname {
    guard let name = Pathname(bytes: bytes) else { throw cacheUsageError("a file name cannot hold a NUL byte") }
    return name
}

private func parseCacheLevel(_ text: String) throws(UsageError) -> Int {
    guard let level = Int(text), (0...9).contains(level) else {
        throw cacheUsageError("compression level must be 0 to 9, not '\(text)'")
    }
    return level
}

/// `--max-age AGE`: whole seconds, more than 0, with an optional unit: `90`, `90s`, `15m`,
/// `12h`, `7d`.
private func parseAge(_ text: String) throws(UsageError) -> Int64 {
    var digits = Substring(text)
    var multiplier: Int64 = 1
    switch digits.last {
    case "s": multiplier = 1
    case "m": multiplier = 60
    case "h": multiplier = 3600
    case "d": multiplier = 86400
    default: break
    }
    if digits.last.map({ "smhd".contains($0) }) == true { digits = digits.dropLast() }
    guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int64(digits) else {
        throw cacheUsageError("--max-age takes seconds (s, m, h, d suffixes), not '\(text)'")
    }
    let (seconds, overflow) = number.multipliedReportingOverflow(by: multiplier)
    guard seconds > 0 || overflow else { throw cacheUsageError("--max-age must be more than 0, not '\(text)'") }
    guard !overflow, seconds <= maximumCacheAgeSeconds else {
        throw cacheUsageError("--max-age must be at most \(maximumCacheAgeSeconds / 86400)d, not '\(text)'")
    }
    return seconds
}

/// The longest `--max-age`: about 10,000 years, far past any use and well inside the
/// library's `Duration` and `Double` arithmetic.
let maximumCacheAgeSeconds: Int64 = 3_650_000 * 86400


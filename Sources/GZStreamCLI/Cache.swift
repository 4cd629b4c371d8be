import ByteStreams
import GzipStreams
import StreamCache
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `gzstream cache COMMAND`: the disk tier of StreamCache (``DiskCache``) from the command line.
/// One process has no use for the memory tier, so only the disk is used.
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

/// One run of `gzstream cache`.
final class CacheCommand {
    let options: CacheOptions
    let environment: CommandEnvironment
    let diagnostics: Diagnostics
    /// Standard output, found to be a closed pipe (see ``Command/closedPipe``).
    private(set) var closedPipe: String?

    init(options: CacheOptions, environment: CommandEnvironment) {
        self.options = options
        self.environment = environment
        diagnostics = Diagnostics(stream: environment.standardError, quiet: options.quiet)
    }

    /// The subject of messages about the entry: `cache: KEY`.
    private var entrySubject: String { "cache: \(options.key ?? "")" }

    func run() -> ExitStatus {
        do {
            let cache = try openCache()
            switch options.action {
            case .put: return try put(into: cache)
            case .get: return try get(from: cache)
            case .list: return try list(cache)
            case .remove: return try remove(from: cache)
            case .clear: return try clear(cache)
            case .prune: return try prune(cache)
            }
        } catch let reported as Reported {
            return reported.status
        } catch let refused as CacheDirectoryError {
            return fail(refused.path, refused.message)
        } catch let error as ByteStreamError {
            return fail(error.target ?? "cache", describe(error))
        } catch {
            return fail("cache", describe(error))
        }
    }

    private func fail(_ subject: String, _ problem: String) -> ExitStatus {
        diagnostics.error(subject, problem)
        return .error
    }

    /// A `-v` line: `gzstream: SUBJECT: TEXT`.
    private func say(_ subject: String, _ text: String) {
        diagnostics.error(subject, text)
    }

    /// The key (from `--key-file`) and the cache in its directory (made by the first put).
    private func openCache() throws -> DiskCache {
        let key = try options.keyFile.map { try loadKeyFile($0, diagnostics: diagnostics) }
        guard let directory = options.directory ?? DiskCache.defaultDirectory() else {
            throw Reported(status: fail("cache", "no cache directory: give --dir DIR, or set XDG_CACHE_HOME or HOME"))
        }
        let cache = try DiskCache(directory: directory, key: key, maximumSize: options.maximumSize,
                                  maximumAge: options.maximumAge.map { .seconds($0) }, compressionLevel: options.level,
                                  compressionThreads: min(options.threads ?? availableProcessorCount(), 256))
        // A missing directory is made by the first put; a lookup in it is a miss. Each command
        // opens and checks the directory itself (CacheDirectoryError: refused, one line, exit 1).
        return cache
    }

    // MARK: put

    /// Stores FILE or standard input; a failing input stores nothing and keeps the old entry.
    private func put(into cache: DiskCache) throws -> ExitStatus {
        let key = options.key!
        let inputName: String
        let input: ByteInputStream
        var openedHere: FileInputStream?
        defer { openedHere?.close() }
        if let path = options.inputPath, path != "-" {
            inputName = path.description
            // Opened once (links followed: the file is named by the user and only read), and
            // judged by what the descriptor is, never by a second lookup of the name.
            do {
                let opened = try OpenedInput(path: path, followsLinks: true)
                if opened.info.isDirectory { return fail(inputName, "is a directory") }
                let file = try opened.stream()
                openedHere = file
                input = file
                try input.openOrThrow()
            } catch let error as ByteStreamError where openedHere == nil && error.errno != nil {
                // The lookup failed: said as gzip says it, the system's words alone.
                return fail(inputName, String(cString: strerror(error.errno!)))
            } catch {
                return fail(inputName, describe(error))
            }
        } else {
            inputName = "standard input"
            input = environment.standardInput
        }
        let stored: CacheEntryInfo
        do {
            stored = try cache.store(from: input, forKey: key)
        } catch let refused as CacheDirectoryError {
            throw refused
        } catch {
            // The input's own failure names the input; anything else is the cache's.
            if input.streamStatus == .error { return fail(inputName, describe(error)) }
            return fail(entrySubject, "cannot store: \(describe(error))")
        }
        let plain = stored.plainSize ?? 0
        if options.verbose {
            let saved = plain == 0 ? 0 : (1 - Double(stored.storedSize) / Double(plain)) * 100
            diagnostics.write("gzstream: \(escapingControlCharacters(entrySubject)): \(plain) -> \(stored.storedSize) bytes, "
                + "\(formatPercent(saved)) saved -> \(stored.name)\n")
        }
        if let maximumSize = options.maximumSize, stored.storedSize > maximumSize {
            diagnostics.warning(entrySubject, "not kept: its \(stored.storedSize) bytes are more than --max-size \(maximumSize)")
            return .warning
        }
        return .success
    }

    // MARK: get

    /// Where get writes.
    private enum Target {
        /// Standard output, or a descriptor of the process named by `-o` (`/dev/stdout`).
        case stream(ByteOutputStream, name: String)
        /// A device or FIFO named by `-o`: written into, never replaced.
        case device(Pathname, followsLinks: Bool)
        /// A file: a temporary file beside `publishPath`, renamed into place.
        case file(Pathname, publishPath: Pathname)
    }

    private func get(from cache: DiskCache) throws -> ExitStatus {
        let target = try outputTarget()
        // A stream (standard output, a device) cannot take back what it was given: the entry is
        // read and checked whole first. A file is written beside its name, and discarded on damage.
        let verifyingFirst: Bool
        if case .file = target { verifyingFirst = false } else { verifyingFirst = true }
        let lookup: CacheLookup<CacheEntryInputStream>
        do {
            lookup = try cache.inputStream(forKey: options.key!, verifyingFirst: verifyingFirst)
        } catch let refused as CacheDirectoryError {
            throw refused
        } catch {
            return fail(entrySubject, describe(error))
        }
        let entry: CacheEntryInputStream
        switch lookup {
        case .miss(let miss): return reportMiss(miss)
        case .hit(let stream, _): entry = stream
        }
        defer { entry.close() }
        let outputName: String
        switch target {
        case .stream(let output, let name):
            outputName = name
            if output.streamStatus == .notOpen { output.open() }
            try copyEntry(entry, to: output, outputName: name)
        case .device(let path, let followsLinks):
            outputName = options.outputPath?.description ?? path.description
            // Opened once, without O_CREAT or O_TRUNC, and judged by its descriptor: a name
            // replaced by a regular file, a link or another user's FIFO since it was looked at
            // is not written through.
            let descriptor: Int32
            do {
                descriptor = try SystemCalls.open(path, flags: O_WRONLY | O_NOCTTY | (followsLinks ? 0 : O_NOFOLLOW))
            } catch {
                return fail(outputName, describe(error))
            }
            guard let info = FileInfo(descriptor: descriptor), !info.isRegularFile, !info.isDirectory else {
                close(descriptor)
                return fail(outputName, "was replaced while being opened -- not written")
            }
            guard ExplicitOutput.mayWriteInto(info) else {
                close(descriptor)
                return fail(outputName, ExplicitOutput.foreignSpecialFile(info))
            }
            let output = FileOutputStream(fileDescriptor: descriptor, closesDescriptor: true, displayName: outputName)
            defer { output.close() }
            do {
                try output.openOrThrow()
            } catch {
                return fail(outputName, describe(error))
            }
            try copyEntry(entry, to: output, outputName: outputName)
            try closeOutput(output, name: outputName)
        case .file(let path, let publishPath):
            outputName = path.description
            // Created, given its mode and moved into place by descriptor, in the directory
            // opened once (see TemporaryFile).
            let temporary: TemporaryFile
            do {
                temporary = try TemporaryFile(besides: publishPath)
            } catch {
                return fail(outputName, error.message)
            }
            defer { temporary.discard() }
            let output = FileOutputStream(fileDescriptor: temporary.descriptor, closesDescriptor: false, displayName: outputName)
            defer { output.close() }
            try output.openOrThrow()
            try copyEntry(entry, to: output, outputName: outputName)
            try closeOutput(output, name: outputName)
            do {
                try temporary.finish(mode: defaultPermissions(), times: nil, owner: nil)
            } catch {
                return fail(outputName, describe(error))
            }
            do {
                try temporary.publish(as: lastComponent(of: publishPath), replacing: options.force)
            } catch {
                if error.alreadyExists { return fail(outputName, Command.existingOutput) }
                return fail(outputName, error.message)
            }
        }
        if options.verbose {
            diagnostics.write("gzstream: \(escapingControlCharacters(entrySubject)): \(entry.storedSize) -> \(entry.plainSize) bytes -> "
                + "\(escapingControlCharacters(outputName))\n")
        }
        return .success
    }

    /// Where `-o` points, checked before the lookup: an existing file is refused without `-f`.
    private func outputTarget() throws -> Target {
        guard let path = options.outputPath else {
            return .stream(environment.standardOutput, name: "standard output")
        }
        // The last component examined once: a link or FIFO another user planted is not
        // followed or written into (ExplicitOutput).
        if let descriptor = processDescriptor(named: path, followsLinks: false) {
            return .stream(FileOutputStream(fileDescriptor: descriptor, closesDescriptor: false, displayName: path.description),
                           name: path.description)
        }
        let examined: ExplicitOutput
        do throws(ExplicitOutput.Refusal) {
            examined = try ExplicitOutput(examining: path)
        } catch {
            throw Reported(status: fail(path.description, error.message))
        }
        if !examined.untrustedLink,
           let descriptor = processDescriptor(named: examined.path, followsLinks: examined.followedLink) {
            return .stream(FileOutputStream(fileDescriptor: descriptor, closesDescriptor: false, displayName: path.description),
                           name: path.description)
        }
        let existing = examined.untrustedLink ? nil
            : (try? SystemCalls.status(of: examined.path, in: AT_FDCWD, followsLinks: examined.followedLink))?
                .map { FileInfo(status: $0) }
        if let existing, existing.isDirectory {
            throw Reported(status: fail(path.description, "is a directory (give -o DIRECTORY/NAME)"))
        }
        if let existing, !existing.isRegularFile, !existing.isSymbolicLink {
            return .device(examined.path, followsLinks: examined.followedLink)
        }
        // A link to nothing exists too: the rename would replace it.
        if !options.force, existing != nil || examined.followedLink || examined.untrustedLink {
            throw Reported(status: fail(path.description, Command.existingOutput))
        }
        // -o naming a trusted symbolic link writes the file it points to, as unpack -o does; a
        // link to nothing, or another user's link, is itself replaced.
        return .file(path, publishPath: examined.followedLink ? (existingFile(examined.path) ?? path) : path)
    }

    /// Says why a lookup missed: always for a damaged entry, and unless `-q` for one not found
    /// or expired. - Returns: `.error`, the status of every miss.
    private func reportMiss(_ miss: CacheMiss) -> ExitStatus {
        if case .damaged = miss {
            diagnostics.error(entrySubject, miss.description)
        } else {
            diagnostics.warning(entrySubject, miss.description)
        }
        return .error
    }

    /// Copies the entry's plain bytes to `output` in 64 KiB pieces.
    /// - Throws: ``Reported`` after saying what failed: the entry found damaged (a miss, the
    ///   entry removed), a read of it, or the output (a closed pipe is left to the caller).
    private func copyEntry(_ entry: CacheEntryInputStream, to output: ByteOutputStream, outputName: String) throws {
        let chunkSize = 64 << 10
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { buffer.deallocate() }
        while true {
            let count = entry.read(buffer, maxLength: chunkSize)
            if count < 0 {
                let error = entry.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read cache entry")
                if let miss = error as? CacheMiss { throw Reported(status: reportMiss(miss)) }
                throw Reported(status: fail(entrySubject, describe(error)))
            }
            if count == 0 { return }
            do {
                try output.writeAll(UnsafeRawBufferPointer(start: buffer, count: count))
            } catch {
                throw Reported(status: outputFailed(error, outputName: outputName))
            }
        }
    }

    private func closeOutput(_ output: ByteOutputStream, name: String) throws {
        do {
            try output.closeOrThrow()
        } catch {
            throw Reported(status: outputFailed(error, outputName: name))
        }
    }

    private func outputFailed(_ error: any Error, outputName: String) -> ExitStatus {
        if (error as? ByteStreamError)?.errno == EPIPE {
            closedPipe = outputName
            return .error
        }
        return fail(outputName, describe(error))
    }

    // MARK: list, remove, clear, prune

    private func list(_ cache: DiskCache) throws -> ExitStatus {
        let entries = try cache.entries()
        var text: String
        if options.json {
            let rows = entries.map { entry in
                "{\"name\":\(jsonString(entry.name)),\"storedSize\":\(entry.storedSize),"
                    + "\"plainSize\":\(entry.plainSize.map(String.init) ?? "null"),"
                    + "\"lastUse\":\"\(utcTimestamp(entry.lastUse))\","
                    + "\"encrypted\":\(entry.isEncrypted.map(String.init) ?? "null")}"
            }
            text = rows.isEmpty ? "[]\n" : "[\n" + rows.joined(separator: ",\n") + "\n]\n"
        } else {
            text = pad("stored", 12) + " " + pad("plain", 12) + "  last use (UTC)        key hash\n"
            for entry in entries {
                text += pad(String(entry.storedSize), 12) + " " + pad(entry.plainSize.map(String.init) ?? "-", 12)
                    + "  " + utcTimestamp(entry.lastUse) + "  " + entry.name + "\n"
            }
        }
        let output = environment.standardOutput
        if output.streamStatus == .notOpen { output.open() }
        do {
            try output.writeAll(Array(text.utf8))
        } catch {
            return outputFailed(error, outputName: "standard output")
        }
        return .success
    }

    private func remove(from cache: DiskCache) throws -> ExitStatus {
        if try cache.removeEntry(forKey: options.key!) {
            if options.verbose { say(entrySubject, "removed") }
            return .success
        }
        if options.force { return .success }
        return reportMiss(.notFound)
    }

    private func clear(_ cache: DiskCache) throws -> ExitStatus {
        let count = try cache.removeAll()
        if options.verbose { say("cache", "removed \(count) entr\(count == 1 ? "y" : "ies")") }
        return .success
    }

    private func prune(_ cache: DiskCache) throws -> ExitStatus {
        let result = try cache.prune()
        if options.verbose {
            let temporary = result.abandonedTemporaryCount
            say("cache", "pruned \(result.expiredCount) expired, \(result.evictedCount) evicted, "
                + "\(temporary) abandoned temporary file\(temporary == 1 ? "" : "s"); \(result.removedBytes) bytes freed")
        }
        return .success
    }
}

/// Seconds since 1970 as `YYYY-MM-DDTHH:MM:SSZ` in UTC, the fraction dropped.
func utcTimestamp(_ seconds: Double) -> String {
    var time = time_t(seconds.rounded(.down))
    var parts = tm()
    guard gmtime_r(&time, &parts) != nil else { return String(Int64(seconds)) }
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
        + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
}

import ByteStreams
import GzipStreams
import StreamCache
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One run of `gzstream cache COMMAND`: the disk tier of StreamCache (``DiskCache``) from the
/// command line. One process has no use for the memory tier, so only the disk is used. Its
/// options are parsed by ``parseCacheCommandLine(_:)`` (CacheOptions.swift).
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

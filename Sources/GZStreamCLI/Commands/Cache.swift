import ByteStreams
import GzipStreams
import StreamCache

/// One run of `gzstream cache COMMAND`: the disk tier of StreamCache (``DiskCache``) from the
/// command line. One process has no use for the memory tier, so only the disk is used. Its
/// options are parsed by ``parseCacheCommandLine(_:)`` (CacheOptions.swift); get, which writes
/// to standard output or `-o FILE`, is in CacheGet.swift.
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
    var entrySubject: String { "cache: \(options.key ?? "")" }

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

    func fail(_ subject: String, _ problem: String) -> ExitStatus {
        diagnostics.error(subject, problem)
        return .error
    }

    /// A `-v` line: `gzstream: SUBJECT: TEXT`.
    func say(_ subject: String, _ text: String) {
        diagnostics.error(subject, text)
    }

    /// The key (from `--key-file`) and the cache in its directory (made by the first put).
    private func openCache() throws -> DiskCache {
        let key = try options.keyFile.map { try loadKeyFile($0, diagnostics: diagnostics) }
        guard let directory = options.directory ?? DiskCache.defaultDirectory() else {
            throw Reported(status: fail("cache", "no cache directory: give --dir DIR, or set XDG_CACHE_HOME or HOME"))
        }
        let cache = try DiskCache(directory: directory, key: key, maximumSize: options.maximumSize.map(Int.init),
                                  maximumAge: options.maximumAge.map { .seconds($0) }, compressionLevel: options.level,
                                  compressionThreads: options.threads ?? defaultThreadCount)
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
                return fail(inputName, errorText(error))
            } catch {
                return fail(inputName, describe(error))
            }
        } else {
            inputName = "standard input"
            input = environment.standardInput
        }
        let stored: CacheEntryInfo
        let limits: PruneResult?
        do {
            let result = try cache.storeApplyingLimits(from: input, forKey: key)
            stored = result.entry
            limits = result.limits
        } catch let refused as CacheDirectoryError {
            throw refused
        } catch {
            // The input's own failure names the input; anything else is the cache's.
            if input.streamStatus == .error { return fail(inputName, describe(error)) }
            return fail(entrySubject, "cannot store: \(describe(error))")
        }
        let plain = stored.plainSize ?? 0
        if options.verbose {
            diagnostics.note(entrySubject, "\(plain) -> \(stored.storedSize) bytes, "
                + "\(percentSaved(packed: stored.storedSize, plain: plain)) saved -> \(stored.name)")
        }
        if let limits, !limits.failures.isEmpty { return reportUnremoved(limits) }
        if let maximumSize = options.maximumSize, stored.storedSize > maximumSize {
            diagnostics.warning(entrySubject, "not kept: its \(stored.storedSize) bytes are more than --max-size \(maximumSize)")
            return .warning
        }
        return .success
    }


    /// Says why a lookup missed: always for a damaged entry, and unless `-q` for one not found
    /// or expired. - Returns: `.error`, the status of every miss.
    func reportMiss(_ miss: CacheMiss) -> ExitStatus {
        if case .damaged = miss {
            diagnostics.error(entrySubject, miss.description)
        } else {
            diagnostics.warning(entrySubject, miss.description)
        }
        return .error
    }

    func outputFailed(_ error: any Error, outputName: String) -> ExitStatus {
        if (error as? ByteStreamError)?.errno == Errno.brokenPipe {
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
        return result.failures.isEmpty ? .success : reportUnremoved(result)
    }

    /// Says in one line which files the limits could not remove, why, and which limits are
    /// unmet: `gzstream: cache: cannot remove 2 files (DIR/NAME: Permission denied; and 1
    /// more); 5120 bytes left, over --max-size 0`. - Returns: `.error`.
    private func reportUnremoved(_ result: PruneResult) -> ExitStatus {
        let count = result.failures.count
        var problem = "cannot remove \(count) file\(count == 1 ? "" : "s") (\(result.failures[0])"
            + (count > 1 ? "; and \(count - 1) more)" : ")")
        var unmet: [String] = []
        if let maximumSize = options.maximumSize, result.remainingBytes > maximumSize {
            unmet.append("\(result.remainingBytes) bytes left, over --max-size \(maximumSize)")
        }
        let expired = result.remainingExpiredCount
        if expired > 0 { unmet.append("\(expired) expired entr\(expired == 1 ? "y" : "ies") left") }
        if !unmet.isEmpty { problem += "; " + unmet.joined(separator: "; ") }
        return fail("cache", problem)
    }
}

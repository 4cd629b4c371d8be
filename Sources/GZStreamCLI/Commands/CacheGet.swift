import ByteStreams
import GzipStreams
import StreamCache

/// `gzstream cache get KEY [-o FILE]`: the entry's bytes to standard output, into a device or
/// FIFO that `-o` names, or to a file written beside its name and renamed into place. `-o` is
/// classified by the same rules as unpack's (``ExplicitOutput/classify(_:)``).
extension CacheCommand {
    /// Where get writes.
    enum Target {
        /// Standard output, or a descriptor of the process named by `-o` (`/dev/stdout`).
        case stream(ByteOutputStream, name: String)
        /// A device or FIFO named by `-o`: written into, never replaced.
        case device(Pathname, followsLinks: Bool)
        /// A file: a temporary file beside `publishPath`, renamed into place.
        case file(Pathname, publishPath: Pathname)
    }

    func get(from cache: DiskCache) throws -> ExitStatus {
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
                descriptor = try SystemCalls.open(path, flags: OpenFlag.writeOnly | OpenFlag.noControllingTerminal
                                                      | (followsLinks ? 0 : OpenFlag.noFollow))
            } catch {
                return fail(outputName, describe(error))
            }
            guard let info = FileInfo(descriptor: descriptor), !info.isRegularFile, !info.isDirectory else {
                try? SystemCalls.close(descriptor, target: outputName)
                return fail(outputName, "was replaced while being opened -- not written")
            }
            guard ExplicitOutput.mayWriteInto(info) else {
                try? SystemCalls.close(descriptor, target: outputName)
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
                try temporary.publish(as: publishPath.lastComponent, replacing: options.force)
            } catch {
                if error.alreadyExists { return fail(outputName, Command.existingOutput) }
                return fail(outputName, error.message)
            }
        }
        if options.verbose {
            diagnostics.note(entrySubject, "\(entry.storedSize) -> \(entry.plainSize) bytes -> "
                + "\(escapingControlCharacters(outputName))")
        }
        return .success
    }

    /// Where `-o` points, checked before the lookup: an existing file is refused without `-f`.
    private func outputTarget() throws -> Target {
        guard let path = options.outputPath else {
            return .stream(environment.standardOutput, name: "standard output")
        }
        // The last component examined once: a link or FIFO another user planted is not
        // followed or written into; a descriptor of this process is written through as is.
        let examined: ExplicitOutput
        do throws(ExplicitOutput.Refusal) {
            switch try ExplicitOutput.classify(path) {
            case .processDescriptor(let descriptor):
                return .stream(FileOutputStream(fileDescriptor: descriptor, closesDescriptor: false,
                                                displayName: path.description), name: path.description)
            case .path(let found):
                examined = found
            }
        } catch {
            throw Reported(status: fail(path.description, error.message))
        }
        let existing = examined.untrustedLink ? nil
            : (try? SystemCalls.info(of: examined.path, in: SystemCalls.currentDirectory,
                                     followsLinks: examined.followedLink))
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
        return .file(path, publishPath: examined.publishPath(for: path))
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
                let error = entry.streamErrorOrFallback(operation: "read cache entry")
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
}

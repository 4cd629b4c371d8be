import ByteStreams
import GzipStreams

/// Which inputs are taken, and the names outputs get.
extension Command {
    /// Whether a symbolic link named as an operand is followed: with `-f` (as GNU gzip's `-f`),
    /// and wherever no file is written beside the input and nothing is removed (`-c`, test,
    /// list, send). Pack and unpack in file mode, and index (whose index holds the data's plain
    /// bytes, beside the link), refuse one (`-o FILE` reads one to a regular file:
    /// ``openOperand(_:)``).
    var followsOperandLinks: Bool {
        if common.force { return true }
        switch options.command {
        case .send, .receive: return true
        case .index: return false
        case .pack, .unpack, .test, .list: return !writesFiles
        }
    }

    /// Opens an operand (not `-`) once, through ``OpenedInput``, and refuses what cannot be
    /// taken: a symbolic link without ``followsOperandLinks`` (as before, the message says
    /// what the link leads to when that decides: a directory without `-r`, a FIFO), and a name
    /// that cannot be opened. Does not check the kind of file (``checkKind(_:of:)``): a
    /// directory is returned for `-r` to walk. In gzip mode, a name to decompress that is not
    /// there is tried with gzip's suffixes (``suffixesTried(for:)``) in the same directory,
    /// each by one `openat(2)`: the input's ``OpenedInput/path`` is then the name found.
    /// - Returns: The input, owned by the caller (``OpenedInput/close()``).
    /// - Throws: ``Reported`` after saying why (with its ``Reported/problem``).
    /// Does not block, also on a FIFO.
    func openOperand(_ operand: Pathname) throws -> OpenedInput {
        let lookup: (directory: Int32, name: Pathname, trailingSlash: Bool)
        do {
            lookup = try OpenedInput.openDirectory(of: operand)
        } catch {
            let hint = isSystemError(error, Errno.noSuchFile) ? memberTakenAsFileHint(operand) : nil
            throw refuseInput(operand, errorText(error) + (hint ?? ""))
        }
        var ownsDirectory = true
        defer { if ownsDirectory { try? SystemCalls.close(lookup.directory, target: operand.description) } }
        let follows = followsOperandLinks || lookup.trailingSlash
        let suffixes = lookup.trailingSlash ? [] : suffixesTried(for: operand)
        var path = operand
        var name = lookup.name
        func open(following: Bool) throws -> OpenedInput {
            let input = try OpenedInput(name: name, in: lookup.directory, ownsDirectory: true, path: path,
                                        followsLinks: following, requiresDirectory: lookup.trailingSlash)
            ownsDirectory = false
            return input
        }
        let candidates: [Pathname?] = [nil] + suffixes.map { $0 }
        for suffix in candidates {
            path = suffix.map { operand.appending($0) } ?? operand
            name = suffix.map { lookup.name.appending($0) } ?? lookup.name
            do {
                return try open(following: follows)
            } catch where isSystemError(error, Errno.noSuchFile) && suffix != suffixes.last {
                continue
            } catch where isSystemError(error, Errno.tooManySymbolicLinks) && !follows {
                try refuseUnfollowedLink(name, in: lookup.directory, path: path)
                // -o FILE: the link is read, as a shell redirection from it would be.
                let input = try open(following: true)
                if input.info.isDirectory { throw refuseInput(path, Self.symbolicLinkOperand) }
                return input
            } catch {
                // None of the names is there: said of the first suffix tried, as gzip says it.
                if let first = suffixes.first, isSystemError(error, Errno.noSuchFile) {
                    throw refuseInput(operand.appending(first), errorText(error))
                }
                // An open can fail on what a lookup takes (a socket: ENXIO); say what it is, as
                // the kind check would.
                if let info = try? SystemCalls.info(of: name, in: lookup.directory, followsLinks: follows),
                   !info.isRegularFile, !info.isDirectory, !info.isSymbolicLink {
                    try checkKind(info, of: path)
                }
                let hint = isSystemError(error, Errno.noSuchFile) ? memberTakenAsFileHint(operand) : nil
                throw refuseInput(path, errorText(error) + (hint ?? ""))
            }
        }
        preconditionFailure("the last name tried returns or throws")
    }

    /// What to say after "No such file or directory" for an operand of unpack that followed a
    /// tar archive but was taken as a file to decompress, for its gzip suffix
    /// (``ParsedValues/extractsTarMembers``: `unpack a.tar.gz b.tar.gz` decompresses both), when
    /// it was meant as a member (`usr/share/doc/x/changelog.gz`): `-C` makes it one (`-c`
    /// takes no `-C`, so it cannot write one). `nil` elsewhere.
    func memberTakenAsFileHint(_ operand: Pathname) -> String? {
        guard case .unpack(let unpack) = options.command, options.gzip == nil, common.files.count > 1,
              operand != common.files[0], TarExtractionOptions.namesTarArchive(common.files[0]) else { return nil }
        let command = "`gzstream unpack -C . \(common.files[0]) MEMBER...`"
        return "; after a tar archive, a name with a gzip suffix is a file to decompress: "
            + (unpack.output.toStandardOutput ? "-c cannot write a member so named; \(command) extracts it"
                                              : "to extract a member so named, give -C (\(command))")
    }

    /// The suffixes gzip mode tries after NAME when NAME is not there (GNU gzip 1.12's
    /// `get_istat`): when decompressing, testing or listing a name without a known suffix,
    /// `-S`'s (`.gz` by default), then `.gz`, `.z`, `-z` and `.Z`, each once; otherwise none.
    func suffixesTried(for operand: Pathname) -> [Pathname] {
        guard options.gzip != nil, options.mode != .pack, knownSuffix(of: operand, custom: common.suffix) == nil else {
            return []
        }
        var suffixes: [Pathname] = [common.packSuffix]
        for suffix in gzipTriedSuffixes.map({ Pathname($0) }) where !suffixes.contains(suffix) {
            suffixes.append(suffix)
        }
        return suffixes
    }

    /// ``openOperand(_:)``, then ``checkKind(_:of:)``: an input that is read, not walked.
    func openInput(_ path: Pathname) throws -> OpenedInput {
        let input = try openOperand(path)
        try checkKind(input.info, of: path)
        return input
    }

    static let symbolicLinkOperand = "is a symbolic link (use -f to follow it)"

    /// `name` in `directory` is a symbolic link that is not followed: throws what is said of
    /// it, unless an explicit `-o FILE` lets a link to something readable be read. What the
    /// link leads to only picks the message (a link to a directory without `-r` is skipped
    /// as a directory); nothing is read through it.
    /// The corresponding C function is `fstatat(2)`.
    private func refuseUnfollowedLink(_ name: Pathname, in directory: Int32, path: Pathname) throws {
        let target: FileInfo?
        do {
            target = try SystemCalls.info(of: name, in: directory, followsLinks: true, target: path.description)
        } catch {
            throw refuseInput(path, errorText(error))
        }
        guard let info = target else { throw refuseInput(path, Errno.text(Errno.noSuchFile)) }
        if info.isDirectory {
            guard options.command.recursive else {
                let problem = Self.directoryIgnored
                diagnostics.warning(path.description, problem)
                throw Reported(status: .warning, problem: problem)
            }
            throw refuseInput(path, Self.symbolicLinkOperand)
        }
        try checkKind(info, of: path)
        // As GNU gzip: replacing a link's target by name is rarely what was meant.
        if !(options.command.outputPath != nil && outputDirectory == nil) { throw refuseInput(path, Self.symbolicLinkOperand) }
    }

    static let directoryIgnored = "is a directory -- ignored"

    /// The warning for a FIFO, device or socket passed over (gzip's, with its single dash in gzip mode).
    var notRegularFileIgnored: String {
        options.gzip?.notRegularFileIgnored ?? "is not a directory or a regular file -- ignored"
    }

    /// Says that `path` cannot be taken; - Returns: the ``Reported`` to throw.
    func refuseInput(_ path: Pathname, _ problem: String) -> Reported {
        Reported(status: reportError(path.description, problem), problem: problem)
    }

    /// Refuses an input that is not to be read, from what `fstat(2)` said of it: a directory
    /// (where it is not walked), and in file mode a FIFO or device.
    /// - Throws: ``Reported`` after an error, or a warning for a FIFO or device passed over.
    func checkKind(_ info: FileInfo, of path: Pathname) throws {
        if info.isDirectory { throw refuseInput(path, "is a directory") }
        // test and list write nothing, and send writes no file, so a FIFO, a device or
        // /dev/fd/N is read as with -c.
        let writesNothing: Bool
        switch options.command {
        case .test, .list, .send, .receive: writesNothing = true
        case .pack, .unpack, .index: writesNothing = false
        }
        guard info.isRegularFile || options.command.output?.toStandardOutput == true || writesNothing else {
            // File mode names its output after the input and may remove the input: a FIFO or a
            // device is passed over, -f or not, as GNU gzip does (`-f` must never turn
            // /dev/null into /dev/null.gz and unlink it). `-f -o FILE` reads one.
            if options.command.outputPath != nil && outputDirectory == nil {
                if common.force { return }
                throw refuseInput(path, "not a regular file (use -f or -c to read it)")
            }
            let problem = notRegularFileIgnored
            diagnostics.warning(path.description, problem)
            throw Reported(status: .warning, problem: problem)
        }
    }

    func refuseTerminal(readingStandardInput: Bool) throws {
        guard !common.force else { return }
        if options.gzip != nil { return try refuseTerminalLikeGzip(readingStandardInput: readingStandardInput) }
        switch options.mode {
        case .pack where environment.outputIsTerminal && options.command.outputPath == nil:
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

    /// `x` → `x.gz` (or `-S`'s suffix) for pack, also `x.gz` → `x.gz.gz` with `-f` (as gzip
    /// and pigz); `x.gz` → `x` and `x.tgz` → `x.tar` for unpack (see ``unpackedName(of:customSuffix:)``).
    /// - Throws: ``Reported`` when the name does not fit (``unfitName(_:)``), after saying so,
    ///   with ``unfitNameStatus``.
    func defaultOutputPath(for input: Pathname) throws -> Pathname {
        if let problem = unfitName(input) {
            diagnostics.warning(input.description, problem)
            throw Reported(status: unfitNameStatus)
        }
        switch options.mode {
        case .pack:
            return input.appending(common.packSuffix)
        case .unpack:
            // unfitName checked that there is one.
            return unpackedName(of: input, customSuffix: common.suffix)!
        case .test, .list, .index:
            preconditionFailure("test, list and index write no file named after the input")
        }
    }

    /// Why `path` gets no default output name, or `nil` when it gets one: pack does not pack a
    /// name that has a suffix already without `-f` (in gzip mode any of gzip's suffixes, as
    /// ``knownSuffix(of:custom:)`` finds them; for the pack command `.gz`, `.tgz` and `-S`'s);
    /// unpack (and `-r` for test and list) takes only gzip's suffixes and `-S`'s.
    func unfitName(_ path: Pathname) -> String? {
        switch options.mode {
        case .pack:
            guard !common.force else { return nil }
            // FILE.gz.gzidx or FILE.gz.gzi: an index beside a compressed file (pack --index,
            // bgzip -i), which -r would otherwise pack (and gzip mode remove) on a second run.
            for index in [Pathname(".gzidx"), ".gzi"] where path.hasSuffixIgnoringCase(index) {
                let indexed = Pathname(bytes: path.bytes.dropLast(index.bytes.count))
                if let indexed, knownSuffix(of: indexed, custom: common.suffix) != nil {
                    return "is an index (\(index)) -- unchanged"
                }
            }
            let suffix = options.gzip != nil
                ? knownSuffix(of: path, custom: common.suffix)
                : ([".gz", ".tgz"] + (common.suffix.map { [$0] } ?? [])).first { path.hasSuffixIgnoringCase($0) }
            return suffix.map { "already has \($0) suffix -- unchanged" }
        case .unpack, .test, .list:
            return unpackedName(of: path, customSuffix: common.suffix) == nil ? "unknown suffix -- ignored" : nil
        case .index:
            return nil
        }
    }

    /// The status of a name passed over by ``unfitName(_:)``: a warning, except in gzip mode for
    /// a name that has a suffix already, which gzip only notes (exit 0), and for an unknown
    /// suffix under `-q`, which gzip passes over without a word (its make_ofname warns, and so
    /// sets exit 2, only when not quiet).
    var unfitNameStatus: ExitStatus {
        guard let gzip = options.gzip else { return .warning }
        if gzip.passesOverSuffixedNameQuietly(mode: options.mode) { return .success }
        return options.mode == .unpack && common.quiet ? .success : .warning
    }
}


/// GNU gzip's suffixes of compressed files, besides `-S`'s.
private let builtInSuffixes: [Pathname] = [".gz", ".z", ".taz", ".tgz", "-gz", "-z", "_z"]

/// The suffix of a compressed file that `name` ends with, found as GNU gzip finds it (its
/// `get_suffix`): `custom` (`-S`) first, or last when it ends one of the built-in suffixes
/// (`-S z`), and `.gz`, `.z`, `.taz`, `.tgz`, `-gz`, `-z`, `_z`; ASCII letters in any case,
/// other bytes (UTF-8 or not) as they are; only when something other than a `/` comes before it.
/// - Returns: The suffix as `name` spells it (its last bytes), or `nil`.
func knownSuffix(of name: Pathname, custom: Pathname?) -> Pathname? {
    var candidates = builtInSuffixes
    if let custom {
        if builtInSuffixes.contains(where: { $0.bytes.count > custom.bytes.count && $0.hasSuffixIgnoringCase(custom) }) {
            candidates.append(custom)
        } else {
            candidates.insert(custom, at: 0)
        }
    }
    let bytes = name.bytes
    for candidate in candidates {
        let count = candidate.bytes.count
        guard bytes.count > count, bytes[bytes.count - count - 1] != UInt8(ascii: "/"),
              name.hasSuffixIgnoringCase(candidate) else { continue }
        return Pathname(bytes: bytes.suffix(count))!
    }
    return nil
}

/// The name `input` unpacks to: less its ``knownSuffix(of:custom:)``, `.tgz` and `.taz`
/// becoming `.tar`; `nil` when it has none.
func unpackedName(of input: Pathname, customSuffix: Pathname?) -> Pathname? {
    guard let suffix = knownSuffix(of: input, custom: customSuffix) else { return nil }
    let stem = Pathname(bytes: input.bytes.dropLast(suffix.bytes.count))!
    let lowered = suffix.asciiLowercased
    return lowered == ".tgz" || lowered == ".taz" ? stem.appending(".tar") : stem
}

/// The last path component of a stored FNAME, byte for byte (UTF-8 or not), or `nil` when it
/// is empty, `.`, `..` or longer than a file name can be (a header must not write outside the
/// output's directory).
func safeFileName(_ stored: [UInt8]) -> Pathname? {
    guard let name = Pathname(bytes: stored).map(\.baseName), !name.isEmpty, name != ".", name != "..",
          name.bytes.count <= SystemCalls.maximumNameLength else { return nil }
    return name
}

/// What a failed system call's error says to a user: `errno`'s text alone (`No such file or
/// directory`), as a lookup's failure has always been reported.
func errorText(_ error: any Error) -> String {
    if let code = (error as? ByteStreamError)?.errno { return Errno.text(code) }
    return describe(error)
}

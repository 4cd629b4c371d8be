import ByteStreams
import GzipStreams

// The rules between options, checked once every argument is read, as swift-argument-parser's
// `validate()` checks them: each option alone was checked by its value parser
// (ValueParsers.swift) when it was read, and an option the command does not take was refused
// by the command's own set (CommandOptionSets.swift), so no rule here names a command that
// does not take an option.

extension ParsedValues {
    /// Settles what depends on several options (`-o -` is `-c`; gzip mode removes each input
    /// unless it is written to standard output or `-o`), then refuses the combinations that do
    /// not go together, the first found in a fixed order.
    /// - Parameter keepOrRemoveGiven: Whether `-k`, `--keep` or `--rm` was given.
    /// - Throws: ``UsageError`` naming the options that do not go together.
    mutating func validate(keepOrRemoveGiven: Bool) throws(UsageError) {
        if outputPath == "-" {
            if mode == .index { throw UsageError(message: Self.indexToStandardOutput) }
            // `-o -` is standard output, as `-` is standard input among the files.
            outputPath = nil
            toStandardOutput = true
        }
        // As gzip: each input file is removed once its output file is in place, unless -k.
        if let removes = gzip?.removesInput(mode: mode, keepOrRemoveGiven: keepOrRemoveGiven,
                                            toStandardOutput: toStandardOutput, outputPath: outputPath) {
            removeInput = removes
        }
        if let indexPath {
            if indexPath.bytes.isEmpty { throw UsageError(message: "--index needs a path, not an empty one") }
            if files.count != 1 || files[0] == "-" {
                throw UsageError(message: "--index PATH needs one FILE (the index is that file's)")
            }
        }
        if writesIndex {
            if indexPath != nil {
                throw UsageError(message: "--write-index decodes each file whole to index it: --index PATH does not apply")
            }
            if rangeOffset != nil || rangeLength != nil || lineRange != nil {
                throw UsageError(message: "--write-index decodes each file whole to index it: --offset, --length and --lines do not apply")
            }
            if files.isEmpty || files.contains("-") {
                throw UsageError(message: "--write-index needs files (each index is written beside its file), not standard input")
            }
            if mode == .unpack && toStandardOutput && force {
                throw UsageError(message: "--write-index does not go with -c -f (what is not gzip passes through unindexed)")
            }
            if let outputPath, files.contains(where: { $0.appending(Command.gzidxSuffix) == outputPath }) {
                throw UsageError(message: "-o names the index --write-index writes beside FILE")
            }
            if removeInput {
                throw UsageError(message: "--write-index writes an index of FILE, which --rm (or gzip's -d without -k) removes")
            }
        }
        if members {
            if files.isEmpty || files[0] == "-" {
                throw UsageError(message: "--members needs a tar archive FILE (then patterns of members), not standard input")
            }
            if recursive { throw UsageError(message: "--members lists one archive: -r does not apply") }
        }
        try validateTarOptions()
        try validateTarExtraction()
        try validateEngineOptions()
        // Standard input, alone or among the files, is packed to standard output without -o.
        if index && outputPath == nil && (toStandardOutput || files.isEmpty || files.contains("-")) {
            throw UsageError(message: "--index needs an output file (not standard output)")
        }
        try validateBlockedOptions()
        if let outputPath {
            if outputPath.bytes.isEmpty { throw UsageError(message: "-o needs a path, not an empty one") }
            if toStandardOutput { throw UsageError(message: "-o and -c cannot be used together") }
            // Several files need -o to name a directory: checked when the command runs.
            if recursive { throw UsageError(message: "-r writes each output beside its input: -o does not apply") }
        }
    }

    /// The rules for extracting tar members (``extractsTarMembers``): one archive FILE, then
    /// MEMBER names or `--extract`; `-c` writes one member; the options about output files,
    /// ranges and removal do not apply.
    private func validateTarExtraction() throws(UsageError) {
        if extractionDirectory?.bytes.isEmpty == true { throw UsageError(message: "-C needs a directory, not an empty one") }
        guard extractsTarMembers else {
            if linksOutside { throw UsageError(message: "--links-outside applies to extracting tar members (--extract or MEMBER names)") }
            if sameOwner { throw UsageError(message: "--same-owner applies to extracting tar members (--extract or MEMBER names)") }
            return
        }
        if files.isEmpty || files[0] == "-" {
            throw UsageError(message: "extracting members needs an archive FILE (FILE.tar.gz), not standard input")
        }
        if extractsArchive && files.count > 1 {
            throw UsageError(message: "--extract extracts every member: name no MEMBER with it")
        }
        if !extractsArchive && files.count == 1 { throw UsageError(message: "-C needs --extract or MEMBER names") }
        if toStandardOutput && (files.count != 2 || extractsArchive || extractionDirectory != nil) {
            throw UsageError(message: "-c writes one member to standard output: name one MEMBER, without --extract or -C")
        }
        if outputPath != nil || removeInput || recursive || writesIndex || indexPath != nil || useName == true
            || rangeOffset != nil || rangeLength != nil || lineRange != nil || wholeLines || maximumOutputSize != nil {
            throw UsageError(message: "extracting members takes -C, -c and -f: -o, --rm, -r, -N, --index, --write-index, "
                + "--offset, --length, --lines and --max-output do not apply")
        }
    }

    /// The rules for the pack engine (levels above 9, `--rsyncable`, `--index` with
    /// `--engine zlib`), asked of the library that keeps them
    /// (``DeflateEngine/resolved(_:level:threads:blockSize:rsyncable:buildsIndex:operation:)``)
    /// with what pack will give it, before any file is opened; its refusal in the command's words.
    private func validateEngineOptions() throws(UsageError) {
        // Only plain pack takes --engine; BGZF's members are not the chunks engine's.
        guard let engine, !bgzf else { return }
        do {
            _ = try DeflateEngine.resolved(engine, level: level, threads: 1, blockSize: blockSize,
                                           rsyncable: rsyncable, buildsIndex: index)
        } catch {
            guard case .invalidArgument(let name, _) = error.code else { return }
            switch name {
            case "level": throw UsageError(message: "levels 10 to 12 need the chunks engine, not --engine zlib")
            case "rsyncable": throw UsageError(message: "--rsyncable needs the chunks engine, not --engine zlib")
            default:
                throw UsageError(message: "--index needs the chunks engine (its chunks are the access points), not --engine zlib")
            }
        }
    }

    /// The rules of `pack --tar`: its operands are what it archives, so it needs some, not
    /// standard input; it walks directories itself and removes nothing.
    private func validateTarOptions() throws(UsageError) {
        guard tar else {
            if tarModificationTime != nil || tarOwner != nil || tarGroup != nil || numericOwner {
                throw UsageError(message: "--mtime, --owner, --group and --numeric-owner apply to pack --tar")
            }
            return
        }
        if files.isEmpty || files.contains("-") {
            throw UsageError(message: "--tar needs the files and directories to archive (not standard input)")
        }
        if recursive { throw UsageError(message: "--tar walks the directories itself: -r does not apply") }
        if removeInput { throw UsageError(message: "--tar removes nothing it archives: --rm does not apply") }
        if progress == true { throw UsageError(message: "--progress does not apply to --tar") }
        if files.count > 1 && outputPath == nil && !toStandardOutput {
            throw UsageError(message: "--tar with several FILEs needs -o ARCHIVE or -c (one archive holds them all)")
        }
    }

    /// `index -o` with an empty path or `-`.
    private static let indexToStandardOutput = "index -o needs a file's path (the index is not written to standard output)"

    /// The rules for `unpack --lines` and `unpack --offset/--length` (a range of a BGZF file,
    /// read through its `.gzi` index) and for the `index` command, which writes that index.
    private func validateBlockedOptions() throws(UsageError) {
        if lineRange != nil {
            // The same shape as a byte range's, which it cannot be given with.
            if rangeOffset != nil || rangeLength != nil { throw UsageError(message: "--lines does not go with --offset or --length") }
            if files.count != 1 || files[0] == "-" {
                throw UsageError(message: "--lines needs one FILE (read through FILE.gzidx or --index PATH when it counts lines)")
            }
            if !toStandardOutput && outputPath == nil { throw UsageError(message: "--lines writes to -c or -o PATH only") }
            if removeInput || useName == true || maximumOutputSize != nil {
                throw UsageError(message: "--lines does not go with --rm, -N or --max-output")
            }
        }
        if rangeOffset != nil || rangeLength != nil {
            if files.count != 1 || files[0] == "-" {
                throw UsageError(message: "--offset and --length need one FILE (read through FILE.gzi, FILE.gzidx or --index PATH)")
            }
            if !toStandardOutput && outputPath == nil {
                throw UsageError(message: "--offset and --length write to -c or -o PATH only")
            }
            if removeInput || useName == true || maximumOutputSize != nil {
                throw UsageError(message: "--offset and --length do not go with --rm, -N or --max-output")
            }
            // The range is inflated by BGZFInputStream's members, with ISA-L only.
        }
        if wholeLines && rangeOffset == nil && rangeLength == nil {
            throw UsageError(message: "--whole-lines needs --offset or --length (the range whose lines are written)")
        }
        if mode == .index, plan != nil {
            if plan == 0 { throw UsageError(message: "--plan needs a split size above 0") }
            if outputPath != nil || span != nil || strict {
                throw UsageError(message: "--plan writes no index: -o, --span and --strict do not apply")
            }
            if files.isEmpty || files.contains("-") { throw UsageError(message: "--plan needs files (each read through its index), not standard input") }
        } else if mode == .index, json {
            throw UsageError(message: "--json applies to list and index --plan")
        }
        if mode == .index {
            if let outputPath, outputPath.bytes.isEmpty { throw UsageError(message: Self.indexToStandardOutput) }
            if files.isEmpty { throw UsageError(message: "index needs a FILE") }
            if outputPath != nil && (files.count != 1 || files[0] == "-") {
                throw UsageError(message: "index -o PATH needs one FILE (the index is that file's)")
            }
        }
    }
}

/// Takes send's `HOST:PORT` or receive's `[HOST:]PORT` from the operands and refuses the
/// options that do not apply; run on the options as parsed, before the general checks.
/// `keepOrRemoveGiven`: whether `-k`, `--keep` or `--rm` was given.
func takeNetworkOperands(_ options: inout ParsedValues, for command: NetworkCommand,
                         keepOrRemoveGiven: Bool) throws(UsageError) {
    guard let first = options.files.first else {
        throw UsageError(message: command == .send ? "send needs HOST:PORT" : "receive needs [HOST:]PORT")
    }
    options.address = try NetworkAddress(parsing: first.description, for: command)
    options.files.removeFirst()
    switch command {
    case .send:
        if options.files.count > 1 { throw UsageError(message: "send takes one FILE at most") }
        if options.outputPath != nil || options.toStandardOutput || options.recursive || options.suffix != nil
            || keepOrRemoveGiven || options.force || options.index {
            throw UsageError(message: "send writes to its connection: -c, -o, -r, -S, -f, -k, --rm and --index do not apply")
        }
    case .receive:
        if !options.files.isEmpty { throw UsageError(message: "receive takes no FILE (write one with -o FILE)") }
        if options.recursive || options.suffix != nil || keepOrRemoveGiven
            || options.useName == true || options.rangeOffset != nil || options.rangeLength != nil {
            throw UsageError(message: "receive reads one connection: -r, -S, -k, --rm, -N, --offset and --length do not apply")
        }
        // Without -o the output is standard output, as unpack -c.
        if options.outputPath == nil { options.toStandardOutput = true }
    }
}

extension CacheOptions {
    /// Settles `-o -` (standard output) and refuses an empty `-o`; the options the action does
    /// not take were refused by its own set (``Action/refuseOptionsNotTaken(_:)``).
    /// - Throws: ``UsageError`` pointing to the cache's help.
    mutating func validate() throws(UsageError) {
        if let outputPath {
            if outputPath.bytes.isEmpty { throw cacheUsageError("-o needs a path, not an empty one") }
            if outputPath == "-" { self.outputPath = nil }
        }
    }
}

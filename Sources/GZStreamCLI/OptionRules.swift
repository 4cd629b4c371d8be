import ByteStreams
import GzipStreams

// The rules between options, checked once every argument is read, as swift-argument-parser's
// `validate()` checks them: each option alone was checked by its value parser
// (ValueParsers.swift) when it was read.

extension Options {
    /// Settles what depends on several options (`-o -` is `-c`; gzip mode removes each input
    /// unless it is written to standard output or `-o`), then refuses the combinations that do
    /// not apply, the first found in a fixed order.
    /// - Parameter keepOrRemoveGiven: Whether `-k`, `--keep` or `--rm` was given.
    /// - Throws: ``UsageError`` naming the options that do not go together.
    mutating func validate(keepOrRemoveGiven: Bool) throws(UsageError) {
        if mode == .test || mode == .list {
            if outputPath != nil || toStandardOutput || removeInput {
                throw UsageError(message: "\(mode.rawValue) writes no output: -c, -o and --rm do not apply")
            }
        }
        if maximumOutputSize != nil && mode == .pack {
            throw UsageError(message: "--max-output applies to unpack, test and list")
        }
        if strict && (mode == .pack || mode == .index) {
            throw UsageError(message: "--strict applies to unpack, test and list")
        }
        if outputPath == "-" {
            if mode == .index { throw UsageError(message: Self.indexToStandardOutput) }
            // `-o -` is standard output, as `-` is standard input among the files.
            outputPath = nil
            toStandardOutput = true
        }
        // As gzip: each input file is removed once its output file is in place, unless -k.
        if gzipMode, !keepOrRemoveGiven, mode == .pack || mode == .unpack {
            removeInput = !toStandardOutput && outputPath == nil
        }
        if gzipMode && mode != .pack {
            // gzip and pigz take the options that only tune compression with -d, -t and -l and
            // ignore them: `tar -I 'gzip --rsyncable'` extracts with `-d --rsyncable`.
            rsyncable = false
            engine = nil
            blockSize = nil
        }
        if blockSize != nil && (mode != .pack || bgzf) {
            throw UsageError(message: "--block-size applies to pack without --bgzf (BGZF members hold 65280 bytes)")
        }
        if mode != .pack && (bgzf || index) {
            throw UsageError(message: "--bgzf and --index apply to pack")
        }
        if let indexPath {
            if mode != .unpack && mode != .test { throw UsageError(message: "--index PATH applies to unpack and test") }
            if indexPath.bytes.isEmpty { throw UsageError(message: "--index needs a path, not an empty one") }
            if files.count != 1 || files[0] == "-" {
                throw UsageError(message: "--index PATH needs one FILE (the index is that file's)")
            }
        }
        if span != nil && mode != .index {
            throw UsageError(message: "--span applies to index")
        }
        try validateEngineOptions()
        // Standard input, alone or among the files, is packed to standard output without -o.
        if index && outputPath == nil && (toStandardOutput || files.isEmpty || files.contains("-")) {
            throw UsageError(message: "--index needs an output file (not standard output)")
        }
        try validateBlockedOptions()
        if progress != nil && (mode == .list || mode == .index) {
            throw UsageError(message: "--progress and --no-progress apply to pack, unpack and test")
        }
        if json && mode != .list {
            throw UsageError(message: "--json applies to list only")
        }
        if let outputPath {
            if outputPath.bytes.isEmpty { throw UsageError(message: "-o needs a path, not an empty one") }
            if toStandardOutput { throw UsageError(message: "-o and -c cannot be used together") }
            // Several files need -o to name a directory: checked when the command runs.
            if recursive { throw UsageError(message: "-r writes each output beside its input: -o does not apply") }
        }
        if recursive && mode == .index {
            throw UsageError(message: "-r applies to pack, unpack, test and list")
        }
    }

    /// The rules for the pack engine: `--engine`, `--rsyncable`, levels above 9, and
    /// `--index` without `--bgzf` (whose access points are the chunks engine's chunk starts).
    private func validateEngineOptions() throws(UsageError) {
        if engine != nil && (mode != .pack || bgzf) {
            throw UsageError(message: "--engine applies to pack without --bgzf")
        }
        if rsyncable && (mode != .pack || bgzf) {
            throw UsageError(message: "--rsyncable applies to pack without --bgzf")
        }
        guard engine == .zlib else { return }
        if level > compressionLevels.upperBound {
            throw UsageError(message: "levels 10 to 12 need the chunks engine, not --engine zlib")
        }
        if rsyncable { throw UsageError(message: "--rsyncable needs the chunks engine, not --engine zlib") }
        if index && !bgzf {
            throw UsageError(message: "--index needs the chunks engine (its chunks are the access points), not --engine zlib")
        }
    }

    /// `index -o` with an empty path or `-`.
    private static let indexToStandardOutput = "index -o needs a file's path (the index is not written to standard output)"

    /// The rules for `unpack --offset/--length` (a range of a BGZF file, read through its
    /// `.gzi` index) and for the `index` command, which writes that index.
    private func validateBlockedOptions() throws(UsageError) {
        if rangeOffset != nil || rangeLength != nil {
            if mode != .unpack { throw UsageError(message: "--offset and --length apply to unpack") }
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
        if mode == .index {
            if let outputPath, outputPath.bytes.isEmpty { throw UsageError(message: Self.indexToStandardOutput) }
            if toStandardOutput || removeInput || maximumOutputSize != nil {
                throw UsageError(message: "index writes its index beside each FILE (or to -o PATH): -c, --rm and --max-output do not apply")
            }
            if files.isEmpty { throw UsageError(message: "index needs a FILE") }
            if outputPath != nil && (files.count != 1 || files[0] == "-") {
                throw UsageError(message: "index -o PATH needs one FILE (the index is that file's)")
            }
        }
    }
}

extension CacheOptions {
    /// Refuses the options that do not apply to the action; `-o -` is standard output.
    /// - Parameter outputGiven: Whether `-o` or `--output` was given.
    /// - Throws: ``UsageError`` pointing to the cache's help.
    mutating func validate(outputGiven: Bool) throws(UsageError) {
        if outputGiven, action != .get { throw cacheUsageError("-o applies to cache get") }
        if force, action != .get, action != .remove { throw cacheUsageError("-f applies to cache get and remove") }
        if json, action != .list { throw cacheUsageError("--json applies to cache list") }
        if let outputPath {
            if outputPath.bytes.isEmpty { throw cacheUsageError("-o needs a path, not an empty one") }
            if outputPath == "-" { self.outputPath = nil }
        }
    }
}

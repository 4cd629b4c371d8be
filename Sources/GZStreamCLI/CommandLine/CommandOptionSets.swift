// Which options each command takes, as swift-argument-parser gives each command a type of its
// own: a command's set is the options common to all (levels, -f, -k, -q, -v, -S, -p, -N, -n,
// --chunk-size, --synchronous, which no set lists) and its own. An option a command does not
// take is refused by that command's parse in the words users have always read
// (``CommandShape/refusal(of:)``), so no rule between options has to say "X applies to Y".
// The types a run gets (CommandOptions.swift) hold the same sets: ``CommonOptions`` and one
// value per command, which has no field for an option refused here.

/// An option that some command does not take: one key per field, whatever its spellings
/// (`-c`, `--stdout` and `--to-stdout` are ``stdout``).
enum OptionKey: Hashable, Sendable {
    case stdout, output, remove
    case maximumOutput, strict
    case blockSize, engine, rsyncable
    case bgzf, writeIndex
    /// `--index PATH` (unpack, test), against pack's flag ``writeIndex``.
    case indexPath
    /// `--write-index` (unpack, test).
    case writesIndex
    case span
    /// `--offset` and `--length`.
    case range
    /// `--whole-lines` (unpack, with a range).
    case wholeLines
    /// `--plan SIZE` (index).
    case plan
    /// `--lines`.
    case lines
    /// `--progress` and `--no-progress`.
    case progress
    case json
    /// list's `--members`.
    case members
    /// index's `--no-tar`.
    case noTar
    case recursive
    case timeout, deadline, keyFile
    /// `--tar`.
    case tar
    /// `--mtime`, `--owner`, `--group`, `--numeric-owner` (pack --tar's).
    case tarMetadata
    /// unpack's tar extraction, one key per option so that a refusal names the one given:
    /// `--extract`, `-C DIR` (`--directory`), `--links-outside`, `--same-owner` and
    /// `--no-same-owner`.
    case extract, directory, linksOutside, sameOwner

    /// The tar extraction options, which gzip mode refuses.
    static let tarExtraction: Set<OptionKey> = [.extract, .directory, .linksOutside, .sameOwner]
}

/// The shape of one command line once its command is known: the command, or gzip mode's
/// command after `-d`, `-t` and `-l` are read. Pack with `--bgzf` is a shape of its own: its
/// members are BGZF's, so it takes none of the chunk engine's options.
enum CommandShape: Sendable {
    case pack, bgzfPack, unpack, test, list, index, send, receive

    /// The shape of `options` as parsed; `network` is send or receive.
    init(_ options: ParsedValues, network: NetworkCommand?) {
        switch (options.mode, network) {
        case (.pack, .send?): self = .send
        case (.unpack, .receive?): self = .receive
        case (.pack, _): self = options.bgzf ? .bgzfPack : .pack
        case (.unpack, _): self = .unpack
        case (.test, _): self = .test
        case (.list, _): self = .list
        case (.index, _): self = .index
        }
    }

    /// The options the shape takes beyond the common ones.
    var takes: Set<OptionKey> {
        switch self {
        case .pack: [.stdout, .output, .remove, .blockSize, .engine, .rsyncable, .bgzf, .writeIndex, .progress, .recursive,
                     .tar, .tarMetadata]
        case .bgzfPack: [.stdout, .output, .remove, .bgzf, .writeIndex, .progress, .recursive, .tar, .tarMetadata]
        case .unpack: [.stdout, .output, .remove, .maximumOutput, .strict, .indexPath, .writesIndex, .range, .wholeLines, .lines, .progress,
                       .recursive, .extract, .directory, .linksOutside, .sameOwner]
        case .test: [.maximumOutput, .strict, .indexPath, .writesIndex, .progress, .recursive]
        case .list: [.maximumOutput, .strict, .json, .recursive, .members]
        case .index: [.output, .span, .strict, .plan, .json, .noTar]
        // What the connection excludes (-c, -o, -r, --rm, …) is send's and receive's own rule
        // on the values given (Network.swift), which names them all in one message.
        case .send: Self.pack.takes.subtracting([.tar, .tarMetadata]).union([.timeout, .deadline, .keyFile])
        case .receive: Self.unpack.takes.subtracting([.lines, .wholeLines]).subtracting(OptionKey.tarExtraction).union([.timeout, .deadline, .keyFile])
        }
    }

    /// What the command line says when this shape is given `key`, which it does not take.
    func refusal(of key: OptionKey) -> UsageError {
        UsageError(message: refusalMessage(of: key))
    }

    private func refusalMessage(of key: OptionKey) -> String {
        switch (self, key) {
        case (.test, .stdout), (.test, .output), (.test, .remove): return "test writes no output: -c, -o and --rm do not apply"
        case (.list, .stdout), (.list, .output), (.list, .remove): return "list writes no output: -c, -o and --rm do not apply"
        case (.index, .stdout), (.index, .remove), (.index, .maximumOutput):
            return "index writes its index beside each FILE (or to -o PATH): -c, --rm and --max-output do not apply"
        default: break
        }
        switch key {
        // Only test, list and index leave these out (above).
        case .stdout, .output, .remove: return "-c, -o and --rm do not apply"
        case .maximumOutput: return "--max-output applies to unpack, test and list"
        case .strict: return "--strict applies to unpack, test, list and index"
        case .blockSize: return "--block-size applies to pack without --bgzf (BGZF members hold 65280 bytes)"
        case .engine: return "--engine applies to pack without --bgzf"
        case .rsyncable: return "--rsyncable applies to pack without --bgzf"
        case .bgzf, .writeIndex: return "--bgzf and --index apply to pack"
        case .indexPath: return "--index PATH applies to unpack and test"
        case .writesIndex: return "--write-index applies to unpack and test (index writes an index by itself)"
        case .span: return "--span applies to index"
        case .range: return "--offset and --length apply to unpack"
        case .wholeLines: return "--whole-lines applies to unpack (with --offset and --length)"
        case .plan: return "--plan applies to index"
        case .lines: return "--lines applies to unpack"
        case .progress: return "--progress and --no-progress apply to pack, unpack and test"
        case .json: return "--json applies to list and index --plan"
        case .members: return "--members applies to list"
        case .noTar: return "--no-tar applies to index"
        case .recursive: return "-r applies to pack, unpack, test and list"
        case .timeout: return "--timeout applies to send and receive"
        case .deadline: return "--deadline applies to send and receive"
        case .keyFile: return "--key-file applies to send, receive and cache"
        case .tar: return "--tar applies to pack"
        case .tarMetadata: return "--mtime, --owner, --group and --numeric-owner apply to pack --tar"
        case .extract: return "--extract applies to unpack"
        case .directory: return "-C applies to unpack"
        case .linksOutside: return "--links-outside applies to unpack"
        case .sameOwner: return "--same-owner and --no-same-owner apply to unpack"
        }
    }

    /// Refuses, of the options in `given` that this shape does not take, the one of lowest
    /// ``precedence(of:)``, so that a command line with several names the one it always named.
    /// - Throws: ``UsageError`` with ``refusal(of:)``'s message.
    func refuseOptionsNotTaken(_ given: [OptionKey]) throws(UsageError) {
        let takes = takes
        let refused = given.filter { !takes.contains($0) }
        if let first = refused.min(by: { precedence(of: $0) < precedence(of: $1) }) { throw refusal(of: first) }
    }

    /// Which refusal comes first when several options are refused: the order in which the
    /// rules named them before each command had a set (the lowest first).
    private func precedence(of key: OptionKey) -> Int {
        switch key {
        case .stdout, .output, .remove: self == .index ? 9 : 0
        case .maximumOutput: self == .index ? 9 : 1
        case .strict: 2
        case .blockSize: 3
        case .bgzf, .writeIndex: 4
        case .indexPath: 5
        case .writesIndex: 5
        case .span: 6
        case .engine: 7
        case .rsyncable: 8
        case .range, .wholeLines, .plan, .lines, .extract, .directory, .linksOutside, .sameOwner: 9
        case .progress: 10
        case .json: 11
        case .members, .noTar: 11
        case .recursive: 12
        case .timeout, .deadline, .keyFile: -1
        case .tar, .tarMetadata: 13
        }
    }
}

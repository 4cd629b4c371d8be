import ByteStreams

/// What gzip mode does differently from gzstream's commands, as GNU gzip 1.12 does it: the
/// parser makes one for a command line without a command, or for a program called `gzip`,
/// `gunzip`, `zcat` or `gzcat` (``Invocation/gzip``; the commands have none), and each place
/// that behaves as gzip reads it there: the inputs it removes, an existing output (asked about
/// on a terminal, else gzip's warning), gzip's words for errors, `-v` and names, its `-l`
/// table, no progress line and no note about an index beside the input. A value type.
struct GzipCompatibility: Equatable, Sendable {
    /// What messages start with: the name the program was called by, as gzip signs its own
    /// (`gzip`, `zcat`, `gzstream`), control characters escaped.
    var programName: String

    /// The signature of messages for a program called `baseName` (the last path component of
    /// `argv[0]`): that name, or `gzstream` for an empty one.
    static func signature(of baseName: Pathname) -> String {
        baseName.isEmpty ? "gzstream" : escapingControlCharacters(baseName.description)
    }

    /// Whether pack or unpack removes each input once its output is in place: as gzip, unless
    /// `-k`, `--keep` or `--rm` said otherwise, or the output is standard output or `-o`'s.
    /// `nil` when the choice was given (or for test, list and index, which write no output).
    func removesInput(mode: Invocation.Mode, keepOrRemoveGiven: Bool, toStandardOutput: Bool,
                      outputPath: Pathname?) -> Bool? {
        guard !keepOrRemoveGiven, mode == .pack || mode == .unpack else { return nil }
        return !toStandardOutput && outputPath == nil
    }

    /// What messages call standard input: gzip's `stdin` (the commands say `standard input`).
    var standardInputName: String { "stdin" }

    /// The warning for a FIFO, device or socket passed over, with gzip's single dash (the
    /// commands write two).
    var notRegularFileIgnored: String { "is not a directory or a regular file - ignored" }

    /// Whether `list` prints gzip's `-l` table: unless `--json` asks for `list`'s JSON.
    func listsGzipTable(json: Bool) -> Bool { !json }

    /// Whether a name that already has a suffix is passed over with exit 0, as gzip only notes
    /// it when compressing (the commands warn, exit 2).
    func passesOverSuffixedNameQuietly(mode: Invocation.Mode) -> Bool { mode == .pack }
}

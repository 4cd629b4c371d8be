import ByteStreams
import GzipStreams

/// What the command line asked for.
struct Options: Equatable {
    enum Mode: String { case pack, unpack, test, list, index }

    var mode: Mode
    /// GNU gzip's command line (no subcommand, or called `gzip`, `gunzip`, `zcat` or `gzcat`),
    /// whose mode comes from `-d`, `-t`, `-l`, and gzip's behaviour (GzipCompatibility.swift);
    /// `nil` for the commands.
    var gzip: GzipCompatibility?
    var files: [Pathname] = []
    var toStandardOutput = false
    var outputPath: Pathname?
    var force = false
    /// `-r`: walk the directories named, taking the regular files in them (links not followed).
    var recursive = false
    var level = 6
    var chunkSize = ByteStream.defaultChunkSize
    /// Whether `--chunk-size` was given (unpack then writes in chunks of that size too).
    var chunkSizeGiven = false
    /// `-N`/`-n`: `nil` takes each mode's default (pack stores the name and MTIME; unpack does
    /// not restore them), as GNU gzip.
    var useName: Bool?
    var removeInput = false
    /// `-k`/`--keep` was given (the last of it and `--rm`): gzip mode's `-v` then says
    /// "created", not "replaced with", also with `-c`.
    var keep = false
    var quiet = false
    var verbose = false
    var maximumOutputSize: Int?
    /// `--strict`: decode with zlib only, so that what zlib rejects fails (``Command/inflaterChoice``);
    /// what `test` and `list` always do.
    var strict = false
    /// `list --json`: machine-readable output.
    var json = false
    /// `-p`/`--threads`: deflating threads for pack, inflating threads for BGZF input to unpack and
    /// test; `nil` is every core available to the process.
    var threads: Int?
    /// `-b`/`--block-size`: plain bytes per independently deflated block (pack); `nil` is the
    /// engine's (1 MiB chunks; pigz's 128 KiB for zlib). The output depends on this, the engine
    /// and the level, never on the thread count.
    var blockSize: Int?
    /// `--engine NAME` (pack): how to deflate; `nil` is ``DeflateEngine/chunks``.
    var engine: DeflateEngine?
    /// `--rsyncable` (pack): chunk boundaries chosen from the content.
    var rsyncable = false
    /// `--bgzf`: pack as BGZF (SAM/BAM specification §4.1) instead of one member.
    var bgzf = false
    /// `--index` (pack): write an index beside the output: bgzip's `.gzi` with `--bgzf`, else
    /// indexed_gzip's GZIDX (`.gzidx`) with an access point at each chunk.
    var index = false
    /// `unpack`/`test --index PATH`: the index to read the one FILE through (GZIDX), instead of
    /// `FILE.gzidx` beside it.
    var indexPath: Pathname?
    /// `index --span SIZE`: the plain bytes between GZIDX points; `nil` is
    /// ``GzipIndexBuilder/defaultSpan``. BGZF files get bgzip's `.gzi`, which has no span.
    var span: Int?
    /// `unpack --offset N`: the first plain byte to write, in bytes (BGZF with a `.gzi` index).
    var rangeOffset: Int64?
    /// `unpack --length M`: the most plain bytes to write from ``rangeOffset``; `nil` to the end.
    var rangeLength: Int64?
    /// `--synchronous`: as gzip's, each output file and then its directory are flushed to the
    /// disk (`fsync(2)`) once it is in place, before the input is removed.
    var synchronous = false
    /// `-S`/`--suffix`: what pack appends and unpack also recognises; `nil` is `.gz`. Bytes as
    /// given (UTF-8 or not), as the end of a name.
    var suffix: Pathname?

    /// The suffix of the index `pack --index` writes beside its output: bgzip's `.gzi` with
    /// `--bgzf`, else indexed_gzip's `.gzidx`.
    var indexSuffix: Pathname { bgzf ? ".gzi" : ".gzidx" }

    /// The suffix pack appends: `-S`'s, else `.gz`.
    var packSuffix: Pathname { suffix ?? ".gz" }

    /// `--progress` (`true`) / `--no-progress` (`false`), the last given; `nil` shows progress
    /// when standard error is a terminal and `-q` is not given (ProgressReporter.swift).
    var progress: Bool?

    /// `send HOST:PORT` (mode pack) or `receive [HOST:]PORT` (mode unpack): the data goes over
    /// one TCP connection (Network.swift).
    var network: NetworkRun?
    /// `--timeout SECONDS` (send and receive): the longest wait to connect or to be connected
    /// to, and for each read or write on the connection to move a byte.
    var timeout: Duration?
    /// `--deadline DURATION` (send and receive): the longest a whole transfer may take, from
    /// connecting (send) or accepting (receive) to the acknowledgement.
    var deadline: DeadlineOption?
    /// `--key-file FILE` (send and receive): the pre-shared key; the data is then encrypted and
    /// authenticated, bound to receive's challenge.
    var keyFile: String?
}

/// What parsing found: options to run, or a request for help or the version.
enum ParsedCommand: Equatable {
    case run(Options)
    /// `--help`, `-h` or `help [COMMAND]`: the map, gzip mode's help or a command's.
    case help(HelpTopic)
    case version
    /// `-L`, `--license`: the licence, as gzip's `-L` prints its own.
    case license
    /// `gzstream cache …` (Cache.swift).
    case cache(CacheOptions)
    /// `gzstream cache --help`, or with an action (`cache get --help`) that action's help.
    case cacheHelp(CacheOptions.Action?)
}

/// A command line that cannot be run; printed as GNU gzip and coreutils print one, on two
/// lines: `PROGRAM: MESSAGE`, then `Try 'PROGRAM --help' for more information.`
struct UsageError: Error, Equatable {
    var message: String
    /// What the second line tells the user to run after the program's name: `--help`, or
    /// `cache --help` for the cache's errors; `nil` prints no second line (gzip's
    /// "invalid suffix" and "suffix contains '/'" come alone).
    var helpCommand: String? = "--help"

    /// This error pointing to `helpCommand`, unless it points to a help of its own already.
    func pointing(to helpCommand: String) -> UsageError {
        var error = self
        if error.helpCommand == "--help" { error.helpCommand = helpCommand }
        return error
    }
}

extension UsageError {
    /// What standard error shows for this error: one line and where help is, as gzip and
    /// coreutils print a usage error (`gzstream: MESSAGE`, then `Try 'gzstream --help' for more
    /// information.`), control characters escaped.
    /// - Parameter signature: The program's name as it was called (`gzstream`, `gzip`, `zcat`).
    func text(signedBy signature: String) -> String {
        "\(signature): \(escapingControlCharacters(message))\n"
            + (helpCommand.map { "Try '\(signature) \($0)' for more information.\n" } ?? "")
    }
}

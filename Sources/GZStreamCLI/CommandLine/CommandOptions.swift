import ByteStreams
import GzipStreams
import TarArchives

// What a command line asked for, as swift-argument-parser gives each command a type of its
// own: the options every command takes (``CommonOptions``), and one value per command holding
// only what that command takes (``CommandOptions``), so that code running one command cannot
// read an option another command takes. Which command takes which option, and the words an
// option that does not apply is refused in, are CommandOptionSets.swift's; the parser fills a
// flat record of its own (ParsedValues.swift) and builds these from it once every rule passed.

/// What the command line asked for: the options every command takes, the command with its own
/// options, and gzip mode's behaviour. What ``Command`` runs. A value type.
struct Invocation: Equatable {
    /// The files and what every command takes.
    var common: CommonOptions
    /// The command and the options only it takes.
    var command: CommandOptions
    /// GNU gzip's command line (no subcommand, or called `gzip`, `gunzip`, `zcat` or `gzcat`),
    /// whose command comes from `-d`, `-t`, `-l`, and gzip's behaviour (GzipCompatibility.swift);
    /// `nil` for the commands.
    var gzip: GzipCompatibility?

    /// What is done to each input; send packs and receive unpacks.
    enum Mode: String { case pack, unpack, test, list, index }

    /// What is done to each input: the command's, send's pack and receive's unpack.
    var mode: Mode {
        switch command {
        case .pack, .send: .pack
        case .unpack, .receive: .unpack
        case .test: .test
        case .list: .list
        case .index: .index
        }
    }
}

/// The options every command takes (CommandOptionSets.swift lists none of them).
struct CommonOptions: Equatable {
    /// The operands: files to read, `-` for standard input; none reads standard input. send's
    /// and receive's address is not among them (``ConnectionOptions/address``).
    var files: [Pathname] = []
    /// `-f`/`--force`: replace outputs, follow symbolic links, read a terminal or a FIFO, pack
    /// a name that has a suffix already.
    var force = false
    /// `-k`/`--keep` was given (the last of it and `--rm`): gzip mode's `-v` then says
    /// "created", not "replaced with", also with `-c`.
    var keep = false
    /// `-q`/`--quiet`/`--silent` (the last of it and `-v`): warnings are not printed.
    var quiet = false
    /// `-v`/`--verbose` (the last of it and `-q`): a line per file.
    var verbose = false
    /// `-N`, `--fast` (1), `--best` or `--level N`: the deflate level pack uses (its range is
    /// ValueParsers.swift's); 6 by default. Taken, and unused, by the commands that do not
    /// pack, as gzip takes it with `-d`.
    var level = 6
    /// `--chunk-size SIZE`: the bytes each read of an input asks for; 4096 by default
    /// (``ByteStream/defaultChunkSize``).
    var chunkSize = ByteStream.defaultChunkSize
    /// Whether `--chunk-size` was given (unpack then writes in chunks of that size too).
    var chunkSizeGiven = false
    /// `-N`/`-n`: `nil` takes each command's default (pack stores the name and MTIME; unpack
    /// does not restore them), as GNU gzip.
    var useName: Bool?
    /// `-p`/`--threads`: deflating threads for pack, inflating threads for BGZF input and
    /// indexed input to unpack and test; `nil` is every core available to the process.
    var threads: Int?
    /// `--synchronous`: as gzip's, each output file and then its directory are flushed to the
    /// disk (`fsync(2)`) once it is in place, before the input is removed.
    var synchronous = false
    /// `-S`/`--suffix`: what pack appends and unpack also recognises; `nil` is `.gz`. Bytes as
    /// given (UTF-8 or not), as the end of a name.
    var suffix: Pathname?

    /// The suffix pack appends: `-S`'s, else `.gz`.
    var packSuffix: Pathname { suffix ?? ".gz" }
}

/// The command run and the options only it takes: one case per command.
enum CommandOptions: Equatable {
    case pack(PackOptions)
    case unpack(UnpackOptions)
    case test(TestOptions)
    case list(ListOptions)
    case index(IndexOptions)
    /// `send HOST:PORT [FILE]`: pack onto one TCP connection (Network.swift).
    case send(PackOptions, ConnectionOptions)
    /// `receive [HOST:]PORT`: unpack what one TCP connection brings (Network.swift).
    case receive(UnpackOptions, ConnectionOptions)

    /// Pack's options, also send's; `nil` for the commands that do not pack.
    var pack: PackOptions? {
        switch self {
        case .pack(let pack), .send(let pack, _): pack
        default: nil
        }
    }

    /// Unpack's options, also receive's; `nil` for the commands that do not unpack.
    /// `index`'s options; `nil` for the other commands.
    var index: IndexOptions? {
        if case .index(let index) = self { index } else { nil }
    }

    var unpack: UnpackOptions? {
        switch self {
        case .unpack(let unpack), .receive(let unpack, _): unpack
        default: nil
        }
    }

    /// Where pack's and unpack's data goes (also send's and receive's); `nil` for test, list
    /// and index, which write no data.
    var output: OutputOptions? { pack?.output ?? unpack?.output }

    /// How unpack, test and list decode (also receive); `nil` for pack and index.
    var decode: DecodeOptions? {
        switch self {
        case .unpack(let unpack), .receive(let unpack, _): unpack.decode
        case .test(let test): test.decode
        case .list(let list): list.decode
        case .pack, .index, .send: nil
        }
    }

    /// `-o PATH` as given, of the commands that take it: pack's and unpack's output file (or
    /// directory), or index's index file; `nil` without `-o`, with `-o -` (standard output),
    /// and for test and list.
    var outputPath: Pathname? {
        if case .index(let index) = self { return index.outputPath }
        return output?.outputPath
    }

    /// `unpack`/`test --index PATH`: the index to read the one FILE through; `nil` without it
    /// and for the other commands.
    var indexPath: Pathname? {
        switch self {
        case .unpack(let unpack): unpack.indexPath
        case .test(let test): test.indexPath
        default: nil
        }
    }

    /// `-r`/`--recursive` (pack, unpack, test and list): walk the directories named, taking
    /// the regular files in them (links not followed); `false` for the other commands.
    var recursive: Bool {
        switch self {
        case .pack(let pack): pack.recursive
        case .unpack(let unpack): unpack.recursive
        case .test(let test): test.recursive
        case .list(let list): list.recursive
        case .index, .send, .receive: false
        }
    }
}

/// Where pack's and unpack's data goes: `-c`, `-o` and `--rm`.
struct OutputOptions: Equatable {
    /// `-c`/`--stdout`/`--to-stdout`, or `-o -`: the data goes to standard output. receive
    /// without `-o` writes there too.
    var toStandardOutput = false
    /// `-o PATH`: the output file, or an existing directory to write each output in; `nil`
    /// writes each beside its input.
    var outputPath: Pathname?
    /// `--rm` (the last of it and `-k`), or gzip mode's default: each input is removed once
    /// its output is in place.
    var removeInput = false
}

/// How unpack, test and list decode: `--max-output` and `--strict`.
struct DecodeOptions: Equatable {
    /// `--max-output SIZE`: the most plain bytes one input may decode to, in bytes; `nil` is
    /// no limit.
    var maximumOutputSize: Int?
    /// `--strict`: decode with zlib only, so that what zlib rejects fails
    /// (``Command/inflaterChoice``); what `test` and `list` always do.
    var strict = false
}

/// `pack`'s own options (also send's).
struct PackOptions: Equatable {
    /// `-c`, `-o`, `--rm`.
    var output = OutputOptions()
    /// `-r`: walk the directories named.
    var recursive = false
    /// `--progress` (`true`) / `--no-progress` (`false`), the last given; `nil` shows progress
    /// when standard error is a terminal and `-q` is not given (ProgressReporter.swift).
    var progress: Bool?
    /// `-b`/`--block-size`: plain bytes per independently deflated block; `nil` is the
    /// engine's (1 MiB chunks; pigz's 128 KiB for zlib). The output depends on this, the engine
    /// and the level, never on the thread count. Never given with ``bgzf``.
    var blockSize: Int?
    /// `--engine NAME`: how to deflate; `nil` is ``DeflateEngine/chunks``. Never given with ``bgzf``.
    var engine: DeflateEngine?
    /// `--rsyncable`: chunk boundaries chosen from the content. Never given with ``bgzf``.
    var rsyncable = false
    /// `--bgzf`: pack as BGZF (SAM/BAM specification §4.1) instead of one member.
    var bgzf = false
    /// `--index`: write an index beside the output: bgzip's `.gzi` with `--bgzf`, else
    /// indexed_gzip's GZIDX (`.gzidx`) with an access point at each chunk.
    var writeIndex = false
    /// `--tar`: the operands are files and directories written as one tar archive into the
    /// output (TarPacking.swift), with how its metadata is stored; `nil` packs each file.
    var tar: TarPackOptions?

    /// The suffix of the index `--index` writes beside the output: bgzip's `.gzi` with
    /// `--bgzf`, else indexed_gzip's `.gzidx`.
    var indexSuffix: Pathname { bgzf ? ".gzi" : ".gzidx" }
}

/// `pack --tar`'s own options: how member metadata is stored (`--mtime`, `--owner`,
/// `--group`, `--numeric-owner`), for archives that do not depend on who made them or when.
struct TarPackOptions: Equatable {
    var archiver = DirectoryArchiver.Options()
}

/// `unpack`'s own options (also receive's).
struct UnpackOptions: Equatable {
    /// `-c`, `-o`, `--rm`.
    var output = OutputOptions()
    /// `--max-output`, `--strict`.
    var decode = DecodeOptions()
    /// `-r`: walk the directories named.
    var recursive = false
    /// `--progress` / `--no-progress`, as ``PackOptions/progress``.
    var progress: Bool?
    /// `--index PATH`: the index to read the one FILE through (GZIDX, gztool's or bgzip's
    /// `.gzi`), instead of the one found beside it.
    var indexPath: Pathname?
    /// `--write-index`: write `FILE.gzidx` beside each FILE from the decode itself.
    var writesIndex = false
    /// `--offset N` and `--length M`: the plain bytes to write; `nil` writes them all.
    var range: PlainRange?
    /// `--whole-lines`: of ``range``, write the lines that start in it, whole (LineSplits.swift).
    var wholeLines = false
    /// `--lines N[:M]`: the lines to write; `nil` writes them all.
    var lines: LineRange?
    /// `--extract`, `-C DIR`, or MEMBER names after a `.tar.gz`: extract members of the one
    /// FILE, a tar archive, instead of decompressing it (TarExtraction.swift); `nil` otherwise.
    var tar: TarExtractionOptions?
}

/// `unpack ARCHIVE MEMBER...`, `unpack -c ARCHIVE MEMBER`, `unpack --extract ARCHIVE`: which
/// members of the tar archive (the one FILE) go where.
struct TarExtractionOptions: Equatable {
    /// The MEMBER names (each a member, or a directory whose members are all wanted); empty
    /// with ``wholeArchive``.
    var members: [Pathname] = []
    /// `--extract`: every member.
    var wholeArchive = false
    /// `-C DIR`/`--directory DIR`: where the members go; `nil` is the current directory.
    var directory: Pathname?
    /// `-c`: the one member's content goes to standard output; nothing is extracted.
    var toStandardOutput = false
    /// `--links-outside`: symbolic links whose targets are absolute or climb out of the
    /// destination are made as stored (as GNU tar does) instead of refused; gzstream itself
    /// still never follows a link while extracting.
    var allowsLinksOutside = false
    /// `--same-owner`: as root, each file, directory and symbolic link extracted gets the
    /// owner and group IDs stored in its header (numeric; the names stored are not looked up,
    /// as `tar --numeric-owner`); refused when not root. Default (`--no-same-owner`): what is
    /// extracted belongs to whoever runs gzstream, root included.
    var preservesOwner = false

    /// Whether `name` names a compressed tar archive by its suffix: `.tar.gz` or `.tgz`, in
    /// any case, as tar and gzip name them.
    static func namesTarArchive(_ name: Pathname) -> Bool {
        name.hasSuffixIgnoringCase(".tar.gz") || name.hasSuffixIgnoringCase(".tgz")
    }
}

/// `unpack --offset N --length M`: a range of the plain bytes, read through an index when
/// there is one (BlockedUnpack.swift, IndexedUnpack.swift).
struct PlainRange: Equatable {
    /// `--offset N`: the first plain byte to write, in bytes from the start; 0 without it.
    var offset: Int64 = 0
    /// `--length M`: the most plain bytes to write from ``offset``; `nil` writes to the end.
    var length: Int64?
}

/// `test`'s own options.
struct TestOptions: Equatable {
    /// `--max-output`, `--strict`.
    var decode = DecodeOptions()
    /// `-r`: walk the directories named.
    var recursive = false
    /// `--progress` / `--no-progress`, as ``PackOptions/progress``.
    var progress: Bool?
    /// `--index PATH`: the index to read the one FILE through, as ``UnpackOptions/indexPath``.
    var indexPath: Pathname?
    /// `--write-index`, as ``UnpackOptions/writesIndex``.
    var writesIndex = false
}

/// `list`'s own options.
struct ListOptions: Equatable {
    /// `--max-output`, `--strict`.
    var decode = DecodeOptions()
    /// `-r`: walk the directories named.
    var recursive = false
    /// `--json`: machine-readable output instead of the table.
    var json = false
    /// `--members`: list the members of the one tar archive FILE (TarListing.swift); the
    /// operands after it are patterns that choose members.
    var members = false
}

/// `index`'s own options.
struct IndexOptions: Equatable {
    /// `-o PATH`: where the index of the one FILE goes; `nil` writes `FILE.gzi` (BGZF) or
    /// `FILE.gzidx` beside each FILE.
    var outputPath: Pathname?
    /// `--span SIZE`: the plain bytes between GZIDX access points; `nil` is
    /// ``GzipIndexBuilder/defaultSpan``. BGZF files get bgzip's `.gzi`, which has no span.
    var span: Int?
    /// `--strict`: build a GZIDX index with zlib (zlib's verdict, as `test`; a point at the
    /// first block boundary after each span) instead of ISA-L (``Command/inflaterChoice``).
    var strict = false
    /// `--plan SIZE`: write no index; print splits of about SIZE plain bytes, each starting at
    /// an access point of the index beside each FILE (LineSplits.swift).
    var plan: Int64?
    /// `--json` with `--plan`: one JSON object per FILE instead of lines of text.
    var json = false
    /// Whether a tar archive's member index (`FILE.tarix`) is written too; `--no-tar` turns it off.
    var indexesTarMembers = true
}

/// What send and receive take beyond pack's and unpack's options: the endpoint and the limits
/// and key of the one TCP connection.
struct ConnectionOptions: Equatable {
    /// send's `HOST:PORT`, receive's `[HOST:]PORT`: the first operand.
    var address: NetworkAddress
    /// `--timeout SECONDS`: the longest wait to connect or to be connected to, and for each
    /// read or write on the connection to move a byte; `nil` sets no limit of its own.
    var timeout: Duration?
    /// `--deadline DURATION`: the longest a whole transfer may take, from connecting (send) or
    /// accepting (receive) to the acknowledgement; `nil` is no limit.
    var deadline: DeadlineOption?
    /// `--key-file FILE`: the pre-shared key; the data is then encrypted and authenticated,
    /// bound to receive's challenge. `nil` sends plain gzip.
    var keyFile: String?
}

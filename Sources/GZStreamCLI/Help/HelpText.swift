import GzipStreams
import RatarmountIndexes
import SecretStreams

/// The program's version: a copy of the top-level `VERSION` file, the one place the version is
/// changed. A literal, so that `swift build` alone compiles the right value without a build
/// plugin or a generated file; `make version-check` (run by `make build`, `make install` and
/// `make deb`) and the tests (`HelpCLITests`) fail when the two differ.
let toolVersion = "0.1.0"

/// What `-V` and `--version` print: the program's version on the first line, as `gzip -V` and
/// `pigz -V` print theirs, then each C library the binary calls with its version, one a line.
let versionText = """
gzstream \(toolVersion)
zlib \(zlibRuntimeVersion)
libdeflate \(libdeflateVersion)
ISA-L \(isalVersion)
libsodium \(libsodiumVersion)
SQLite \(sqliteVersion)

"""

/// What `-L` and `--license` print, in the shape of GNU gzip's `-L`.
let licenseText = """
gzstream \(toolVersion)
This is free software: you may redistribute copies of it under the terms of
the Apache License, Version 2.0 <https://www.apache.org/licenses/LICENSE-2.0>.
There is NO WARRANTY, to the extent permitted by law.

"""

/// The help texts there are: the program's map, gzip mode's, and one per command.
enum HelpTopic: String, CaseIterable {
    case overview, gzip, pack, unpack, test, list, index, send, receive, cache

    var text: String {
        switch self {
        case .overview: overviewHelpText
        case .gzip: gzipHelpText
        case .pack: packHelpText
        case .unpack: unpackHelpText
        case .test: testHelpText
        case .list: listHelpText
        case .index: indexHelpText
        case .send: sendHelpText
        case .receive: receiveHelpText
        case .cache: cacheHelpText
        }
    }

    /// ``text`` as the program prints it when called as `program` (`gzip`, `gunzip`, `zcat`
    /// through a link): gzip mode's usage line names the program as it was called, as GNU
    /// gzip's does (`Usage: gunzip [OPTION]... [FILE]...`); the commands' help is gzstream's.
    func text(calledAs program: String) -> String {
        let usage = "Usage: gzstream "
        guard self == .gzip, text.hasPrefix(usage) else { return text }
        return "Usage: \(program) " + text.dropFirst(usage.count)
    }
}

/// `gzstream help [TOPIC]`: the map, or a command's help (`gzip` is gzip mode's).
/// - Throws: ``UsageError`` for a topic that is no command, or more than one.
func parseHelpRequest(_ arguments: ArraySlice<[UInt8]>) throws(UsageError) -> ParsedCommand {
    guard let raw = arguments.first else { return .help(.overview) }
    let name = String(decoding: raw, as: UTF8.self)
    guard arguments.count == 1, let topic = HelpTopic(rawValue: name), topic != .overview else {
        let words = HelpTopic.allCases.dropFirst().map(\.rawValue).joined(separator: ", ")
        throw UsageError(message: arguments.count > 1 ? "help takes one COMMAND"
                         : "no help for '\(escapingControlCharacters(name))' (COMMAND: \(words))")
    }
    return .help(topic)
}

/// The program's help: a map of the commands, where each one's help is, and the options that
/// every command takes.
let overviewHelpText = """
gzstream \(toolVersion): streaming gzip (RFC 1952) in constant memory.

Usage: gzstream COMMAND [OPTIONS] [ARGS]
       gzstream [OPTIONS] [FILE ...]          as GNU gzip (gzip mode)

Commands:
  pack      compress each FILE to FILE.gz
  unpack    decompress each FILE.gz (or .tgz) to FILE (.tar)
  test      decode and check every member; write nothing
  list      one row per member: offset, header, sizes, CRC-32
  index     write FILE.gz.gzidx beside FILE.gz, or FILE.gz.gzi for BGZF
  send      pack FILE onto a TCP connection to HOST:PORT
  receive   take one TCP connection and unpack it
  cache     a cache of streams on disk: put, get, list, remove, clear, prune
  help      show a command's help: gzstream help COMMAND (or COMMAND --help)

The commands keep their inputs unless --rm is given; with no FILE, or when FILE
is -, they read standard input and write standard output.

Without a command, and when called as gzip, gunzip or zcat, gzstream runs as
GNU gzip: each FILE is compressed to FILE.gz and removed; -d decompresses, -t
tests, -l lists. Its options: gzstream help gzip. A file named like a command is
given as ./pack.

Options of every command:
\(quietVerboseEntries)
  -h, --help            show this help, or with a command that command's help
  -V, --version         show the version and the libraries' versions
  -L, --license         show the licence

More in the manual: man gzstream.

\(exitStatusLines)
"""

/// The exit status, as every help but the cache's ends.
let exitStatusLines = """
Exit status: 0 success, 1 error, 2 warning (for example trailing garbage after
the last member, which is ignored once the data before it has been written).

"""

// Option entries that several helps show in the same words.

let quietVerboseEntries = """
  -q, --quiet           no warnings, and no progress unless --progress is given
  -v, --verbose         one line per file on standard error: sizes, space saved
"""

let progressEntries = """
      --progress        show progress on standard error (bytes in and out, rate,
                        percent and time left), also when it is not a terminal
      --no-progress     do not; by default it is shown when standard error is a
                        terminal, once a job has run for a second (not when the
                        output goes there too, nor in gzip mode)
"""

let stdoutOutputEntries = """
  -c, --stdout          write to standard output, keep the input files
  -o, --output PATH     write to PATH (one input; - is standard output); into a
                        directory PATH, each output under its default name
"""

let recursiveEntry = """
  -r, --recursive       walk the directories named: each regular file in them
                        (symbolic links not followed); without -r one is skipped
"""

let levelEntries = """
  -0 ... -9             compression level: -1 fastest, -9 best, -0 stored
                        (default 6); also -10 ... -12: smaller than -9, slower
      --fast, --best    the same as -1 and -9
      --level N         compression level 0 to 12 (0 stores without compressing)
"""

let packEngineEntries = """
  -p, --threads N       deflate on N threads (default: every core available)
  -b, --block-size N    N KiB of input per parallel chunk, as pigz's -b (default
                        1024; with --engine zlib, per block: default 128), or a
                        SIZE with a unit (1M, 0x8000); the output depends on
                        the level and the block size only
      --engine NAME     chunks (default: libdeflate or ISA-L, about twice zlib's
                        speed), or zlib (pigz's design; levels 0 to 9 only)
      --rsyncable       chunk boundaries chosen from the content, so that rsync
                        and backups find what an edit did not change (as gzip's)
      --bgzf            BGZF (blocked gzip, as bgzip): members of at most 64 KiB
                        deflated by libdeflate on -p N threads; no name or time
"""

let chunkSizeEntry = """
      --chunk-size SIZE bytes per read and per write, at most (default 4096, up
                        to 64M); unpack writes 128K unless given
"""

let maximumOutputEntry = """
      --max-output SIZE stop with an error past SIZE decompressed bytes
"""

let keepOrRemoveEntries = """
      --synchronous     fsync each output file and its directory once it is in
                        place, before the input is removed (safer; slower)
      --rm              remove each input after it was processed without error
  -k, --keep            keep the inputs (the commands' default)
"""

let networkEntries = """
      --timeout SECONDS give up (exit 1, "timed out") when connecting, waiting
                        for the connection, or a read or write takes that long
      --deadline TIME   give up (exit 1) when the whole transfer takes longer,
                        from connecting or accepting to the acknowledgement
                        (seconds, fractions allowed, or s, m, h: 0.5, 15m, 2h)
      --key-file FILE   encrypt and authenticate with the 32 raw bytes in FILE
                        (the cache's format); give both sides the same key
"""

let helpEntry = "  -h, --help            show this help"

/// How a SIZE is written (SizeGrammar.swift), as every help with a SIZE ends.
let sizeLines = """
A SIZE is bytes (4096, 0x1000), or a number and a unit: K, M, G, T, P or KiB,
MiB, ... (powers of 1024), KB, MB, ... (powers of 1000), B (bytes); fractions
are allowed and rounded down to a byte (1.5G, 700MB).

"""

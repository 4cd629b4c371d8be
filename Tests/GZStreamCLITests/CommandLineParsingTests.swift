import ByteStreams
@testable import GZStreamCLI
import Testing

// The command line's usage errors, parsed in this process by the parse that `runCommand` runs
// first (`parseArguments`), compared with the exact text standard error shows. A usage error
// touches nothing and always exits 1 (CommandRunner.swift), so what a spawned binary adds is
// checked once per command by the end-to-end tests of each suite.

/// What standard error shows when `arguments` are refused, signed `programName`; `nil` when
/// they parse.
func refusal(_ arguments: [String], programName: String = "gzstream") -> String? {
    do {
        _ = try parseArguments(arguments.map { Array($0.utf8) }, programName: Pathname(bytes: Array(programName.utf8))!,
                               gzipVariable: nil, warn: { _ in })
        return nil
    } catch {
        return error.text(signedBy: programName)
    }
}

@Suite("Parsing the command line in-process: each usage error's message and usage line")
struct CommandLineParsingTests {
    @Test("options and values: getopt's words, each value's range", arguments: [
        (["-x", "a"], "invalid option -- 'x'"),
        (["pack", "-d", "a"], "invalid option -- 'd'"),
        (["unpack", "--test", "a"], "unrecognized option '--test'"),
        (["unpack", "--test=1", "a"], "unrecognized option '--test=1'"),
        (["pack", "-x", "a"], "invalid option -- 'x'"),
        (["unpack", "--bogus"], "unrecognized option '--bogus'"),
        (["--bogus", "-h"], "unrecognized option '--bogus'"),
        (["pack", "--level", "13"], "compression level must be 0 to 12, not '13'"),
        (["pack", "--level=fast"], "compression level must be 0 to 12, not 'fast'"),
        (["pack", "-o"], "option requires an argument -- 'o'"),
        (["pack", "--level"], "option '--level' requires an argument"),
        (["unpack", "--max-output"], "option '--max-output' requires an argument"),
        (["pack", "--chunk-size", "0"], "--chunk-size must be 1 to 67108864 bytes, not '0'"),
        (["pack", "--chunk-size", "65M"], "--chunk-size must be 1 to 67108864 bytes, not '65M'"),
        (["pack", "--chunk-size", "lots"], "--chunk-size takes a size: bytes (4096, 0x1000), or a number and a unit: K, M, G, T, P "
            + "or KiB, MiB, ... (powers of 1024), KB, MB, ... (powers of 1000), B (bytes), fractions allowed (1.5G); not 'lots'"),
        (["pack", "--stdout=yes"], "option '--stdout' doesn't allow an argument"),
        (["pack", "--bgzf=yes", "a"], "option '--bgzf' doesn't allow an argument"),
        (["pack", "-c", "--engine", "pigz"], "--engine takes 'chunks' or 'zlib', not 'pigz'"),
        (["pack", "-c", "-13"], "compression level must be 0 to 12, not '13'"),
        (["pack", "-c", "--level=100"], "compression level must be 0 to 12, not '100'"),
        (["pack", "-c", "-p", "0"], "thread count must be 1 to 256, not '0'"),
        (["pack", "-c", "--threads", "x"], "thread count must be 1 to 256, not 'x'"),
        (["pack", "-c", "-b", "16"], "block size must be 32K to 64M (a number alone counts KiB), not '16'"),
        (["pack", "-c", "--block-size", "1G"], "block size must be 32K to 64M (a number alone counts KiB), not '1G'"),
        (["index", "--span", "31K", "a"], "span must be 32K to 4G - 1 (a number alone counts KiB), not '31K'"),
        (["index", "--span", "4G", "a"], "span must be 32K to 4G - 1 (a number alone counts KiB), not '4G'"),
        (["send", "--timeout", "0", "localhost:1"], "--timeout takes seconds, more than 0 (such as 30 or 0.5), not '0'"),
        (["send", "--timeout=soon", "localhost:1"], "--timeout takes seconds, more than 0 (such as 30 or 0.5), not 'soon'"),
        (["send", "--deadline", "0", "localhost:1"], "--deadline takes a duration, more than 0 (such as 90, 0.5, 15m or 2h), not '0'"),
        (["receive", "--deadline=soon", "0"], "--deadline takes a duration, more than 0 (such as 90, 0.5, 15m or 2h), not 'soon'"),
        (["receive", "--deadline", "1x", "0"], "--deadline takes a duration, more than 0 (such as 90, 0.5, 15m or 2h), not '1x'"),
        (["send", "--key-file", "", "localhost:1"], "--key-file needs a file name"),
        (["help", "nope"], "no help for 'nope' (COMMAND: gzip, pack, unpack, test, list, index, send, receive, cache)"),
        (["help", "pack", "unpack"], "help takes one COMMAND"),
        (["help", "overview"], "no help for 'overview' (COMMAND: gzip, pack, unpack, test, list, index, send, receive, cache)"),
    ] as [([String], String)])
    func values(arguments: [String], message: String) {
        #expect(refusal(arguments) == "gzstream: \(message)\n" + tryHelpLine)
    }

    @Test("an option the command does not take: the command's words", arguments: [
        (["-t", "-o", "x", "a"], "test writes no output: -c, -o and --rm do not apply"),
        (["test", "-c", "a.gz"], "test writes no output: -c, -o and --rm do not apply"),
        (["list", "-o", "x", "a.gz"], "list writes no output: -c, -o and --rm do not apply"),
        (["test", "--rm", "a.gz"], "test writes no output: -c, -o and --rm do not apply"),
        (["index", "-r", "a"], "-r applies to pack, unpack, test and list"),
        (["index", "-c", "a"], "index writes its index beside each FILE (or to -o PATH): -c, --rm and --max-output do not apply"),
        (["index", "--rm", "a"], "index writes its index beside each FILE (or to -o PATH): -c, --rm and --max-output do not apply"),
        (["index", "--max-output", "1", "a"],
         "index writes its index beside each FILE (or to -o PATH): -c, --rm and --max-output do not apply"),
        (["pack", "--max-output", "1K"], "--max-output applies to unpack, test and list"),
        (["send", "--max-output", "1K", "localhost:1"], "--max-output applies to unpack, test and list"),
        (["pack", "--strict", "a"], "--strict applies to unpack, test, list and index"),
        (["--strict", "a"], "--strict applies to unpack, test, list and index"),
        (["send", "--strict", "127.0.0.1:9", "a"], "--strict applies to unpack, test, list and index"),
        (["unpack", "--bgzf", "a.gz"], "--bgzf and --index apply to pack"),
        (["-d", "--bgzf", "a.gz"], "--bgzf and --index apply to pack"),
        (["list", "--index", "x", "a.gz"], "--bgzf and --index apply to pack"),
        (["pack", "--index=x", "f"], "--index PATH applies to unpack and test"),
        (["pack", "--span", "1M", "a"], "--span applies to index"),
        (["pack", "-c", "--bgzf", "--engine", "chunks"], "--engine applies to pack without --bgzf"),
        (["unpack", "-c", "--engine", "zlib"], "--engine applies to pack without --bgzf"),
        (["pack", "-c", "--bgzf", "--rsyncable"], "--rsyncable applies to pack without --bgzf"),
        (["unpack", "-c", "--rsyncable"], "--rsyncable applies to pack without --bgzf"),
        (["pack", "--bgzf", "-b", "64"], "--block-size applies to pack without --bgzf (BGZF members hold 65280 bytes)"),
        (["unpack", "-b", "64"], "--block-size applies to pack without --bgzf (BGZF members hold 65280 bytes)"),
        (["test", "--block-size=1M"], "--block-size applies to pack without --bgzf (BGZF members hold 65280 bytes)"),
        (["test", "--offset", "1", "a.gz"], "--offset and --length apply to unpack"),
        (["list", "--progress", "a.gz"], "--progress and --no-progress apply to pack, unpack and test"),
        (["index", "--no-progress", "a.gz"], "--progress and --no-progress apply to pack, unpack and test"),
        (["unpack", "--json", "a.gz"], "--json applies to list and index --plan"),
        (["test", "--json", "a.gz"], "--json applies to list and index --plan"),
        (["unpack", "--timeout", "1"], "--timeout applies to send and receive"),
        (["unpack", "--deadline", "1"], "--deadline applies to send and receive"),
        (["pack", "--key-file", "k"], "--key-file applies to send, receive and cache"),
        (["send", "-o", "x", "localhost:1"], "send writes to its connection: -c, -o, -r, -S, -f, -k, --rm and --index do not apply"),
        (["receive", "--rm", "0"], "receive reads one connection: -r, -S, -k, --rm, -N, --offset and --length do not apply"),
        // Of several, the one always named first.
        (["pack", "--json", "--max-output", "5", "x"], "--max-output applies to unpack, test and list"),
        (["list", "--index", "-c", "a.gz"], "list writes no output: -c, -o and --rm do not apply"),
        (["-t", "--bgzf", "--index", "-o", "o", "a.gz"], "test writes no output: -c, -o and --rm do not apply"),
        (["test", "--json", "-c", "a.gz"], "test writes no output: -c, -o and --rm do not apply"),
        (["index", "-c", "--strict", "a"], "index writes its index beside each FILE (or to -o PATH): -c, --rm and --max-output do not apply"),
    ] as [([String], String)])
    func notTaken(arguments: [String], message: String) {
        #expect(refusal(arguments) == "gzstream: \(message)\n" + tryHelpLine)
    }

    @Test("gzip mode takes -c with -t and -l, and the options that tune compression with -d, -t and -l, and ignores them",
          arguments: [["-t", "-c", "a.gz"], ["-l", "--stdout", "a.gz"], ["-d", "--rsyncable", "a.gz"],
                      ["-t", "-b", "64", "a.gz"], ["-d", "--engine", "zlib", "a.gz"], ["-l", "--json", "a.gz"]])
    func gzipModeIgnores(arguments: [String]) {
        #expect(refusal(arguments) == nil)
    }

    @Test("the last of --rm and -k counts: a --rm that -k follows was not given",
          arguments: [["test", "--rm", "-k", "a.gz"], ["index", "--rm", "--keep", "a.gz"], ["-t", "--rm", "-k", "a.gz"],
                      ["list", "--rm", "-vk", "a.gz"]])
    func keepAfterRemove(arguments: [String]) {
        #expect(refusal(arguments) == nil)
    }

    @Test("rules between options", arguments: [
        (["pack", "-o", "out.gz", "a", "b"], "-o takes one input file, or an existing directory for several"),
        (["pack", "-r", "-o", "out.gz", "a"], "-r writes each output beside its input: -o does not apply"),
        (["pack", "-c", "-o", "out.gz", "a"], "-o and -c cannot be used together"),
        (["pack", "-o", "", "a"], "-o needs a path, not an empty one"),
        (["pack", "--bgzf", "--index", "-c", "a"], "--index needs an output file (not standard output)"),
        (["pack", "--bgzf", "--index"], "--index needs an output file (not standard output)"),
        (["pack", "--bgzf", "--index", "-o", "-", "a"], "--index needs an output file (not standard output)"),
        // Standard input among the files goes to standard output, where no index can go.
        (["pack", "--bgzf", "--index", "a", "-"], "--index needs an output file (not standard output)"),
        (["pack", "-c", "--index"], "--index needs an output file (not standard output)"),
        (["pack", "-c", "-10", "--engine", "zlib"], "levels 10 to 12 need the chunks engine, not --engine zlib"),
        (["pack", "-c", "--engine", "zlib", "--rsyncable"], "--rsyncable needs the chunks engine, not --engine zlib"),
        (["pack", "--index", "--engine", "zlib", "-o", "x.gz"],
         "--index needs the chunks engine (its chunks are the access points), not --engine zlib"),
        (["unpack", "--index", "x", "-c", "a", "b"], "--index PATH needs one FILE (the index is that file's)"),
        (["index", "-o", "x", "data.gz", "data.gz"], "index -o PATH needs one FILE (the index is that file's)"),
        (["index", "-o", "x", "-"], "index -o PATH needs one FILE (the index is that file's)"),
        (["index", "-o", "-", "data.gz"], "index -o needs a file's path (the index is not written to standard output)"),
        (["index", "-o", "", "data.gz"], "index -o needs a file's path (the index is not written to standard output)"),
        (["index"], "index needs a FILE"),
    ] as [([String], String)])
    func rules(arguments: [String], message: String) {
        #expect(refusal(arguments) == "gzstream: \(message)\n" + tryHelpLine)
    }

    @Test("send's and receive's operands", arguments: [
        (["send"], "send needs HOST:PORT"),
        (["receive"], "receive needs [HOST:]PORT"),
        (["send", "localhost"], "send needs HOST:PORT, not 'localhost': no ':PORT'"),
        (["send", "::1:8734"], "send needs HOST:PORT, not '::1:8734': an IPv6 address goes in brackets, as [::1]:8734"),
        (["send", "[::1:8734"], "send needs HOST:PORT, not '[::1:8734': no ']' after the IPv6 address"),
        (["send", "[::1]8734"], "send needs HOST:PORT, not '[::1]8734': no ':PORT' after ']'"),
        (["send", ":8734"], "send needs HOST:PORT, not ':8734': the host is empty"),
        (["send", "localhost:0"], "send needs HOST:PORT, not 'localhost:0': the port must be 1 to 65535"),
        (["receive", "65536"], "receive needs [HOST:]PORT, not '65536': the port must be 0 to 65535"),
        (["receive", "localhost:http"], "receive needs [HOST:]PORT, not 'localhost:http': the port must be 0 to 65535"),
        (["receive", "0", "file"], "receive takes no FILE (write one with -o FILE)"),
        (["send", "localhost:1", "a", "b"], "send takes one FILE at most"),
    ] as [([String], String)])
    func networkOperands(arguments: [String], message: String) {
        #expect(refusal(arguments) == "gzstream: \(message)\n" + tryHelpLine)
    }

    @Test("cache: every error points to the cache's help", arguments: [
        ([], "cache needs a command: put, get, list, remove, clear or prune"),
        (["bogus"], "unknown cache command 'bogus' (put, get, list, remove, clear or prune)"),
        (["put"], "cache put needs a KEY"),
        (["put", ""], "a cache KEY cannot be empty"),
        (["put", "k", "a", "b"], "cache put takes a KEY and at most one FILE"),
        (["get", "k", "a"], "cache get takes one KEY (write a file with -o FILE)"),
        (["remove"], "cache remove needs a KEY"),
        (["remove", "k", "a"], "cache remove takes one KEY"),
        (["list", "x"], "cache list takes no KEY or FILE"),
        (["clear", "x"], "cache clear takes no KEY or FILE"),
        (["list", "-o", "x"], "-o applies to cache get"),
        (["put", "k", "-f"], "-f applies to cache get and remove"),
        (["clear", "--force"], "-f applies to cache get and remove"),
        (["get", "k", "--json"], "--json applies to cache list"),
        (["list", "-f", "-o", "x"], "-o applies to cache get"),
        (["get", "k", "-o", ""], "-o needs a path, not an empty one"),
        (["list", "--max-size", "1Q"], "--max-size takes a size: bytes (4096, 0x1000), or a number and a unit: K, M, G, T, P "
            + "or KiB, MiB, ... (powers of 1024), KB, MB, ... (powers of 1000), B (bytes), fractions allowed (1.5G); not '1Q'"),
        (["list", "--max-size", "-1"], "--max-size takes a size: bytes (4096, 0x1000), or a number and a unit: K, M, G, T, P "
            + "or KiB, MiB, ... (powers of 1024), KB, MB, ... (powers of 1000), B (bytes), fractions allowed (1.5G); not '-1'"),
        (["list", "--max-size", "9999999T"], "--max-size must be 0 to 9223372036854775807 bytes, not '9999999T'"),
        (["prune", "--max-age", "0"], "--max-age must be more than 0, not '0'"),
        (["prune", "--max-age=0d"], "--max-age must be more than 0, not '0d'"),
        (["prune", "--max-age", "1w"], "--max-age takes seconds (s, m, h, d suffixes), not '1w'"),
        (["prune", "--max-age", "d"], "--max-age takes seconds (s, m, h, d suffixes), not 'd'"),
        (["prune", "--max-age", "99999999999d"], "--max-age must be at most 3650000d, not '99999999999d'"),
        (["put", "k", "--level", "13"], "compression level must be 0 to 12, not '13'"),
        (["list", "--dir"], "option '--dir' requires an argument"),
        (["list", "--dir="], "--dir needs a path, not an empty one"),
        (["list", "--key-file"], "option '--key-file' requires an argument"),
        (["list", "--json=yes"], "option '--json' doesn't allow an argument"),
        (["list", "-x"], "invalid option -- 'x'"),
        (["list", "--bogus"], "unrecognized option '--bogus'"),
    ] as [([String], String)])
    func cache(arguments: [String], message: String) {
        #expect(refusal(["cache", "--dir", "c"] + arguments) == "gzstream: \(message)\n" + cacheTryHelpLine)
    }

    @Test("signed with the name the program was called by", arguments: ["gzstream", "gz", "zcat", "gzip"])
    func signature(programName: String) {
        #expect(refusal(["-x"], programName: programName)
            == "\(programName): invalid option -- 'x'\nTry '\(programName) --help' for more information.\n")
    }
}

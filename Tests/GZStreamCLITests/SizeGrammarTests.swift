import ByteStreams
@testable import GZStreamCLI
import Testing

// Every size option reads one grammar (SizeGrammar.swift), parsed here in this process: each
// form and its bytes, each refusal's exact text, and --span's deprecated number alone. What the
// sizes then do is checked end to end in SizeOptionCLITests. Before this grammar, `1.5G`,
// `700MB`, `0x1000` and `1MiB` were refused, and `KB` was not told from `K`.

/// What parsing `arguments` returns, with the warnings it gave.
private func parsed(_ arguments: [String]) throws -> (command: ParsedCommand, warnings: [String]) {
    var warnings: [String] = []
    let command = try parseCommandLine(arguments.map { Array($0.utf8) }, warn: { warnings.append($0) })
    return (command, warnings)
}

/// The bytes `option` was given in `command`, however that command holds them.
private func size(of option: String, in command: ParsedCommand) -> Int? {
    switch command {
    case .cache(let cache): return cache.maximumSize.map(Int.init)
    case .run(let run):
        switch option {
        case "--offset": return run.command.unpack?.range.map { Int($0.offset) }
        case "--length": return run.command.unpack?.range?.length.map(Int.init)
        case "--max-output": return run.command.decode?.maximumOutputSize
        case "--chunk-size": return run.common.chunkSize
        case "-b", "--block-size", "--blocksize": return run.command.pack?.blockSize
        case "--span":
            guard case .index(let index) = run.command else { return nil }
            return index.span
        default: return nil
        }
    default: return nil
    }
}

/// The forms every size takes, as the usage error lists them, for `option` refusing `text`.
func sizeFormsRefusal(_ option: String, _ text: String, numberAlone: String = "bytes (4096, 0x1000)") -> String {
    "gzstream: \(option) takes a size: \(numberAlone), or a number and a unit: K, M, G, T, P or KiB, MiB, ... "
        + "(powers of 1024), KB, MB, ... (powers of 1000), B (bytes), fractions allowed (1.5G); not '\(text)'\n"
        + "Try 'gzstream --help' for more information.\n"
}

@Suite("Sizes: one grammar for every size option")
struct SizeGrammarTests {
    @Test("each form of a size, and its bytes", arguments: [
        ("0", 0), ("1", 1), ("4096", 4096), ("007", 7), ("9223372036854775807", Int.max),
        ("0x1000", 4096), ("0X1f", 31), ("0x0", 0), ("0x7fffffffffffffff", Int.max),
        ("1K", 1024), ("1k", 1024), ("1KiB", 1024), ("1kib", 1024), ("1Ki", 1024), ("1KB", 1000), ("1kb", 1000),
        ("1M", 1 << 20), ("1MiB", 1 << 20), ("700MB", 700_000_000), ("1G", 1 << 30), ("1GB", 1_000_000_000),
        ("1T", 1 << 40), ("1TB", 1_000_000_000_000), ("1P", 1 << 50), ("1PiB", 1 << 50), ("1PB", 1_000_000_000_000_000),
        ("8191P", 8191 << 50), ("4096B", 4096), ("1b", 1),
        ("1.5K", 1536), ("1.5G", 3 << 29), ("2.75MiB", 2_883_584), ("1.5MB", 1_500_000), ("0.5K", 512),
        // A fraction of a byte is dropped: 1.1K is 1126.4 bytes, 0.5 half of one.
        ("1.1K", 1126), ("0.5", 0), ("1.999999999999999999999999999", 1), ("0.0009765625K", 1), ("0.0009765624K", 0),
    ] as [(String, Int)])
    func accepted(text: String, bytes: Int) throws {
        let (command, warnings) = try parsed(["unpack", "-c", "--offset", text, "a.gz"])
        #expect(size(of: "--offset", in: command) == bytes)
        #expect(warnings == [])
    }

    @Test("what is not a size: one message naming the option and listing the forms", arguments: [
        "1.5X", "", "-1", "+1", " 1", "1 ", "1 K", "1e3", "1.", ".5K", "1.2.3", "K", "B", "1KK", "1iB", "1Kib ", "1KiBB",
        "0x", "0x1K", "0x1.8", "0xg", "0x-1", "x10", "inf", "nan", "1,000", "1_000", "\u{0661}", "1\u{FF2B}",
    ])
    func malformed(text: String) throws {
        #expect(refusal(["unpack", "-c", "--offset", text, "a.gz"]) == sizeFormsRefusal("--offset", text))
    }

    @Test("more bytes than 2^63 - 1: the option's range", arguments: [
        "9223372036854775808", "99999999999999999999999", "8192P", "0x8000000000000000", "0x10000000000000000",
        "9223372036854775807.5K",
    ])
    func tooLarge(text: String) throws {
        #expect(refusal(["unpack", "-c", "--length", text, "a.gz"])
            == "gzstream: --length must be 0 to 9223372036854775807 bytes, not '\(text)'\n"
            + "Try 'gzstream --help' for more information.\n")
    }

    @Test("every size option reads the same grammar", arguments: [
        (["unpack", "-c", "--offset", "1.5K", "a.gz"], "--offset", 1536),
        (["unpack", "-c", "--offset", "1", "--length", "0x10", "a.gz"], "--length", 16),
        (["unpack", "-c", "--max-output", "1MB", "a.gz"], "--max-output", 1_000_000),
        (["test", "--max-output=1.5G", "a.gz"], "--max-output", 3 << 29),
        (["receive", "--max-output", "10GB", "0"], "--max-output", 10_000_000_000),
        (["pack", "-c", "--chunk-size", "0x10000", "a"], "--chunk-size", 65536),
        (["pack", "-c", "--chunk-size", "1.5KiB", "a"], "--chunk-size", 1536),
        (["pack", "-c", "--chunk-size", "1000B", "a"], "--chunk-size", 1000),
        (["pack", "-c", "--chunk-size", "64MB", "a"], "--chunk-size", 64_000_000),
        (["index", "--span", "1MiB", "a.gz"], "--span", 1 << 20),
        (["index", "--span", "1.5M", "a.gz"], "--span", 3 << 19),
        (["index", "--span", "100KB", "a.gz"], "--span", 100_000),
        (["index", "--span", "0x100000", "a.gz"], "--span", 1 << 20),
        (["index", "--span", "32768B", "a.gz"], "--span", 32768),
        (["cache", "--dir", "c", "prune", "--max-size", "1.5G"], "--max-size", 3 << 29),
        (["cache", "--dir", "c", "prune", "--max-size", "2GB"], "--max-size", 2_000_000_000),
        (["cache", "--dir", "c", "prune", "--max-size", "0x400"], "--max-size", 1024),
    ] as [([String], String, Int)])
    func everyOption(arguments: [String], option: String, bytes: Int) throws {
        let (command, warnings) = try parsed(arguments)
        #expect(size(of: option, in: command) == bytes)
        #expect(warnings == [])
    }

    @Test("-b keeps pigz's meaning: a number alone counts KiB; the other forms are sizes", arguments: [
        (["pack", "-c", "-b", "128", "a"], 128 << 10),
        (["pack", "-c", "-b", "64.5", "a"], 66048),
        (["pack", "-c", "--block-size", "1M", "a"], 1 << 20),
        (["pack", "-c", "--blocksize=1.5MiB", "a"], 3 << 19),
        (["pack", "-c", "-b", "100KB", "a"], 100_000),
        (["pack", "-c", "-b", "0x8000", "a"], 32768),
        (["pack", "-c", "-b", "32768B", "a"], 32768),
        (["-c", "-b", "256", "a"], 256 << 10),
    ] as [([String], Int)])
    func blockSize(arguments: [String], bytes: Int) throws {
        let (command, warnings) = try parsed(arguments)
        #expect(size(of: "-b", in: command) == bytes)
        #expect(warnings == [])
    }

    @Test("each option names itself in the forms it lists", arguments: [
        (["pack", "-c", "--chunk-size", "lots", "a"], sizeFormsRefusal("--chunk-size", "lots")),
        (["unpack", "-c", "--max-output", "1.5X", "a.gz"], sizeFormsRefusal("--max-output", "1.5X")),
        (["pack", "-c", "-b", "1.5X", "a"], sizeFormsRefusal("-b", "1.5X", numberAlone: "KiB (128, as pigz's -b)")),
        (["pack", "-c", "--block-size", "0x1K", "a"], sizeFormsRefusal("--block-size", "0x1K", numberAlone: "KiB (128, as pigz's -b)")),
        (["index", "--span", "1.5X", "a.gz"], sizeFormsRefusal("--span", "1.5X", numberAlone: "KiB (deprecated: write 64K)")),
        (["pack", "-c", "-b", "1.5", "a"], usageError("block size must be 32K to 64M (a number alone counts KiB), not '1.5'")),
        (["pack", "-c", "--chunk-size", "68MB", "a"], usageError("--chunk-size must be 1 to 67108864 bytes, not '68MB'")),
        (["pack", "-c", "--chunk-size", "0.5", "a"], usageError("--chunk-size must be 1 to 67108864 bytes, not '0.5'")),
        (["index", "--span", "32767B", "a.gz"], usageError("span must be 32K to 4G - 1 (a number alone counts KiB), not '32767B'")),
        (["index", "--span", "0x100000000", "a.gz"],
         usageError("span must be 32K to 4G - 1 (a number alone counts KiB), not '0x100000000'")),
    ] as [([String], String)])
    func refusals(arguments: [String], expected: String) throws {
        #expect(refusal(arguments) == expected)
    }

    @Test("cache --max-size: the forms, pointing to the cache's help")
    func cacheMaximumSize() throws {
        #expect(refusal(["cache", "--dir", "c", "prune", "--max-size", "1.5X"])
            == sizeFormsRefusal("--max-size", "1.5X").replacing("'gzstream --help'", with: "'gzstream cache --help'"))
    }

    @Test("--span with a number alone still counts KiB, and warns once, for the --span that counts", arguments: [
        (["index", "--span", "64", "a.gz"], 64 << 10, ["warning: --span 64: a number alone counts KiB (deprecated); write 64K or 64KiB"]),
        (["index", "--span=1024", "a.gz", "b.gz"], 1 << 20,
         ["warning: --span 1024: a number alone counts KiB (deprecated); write 1024K or 1024KiB"]),
        (["index", "--span", "1M", "--span", "64.5", "a.gz"], 66048,
         ["warning: --span 64.5: a number alone counts KiB (deprecated); write 64.5K or 64.5KiB"]),
        (["index", "--span", "64", "--span", "1M", "a.gz"], 1 << 20, []),
        (["index", "-q", "--span", "64", "a.gz"], 64 << 10, []),
        (["index", "--span", "64K", "a.gz"], 64 << 10, []),
    ] as [([String], Int, [String])])
    func spanNumberAlone(arguments: [String], bytes: Int, warnings expected: [String]) throws {
        let (command, warnings) = try parsed(arguments)
        #expect(size(of: "--span", in: command) == bytes)
        #expect(warnings == expected)
    }

    @Test("--span's number alone keeps its meaning: --span 100 is --span 100K, and --span 16 is below the window")
    func spanRange() throws {
        #expect(try parsed(["index", "--span", "100", "a.gz"]).command == parsed(["index", "--span", "100K", "a.gz"]).command)
        #expect(refusal(["index", "--span", "16", "a.gz"])
            == usageError("span must be 32K to 4G - 1 (a number alone counts KiB), not '16'"))
    }

    @Test("a command line refused for another reason prints its error alone, no --span warning", arguments: [
        ["pack", "--span", "64", "a"], ["index", "--span", "64", "-c", "a.gz"], ["index", "--span", "64"],
    ])
    func spanWarningOnlyWhenRun(arguments: [String]) throws {
        var warnings: [String] = []
        #expect(throws: UsageError.self) {
            try parseCommandLine(arguments.map { Array($0.utf8) }, warn: { warnings.append($0) })
        }
        #expect(warnings == [])
    }
}

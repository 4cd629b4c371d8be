import Foundation
import StreamCache
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `gzstream cache`: the real binary against a cache directory inside each test's scratch
// directory (always `--dir`, or a controlled XDG_CACHE_HOME/HOME), so the user's ~/.cache is
// never touched. Entry names come from the library (`DiskCache.entryFileName(forKey:)`), times
// are set with utimensat, and every run's standard output, standard error and status are
// compared whole.

let expectedCacheHelp = """
Usage: gzstream cache put KEY [FILE]       store FILE (- or none: standard input) under KEY
       gzstream cache get KEY [-o FILE]    write KEY's bytes to standard output, or to FILE
       gzstream cache list [--json]        one row per entry, least recently used first
       gzstream cache remove KEY [-f]      remove KEY's entry
       gzstream cache clear                remove every entry
       gzstream cache prune                apply --max-size and --max-age now

A cache of byte streams on disk: one file per entry in the cache directory, named by a hash
of its KEY (any UTF-8 text), gzip-compressed and, with --key-file, encrypted. An entry
appears whole or not at all, so processes may share a directory; the last put of a KEY wins.
A put whose input fails stores nothing and keeps the old entry. get checks the whole entry
before it writes a byte to standard output (to -o FILE it writes a temporary file beside
FILE and renames it into place at the end); a damaged entry is removed and is a miss.

Options:
      --dir DIR         the cache directory (default: $XDG_CACHE_HOME/gzstream, or
                        $HOME/.cache/gzstream); made, mode 0700, by a put; refused
                        unless yours and writable by no one else (not a symbolic link)
      --key-file FILE   encrypt and authenticate entries with the key in FILE (32 raw
                        bytes); give the same key to every command on that cache
      --max-size SIZE   the most bytes of entry files: after each put and by prune, least
                        recently used entries are removed until the rest fit (K, M, G, T
                        suffixes: KiB, MiB, GiB, TiB)
      --max-age AGE     an entry unused for longer is a miss for get and is removed by
                        prune (seconds; s, m, h, d suffixes)
  -0 ... -9             put: compression level (default 6); also --level N
  -p, --threads N       put: deflating threads (default: the processors available)
  -o, --output FILE     get: write FILE instead of standard output (- is standard output)
  -f, --force           get: replace an existing FILE; remove: no error when there is no entry
      --json            list: JSON instead of a table
  -q, --quiet           say nothing of a miss that is not found or expired (damage is said)
  -v, --verbose         put, get: a line with the sizes; remove, clear, prune: what was removed
  -h, --help            show this help

A miss says why on standard error (gzstream: cache: KEY: not found, expired, or damaged entry
removed: ...); -q keeps a script's test for a hit quiet: gzstream cache get -q KEY -o FILE.

Exit status: 0 success (get: a hit); 1 a miss (get, remove) or an error; 2 a put whose
entry alone is larger than --max-size (stored, then removed at once).

"""

/// The usage lines after every `gzstream: Error: …` of the cache command.
let cacheUsageLines = """
Usage: gzstream cache put KEY [FILE]
       gzstream cache get KEY [-o FILE] [-f]
       gzstream cache list [--json]
       gzstream cache remove KEY [-f]
       gzstream cache clear
       gzstream cache prune
Options: --dir DIR, --key-file FILE, --max-size SIZE, --max-age AGE, -0 ... -9, -p N, -q, -v
Try 'gzstream cache --help' for more information.

"""

/// A cache directory in a scratch directory, and the key file its commands use (or none).
private struct CacheUnderTest {
    let scratch: Scratch
    let directory: String
    let keyFile: String?

    init(_ scratch: Scratch, name: String = "cache", encrypted: Bool = false) throws {
        self.scratch = scratch
        directory = scratch.path(name)
        keyFile = encrypted ? try scratch.write("\(name).key", randomBytes(byteCount: 32, seed: 32)) : nil
        // Readable by its owner only: gzstream warns about a key file others may read.
        if let keyFile { chmod(keyFile, 0o600) }
    }

    /// `gzstream cache --dir DIR [--key-file FILE] ARGUMENTS…`.
    func run(_ arguments: [String], input: Input = .null, stdoutPath: String? = nil) async throws -> RunResult {
        try await gzstreamAsync(["cache", "--dir", directory] + (keyFile.map { ["--key-file", $0] } ?? []) + arguments,
                     in: scratch, input: input, stdoutPath: stdoutPath)
    }

    /// The entry file's name for `key`, as the library makes it.
    func name(_ key: String) throws -> String {
        try DiskCache(directory: directory, key: keyFile.map { try SecretStreamKey(contentsOfFile: $0) })
            .entryFileName(forKey: key)
    }

    func entryPath(_ key: String) throws -> String { directory + "/" + (try name(key)) }

    /// The names in the directory, sorted (`[]` when it does not exist).
    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// Puts `bytes` under `key` through a file, expecting silence and exit 0.
    func put(_ key: String, _ bytes: [UInt8], options: [String] = []) async throws {
        let input = try scratch.write("input-\(UUID().uuidString)", bytes)
        let result = try await run(["put", key, input] + options)
        #expect(result.status == 0 && result.out == "" && result.err == "", "put \(key): \(result)")
        try FileManager.default.removeItem(atPath: input)
    }
}

// MARK: Children awaited without holding a thread

// Each test awaits its children with Task.sleep instead of blocking a thread of the cooperative
// pool (as `run` does), so that on a 2-core machine the other suites keep their threads (and
// their time limits) while this suite's processes run.

/// ``run(_:_:in:directory:input:stdoutPath:timeout:)``, awaiting the child: polled every 2 ms
/// with `Task.sleep`, killed after `timeout` seconds.
private func runAsync(_ executable: String, _ arguments: [String], in scratch: Scratch, input: Input = .null,
                      stdoutPath: String? = nil, timeout: Double = 120) async throws -> RunResult {
    let started = try StartedProcess(executable, arguments, in: scratch, input: input, stdoutPath: stdoutPath)
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while started.process.isRunning && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(2))
    }
    return try started.finish(timeout: 0)
}

private func gzstreamAsync(_ arguments: [String], in scratch: Scratch, input: Input = .null,
                           stdoutPath: String? = nil) async throws -> RunResult {
    try await runAsync(Locations.binary, arguments, in: scratch, input: input, stdoutPath: stdoutPath)
}

/// A `/bin/sh -c` script; `$0` is the `gzstream` binary, `$1`… are `arguments`.
private func shellAsync(_ script: String, _ arguments: [String] = [], in scratch: Scratch,
                        timeout: Double = 120) async throws -> RunResult {
    try await runAsync("/bin/sh", ["-c", script, Locations.binary] + arguments, in: scratch, timeout: timeout)
}

/// ``withScratch(_:)`` for an `async` body.
private func withCacheScratch<T>(_ body: (Scratch) async throws -> T) async throws -> T {
    let scratch = try Scratch()
    defer { scratch.remove() }
    return try await body(scratch)
}

/// A miss as get reports it.
private func missLine(_ key: String, _ why: String) -> String { "gzstream: cache: \(key): \(why)\n" }

/// CRC-32 (ISO-HDLC, as gzip), bit by bit: an oracle independent of the code under test.
private func referenceCRC32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

private func hex8(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}

/// `-v`'s percentage, as the tool documents it: to a tenth, rounded.
private func percentSaved(plain: Int64, stored: Int64) -> String {
    let saved = plain == 0 ? 0 : (1 - Double(stored) / Double(plain)) * 100
    let tenths = Int((saved * 10).rounded())
    return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)%"
}

private func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

// Serialized, and every child awaited without holding a thread (runAsync): run in parallel with
// blocking waits, this suite's ~80 cases held both threads of the cooperative pool on the 2-core
// machine long enough for other suites' tests to pass their time limits (185 "Time limit was
// exceeded" in one full run).
@Suite("gzstream cache", .serialized, .timeLimit(.minutes(10)))
struct CacheCLITests {
    // MARK: Help and usage

    @Test("cache --help goes to standard output with exit 0",
          arguments: [["cache", "--help"], ["cache", "-h"], ["cache", "help"], ["cache", "get", "k", "--help"],
                      ["cache", "put", "-h", "k"], ["cache", "--dir", "x", "bogus", "-h"]])
    func help(arguments: [String]) async throws {
        try await withCacheScratch { scratch in
            let result = try await gzstreamAsync(arguments, in: scratch)
            #expect(result.status == 0)
            #expect(result.out == expectedCacheHelp)
            #expect(result.err == "")
            #expect(try scratch.listing() == [])
        }
    }

    @Test("usage errors: exit 1, Error: line and the cache usage on stderr, nothing made", arguments: [
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
        (["get", "k", "--json"], "--json applies to cache list"),
        (["get", "k", "-o", ""], "-o needs a path, not an empty one"),
        (["list", "--max-size", "1Q"], "--max-size takes a size in bytes, not '1Q'"),
        (["list", "--max-size", "-1"], "--max-size takes a size in bytes, not '-1'"),
        (["list", "--max-size", "9999999T"], "--max-size must be 0 to 9223372036854775807 bytes, not '9999999T'"),
        (["prune", "--max-age", "0"], "--max-age must be more than 0, not '0'"),
        (["prune", "--max-age=0d"], "--max-age must be more than 0, not '0d'"),
        (["prune", "--max-age", "1w"], "--max-age takes seconds (s, m, h, d suffixes), not '1w'"),
        (["prune", "--max-age", "d"], "--max-age takes seconds (s, m, h, d suffixes), not 'd'"),
        (["prune", "--max-age", "99999999999d"], "--max-age must be at most 3650000d, not '99999999999d'"),
        (["put", "k", "--level", "10"], "compression level must be 0 to 9, not '10'"),
        (["list", "--dir"], "option --dir needs a value"),
        (["list", "--dir="], "--dir needs a path, not an empty one"),
        (["list", "--key-file"], "option --key-file needs a value"),
        (["list", "--json=yes"], "option --json takes no value"),
        (["list", "-x"], "unknown option '-x'"),
        (["list", "--bogus"], "unknown option '--bogus'"),
    ] as [([String], String)])
    func usageErrors(arguments: [String], message: String) async throws {
        try await withCacheScratch { scratch in
            let result = try await gzstreamAsync(["cache", "--dir", "c"] + arguments, in: scratch)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == "gzstream: Error: \(message)\n" + cacheUsageLines)
            #expect(try scratch.listing() == [])
        }
    }

    @Test("a KEY that is not UTF-8 is a usage error")
    func keyNotUTF8() async throws {
        try await withCacheScratch { scratch in
            let result = try await shellAsync(#""$0" cache --dir c get "$(printf 'caf\351')""#, in: scratch)
            #expect(result.status == 1 && result.out == "")
            #expect(result.err == "gzstream: Error: a cache KEY must be UTF-8 text\n" + cacheUsageLines)
        }
    }

    @Test("gzip mode: a file named cache is given as ./cache or after --", .requires(.gzip))
    func fileNamedCache() async throws {
        try await withCacheScratch { scratch in
            try scratch.write("cache", "not a command\n")
            let packed = try await gzstreamAsync(["-k", "./cache"], in: scratch)
            #expect(packed.status == 0 && packed.out == "" && packed.err == "", "\(packed)")
            #expect(try gunzip(scratch.path("cache.gz"), in: scratch) == Array("not a command\n".utf8))
        }
    }

    // MARK: put and get

    @Test("put then get: from a file and from standard input, to standard output and to a new -o file",
          arguments: [0, 1, 65_536 + 1, (3 << 20) + 17], [false, true])
    func roundTrip(size: Int, encrypted: Bool) async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch, encrypted: encrypted)
            let first = size > (1 << 20) ? sampleText(byteCount: size, seed: 5) : randomBytes(byteCount: size, seed: UInt64(size))
            let second = randomBytes(byteCount: size, seed: UInt64(size) + 99)
            let input = try scratch.write("input", first)

            let putFile = try await cache.run(["put", "from-file", input])
            #expect(putFile.status == 0 && putFile.out == "" && putFile.err == "", "\(putFile)")
            let putStdin = try await cache.run(["put", "from-stdin"], input: .bytes(second))
            #expect(putStdin.status == 0 && putStdin.out == "" && putStdin.err == "", "\(putStdin)")

            let toStdout = try await cache.run(["get", "from-file"])
            #expect(toStdout.status == 0 && toStdout.err == "", "\(toStdout)")
            #expect(toStdout.stdout == first)
            let toFile = try await cache.run(["get", "from-stdin", "-o", scratch.path("out")])
            #expect(toFile.status == 0 && toFile.out == "" && toFile.err == "", "\(toFile)")
            #expect(try scratch.read("out") == second)
            #expect(fileStatus(scratch.path("out"))?.permissions == 0o666 & ~currentUmask())

            // Two entries, no temporary file left, in the cache or beside the output.
            #expect(cache.files() == [try cache.name("from-file"), try cache.name("from-stdin")].sorted())
            #expect(try scratch.listing().filter { $0.hasPrefix(".gzstream-") } == [])
        }
    }

    @Test("put - reads standard input; a second put of a KEY replaces the entry")
    func putDashAndReplace() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let put = try await cache.run(["put", "k", "-"], input: .bytes(Array("one\n".utf8)))
            #expect(put.status == 0 && put.out == "" && put.err == "", "\(put)")
            #expect(try await cache.run(["get", "k"]).out == "one\n")
            try await cache.put("k", Array("two\n".utf8))
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 0 && get.out == "two\n" && get.err == "", "\(get)")
            #expect(cache.files() == [try cache.name("k")])
        }
    }

    @Test("-v: put names the entry with its plain and stored sizes; get its sizes and output")
    func verboseLines() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let data = sampleText(byteCount: 100_000)
            let input = try scratch.write("input", data)
            let put = try await cache.run(["put", "-v", "k", input])
            let stored = try #require(fileStatus(try cache.entryPath("k"))).size
            #expect(put.status == 0 && put.out == "")
            #expect(put.err == "gzstream: cache: k: 100000 -> \(stored) bytes, \(percentSaved(plain: 100_000, stored: stored)) "
                + "saved -> \(try cache.name("k"))\n")
            let get = try await cache.run(["get", "k", "-v"])
            #expect(get.status == 0 && get.stdout == data)
            #expect(get.err == "gzstream: cache: k: \(stored) -> 100000 bytes -> standard output\n")
            let getFile = try await cache.run(["get", "k", "-vo", scratch.path("out")])
            #expect(getFile.status == 0 && getFile.out == "")
            #expect(getFile.err == "gzstream: cache: k: \(stored) -> 100000 bytes -> \(scratch.path("out"))\n")
        }
    }

    @Test("put of an input that fails stores nothing and keeps the old entry")
    func failingInputKeepsEntry() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("old\n".utf8))
            let entry = try cache.entryPath("k")
            setModificationTime(entry, seconds: 1_700_000_000)
            try FileManager.default.createDirectory(atPath: scratch.path("dir"), withIntermediateDirectories: false)
            // Standard input is a directory: the first read fails with EISDIR.
            let fromDirectory = try await shellAsync(#""$0" cache --dir "$1" put k < "$2""#, [cache.directory, scratch.path("dir")],
                                          in: scratch)
            #expect(fromDirectory.status == 1 && fromDirectory.out == "")
            #expect(fromDirectory.err == "gzstream: standard input: read failed: Is a directory\n")
            // A FILE that cannot be opened, or is a directory, is refused before anything is written.
            let missing = try await cache.run(["put", "k", scratch.path("missing")])
            #expect(missing.status == 1 && missing.out == "")
            #expect(missing.err == "gzstream: \(scratch.path("missing")): No such file or directory\n")
            let directory = try await cache.run(["put", "k", scratch.path("dir")])
            #expect(directory.status == 1 && directory.err == "gzstream: \(scratch.path("dir")): is a directory\n")

            #expect(cache.files() == [try cache.name("k")])
            #expect(fileStatus(entry)?.modificationSeconds == 1_700_000_000)
            #expect(try await cache.run(["get", "k"]).out == "old\n")
        }
    }

    // MARK: get's output and misses

    @Test("get -o refuses an existing file without -f, before the lookup; -f replaces it")
    func existingOutput() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("cached\n".utf8))
            let out = try scratch.write("out", "mine\n")
            for key in ["k", "missing"] {
                let refused = try await cache.run(["get", key, "-o", out])
                #expect(refused.status == 1 && refused.out == "")
                #expect(refused.err == "gzstream: \(out): already exists; not overwritten (use -f to overwrite)\n")
                #expect(try scratch.read("out") == Array("mine\n".utf8))
            }
            let forced = try await cache.run(["get", "k", "-f", "-o", out])
            #expect(forced.status == 0 && forced.out == "" && forced.err == "", "\(forced)")
            #expect(try scratch.read("out") == Array("cached\n".utf8))
            // A miss with -f leaves the file as it was.
            let miss = try await cache.run(["get", "missing", "-f", "-o", out])
            #expect(miss.status == 1 && miss.err == missLine("missing", "not found"))
            #expect(try scratch.read("out") == Array("cached\n".utf8))
        }
    }

    @Test("a miss: exit 1, nothing on standard output, no -o file; -q says nothing of it")
    func miss() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let plain = try await cache.run(["get", "nothing here"])
            #expect(plain.status == 1 && plain.out == "" && plain.err == missLine("nothing here", "not found"))
            let quiet = try await cache.run(["get", "-q", "nothing here"])
            #expect(quiet.status == 1 && quiet.out == "" && quiet.err == "")
            let toFile = try await cache.run(["get", "nothing here", "-o", scratch.path("out")])
            #expect(toFile.status == 1 && toFile.out == "" && toFile.err == missLine("nothing here", "not found"))
            // No -o file, and no cache directory either: only a put makes it.
            #expect(try scratch.listing() == [])
        }
    }

    @Test("get -o a device writes into it; -o /dev/stdout writes through the descriptor")
    func outputsThatAreNotFiles() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("bytes\n".utf8))
            let null = try await cache.run(["get", "k", "-o", "/dev/null"])
            #expect(null.status == 0 && null.out == "" && null.err == "", "\(null)")
            let stdout = try await cache.run(["get", "k", "-o", "/dev/stdout"])
            #expect(stdout.status == 0 && stdout.out == "bytes\n" && stdout.err == "", "\(stdout)")
            let dash = try await cache.run(["get", "k", "-o", "-"])
            #expect(dash.status == 0 && dash.out == "bytes\n" && dash.err == "", "\(dash)")
            let directory = try await cache.run(["get", "k", "-o", cache.directory])
            #expect(directory.status == 1 && directory.out == "")
            #expect(directory.err == "gzstream: \(cache.directory): is a directory (give -o DIRECTORY/NAME)\n")
        }
    }

    @Test("get into a closed pipe ends as every filter does", .timeLimit(.minutes(1)),
          arguments: [BrokenPipeSignal.fatal, .ignored])
    func closedPipe(sigpipe: BrokenPipeSignal) async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", randomBytes(byteCount: 1 << 20, seed: 3))
            let run = try gzstreamIntoClosedPipe("cache --dir \(cache.directory) get k", sigpipe: sigpipe, in: scratch)
            #expect(run.status == sigpipe.statusLine, "\(run)")
            #expect(run.err == sigpipe.message(naming: "standard output"), "\(run)")
        }
    }

    // MARK: Encryption

    @Test("key files: a wrong size or a missing file is one line and exit 1, before the cache is made",
          arguments: [0, 31, 33, 100])
    func wrongKeyFile(size: Int) async throws {
        try await withCacheScratch { scratch in
            let keyFile = try scratch.write("key", randomBytes(byteCount: size, seed: 9))
            for arguments in [["put", "k", keyFile], ["get", "k"], ["list"]] {
                let result = try await gzstreamAsync(["cache", "--dir", scratch.path("c"), "--key-file", keyFile] + arguments, in: scratch)
                #expect(result.status == 1 && result.out == "")
                #expect(result.err == "gzstream: \(keyFile): a key file must hold exactly 32 bytes, not \(size)\n")
            }
            let missing = try await gzstreamAsync(["cache", "--dir", scratch.path("c"), "--key-file", scratch.path("none"), "list"], in: scratch)
            #expect(missing.status == 1 && missing.out == "")
            #expect(missing.err == "gzstream: \(scratch.path("none")): cannot read the key file: No such file or directory\n")
            #expect(try scratch.listing() == ["key"])
        }
    }

    @Test("an entry put with a key is found only with that key; its file holds no plain text")
    func otherKeysMiss() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch, encrypted: true)
            let secret = Array(String(repeating: "attack at dawn\n", count: 100).utf8)
            try await cache.put("k", secret)
            let stored = try readBytes(try cache.entryPath("k"))
            #expect(!String(decoding: stored, as: UTF8.self).contains("attack"))
            let other = try scratch.write("other.key", randomBytes(byteCount: 32, seed: 33))
            chmod(other, 0o600)
            for extra in [["--key-file", other], []] {
                let result = try await gzstreamAsync(["cache", "--dir", cache.directory] + extra + ["get", "k"], in: scratch)
                #expect(result.status == 1 && result.out == "" && result.err == missLine("k", "not found"), "\(result)")
            }
            #expect(cache.files() == [try cache.name("k")])
            let right = try await cache.run(["get", "k"])
            #expect(right.status == 0 && right.stdout == secret && right.err == "")
        }
    }

    // MARK: Damage

    /// One way to damage an entry file, and the message get then gives (after
    /// `damaged entry removed: `), from the file as it was before and the plain bytes.
    struct Damage: Sendable, CustomStringConvertible {
        var description: String
        var encrypted: Bool
        var damage: @Sendable (inout [UInt8]) -> Void
        /// `nil`: the message depends on where zlib put its block boundaries; only its start is
        /// checked.
        var message: @Sendable (_ before: [UInt8], _ plain: [UInt8]) -> String?
        var messageStart = ""
    }

    /// The encrypted payload starts at byte 16; its chunks of 64 KiB of plaintext take
    /// 4 + 65536 + 17 bytes each, after a 9-byte prefix and a 24-byte header.
    static let chunkBytes = 4 + 65_536 + 17

    static let damages: [Damage] = [
        Damage(description: "cut in half", encrypted: false, damage: { $0.removeLast($0.count - $0.count / 2) },
               message: { before, _ in "gzip data invalid: unexpected end of input in the deflate data of member 1 at byte \(before.count / 2 - 16)" }),
        Damage(description: "a bit flipped in the stored CRC-32", encrypted: false, damage: { $0[$0.count - 8] ^= 0x04 },
               message: { before, plain in
                   let stored = before[(before.count - 8)...].prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) } ^ 0x04
                   return "gzip data invalid: CRC-32 mismatch in member 1 at byte \(before.count - 16 - 8) "
                       + "(stored \(hex8(stored)), computed \(hex8(referenceCRC32(plain))))"
               }),
        Damage(description: "a bit flipped in the deflate data", encrypted: false, damage: { $0[$0.count / 2] ^= 0x10 },
               message: { _, _ in nil }, messageStart: "gzip data invalid: "),
        Damage(description: "a bit flipped in the plain size", encrypted: false, damage: { $0[15] ^= 0x01 },
               message: { _, plain in "plain size \(plain.count ^ 1) in the header, \(plain.count) bytes in the member" }),
        Damage(description: "a bit flipped in the magic", encrypted: false, damage: { $0[0] ^= 0x01 },
               message: { _, _ in "not a gzstream cache entry" }),
        Damage(description: "cut inside the header", encrypted: false, damage: { $0.removeLast($0.count - 10) },
               message: { _, _ in "entry header cut at byte 10" }),
        // An encrypted entry's payload starts at byte 70: the 16-byte header, then its 54-byte seal.
        Damage(description: "cut inside chunk 2", encrypted: true, damage: { $0.removeLast($0.count - (70 + 33 + chunkBytes + 1000)) },
               message: { _, _ in "decryption failed: unexpected end of encrypted input in chunk 2, before the final chunk at byte \(33 + chunkBytes + 1000)" }),
        Damage(description: "a bit flipped in chunk 3", encrypted: true, damage: { $0[70 + 33 + 2 * chunkBytes + 30_000] ^= 0x80 },
               message: { _, _ in "decryption failed: authentication failed for chunk 3 at byte \(33 + 2 * chunkBytes) "
                   + "(wrong key, or the data was changed, reordered or cut)" }),
        Damage(description: "the encryption flag cleared", encrypted: true, damage: { $0[5] = 0 },
               message: { _, _ in "entry is not encrypted and a key was given" }),
    ]

    @Test("damage through the CLI: get exits 1, writes nothing, says why (also under -q) and removes the entry",
          arguments: damages, [false, true])
    func damagedEntry(damage: Damage, toFile: Bool) async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch, encrypted: damage.encrypted)
            let plain = randomBytes(byteCount: 1 << 20, seed: 77)
            try await cache.put("k", plain)
            let path = try cache.entryPath("k")
            let before = try readBytes(path)
            var bytes = before
            damage.damage(&bytes)
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            let result = try await cache.run(toFile ? ["get", "-q", "k", "-o", scratch.path("out")] : ["get", "k"])
            #expect(result.status == 1)
            #expect(result.out == "")
            let prefix = "gzstream: cache: k: damaged entry removed: "
            if let message = damage.message(before, plain) {
                #expect(result.err == prefix + message + "\n")
            } else {
                #expect(result.err.hasPrefix(prefix + damage.messageStart) && result.errLines.count == 1, "\(result)")
            }
            #expect(cache.files() == [])
            #expect(try scratch.listing().filter { $0 != "cache.key" } == ["cache"])
            // The next lookup is a plain miss.
            #expect(try await cache.run(["get", "k"]).err == missLine("k", "not found"))
        }
    }

    @Test("a FIFO under an entry's name is no entry: list skips it, get is a damaged miss and removes it; nothing waits",
          .timeLimit(.minutes(1)))
    func fifoUnderEntryName() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let path = try cache.entryPath("k")
            try FileManager.default.createDirectory(atPath: cache.directory, withIntermediateDirectories: true)
            #expect(mkfifo(path, 0o600) == 0)
            let list = try await cache.run(["list", "--json"])
            #expect(list.status == 0 && list.out == "[]\n" && list.err == "", "\(list)")
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 1 && get.out == "" && get.err == missLine("k", "damaged entry removed: not a gzstream cache entry"),
                    "\(get)")
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(mkfifo(path, 0o600) == 0)
            try await cache.put("k", Array("value".utf8))
            #expect(try await cache.run(["get", "k"]).out == "value")
        }
    }

    // MARK: list

    @Test("list: a header and a row per entry, least recently used first; --json, exact")
    func list() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let encrypted = try CacheUnderTest(scratch, encrypted: true)  // the same directory, with a key
            try await cache.put("alpha", sampleText(byteCount: 1000))
            try await cache.put("beta", [])
            try await encrypted.put("gamma", randomBytes(byteCount: 5000, seed: 4))
            let junk = String(repeating: "ff", count: 32)
            try Data("junk".utf8).write(to: URL(fileURLWithPath: cache.directory + "/" + junk))
            // Neither a temporary file nor another name is an entry.
            try Data("partial".utf8).write(to: URL(fileURLWithPath: cache.directory + "/.tmp-0123456789abcdef"))
            try Data("notes".utf8).write(to: URL(fileURLWithPath: cache.directory + "/notes"))
            setModificationTime(try cache.entryPath("alpha"), seconds: 1_700_000_300)
            setModificationTime(try cache.entryPath("beta"), seconds: 1_700_000_100)
            // The fraction is dropped, not rounded. (The library keeps times as a Double, which
            // cannot tell .999999999 from the next second at this magnitude: .999 it can.)
            setModificationTime(try encrypted.entryPath("gamma"), seconds: 1_700_000_200, nanoseconds: 999_000_000)
            setModificationTime(cache.directory + "/" + junk, seconds: 1_600_000_000)

            func size(_ path: String) -> Int64 { fileStatus(path)?.size ?? -1 }
            let rows: [(name: String, stored: Int64, plain: String, time: String, encrypted: String)] = [
                (junk, 4, "-", "2020-09-13T12:26:40Z", "null"),
                (try cache.name("beta"), size(try cache.entryPath("beta")), "0", "2023-11-14T22:15:00Z", "false"),
                (try encrypted.name("gamma"), size(try encrypted.entryPath("gamma")), "5000", "2023-11-14T22:16:40Z", "true"),
                (try cache.name("alpha"), size(try cache.entryPath("alpha")), "1000", "2023-11-14T22:18:20Z", "false"),
            ]
            let table = try await cache.run(["list"])
            #expect(table.status == 0 && table.err == "")
            #expect(table.out == "      stored        plain  last use (UTC)        key hash\n"
                + rows.map { "\(pad(String($0.stored), 12)) \(pad($0.plain, 12))  \($0.time)  \($0.name)\n" }.joined())

            // With a key, only authenticated headers give sizes: the unencrypted entries' are null.
            let json = try await encrypted.run(["list", "--json"])
            #expect(json.status == 0 && json.err == "")
            #expect(json.out == "[\n" + rows.map {
                "{\"name\":\"\($0.name)\",\"storedSize\":\($0.stored),\"plainSize\":\($0.encrypted == "true" ? $0.plain : "null"),"
                    + "\"lastUse\":\"\($0.time)\",\"encrypted\":\($0.encrypted == "true" ? "true" : "null")}"
            }.joined(separator: ",\n") + "\n]\n")
            let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]]
            #expect(parsed?.count == 4)
        }
    }

    @Test("list of a missing cache: the header alone, or []; nothing is made until a put makes the directory, mode 0700")
    func listEmpty() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch, name: "new/cache")
            let table = try await cache.run(["list"])
            #expect(table.status == 0 && table.err == "")
            #expect(table.out == "      stored        plain  last use (UTC)        key hash\n")
            let json = try await cache.run(["list", "--json"])
            #expect(json.status == 0 && json.out == "[]\n" && json.err == "")
            #expect(fileStatus(cache.directory) == nil)
            try await cache.put("k", Array("value".utf8))
            #expect(fileStatus(cache.directory)?.permissions == 0o700)
        }
    }

    // MARK: remove, clear, prune, limits

    @Test("remove: exit 0 when there was an entry; 1 and not found when there was none (-q quiet, -f no error)")
    func remove() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("x".utf8))
            try await cache.put("other", Array("y".utf8))
            let removed = try await cache.run(["remove", "-v", "k"])
            #expect(removed.status == 0 && removed.out == "" && removed.err == "gzstream: cache: k: removed\n")
            #expect(cache.files() == [try cache.name("other")])
            let absent = try await cache.run(["remove", "k"])
            #expect(absent.status == 1 && absent.out == "" && absent.err == missLine("k", "not found"))
            let quiet = try await cache.run(["remove", "-q", "k"])
            #expect(quiet.status == 1 && quiet.out == "" && quiet.err == "")
            let forced = try await cache.run(["remove", "-f", "k"])
            #expect(forced.status == 0 && forced.out == "" && forced.err == "")
            #expect(cache.files() == [try cache.name("other")])
        }
    }

    @Test("clear removes every entry and temporary file, nothing else")
    func clear() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            for key in ["a", "b", "c"] { try await cache.put(key, Array(key.utf8)) }
            try Data("partial".utf8).write(to: URL(fileURLWithPath: cache.directory + "/.tmp-0123456789abcdef"))
            try Data("notes".utf8).write(to: URL(fileURLWithPath: cache.directory + "/notes"))
            let cleared = try await cache.run(["clear", "-v"])
            #expect(cleared.status == 0 && cleared.out == "" && cleared.err == "gzstream: cache: removed 3 entries\n")
            #expect(cache.files() == ["notes"])
            let again = try await cache.run(["clear"])
            #expect(again.status == 0 && again.out == "" && again.err == "")
            #expect(try await cache.run(["clear", "-v"]).err == "gzstream: cache: removed 0 entries\n")
        }
    }

    @Test("--max-age: an older entry is an expired miss for get (and removed); prune removes the rest, and old temporary files")
    func maximumAge() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            for key in ["old", "older", "recent"] { try await cache.put(key, Array(key.utf8)) }
            let now = Int(Date().timeIntervalSince1970)
            setModificationTime(try cache.entryPath("old"), seconds: now - 3 * 86400)
            setModificationTime(try cache.entryPath("older"), seconds: now - 4 * 86400)
            setModificationTime(try cache.entryPath("recent"), seconds: now - 3600)
            let temporary = cache.directory + "/.tmp-0123456789abcdef"
            try Data("partial".utf8).write(to: URL(fileURLWithPath: temporary))
            setModificationTime(temporary, seconds: now - 7200)

            let expired = try await cache.run(["get", "old", "--max-age", "2d"])
            #expect(expired.status == 1 && expired.out == "")
            let prefix = "gzstream: cache: old: expired (last used "
            let age = Int(expired.err.dropFirst(prefix.count).prefix { $0.isNumber }) ?? -1
            #expect(expired.err.hasPrefix(prefix) && expired.err == "\(prefix)\(age) s ago)\n", "\(expired)")
            #expect(age >= 3 * 86400 && age < 3 * 86400 + 600)
            #expect(try await cache.run(["get", "-q", "old", "--max-age", "2d"]).err == "")  // now removed: not found, quiet
            #expect(try await cache.run(["get", "recent", "--max-age", "2d"]).out == "recent")

            let olderSize = fileStatus(try cache.entryPath("older"))?.size ?? 0
            let pruned = try await cache.run(["prune", "-v", "--max-age", "2d"])
            #expect(pruned.status == 0 && pruned.out == "")
            #expect(pruned.err == "gzstream: cache: pruned 1 expired, 0 evicted, 1 abandoned temporary file; "
                + "\(olderSize + 7) bytes freed\n")
            #expect(cache.files() == [try cache.name("recent")])
        }
    }

    @Test("--max-size: prune and put evict least recently used first; a hit counts as a use")
    func maximumSize() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let keys = ["e1", "e2", "e3", "e4"]
            for (index, key) in keys.enumerated() {
                try await cache.put(key, randomBytes(byteCount: 10_000, seed: UInt64(index)))
                setModificationTime(try cache.entryPath(key), seconds: 1_700_000_001 + index)
            }
            func size(_ key: String) throws -> Int64 { try #require(fileStatus(try cache.entryPath(key))).size }
            let sizes = try Dictionary(uniqueKeysWithValues: keys.map { ($0, try size($0)) })
            // e1 is the oldest, until a hit makes it the newest.
            #expect(try await cache.run(["get", "e1"]).status == 0)
            let limit = sizes["e1"]! + sizes["e3"]! + sizes["e4"]!
            let pruned = try await cache.run(["prune", "-v", "--max-size", String(limit)])
            #expect(pruned.status == 0 && pruned.out == "")
            #expect(pruned.err == "gzstream: cache: pruned 0 expired, 1 evicted, 0 abandoned temporary files; \(sizes["e2"]!) bytes freed\n")
            #expect(try cache.files() == ["e1", "e3", "e4"].map { try cache.name($0) }.sorted())

            // A put over the limit evicts the least recently used (e3), never the entry just put.
            try await cache.put("e5", randomBytes(byteCount: 10_000, seed: 9), options: ["--max-size", String(limit)])
            #expect(try cache.files() == ["e1", "e4", "e5"].map { try cache.name($0) }.sorted())
            // Without a limit nothing is evicted.
            #expect(try await cache.run(["prune", "-v"]).err
                == "gzstream: cache: pruned 0 expired, 0 evicted, 0 abandoned temporary files; 0 bytes freed\n")
            #expect(cache.files().count == 3)
        }
    }

    @Test("a put larger than --max-size alone: exit 2, a warning (not under -q), nothing kept, no other entry lost")
    func putOverLimit() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("small", Array("small".utf8))
            let big = randomBytes(byteCount: 5000, seed: 8)
            // The same bytes under another key in another cache make a file of the same size.
            let probe = try CacheUnderTest(scratch, name: "probe")
            try await probe.put("big", big)
            let bigSize = try #require(fileStatus(try probe.entryPath("big"))).size
            let input = try scratch.write("big", big)
            let put = try await cache.run(["put", "big", input, "--max-size", "1K"])
            #expect(put.status == 2 && put.out == "")
            #expect(put.err == "gzstream: cache: big: not kept: its \(bigSize) bytes are more than --max-size 1024\n")
            let quiet = try await cache.run(["put", "-q", "big", input, "--max-size", "1K"])
            #expect(quiet.status == 2 && quiet.out == "" && quiet.err == "")
            #expect(cache.files() == [try cache.name("small")])
        }
    }

    @Test("-0 … -9 and --level set put's compression")
    func levels() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let text = sampleText(byteCount: 200_000)
            try await cache.put("stored", text, options: ["-0"])
            try await cache.put("best", text, options: ["--level", "9"])
            let stored = try #require(fileStatus(try cache.entryPath("stored"))).size
            let best = try #require(fileStatus(try cache.entryPath("best"))).size
            #expect(stored > 200_000 && best < 100_000)
            #expect(try await cache.run(["get", "stored"]).stdout == text)
        }
    }

    @Test("-p N and --threads N: one or several deflating threads give the same bytes back; 0 is a usage error")
    func threads() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let text = sampleText(byteCount: 3 << 20)
            try await cache.put("one", text, options: ["-p", "1"])
            try await cache.put("two", text, options: ["--threads=2"])
            try await cache.put("grouped", text, options: ["-9p2"])
            for key in ["one", "two", "grouped"] {
                #expect(try await cache.run(["get", key]).stdout == text, "\(key)")
            }
            let zero = try await cache.run(["put", "-p", "0", "zero"])
            #expect(zero.status == 1 && zero.out == "")
            #expect(zero.err.hasPrefix("gzstream: Error: thread count must be 1 to 256, not '0'\n"), "\(zero.err)")
        }
    }

    // MARK: The directory

    @Test("the default directory: $XDG_CACHE_HOME/gzstream when absolute, else $HOME/.cache/gzstream, else an error")
    func defaultDirectory() async throws {
        try await withCacheScratch { scratch in
            let input = try scratch.write("input", "cached\n")
            func put(_ environment: [String]) async throws -> RunResult {
                try await runAsync("/usr/bin/env", ["-i"] + environment + [Locations.binary, "cache", "put", "k", input], in: scratch)
            }
            let name = try DiskCache(directory: scratch.path("probe")).entryFileName(forKey: "k")
            let xdg = try await put(["XDG_CACHE_HOME=\(scratch.path("xdg"))", "HOME=\(scratch.path("home"))"])
            #expect(xdg.status == 0 && xdg.out == "" && xdg.err == "", "\(xdg)")
            #expect(FileManager.default.fileExists(atPath: scratch.path("xdg/gzstream/\(name)")))
            let home = try await put(["XDG_CACHE_HOME=relative", "HOME=\(scratch.path("home"))"])
            #expect(home.status == 0 && home.out == "" && home.err == "", "\(home)")
            #expect(FileManager.default.fileExists(atPath: scratch.path("home/.cache/gzstream/\(name)")))
            let none = try await put([])
            #expect(none.status == 1 && none.out == "")
            #expect(none.err == "gzstream: cache: no cache directory: give --dir DIR, or set XDG_CACHE_HOME or HOME\n")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("relative")))
        }
    }

    @Test("--dir naming a file, or a directory that cannot be made: one line, exit 1")
    func badDirectory() async throws {
        try await withCacheScratch { scratch in
            let file = try scratch.write("file", "x")
            let notDirectory = try await gzstreamAsync(["cache", "--dir", file, "list"], in: scratch)
            #expect(notDirectory.status == 1 && notDirectory.out == "")
            #expect(notDirectory.err == "gzstream: \(file): not a directory\n")
            let under = try await gzstreamAsync(["cache", "--dir", file + "/sub", "list"], in: scratch)
            #expect(under.status == 1 && under.out == "")
            #expect(under.err == "gzstream: \(file)/sub: open failed: Not a directory\n")
            let putUnder = try await gzstreamAsync(["cache", "--dir", file + "/sub", "put", "k", file], in: scratch)
            #expect(putUnder.status == 1 && putUnder.out == "")
            #expect(putUnder.err == "gzstream: cache: k: cannot store: open failed: Not a directory\n")
        }
    }

    @Test("a cache directory group or others may write, or a symbolic link, is refused by every command: one line, exit 1",
          arguments: [0o770, 0o777, 0o707] as [mode_t])
    func untrustedDirectory(mode: mode_t) async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("value".utf8))
            let input = try scratch.write("input", "new value")
            try #require(chmod(cache.directory, mode) == 0)
            let refusal = "gzstream: \(cache.directory): untrusted cache directory: writable by group or others "
                + "(mode 0\(String(mode, radix: 8)); it must be writable by its owner only)\n"
            for arguments in [["get", "k"], ["put", "k", input], ["list"], ["remove", "k"], ["clear"], ["prune"]] {
                let result = try await cache.run(arguments)
                #expect(result.status == 1 && result.out == "" && result.err == refusal, "\(arguments)")
            }
            try #require(chmod(cache.directory, 0o700) == 0)
            let link = scratch.path("link")
            try #require(symlink(cache.directory, link) == 0)
            for arguments in [["get", "k"], ["list"]] {
                let result = try await gzstreamAsync(["cache", "--dir", link] + arguments, in: scratch)
                #expect(result.status == 1 && result.out == "", "\(arguments)")
                #expect(result.err == "gzstream: \(link): untrusted cache directory: a symbolic link (give the directory itself)\n")
            }
            // Nothing was changed: the entry is still there for the directory itself.
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 0 && get.out == "value" && get.err == "")
        }
    }

    @Test("a cache directory another user owns is refused: one line, exit 1, nothing read",
          .enabled(if: geteuid() == 0, "needs root to give the directory to nobody (uid 65534)"))
    func foreignDirectory() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("value".utf8))
            try #require(chown(cache.directory, 65534, 65534) == 0)
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 1 && get.out == "")
            #expect(get.err == "gzstream: \(cache.directory): untrusted cache directory: owned by uid 65534 "
                + "(it must be owned by uid 0, the effective user, and writable by no one else)\n")
        }
    }

    @Test("an entry another user wrote for our key is a damaged miss: nothing on standard output, exit 1, removed",
          .enabled(if: geteuid() == 0, "needs root to give the entry to nobody (uid 65534)"))
    func foreignEntry() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            try await cache.put("k", Array("attacker's bytes".utf8))
            let path = try cache.entryPath("k")
            try #require(chown(path, 65534, 65534) == 0)
            setModificationTime(path, seconds: 1_700_000_000)
            let list = try await cache.run(["list"])
            let stored = String(fileStatus(path)?.size ?? -1)
            #expect(list.status == 0 && list.err == "")
            #expect(list.out == "      stored        plain  last use (UTC)        key hash\n"
                + String(repeating: " ", count: 12 - stored.count) + stored + "            -  2023-11-14T22:13:20Z  \(try cache.name("k"))\n")
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 1 && get.out == "")
            #expect(get.err == "gzstream: cache: k: damaged entry removed: entry file owned by uid 65534, not by this user\n")
            #expect(cache.files() == [])
        }
    }

    @Test("with a key, list shows no plain size a header was changed to, and get is a damaged miss")
    func forgedPlainSize() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch, encrypted: true)
            try await cache.put("k", sampleText(byteCount: 1000))
            let path = try cache.entryPath("k")
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[14] = 0xff  // 1000 becomes 65512
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            setModificationTime(path, seconds: 1_700_000_000)
            let stored = String(bytes.count)
            let list = try await cache.run(["list"])
            #expect(list.status == 0 && list.err == "")
            #expect(list.out == "      stored        plain  last use (UTC)        key hash\n"
                + String(repeating: " ", count: 12 - stored.count) + stored + "            -  2023-11-14T22:13:20Z  \(try cache.name("k"))\n")
            let json = try await cache.run(["list", "--json"])
            #expect(json.out == "[\n{\"name\":\"\(try cache.name("k"))\",\"storedSize\":\(stored),\"plainSize\":null,"
                + "\"lastUse\":\"2023-11-14T22:13:20Z\",\"encrypted\":null}\n]\n")
            let get = try await cache.run(["get", "k"])
            #expect(get.status == 1 && get.out == "")
            #expect(get.err == "gzstream: cache: k: damaged entry removed: entry header not authenticated (changed, or written with another key)\n")
        }
    }

    // MARK: Processes at once

    /// Three processes put two different multi-MiB values under one key, four times each, while
    /// three others get it in loops (two to standard output, one with `-o`). Each get records
    /// whether the first put had finished before it started (a marker file the putters touch
    /// after each put), so a miss can be judged without timing: only "not found", only before.
    @Test("concurrent puts and gets in separate processes: every get is one value whole, or a miss before the first put",
          .timeLimit(.minutes(5)))
    func concurrentProcesses() async throws {
        try await withCacheScratch { scratch in
            let cache = try CacheUnderTest(scratch)
            let valueA = try scratch.write("A", randomBytes(byteCount: 3 << 20, seed: 21))
            let valueB = try scratch.write("B", sampleText(byteCount: 5 << 20, seed: 22))
            let logs = scratch.path("logs")
            try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: false)
            let script = #"""
            G=$0 D=$1 A=$2 B=$3 W=$4
            putter() {
              i=0
              while [ $i -lt 4 ]; do
                if [ $(( (i + $1) % 2 )) = 0 ]; then v=$A; else v=$B; fi
                "$G" cache --dir "$D" put K "$v" 2>>"$W/put$1.err"; s=$?
                [ $s = 0 ] || echo "put exit $s" >>"$W/put$1.err"
                : >"$W/first-put-done"
                i=$((i + 1))
              done
            }
            getter() {
              i=0
              while [ $i -lt 400 ] && [ ! -e "$W/puts-done" ]; do
                if [ -e "$W/first-put-done" ]; then phase=after; else phase=before; fi
                rm -f "$W/out$1"
                if [ "$2" = file ]; then
                  "$G" cache --dir "$D" get K -o "$W/out$1" 2>"$W/err$1"; s=$?
                else
                  "$G" cache --dir "$D" get K >"$W/out$1" 2>"$W/err$1"; s=$?
                fi
                if [ $s = 0 ]; then
                  if cmp -s "$W/out$1" "$A"; then echo "$phase hit A"
                  elif cmp -s "$W/out$1" "$B"; then echo "$phase hit B"
                  else echo "$phase BAD output of $(wc -c <"$W/out$1") bytes"; fi
                elif [ -s "$W/out$1" ]; then
                  echo "$phase BAD miss $s wrote $(wc -c <"$W/out$1") bytes: $(cat "$W/err$1")"
                else
                  echo "$phase miss $s $(cat "$W/err$1")"
                fi
                i=$((i + 1))
              done >"$W/get$1.log"
            }
            getter 1 stdout & g1=$!
            getter 2 stdout & g2=$!
            getter 3 file & g3=$!
            putter 1 & p1=$!
            putter 2 & p2=$!
            putter 3 & p3=$!
            wait $p1 $p2 $p3
            : >"$W/puts-done"
            wait $g1 $g2 $g3
            """#
            let result = try await runAsync("/bin/sh", ["-c", script, Locations.binary, cache.directory, valueA, valueB, logs],
                                 in: scratch, timeout: 280)
            #expect(result.status == 0 && !result.timedOut, "\(result)")

            for putter in 1...3 {
                #expect((try? String(contentsOfFile: "\(logs)/put\(putter).err", encoding: .utf8)) ?? "" == "", "putter \(putter)")
            }
            var hits = 0
            var misses = 0
            for getter in 1...3 {
                let log = try String(contentsOfFile: "\(logs)/get\(getter).log", encoding: .utf8)
                for line in log.split(separator: "\n") {
                    if line.hasSuffix(" hit A") || line.hasSuffix(" hit B") {
                        hits += 1
                    } else if line == "before miss 1 gzstream: cache: K: not found" {
                        misses += 1
                    } else {
                        Issue.record("getter \(getter): \(line)")
                    }
                }
            }
            // Once every put is done the entry is one of the two values, whole.
            let last = try await cache.run(["get", "K"])
            #expect(last.status == 0 && last.err == "")
            let values = [try readBytes(valueA), try readBytes(valueB)]
            #expect(values.contains(last.stdout))
            #expect(cache.files() == [try cache.name("K")], "no .tmp- file is left")
            #expect(try FileManager.default.contentsOfDirectory(atPath: logs).filter { $0.hasPrefix(".gzstream-") } == [])
            print("concurrent cache test: \(hits) hits, \(misses) misses before the first put")
        }
    }
}

import Foundation
import StreamCache
import Testing
import TestSupport
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

let expectedCacheHelp = cliText("cache-help.txt")

/// The line that follows every usage error of the cache's.
let cacheTryHelpLine = "Try 'gzstream cache --help' for more information.\n"

/// A cache directory in a scratch directory, and the key file its commands use (or none).
struct CacheUnderTest {
    let scratch: Scratch
    let directory: String
    let keyFile: String?

    init(_ scratch: Scratch, name: String = "cache", encrypted: Bool = false) throws {
        self.scratch = scratch
        directory = scratch.path(name)
        keyFile = encrypted ? try scratch.write("\(name).key", randomBytes(count: 32, seed: 32)) : nil
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

/// A `/bin/sh -c` script; `$0` is the `gzstream` binary, `$1`… are `arguments`.
func shellAsync(_ script: String, _ arguments: [String] = [], in scratch: Scratch,
                timeout: Double = 120) async throws -> RunResult {
    try await runAsync("/bin/sh", ["-c", script, Locations.binary] + arguments, in: scratch, timeout: timeout)
}

/// A miss as get reports it.
func missLine(_ key: String, _ why: String) -> String { "gzstream: cache: \(key): \(why)\n" }

/// CRC-32 (ISO-HDLC, as gzip), bit by bit: an oracle independent of the code under test.
func referenceCRC32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

func hex8(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}

/// `-v`'s percentage, as the tool documents it: to a tenth, rounded.
func percentSaved(plain: Int64, stored: Int64) -> String {
    let saved = plain == 0 ? 0 : (1 - Double(stored) / Double(plain)) * 100
    let tenths = Int((saved * 10).rounded())
    return "\(tenths < 0 ? "-" : "")\(abs(tenths) / 10).\(abs(tenths) % 10)%"
}

func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

// Serialized, and every child awaited without holding a thread (runAsync): run in parallel with
// blocking waits, this suite's ~80 cases held both threads of the cooperative pool on the 2-core
// machine long enough for other suites' tests to pass their time limits (185 "Time limit was
// exceeded" in one full run).
@Suite("gzstream cache", .onDedicatedThreads, .serialized, .timeLimit(.minutes(10)))
struct CacheCLITests {
    // MARK: Help and usage

    @Test("cache --help goes to standard output with exit 0",
          arguments: [["cache", "--help"], ["cache", "-h"], ["cache", "help"], ["cache", "--dir", "x", "bogus", "-h"]])
    func help(arguments: [String]) async throws {
        try await withAsyncScratch { scratch in
            let result = try await gzstreamAsync(arguments, in: scratch)
            #expect(result.status == 0)
            #expect(result.out == expectedCacheHelp)
            #expect(result.err == "")
            #expect(try scratch.listing() == [])
        }
    }

    @Test("usage errors: exit 1, a line and where the cache's help is on stderr, nothing made", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        ([], "cache needs a command: put, get, list, remove, clear or prune"),
        (["list", "-o", "x"], "-o applies to cache get"),
        (["list", "--bogus"], "unrecognized option '--bogus'"),
    ] as [([String], String)])
    func usageErrors(arguments: [String], message: String) async throws {
        try await withAsyncScratch { scratch in
            let result = try await gzstreamAsync(["cache", "--dir", "c"] + arguments, in: scratch)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == "gzstream: \(message)\n" + cacheTryHelpLine)
            #expect(try scratch.listing() == [])
        }
    }

    @Test("a KEY that is not UTF-8 is a usage error")
    func keyNotUTF8() async throws {
        try await withAsyncScratch { scratch in
            let result = try await shellAsync(#""$0" cache --dir c get "$(printf 'caf\351')""#, in: scratch)
            #expect(result.status == 1 && result.out == "")
            #expect(result.err == "gzstream: a cache KEY must be UTF-8 text\n" + cacheTryHelpLine)
        }
    }

    @Test("gzip mode: a file named cache is given as ./cache or after --", .requires(.gzip))
    func fileNamedCache() async throws {
        try await withAsyncScratch { scratch in
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
        try await withAsyncScratch { scratch in
            let cache = try CacheUnderTest(scratch, encrypted: encrypted)
            let first = size > (1 << 20) ? sampleText(byteCount: size, seed: 5) : randomBytes(count: size, seed: UInt64(size))
            let second = randomBytes(count: size, seed: UInt64(size) + 99)
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
        try await withAsyncScratch { scratch in
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
        try await withAsyncScratch { scratch in
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
        try await withAsyncScratch { scratch in
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

}

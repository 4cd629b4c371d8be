import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers for tests that run the real `gzstream` binary (and gzip, pigz, bgzip, sh, script)
// as child processes, each in its own temporary directory.

// MARK: Where things are

enum Locations {
    /// The package root, found from this file: `<repo>/Tests/GZStreamCLITests/Support.swift`.
    static let repository: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let fixtures: URL = repository.appendingPathComponent("fixtures")

    /// The built `gzstream`: `$GZSTREAM_BIN`, else the `gzstream` next to the test bundle, else
    /// `<repo>/.build/debug/gzstream`.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["GZSTREAM_BIN"], !path.isEmpty { return path }
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL {
            var directory = executable.deletingLastPathComponent()
            candidates.append(directory.appendingPathComponent("gzstream"))
            // Inside an `.xctest` bundle (Darwin): <dir>/X.xctest/Contents/MacOS/X.
            while directory.path != "/" {
                if directory.pathExtension == "xctest" {
                    candidates.append(directory.deletingLastPathComponent().appendingPathComponent("gzstream"))
                    break
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent().appendingPathComponent("gzstream"))
        }
        candidates.append(repository.appendingPathComponent(".build/debug/gzstream"))
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return (found ?? candidates.last!).path
    }()

    /// The absolute path of a command such as `pigz`, or `nil` when it is not installed.
    static func tool(_ name: String) -> String? {
        for directory in ["/usr/bin", "/bin", "/usr/local/bin"] {
            let path = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }
}

/// A program that tests compare against or drive, and the Debian package that installs it.
/// `make test` run as root (as in CI) installs every one; for anyone else a test that needs a
/// missing one is skipped, and says which and why (`.requires(.pigz)`), rather than passing
/// unchecked.
struct Tool: Sendable {
    var name: String
    var debianPackage: String

    /// The executable, or `nil` when it is not installed (``Locations/tool(_:)``).
    var path: String? { Locations.tool(name) }

    static let gzip = Tool(name: "gzip", debianPackage: "gzip")
    static let pigz = Tool(name: "pigz", debianPackage: "pigz")
    static let bgzip = Tool(name: "bgzip", debianPackage: "tabix")
    static let python3 = Tool(name: "python3", debianPackage: "python3")
    static let tar = Tool(name: "tar", debianPackage: "tar")
    /// util-linux's, for a pseudo-terminal.
    static let script = Tool(name: "script", debianPackage: "bsdutils")
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where `tool` is installed; elsewhere it is reported as skipped, with
    /// the tool and its Debian package named.
    static func requires(_ tool: Tool) -> Self {
        .enabled(if: tool.path != nil, Comment(rawValue: "needs \(tool.name), which is not installed (Debian package: \(tool.debianPackage))"))
    }
}

// MARK: A temporary directory per test

/// A fresh directory `<tmp>/gzstream-cli-<UUID>` with `work/` (where the commands run and
/// which tests list) and `io/` (captured standard output and error). Removed by `remove()`.
final class Scratch: Sendable {
    let root: URL
    let work: URL
    let io: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("gzstream-cli-\(UUID().uuidString)")
        work = root.appendingPathComponent("work")
        io = root.appendingPathComponent("io")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
    }

    func remove() {
        // A test may have made something read-only; make it removable first.
        _ = chmod(work.path, 0o755)
        try? FileManager.default.removeItem(at: root)
    }

    /// A path in `work/`.
    func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    /// A path in `io/` that nothing else uses.
    func ioPath(_ label: String) -> String { io.appendingPathComponent("\(label)-\(UUID().uuidString)").path }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = self.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Array(text.utf8))
    }

    func read(_ name: String) throws -> [UInt8] {
        try readBytes(path(name))
    }

    /// The names in `work/`, hidden ones included, sorted.
    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
    }

    func exists(_ name: String) -> Bool {
        var info = stat()
        return lstat(path(name), &info) == 0
    }

    /// Copies a fixture into `work/` under `name`.
    @discardableResult
    func copyFixture(_ relativePath: String, as name: String) throws -> String {
        let destination = path(name)
        try FileManager.default.copyItem(atPath: Locations.fixtures.appendingPathComponent(relativePath).path,
                                         toPath: destination)
        return destination
    }
}

/// Runs `body` with a fresh scratch directory and removes it afterwards.
func withScratch<T>(_ body: (Scratch) throws -> T) throws -> T {
    let scratch = try Scratch()
    defer { scratch.remove() }
    return try body(scratch)
}

func readBytes(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

// MARK: Running processes

/// How a child process ended and what it wrote.
struct RunResult: CustomStringConvertible {
    /// The exit status, or 128 + the signal number when a signal ended it.
    var status: Int32
    /// The signal that ended it, if one did.
    var signal: Int32?
    var stdout: [UInt8]
    var stderr: [UInt8]
    var timedOut: Bool

    var out: String { String(decoding: stdout, as: UTF8.self) }
    var err: String { String(decoding: stderr, as: UTF8.self) }
    var errLines: [Substring] { err.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }

    var description: String {
        "status \(status)\(signal.map { " (signal \($0))" } ?? "")\(timedOut ? " TIMED OUT" : ""), "
            + "stdout \(stdout.count) bytes \(String(out.prefix(200)).debugDescription), stderr \(err.debugDescription)"
    }
}

/// Where a child's standard input comes from.
enum Input {
    case null
    case file(String)
    case bytes([UInt8])
}

/// Runs `executable` with `arguments` in `directory` and waits for it (at most `timeout`
/// seconds, then SIGKILL and `timedOut`). Standard input is `/dev/null`, a file or given bytes
/// (written to a file first): never the terminal. Standard output goes to `stdoutPath` when
/// given (and `stdout` is then empty), else it is captured through a file in `io/`, as is
/// standard error.
func run(_ executable: String, _ arguments: [String], in scratch: Scratch, directory: URL? = nil,
         input: Input = .null, stdoutPath: String? = nil, timeout: Double = 120) throws -> RunResult {
    try StartedProcess(executable, arguments, in: scratch, directory: directory, input: input,
                       stdoutPath: stdoutPath).finish(timeout: timeout)
}

/// A child started as ``run(_:_:in:directory:input:stdoutPath:timeout:)`` starts one, left
/// running while the test does something else (connects to it, reads its standard error).
struct StartedProcess {
    let process: Process
    /// Where its standard error goes; readable while it runs.
    let errPath: String
    private let capturedOut: String?

    init(_ executable: String, _ arguments: [String], in scratch: Scratch, directory: URL? = nil,
         input: Input = .null, stdoutPath: String? = nil) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory ?? scratch.work

        let inputPath: String
        switch input {
        case .null: inputPath = "/dev/null"
        case .file(let path): inputPath = path
        case .bytes(let bytes):
            inputPath = scratch.ioPath("stdin")
            try Data(bytes).write(to: URL(fileURLWithPath: inputPath))
        }
        guard let stdin = FileHandle(forReadingAtPath: inputPath) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: inputPath])
        }
        capturedOut = stdoutPath == nil ? scratch.ioPath("stdout") : nil
        let outPath = stdoutPath ?? capturedOut!
        errPath = scratch.ioPath("stderr")
        if stdoutPath == nil || !FileManager.default.fileExists(atPath: outPath) {
            _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        }
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        guard let stdout = FileHandle(forWritingAtPath: outPath), let stderr = FileHandle(forWritingAtPath: errPath) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: outPath])
        }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try withDefaultSignalMask { try process.run() }
        try? stdin.close()
        try? stdout.close()
        try? stderr.close()
    }

    /// Waits for the child (at most `timeout` seconds, then SIGKILL) and collects what it wrote.
    func finish(timeout: Double = 120) throws -> RunResult {
        let timedOut = waitForExit(process, timeout: timeout)
        let signal: Int32? = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return RunResult(status: signal.map { 128 + $0 } ?? process.terminationStatus,
                         signal: signal,
                         stdout: try capturedOut.map(readBytes) ?? [],
                         stderr: try readBytes(errPath),
                         timedOut: timedOut)
    }
}

/// Runs `body` (which starts a child) with no signal blocked in the calling thread, so the child
/// starts as it would from a shell. Swift's worker threads block SIGINT, SIGTERM, SIGHUP and
/// others, and `posix_spawn` hands the caller's mask to the child.
func withDefaultSignalMask<T>(_ body: () throws -> T) rethrows -> T {
    var empty = sigset_t()
    var saved = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &saved)
    defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
    return try body()
}

/// Waits for `process`; after `timeout` seconds kills it. - Returns: whether it timed out.
func waitForExit(_ process: Process, timeout: Double) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    var timedOut = false
    while process.isRunning {
        if !timedOut && Date() > deadline {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
        }
        usleep(2_000)
    }
    process.waitUntilExit()
    return timedOut
}

/// Runs the `gzstream` under test.
func gzstream(_ arguments: [String], in scratch: Scratch, input: Input = .null, stdoutPath: String? = nil,
              timeout: Double = 120) throws -> RunResult {
    try run(Locations.binary, arguments, in: scratch, input: input, stdoutPath: stdoutPath, timeout: timeout)
}

/// Runs a `/bin/sh -c` script; `$0` is the `gzstream` binary, `$1`… are `arguments`.
func shell(_ script: String, _ arguments: [String] = [], in scratch: Scratch, timeout: Double = 120) throws -> RunResult {
    try run("/bin/sh", ["-c", script, Locations.binary] + arguments, in: scratch, timeout: timeout)
}

/// What SIGPIPE does to the commands a pipeline test starts. Stated by every test that
/// writes into a closed pipe: the test process may ignore SIGPIPE (the ByteStreams tests do, to
/// get EPIPE) and its children inherit that, and a shell cannot reset a signal that was
/// ignored when it started.
enum BrokenPipeSignal {
    /// The default action, as from a login shell: through `env --default-signal=PIPE`
    /// (GNU coreutils 8.31 and later).
    case fatal
    /// Ignored, as after `trap '' PIPE` in the caller's shell.
    case ignored

    /// What `echo $?` prints after gzstream wrote into a closed pipe: killed by SIGPIPE (141),
    /// or exit 1 when it was ignored.
    var statusLine: String { self == .fatal ? "141\n" : "1\n" }

    /// What gzstream says on stderr about `target`, the closed output: nothing when it dies of
    /// SIGPIPE, GNU gzip's one line when SIGPIPE is ignored.
    func message(naming target: String) -> String {
        self == .fatal ? "" : "gzstream: \(target): Broken pipe\n"
    }
}

/// How a `gzstream` whose standard output is a closed pipe ended.
struct ClosedPipeRun: CustomStringConvertible {
    /// `$?` as `/bin/sh` saw it, with its newline: `141\n` when SIGPIPE ended the process.
    var status: String
    /// What gzstream wrote to standard error.
    var err: String
    /// How the whole pipeline ended.
    var pipeline: RunResult

    var description: String { "gzstream status \(status.debugDescription), stderr \(err.debugDescription); \(pipeline)" }
}

/// Runs `gzstream COMMAND` (`COMMAND` is split into words by `/bin/sh`) with standard output a
/// pipe whose reader goes away: `head -c 10` reading 10 bytes, or, with `readerGoneFirst`, a
/// reader that closes the pipe before gzstream starts (for outputs that a pipe's buffer holds
/// whole, such as `--help`). Either way the write that fails is certain, not a race.
func gzstreamIntoClosedPipe(_ command: String, sigpipe: BrokenPipeSignal, readerGoneFirst: Bool = false,
                            in scratch: Scratch, timeout: Double = 60) throws -> ClosedPipeRun {
    let errPath = scratch.ioPath("closed-pipe-stderr")
    let statusPath = scratch.ioPath("closed-pipe-status")
    let writer = #"{ "$0" "# + command + #" 2>"$1"; echo $? >"$2"; }"#
    var script = readerGoneFirst
        // The reader closes its end, then lets the writer start through a FIFO.
        ? #"mkfifo "$3" && "# + writer.replacingOccurrences(of: "{ ", with: #"{ read ready <"$3"; "#)
            + #" | { exec <&-; echo >"$3"; }"#
        : writer + " | head -c 10 >/dev/null"
    if sigpipe == .ignored { script = "trap '' PIPE; " + script }
    let arguments = ["-c", script, Locations.binary, errPath, statusPath, scratch.ioPath("closed-pipe-ready")]
    let pipeline = sigpipe == .fatal
        ? try run("/usr/bin/env", ["--default-signal=PIPE", "/bin/sh"] + arguments, in: scratch, timeout: timeout)
        : try run("/bin/sh", arguments, in: scratch, timeout: timeout)
    let status = (try? String(contentsOfFile: statusPath, encoding: .utf8)) ?? ""
    let err = (try? readBytes(errPath)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    return ClosedPipeRun(status: status, err: err, pipeline: pipeline)
}

/// Whether the binary under test starts under a file size limit (`ulimit -f`). A build under
/// the thread sanitizer cannot (its runtime dies of SIGBUS); that is recorded as a warning and
/// the caller's test has nothing to learn. Ordinary builds always can.
func runsUnderFileSizeLimit(in scratch: Scratch) throws -> Bool {
    let probe = try shell(#"trap '' XFSZ; ulimit -f 64; echo hi | "$0" pack -c > /dev/null"#, in: scratch)
    if probe.status != 0 {
        Issue.record("gzstream cannot run under a file size limit here: \(probe)", severity: .warning)
    }
    return probe.status == 0
}

/// `gzip -dc FILE`: the bytes GNU gzip reads from `path`, or `nil` (recorded) when it fails.
func gunzip(_ path: String, in scratch: Scratch) throws -> [UInt8]? {
    let result = try run("/usr/bin/gzip", ["-dc", path], in: scratch)
    #expect(result.status == 0 && result.stderr.isEmpty, "gzip -dc \(path): \(result)")
    return result.status == 0 ? result.stdout : nil
}

// MARK: Checksums and data

/// The SHA-256 of a file as `/usr/bin/sha256sum` prints it (lowercase hex).
func sha256(ofFile path: String, in scratch: Scratch) throws -> String {
    let result = try run("/usr/bin/sha256sum", ["-b", path], in: scratch)
    #expect(result.status == 0, "sha256sum \(path): \(result)")
    return String(result.out.prefix { $0 != " " })
}

func sha256(of bytes: [UInt8], in scratch: Scratch) throws -> String {
    let path = scratch.ioPath("hash-input")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return try sha256(ofFile: path, in: scratch)
}

/// A seeded generator (SplitMix64): big inputs are made, never committed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Compressible text: lines of words drawn from a small vocabulary.
func sampleText(byteCount: Int, seed: UInt64 = 1) -> [UInt8] {
    let words = ["stream", "gzip", "member", "header", "trailer", "deflate", "window", "chunk", "level",
                 "inflate", "crc", "isize", "mtime", "fname", "block", "sync", "flush", "byte", "zlib", "pipe"]
        .map { Array($0.utf8) }
    var generator = SeededGenerator(seed: seed)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(byteCount + 16)
    var column = 0
    while bytes.count < byteCount {
        let word = words[Int(generator.next() % UInt64(words.count))]
        bytes += word
        column += word.count + 1
        if column > 60 { bytes.append(0x0A); column = 0 } else { bytes.append(0x20) }
    }
    return Array(bytes.prefix(byteCount))
}

/// Incompressible bytes.
func randomBytes(byteCount: Int, seed: UInt64 = 2) -> [UInt8] {
    var generator = SeededGenerator(seed: seed)
    var bytes = [UInt8](repeating: 0, count: byteCount)
    var index = 0
    while index < byteCount {
        var word = generator.next()
        for _ in 0..<8 where index < byteCount {
            bytes[index] = UInt8(truncatingIfNeeded: word)
            word >>= 8
            index += 1
        }
    }
    return bytes
}

// MARK: Files and headers

struct FileStatus {
    var mode: mode_t
    var modificationSeconds: Int
    var modificationNanoseconds: Int
    var size: Int64
    var permissions: mode_t { mode & 0o7777 }
}

func fileStatus(_ path: String) -> FileStatus? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return FileStatus(mode: info.st_mode, modificationSeconds: Int(info.st_mtim.tv_sec),
                      modificationNanoseconds: Int(info.st_mtim.tv_nsec), size: Int64(info.st_size))
}

/// Sets the access and modification times of `path` (seconds and nanoseconds since 1970).
func setModificationTime(_ path: String, seconds: Int, nanoseconds: Int = 0) {
    var times = [timespec(tv_sec: time_t(seconds), tv_nsec: nanoseconds),
                 timespec(tv_sec: time_t(seconds), tv_nsec: nanoseconds)]
    let result = utimensat(AT_FDCWD, path, &times, 0)
    precondition(result == 0, "utimensat \(path)")
}

/// The process's umask, read without changing it (from `/proc/self/status`; 022 elsewhere).
func currentUmask() -> mode_t {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
          let value = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
    else { return 0o022 }
    return value
}

/// The fixed fields of a gzip member header and its FNAME (RFC 1952 §2.3).
struct HeaderFields: Equatable {
    var flags: UInt8
    var modificationTime: UInt32
    var fileName: String?
}

func headerFields(_ bytes: [UInt8]) -> HeaderFields? {
    guard bytes.count >= 10, bytes[0] == 0x1F, bytes[1] == 0x8B, bytes[2] == 8 else { return nil }
    let flags = bytes[3]
    let mtime = UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
    var index = 10
    if flags & 0x04 != 0 {
        guard bytes.count >= 12 else { return nil }
        index += 2 + (Int(bytes[10]) | Int(bytes[11]) << 8)
    }
    var name: String?
    if flags & 0x08 != 0 {
        guard let end = bytes[min(index, bytes.count)...].firstIndex(of: 0) else { return nil }
        name = String(decoding: bytes[index..<end], as: UTF8.self)
    }
    return HeaderFields(flags: flags, modificationTime: mtime, fileName: name)
}

/// The usage lines that follow every `gzstream: Error: …` line.
let usageLines = """
Usage: gzstream [-cdfklnNqrtv0-9] [-S SUF] [FILE ...]  (as gzip)
       gzstream pack [OPTIONS] [FILE ...]
       gzstream unpack [OPTIONS] [FILE ...]
       gzstream test [OPTIONS] [FILE ...]
       gzstream list [--json] [FILE ...]
       gzstream index [-f] FILE.gz ...
       gzstream send [OPTIONS] HOST:PORT [FILE]
       gzstream receive [OPTIONS] [HOST:]PORT [-o FILE]
       gzstream cache put|get|list|remove|clear|prune [OPTIONS] [KEY] [FILE]
Try 'gzstream --help' for more information.

"""

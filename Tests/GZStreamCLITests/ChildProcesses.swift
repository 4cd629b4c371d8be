import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Running the `gzstream` under test, shells and other tools as child processes of a test, each
// in a scratch directory, with what they write captured in files.

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

/// ``run(_:_:in:directory:input:stdoutPath:timeout:)``, awaiting the child (polled every 2 ms
/// with `Task.sleep`) instead of blocking the calling thread; killed after `timeout` seconds.
/// For a test that must keep a thread free while its children run: one racing them, say.
func runAsync(_ executable: String, _ arguments: [String], in scratch: Scratch, input: Input = .null,
              stdoutPath: String? = nil, timeout: Double = 120) async throws -> RunResult {
    let started = try StartedProcess(executable, arguments, in: scratch, input: input, stdoutPath: stdoutPath)
    return try await finishAsync(started, timeout: timeout)
}

/// Awaits a started child (polled every 2 ms with `Task.sleep`); kills it after `timeout`
/// seconds.
func finishAsync(_ started: StartedProcess, timeout: Double = 120) async throws -> RunResult {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while started.process.isRunning && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(2))
    }
    return try started.finish(timeout: 0)
}

/// ``runAsync(_:_:in:input:stdoutPath:timeout:)`` of the `gzstream` under test.
func gzstreamAsync(_ arguments: [String], in scratch: Scratch, input: Input = .null,
                   stdoutPath: String? = nil) async throws -> RunResult {
    try await runAsync(Locations.binary, arguments, in: scratch, input: input, stdoutPath: stdoutPath)
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

/// Whether the binary under test starts under a file size limit (`ulimit -f`), probed once.
/// A build under the thread sanitizer cannot (its runtime dies of SIGBUS); ordinary builds can.
let binaryRunsUnderFileSizeLimit: Bool = {
    guard let scratch = try? Scratch() else { return false }
    defer { scratch.remove() }
    let probe = try? shell(#"trap '' XFSZ; ulimit -f 64; echo hi | "$0" pack -c > /dev/null"#, in: scratch)
    return probe?.status == 0
}()

extension Trait where Self == ConditionTrait {
    /// Runs the test only where the binary starts under a file size limit; elsewhere it is
    /// reported as skipped, saying why, rather than passing with nothing checked.
    static var needsFileSizeLimit: Self {
        .enabled(if: binaryRunsUnderFileSizeLimit,
                 "gzstream cannot start under a file size limit (ulimit -f) here: a thread-sanitizer build's runtime dies of SIGBUS")
    }
}

/// `gzip -dc FILE`: the bytes GNU gzip reads from `path`, or `nil` (recorded) when it fails.
func gunzip(_ path: String, in scratch: Scratch) throws -> [UInt8]? {
    let result = try run("/usr/bin/gzip", ["-dc", path], in: scratch)
    #expect(result.status == 0 && result.stderr.isEmpty, "gzip -dc \(path): \(result)")
    return result.status == 0 ? result.stdout : nil
}

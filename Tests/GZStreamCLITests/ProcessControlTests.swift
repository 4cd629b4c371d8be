import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Quotes `text` for `/bin/sh`.
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}

/// Runs a shell command line with a pseudo-terminal as its standard input, output and error:
/// util-linux `script`, or Python's `pty` module where `script` is missing. Redirections in
/// `command` replace the terminal where the test needs the bytes. - Returns: the command's status.
func runOnTerminal(_ command: String, in scratch: Scratch) throws -> RunResult {
    if let script = Tool.script.path {
        return try run(script, ["-qec", command, "/dev/null"], in: scratch, timeout: 30)
    }
    Issue.record("script(1) is not installed: using python3's pty module", severity: .warning)
    let python = #"import os, pty, sys; status = pty.spawn(["/bin/sh", "-c", sys.argv[1]]); sys.exit(os.waitstatus_to_exitcode(status))"#
    return try run("/usr/bin/env", ["python3", "-c", python, command], in: scratch, timeout: 30)
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where ``runOnTerminal(_:in:)`` can make a pseudo-terminal; elsewhere
    /// it is reported as skipped, saying what is missing.
    static var needsPseudoTerminal: Self {
        .enabled(if: Tool.script.path != nil || Tool.python3.path != nil,
                 "needs script (Debian package: bsdutils) or python3 for a pseudo-terminal; neither is installed")
    }
}

/// Makes a Foundation file handle for a child's standard stream.
private func handle(_ path: String, writing: Bool) -> FileHandle? {
    if writing && !FileManager.default.fileExists(atPath: path) {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
    }
    return writing ? FileHandle(forWritingAtPath: path) : FileHandle(forReadingAtPath: path)
}

/// Starts a writer that feeds the FIFO `fifo` slowly (64 KiB of random bytes every 50 ms,
/// after the bytes of the file `prefix` when given, gzipped when asked) until its reader is gone.
private func startSlowWriter(into fifo: String, gzipped: Bool, prefix: String? = nil) throws -> Process {
    let feed = #"{ if [ -n "$1" ]; then cat "$1"; fi; while :; do head -c 65536 /dev/urandom || exit 1; sleep 0.05; done; }"#
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: "/bin/sh")
    writer.arguments = ["-c", #"exec >"$0"; "# + feed + (gzipped ? " | /usr/bin/gzip -1" : ""), fifo, prefix ?? ""]
    writer.standardInput = handle("/dev/null", writing: false)
    writer.standardOutput = handle("/dev/null", writing: true)
    writer.standardError = handle("/dev/null", writing: true)
    try withDefaultSignalMask { try writer.run() }
    return writer
}

/// Starts gzstream in the scratch directory, standard output to a new file and standard error
/// to `errorPath`. SIGPIPE and SIGXFSZ get their default action first (`env --default-signal`,
/// which then executes gzstream in the same process), as from a login shell: the test process
/// may ignore them, and a child inherits that.
private func startGzstream(_ arguments: [String], in scratch: Scratch, errorPath: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["--default-signal=PIPE,XFSZ", Locations.binary] + arguments
    process.currentDirectoryURL = scratch.work
    process.standardInput = handle("/dev/null", writing: false)
    process.standardOutput = handle(scratch.ioPath("stdout"), writing: true)
    process.standardError = handle(errorPath, writing: true)
    try withDefaultSignalMask { try process.run() }
    return process
}

/// Kills `process` if it still runs, and waits for it.
private func stop(_ process: Process) {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    _ = waitForExit(process, timeout: 10)
}

@Suite("gzstream under signals and on terminals", .onDedicatedThreads)
struct ProcessControlTests {
    /// GNU gzip's: every signal whose default action ends the process and that it catches.
    /// SIGPIPE and SIGXFSZ are sent by another process here (`kill`), not by a failed write.
    @Test("a signal during a file-mode run removes the temporary files and leaves no output", .requires(.gzip),
          .timeLimit(.minutes(1)), arguments: ["pack", "unpack", "pack --bgzf --index"],
          [SIGINT, SIGTERM, SIGHUP, SIGXCPU, SIGPIPE, SIGXFSZ])
    func interrupted(command: String, signalNumber: Int32) throws {
        // pack --bgzf --index writes two temporary files: the output and its index.
        let words = command.split(separator: " ").map(String.init)
        let mode = words[0]
        let temporaryCount = words.contains("--index") ? 2 : 1
        try withScratch { scratch in
            // The input is a FIFO (hence -f, and -o: file mode passes a FIFO over) that a slow
            // writer feeds: 64 KiB every 50 ms, gzipped for unpack, until the reader is gone.
            let name = mode == "pack" ? "fifo" : "fifo.gz"
            let temporaryPrefix = ".gzstream-"
            let fifo = scratch.path(name)
            #expect(mkfifo(fifo, 0o644) == 0)
            let writer = try startSlowWriter(into: fifo, gzipped: mode != "pack")
            defer { stop(writer) }
            let errPath = scratch.ioPath("stderr")
            let packer = try startGzstream(words + ["-f", "-o", mode == "pack" ? "fifo.gz" : "fifo", name], in: scratch,
                                       errorPath: errPath)
            defer { stop(packer) }

            let temporaries = awaitTemporaries(in: scratch.path(""), prefix: temporaryPrefix, count: temporaryCount, of: packer)
            let listing = try scratch.listing()
            try #require(temporaries.count == temporaryCount, "not every temporary file appeared: \(listing)")
            usleep(300_000) // let some data through
            #expect(packer.isRunning)
            kill(packer.processIdentifier, signalNumber)
            let timedOut = waitForExit(packer, timeout: 20)
            #expect(!timedOut)
            #expect(packer.terminationReason == .uncaughtSignal)
            #expect(packer.terminationStatus == signalNumber)
            #expect(try scratch.listing() == [name])
            #expect(try readBytes(errPath) == [])
        }
    }

    /// The member is written under a temporary name in its directory, which the extractor
    /// (a library) cannot remove when a signal ends the process: the CLI registers it.
    @Test("a signal while unpack --extract writes a member removes its temporary file", .requires(.gzip),
          .requires(.python3), .timeLimit(.minutes(1)), arguments: [SIGINT, SIGTERM])
    func interruptedExtraction(signalNumber: Int32) throws {
        try withScratch { scratch in
            // One tar header of a 1 GiB member, then random bytes as its data, slowly, gzipped.
            let header = try run(Tool.python3.path!, ["-c", """
                import sys, tarfile
                info = tarfile.TarInfo("big")
                info.size = 1 << 30
                sys.stdout.buffer.write(info.tobuf(format=tarfile.USTAR_FORMAT))
                """], in: scratch)
            #expect(header.status == 0 && header.stdout.count == 512)
            try scratch.write("header", header.stdout)
            let fifo = scratch.path("a.tar.gz")
            #expect(mkfifo(fifo, 0o644) == 0)
            try FileManager.default.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: false)
            let writer = try startSlowWriter(into: fifo, gzipped: true, prefix: scratch.path("header"))
            defer { stop(writer) }
            let errPath = scratch.ioPath("stderr")
            let extractor = try startGzstream(["unpack", "--extract", "-f", "a.tar.gz", "-C", "d"], in: scratch, errorPath: errPath)
            defer { stop(extractor) }
            let temporaries = awaitTemporaries(in: scratch.path("d"), prefix: ".gzstream-", of: extractor)
            try #require(temporaries.count == 1, "no temporary file appeared")
            usleep(300_000) // let some data through
            #expect(extractor.isRunning)
            kill(extractor.processIdentifier, signalNumber)
            #expect(!waitForExit(extractor, timeout: 20))
            #expect(extractor.terminationReason == .uncaughtSignal)
            #expect(extractor.terminationStatus == signalNumber)
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("d")) == [])
        }
    }

    /// A signal that arrives while the `openat(2)` creating a member's temporary file runs is
    /// handled as that call returns: before the fix, before the file was registered, which left
    /// it behind in about two of three interrupted extractions of many small members.
    @Test("a signal at any point of an extraction of many small members leaves no temporary file",
          .requires(.python3), .timeLimit(.minutes(2)), arguments: [SIGINT, SIGTERM])
    func interruptedSmallMembers(signalNumber: Int32) throws {
        try withScratch { scratch in
            let made = try run(Tool.python3.path!, ["-c", """
                import io, tarfile
                with tarfile.open("many.tar.gz", "w:gz", compresslevel=1) as t:
                    for n in range(6000):
                        data = (b"%d\\n" % n) * 3
                        info = tarfile.TarInfo("d%d/f%d" % (n % 50, n)); info.size = len(data)
                        t.addfile(info, io.BytesIO(data))
                """], in: scratch)
            #expect(made.status == 0, "\(made)")
            for round in 0..<6 {
                let directory = "x\(round)"
                try FileManager.default.createDirectory(atPath: scratch.path(directory), withIntermediateDirectories: false)
                let errPath = scratch.ioPath("stderr\(round)")
                let extractor = try startGzstream(["unpack", "--extract", "many.tar.gz", "-C", directory], in: scratch,
                                                  errorPath: errPath)
                defer { stop(extractor) }
                // Some members in, then the signal, at a point that differs from round to round.
                _ = awaitTemporaries(in: scratch.path(directory), prefix: "d", count: 3 + 7 * round, of: extractor)
                guard extractor.isRunning else { continue }
                kill(extractor.processIdentifier, signalNumber)
                #expect(!waitForExit(extractor, timeout: 20))
                let left = (FileManager.default.enumerator(atPath: scratch.path(directory))?.allObjects as? [String] ?? [])
                    .filter { $0.split(separator: "/").last?.hasPrefix(".gzstream-") == true }
                #expect(left.isEmpty, "round \(round): \(left)")
            }
        }
    }

    @Test("a signal during cache put removes the entry's temporary file and stores nothing",
          .timeLimit(.minutes(1)), arguments: [SIGINT, SIGTERM])
    func interruptedCachePut(signalNumber: Int32) throws {
        try withScratch { scratch in
            let fifo = scratch.path("fifo")
            let cacheDirectory = scratch.path("cache")
            #expect(mkfifo(fifo, 0o644) == 0)
            let writer = try startSlowWriter(into: fifo, gzipped: false)
            defer { stop(writer) }
            let errPath = scratch.ioPath("stderr")
            let putter = try startGzstream(["cache", "put", "--dir", cacheDirectory, "key", fifo], in: scratch, errorPath: errPath)
            defer { stop(putter) }
            let temporaries = awaitTemporaries(in: cacheDirectory, prefix: ".tmp-", of: putter)
            try #require(temporaries.count == 1, "no temporary entry appeared")
            usleep(300_000) // let some data through
            #expect(putter.isRunning)
            kill(putter.processIdentifier, signalNumber)
            #expect(!waitForExit(putter, timeout: 20))
            #expect(putter.terminationReason == .uncaughtSignal)
            #expect(putter.terminationStatus == signalNumber)
            #expect(try FileManager.default.contentsOfDirectory(atPath: cacheDirectory) == [])
            #expect(try readBytes(errPath) == [])
        }
    }

    static let packRefusal = "gzstream: standard output: compressed data not written to a terminal (use -f to force)\n"
    static let unpackRefusal = "gzstream: standard input: compressed data not read from a terminal (use -f to force)\n"

    @Test("compressed data is neither written to nor read from a terminal without -f", .needsPseudoTerminal, arguments: [
        ("pack", packRefusal),
        ("pack -c plain", packRefusal),
        ("pack - <plain", packRefusal),
        ("unpack >OUT", unpackRefusal),
        ("unpack -c - >OUT", unpackRefusal),
        ("unpack -o target", unpackRefusal),
    ])
    func terminalRefused(command: String, message: String) throws {
        try withScratch { scratch in
            try scratch.write("plain", "plain\n")
            let out = scratch.ioPath("out")
            let err = scratch.ioPath("err")
            let line = shellQuoted(Locations.binary) + " " + command.replacingOccurrences(of: "OUT", with: shellQuoted(out))
                + " 2>" + shellQuoted(err)
            let result = try runOnTerminal(line, in: scratch)
            #expect(result.status == 1 && !result.timedOut, "\(result)")
            #expect(try String(contentsOfFile: err, encoding: .utf8) == message)
            #expect(try (FileManager.default.fileExists(atPath: out) ? readBytes(out) : []) == [])
            #expect(try scratch.listing() == ["plain"])
        }
    }

    @Test("a terminal is fine where no compressed data crosses it, or with -f", .needsPseudoTerminal, .requires(.gzip), arguments: [
        "pack -f <plain",          // -f: compressed data to the terminal
        "pack -o made.gz <plain",  // output is a file
        "pack plain",              // output is a file
        "unpack <plain.gz",        // plain data to the terminal
        "unpack plain.gz",         // input is a file, not the terminal
    ])
    func terminalAllowed(command: String) throws {
        try withScratch { scratch in
            try scratch.write("plain", "plain\n")
            #expect(try run("/usr/bin/gzip", ["-k", "plain"], in: scratch).status == 0)
            if command == "unpack plain.gz" { try FileManager.default.removeItem(atPath: scratch.path("plain")) }
            if command == "pack plain" { try FileManager.default.removeItem(atPath: scratch.path("plain.gz")) }
            let err = scratch.ioPath("err")
            let line = shellQuoted(Locations.binary) + " " + command + " 2>" + shellQuoted(err)
            let result = try runOnTerminal(line, in: scratch)
            #expect(result.status == 0 && !result.timedOut, "\(result)")
            #expect(try String(contentsOfFile: err, encoding: .utf8) == "")
            if command.contains("made.gz") {
                #expect(try gunzip(scratch.path("made.gz"), in: scratch) == Array("plain\n".utf8))
            }
            #expect(try scratch.read("plain") == Array("plain\n".utf8))
        }
    }

    @Test("unpack -f reads a terminal instead of refusing", .needsPseudoTerminal)
    func unpackForcedFromTerminal() throws {
        try withScratch { scratch in
            let err = scratch.ioPath("err")
            let line = shellQuoted(Locations.binary) + " unpack -f >/dev/null 2>" + shellQuoted(err)
            let result = try runOnTerminal(line, in: scratch)
            #expect(!result.timedOut, "\(result)")
            // The terminal gives end of input at once: not gzip, but no refusal either.
            let message = try String(contentsOfFile: err, encoding: .utf8)
            #expect(!message.contains("terminal"), "\(message)")
        }
    }
}

/// The names in `directory` that start with `prefix`, polled every 10 ms until there are
/// `count` of them, `process` has ended, or 20 s have passed (a directory not made yet counts
/// as empty).
private func awaitTemporaries(in directory: String, prefix: String, count: Int = 1, of process: Process) -> [String] {
    let deadline = Date().addingTimeInterval(20)
    while true {
        let found = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(prefix) }
        if found.count >= count || !process.isRunning || Date() >= deadline { return found }
        usleep(10_000)
    }
}

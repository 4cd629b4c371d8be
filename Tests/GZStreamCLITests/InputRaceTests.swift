import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// An input in a directory another user owns may be swapped for a symbolic link at any moment.
// Root runs gzstream there; the user `nobody` races it from a child process: the input must
// be looked up once (opened with O_NOFOLLOW, decided on by fstat, read from that descriptor),
// removed only while its name still names the file read, and `-r` must never leave its tree.

/// The unprivileged attacker's IDs (Debian's `nobody` and `nogroup`).
private let nobody: (uid: uid_t, gid: gid_t) = (65534, 65534)

extension Tool {
    /// util-linux's, to run the racing child as `nobody`.
    static let setpriv = Tool(name: "setpriv", debianPackage: "util-linux")
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only as root: the attacker is another user (`nobody`), and root-only files
    /// are what it must not get at.
    static var asRoot: Self {
        .enabled(if: geteuid() == 0, Comment(rawValue: "needs root: the attacker runs as nobody, against root-only files"))
    }
}

// MARK: Children awaited without holding a thread

/// `gzip -dc PATH`, awaited: the bytes GNU gzip reads from a published output.
private func gunzipAsync(_ path: String, in scratch: Scratch) async throws -> [UInt8]? {
    let result = try await runAsync("/usr/bin/gzip", ["-dc", path], in: scratch)
    #expect(result.status == 0 && result.stderr.isEmpty, "gzip -dc \(path): \(result)")
    return result.status == 0 ? result.stdout : nil
}

/// A Python program run as `nobody` (through `setpriv`), started and left racing: it writes
/// `ready` on its standard output once it watches what it races, and is killed by ``stop()``.
private struct Racer {
    let started: StartedProcess
    let outputPath: String

    init(_ program: String, _ arguments: [String], in scratch: Scratch) async throws {
        let programPath = scratch.ioPath("racer.py")
        try Data(program.utf8).write(to: URL(fileURLWithPath: programPath))
        chmod(programPath, 0o644)
        outputPath = scratch.ioPath("racer-out")
        started = try StartedProcess("/usr/bin/setpriv",
                                     ["--reuid=\(nobody.uid)", "--regid=\(nobody.gid)", "--clear-groups",
                                      "/usr/bin/python3", programPath] + arguments,
                                     in: scratch, stdoutPath: outputPath)
        let deadline = ContinuousClock.now + .seconds(30)
        while !output.hasPrefix("ready") {
            guard started.process.isRunning, ContinuousClock.now < deadline else {
                let result = try started.finish(timeout: 1)
                throw RacerFailed(description: "the racer did not start: \(result), output \(output.debugDescription)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// What it wrote so far.
    var output: String {
        (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// Kills it (it runs as nobody; this test started it, so its process ID is still its own
    /// until it is waited for) and waits for it.
    func stop() async throws {
        if started.process.isRunning { kill(started.process.processIdentifier, SIGKILL) }
        _ = try await finishAsync(started, timeout: 10)
    }
}

private struct RacerFailed: Error, CustomStringConvertible {
    var description: String
}

/// Swaps `DIR/evil` (a symbolic link) onto `DIR/input` as soon as anything else appears in
/// DIR: the temporary output gzstream creates. Reacts through inotify, so the swap lands
/// within microseconds of the temporary's creation. Exits after the one swap (or 60 s).
private let swapOnCreation = #"""
import ctypes, os, signal, struct, sys
signal.alarm(60)
directory = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
IN_CREATE, IN_MOVED_TO = 0x100, 0x80
if fd < 0 or libc.inotify_add_watch(fd, directory.encode(), IN_CREATE | IN_MOVED_TO) < 0:
    sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
print("ready", flush=True)
while True:
    events = os.read(fd, 65536)
    offset, fire = 0, False
    while offset < len(events):
        _, _, _, length = struct.unpack_from("iIII", events, offset)
        name = events[offset + 16:offset + 16 + length].rstrip(b"\0")
        offset += 16 + length
        fire = fire or name not in (b"evil", b"input")
    if fire:
        os.rename(os.path.join(directory, "evil"), os.path.join(directory, "input"))
        print("swapped", flush=True)
        break
"""#

/// Swaps `TREE/sub` (a directory) for `TREE/link` (a symbolic link to a directory outside
/// the tree) and back, over and over, until killed (or 120 s). Each state lasts 3 ms: long
/// enough for a walk that looks `TREE/sub/…` up again by path to go through the link (against
/// the old walk, half the files outside were packed and removed in each run), short enough
/// that every run sees both.
private let swapDirectoryForever = #"""
import os, signal, sys, time
signal.alarm(120)
tree = sys.argv[1]
sub, link, hold = (os.path.join(tree, name) for name in ("sub", "link", ".hold"))
print("ready", flush=True)
while True:
    try:
        os.rename(sub, hold)
        os.rename(link, sub)
        time.sleep(0.003)
        os.rename(sub, link)
        os.rename(hold, sub)
        time.sleep(0.003)
    except OSError:
        pass
"""#

// MARK: Files

/// Writes `bytes` to `path` with `mode` (exactly: the umask does not apply) and owner.
private func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t, owner: (uid_t, gid_t)) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    #expect(chmod(path, mode) == 0 && chown(path, owner.0, owner.1) == 0, "\(path)")
}

/// Makes the directory `path` with `mode` and owner.
private func makeDirectory(_ path: String, mode: mode_t = 0o755, owner: (uid_t, gid_t)) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    #expect(chmod(path, mode) == 0 && chown(path, owner.0, owner.1) == 0, "\(path)")
}

/// Makes the symbolic link `path` to `target`, owned by `owner` (as if that user made it).
private func makeLink(_ path: String, to target: String, owner: (uid_t, gid_t)) {
    #expect(symlink(target, path) == 0 && lchown(path, owner.0, owner.1) == 0, "\(path)")
}

/// Owner, group and permission bits of `path` itself (a link is not followed).
private func ownership(_ path: String) -> (uid_t, gid_t, mode_t)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return (info.st_uid, info.st_gid, info.st_mode & 0o7777)
}

private func names(in path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path).sorted()
}

/// Whether `haystack` holds `needle` anywhere.
private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}

extension AnotherUserRaces {
@Suite("Inputs looked up once: files swapped in another user's directory", .onDedicatedThreads, .serialized, .timeLimit(.minutes(10)))
struct InputRaceTests {
    static let secret = Array(String(repeating: "root-only secret 0600\n", count: 200).utf8)

    /// `scratch/secret`: root's, 0600, outside the attacker's directory.
    private func makeSecret(in scratch: Scratch) throws -> String {
        let path = scratch.path("secret")
        try writeFile(path, Self.secret, mode: 0o600, owner: (0, 0))
        return path
    }

    /// The secret is where it was, root's, 0600, with its bytes.
    private func expectSecretIntact(_ path: String) throws {
        let owner = try #require(ownership(path))
        #expect(owner.0 == 0 && owner.1 == 0 && owner.2 == 0o600, "the secret's owner and mode: \(owner)")
        #expect(try readBytes(path) == Self.secret)
    }

    @Test("An input swapped for a link to a root-only file when the temporary appears: never read or published (10 races)",
          .asRoot, .requires(.setpriv), .requires(.python3), .requires(.gzip))
    func inputSwappedWhenOutputAppears() async throws {
        try await withAsyncScratch { scratch in
            let secretPath = try makeSecret(in: scratch)
            let original = sampleText(byteCount: 200_000, seed: 17)
            var swaps = 0
            for round in 0..<10 {
                let directory = scratch.path("attack\(round)")
                try makeDirectory(directory, owner: nobody)
                try writeFile(directory + "/input", original, mode: 0o644, owner: nobody)
                makeLink(directory + "/evil", to: secretPath, owner: nobody)
                let racer = try await Racer(swapOnCreation, [directory], in: scratch)
                // gzip mode removes the input; the pack command keeps it.
                let gzipMode = round % 2 == 0
                let result = try await gzstreamAsync((gzipMode ? [] : ["pack", "-9"]) + ["attack\(round)/input"],
                                                     in: scratch)
                try await racer.stop()
                let swapped = racer.output.contains("swapped")
                if swapped { swaps += 1 }

                // Whatever landed when, what was published is the original, and only that.
                let published = try names(in: directory).filter { $0 != "input" && $0 != "evil" }
                #expect(published == ["input.gz"], "round \(round): \(published), \(result)")
                let unpacked = try await gunzipAsync(directory + "/input.gz", in: scratch)
                #expect(unpacked == original, "round \(round): the published output is not the input that was checked")
                #expect(!contains(unpacked ?? [], Array(Self.secret.prefix(40))), "round \(round): the secret was published")
                #expect(ownership(directory + "/input.gz").map { $0.0 == nobody.uid && $0.2 == 0o644 } == true,
                        "round \(round): the output has the input's owner and mode")
                try expectSecretIntact(secretPath)
                // The link put in the input's place is not removed: a warning says so.
                if gzipMode && swapped && result.status != 0 {
                    #expect(result.status == 2)
                    #expect(result.err == "gzstream: attack\(round)/input: was replaced after it was read -- not removed\n")
                    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory + "/input") == secretPath)
                } else {
                    #expect(result.status == 0 && result.err == "", "round \(round): \(result)")
                }
            }
            #expect(swaps > 0, "the racer never swapped the input")
        }
    }

    @Test("An input that is a link to a root-only file is refused without -f; nothing is written, the link stays",
          .asRoot, arguments: [[], ["pack"], ["pack", "-9", "--rm"], ["unpack"], ["-d"]])
    func inputIsLinkToSecret(command: [String]) async throws {
        try await withAsyncScratch { scratch in
            let secretPath = try makeSecret(in: scratch)
            let directory = scratch.path("attack")
            try makeDirectory(directory, owner: nobody)
            let name = command.contains("unpack") || command.contains("-d") ? "input.gz" : "input"
            makeLink(directory + "/" + name, to: secretPath, owner: nobody)
            let result = try await gzstreamAsync(command + ["attack/" + name], in: scratch)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == "gzstream: attack/\(name): is a symbolic link (use -f to follow it)\n")
            #expect(try names(in: directory) == [name])
            try expectSecretIntact(secretPath)
        }
    }

    @Test("-r while another user swaps a subdirectory for a link outside: nothing outside is packed or removed (8 runs)",
          .asRoot, .requires(.setpriv), .requires(.python3))
    func recursiveWalkStaysInTree() async throws {
        try await withAsyncScratch { scratch in
            let fileNames = (0..<30).map { $0 < 10 ? "f0\($0)" : "f\($0)" }
            for round in 0..<8 {
                let outside = scratch.path("outside\(round)")
                try makeDirectory(outside, owner: (0, 0))
                for name in fileNames {
                    try writeFile(outside + "/" + name, Array("outside \(name)\n".utf8), mode: 0o600, owner: (0, 0))
                }
                let tree = scratch.path("tree\(round)")
                try makeDirectory(tree, owner: nobody)
                try makeDirectory(tree + "/sub", owner: nobody)
                for name in fileNames {
                    try writeFile(tree + "/sub/" + name, sampleText(byteCount: 20_000, seed: UInt64(round)),
                                  mode: 0o644, owner: nobody)
                }
                makeLink(tree + "/link", to: outside, owner: nobody)
                let racer = try await Racer(swapDirectoryForever, [tree], in: scratch)
                // gzip mode: each file packed is removed.
                let result = try await gzstreamAsync(["-r", "tree\(round)"], in: scratch)
                try await racer.stop()

                #expect([0, 1, 2].contains(result.status), "round \(round): \(result)")
                // No file outside was read, packed or removed.
                for name in fileNames {
                    #expect((try? readBytes(outside + "/" + name)) == Array("outside \(name)\n".utf8),
                            "round \(round): \(name) outside the tree changed: \(result)")
                    #expect(ownership(outside + "/" + name).map { $0.0 == 0 && $0.2 == 0o600 } == true)
                }
                // No output was written outside either: an output beside a walked input is
                // created in the directory the input was read from, by its descriptor, so
                // "tree/sub/f.gz" is never looked up again through a swapped "sub".
                let outsideNames = try names(in: outside)
                #expect(outsideNames == fileNames, "round \(round): an output left the tree: \(result)")
                // Whatever the walk saw, each warning is about a path in the tree.
                for line in result.errLines {
                    #expect(line.hasPrefix("gzstream: tree\(round)/"), "round \(round): \(line)")
                }
            }
        }
    }

    @Test("--rm: a file put in the input's place while it is read is not removed: a warning, exit 2, output complete")
    func removalChecksTheName() async throws {
        try await withAsyncScratch { scratch in
            // Incompressible, so the output (about 1 MiB) cannot all fit in the pipe: gzstream
            // is still writing, long before it could remove anything, when the reader swaps the
            // name after the first byte, and the first byte comes after the input was opened.
            let original = randomBytes(count: 1 << 20, seed: 23)
            try FileManager.default.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: false)
            try scratch.write("d/input", original)
            try scratch.write("d/other", "another file\n")
            let script = #"""
                { "$0" pack --rm -o /dev/stdout d/input 2>err; echo $? >status; } |
                { dd bs=1 count=1 status=none >out.gz && mv d/other d/input && cat >>out.gz; }
                """#
            let result = try await runAsync("/bin/sh", ["-c", script, Locations.binary], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try String(contentsOfFile: scratch.path("status"), encoding: .utf8) == "2\n")
            #expect(try String(contentsOfFile: scratch.path("err"), encoding: .utf8)
                    == "gzstream: d/input: was replaced after it was read -- not removed\n")
            #expect(try names(in: scratch.path("d")) == ["input"])
            #expect(try scratch.read("d/input") == Array("another file\n".utf8))
            #expect(try await gunzipAsync(scratch.path("out.gz"), in: scratch) == original)
        }
    }
}
}

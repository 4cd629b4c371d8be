import ByteStreams
import Foundation
@testable import GZStreamCLI
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Root writing its output in a directory another user owns: that user may replace the
// temporary output with a symbolic link while it is written. Whatever gzstream then does to
// "its" file (owner, mode, times, publishing) must stay with the file it created.

/// The attacker's user and group: `nobody` and `nogroup` on Debian.
private let attackerID: UInt32 = 65534

/// `util-linux`'s, to run the racing child as another user.
private let setpriv = Tool(name: "setpriv", debianPackage: "util-linux")

extension Trait where Self == ConditionTrait {
    /// Runs the test only as root: only root can give a directory to another user and change
    /// the owner of what it writes; elsewhere the test is reported as skipped, saying so.
    static var needsRoot: Self {
        .enabled(if: geteuid() == 0, "needs root, to give a directory to nobody and write in it as root")
    }
}

/// The owner, group and permission bits of `path` itself (`lstat`), or `nil` when it is gone.
private func ownership(_ path: String) -> (owner: uid_t, group: gid_t, permissions: mode_t, isLink: Bool)? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return (info.st_uid, info.st_gid, info.st_mode & 0o7777, info.st_mode & S_IFMT == S_IFLNK)
}

/// A directory in `scratch` owned by the attacker, mode 0755, holding `input` (the attacker's,
/// mode 0666, `byteCount` bytes of seeded text), and beside it a root-only secret (0600).
private struct HostileDirectory {
    let directory: String
    let input: String
    let secret: String
    let secretBytes: [UInt8] = Array("root's secret, not to be given away\n".utf8)
    let inputBytes: [UInt8]

    init(in scratch: Scratch, byteCount: Int) throws {
        // The attacker must reach its directory whatever the umask made of these.
        #expect(chmod(scratch.root.path, 0o755) == 0 && chmod(scratch.work.path, 0o755) == 0)
        directory = scratch.path("attack")
        #expect(mkdir(directory, 0o755) == 0)
        #expect(chown(directory, attackerID, attackerID) == 0)
        #expect(chmod(directory, 0o755) == 0)
        inputBytes = sampleText(byteCount: byteCount, seed: 17)
        input = directory + "/input"
        try Data(inputBytes).write(to: URL(fileURLWithPath: input))
        #expect(chown(input, attackerID, attackerID) == 0)
        #expect(chmod(input, 0o666) == 0)
        secret = scratch.path("secret")
        try Data(secretBytes).write(to: URL(fileURLWithPath: secret))
        #expect(chmod(secret, 0o600) == 0)
    }

    /// Whether the secret is as it was made: root's, 0600, its bytes.
    func expectSecretUntouched(_ comment: Comment) throws {
        let status = ownership(secret)
        #expect(status?.owner == 0, comment)
        #expect(status?.group == 0, comment)
        #expect(status?.permissions == 0o600, comment)
        #expect(status?.isLink == false, comment)
        #expect(try readBytes(secret) == secretBytes, comment)
    }
}

/// The racing attacker: as `nobody`, polls `directory` for gzstream's temporary file
/// (`.gzstream-*`, a regular file), replaces it with a symbolic link to `secret` and prints
/// `swapped`; exits at once after one swap. Prints `ready` to the file `ready` before it
/// starts polling (a file the test made for it), so that the test starts gzstream only once
/// the attacker watches.
private let racerScript = #"""
dir=$1 secret=$2 ready=$3
echo ready >"$ready"
while :; do
  for f in "$dir"/.gzstream-*; do
    if [ -f "$f" ] && [ ! -h "$f" ]; then
      rm -f "$f" && ln -s "$secret" "$f" && { echo swapped; exit 0; }
    fi
  done
done
"""#

// Serialized, and every child awaited without holding a thread (``runAsync``).
/// The suites that race a process of another user against gzstream: run one at a time, so
/// that their racers (which poll as fast as they can) never compete with each other, and the
/// rest of the test run keeps a core.
@Suite("races with another user", .onDedicatedThreads, .serialized)
struct AnotherUserRaces {}

extension AnotherUserRaces {
@Suite("temporary outputs in a directory another user may write", .onDedicatedThreads, .serialized, .timeLimit(.minutes(5)))
struct OutputRaceTests {
    @Test("a temporary output swapped for a link to a root-only file while it is written: the file keeps its owner, mode and bytes",
          .needsRoot, .requires(setpriv), .requires(.gzip), arguments: [[], ["--bgzf", "--index"]])
    func swappedTemporaryOutput(extraArguments: [String]) async throws {
        try await withAsyncScratch { scratch in
            // 3 MiB at -9 takes long enough that the attacker sees the temporary file while it
            // is being written, every time.
            let hostile = try HostileDirectory(in: scratch, byteCount: 3 << 20)
            let output = hostile.directory + "/input.gz"
            // With --index the attacker swaps whichever temporary file it sees first: the
            // output's or the index's.
            let index = extraArguments.contains("--index") ? output + ".gzi" : nil
            var swaps = 0
            for run in 1...10 {
                // Made here, writable by the attacker, who cannot create files in io/.
                let ready = scratch.ioPath("ready")
                #expect(FileManager.default.createFile(atPath: ready, contents: nil))
                #expect(chmod(ready, 0o666) == 0)
                let racer = try StartedProcess(setpriv.path!, ["--reuid=\(attackerID)", "--regid=\(attackerID)", "--clear-groups",
                                                               "/bin/sh", "-c", racerScript, "racer",
                                                               hostile.directory, hostile.secret, ready],
                                               in: scratch)
                let deadline = ContinuousClock.now + .seconds(20)
                while (try? readBytes(ready)) != Array("ready\n".utf8) && racer.process.isRunning && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(1))
                }
                let packed = try await runAsync(Locations.binary, ["pack", "-9"] + extraArguments + ["attack/input"], in: scratch)
                if racer.process.isRunning { kill(racer.process.processIdentifier, SIGKILL) }
                let raced = try await finishAsync(racer, timeout: 10)
                let swapped = raced.out == "swapped\n"
                if swapped { swaps += 1 }
                let comment = Comment(rawValue: "run \(run): swapped \(swapped): \(packed)")
                try hostile.expectSecretUntouched(comment)
                // Either a correct output, published with the input's owner and mode, or a
                // clean failure that published nothing.
                if packed.status == 0 {
                    #expect(packed.err == "", comment)
                    let published = ownership(output)
                    #expect(published?.isLink == false, comment)
                    #expect(published?.owner == attackerID && published?.group == attackerID, comment)
                    #expect(published?.permissions == 0o666, comment)
                    let unpacked = try await runAsync("/usr/bin/gzip", ["-dc", output], in: scratch)
                    #expect(unpacked.status == 0 && unpacked.stdout == hostile.inputBytes, comment)
                    if let index {
                        let publishedIndex = ownership(index)
                        #expect(publishedIndex?.isLink == false, comment)
                        #expect(publishedIndex?.owner == attackerID && publishedIndex?.permissions == 0o666, comment)
                    }
                } else {
                    #expect(swapped, comment)
                    #expect(packed.status == 1, comment)
                    let message = ": cannot write: its temporary file was replaced or removed while it was written\n"
                    #expect(packed.err == "gzstream: attack/input.gz" + message
                        || (index != nil && packed.err == "gzstream: attack/input.gz.gzi" + message), comment)
                    #expect(ownership(output) == nil, comment)
                    if let index { #expect(ownership(index) == nil, comment) }
                }
                // What the attacker left (its link under the temporary name) and the output go
                // before the next run.
                for name in try FileManager.default.contentsOfDirectory(atPath: hostile.directory) where name != "input" {
                    #expect(unlink(hostile.directory + "/" + name) == 0)
                }
            }
            // Without swaps the test would prove nothing.
            #expect(swaps >= 5, "the attacker swapped the temporary file in only \(swaps) of 10 runs")
        }
    }

    @Test("-f -o naming a symbolic link to a root-only file: another user's link is replaced itself; root's own is followed, and its target keeps its owner and mode",
          .needsRoot, .requires(.gzip))
    func outputLinkToRootFile() async throws {
        try await withAsyncScratch { scratch in
            let hostile = try HostileDirectory(in: scratch, byteCount: 10_000)
            // The attacker's input is 0666 and theirs; so is the link.
            let link = hostile.directory + "/out.gz"
            #expect(symlink(hostile.secret, link) == 0)
            #expect(lchown(link, attackerID, attackerID) == 0)
            let packed = try await runAsync(Locations.binary, ["pack", "-f", "-o", "attack/out.gz", "attack/input"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            // Before, the secret was replaced and became the attacker's, mode 0666.
            try hostile.expectSecretUntouched("an attacker's link")
            #expect(ownership(link)?.isLink == false)
            var unpacked = try await runAsync("/usr/bin/gzip", ["-dc", link], in: scratch)
            #expect(unpacked.status == 0 && unpacked.stdout == hostile.inputBytes, "\(unpacked)")

            // Root's own link is followed, as a redirection would: the file it points to is
            // replaced, keeping its owner and mode (not the input's).
            #expect(unlink(link) == 0 && symlink(hostile.secret, link) == 0)
            let followed = try await runAsync(Locations.binary, ["pack", "-f", "-o", "attack/out.gz", "attack/input"], in: scratch)
            #expect(followed.status == 0 && followed.err == "", "\(followed)")
            let replaced = ownership(hostile.secret)
            #expect(replaced?.owner == 0 && replaced?.group == 0 && replaced?.permissions == 0o600,
                    "\(String(describing: replaced))")
            #expect(ownership(link)?.isLink == true)
            unpacked = try await runAsync("/usr/bin/gzip", ["-dc", hostile.secret], in: scratch)
            #expect(unpacked.status == 0 && unpacked.stdout == hostile.inputBytes, "\(unpacked)")
        }
    }

    @Test("-o naming another user's FIFO: refused at once, never written into nor waited on", .needsRoot)
    func plantedOutputFIFO() async throws {
        try await withAsyncScratch { scratch in
            let hostile = try HostileDirectory(in: scratch, byteCount: 10_000)
            let fifo = hostile.directory + "/out"
            #expect(mkfifo(fifo, 0o666) == 0 && chown(fifo, attackerID, attackerID) == 0)
            // Before, gzstream waited for the attacker to read (or wrote what it unpacked into
            // the attacker's FIFO): a time-out here.
            let packed = try await finishAsync(try StartedProcess(Locations.binary, ["pack", "-o", "attack/out", "attack/input"],
                                                             in: scratch), timeout: 10)
            #expect(packed.status == 1 && !packed.timedOut, "\(packed)")
            #expect(packed.err == "gzstream: attack/out: is a FIFO owned by uid 65534, another user: not written into\n")
            // cache get -o: the same.
            let cache = scratch.path("cache")
            let put = try await runAsync(Locations.binary, ["cache", "put", "--dir", cache, "k", "attack/input"], in: scratch)
            #expect(put.status == 0, "\(put)")
            let got = try await finishAsync(try StartedProcess(Locations.binary, ["cache", "get", "--dir", cache, "k", "-o", "attack/out"],
                                                          in: scratch), timeout: 10)
            #expect(got.status == 1 && !got.timedOut, "\(got)")
            #expect(got.err == "gzstream: attack/out: is a FIFO owned by uid 65534, another user: not written into\n")
        }
    }

    @Test("-o naming another user's link to a descriptor of gzstream or a device: not followed; -f replaces the link itself",
          .needsRoot, .requires(.gzip))
    func plantedOutputLinkToDescriptor() async throws {
        try await withAsyncScratch { scratch in
            let hostile = try HostileDirectory(in: scratch, byteCount: 10_000)
            let link = hostile.directory + "/out"
            #expect(symlink("/proc/self/fd/2", link) == 0 && lchown(link, attackerID, attackerID) == 0)
            // Before, the output went to gzstream's standard error.
            let refused = try await runAsync(Locations.binary, ["pack", "-o", "attack/out", "attack/input"], in: scratch)
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.err == "gzstream: attack/out: already exists; not overwritten (use -f to overwrite)\n")
            let forced = try await runAsync(Locations.binary, ["pack", "-f", "-o", "attack/out", "attack/input"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(ownership(link)?.isLink == false)
            let unpacked = try await runAsync("/usr/bin/gzip", ["-dc", link], in: scratch)
            #expect(unpacked.status == 0 && unpacked.stdout == hostile.inputBytes, "\(unpacked)")
        }
    }

    // MARK: -o naming a FIFO: opened once, decided from what was opened

    @Test("-o FIFO without a reader yet: gzstream waits for one and writes into it, as a redirection would", .requires(.gzip))
    func fifoReaderComesLater() async throws {
        try await withAsyncScratch { scratch in
            let text = sampleText(byteCount: 100_000, seed: 5)
            try scratch.write("input", text)
            #expect(mkfifo(scratch.path("fifo"), 0o644) == 0)
            // gzstream finds no reader at first (its non-blocking open fails), then waits.
            let result = try await runAsync("/bin/sh", ["-c", #""$0" pack -o fifo input & sleep 0.3; cat fifo >got; wait $!; echo $?"#,
                                                        Locations.binary], in: scratch)
            #expect(result.out == "0\n" && result.err == "", "\(result)")
            let unpacked = try await runAsync("/usr/bin/gzip", ["-dc", scratch.path("got")], in: scratch)
            #expect(unpacked.status == 0 && unpacked.stdout == text, "\(unpacked)")
            #expect(try scratch.listing() == ["fifo", "got", "input"])
        }
    }

    @Test("-o FIFO with --index and no reader: refused at once, without waiting for a reader")
    func fifoWithIndexRefused() async throws {
        try await withAsyncScratch { scratch in
            try scratch.write("input", "data\n")
            #expect(mkfifo(scratch.path("fifo"), 0o644) == 0)
            let result = try await runAsync(Locations.binary, ["pack", "--bgzf", "--index", "-o", "fifo", "input"],
                                            in: scratch, timeout: 20)
            #expect(!result.timedOut)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == "gzstream: fifo: not a regular file: --index needs one to write its .gzi beside\n")
            #expect(try scratch.listing() == ["fifo", "input"])
        }
    }

    // MARK: The same, deterministic: a hook between creation and the attributes

    @Test("a temporary file replaced by a link before its attributes are set: the link's target is untouched, publishing fails, the link stays")
    func temporaryReplacedByLink() throws {
        try withScratch { scratch in
            let secret = try scratch.write("secret", "not to be given away\n")
            #expect(chmod(secret, 0o600) == 0)
            setModificationTime(secret, seconds: 1_000_000_000)
            let directory = scratch.path("out")
            #expect(mkdir(directory, 0o755) == 0)
            // As root the owner is given away too; anyone else can test the mode and times.
            let owner: (uid_t, gid_t)? = geteuid() == 0 ? (attackerID, attackerID) : nil
            let temporary = try withTemporaryFileHook({ temporary in
                let path = directory + "/" + temporary.name.description
                #expect(unlink(path) == 0)
                #expect(symlink(secret, path) == 0)
            }) {
                try TemporaryFile(besides: Pathname(directory + "/result.gz"))
            }
            let linkPath = directory + "/" + temporary.name.description
            #expect(write(temporary.descriptor, "data", 4) == 4)
            try temporary.finish(mode: 0o666, times: (FileInfo.Timestamp(seconds: 5, nanoseconds: 0),
                                                      FileInfo.Timestamp(seconds: 5, nanoseconds: 0)), owner: owner)
            let error = #expect(throws: PublishError.self) { try temporary.publish(as: "result.gz", replacing: true) }
            #expect(error?.message == "cannot write: its temporary file was replaced or removed while it was written")
            #expect(error?.alreadyExists == false)
            temporary.discard()
            let status = ownership(secret)
            #expect(status?.owner == geteuid() && status?.permissions == 0o600 && status?.isLink == false)
            #expect(fileStatus(secret)?.modificationSeconds == 1_000_000_000)
            #expect(try readBytes(secret) == Array("not to be given away\n".utf8))
            // Not this process's file: discard leaves the link, and nothing was published.
            #expect(ownership(linkPath)?.isLink == true)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [temporary.name.description])
        }
    }

    @Test("a temporary file replaced by another file: discarding leaves that file", arguments: [false, true])
    func temporaryReplacedByFile(publishing: Bool) throws {
        try withScratch { scratch in
            let directory = scratch.path("out")
            #expect(mkdir(directory, 0o755) == 0)
            let temporary = try withTemporaryFileHook({ temporary in
                let path = directory + "/" + temporary.name.description
                #expect(unlink(path) == 0)
                #expect(FileManager.default.createFile(atPath: path, contents: Data("theirs".utf8)))
            }) {
                try TemporaryFile(besides: Pathname(directory + "/result"))
            }
            try temporary.finish(mode: 0o644, times: nil, owner: nil)
            if publishing {
                #expect(throws: PublishError.self) { try temporary.publish(as: "result", replacing: false) }
            }
            temporary.discard()
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [temporary.name.description])
            #expect(try readBytes(directory + "/" + temporary.name.description) == Array("theirs".utf8))
        }
    }

    @Test("a temporary file left alone: attributes on the file, published under its name, nothing else left")
    func temporaryPublished() throws {
        try withScratch { scratch in
            let directory = scratch.path("out")
            #expect(mkdir(directory, 0o755) == 0)
            try scratch.write("out/result", "old")
            let temporary = try TemporaryFile(besides: Pathname(directory + "/result"))
            #expect(temporary.name.description.hasPrefix(".gzstream-") && temporary.name.bytes.count == 16)
            #expect(ownership(directory + "/" + temporary.name.description)?.permissions == 0o600)
            #expect(write(temporary.descriptor, "new", 3) == 3)
            try temporary.finish(mode: 0o640, times: (FileInfo.Timestamp(seconds: 7, nanoseconds: 500),
                                                      FileInfo.Timestamp(seconds: 1_234_567_890, nanoseconds: 123_456_789)),
                                 owner: nil)
            // Without replacing, the existing file stays.
            #expect(throws: PublishError.self) { try temporary.publish(as: "result", replacing: false) }
            try temporary.publish(as: "result", replacing: true)
            temporary.discard()
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["result"])
            #expect(try readBytes(directory + "/result") == Array("new".utf8))
            #expect(ownership(directory + "/result")?.permissions == 0o640)
            let status = fileStatus(directory + "/result")
            #expect(status?.modificationSeconds == 1_234_567_890 && status?.modificationNanoseconds == 123_456_789)
        }
    }
}
}

/// Runs `body` with ``TemporaryFile/afterCreation`` set to `hook`, and resets it. The suite is
/// serialized and no other test creates a temporary file in this process.
private func withTemporaryFileHook<T>(_ hook: @escaping (TemporaryFile) -> Void, _ body: () throws -> T) rethrows -> T {
    TemporaryFile.afterCreation = hook
    defer { TemporaryFile.afterCreation = nil }
    return try body()
}

import ByteStreams
import Foundation
import GzipStreams
import StreamCache
import Testing
import TestSupport
@testable import GZStreamCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// send and receive with --key-file, the acknowledgement, --deadline, and key files, over
// loopback. Fake peers (a recording receiver, a replaying or cutting sender, a peer that never
// reads, a trickler) are played by the test through ByteStreams' sockets. Every test body
// blocks (children, sockets), so it runs on a thread of its own, off Swift concurrency's
// cooperative pool; every wait is bounded.

/// Runs `body` on a new thread and awaits it, so that its blocking waits hold no thread of the
/// cooperative pool that other suites need.
private func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A key file of 32 seeded bytes with `mode` (0600 unless told).
private func writeKey(_ scratch: Scratch, _ name: String, seed: UInt64, mode: mode_t = 0o600) throws -> String {
    let path = try scratch.write(name, randomBytes(count: 32, seed: seed))
    #expect(chmod(path, mode) == 0)
    return path
}

/// What send says when the peer closed without acknowledging.
private func noAcknowledgement(_ port: Int) -> String {
    "gzstream: 127.0.0.1:\(port): no acknowledgement: the peer closed the connection without confirming that it "
        + "read and checked everything (it failed, or it is not gzstream receive)\n"
}

/// The wire protocol's constants, restated here from its documentation (docs/cli.md, *The protocol*; TransferProtocol.swift).
private enum Wire {
    static let helloByteCount = 38
    static let dataLabel = "gzstream send to receive: data v1"
    /// What a keyed send sends first.
    static let marker: [UInt8] = Array("GZSK".utf8) + [1] + [UInt8](repeating: 0, count: 11)
    static let authenticationFailed =
        "authentication failed for chunk 1 at byte 33 (wrong key, or the data was changed, reordered or cut)"

    /// A keyed hello with `challenge`.
    static func keyedHello(_ challenge: [UInt8]) -> [UInt8] { Array("GZRH".utf8) + [1, 1] + challenge }
}

/// Reads `input` until it ends (or fails: a reset), at most `limit` bytes.
private func readAll(_ input: ByteInputStream, limit: Int = 64 << 20) -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while bytes.count < limit {
        let count = buffer.withUnsafeMutableBufferPointer { input.read($0.baseAddress!, maxLength: $0.count) }
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return bytes
}

/// Connects to a receive on loopback as a fake sender and reads its 38-byte hello.
private func connectAndReadHello(port: Int) throws -> (pair: (input: ByteInputStream, output: ByteOutputStream),
                                                           peer: String, hello: [UInt8]) {
    let pair = try SocketStreams.connect(host: "127.0.0.1", port: port, timeout: .seconds(20), idleTimeout: .seconds(20))
    let peer = try #require((pair.input as? SocketInputStream)?.localName)
    try pair.input.openOrThrow()
    try pair.output.openOrThrow()
    var hello: [UInt8] = []
    while hello.count < Wire.helloByteCount {
        let chunk = try pair.input.readChunk(maxLength: Wire.helloByteCount - hello.count)
        if chunk.isEmpty { break }
        hello += chunk
    }
    return (pair, peer, hello)
}

@Suite("gzstream send and receive: --key-file, acknowledgement, --deadline, key files", .onDedicatedThreads, .timeLimit(.minutes(3)))
struct KeyedNetworkCLITests {
    @Test("--key-file: a round trip of 0, 100000 and 1 MiB + 1 bytes; both exit 0, silent but for the listening line",
          arguments: [0, 100_000, (1 << 20) + 1])
    func keyedRoundTrip(size: Int) async throws {
        try await offPool {
            try withScratch { scratch in
                let key = try writeKey(scratch, "key", seed: 40)
                let data = randomBytes(count: size, seed: 41)
                let file = try scratch.write("data", data)
                let receiver = try Receiver(["--key-file", key, "--deadline", "60", "0", "-o", "copy"], in: scratch)
                let sent = try gzstream(["send", "--key-file", key, "--deadline", "60", "127.0.0.1:\(receiver.port)", file],
                                        in: scratch, timeout: 60)
                let received = try receiver.started.finish(timeout: 60)
                #expect(sent.status == 0 && sent.out == "" && sent.err == "", "\(sent)")
                #expect(received.status == 0 && received.out == "" && received.err == receiver.listeningLine, "\(received)")
                #expect(try scratch.read("copy") == data)
                #expect(try scratch.listing() == ["copy", "data", "key"])
            }
        }
    }

    @Test("A 0644 key file works, with a warning on each side; receive to standard output")
    func exposedKeyWarns() async throws {
        try await offPool {
            try withScratch { scratch in
                let key = try writeKey(scratch, "key", seed: 40, mode: 0o644)
                let warning = "gzstream: \(key): warning: key file readable by group and others (mode 0644)\n"
                let data = sampleText(byteCount: 200_000)
                let file = try scratch.write("data", data)
                let receiver = try Receiver(["--key-file", key, "0"], in: scratch)
                let sent = try gzstream(["send", "--key-file", key, "127.0.0.1:\(receiver.port)", file], in: scratch, timeout: 60)
                let received = try receiver.started.finish(timeout: 60)
                #expect(sent.status == 0 && sent.err == warning, "\(sent)")
                #expect(received.status == 0 && received.err == warning + receiver.listeningLine, "\(received)")
                #expect(received.stdout == data)
                // -q silences the warning, as every warning.
                let quiet = try gzstream(["send", "-q", "--key-file", key, "127.0.0.1:\(try closedPort())", file],
                                         in: scratch, timeout: 60)
                #expect(quiet.status == 1 && !quiet.err.contains("warning"), "\(quiet)")
            }
        }
    }

    @Test("A sender without the key, or with another key: receive exits 1 and writes nothing; send exits 1",
          arguments: ["no key", "another key"])
    func wrongSender(variant: String) async throws {
        try await offPool {
            try withScratch { scratch in
                let key = try writeKey(scratch, "key", seed: 40)
                let other = try writeKey(scratch, "other.key", seed: 42)
                let file = try scratch.write("data", randomBytes(count: 100_000, seed: 43))
                let receiver = try Receiver(["--key-file", key, "--timeout", "30", "0", "-o", "copy"], in: scratch)
                let keyOptions = variant == "no key" ? [] : ["--key-file", other]
                let sent = try gzstream(["send", "--timeout", "30"] + keyOptions + ["127.0.0.1:\(receiver.port)", file],
                                        in: scratch, timeout: 60)
                let received = try receiver.started.finish(timeout: 60)
                let why = variant == "no key" ? "not an encrypted stream: give send --key-file too" : Wire.authenticationFailed
                #expect(received.status == 1, "\(received)")
                #expect(received.err.hasPrefix(receiver.listeningLine + "gzstream: 127.0.0.1:"), "\(received)")
                #expect(received.err.hasSuffix(": \(why)\n") && received.errLines.count == 2, "\(received)")
                #expect(try scratch.listing() == ["data", "key", "other.key"], "no output, no temporary file")
                #expect(sent.status == 1, "\(sent)")
                // Where send notices depends on how far it got when the reset came.
                let told = variant == "no key" ? "the receiver expects an encrypted stream: give send --key-file too"
                                               : "read failed: Connection reset by peer"
                let allowed = [told, "read failed: Connection reset by peer", "write failed: Connection reset by peer",
                               "write failed: Broken pipe"].map { "gzstream: 127.0.0.1:\(receiver.port): \($0)\n" }
                #expect(allowed.contains(sent.err), "\(sent)")
            }
        }
    }

    @Test("A keyed send against a receive without a key: both fail at once (no wait for a timeout)")
    func keyedSenderPlainReceiver() async throws {
        try await offPool {
            try withScratch { scratch in
                let key = try writeKey(scratch, "key", seed: 40)
                let file = try scratch.write("data", sampleText(byteCount: 10_000))
                let receiver = try Receiver(["0", "-o", "copy"], in: scratch)
                let sent = try gzstream(["send", "--key-file", key, "127.0.0.1:\(receiver.port)", file], in: scratch, timeout: 30)
                let received = try receiver.started.finish(timeout: 30)
                #expect(received.status == 1, "\(received)")
                #expect(received.err.hasPrefix(receiver.listeningLine + "gzstream: 127.0.0.1:"), "\(received)")
                #expect(received.err.hasSuffix(": the sender uses --key-file: give receive --key-file too\n")
                    && received.errLines.count == 2, "\(received)")
                #expect(sent.status == 1, "\(sent)")
                #expect(sent.err == "gzstream: 127.0.0.1:\(receiver.port): read failed: Connection reset by peer\n", "\(sent)")
                #expect(try scratch.listing() == ["data", "key"])
            }
        }
    }

    @Test("A plain receive still takes a sender that never reads and closes at once (gzip | nc): it sends nothing first")
    func plainReceiveFromNonReadingSender() async throws {
        try await offPool {
            try withScratch { scratch in
                let data = randomBytes(count: 2 << 20, seed: 46)
                let receiver = try Receiver(["0", "-o", "copy"], in: scratch)
                // The output is the trickler thread's alone until it signals `trickled`.
                nonisolated(unsafe) let pair = try SocketStreams.connect(host: "127.0.0.1", port: receiver.port, timeout: .seconds(20))
                let peer = try #require((pair.input as? SocketInputStream)?.localName)
                try pair.output.openOrThrow()
                try pair.output.writeAll(try data.gzipped(level: 1))
                // Closed whole, unread bytes or not: anything receive had sent would make it a reset.
                pair.output.close()
                pair.input.close()
                let received = try receiver.started.finish(timeout: 30)
                #expect(received.status == 0 && received.err == receiver.listeningLine, "\(received) from \(peer)")
                #expect(try scratch.read("copy") == data)
            }
        }
    }

    @Test("A recorded session replayed to another receive fails at chunk 1: exit 1, nothing written, no acknowledgement")
    func replayedSession() async throws {
        try await offPool {
            try withScratch { scratch in
                let key = try writeKey(scratch, "key", seed: 40)
                let data = sampleText(byteCount: 150_000)
                let file = try scratch.write("data", data)
                // 1. A fake receive records what a real send sends for a challenge of its own.
                let fake = try SocketListener(port: 0)
                defer { try? fake.close() }
                let sender = try StartedProcess(Locations.binary,
                                                ["send", "--key-file", key, "--timeout", "30", "127.0.0.1:\(fake.port)", file],
                                                in: scratch)
                let challenge = randomBytes(count: 32, seed: 44)
                let recorded: [UInt8]
                do {
                    let pair = try fake.accept(timeout: .seconds(20), idleTimeout: .seconds(20))
                    try pair.output.openOrThrow()
                    try pair.input.openOrThrow()
                    try pair.output.writeAll(Wire.keyedHello(challenge))
                    recorded = readAll(pair.input)
                    // Closed without an acknowledgement.
                    pair.output.close()
                    pair.input.close()
                }
                let sent = try sender.finish(timeout: 30)
                #expect(sent.status == 1 && sent.err == noAcknowledgement(fake.port), "\(sent)")
                // The recording is the whole stream, good for that challenge.
                let sessionKey = try SecretStreamKey(contentsOfFile: key).derived(label: Wire.dataLabel, context: challenge)
                #expect(recorded.starts(with: Wire.marker))
                let decrypting = try DecryptingInputStream(wrapping: MemoryInputStream(bytes: Array(recorded.dropFirst(16))),
                                                           key: sessionKey)
                try decrypting.openOrThrow()
                #expect(try decrypting.readToEnd().gunzipped() == data)

                // 2. Replayed to a real receive, which sends another challenge.
                let receiver = try Receiver(["--key-file", key, "--timeout", "30", "0", "-o", "copy"], in: scratch)
                let (pair, peer, hello) = try connectAndReadHello(port: receiver.port)
                #expect(hello.count == 38 && hello.prefix(6) == [0x47, 0x5A, 0x52, 0x48, 1, 1])
                #expect(Array(hello.suffix(32)) != challenge)
                try? pair.output.writeAll(recorded)
                pair.output.close()
                let answer = readAll(pair.input)
                pair.input.close()
                let received = try receiver.started.finish(timeout: 30)
                #expect(received.status == 1, "\(received)")
                #expect(received.err == receiver.listeningLine + "gzstream: \(peer): \(Wire.authenticationFailed)\n")
                #expect(answer.isEmpty, "no acknowledgement")
                #expect(try scratch.listing() == ["data", "key"])
            }
        }
    }

    @Test("A keyed stream cut in chunk 2: receive exits 1; -o leaves nothing, standard output only authenticated data",
          arguments: [true, false])
    func cutMidStream(toFile: Bool) async throws {
        try await offPool {
            try withScratch { scratch in
                let key = try writeKey(scratch, "key", seed: 40)
                let data = randomBytes(count: 300_000, seed: 45)
                let receiver = try Receiver(["--key-file", key, "--timeout", "30", "0"] + (toFile ? ["-o", "copy"] : []),
                                            in: scratch)
                let (pair, peer, hello) = try connectAndReadHello(port: receiver.port)
                // A fake sender with the key, answering this challenge, that stops inside chunk 2.
                let sessionKey = try SecretStreamKey(contentsOfFile: key).derived(label: Wire.dataLabel,
                                                                                  context: Array(hello.suffix(32)))
                let memory = MemoryOutputStream()
                let encrypting = try EncryptingOutputStream(wrapping: memory, key: sessionKey)
                try encrypting.openOrThrow()
                try encrypting.writeAll(try data.gzipped(level: 0))
                try encrypting.closeOrThrow()
                let cut = Array([UInt8](memory.data).prefix(33 + 4 + 65553 + 1000))
                try pair.output.writeAll(Wire.marker + cut)
                pair.output.close()
                let answer = readAll(pair.input)
                pair.input.close()
                let received = try receiver.started.finish(timeout: 30)
                #expect(received.status == 1, "\(received)")
                #expect(received.err == receiver.listeningLine + "gzstream: \(peer): unexpected end of encrypted input "
                    + "in chunk 2, before the final chunk at byte \(cut.count)\n")
                #expect(answer.isEmpty, "no acknowledgement")
                if toFile {
                    #expect(try scratch.listing() == ["key"])
                } else {
                    // Chunk 1 was authenticated: what it unpacked to may be out, nothing else.
                    #expect(received.stdout.count <= 65536 && received.stdout == Array(data.prefix(received.stdout.count)))
                }
            }
        }
    }

    @Test("send to a peer that never reads, or reads all but never acknowledges: exit 1, no acknowledgement",
          arguments: ["never reads", "reads all"])
    func unacknowledged(peer: String) async throws {
        try await offPool {
            try withScratch { scratch in
                let file = try scratch.write("data", sampleText(byteCount: 10_000))
                let fake = try SocketListener(port: 0)
                defer { try? fake.close() }
                let sender = try StartedProcess(Locations.binary, ["send", "--timeout", "30", "127.0.0.1:\(fake.port)", file],
                                                in: scratch)
                let pair = try fake.accept(timeout: .seconds(20), idleTimeout: .seconds(20))
                try pair.output.openOrThrow()
                try pair.input.openOrThrow()
                if peer == "never reads" {
                    // Half-closes at once and reads nothing while send runs.
                    pair.output.close()
                    let sent = try sender.finish(timeout: 30)
                    pair.input.close()
                    #expect(sent.status == 1 && sent.err == noAcknowledgement(fake.port), "\(sent)")
                } else {
                    let bytes = readAll(pair.input)
                    #expect(try bytes.gunzipped() == sampleText(byteCount: 10_000))
                    pair.output.close()
                    pair.input.close()
                    let sent = try sender.finish(timeout: 30)
                    #expect(sent.status == 1 && sent.err == noAcknowledgement(fake.port), "\(sent)")
                }
            }
        }
    }

    @Test("A keyed sender announcing chunks over 64 KiB is refused at the prefix: exit 1, nothing written")
    func oversizedChunks() async throws {
        try await offPool {
            try withScratch { scratch in
                let key = try writeKey(scratch, "key", seed: 40)
                let receiver = try Receiver(["--key-file", key, "--timeout", "30", "0", "-o", "copy"], in: scratch)
                let (pair, peer, hello) = try connectAndReadHello(port: receiver.port)
                let sessionKey = try SecretStreamKey(contentsOfFile: key).derived(label: Wire.dataLabel,
                                                                                  context: Array(hello.suffix(32)))
                let memory = MemoryOutputStream()
                let encrypting = try EncryptingOutputStream(wrapping: memory, key: sessionKey, chunkSize: (64 << 10) + 1)
                try encrypting.openOrThrow()
                try encrypting.writeAll(try randomBytes(count: 1000, seed: 2).gzipped())
                try encrypting.closeOrThrow()
                try? pair.output.writeAll(Wire.marker + [UInt8](memory.data))
                pair.output.close()
                let answer = readAll(pair.input)
                pair.input.close()
                let received = try receiver.started.finish(timeout: 30)
                #expect(received.status == 1, "\(received)")
                #expect(received.err == receiver.listeningLine
                    + "gzstream: \(peer): chunk size 65537 at byte 5 is over this reader's limit of 65536 bytes\n")
                #expect(answer.isEmpty)
                #expect(try scratch.listing() == ["key"])
            }
        }
    }

    @Test("send checks the acknowledgement: a forged tag, or a count short of what was sent, is exit 1",
          arguments: ["forged tag", "short count"])
    func badAcknowledgement(kind: String) async throws {
        try await offPool {
            try withScratch { scratch in
                let key = try writeKey(scratch, "key", seed: 40)
                let file = try scratch.write("data", sampleText(byteCount: 5000))
                let fake = try SocketListener(port: 0)
                defer { try? fake.close() }
                let keyed = kind == "forged tag"
                let sender = try StartedProcess(Locations.binary, ["send", "--timeout", "30"] + (keyed ? ["--key-file", key] : [])
                                                    + ["127.0.0.1:\(fake.port)", file], in: scratch)
                let pair = try fake.accept(timeout: .seconds(20), idleTimeout: .seconds(20))
                try pair.output.openOrThrow()
                try pair.input.openOrThrow()
                if keyed { try pair.output.writeAll(Wire.keyedHello(randomBytes(count: 32, seed: 47))) }
                let bytes = readAll(pair.input)
                // A right-looking acknowledgement: the count received (or one short), a tag of zeros.
                let count = UInt64(bytes.count - (keyed ? 0 : 1))
                let ack = Array("GZOK".utf8) + withUnsafeBytes(of: count.bigEndian, Array.init)
                    + (keyed ? [UInt8](repeating: 0, count: 32) : [])
                try pair.output.writeAll(ack)
                pair.output.close()
                let sent = try sender.finish(timeout: 30)
                pair.input.close()
                let why = keyed ? "the acknowledgement is not authentic (made without the key, or for another stream)"
                                : "the receiver acknowledged \(count) bytes, not the \(bytes.count) sent"
                #expect(sent.status == 1 && sent.err == "gzstream: 127.0.0.1:\(fake.port): \(why)\n", "\(sent)")
            }
        }
    }

    @Test("receive --timeout 1.5 --deadline 2.5 against a peer sending a byte every 0.3 s: the deadline ends it, exit 1, no file")
    func deadlineAgainstTrickler() async throws {
        try await offPool {
            try withScratch { scratch in
                let receiver = try Receiver(["--timeout", "1.5", "--deadline", "2.5", "0", "-o", "copy"], in: scratch)
                // The output is the trickler thread's alone until it signals `trickled`.
                nonisolated(unsafe) let pair = try SocketStreams.connect(host: "127.0.0.1", port: receiver.port, timeout: .seconds(20))
                let peer = try #require((pair.input as? SocketInputStream)?.localName)
                try pair.output.openOrThrow()
                // A gzip member's start, one byte at a time: each read gets a byte well within --timeout.
                let member: [UInt8] = try randomBytes(count: 1000, seed: 2).gzipped()
                // Signalled when the trickler is done with the output, which is closed only then.
                let trickled = DispatchSemaphore(value: 0)
                let trickler = Thread {
                    for byte in member.prefix(100) {
                        if (try? pair.output.writeAll([byte])) == nil { break }
                        usleep(300_000)
                    }
                    trickled.signal()
                }
                trickler.start()
                let received = try receiver.started.finish(timeout: 30)
                #expect(received.status == 1, "\(received)")
                #expect(received.err == receiver.listeningLine + "gzstream: \(peer): the transfer did not end within --deadline 2.5\n")
                #expect(try scratch.listing() == [])
                // The trickler stops at its next write: the connection was reset.
                #expect(trickled.wait(timeout: .now() + 30) == .success)
                pair.output.close()
                pair.input.close()
            }
        }
    }

    @Test("send --deadline: a peer that never answers ends at the deadline, exit 1")
    func sendDeadline() async throws {
        try await offPool {
            try withScratch { scratch in
                let file = try scratch.write("data", "hello\n")
                // Accepted by the system, never by anyone: no hello, no acknowledgement.
                let listener = try SocketListener(port: 0)
                defer { try? listener.close() }
                let sent = try gzstream(["send", "--deadline", "0.5", "127.0.0.1:\(listener.port)", file], in: scratch, timeout: 30)
                #expect(sent.status == 1)
                #expect(sent.err == "gzstream: 127.0.0.1:\(listener.port): the transfer did not end within --deadline 0.5\n")
                let keyed = try gzstream(["send", "--deadline", "0.5", "--key-file", try writeKey(scratch, "key", seed: 40),
                                          "127.0.0.1:\(listener.port)", file], in: scratch, timeout: 30)
                #expect(keyed.status == 1)
                #expect(keyed.err == "gzstream: 127.0.0.1:\(listener.port): the transfer did not end within --deadline 0.5\n")
            }
        }
    }

    @Test("Key files that are not a regular file of 32 bytes: one line naming the file, exit 1, before listening or connecting",
          arguments: ["/dev/zero", "fifo", "symlink", "directory", "31", "33", "0666"])
    func refusedKeyFiles(name: String) async throws {
        try await offPool {
            try withScratch { scratch in
                var path = name
                let problem: String
                switch name {
                case "/dev/zero": problem = "a key file must be a regular file, not a character device"
                case "fifo":
                    path = scratch.path("fifo")
                    #expect(mkfifo(path, 0o600) == 0)
                    problem = "a key file must be a regular file, not a FIFO"
                case "symlink":
                    path = scratch.path("symlink")
                    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: try writeKey(scratch, "key", seed: 40))
                    problem = "a key file must be a regular file, not a symbolic link"
                case "directory":
                    path = scratch.path("directory")
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
                    problem = "a key file must be a regular file, not a directory"
                case "0666":
                    path = try writeKey(scratch, "key", seed: 40, mode: 0o666)
                    problem = "a key file must not be writable by group or others (mode 0666)"
                default:
                    path = try scratch.write("short-or-long", randomBytes(count: Int(name)!, seed: 2))
                    problem = "a key file must hold exactly 32 bytes, not \(name)"
                }
                let before = try scratch.listing()
                let received = try gzstream(["receive", "--key-file", path, "0", "-o", "copy"], in: scratch, timeout: 20)
                #expect(received.status == 1 && received.out == "", "\(received)")
                #expect(received.err == "gzstream: \(path): \(problem)\n", "no listening line")
                let file = try scratch.write("data", "hello\n")
                let sent = try gzstream(["send", "--key-file", path, "127.0.0.1:\(try closedPort())", file], in: scratch, timeout: 20)
                #expect(sent.status == 1 && sent.err == "gzstream: \(path): \(problem)\n", "no connect: \(sent)")
                #expect(try scratch.listing() == (before + ["data"]).sorted())
            }
        }
    }

    @Test("Which listening addresses count as loopback (receive warns without --key-file on the others)")
    func loopbackAddresses() {
        for name in ["127.0.0.1:8734", "127.1.2.3:1", "[::1]:8734", "[::ffff:127.0.0.1]:5"] { #expect(isLoopback(name), "\(name)") }
        for name in ["0.0.0.0:8734", "[::]:8734", "192.168.1.2:8734", "[fe80::1]:5", "10.127.0.1:5"] {
            #expect(!isLoopback(name), "\(name)")
        }
    }
}

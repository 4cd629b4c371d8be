import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `gzstream send` and `gzstream receive` over loopback. No fixed port: receive listens on port
// 0 and its first line on standard error says which port it got. Every child runs with a time
// limit and every wait is bounded; timeouts are asserted by their error, never by a duration.

/// A `gzstream receive … 0` started in the background, and the port it listens on.
struct Receiver {
    let started: StartedProcess
    let port: Int

    /// The line receive writes first.
    var listeningLine: String { "gzstream: listening on 127.0.0.1:\(port)\n" }

    /// Starts `gzstream receive` with `arguments` (which must listen on port 0 of 127.0.0.1)
    /// and waits (at most 20 s) for it to say where it listens.
    init(_ arguments: [String], in scratch: Scratch, stdoutPath: String? = nil) throws {
        started = try StartedProcess(Locations.binary, ["receive"] + arguments, in: scratch, stdoutPath: stdoutPath)
        port = try listeningPort(of: started, host: "127.0.0.1")
    }
}

/// The port in `gzstream: listening on HOST:PORT`, read from the child's standard error as it
/// runs; polled every 10 ms for at most 20 s.
func listeningPort(of started: StartedProcess, host: String) throws -> Int {
    let prefix = "gzstream: listening on \(host):"
    for _ in 0..<2000 {
        let err = String(decoding: try readBytes(started.errPath), as: UTF8.self)
        if let line = err.split(separator: "\n", omittingEmptySubsequences: false).first(where: { $0.hasPrefix(prefix) }),
           err.contains(line + "\n"), let port = Int(line.dropFirst(prefix.count)) {
            return port
        }
        if !started.process.isRunning { break }
        usleep(10_000)
    }
    let result = try started.finish(timeout: 5)
    Issue.record("receive did not say where it listens: \(result)")
    throw CancellationError()
}

/// A port nothing listens on: one the system gave a listener, closed again.
func closedPort() throws -> Int {
    let listener = try SocketListener(port: 0)
    let port = listener.port
    try listener.close()
    return port
}

/// Whether this host can bind the IPv6 loopback address.
private func ipv6LoopbackAvailable() -> Bool {
    (try? SocketListener(host: "::1", port: 0)) != nil
}

/// Plain data of `byteCount` bytes, half compressible text and half random, so that a transfer
/// is several MiB on the wire as well.
private func mixedData(byteCount: Int) -> [UInt8] {
    sampleText(byteCount: byteCount / 2, seed: 7) + randomBytes(count: byteCount - byteCount / 2, seed: 8)
}

@Suite("gzstream send and receive", .onDedicatedThreads, .timeLimit(.minutes(3)))
struct NetworkCLITests {
    @Test("A 6 MiB file goes from send to receive -o intact (one member, or BGZF on 2 threads); both exit 0 and say only where receive listens",
          arguments: [["-1"], ["--bgzf", "-p", "2"]])
    func fileToFile(packOptions: [String]) throws {
        try withScratch { scratch in
            let data = mixedData(byteCount: 6 << 20)
            let file = try scratch.write("data", data)
            let receiver = try Receiver(["--timeout", "60", "0", "-o", "copy"], in: scratch)
            let sent = try gzstream(["send"] + packOptions + ["--timeout", "60", "127.0.0.1:\(receiver.port)", file],
                                    in: scratch, timeout: 60)
            let received = try receiver.started.finish(timeout: 60)
            #expect(sent.status == 0 && sent.out == "" && sent.err == "", "\(sent)")
            #expect(received.status == 0 && received.out == "", "\(received)")
            #expect(received.err == receiver.listeningLine)
            #expect(try scratch.read("copy") == data)
            #expect(try scratch.listing() == ["copy", "data"], "no temporary file is left")
        }
    }

    @Test("Standard input through a pipe to send, receive to standard output through a pipe")
    func standardInputToStandardOutput() throws {
        try withScratch { scratch in
            let data = mixedData(byteCount: 3 << 20)
            try scratch.write("data", data)
            let receiving = try StartedProcess("/bin/sh", ["-c", #""$0" receive 0 | cat >copy"#, Locations.binary],
                                               in: scratch)
            let port = try listeningPort(of: receiving, host: "127.0.0.1")
            let sent = try shell(#"cat data | "$0" send "127.0.0.1:$1""#, [String(port)], in: scratch, timeout: 60)
            let received = try receiving.finish(timeout: 60)
            #expect(sent.status == 0 && sent.err == "", "\(sent)")
            #expect(received.status == 0 && received.err == "gzstream: listening on 127.0.0.1:\(port)\n", "\(received)")
            #expect(try scratch.read("copy") == data)
        }
    }

    @Test("-v: send says what it sent; receive says where it listens and what it wrote")
    func verbose() throws {
        try withScratch { scratch in
            let data = sampleText(byteCount: 100_000)
            let file = try scratch.write("data", data)
            // What send puts on the wire: pack's member for the file, name and MTIME included.
            let packed = try gzstream(["pack", "-c", file], in: scratch, timeout: 60).stdout.count
            let receiver = try Receiver(["-v", "0", "-o", "copy"], in: scratch)
            let sent = try gzstream(["send", "-v", "127.0.0.1:\(receiver.port)", file], in: scratch, timeout: 60)
            let received = try receiver.started.finish(timeout: 60)
            #expect(sent.status == 0 && received.status == 0, "\(sent); \(received)")
            #expect(sent.err == verboseLine(file, bytesIn: data.count, bytesOut: packed, plain: data.count, packed: packed,
                                            output: "127.0.0.1:\(receiver.port)"))
            // The peer's port is the sender's own, unknown here: the line is checked after it.
            let wrote = verboseLine("PEER", bytesIn: packed, bytesOut: data.count, plain: data.count, packed: packed,
                                    output: "copy").dropFirst("gzstream: PEER".count)
            #expect(received.err.hasPrefix(receiver.listeningLine + "gzstream: 127.0.0.1:"), "\(received)")
            #expect(received.err.hasSuffix(wrote) && received.errLines.count == 2, "\(received)")
            #expect(try scratch.read("copy") == data)
        }
    }

    @Test("IPv6: receive on [::1]:0, send to [::1]:PORT",
          .enabled(if: ipv6LoopbackAvailable(), "this host cannot bind ::1 (no IPv6 loopback)"))
    func ipv6() throws {
        try withScratch { scratch in
            let data = sampleText(byteCount: 200_000)
            let file = try scratch.write("data", data)
            let receiving = try StartedProcess(Locations.binary, ["receive", "[::1]:0", "-o", "copy"], in: scratch)
            let port = try listeningPort(of: receiving, host: "[::1]")
            let sent = try gzstream(["send", "[::1]:\(port)", file], in: scratch, timeout: 60)
            let received = try receiving.finish(timeout: 60)
            #expect(sent.status == 0 && sent.err == "", "\(sent)")
            #expect(received.status == 0 && received.err == "gzstream: listening on [::1]:\(port)\n", "\(received)")
            #expect(try scratch.read("copy") == data)
        }
    }

    @Test("A refused connection: exit 1, one line naming the peer")
    func refused() throws {
        try withScratch { scratch in
            let file = try scratch.write("data", "hello\n")
            let port = try closedPort()
            let result = try gzstream(["send", "127.0.0.1:\(port)", file], in: scratch, timeout: 60)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == "gzstream: 127.0.0.1:\(port): connect failed: Connection refused\n")
        }
    }

    @Test("A host that does not resolve: exit 1, the resolver's text")
    func hostNotFound() throws {
        try withScratch { scratch in
            let file = try scratch.write("data", "hello\n")
            let result = try gzstream(["send", "no-such-host.invalid:8734", file], in: scratch, timeout: 60)
            #expect(result.status == 1)
            #expect(result.err.hasPrefix("gzstream: no-such-host.invalid:8734: connect failed: "), "\(result)")
            #expect(result.errLines.count == 1)
        }
    }

    @Test("A FILE that cannot be read is reported before connecting (no connect is tried)")
    func missingFile() throws {
        try withScratch { scratch in
            let port = try closedPort()
            let result = try gzstream(["send", "127.0.0.1:\(port)", "absent"], in: scratch, timeout: 60)
            #expect(result.status == 1)
            #expect(result.err == "gzstream: absent: No such file or directory\n")
        }
    }

    @Test("A sender that stops mid-member: receive says truncated, exit 1, no output file", arguments: [true, false])
    func peerClosesMidMember(toFile: Bool) throws {
        try withScratch { scratch in
            let packed: [UInt8] = try randomBytes(count: 200_000, seed: 2).gzipped()
            let cut = Array(packed.prefix(packed.count / 2))
            let receiver = try Receiver(toFile ? ["0", "-o", "copy"] : ["0"], in: scratch)
            let client = try SocketStreams.connect(host: "127.0.0.1", port: receiver.port, timeout: .seconds(10))
            let peer = try #require((client.input as? SocketInputStream)?.localName)
            try client.output.openOrThrow()
            try client.output.writeAll(cut)
            client.output.close()
            let received = try receiver.started.finish(timeout: 60)
            client.input.close()
            #expect(received.status == 1, "\(received)")
            #expect(received.err == receiver.listeningLine
                + "gzstream: \(peer): unexpected end of input in the deflate data of member 1 at byte \(cut.count)\n")
            #expect(try scratch.listing() == [], "no output file, no temporary file")
        }
    }

    @Test("receive --timeout: no sender in time is an accept timeout; exit 1, no output file")
    func acceptTimeout() throws {
        try withScratch { scratch in
            // -q keeps the listening line: with port 0 it is the only way to learn the port.
            let started = try StartedProcess(Locations.binary, ["receive", "-q", "--timeout", "0.2", "0", "-o", "copy"],
                                             in: scratch)
            let result = try started.finish(timeout: 60)
            let port = try #require(result.errLines.first?.split(separator: ":").last)
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "gzstream: listening on 127.0.0.1:\(port)\n"
                + "gzstream: 127.0.0.1:\(port): accept failed: Connection timed out\n")
            #expect(try scratch.listing() == [])
        }
    }

    @Test("A port given: receive says where it listens only with -v", arguments: [false, true])
    func listeningLineWithGivenPort(verbose: Bool) throws {
        try withScratch { scratch in
            let port = try closedPort()
            let result = try gzstream(["receive", "--timeout", "0.2", "127.0.0.1:\(port)"] + (verbose ? ["-v"] : []),
                                      in: scratch, timeout: 60)
            #expect(result.status == 1)
            #expect(result.err == (verbose ? "gzstream: listening on 127.0.0.1:\(port)\n" : "")
                + "gzstream: 127.0.0.1:\(port): accept failed: Connection timed out\n")
        }
    }

    @Test("receive --timeout: a sender that connects and sends nothing is a read timeout; exit 1, no output file")
    func idleSenderTimesOut() throws {
        try withScratch { scratch in
            let receiver = try Receiver(["--timeout", "0.3", "0", "-o", "copy"], in: scratch)
            let client = try SocketStreams.connect(host: "127.0.0.1", port: receiver.port, timeout: .seconds(10))
            let peer = try #require((client.input as? SocketInputStream)?.localName)
            let received = try receiver.started.finish(timeout: 60)
            client.input.close()
            client.output.close()
            #expect(received.status == 1, "\(received)")
            #expect(received.err == receiver.listeningLine + "gzstream: \(peer): read failed: Connection timed out\n")
            #expect(try scratch.listing() == [])
        }
    }

    @Test("send --timeout: a listener whose queue is full is a connect timeout")
    func connectTimeout() throws {
        try withScratch { scratch in
            let file = try scratch.write("data", "hello\n")
            // On Linux a listener whose accept queue is full drops new SYNs, so a connect waits;
            // the queue is filled here (backlog 1 holds about 2) until a connect times out.
            let listener = try SocketListener(port: 0, backlog: 1)
            defer { try? listener.close() }
            var held: [(input: ByteInputStream, output: ByteOutputStream)] = []
            defer { for pair in held { pair.input.close(); pair.output.close() } }
            var full = false
            for _ in 0..<8 {
                do {
                    held.append(try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .milliseconds(200)))
                } catch {
                    full = true
                    break
                }
            }
            try #require(full, "8 connections were queued without a timeout")
            let result = try gzstream(["send", "--timeout", "0.3", "127.0.0.1:\(listener.port)", file], in: scratch, timeout: 60)
            #expect(result.status == 1)
            #expect(result.err == "gzstream: 127.0.0.1:\(listener.port): connect failed: Connection timed out\n")
        }
    }

    @Test("send --timeout: a peer that never closes is a read timeout once all is sent; one that never reads, a write timeout",
          arguments: [false, true])
    func idleReceiverTimesOut(fillsBuffers: Bool) throws {
        try withScratch { scratch in
            // The peer is accepted by the system and never read nor closed by anyone.
            let listener = try SocketListener(port: 0)
            defer { try? listener.close() }
            // 32 MiB stored (-0: cheap to make and to pack) are more than the socket buffers hold:
            // Linux grows a receive buffer only as its owner reads, so one never read stays near
            // tcp_rmem's default (128 KiB), and a send buffer is at most tcp_wmem's maximum (4 MiB
            // by default). 6 bytes fit.
            let file = try scratch.write("data", fillsBuffers ? [UInt8](repeating: 0, count: 32 << 20) : Array("hello\n".utf8))
            let result = try gzstream(["send", "-0", "--timeout", "0.3", "127.0.0.1:\(listener.port)", file],
                                      in: scratch, timeout: 60)
            #expect(result.status == 1)
            let operation = fillsBuffers ? "write" : "read"
            #expect(result.err == "gzstream: 127.0.0.1:\(listener.port): \(operation) failed: Connection timed out\n")
        }
    }

    @Test("receive --max-output: exceeded is exit 1 with no output file; the sender fails too (the connection is reset)")
    func maxOutputExceeded() throws {
        try withScratch { scratch in
            let file = try scratch.write("data", sampleText(byteCount: 1 << 20))
            let receiver = try Receiver(["--max-output", "1000", "0", "-o", "copy"], in: scratch)
            let sent = try gzstream(["send", "127.0.0.1:\(receiver.port)", file], in: scratch, timeout: 60)
            let received = try receiver.started.finish(timeout: 60)
            #expect(received.status == 1, "\(received)")
            #expect(received.errLines.count == 2 && received.err.hasPrefix(receiver.listeningLine))
            #expect(received.errLines.last?.contains(": output exceeds the limit of 1000 bytes (at byte ") == true)
            #expect(sent.status == 1, "\(sent)")
            let reset = sent.err.hasSuffix(": Connection reset by peer\n") || sent.err.hasSuffix(": Broken pipe\n")
            #expect(reset && sent.err.hasPrefix("gzstream: 127.0.0.1:\(receiver.port): ") && sent.errLines.count == 1,
                    "\(sent)")
            #expect(try scratch.listing() == ["data"])
        }
    }

    @Test("When receive fails after reading everything (-o /dev/full), send fails too: the connection is reset",
          .enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "no /dev/full here"))
    func receiverFailureResetsSender() throws {
        try withScratch { scratch in
            let file = try scratch.write("data", "hello\n")
            let receiver = try Receiver(["0", "-o", "/dev/full"], in: scratch)
            let sent = try gzstream(["send", "127.0.0.1:\(receiver.port)", file], in: scratch, timeout: 60)
            let received = try receiver.started.finish(timeout: 60)
            #expect(received.status == 1)
            #expect(received.err == receiver.listeningLine + "gzstream: /dev/full: write failed: No space left on device\n")
            #expect(sent.status == 1)
            #expect(sent.err == "gzstream: 127.0.0.1:\(receiver.port): read failed: Connection reset by peer\n")
        }
    }

    @Test("receive -o an existing file: refused before listening without -f; replaced with -f")
    func existingOutput() throws {
        try withScratch { scratch in
            try scratch.write("copy", "keep me\n")
            let refused = try gzstream(["receive", "0", "-o", "copy"], in: scratch, timeout: 60)
            #expect(refused.status == 1)
            #expect(refused.err == "gzstream: copy: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.read("copy") == Array("keep me\n".utf8))

            let data = sampleText(byteCount: 50_000)
            let file = try scratch.write("data", data)
            let receiver = try Receiver(["-f", "0", "-o", "copy"], in: scratch)
            let sent = try gzstream(["send", "127.0.0.1:\(receiver.port)", file], in: scratch, timeout: 60)
            let received = try receiver.started.finish(timeout: 60)
            #expect(sent.status == 0 && received.status == 0, "\(sent); \(received)")
            #expect(try scratch.read("copy") == data)
        }
    }

    @Test("receive killed by SIGTERM after reading everything, while its output is stuck: the sender fails, not exit 0")
    func receiverKilledResetsSender() throws {
        try withScratch { scratch in
            _ = try scratch.write("zeros", [UInt8](repeating: 0, count: 3_000_000))
            // The receiver reads the whole stream (3 KB compressed) but cannot write more than a
            // pipe's buffer to a reader that sleeps; the sender waits for the connection to close.
            let script = #"""
                ( "$0" receive 0 2>recv.err & echo $! >recv.pid; wait ) | sleep 30 &
                sleeper=$!
                i=0; while [ $i -lt 200 ] && ! grep -q listening recv.err; do sleep 0.05; i=$((i+1)); done
                port=$(sed -n 's/.*:\([0-9]*\)$/\1/p' recv.err)
                "$0" send "127.0.0.1:$port" zeros 2>send.err & sender=$!
                sleep 1
                kill -TERM "$(cat recv.pid)"
                wait "$sender"; echo "send $?"
                kill "$sleeper" 2>/dev/null
                """#
            let result = try shell(script, in: scratch, timeout: 60)
            #expect(result.out == "send 1\n", "\(result)")
            let sendError = String(decoding: try scratch.read("send.err"), as: UTF8.self)
            #expect(sendError.contains("Connection reset by peer"), "\(sendError)")
        }
    }

    @Test("receive -o into a directory that does not exist fails before listening, with one line")
    func outputDirectoryMissing() throws {
        try withScratch { scratch in
            let refused = try gzstream(["receive", "0", "-o", "missing/copy"], in: scratch, timeout: 60)
            #expect(refused.status == 1)
            #expect(refused.err == "gzstream: missing/copy: cannot create output: No such file or directory\n",
                    "no 'listening on' line: nothing was bound")
            #expect(try scratch.listing() == [])
        }
    }

    @Test("Bad HOST:PORT and options that do not apply are usage errors", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["send"], "send needs HOST:PORT"),
        (["send", "-o", "x", "localhost:1"], "send writes to its connection: -c, -o, -r, -S, -f, -k, --rm and --index do not apply"),
        (["receive", "--rm", "0"], "receive reads one connection: -r, -S, -k, --rm, -N, --offset and --length do not apply"),
        (["unpack", "--timeout", "1"], "--timeout applies to send and receive"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch, timeout: 60)
            #expect(result.status == 1)
            #expect(result.out == "")
            #expect(result.err == usageError(message))
        }
    }
}

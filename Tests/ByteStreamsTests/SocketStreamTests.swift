import ByteStreams
import Dispatch
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Loopback only. Every read waits at most `socketWaitMilliseconds` for data (poll(2) before the
// blocking read), every loop stops at a byte limit, and every helper thread is joined with a
// time limit, so a broken socket fails the test instead of hanging it.

private let socketWaitMilliseconds: Int32 = 10_000

/// The identity (device, inode) of the open file `fd` refers to, or `nil` when `fd` is not open.
private func openFileIdentity(_ fd: Int32) -> (dev: UInt64, ino: UInt64)? {
    var info = stat()
    guard fstat(fd, &info) == 0 else { return nil }
    return (UInt64(info.st_dev), UInt64(info.st_ino))
}

/// Whether the socket that `fd` referred to (`identity`) is no longer open under that number.
/// Other suites run in parallel and may reuse the number at once, so a descriptor that is open
/// again but names another file counts as closed.
private func socketClosed(_ fd: Int32, identity: (dev: UInt64, ino: UInt64)?) -> Bool {
    guard let identity, let now = openFileIdentity(fd) else { return true }
    return now != identity
}

/// Reads `input` to its end, at most `limit` bytes; `nil` when a read fails or times out.
private func readToEndPolled(_ input: ByteInputStream, limit: Int) -> [UInt8]? {
    let fd = (input as! SocketInputStream).fileDescriptor
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while bytes.count <= limit {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, socketWaitMilliseconds) > 0 else { return nil }
        let count = input.read(&chunk, maxLength: chunk.count)
        if count < 0 { return nil }
        if count == 0 { return bytes }
        bytes += chunk[0..<count]
    }
    return nil
}

/// Runs `body` on another thread; the returned function waits for it (up to `waitLimit`) and
/// tells whether it finished and did not throw.
private func background(_ body: @escaping @Sendable () throws -> Void) -> () -> Bool {
    let done = DispatchSemaphore(value: 0)
    let outcome = Outcome()
    DispatchQueue.global().async {
        do { try body() } catch { outcome.failed = true }
        done.signal()
    }
    return { done.wait(timeout: .now() + .seconds(20)) == .success && !outcome.failed }
}

private final class Outcome: @unchecked Sendable { var failed = false }

/// Whether this host can bind the IPv6 loopback address.
private func ipv6LoopbackAvailable() -> Bool {
    (try? SocketListener(host: "::1", port: 0)) != nil
}

/// A listener on port 0 and a connected pair at each end, opened unless `opening` is `false`.
func connectedPairs(host: String = "127.0.0.1", opening: Bool = true) throws
    -> (listener: SocketListener, client: (input: ByteInputStream, output: ByteOutputStream),
        server: (input: ByteInputStream, output: ByteOutputStream))
{
    let listener = try SocketListener(host: host, port: 0)
    let client = try SocketStreams.connect(host: host, port: listener.port, timeout: .seconds(5))
    let server = try listener.accept()
    if opening {
        for stream in [client.input, client.output, server.input, server.output] as [ByteStream] {
            try stream.openOrThrow()
        }
    }
    return (listener, client, server)
}

@Suite("SocketStreams and SocketListener", .onDedicatedThreads, .serialized, .timeLimit(.minutes(1)))
struct SocketStreamTests {
    @Test("Port 0 gives a bound port; 1 MiB goes each way at once")
    func roundTripOneMebibyte() throws {
        let (listener, client, server) = try connectedPairs()
        #expect(listener.port != 0)
        let up = randomBytes(count: 1 << 20, seed: 1)
        let down = randomBytes(count: 1 << 20, seed: 2)
        // Each written by its own thread, which the test joins before reading.
        nonisolated(unsafe) let clientOutput = client.output, serverOutput = server.output
        let clientWrites = background { try clientOutput.writeAll(up); try clientOutput.closeOrThrow() }
        let serverWrites = background { try serverOutput.writeAll(down); try serverOutput.closeOrThrow() }

        let received = readToEndPolled(server.input, limit: 1 << 20)
        let replied = readToEndPolled(client.input, limit: 1 << 20)
        #expect(clientWrites())
        #expect(serverWrites())
        #expect(received == up)
        #expect(replied == down)
        #expect(server.input.streamStatus == .atEnd)
        for stream in [client.input, server.input] as [ByteStream] {
            stream.close()
            #expect(stream.streamStatus == .closed)
        }
        try listener.close()
    }

    @Test("Half-close: the client ends its output, the server reads to the end and replies")
    func halfClose() throws {
        let (listener, client, server) = try connectedPairs()
        defer { try? listener.close() }
        try client.output.writeAll(Array("request".utf8))
        client.output.close()
        #expect(client.output.streamStatus == .closed)

        #expect(readToEndPolled(server.input, limit: 100) == Array("request".utf8))
        #expect(server.input.streamStatus == .atEnd)
        try server.output.writeAll(Array("reply to request".utf8))
        server.output.close()
        server.input.close()

        #expect(readToEndPolled(client.input, limit: 100) == Array("reply to request".utf8))
        client.input.close()
        #expect(client.input.streamStatus == .closed)
        #expect(client.input.streamError == nil && client.output.streamError == nil)
    }

    @Test("Connecting to a closed port is ECONNREFUSED, naming the operation and peer")
    func refused() throws {
        let listener = try SocketListener(port: 0)
        let port = listener.port
        try listener.close()
        #expect(listener.fileDescriptor == -1)
        try listener.close()  // twice is harmless

        let error = #expect(throws: ByteStreamError.self) {
            _ = try SocketStreams.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        }
        #expect(error?.code == .system(errno: ECONNREFUSED))
        #expect(error?.operation == "connect")
        #expect(error?.target == "127.0.0.1:\(port)")

        let accepted = #expect(throws: ByteStreamError.self) { _ = try listener.accept() }
        #expect(accepted?.code == .notOpen)
    }

    @Test("A connect that cannot finish in time is ETIMEDOUT (a listener whose queue is full)")
    func timeout() throws {
        // On Linux a listener whose accept queue is full drops new SYNs, so the connect waits;
        // at most 8 attempts (backlog 1 queues about 2), each bounded by its 200 ms timeout.
        let listener = try SocketListener(port: 0, backlog: 1)
        defer { try? listener.close() }
        var held: [(input: ByteInputStream, output: ByteOutputStream)] = []
        var timedOut: ByteStreamError?
        for _ in 0..<8 {
            do {
                held.append(try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .milliseconds(200)))
            } catch let error as ByteStreamError {
                timedOut = error
                break
            }
        }
        #expect(!held.isEmpty, "the first connection is queued")
        let error = try #require(timedOut, "8 connections were queued without a timeout")
        #expect(error.code == .system(errno: ETIMEDOUT))
        #expect(error.operation == "connect" && error.target == "127.0.0.1:\(listener.port)")
        for pair in held { pair.input.close(); pair.output.close() }
    }

    @Test("Bad arguments are invalidArgument errors, not crashes")
    func badArguments() {
        let zeroPort = #expect(throws: ByteStreamError.self) {
            _ = try SocketStreams.connect(host: "127.0.0.1", port: 0, timeout: nil)
        }
        #expect(zeroPort?.code == .invalidArgument(name: "port", message: "must be 1...65535, not 0"))
        let negative = #expect(throws: ByteStreamError.self) {
            _ = try SocketStreams.connect(host: "127.0.0.1", port: 9, timeout: .seconds(-1))
        }
        if case .invalidArgument(let name, _)? = negative?.code { #expect(name == "timeout") } else {
            Issue.record("expected invalidArgument, got \(String(describing: negative))")
        }
        let zeroIdle = #expect(throws: ByteStreamError.self) {
            _ = try SocketStreams.connect(host: "127.0.0.1", port: 9, timeout: nil, idleTimeout: .zero)
        }
        #expect(zeroIdle?.code == .invalidArgument(name: "idleTimeout", message: "must be more than zero, not 0.0 seconds"))
        let listener = try? SocketListener(port: 0)
        let negativeAccept = #expect(throws: ByteStreamError.self) { _ = try listener?.accept(timeout: .seconds(-1)) }
        if case .invalidArgument(let name, _)? = negativeAccept?.code { #expect(name == "timeout") } else {
            Issue.record("expected invalidArgument, got \(String(describing: negativeAccept))")
        }
    }

    @Test("A port outside the TCP range is an invalidArgument error naming it, for connect and listen",
          arguments: [-1, 65536, Int.max])
    func portOutOfRange(port: Int) {
        let connect = #expect(throws: ByteStreamError.self) {
            _ = try SocketStreams.connect(host: "127.0.0.1", port: port, timeout: nil)
        }
        #expect(connect?.code == .invalidArgument(name: "port", message: "must be 1...65535, not \(port)"))
        #expect(connect?.operation == "connect")
        let listen = #expect(throws: ByteStreamError.self) { _ = try SocketListener(port: port) }
        #expect(listen?.code == .invalidArgument(name: "port", message: "must be 0...65535, not \(port)"))
        #expect(listen?.operation == "listen")
    }

    @Test("A host the resolver cannot find is hostNotFound with its text, for connect and listen",
          arguments: ["connect", "listen"])
    func hostNotFound(operation: String) {
        // `.invalid` is reserved never to resolve (RFC 6761 §6.4).
        let host = "no-such-host.invalid"
        let error = #expect(throws: ByteStreamError.self) {
            if operation == "connect" {
                _ = try SocketStreams.connect(host: host, port: 8734, timeout: .seconds(5))
            } else {
                _ = try SocketListener(host: host, port: 8734)
            }
        }
        guard case .hostNotFound(let message)? = error?.code else {
            Issue.record("expected hostNotFound, got \(String(describing: error))")
            return
        }
        #expect(!message.isEmpty)
        #expect(error?.operation == operation)
        #expect(error?.target == "\(host):8734")
        #expect(error?.description == "\(operation) \(host):8734: \(message)")
    }

    @Test("accept(timeout:) with no peer is ETIMEDOUT naming the listener; a later peer is still accepted")
    func acceptTimeout() throws {
        let listener = try SocketListener(port: 0)
        defer { try? listener.close() }
        let error = #expect(throws: ByteStreamError.self) { _ = try listener.accept(timeout: .milliseconds(50)) }
        #expect(error?.code == .system(errno: ETIMEDOUT))
        #expect(error?.operation == "accept" && error?.target == listener.displayName)

        let client = try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let server = try listener.accept(timeout: .seconds(10))
        try client.output.openOrThrow()
        try server.input.openOrThrow()
        try client.output.writeAll(Array("late".utf8))
        client.output.close()
        #expect(readToEndPolled(server.input, limit: 100) == Array("late".utf8))
        for stream in [client.input, server.input, server.output] as [ByteStream] { stream.close() }
    }

    @Test("Idle timeout: a read with no byte coming fails with ETIMEDOUT; bytes that come in time are read")
    func idleTimeoutOnRead() throws {
        let listener = try SocketListener(port: 0)
        defer { try? listener.close() }
        let client = try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let server = try listener.accept(timeout: .seconds(10), idleTimeout: .milliseconds(100))
        #expect((server.input as? SocketInputStream)?.idleTimeout == .milliseconds(100))
        #expect((server.output as? SocketOutputStream)?.idleTimeout == .milliseconds(100))
        for stream in [client.input, client.output, server.input, server.output] as [ByteStream] {
            try stream.openOrThrow()
        }
        try client.output.writeAll(Array("first".utf8))
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(server.input.read(&buffer, maxLength: buffer.count) == 5)

        #expect(server.input.read(&buffer, maxLength: buffer.count) == -1)
        #expect(server.input.streamStatus == .error)
        let error = try #require(server.input.streamError as? ByteStreamError)
        #expect(error.code == .system(errno: ETIMEDOUT))
        let clientName = (client.input as? SocketInputStream)?.localName
        #expect(clientName?.hasPrefix("127.0.0.1:") == true)
        #expect(error.operation == "read" && error.target == clientName)
        for stream in [client.input, client.output, server.input, server.output] as [ByteStream] { stream.close() }
    }

    @Test("Idle timeout: a write the peer never takes fails with ETIMEDOUT once the buffers are full")
    func idleTimeoutOnWrite() throws {
        let listener = try SocketListener(port: 0)
        defer { try? listener.close() }
        let client = try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5),
                                               idleTimeout: .milliseconds(100))
        // The peer is accepted and never read: both socket buffers fill, then nothing moves.
        let server = try listener.accept(timeout: .seconds(10))
        try client.output.openOrThrow()
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        var failure: ByteStreamError?
        // Loopback buffers hold a few MiB at most; 256 MiB is a bound, not an expectation.
        for _ in 0..<256 {
            do {
                try client.output.writeAll(chunk)
            } catch let error as ByteStreamError {
                failure = error
                break
            }
        }
        let error = try #require(failure, "256 MiB were taken by a peer that reads nothing")
        #expect(error.code == .system(errno: ETIMEDOUT))
        #expect(error.operation == "write" && error.target == "127.0.0.1:\(listener.port)")
        for stream in [client.input, client.output, server.input, server.output] as [ByteStream] { stream.close() }
    }

    @Test("A reset the output met first is the input's error too: its read fails with ECONNRESET, not a clean end")
    func resetSeenByBothHalves() throws {
        let (listener, client, server) = try connectedPairs()
        defer { try? listener.close() }
        (server.output as! SocketOutputStream).resetsOnClose = true
        server.output.close()
        server.input.close()
        // Write until the reset comes back; the kernel reports it to one call only.
        var chunk = [UInt8](repeating: 1, count: 1024)
        var writeError: ByteStreamError?
        for _ in 0..<1000 {
            if client.output.write(&chunk, maxLength: chunk.count) < 0 {
                writeError = client.output.streamError as? ByteStreamError
                break
            }
            usleep(1000)
        }
        #expect(writeError?.errno == ECONNRESET || writeError?.errno == EPIPE, "\(String(describing: writeError))")
        if writeError?.errno == ECONNRESET {
            var byte: UInt8 = 0
            #expect(client.input.read(&byte, maxLength: 1) == -1)
            #expect((client.input.streamError as? ByteStreamError)?.errno == ECONNRESET)
        }
        client.input.close()
        client.output.close()
    }

    @Test("resetsOnClose: the peer reads ECONNRESET, not end of stream; without it, end of stream",
          arguments: [true, false])
    func resetOnClose(resets: Bool) throws {
        let (listener, client, server) = try connectedPairs()
        defer { try? listener.close() }
        try server.output.writeAll(Array("partial".utf8))
        (server.output as! SocketOutputStream).resetsOnClose = resets
        server.output.close()
        server.input.close()
        var buffer = [UInt8](repeating: 0, count: 64)
        var received: [UInt8] = []
        var last = 0
        // At most 64 reads: "partial" (unless the reset dropped it), then the end or the reset.
        for _ in 0..<64 {
            let fd = (client.input as! SocketInputStream).fileDescriptor
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, socketWaitMilliseconds) > 0 else { break }
            last = client.input.read(&buffer, maxLength: buffer.count)
            if last <= 0 { break }
            received += buffer[0..<last]
        }
        if resets {
            #expect(last == -1)
            #expect((client.input.streamError as? ByteStreamError)?.code == .system(errno: ECONNRESET))
        } else {
            #expect(last == 0 && received == Array("partial".utf8))
            #expect(client.input.streamStatus == .atEnd)
        }
        client.input.close()
        client.output.close()
    }

    @Test("IPv6 loopback: a pair over ::1",
          .enabled(if: ipv6LoopbackAvailable(), "this host cannot bind ::1 (no IPv6 loopback)"))
    func ipv6() throws {
        let (listener, client, server) = try connectedPairs(host: "::1")
        defer { try? listener.close() }
        #expect(listener.displayName == "[::1]:\(listener.port)")
        #expect((client.input as? SocketInputStream)?.displayName == "[::1]:\(listener.port)")
        try client.output.writeAll(Array("over IPv6".utf8))
        client.output.close()
        #expect(readToEndPolled(server.input, limit: 100) == Array("over IPv6".utf8))
        server.output.close()
        #expect(readToEndPolled(client.input, limit: 100) == [])
        for stream in [client.input, server.input] as [ByteStream] { stream.close() }
    }

    @Test("The socket is closed when both streams are closed, not before")
    func closingBothClosesDescriptor() throws {
        let (listener, client, server) = try connectedPairs()
        defer { try? listener.close() }
        let input = try #require(client.input as? SocketInputStream)
        let output = try #require(client.output as? SocketOutputStream)
        let fd = input.fileDescriptor
        #expect(fd >= 0 && output.fileDescriptor == fd, "one socket behind both streams")
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "close-on-exec is set")
        #expect(input.localName == (server.input as? SocketInputStream)?.displayName, "each side names the other")

        let identity = openFileIdentity(fd)
        #expect(identity != nil)
        input.close()
        #expect(!socketClosed(fd, identity: identity), "the output stream still uses the socket")
        #expect(input.fileDescriptor == fd)
        try output.writeAll(Array("still writable".utf8))
        output.close()
        #expect(socketClosed(fd, identity: identity))
        #expect(output.fileDescriptor == -1 && input.fileDescriptor == -1)
        #expect(input.localName == nil)
        #expect(input.streamStatus == .closed && output.streamStatus == .closed)

        #expect(readToEndPolled(server.input, limit: 100) == Array("still writable".utf8))
        server.input.close()
        server.output.close()
    }

    @Test("Dropping both streams unclosed still closes the socket")
    func droppingClosesDescriptor() throws {
        let listener = try SocketListener(port: 0)
        defer { try? listener.close() }
        var fd: Int32 = -1
        var identity: (dev: UInt64, ino: UInt64)?
        do {
            let client = try SocketStreams.connect(host: "localhost", port: listener.port, timeout: .seconds(5))
            fd = (client.input as! SocketInputStream).fileDescriptor
            identity = openFileIdentity(fd)
            #expect(identity != nil)
        }
        #expect(socketClosed(fd, identity: identity))
        let server = try listener.accept()
        try server.input.openOrThrow()
        #expect(readToEndPolled(server.input, limit: 100) == [])
        server.input.close()
        server.output.close()
    }
}

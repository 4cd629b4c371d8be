import ByteStreams
import Dispatch
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Sockets in Swift concurrency: SocketListener.connections, read(into:), write(contentsOf:),
// closing a listener from another task, cancellation. Loopback only, no timing assertion: a
// test that a blocked cooperative thread would stall has a fallback that unblocks it after
// `fallbackSeconds`, and checks the order in which things happened instead.

private let fallbackSeconds = 10

/// Connects to `port` on loopback from a Dispatch thread (connect(2) blocks), sends `bytes`,
/// half-closes, and returns what the server sent back, read to its end.
private func echoClient(port: Int, sending bytes: [UInt8]) async throws -> [UInt8] {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result {
                let (input, output) = try SocketStreams.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
                try output.openOrThrow()
                try input.openOrThrow()
                // Write and read at once: the echo may fill both directions' buffers.
                let writer = DispatchGroup()
                nonisolated(unsafe) let sendingOutput = output
                let writeError = Locked<(any Error)?>(nil)
                DispatchQueue.global().async(group: writer) {
                    do {
                        try sendingOutput.writeAll(bytes)
                        try sendingOutput.closeOrThrow()
                    } catch {
                        writeError.value = error
                    }
                }
                let reply = try input.readToEnd(limit: bytes.count + 1)
                writer.wait()
                input.close()
                if let error = writeError.value { throw error }
                return reply
            })
        }
    }
}

/// Echoes one connection with the asynchronous reads and writes: what comes in goes back out.
private func echo(_ connection: SocketConnection) async throws {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 << 10, alignment: 1)
    defer { buffer.deallocate() }
    while true {
        let count = try await connection.input.read(into: buffer)
        if count == 0 { break }
        try await connection.output.write(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }
    try await connection.output.finishAndClose()
    connection.input.close()
}

/// Echoes each connection of `listener` in a task of its own until the listener is closed.
private func serveEchoes(_ listener: SocketListener) async throws {
    var echoes: [Task<Void, any Error>] = []
    for try await connection in listener.connections {
        echoes.append(Task { try await echo(connection) })
    }
    for echo in echoes { try await echo.value }
}

@Suite("Sockets in Swift concurrency: connections, read(into:), write(contentsOf:), closing and cancelling", .serialized,
       .timeLimit(.minutes(1)))
struct AsyncSocketTests {
    @Test("connections: more tasks waiting for a peer than cores leave the cooperative pool free")
    func waitingListenersDoNotHoldThreads() async throws {
        // A blocking accept(2) in each task would hold every cooperative thread (one per core)
        // until the fallback connects; the probe task then could not run first.
        let listeners = try (0..<4).map { _ in try SocketListener(port: 0) }
        let order = Locked<[String]>([])
        let servers = listeners.map { listener in
            Task {
                var peers = 0
                for try await connection in listener.connections {
                    peers += 1
                    connection.input.close()
                    connection.output.close()
                    break
                }
                return peers
            }
        }
        try await Task.sleep(for: .milliseconds(100))  // let the servers reach their wait
        let ports = listeners.map(\.port)
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(fallbackSeconds)) {
            order.value.append("fallback")
            for port in ports { _ = try? SocketStreams.connect(host: "127.0.0.1", port: port, timeout: .seconds(5)) }
        }
        await Task.detached { order.value.append("probe") }.value
        #expect(order.value.first == "probe")
        // Each server takes one connection.
        var clients: [(input: ByteInputStream, output: ByteOutputStream)] = []
        for port in ports { clients.append(try SocketStreams.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))) }
        for server in servers { #expect(try await server.value == 1) }
        for client in clients {
            client.input.close()
            client.output.close()
        }
        for listener in listeners { try listener.close() }
    }

    @Test("Closing a listener from another task ends the iteration of its connections, which was waiting")
    func closeFromAnotherTask() async throws {
        let listener = try SocketListener(port: 0)
        let server = Task {
            var peers = 0
            for try await connection in listener.connections {
                peers += 1
                connection.input.close()
                connection.output.close()
            }
            return peers
        }
        let client = try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        try await Task.sleep(for: .milliseconds(100))  // the server takes it, then waits again
        try listener.close()
        #expect(try await server.value == 1)
        #expect(listener.fileDescriptor == -1)
        #expect(listener.isClosed)
        try listener.close()  // twice is harmless
        client.input.close()
        client.output.close()
        let again = #expect(throws: ByteStreamError.self) { try listener.accept(timeout: .zero) }
        #expect(again?.code == .notOpen)
    }

    @Test("A blocking accept on another thread wakes with notOpen when the listener is closed")
    func closeWakesBlockingAccept() async throws {
        let listener = try SocketListener(port: 0)
        // Fallback: should the close not wake it, the accept times out instead (ETIMEDOUT).
        let outcome = Task.detached {
            do {
                let connection = try listener.accept(timeout: .seconds(fallbackSeconds))
                connection.input.close()
                connection.output.close()
                return "accepted"
            } catch let error as ByteStreamError {
                return error.code == .notOpen ? "notOpen" : "\(error)"
            } catch {
                return "\(error)"
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        try listener.close()
        #expect(await outcome.value == "notOpen")
    }

    @Test("Cancelling the task that iterates connections closes the listener and throws CancellationError")
    func cancelIteration() async throws {
        let listener = try SocketListener(port: 0)
        let server = Task {
            do {
                for try await connection in listener.connections {
                    connection.input.close()
                    connection.output.close()
                }
                return "ended"
            } catch {
                return error is CancellationError ? "cancelled" : "\(error)"
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        // Fallback: should cancellation not end the wait, closing the listener ends it ("ended").
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(fallbackSeconds)) { try? listener.close() }
        server.cancel()
        #expect(await server.value == "cancelled")
        #expect(listener.isClosed)
    }

    @Test("read(into:) of sockets whose peers send nothing, in more tasks than cores: the pool stays free; cancelling closes the input")
    func suspendedReads() async throws {
        let listener = try SocketListener(port: 0)
        defer { try? listener.close() }
        var clients: [(input: ByteInputStream, output: ByteOutputStream)] = []
        var servers: [(input: ByteInputStream, output: ByteOutputStream)] = []
        for _ in 0..<4 {
            clients.append(try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5)))
            servers.append(try listener.accept(timeout: .seconds(5)))
        }
        let readers = servers.map { server in
            // Each input is its reader task's alone until the task's value is awaited.
            nonisolated(unsafe) let input = server.input
            return Task {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 100, alignment: 1)
                defer { buffer.deallocate() }
                do {
                    return "read \(try await input.read(into: buffer))"
                } catch {
                    return error is CancellationError ? "cancelled" : "\(error)"
                }
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        let order = Locked<[String]>([])
        // Fallback: a blocked read would return once its peer ends ("read 0").
        nonisolated(unsafe) let clientOutputs = clients.map(\.output)
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(fallbackSeconds)) {
            order.value.append("fallback")
            for output in clientOutputs { output.close() }
        }
        await Task.detached { order.value.append("probe") }.value
        #expect(order.value.first == "probe")
        for reader in readers { reader.cancel() }
        for reader in readers { #expect(await reader.value == "cancelled") }
        for server in servers {
            #expect(server.input.streamStatus == .closed)
            #expect(server.input.streamError == nil)
            server.output.close()  // the last half: the socket is closed now
            #expect((server.input as! SocketInputStream).fileDescriptor == -1)
        }
        for client in clients {
            client.input.close()
            client.output.close()
        }
    }

    @Test("connections echo with read(into:) and write(contentsOf:), each in a task of its own", arguments: [0, 1, 4095, 4096, 4097, 1 << 20 + 1])
    func echoConnections(size: Int) async throws {
        let listener = try SocketListener(port: 0)
        let server = Task { try await serveEchoes(listener) }
        let contents = (0..<3).map { randomBytes(count: size, seed: UInt64(70 + $0)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for content in contents {
                group.addTask {
                    let reply = try await echoClient(port: listener.port, sending: content)
                    #expect(reply.count == content.count)
                    #expect(reply == content)
                }
            }
            try await group.waitForAll()
        }
        try listener.close()
        try await server.value
    }

    @Test("write(contentsOf:) then the blocking writeAll in one async function; a stream scheduled on a queue is refused")
    func namesApart() async throws {
        let output = MemoryOutputStream()
        try await output.write(contentsOf: [1, 2] as [UInt8])
        try output.writeAll([3] as [UInt8])  // no await: the blocking writeAll
        #expect(output.data == Data([1, 2, 3]))

        let scheduled = MemoryOutputStream()
        scheduled.schedule(on: DispatchQueue(label: "elsewhere"))
        let error = await #expect(throws: ByteStreamError.self) { try await scheduled.write(contentsOf: [1] as [UInt8]) }
        if case .invalidArgument(let name, _)? = error?.code { #expect(name == "scheduler") } else { Issue.record("got \(String(describing: error))") }
        scheduled.close()
    }
}

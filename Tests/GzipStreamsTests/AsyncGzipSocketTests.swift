import ByteStreams
import Dispatch
import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Gzip streams over sockets from Swift concurrency: read(into:), write(contentsOf:), drain()
// and finishAndClose() of GzipInputStream and GzipOutputStream over the pair of a
// SocketListener.connections element, which follow their inner socket on the task's own
// scheduler instead of blocking. Loopback only; nothing asserts a time.

/// A loopback connection: the client's pair (blocking, for the peer's side of a test) and the
/// server's, taken from `connections`.
private func connect() async throws -> (client: (input: ByteInputStream, output: ByteOutputStream), server: SocketConnection) {
    let listener = try SocketListener(port: 0)
    defer { try? listener.close() }
    let client = try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
    for try await connection in listener.connections {
        return (client, connection)
    }
    throw ByteStreamError(.notOpen, operation: "accept")
}

/// Runs `body` on a Dispatch thread (blocking socket calls), returning its result.
private func onDispatchThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result(catching: body)) }
    }
}

/// Reads `input` with read(into:) to its end.
private func readAll(_ input: GzipInputStream) async throws -> [UInt8] {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    defer { buffer.deallocate() }
    var bytes: [UInt8] = []
    while true {
        let count = try await input.read(into: buffer)
        if count == 0 { return bytes }
        bytes += buffer[..<count]
    }
}

@Suite("Gzip streams over sockets in Swift concurrency", .serialized, .timeLimit(.minutes(1)))
struct AsyncGzipSocketTests {
    @Test("write(contentsOf:) and finishAndClose() of a GzipOutputStream over a socket send one whole member",
          arguments: [0, 1, 4095, 4096, 4097, 1 << 20 + 1])
    func writeMember(size: Int) async throws {
        let (client, server) = try await connect()
        let content = randomBytes(count: size, seed: 90)
        nonisolated(unsafe) let clientInput = client.input
        let received = Task { try await onDispatchThread { try GzipInputStream(wrapping: clientInput).readToEnd(limit: size + 1) } }
        let gzip = try GzipOutputStream(wrapping: server.output)
        // Shrunk buffers: the writes must wait for the peer more than once.
        var small: Int32 = 16 << 10
        setsockopt(server.output.fileDescriptor, SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        try await gzip.write(contentsOf: content)
        try await gzip.finishAndClose()
        #expect(gzip.streamStatus == .closed)
        let bytes = try await received.value
        #expect(bytes.count == content.count)
        #expect(bytes == content)
        server.input.close()
        client.output.close()
    }

    @Test("read(into:) of a GzipInputStream over a socket whose peer sends the member one byte per write", arguments: [0, 1, 300])
    func readByteByByte(size: Int) async throws {
        let (client, server) = try await connect()
        let content = textBytes(count: size, seed: 91)
        let member = try Data(content).gzipped()
        nonisolated(unsafe) let clientOutput = client.output
        let sender = Task {
            try await onDispatchThread {
                try clientOutput.openOrThrow()
                for byte in member { try clientOutput.writeAll([byte]) }
                try clientOutput.closeOrThrow()
            }
        }
        let bytes = try await readAll(try GzipInputStream(wrapping: server.input))
        try await sender.value
        #expect(bytes == content)
        server.output.close()
        client.input.close()
    }

    @Test("A GzipInputStream over a socket reports the peer's damage as GzipError: not gzip, and a member cut short")
    func damage() async throws {
        for (bytes, expected) in [(Array("plain text, not gzip".utf8), "bad-magic"),
                                  (Array(try Data(textBytes(count: 5000, seed: 92)).gzipped().dropLast(4)), "truncated")] {
            let (client, server) = try await connect()
            nonisolated(unsafe) let clientOutput = client.output
            try await onDispatchThread {
                try clientOutput.writeAll(bytes)
                try clientOutput.closeOrThrow()
            }
            let input = try GzipInputStream(wrapping: server.input)
            let error = await #expect(throws: GzipError.self) { _ = try await readAll(input) }
            #expect(error?.kind == expected, "got \(String(describing: error))")
            input.close()
            server.output.close()
            client.input.close()
        }
    }

    @Test("Cancelling a task suspended in read(into:) of a GzipInputStream over a socket throws CancellationError and closes it")
    func cancelGzipRead() async throws {
        let (client, server) = try await connect()
        let input = try GzipInputStream(wrapping: server.input)
        nonisolated(unsafe) let reading = input
        let reader = Task {
            do {
                _ = try await readAll(reading)
                return "ended"
            } catch {
                return error is CancellationError ? "cancelled" : "\(error)"
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        // Fallback: should the read ignore cancellation, the peer's end finishes it ("bad-magic"
        // of an empty input, or "ended").
        nonisolated(unsafe) let clientOutput = client.output
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(10)) { clientOutput.close() }
        reader.cancel()
        #expect(await reader.value == "cancelled")
        #expect(input.streamStatus == .closed)
        #expect(server.input.streamStatus == .closed)
        server.output.close()
        client.input.close()
    }

    @Test("flush() then drain() puts a line in the socket, where the peer inflates it before the member ends")
    func flushAndDrain() async throws {
        let (client, server) = try await connect()
        let gzip = try GzipOutputStream(wrapping: server.output)
        try await gzip.write(contentsOf: Array("hello\n".utf8))
        try gzip.flush()
        try await gzip.drain()
        nonisolated(unsafe) let clientInput = client.input
        let line = try await onDispatchThread {
            let reader = try GzipInputStream(wrapping: clientInput)
            try reader.openOrThrow()
            var buffer = [UInt8](repeating: 0, count: 6)
            var count = 0
            while count < 6 {
                let read = buffer.withUnsafeMutableBufferPointer { reader.read($0.baseAddress! + count, maxLength: 6 - count) }
                if read <= 0 { break }
                count += read
            }
            return Array(buffer[..<count])
        }
        #expect(line == Array("hello\n".utf8))
        try await gzip.finishAndClose()
        server.input.close()
        client.output.close()
    }
}

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

// Loopback only. Nothing here asserts a time: a wait that should end ends the test's task, and
// each test that could otherwise hang on a peer has a fallback that makes the peer finish
// after `fallbackSeconds`, so a broken implementation fails an expectation instead of hanging.

private let fallbackSeconds = 10

/// A connected pair, opened: the client's streams and the server's.
private struct Connection {
    let client: (input: ByteInputStream, output: ByteOutputStream)
    let server: (input: ByteInputStream, output: ByteOutputStream)

    init() throws {
        let listener = try SocketListener(port: 0)
        defer { try? listener.close() }
        client = try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        server = try listener.accept()
        for stream in [client.input, client.output, server.input, server.output] as [ByteStream] {
            try stream.openOrThrow()
        }
    }

    /// Shrinks the kernel's buffers so that a few MB cannot sit in them: writes must wait.
    func shrinkBuffers() {
        var size: Int32 = 64 * 1024
        let length = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt((client.output as! SocketOutputStream).fileDescriptor, SOL_SOCKET, SO_SNDBUF, &size, length)
        _ = setsockopt((server.input as! SocketInputStream).fileDescriptor, SOL_SOCKET, SO_RCVBUF, &size, length)
    }
}

/// Iterates `input.chunks()` in a task and returns the task, whose value is the bytes and the
/// error that ended the iteration (`nil` at the end of the stream).
/// The caller looks at `input` again only after awaiting the task's value.
private func iterate(_ input: ByteInputStream) -> Task<(bytes: [UInt8], error: (any Error)?), Never> {
    nonisolated(unsafe) let input = input
    return Task {
        var bytes: [UInt8] = []
        do {
            for try await chunk in input.chunks() { bytes += chunk }
            return (bytes, nil)
        } catch {
            return (bytes, error)
        }
    }
}

/// Starts reading `input` to its end on a Dispatch thread once `gate` is signalled, pausing
/// 1 ms after every 8 reads of at most 16 KiB (a slow peer), at most `limit` bytes. The bytes,
/// or `nil` when a read fails or waits more than `fallbackSeconds`, go to `result`; `group`
/// is left when done.
private func readSlowly(_ input: ByteInputStream, limit: Int, after gate: DispatchSemaphore,
                        into result: Locked<[UInt8]?>, group: DispatchGroup) {
    group.enter()
    // The reading thread's alone until the caller waits for `group`.
    nonisolated(unsafe) let input = input
    DispatchQueue.global().async {
        defer { group.leave() }
        _ = gate.wait(timeout: .now() + .seconds(fallbackSeconds * 2))
        gate.signal()  // pass it on to the next reader
        let fd = (input as! SocketInputStream).fileDescriptor
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var reads = 0
        while bytes.count <= limit {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32(fallbackSeconds * 1000)) > 0 else { return }
            let count = input.read(&chunk, maxLength: chunk.count)
            if count < 0 { return }
            if count == 0 { return result.value = bytes }
            bytes += chunk[0..<count]
            reads += 1
            if reads % 8 == 0 { usleep(1000) }
        }
    }
}

@Suite("Async conveniences: cancellation-aware chunks() and write(contentsOf:)", .serialized, .timeLimit(.minutes(1)))
struct AsyncConvenienceTests {
    @Test("chunks() of a socket whose peer sends nothing: cancelling the task ends it with CancellationError")
    func cancelWhileWaiting() async throws {
        let connection = try Connection()
        let iteration = iterate(connection.client.input)
        // Let the iteration reach its wait (if it has not, cancellation is seen before the
        // wait instead, with the same outcome).
        try await Task.sleep(for: .milliseconds(200))
        // Fallback: should the wait ignore cancellation, the peer ends its output and the
        // iteration ends without an error, failing the expectations below.
        // Written or closed by another thread only; the test waits for the iteration, not for it.
        nonisolated(unsafe) let serverOutput = connection.server.output
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(fallbackSeconds)) { serverOutput.close() }

        iteration.cancel()
        let (bytes, error) = await iteration.value
        #expect(error is CancellationError, "got \(String(describing: error))")
        #expect(bytes.isEmpty)
        // What cancellation does to the stream: closed like after any failure, with no error
        // of its own; the output half of the socket still works.
        #expect(connection.client.input.streamStatus == .closed)
        #expect(connection.client.input.streamError == nil)
        try await connection.client.output.write(contentsOf: Array("still here".utf8))
        try connection.client.output.closeOrThrow()
        #expect(try connection.server.input.readToEnd(limit: 100) == Array("still here".utf8))
        connection.server.input.close()
        connection.server.output.close()
    }

    @Test("chunks() of a socket yields what the peer sends, as it arrives, then ends")
    func socketChunks() async throws {
        let connection = try Connection()
        let iteration = iterate(connection.client.input)
        let content = randomBytes(count: 200_000, seed: 41)
        // Written or closed by another thread only; the test waits for the iteration, not for it.
        nonisolated(unsafe) let serverOutput = connection.server.output
        DispatchQueue.global().async {
            // Three pieces with pauses: the iteration waits between them.
            for range in [0..<10, 10..<100_000, 100_000..<200_000] {
                try? serverOutput.writeAll(content[range])
                usleep(20_000)
            }
            serverOutput.close()
        }
        let (bytes, error) = await iteration.value
        #expect(error == nil)
        expectSameBytes(bytes, content)
        #expect(connection.client.input.streamStatus == .closed)
        connection.client.output.close()
        connection.server.input.close()
    }

    @Test("chunks() of a pipe that stays empty: cancelling the task ends it with CancellationError")
    func cancelPipe() async throws {
        let pipe = try TestPipe()
        let input = FileInputStream(fileDescriptor: pipe.readEnd)
        let iteration = iterate(input)
        try await Task.sleep(for: .milliseconds(100))
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(fallbackSeconds)) { pipe.closeWriteEnd() }
        iteration.cancel()
        let (_, error) = await iteration.value
        #expect(error is CancellationError, "got \(String(describing: error))")
        pipe.closeWriteEnd()
    }

    @Test("chunks() in a task cancelled before it starts throws CancellationError for a socket; a memory stream is read as before")
    func cancelledBeforeStart() async throws {
        let connection = try Connection()
        // The task's alone until its value is awaited.
        nonisolated(unsafe) let input = connection.client.input
        let socketOutcome = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                for try await _ in input.chunks() {}
                return "ended"
            } catch {
                return error is CancellationError ? "cancelled" : "\(error)"
            }
        }.value
        #expect(socketOutcome == "cancelled")

        let memoryBytes = try await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var bytes: [UInt8] = []
            for try await chunk in MemoryInputStream(bytes: [1, 2, 3]).chunks() { bytes += chunk }
            return bytes
        }.value
        #expect(memoryBytes == [1, 2, 3], "existing behaviour: memory and files ignore cancellation")
        for stream in [connection.client.output, connection.server.input, connection.server.output] as [ByteStream] {
            stream.close()
        }
    }

    @Test("write(contentsOf:): several MB into sockets whose peers read slowly arrive intact, and the cooperative pool stays free")
    func writeAllSlowPeers() async throws {
        // More writers than cores, into sockets whose peers do not read yet. Were a full
        // socket to block a cooperative thread, the probe task could not run before the
        // fallback lets the peers read.
        let connections = try (0..<3).map { _ in try Connection() }
        let contents = (0..<3).map { randomBytes(count: 3 << 20, seed: UInt64(50 + $0)) }
        for connection in connections { connection.shrinkBuffers() }
        let writers = zip(connections, contents).map { connection, content in
            // Each output is its writer task's alone; the test looks at the other streams.
            nonisolated(unsafe) let output = connection.client.output
            return Task {
                try await output.write(contentsOf: content)
                try output.closeOrThrow()
            }
        }
        let gate = DispatchSemaphore(value: 0)
        let order = Locked<[String]>([])
        let results = (0..<3).map { _ in Locked<[UInt8]?>(nil) }
        let readers = DispatchGroup()
        for (connection, (content, result)) in zip(connections, zip(contents, results)) {
            readSlowly(connection.server.input, limit: content.count, after: gate, into: result, group: readers)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(fallbackSeconds)) {
            order.value.append("fallback")
            gate.signal()
        }
        try await Task.sleep(for: .milliseconds(100))  // let the writers fill the sockets
        await Task.detached { order.value.append("probe") }.value
        gate.signal()

        await withCheckedContinuation { continuation in readers.notify(queue: .global()) { continuation.resume() } }
        for writer in writers { try await writer.value }
        #expect(order.value.first == "probe")
        for (result, content) in zip(results, contents) {
            #expect(result.value != nil)
            expectSameBytes(result.value ?? [], content)
        }
        for connection in connections {
            connection.client.input.close()
            connection.server.input.close()
            connection.server.output.close()
        }
    }

    @Test("write(contentsOf:) of Data and of an array into memory; a full buffer throws noSpaceAvailable")
    func writeAllMemory() async throws {
        let output = MemoryOutputStream()
        let content = randomBytes(count: 200_001, seed: 60)
        try await output.write(contentsOf: Data(content))
        try await output.write(contentsOf: content[0..<5])
        expectSameBytes(output.data, content + content[0..<5])

        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 10)
        defer { buffer.deallocate() }
        let full = MemoryOutputStream(buffer: buffer, capacity: 10)
        let error = await #expect(throws: ByteStreamError.self) { try await full.write(contentsOf: Array(0..<20) as [UInt8]) }
        #expect(error?.code == .noSpaceAvailable)
    }

    @Test("write(contentsOf:) in a cancelled task writes nothing and throws CancellationError; the stream stays usable")
    func writeAllCancelled() async throws {
        // The task's alone until its value is awaited.
        nonisolated(unsafe) let output = MemoryOutputStream()
        let outcome = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                try await output.write(contentsOf: [1, 2, 3] as [UInt8])
                return "written"
            } catch {
                return error is CancellationError ? "cancelled" : "\(error)"
            }
        }.value
        #expect(outcome == "cancelled")
        #expect(output.data.isEmpty)
        try await output.write(contentsOf: [4] as [UInt8])
        #expect(output.data == Data([4]))
    }
}

import ByteStreams
import ByteStreamsFoundation
import Dispatch
import Foundation
import GzipStreams
import Testing
import TestSupport

/// Streams over a pipe, a socket, and gzip over a socket, scheduled on a run loop: the same
/// readiness-driven events as on a dispatch queue, delivered on the loop's thread.
@Suite("Readiness on a run loop: pipe, socket, gzip over a socket", .onDedicatedThreads, .serialized, .timeLimit(.minutes(1)))
struct RunLoopReadinessTests {
    /// A connected loopback pair: (client input, client output, server input, server output),
    /// unopened.
    private func connectedPair() throws -> (ByteInputStream, ByteOutputStream, ByteInputStream, ByteOutputStream) {
        let listener = try SocketListener(port: 0)
        let client = try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        let server = try listener.accept()
        return (client.input, client.output, server.input, server.output)
    }

    /// Runs `body` on a new thread; the returned semaphore is signalled when it returns.
    private func background(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread { body(); done.signal() }.start()
        return done
    }

    @Test("A pipe holding 10,000 bytes and closed: open, four 'has bytes' for reads of 4096, 4096, 1808 and 0, end")
    func pipeInput() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let content = randomBytes(count: 10_000, seed: 41)
        #expect(content.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == content.count)
        close(ends[1])
        let input = FileInputStream(fileDescriptor: ends[0], closesDescriptor: true)
        expectFourReadsOnLoop(input, loop: loop, content: content)
    }

    @Test("An empty pipe: no 'has bytes' and the loop stays free until the writer writes; then the bytes and the end")
    func pipeWaitsForWriter() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let input = FileInputStream(fileDescriptor: ends[0], closesDescriptor: true)
        let delegate = RecordingDelegate(readLength: 100)
        loop.scheduleAndOpen(input, delegate: delegate)
        // Nothing to read: the loop runs other work, and a read returns 0 with the stream open.
        let idle = loop.sync { () -> (Int, ByteStream.Status, Bool) in
            var byte: UInt8 = 0
            return (input.read(&byte, maxLength: 1), input.streamStatus, input.hasBytesAvailable)
        }
        #expect(idle?.0 == 0)
        #expect(idle?.1 == .open)
        #expect(idle?.2 == false)
        #expect(delegate.events == [.openCompleted])
        let message = Array("ready now".utf8)
        #expect(message.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == message.count)
        close(ends[1])
        #expect(delegate.waitUntilEnded())
        loop.sync { input.close() }
        #expect(delegate.bytesRead == message)
        #expect(delegate.events.first == .openCompleted)
        #expect(delegate.events.last == .endEncountered)
        #expect(delegate.events.filter { $0 == .endEncountered }.count == 1)
        withExtendedLifetime(delegate) {}
    }

    @Test("A socket: the peer's 1 MiB arrives through 'has bytes' events on the loop, then the end once")
    func socketInput() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        // The client's halves are used on the loop's thread, the server's by the background
        // thread, while this one only waits for them.
        nonisolated(unsafe) let (clientInput, clientOutput, serverInput, serverOutput) = try connectedPair()
        let content = randomBytes(count: 1 << 20, seed: 42)
        let delegate = RecordingDelegate(readLength: 16 << 10)
        loop.scheduleAndOpen(clientInput, delegate: delegate)
        let sent = background {
            serverOutput.open()
            // In pieces, so that the reader meets an empty socket between them.
            for start in stride(from: 0, to: content.count, by: 64 << 10) {
                try? serverOutput.writeAll(content[start..<min(start + (64 << 10), content.count)])
            }
            serverOutput.close()
        }
        #expect(sent.wait(timeout: .now() + waitLimit) == .success)
        #expect(delegate.waitUntilEnded())
        loop.sync { clientInput.close(); clientOutput.close() }
        serverInput.close()
        #expect(delegate.bytesRead == content)
        #expect(delegate.events.first == .openCompleted)
        #expect(delegate.events.last == .endEncountered)
        #expect(Set(delegate.events.dropFirst().dropLast()) == [.hasBytesAvailable])
        #expect(delegate.threads.allSatisfy { $0 == loop.thread })
        withExtendedLifetime(delegate) {}
    }

    @Test("A socket output on the loop writing 8 MiB to a slow reader: every byte arrives, and no event comes after the last write")
    func socketOutput() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        // The client's halves are used on the loop's thread, the server's by the background
        // thread, while this one only waits for them.
        nonisolated(unsafe) let (clientInput, clientOutput, serverInput, serverOutput) = try connectedPair()
        let content = randomBytes(count: 8 << 20, seed: 43)
        let received = Locked<[UInt8]>([])
        let reader = background {
            serverInput.open()
            var buffer = [UInt8](repeating: 0, count: 32 << 10)
            var total = 0
            while total < content.count {
                let count = serverInput.read(&buffer, maxLength: buffer.count)
                guard count > 0 else { break }
                received.update { $0 += buffer[0..<count] }
                total += count
                if total % (1 << 20) < count { usleep(20_000) }  // a pause each MiB: the socket fills
            }
        }
        // 256 KiB offered per event: more than the socket takes at once when it is full.
        let delegate = RecordingDelegate(writeLength: 256 << 10, source: content)
        loop.scheduleAndOpen(clientOutput, delegate: delegate)
        #expect(reader.wait(timeout: .now() + waitLimit) == .success)
        expectSameBytesCount(received.value, content)
        // Once every byte is taken the delegate writes nothing, and is not told again.
        let events = loop.sync { delegate.events }
        loop.sync {}
        #expect(loop.sync { delegate.events.count } == events?.count)
        #expect(events?.first == .openCompleted)
        #expect(events?.dropFirst().allSatisfy { $0 == .hasSpaceAvailable } == true)
        #expect(delegate.threads.allSatisfy { $0 == loop.thread })
        loop.sync { clientOutput.close(); clientInput.close() }
        serverInput.close()
        serverOutput.close()
        withExtendedLifetime(delegate) {}
    }

    @Test("gzip over a socket on the loop: a member sent in flushed pieces gives its plain bytes, then the end once",
          arguments: [GzipInputStream.Inflater.isal, .zlib])
    func gzipOverSocket(inflater: GzipInputStream.Inflater) throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        // The client's halves are used on the loop's thread, the server's by the background
        // thread, while this one only waits for them.
        nonisolated(unsafe) let (clientInput, clientOutput, serverInput, serverOutput) = try connectedPair()
        let plain = Array(String(repeating: "the quick brown fox jumps over the lazy dog\n", count: 5000).utf8)
            + randomBytes(count: 100_000, seed: 44)
        let input = try GzipInputStream(wrapping: clientInput, inflater: inflater)
        let delegate = RecordingDelegate(readLength: 4096)
        loop.scheduleAndOpen(input, delegate: delegate)
        let sent = background {
            guard let gzip = try? GzipOutputStream(wrapping: serverOutput) else { return }
            gzip.open()
            for start in stride(from: 0, to: plain.count, by: 50_000) {
                try? gzip.writeAll(plain[start..<min(start + 50_000, plain.count)])
                try? gzip.flush()
                usleep(10_000)  // the reader meets the end of what has come, mid-member
            }
            gzip.close()
        }
        #expect(sent.wait(timeout: .now() + waitLimit) == .success)
        #expect(delegate.waitUntilEnded())
        loop.sync { input.close(); clientOutput.close() }
        serverInput.close()
        expectSameBytesCount(delegate.bytesRead, plain)
        #expect(delegate.bytesRead == plain)
        #expect(delegate.events.first == .openCompleted)
        #expect(delegate.events.last == .endEncountered)
        #expect(Set(delegate.events.dropFirst().dropLast()) == [.hasBytesAvailable])
        #expect(delegate.threads.allSatisfy { $0 == loop.thread })
        withExtendedLifetime(delegate) {}
    }
}

/// Expects equal lengths, so that a failure says how many bytes came rather than diffing them.
private func expectSameBytesCount(_ actual: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual.count == expected.count, sourceLocation: sourceLocation)
    if actual.count == expected.count {
        #expect(actual.elementsEqual(expected), "same length, different bytes", sourceLocation: sourceLocation)
    }
}

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

// Readiness-driven scheduling over pipes and loopback sockets. Every stream call runs on the
// stream's serial queue (inside `queue.sync`, or in the delegate), as streams require; every
// wait is bounded by `waitLimit`, every loop by a byte count. Nothing asserts a time: the pauses
// only give a peer the chance to be slow.

/// The backings whose scheduled events are compared.
enum ScheduledBacking: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, file, pipe, socket

    var testDescription: String { rawValue }
}

/// A pause of `milliseconds` for a peer that should be slow; never a measurement.
private func pause(milliseconds: Int) {
    usleep(useconds_t(milliseconds * 1000))
}

/// Runs `body` on another queue; the returned function waits for it (at most `waitLimit`) and
/// tells whether it finished without throwing.
private func inBackground(_ body: @escaping @Sendable () throws -> Void) -> () -> Bool {
    let done = DispatchSemaphore(value: 0)
    let failed = Locked(false)
    DispatchQueue.global().async {
        do { try body() } catch { failed.value = true }
        done.signal()
    }
    return { done.wait(timeout: .now() + waitLimit) == .success && !failed.value }
}

/// Sets a socket buffer size (`SO_SNDBUF` or `SO_RCVBUF`) so that a test fills it with little data.
private func setSocketBuffer(_ stream: ByteStream, option: Int32, bytes: Int32) {
    let fd = (stream as? SocketInputStream)?.fileDescriptor ?? (stream as! SocketOutputStream).fileDescriptor
    var size = bytes
    _ = setsockopt(fd, SOL_SOCKET, option, &size, socklen_t(MemoryLayout<Int32>.size))
}

/// A TCP connection to `port` made without the library, so that a test can reset it.
private func rawConnection(to port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ByteStreamError(.system(errno: errno), operation: "socket") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        let number = errno
        _ = close(fd)
        throw ByteStreamError(.system(errno: number), operation: "connect")
    }
    return fd
}

@Suite("Readiness-driven scheduling", .onDedicatedThreads, .serialized, .timeLimit(.minutes(1)))
struct ReadinessTests {
    private func makeQueue() -> DispatchQueue {
        DispatchQueue(label: "ByteStreamsTests.readiness.\(UUID().uuidString)")
    }

    /// An input stream over `content`, whose end is already there, and what keeps its
    /// backing alive until the test ends.
    private func input(_ backing: ScheduledBacking, content: [UInt8], directory: URL) throws
        -> (stream: ByteInputStream, keep: [AnyObject])
    {
        switch backing {
        case .memory:
            return (MemoryInputStream(bytes: content), [])
        case .file:
            return (FileInputStream(path: try makeFile("input", in: directory, bytes: content)), [])
        case .pipe:
            let pipe = try TestPipe()
            try pipe.write(content)
            pipe.closeWriteEnd()
            let stream = FileInputStream(fileDescriptor: pipe.readEnd, closesDescriptor: true)
            pipe.forgetReadEnd()
            return (stream, [pipe])
        case .socket:
            let (listener, client, server) = try connectedPairs(opening: false)
            try server.output.writeAll(content)
            server.output.close()
            return (client.input, [listener, client.output, server.input])
        }
    }

    @Test("A delegate reading 4 bytes per event hears the same events from every backing",
          arguments: ScheduledBacking.allCases)
    func inputEventSequence(backing: ScheduledBacking) throws {
        try withTemporaryDirectory { directory in
            let queue = makeQueue()
            let content = Array("0123456789".utf8)
            let (stream, keep) = try input(backing, content: content, directory: directory)
            let recorder = EventRecorder(readLength: 4)
            scheduleAndOpen(stream, on: queue, delegate: recorder)
            #expect(recorder.waitUntilFinished())
            queue.sync { stream.close() }
            // Reads of 4, 4, 2, then 0 at the end: "has bytes" before each, the end once.
            #expect(recorder.events == [.openCompleted] + Array(repeating: .hasBytesAvailable, count: 4) + [.endEncountered])
            #expect(recorder.transferResults == [4, 4, 2, 0])
            expectSameBytes(recorder.bytesRead, content)
            withExtendedLifetime((recorder, keep)) {}
        }
    }

    @Test("A delegate writing 4 bytes per event hears the same events from every backing",
          arguments: ScheduledBacking.allCases)
    func outputEventSequence(backing: ScheduledBacking) throws {
        try withTemporaryDirectory { directory in
            let queue = makeQueue()
            let content = Array("0123456789".utf8)
            let path = directory.appendingPathComponent("output").path
            let pipe = try TestPipe()
            let sockets = try connectedPairs(opening: false)
            let stream: ByteOutputStream = switch backing {
            case .memory: MemoryOutputStream()
            case .file: FileOutputStream(path: path)
            case .pipe: FileOutputStream(fileDescriptor: pipe.writeEnd)
            case .socket: sockets.client.output
            }
            let recorder = EventRecorder(writeLength: 4, source: content)
            scheduleAndOpen(stream, on: queue, delegate: recorder)
            // Writes of 4, 4 and 2 bytes, then one of nothing, which asks for no more events.
            #expect(recorder.waitForEvents(5))
            pause(milliseconds: 100)
            queue.sync {}
            #expect(recorder.events == [.openCompleted] + Array(repeating: .hasSpaceAvailable, count: 4))
            #expect(recorder.transferResults == [4, 4, 2, 0])
            let written = queue.sync { (stream as? MemoryOutputStream)?.data }
            queue.sync { stream.close() }
            switch backing {
            case .memory: #expect(written.map { [UInt8]($0) } == content)
            case .file: #expect(try contents(of: path) == content)
            case .pipe:
                pipe.closeWriteEnd()
                #expect(try pipe.readAll() == content)
            case .socket:
                try sockets.server.input.openOrThrow()
                #expect(try sockets.server.input.readToEnd(limit: 100) == content)
            }
            sockets.server.input.close()
            sockets.server.output.close()
            sockets.client.input.close()
            try sockets.listener.close()
            withExtendedLifetime(recorder) {}
        }
    }

    @Test("A scheduled read of an empty pipe returns 0 at once and leaves the stream open")
    func readNeverBlocks() throws {
        let queue = makeQueue()
        let pipe = try TestPipe()
        defer { pipe.closeWriteEnd() }  // unblocks a read that blocked after all
        // Used on its scheduler's queue, as a scheduled stream is.
        nonisolated(unsafe) let input = FileInputStream(fileDescriptor: pipe.readEnd)
        let recorder = EventRecorder(readLength: 16)
        scheduleAndOpen(input, on: queue, delegate: recorder)
        let answered = DispatchSemaphore(value: 0)
        let outcome = Locked<(Int, ByteStream.Status, Bool)>((-2, .notOpen, true))
        queue.async {
            let (result, _) = readOnce(input, maxLength: 16)
            outcome.value = (result, input.streamStatus, input.hasBytesAvailable)
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + waitLimit) == .success, "the queue answers: the read did not block")
        #expect(outcome.value.0 == 0 && outcome.value.1 == .open, "nothing yet is 0 with the status left open")
        #expect(outcome.value.2 == false, "hasBytesAvailable asks the pipe")
        #expect(recorder.events == [.openCompleted], "no 'has bytes' while the pipe is empty")

        try pipe.write([7, 8, 9])
        #expect(recorder.waitForEvents(2))
        pipe.closeWriteEnd()
        #expect(recorder.waitUntilFinished())
        queue.sync { input.close() }
        #expect(recorder.events == [.openCompleted, .hasBytesAvailable, .hasBytesAvailable, .endEncountered])
        #expect(recorder.transferResults == [3, 0])
        #expect(recorder.bytesRead == [7, 8, 9])
        withExtendedLifetime(recorder) {}
    }

    @Test("An output told it has space that writes nothing is not told again until it writes")
    func spaceNotRepostedWithoutWrite() throws {
        let queue = makeQueue()
        let pipe = try TestPipe()
        let output = FileOutputStream(fileDescriptor: pipe.writeEnd)
        let recorder = EventRecorder()
        scheduleAndOpen(output, on: queue, delegate: recorder)
        #expect(recorder.waitForEvents(2))
        pause(milliseconds: 200)
        queue.sync {}
        #expect(recorder.events == [.openCompleted, .hasSpaceAvailable])
        #expect(queue.sync { writeOnce(output, [1, 2, 3]) } == 3)
        #expect(recorder.waitForEvents(3))
        queue.sync { output.close() }
        #expect(recorder.events == [.openCompleted, .hasSpaceAvailable, .hasSpaceAvailable])
        pipe.closeWriteEnd()
        #expect(try pipe.readAll() == [1, 2, 3])
        withExtendedLifetime(recorder) {}
    }

    @Test("Scheduling makes the descriptor non-blocking; unscheduling and closing put the flag back")
    func flagsRestored() throws {
        let queue = makeQueue()
        let pipe = try TestPipe()
        defer { pipe.closeWriteEnd() }
        let fd = pipe.readEnd
        let input = FileInputStream(fileDescriptor: fd)
        let isNonBlocking = { fcntl(fd, F_GETFL) & O_NONBLOCK != 0 }
        queue.sync {
            input.schedule(on: queue)
            input.open()
        }
        #expect(isNonBlocking())
        queue.sync { input.removeFromSchedule() }
        #expect(!isNonBlocking(), "unscheduled: blocking again")
        queue.sync { input.schedule(on: queue) }
        #expect(isNonBlocking())
        queue.sync { input.close() }
        #expect(!isNonBlocking(), "closed (the descriptor is not the stream's): blocking again")

        // A descriptor that was non-blocking before stays so.
        setNonBlocking(fd)
        let again = FileInputStream(fileDescriptor: fd)
        queue.sync {
            again.schedule(on: queue)
            again.open()
            again.close()
        }
        #expect(isNonBlocking())
    }

    @Test("Both streams of a socket scheduled: the socket stays non-blocking until the last is unscheduled")
    func sharedSocketFlags() throws {
        let queue = makeQueue()
        let (listener, client, server) = try connectedPairs(opening: false)
        defer { try? listener.close() }
        let fd = (client.input as! SocketInputStream).fileDescriptor
        let isNonBlocking = { fcntl(fd, F_GETFL) & O_NONBLOCK != 0 }
        queue.sync {
            for stream in [client.input, client.output] as [ByteStream] {
                stream.schedule(on: queue)
                stream.open()
            }
            client.input.removeFromSchedule()
        }
        #expect(isNonBlocking(), "the output is still scheduled")
        queue.sync { client.output.removeFromSchedule() }
        #expect(!isNonBlocking())
        for stream in [client.input, client.output, server.input, server.output] as [ByteStream] { stream.close() }
    }

    @Test("A slow peer, writing small pieces with pauses: every byte arrives, every read on 'has bytes' gets some")
    func slowPeer() throws {
        let queue = makeQueue()
        let (listener, client, server) = try connectedPairs(opening: false)
        defer { try? listener.close() }
        let content = randomBytes(count: 64 * 37, seed: 5)
        let recorder = EventRecorder(readLength: 4096)
        scheduleAndOpen(client.input, on: queue, delegate: recorder)
        // The peer thread's alone until the test waits for it.
        nonisolated(unsafe) let peer = server.output
        let peerDone = inBackground {
            try peer.openOrThrow()
            for start in stride(from: 0, to: content.count, by: 37) {
                try peer.writeAll(content[start..<(start + 37)])
                pause(milliseconds: 2)
            }
            peer.close()
        }
        #expect(peerDone())
        #expect(recorder.waitUntilFinished())
        queue.sync { client.input.close() }
        expectSameBytes(recorder.bytesRead, content)
        let events = recorder.events
        #expect(events.first == .openCompleted && events.last == .endEncountered)
        #expect(events.dropFirst().dropLast().allSatisfy { $0 == .hasBytesAvailable })
        let results = recorder.transferResults
        #expect(results.dropLast().allSatisfy { $0 > 0 }, "told 'has bytes' only when a read gets some")
        #expect(results.last == 0)
        for stream in [client.output, server.input] as [ByteStream] { stream.close() }
        withExtendedLifetime(recorder) {}
    }

    @Test("A fast writer fills the socket buffer: short or zero writes, then every byte arrives")
    func fastWriter() throws {
        let queue = makeQueue()
        let (listener, client, server) = try connectedPairs(opening: false)
        defer { try? listener.close() }
        setSocketBuffer(client.output, option: SO_SNDBUF, bytes: 16 * 1024)
        setSocketBuffer(server.input, option: SO_RCVBUF, bytes: 16 * 1024)
        let content = randomBytes(count: 2 << 20, seed: 6)
        let writeLength = 64 * 1024
        let recorder = EventRecorder(writeLength: writeLength, source: content)
        // The peer starts reading once the writer was held back (or has written everything).
        let stalled = DispatchSemaphore(value: 0)
        let sawShortWrite = Locked(false)
        recorder.afterEvent = { [unowned recorder] stream, _ in
            if let last = recorder.transferResults.last, last < writeLength, !sawShortWrite.value {
                sawShortWrite.value = true
                stalled.signal()
            }
            if recorder.bytesWritten == content.count, stream.streamStatus == .open {
                stream.close()
                stalled.signal()
            }
        }
        scheduleAndOpen(client.output, on: queue, delegate: recorder)
        let received = Locked<[UInt8]>([])
        // The peer thread's alone until the test waits for it.
        nonisolated(unsafe) let peer = server.input
        let peerDone = inBackground {
            _ = stalled.wait(timeout: .now() + waitLimit)
            try peer.openOrThrow()
            received.value = try peer.readToEnd(limit: content.count)
        }
        #expect(peerDone())
        #expect(sawShortWrite.value, "a write took fewer bytes than offered")
        expectSameBytes(received.value, content)
        let events = recorder.events
        #expect(events.first == .openCompleted)
        #expect(events.dropFirst().allSatisfy { $0 == .hasSpaceAvailable })
        #expect(queue.sync { client.output.streamStatus } == .closed)
        for stream in [client.input, server.input, server.output] as [ByteStream] { stream.close() }
        withExtendedLifetime(recorder) {}
    }

    @Test("A reset peer: the scheduled input and output each post errorOccurred once")
    func resetPeer() throws {
        let queue = makeQueue()
        let listener = try SocketListener(port: 0)
        defer { try? listener.close() }
        let peer = try rawConnection(to: listener.port)
        let (input, output) = try listener.accept()
        var abortive = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(peer, SOL_SOCKET, SO_LINGER, &abortive, socklen_t(MemoryLayout<linger>.size))
        _ = close(peer)  // with a zero linger: RST, not FIN
        // Wait (bounded) until the reset has arrived.
        var entry = pollfd(fd: (input as! SocketInputStream).fileDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 5000) == 1)

        let readRecorder = EventRecorder(readLength: 16)
        scheduleAndOpen(input, on: queue, delegate: readRecorder)
        #expect(readRecorder.waitUntilFinished())
        let writeRecorder = EventRecorder(writeLength: 16, source: Array(repeating: 1, count: 64))
        scheduleAndOpen(output, on: queue, delegate: writeRecorder)
        #expect(writeRecorder.waitUntilFinished())
        pause(milliseconds: 100)
        queue.sync {
            #expect(readOnce(input, maxLength: 16).result == -1, "later reads report the same error")
        }
        queue.sync {}
        #expect(readRecorder.events == [.openCompleted, .hasBytesAvailable, .errorOccurred])
        #expect(writeRecorder.events == [.openCompleted, .hasSpaceAvailable, .errorOccurred])
        #expect(queue.sync { errnoValue(of: input.streamError) } == ECONNRESET)
        let writeErrno = queue.sync { errnoValue(of: output.streamError) }
        #expect(writeErrno == EPIPE || writeErrno == ECONNRESET)
        queue.sync {
            input.close()
            output.close()
        }
        withExtendedLifetime((readRecorder, writeRecorder)) {}
    }
}

/// The blocking conveniences on a scheduled stream that has nothing yet: a typed error, never a
/// short result that looks like the end.
@Suite("Blocking conveniences on scheduled streams", .onDedicatedThreads, .serialized, .timeLimit(.minutes(1)))
struct ScheduledConvenienceTests {
    @Test("readToEnd, readChunk and copy(to:) of a scheduled socket that has sent 1 byte of 3 throw wouldBlock")
    func readingThrowsWouldBlock() throws {
        let (listener, client, server) = try connectedPairs()
        defer { try? listener.close() }
        let queue = DispatchQueue(label: "ScheduledConvenienceTests.read")
        try server.output.writeAll([1])
        func expectWouldBlock(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                try body()
                Issue.record("no error", sourceLocation: sourceLocation)
            } catch {
                #expect((error as? ByteStreamError)?.code == .wouldBlock, "\(error)", sourceLocation: sourceLocation)
            }
        }
        queue.sync {
            client.input.schedule(on: queue)
            // The first byte arrives; the convenience reads it, then meets an empty socket.
            var first: UInt8 = 0
            for _ in 0..<1000 where client.input.read(&first, maxLength: 1) == 0 { usleep(1000) }
            #expect(first == 1)
            expectWouldBlock { _ = try client.input.readToEnd() }
            expectWouldBlock { _ = try client.input.readChunk() }
            expectWouldBlock { _ = try client.input.copy(to: MemoryOutputStream()) }
            #expect(client.input.streamStatus == .open, "nothing failed: the stream can still be read")
        }
        try server.output.writeAll([2, 3])
        server.output.close()
        queue.sync { client.input.removeFromSchedule() }
        #expect(try client.input.readToEnd() == [2, 3], "unscheduled, it blocks and reads to the end")
        for stream in [client.input, client.output, server.input] as [ByteStream] { stream.close() }
    }

    @Test("writeAll into a scheduled socket whose peer does not read throws wouldBlock, not noSpaceAvailable")
    func writingThrowsWouldBlock() throws {
        let (listener, client, server) = try connectedPairs()
        defer { try? listener.close() }
        let queue = DispatchQueue(label: "ScheduledConvenienceTests.write")
        let block = [UInt8](repeating: 7, count: 1 << 20)
        queue.sync {
            client.output.schedule(on: queue)
            var failure: ByteStreamError?
            // The socket buffers hold a few MiB at most: 64 MiB cannot fit.
            for _ in 0..<64 {
                do { try client.output.writeAll(block) } catch let error as ByteStreamError {
                    failure = error
                    break
                } catch {
                    Issue.record("unexpected \(error)")
                    break
                }
            }
            #expect(failure?.code == .wouldBlock)
            #expect(client.output.streamStatus == .open)
            client.output.close()  // on its queue: a readiness event may be on its way there
        }
        for stream in [client.input, server.input, server.output] as [ByteStream] { stream.close() }
    }
}

import ByteStreams
import Dispatch
import Foundation
@testable import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Scheduled gzip streams over loopback sockets. Every stream call runs on the stream's serial
// queue (inside `queue.sync`, or in the delegate); every wait is bounded, every loop by a byte
// count. Nothing asserts a time: the pauses only give a peer the chance to be slow.

@Suite("Scheduled gzip streams over sockets", .onDedicatedThreads, .serialized, .timeLimit(.minutes(1)))
struct GzipSchedulingTests {
    private func makeQueue() -> DispatchQueue {
        DispatchQueue(label: "GzipStreamsTests.scheduling.\(UUID().uuidString)")
    }

    /// Schedules `gzip` on a new queue with a delegate that reads `readLength` bytes per
    /// "has bytes available", opens it, and returns the queue, the log and the reads.
    private func readScheduled(_ gzip: GzipInputStream, readLength: Int) -> (DispatchQueue, EventLog, Reads) {
        let queue = makeQueue()
        let log = EventLog()
        let reads = Reads()
        log.handler = { stream, event in
            if event == .hasBytesAvailable { reads.read(stream as! ByteInputStream, maxLength: readLength) }
        }
        scheduleAndOpen(gzip, on: queue, delegate: log)
        return (queue, log, reads)
    }

    @Test("Gzip over a socket or memory, read 1000 bytes per event: has bytes ×3, then the end once",
          arguments: [GzipInputStream.Inflater.isal, .zlib], [true, false])
    func inputEventSequence(inflater: GzipInputStream.Inflater, overSocket: Bool) throws {
        let link = try Loopback()
        defer { link.close() }
        let content = textBytes(count: 2500, seed: 11)
        let compressed = try pack(content)
        let inner: ByteInputStream = overSocket ? link.client.input : MemoryInputStream(bytes: compressed)
        if overSocket { try send(compressed, to: link.server.output, pieceSize: 1 << 20) }
        let gzip = try GzipInputStream(wrapping: inner, inflater: inflater)
        let (queue, log, reads) = readScheduled(gzip, readLength: 1000)
        #expect(log.waitForEnd())
        queue.sync {}
        #expect(log.events == [.openCompleted, .hasBytesAvailable, .hasBytesAvailable, .hasBytesAvailable, .endEncountered])
        #expect(reads.results == [1000, 1000, 500])
        #expect(reads.bytes == content)
        if overSocket {
            let fd = (inner as! SocketInputStream).fileDescriptor
            #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0, "the inner socket is scheduled with the gzip stream")
        }
        queue.sync {
            #expect(gzip.streamStatus == .atEnd && gzip.memberCount == 1)
            gzip.close()
        }
        if overSocket {
            let fd = (inner as! SocketInputStream).fileDescriptor
            #expect(fcntl(fd, F_GETFL) & O_NONBLOCK == 0, "closing the gzip stream unschedules the socket")
        }
        withExtendedLifetime(log) {}
    }

    @Test("A gzip stream trickled in 7-byte pieces: no 'has bytes' for header bytes alone, a read never blocks, every byte comes",
          arguments: [GzipInputStream.Inflater.isal, .zlib])
    func tricklingPeer(inflater: GzipInputStream.Inflater) throws {
        let link = try Loopback()
        defer { link.close() }
        let (client, server) = (link.client, link.server)
        let first = textBytes(count: 3000, seed: 12)
        let second = randomBytes(count: 2000, seed: 13)
        var header = GzipHeader()
        header.fileName = Array("first.txt".utf8)
        header.comment = Array("a member with FNAME and FCOMMENT".utf8)
        // Two members, the first with a long header, then zero padding.
        let compressed = try pack(first, header: header) + pack(second) + [UInt8](repeating: 0, count: 16)
        let gzip = try GzipInputStream(wrapping: client.input, inflater: inflater)
        let (queue, log, reads) = readScheduled(gzip, readLength: 1000)

        try server.output.openOrThrow()
        try server.output.writeAll(compressed[0..<5])
        usleep(100_000)  // time for the 5 bytes to be seen; not a measurement
        queue.sync {
            var byte: UInt8 = 0
            #expect(gzip.read(&byte, maxLength: 1) == 0, "5 header bytes give nothing yet")
            #expect(gzip.streamStatus == .open, "and that is not the end")
            #expect(gzip.compressedByteCount == 0, "the unfinished header is read again later")
        }
        #expect(log.events == [.openCompleted], "no 'has bytes available' for header bytes alone")

        // The peer thread's alone until the test waits for it.
        nonisolated(unsafe) let output = server.output
        let rest = Array(compressed[5...])
        let done = peer { try send(rest, to: output, pieceSize: 7, pauseMicroseconds: 200) }
        #expect(done.wait(timeout: deadline()) == .success)
        #expect(log.waitForEnd())
        queue.sync {}
        #expect(reads.bytes.elementsEqual(first + second), "every byte, in order")
        let events = log.events
        #expect(events.first == .openCompleted && events.last == .endEncountered)
        #expect(events.dropFirst().dropLast().allSatisfy { $0 == .hasBytesAvailable })
        #expect(reads.results.allSatisfy { $0 > 0 }, "told 'has bytes' only when a read gets some")
        queue.sync {
            #expect(gzip.memberCount == 2)
            #expect(gzip.compressedByteCount == Int64(compressed.count))
            gzip.close()
        }
        withExtendedLifetime(log) {}
    }

    @Test("Sync-flushed lines, then a pause with the connection open: every plain byte comes and the queue stays free; then the end once",
          arguments: [GzipInputStream.Inflater.isal, .zlib])
    func syncFlushThenPause(inflater: GzipInputStream.Inflater) throws {
        let link = try Loopback()
        defer { link.close() }
        let (client, server) = (link.client, link.server)
        // The message-exchange case: 300,000 equal bytes deflate to a few hundred, which the
        // decoder takes in before it has given all their plain bytes.
        let lines = [[UInt8](repeating: UInt8(ascii: "a"), count: 3000), [UInt8](repeating: UInt8(ascii: "b"), count: 300_000),
                     Array("last".utf8)].map { $0 + [UInt8(ascii: "\n")] }
        let content = lines.flatMap { $0 }
        let gzip = try GzipInputStream(wrapping: client.input, inflater: inflater)
        let (queue, log, reads) = readScheduled(gzip, readLength: 4096)

        let writer = try GzipOutputStream(wrapping: server.output)
        try writer.openOrThrow()
        for line in lines {
            try writer.writeAll(line)
            try writer.flush()
        }
        // The peer pauses, the connection open: the reader must give what the flushes made
        // decodable without waiting for more.
        #expect(log.wait { _ in reads.byteCount >= content.count }, "every flushed byte before the peer goes on")
        #expect(isResponsive(queue), "the reader's queue runs other work while the peer is paused")
        queue.sync {
            var byte: UInt8 = 0
            #expect(gzip.read(&byte, maxLength: 1) == 0, "nothing more yet")
            #expect(gzip.streamStatus == .open, "and that is not the end")
        }
        #expect(!log.events.contains(.endEncountered) && !log.events.contains(.errorOccurred))

        try writer.closeOrThrow()  // the trailer, then the half-close
        #expect(log.waitForEnd())
        usleep(50_000)  // room for a wrong second end event; not a measurement
        queue.sync {}
        #expect(reads.bytes == content, "every byte, in order")
        let events = log.events
        #expect(events.first == .openCompleted && events.last == .endEncountered)
        #expect(events.filter { $0 == .endEncountered }.count == 1)
        #expect(events.dropFirst().dropLast().allSatisfy { $0 == .hasBytesAvailable })
        queue.sync {
            #expect(gzip.memberCount == 1)
            gzip.close()
        }
        withExtendedLifetime(log) {}
    }

    /// Two members written with sync flushes (the first with FNAME, the second after it, then
    /// zero padding), and after each flush and each member's end: how many compressed bytes
    /// make how many plain bytes decodable.
    static let flushedMembers: (compressed: [UInt8], content: [UInt8], boundaries: [(compressed: Int, plain: Int)]) = {
        var header = GzipHeader()
        header.fileName = Array("lines.txt".utf8)
        let members: [(header: GzipHeader, lines: [[UInt8]])] = [
            (header, [Array("hello\n".utf8), [UInt8](repeating: UInt8(ascii: "b"), count: 100_000), textBytes(count: 300, seed: 16)]),
            (GzipHeader(), [[UInt8](repeating: UInt8(ascii: "c"), count: 30_000), Array("last\n".utf8)]),
        ]
        var compressed: [UInt8] = []
        var content: [UInt8] = []
        var boundaries: [(compressed: Int, plain: Int)] = [(0, 0)]
        for member in members {
            let memory = MemoryOutputStream()
            let writer = try! GzipOutputStream(wrapping: memory, header: member.header)
            try! writer.openOrThrow()
            for line in member.lines {
                try! writer.writeAll(line)
                try! writer.flush()
                content += line
                boundaries.append((compressed.count + memory.writtenCount, content.count))
            }
            try! writer.closeOrThrow()
            compressed += memory.data
            boundaries.append((compressed.count, content.count))
        }
        return (compressed + [0, 0, 0], content, boundaries)
    }()

    @Test("Sync-flushed members cut at every byte, the peer pausing there: the queue stays free, every flushed byte comes; then the rest and the end once",
          arguments: [GzipInputStream.Inflater.isal, .zlib])
    func everyCut(inflater: GzipInputStream.Inflater) throws {
        let (compressed, content, boundaries) = Self.flushedMembers
        for cut in 1..<compressed.count {
            // The first cut that fails stops the loop: its issues are enough.
            var passed = true
            func check(_ condition: Bool, _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) {
                guard !condition else { return }
                passed = false
                Issue.record(Comment(rawValue: "cut at \(cut): \(comment)"), sourceLocation: sourceLocation)
            }
            let link = try Loopback()
            defer { link.close() }
            let (client, server) = (link.client, link.server)
            let gzip = try GzipInputStream(wrapping: client.input, inflater: inflater)
            let (queue, log, reads) = readScheduled(gzip, readLength: 4096)
            try server.output.openOrThrow()
            try server.output.writeAll(compressed[..<cut])
            // Every byte of the flushes within the cut, whatever the cut hit: header, deflate
            // data, trailer, the gap between members or the padding.
            let flushed = boundaries.last { $0.compressed <= cut }!.plain
            check(log.wait { _ in reads.byteCount >= flushed }, "\(flushed) plain bytes while the peer pauses")
            check(isResponsive(queue), "the queue runs other work while the peer pauses")
            check(!log.events.contains(.endEncountered) && !log.events.contains(.errorOccurred), "no end, no error yet")
            try server.output.writeAll(compressed[cut...])
            try server.output.closeOrThrow()
            check(log.waitForEnd(), "the end comes")
            queue.sync {}
            check(reads.bytes == content, "every byte, in order")
            check(log.events.filter { $0 == .endEncountered }.count == 1 && log.events.last == .endEncountered,
                  "the end once, last")
            queue.sync {
                check(gzip.memberCount == 2, "two members")
                gzip.close()
            }
            withExtendedLifetime(log) {}
            if !passed { break }
        }
    }

    @Test("Polled over a socket: a blocking read gives the flushed bytes while the peer is paused",
          arguments: [GzipInputStream.Inflater.isal, .zlib])
    func polledSyncFlush(inflater: GzipInputStream.Inflater) throws {
        let link = try Loopback()
        defer { link.close() }
        let (client, server) = (link.client, link.server)
        let content = [UInt8](repeating: UInt8(ascii: "b"), count: 300_000) + Array("\nlast\n".utf8)
        let writer = try GzipOutputStream(wrapping: server.output)
        try writer.openOrThrow()
        try writer.writeAll(content)
        try writer.flush()
        // Read by the reader thread only, until the test waits for it.
        nonisolated(unsafe) let gzip = try GzipInputStream(wrapping: client.input, inflater: inflater)
        try gzip.openOrThrow()
        let received = Received()
        let gotAll = DispatchSemaphore(value: 0)
        let reader = peer {
            while received.bytes.count < content.count {
                let chunk = try gzip.readChunk(maxLength: 4096)
                if chunk.isEmpty { break }
                received.bytes += chunk
            }
            gotAll.signal()
            received.bytes += try gzip.readToEnd(limit: 1 << 20)
        }
        #expect(gotAll.wait(timeout: deadline()) == .success, "every flushed byte while the peer waits")
        try writer.closeOrThrow()  // also frees a reader still blocked
        #expect(reader.wait(timeout: deadline()) == .success)
        #expect(received.bytes == content)
        #expect(gzip.streamStatus == .atEnd)
        gzip.close()
    }

    /// Damaged inputs: the scheduled stream must end with the polled decoder's bytes and error.
    static let damaged: [(name: String, bytes: [UInt8])] = {
        let good = try! pack(textBytes(count: 20_000, seed: 14))
        var badCRC = good
        badCRC[badCRC.count - 6] ^= 0xFF
        var badDeflate = good
        badDeflate[40] ^= 0x55
        return [
            ("cut in the header", Array(good[0..<5])),
            ("cut in the deflate data", Array(good[0..<(good.count / 2)])),
            ("cut in the trailer", Array(good[0..<(good.count - 3)])),
            ("CRC-32 mismatch", badCRC),
            ("damaged deflate data", badDeflate),
            ("trailing garbage", good + Array("garbage".utf8)),
        ]
    }()

    @Test("Truncated or corrupt data over a socket: errorOccurred once, with the polled decoder's error and bytes",
          arguments: damaged.indices, [GzipInputStream.Inflater.isal, .zlib])
    func damagedInput(index: Int, inflater: GzipInputStream.Inflater) throws {
        let (name, compressed) = Self.damaged[index]
        let expected = unpack(compressed, inflater: inflater)
        let expectedError = try #require(expected.gzipError, "\(name) fails when polled")
        let link = try Loopback()
        defer { link.close() }
        let (client, server) = (link.client, link.server)
        let gzip = try GzipInputStream(wrapping: client.input, inflater: inflater)
        let (queue, log, reads) = readScheduled(gzip, readLength: 4096)
        // The peer thread's alone until the test waits for it.
        nonisolated(unsafe) let output = server.output
        let done = peer { try send(compressed, to: output, pieceSize: 1000, pauseMicroseconds: 100) }
        #expect(done.wait(timeout: deadline()) == .success)
        #expect(log.waitForEnd())
        usleep(50_000)  // room for a wrong second error event; not a measurement
        queue.sync {}
        #expect(log.events.filter { $0 == .errorOccurred }.count == 1, "\(name)")
        #expect(log.events.last == .errorOccurred && !log.events.contains(.endEncountered), "\(name)")
        queue.sync {
            #expect(gzip.streamError as? GzipError == expectedError, "\(name)")
            gzip.close()
        }
        #expect(reads.bytes.elementsEqual(expected.bytes), "\(name): the bytes before the error")
        withExtendedLifetime(log) {}
    }

    /// Schedules `gzip` with a delegate that writes the next `writeLength` bytes of `source`
    /// per "has space available" (none when `writeLength` is `nil`).
    private func writeScheduled(_ gzip: GzipOutputStream, source: [UInt8], writeLength: Int?) -> (DispatchQueue, EventLog)
    {
        let queue = makeQueue()
        let log = EventLog()
        var offset = 0
        log.handler = { stream, event in
            // Nothing left: no write, so no more events.
            guard event == .hasSpaceAvailable, let writeLength, offset < source.count else { return }
            let gzip = stream as! GzipOutputStream
            let end = min(offset + writeLength, source.count)
            let written = source[offset..<end].withUnsafeBufferPointer { gzip.write($0.baseAddress!, maxLength: $0.count) }
            if written > 0 { offset += written }
        }
        scheduleAndOpen(gzip, on: queue, delegate: log)
        return (queue, log)
    }

    @Test("Gzip onto a socket, 4 bytes per event: has space ×4, and close writes the trailer")
    func outputEventSequence() throws {
        let link = try Loopback()
        defer { link.close() }
        let (client, server) = (link.client, link.server)
        let content = Array("0123456789".utf8)
        let gzip = try GzipOutputStream(wrapping: client.output)
        let (queue, log) = writeScheduled(gzip, source: content, writeLength: 4)
        // Writes of 4, 4 and 2; the fourth event finds nothing left to write and asks for no more.
        #expect(log.wait { $0.count >= 5 })
        usleep(100_000)  // room for a wrong sixth event; not a measurement
        queue.sync {}
        #expect(log.events == [.openCompleted] + Array(repeating: .hasSpaceAvailable, count: 4))
        queue.sync { gzip.close() }
        #expect(queue.sync { gzip.streamStatus } == .closed)
        #expect(try receivedPlainBytes(from: server.input, limit: 1000) == content)
        withExtendedLifetime(log) {}
    }

    @Test("A scheduled gzip output that writes nothing is not told again until it writes")
    func outputSpaceNotReposted() throws {
        let link = try Loopback()
        defer { link.close() }
        let (client, server) = (link.client, link.server)
        let gzip = try GzipOutputStream(wrapping: client.output)
        let (queue, log) = writeScheduled(gzip, source: [], writeLength: nil)
        #expect(log.wait { $0.count >= 2 })
        usleep(200_000)  // room for a wrong third event; not a measurement
        queue.sync {}
        #expect(log.events == [.openCompleted, .hasSpaceAvailable])
        queue.sync {
            var bytes: [UInt8] = [1, 2, 3]
            #expect(gzip.write(&bytes, maxLength: 3) == 3)
        }
        #expect(log.wait { $0.count >= 3 })
        queue.sync { gzip.close() }
        #expect(log.events == [.openCompleted, .hasSpaceAvailable, .hasSpaceAvailable])
        #expect(try receivedPlainBytes(from: server.input, limit: 1000) == [1, 2, 3])
        withExtendedLifetime(log) {}
    }

    @Test("A fast writer into a full socket: held compressed bytes make writes return 0 until they drain; every byte arrives")
    func fastWriterHeldBytes() throws {
        let link = try Loopback()
        defer { link.close() }
        let (client, server) = (link.client, link.server)
        shrinkBuffer(of: client.output, SO_SNDBUF)
        shrinkBuffer(of: server.input, SO_RCVBUF)
        let source = randomBytes(count: 2 << 20, seed: 15)
        let gzip = try GzipOutputStream(wrapping: client.output, level: 1)
        let queue = makeQueue()
        let log = EventLog()
        var offset = 0
        var toldResults: [Int] = []
        var probe: (held: Int, result: Int)?
        let stalled = DispatchSemaphore(value: 0)
        func writeNext(_ gzip: GzipOutputStream) -> Int {
            let end = min(offset + 4096, source.count)
            let written = source[offset..<end].withUnsafeBufferPointer { gzip.write($0.baseAddress!, maxLength: $0.count) }
            offset += max(written, 0)
            return written
        }
        log.handler = { stream, event in
            let gzip = stream as! GzipOutputStream
            guard event == .hasSpaceAvailable, offset < source.count else { return }
            toldResults.append(writeNext(gzip))
            if probe == nil, !gzip.hasSpaceAvailable {
                // The socket is full: write on, untold, until compressed bytes are held (zlib
                // may keep some 64 KiB to itself first), then once more: that write takes nothing.
                for _ in 0..<256 where gzip.heldByteCount == 0 && offset < source.count {
                    _ = writeNext(gzip)
                }
                probe = (gzip.heldByteCount, writeNext(gzip))
                stalled.signal()  // the peer starts reading
            }
            if offset == source.count {
                gzip.close()  // blocks until the held bytes and the trailer are written
                stalled.signal()
            }
        }
        scheduleAndOpen(gzip, on: queue, delegate: log)
        // The reader thread's alone until the test waits for it.
        nonisolated(unsafe) let input = server.input
        let decoded = Received()
        let reader = peer {
            _ = stalled.wait(timeout: deadline())
            decoded.bytes = try receivedPlainBytes(from: input, limit: 8 << 20)
        }
        #expect(reader.wait(timeout: deadline()) == .success)
        queue.sync {}
        let (told, held) = queue.sync { (toldResults, probe) }
        #expect((held?.held ?? 0) > 0, "compressed bytes were held while the socket was full")
        #expect(held?.result == 0, "a write while bytes are held takes nothing")
        #expect(told.allSatisfy { $0 > 0 }, "told 'has space' only when a write takes bytes: no spinning")
        #expect(log.events.first == .openCompleted)
        #expect(log.events.dropFirst().allSatisfy { $0 == .hasSpaceAvailable })
        #expect(queue.sync { gzip.streamStatus } == .closed)
        #expect(decoded.bytes.count == source.count)
        #expect(decoded.bytes.elementsEqual(source), "every byte, in order")
        withExtendedLifetime(log) {}
    }
}

@testable import ByteStreams
import Dispatch
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A ring shape and an inner stream's behaviour to write behind with.
struct WriteBehindShape: Sendable, CustomStringConvertible {
    let chunkSize: Int
    let bufferSize: Int?
    let bufferCount: Int
    /// The most bytes the inner stream takes per write (short writes, as to a pipe).
    let mostPerWrite: Int

    var description: String {
        "chunk \(chunkSize), \(bufferCount) × \(bufferSize.map(String.init) ?? "default")"
            + (mostPerWrite == .max ? "" : ", inner writes ≤ \(mostPerWrite)")
    }

    static let all = [
        WriteBehindShape(chunkSize: 4096, bufferSize: nil, bufferCount: WriteBehindOutputStream.defaultBufferCount,
                         mostPerWrite: .max),
        WriteBehindShape(chunkSize: 4096, bufferSize: 4096, bufferCount: 1, mostPerWrite: .max),
        WriteBehindShape(chunkSize: 1000, bufferSize: 2500, bufferCount: 3, mostPerWrite: 700),
        WriteBehindShape(chunkSize: 65536, bufferSize: nil, bufferCount: 2, mostPerWrite: 5000),
    ]
}

@Suite("WriteBehindOutputStream", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct WriteBehindOutputStreamTests {
    @Test("Every byte, in order, whatever the size and ring; inner writes of at most chunkSize",
          arguments: edgeSizes, WriteBehindShape.all)
    func roundTrip(size: Int, shape: WriteBehindShape) throws {
        let data = randomBytes(count: size, seed: UInt64(size))
        let inner = RecordingOutputStream(mostPerWrite: shape.mostPerWrite)
        let stream = try WriteBehindOutputStream(wrapping: inner, chunkSize: shape.chunkSize, bufferSize: shape.bufferSize,
                                                 bufferCount: shape.bufferCount)
        stream.open()
        #expect(inner.streamStatus == .open, "open opens the inner stream")
        var offset = 0
        while offset < size {
            let end = min(offset + 3000, size)
            #expect(writeOnce(stream, Array(data[offset..<end])) == end - offset, "a write takes all it is offered")
            offset = end
        }
        #expect(writeOnce(stream, []) == 0)
        stream.close()
        #expect(stream.streamStatus == .closed)
        #expect(stream.streamError == nil)
        #expect(inner.streamStatus == .closed, "closesInnerStream defaults to true")
        expectSameBytes(inner.received, data)
        #expect(inner.writeLengths.allSatisfy { $0 > 0 && $0 <= shape.chunkSize })
        #expect(stream.largestBufferedByteCount <= stream.bufferSize * stream.bufferCount)
    }

    @Test("withWritableBuffer fills the ring in place, mixed with writes; a throwing body keeps nothing")
    func writableBuffer() throws {
        let data = randomBytes(count: 300_000)
        let inner = RecordingOutputStream()
        let stream = try WriteBehindOutputStream(wrapping: inner, chunkSize: 4096, bufferSize: 10_000, bufferCount: 3)
        #expect(throws: ByteStreamError(.notOpen, operation: "write")) {
            try stream.withWritableBuffer { _ in 0 }
        }
        stream.open()
        var offset = 0
        var turn = 0
        let minimums = [1, 10_000, 4096, 9_999, 1]
        while offset < data.count {
            turn += 1
            if turn % 3 == 0 {
                let end = min(offset + 1234, data.count)
                #expect(writeOnce(stream, Array(data[offset..<end])) == end - offset)
                offset = end
                continue
            }
            let minimum = minimums[turn % minimums.count]
            let wanted = min(turn % 2 == 0 ? minimum : 777, data.count - offset)
            let filled = try stream.withWritableBuffer(minimumCapacity: minimum) { buffer in
                #expect(buffer.count >= minimum && buffer.count <= 10_000)
                let count = min(wanted, buffer.count)
                data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
                return count
            }
            offset += filled
            #expect(try stream.withWritableBuffer { _ in 0 } == 0, "a body may write nothing")
            #expect(throws: InjectedError(id: 9)) {
                try stream.withWritableBuffer { buffer in
                    buffer.storeBytes(of: 0xFF, as: UInt8.self)
                    throw InjectedError(id: 9)
                }
            }
            #expect(stream.streamStatus == .open, "the body's error is not the stream's")
        }
        try stream.flush()
        expectSameBytes(inner.received, data, "flush passed everything on")
        stream.close()
        #expect(stream.streamError == nil)
        expectSameBytes(inner.received, data)
        #expect(inner.writeLengths.allSatisfy { $0 <= 4096 })
        #expect(stream.largestBufferedByteCount <= 30_000)
        #expect(throws: ByteStreamError(.notOpen, operation: "write")) {
            try stream.withWritableBuffer { _ in 0 }
        }
    }

    @Test("Bytes go on without waiting for a buffer to fill, also while a withWritableBuffer body blocks")
    func noWaitForFullBuffer() throws {
        let inner = RecordingOutputStream()
        let stream = try WriteBehindOutputStream(wrapping: inner, chunkSize: 4096, bufferSize: 65536, bufferCount: 2)
        stream.open()
        #expect(writeOnce(stream, randomBytes(count: 100)) == 100)
        #expect(eventually { inner.received.count == 100 }, "no flush, no close, a buffer far from full")
        #expect(writeOnce(stream, randomBytes(count: 50, seed: 2)) == 50)
        try stream.withWritableBuffer { buffer in
            #expect(eventually { inner.received.count == 150 }, "the bytes before the body go on while it runs")
            buffer.storeBytes(of: 7, as: UInt8.self)
            return 1
        }
        stream.close()
        expectSameBytes(inner.received, randomBytes(count: 100) + randomBytes(count: 50, seed: 2) + [7])
        #expect(inner.writeLengths == [100, 50, 1])
    }

    @Test("An inner error: the bytes before it are written, then it is the stream's sticky error",
          arguments: [0, 1, 7000, 200_000])
    func errorAfterBytes(offset: Int) throws {
        let data = randomBytes(count: 1 << 20)
        let injected = InjectedError(id: offset)
        let inner = RecordingOutputStream(failure: (offset, injected))
        let stream = try WriteBehindOutputStream(wrapping: inner, chunkSize: 4096, bufferSize: 8192, bufferCount: 2)
        stream.open()
        var taken = 0
        while taken < data.count {
            let result = writeOnce(stream, Array(data[taken..<min(taken + 1000, data.count)]))
            if result < 0 { break }
            taken += result
        }
        #expect(taken < data.count, "a 1 MiB write meets the error before it ends: the ring holds 16 KiB")
        #expect(stream.streamStatus == .error)
        #expect(stream.streamError as? InjectedError == injected)
        #expect(writeOnce(stream, [1, 2, 3]) == -1)
        #expect(throws: InjectedError(id: offset)) { try stream.withWritableBuffer { _ in 0 } }
        #expect(throws: InjectedError(id: offset)) { try stream.flush() }
        stream.close()
        #expect(stream.streamStatus == .error)
        #expect(stream.streamError as? InjectedError == injected)
        expectSameBytes(inner.received, data[0..<offset])
        #expect(inner.streamStatus == .error, "closed, and a closed stream that failed keeps showing it")
    }

    @Test("An error met after the last write is reported by close")
    func errorAtClose() throws {
        let inner = RecordingOutputStream(failure: (100, InjectedError(id: 1)))
        let stream = try WriteBehindOutputStream(wrapping: inner)
        stream.open()
        #expect(writeOnce(stream, randomBytes(count: 1000)) == 1000, "the write returns before the worker fails")
        stream.close()
        #expect(stream.streamStatus == .error)
        #expect(stream.streamError as? InjectedError == InjectedError(id: 1))
        #expect(throws: InjectedError(id: 1)) { try stream.closeOrThrow() }
    }

    @Test("A pipe whose reader closed: EPIPE from the inner stream, unchanged, naming its target")
    func brokenPipe() throws {
        ignoreSIGPIPE()
        let pipe = try TestPipe()
        pipe.closeReadEnd()
        let inner = FileOutputStream(fileDescriptor: pipe.writeEnd, displayName: "standard output")
        let stream = try WriteBehindOutputStream(wrapping: inner)
        stream.open()
        let data = randomBytes(count: 1 << 20)
        var taken = 0
        while taken < data.count {
            let result = writeOnce(stream, Array(data[taken..<min(taken + 4096, data.count)]))
            if result < 0 { break }
            taken += result
        }
        stream.close()
        #expect(stream.streamStatus == .error)
        let error = try #require(stream.streamError as? ByteStreamError)
        #expect(error.errno == EPIPE)
        #expect(error.operation == "write")
        #expect(error.target == "standard output")
        #expect(error == inner.streamError as? ByteStreamError, "the inner stream's error itself")
    }

    @Test("A slow inner stream: the writer blocks when every buffer is full; the ring never grows")
    func slowInner() throws {
        let gate = DispatchSemaphore(value: 0)
        let inner = RecordingOutputStream(gate: gate)
        // The writer queue's alone until it signals `done`.
        nonisolated(unsafe) let stream = try WriteBehindOutputStream(wrapping: inner, chunkSize: 4096, bufferSize: 4096, bufferCount: 3)
        stream.open()
        let data = randomBytes(count: 256 << 10)
        let done = DispatchSemaphore(value: 0)
        let writer = DispatchQueue(label: "test.writer")
        writer.async {
            try? stream.writeAll(data)
            stream.close()
            done.signal()
        }
        #expect(eventually { stream.writerWaitCount >= 1 }, "the writer waits for room")
        #expect(eventually { inner.activeWrites == 1 }, "the worker reaches its first write (it may start after the writer waits)")
        #expect(inner.writeLengths.count == 1, "the worker is blocked in its first write")
        #expect(stream.bufferedByteCount == 3 * 4096, "every buffer full, nothing more taken")
        for _ in 0..<(data.count / 4096) { gate.signal() }
        #expect(done.wait(timeout: .now() + waitLimit) == .success)
        writer.sync {}
        expectSameBytes(inner.received, data)
        #expect(stream.largestBufferedByteCount == 3 * 4096)
        #expect(inner.writeLengths.count == data.count / 4096)
        #expect(stream.streamStatus == .closed)
    }

    @Test("Close writes everything and waits for the worker; no write after close")
    func closeJoinsWorker() throws {
        let gate = DispatchSemaphore(value: 0)
        let inner = RecordingOutputStream(gate: gate)
        // Closed on another thread while this one only waits for `closed`.
        nonisolated(unsafe) let stream = try WriteBehindOutputStream(wrapping: inner, chunkSize: 1000, bufferSize: 5000, bufferCount: 4,
                                                                     closesInnerStream: false)
        stream.open()
        let data = randomBytes(count: 12_345)
        #expect(writeOnce(stream, data) == data.count, "the ring takes it all at once")
        #expect(eventually { inner.activeWrites == 1 })
        let closed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            stream.close()
            closed.signal()
        }
        for _ in 0..<13 { gate.signal() }
        #expect(closed.wait(timeout: .now() + waitLimit) == .success)
        #expect(inner.activeWrites == 0)
        expectSameBytes(inner.received, data)
        #expect(inner.writeLengths.count == 13, "12,345 bytes in writes of at most 1,000")
        #expect(inner.streamStatus == .open, "closesInnerStream: false leaves the inner stream open")
        inner.close()
        #expect(stream.streamStatus == .closed)
    }

    @Test("Lifecycle: open and close twice, write and flush after close, close without open")
    func lifecycle() throws {
        let inner = RecordingOutputStream()
        let stream = try WriteBehindOutputStream(wrapping: inner)
        #expect(writeOnce(stream, [1]) == -1)
        #expect(code(of: stream.streamError) == .notOpen)
        stream.open()
        stream.open()
        #expect(stream.streamStatus == .open)
        #expect(writeOnce(stream, [1, 2, 3]) == 3)
        stream.close()
        stream.close()
        #expect(stream.streamStatus == .closed)
        #expect(inner.received == [1, 2, 3])
        #expect(inner.streamStatus == .closed)
        #expect(writeOnce(stream, [4]) == -1)
        #expect(code(of: stream.streamError) == .notOpen)
        #expect(throws: ByteStreamError(.notOpen, operation: "flush")) { try stream.flush() }
        #expect(inner.received == [1, 2, 3])

        let neverOpened = RecordingOutputStream()
        try WriteBehindOutputStream(wrapping: neverOpened).close()
        #expect(neverOpened.streamStatus == .closed, "close without open still closes an owned inner stream")

        try withTemporaryDirectory { directory throws in
            let path = directory.appendingPathComponent("missing/output").path
            let failing = try WriteBehindOutputStream(wrapping: FileOutputStream(path: path))
            failing.open()
            #expect(failing.streamStatus == .error)
            #expect(errnoValue(of: failing.streamError) == ENOENT)
            #expect(writeOnce(failing, [1]) == -1)
            failing.close()
            #expect(failing.streamStatus == .error)
        }
    }

    @Test("copy(to:) from a read-ahead stream into a write-behind one: every byte, chunkSize I/O")
    func pipelinedCopy() throws {
        let data = randomBytes(count: 1 << 20 + 1)
        let source = RecordingInputStream(bytes: data)
        let sink = RecordingOutputStream()
        let input = try ReadAheadInputStream(wrapping: source)
        let output = try WriteBehindOutputStream(wrapping: sink)
        #expect(try input.copy(to: output) == data.count)
        try output.closeOrThrow()
        try input.closeOrThrow()
        expectSameBytes(sink.received, data)
        #expect(source.readLengths.allSatisfy { $0 <= 4096 })
        #expect(sink.writeLengths.allSatisfy { $0 <= 4096 })
    }
}

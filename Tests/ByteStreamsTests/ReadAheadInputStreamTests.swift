@testable import ByteStreams
import Dispatch
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A ring shape and an inner stream's behaviour to read ahead with.
struct ReadAheadShape: Sendable, CustomStringConvertible {
    let chunkSize: Int
    let bufferCount: Int
    /// The most bytes the inner stream returns per read (short reads, as from a pipe).
    let mostPerRead: Int

    var description: String {
        "chunk \(chunkSize) × \(bufferCount)" + (mostPerRead == .max ? "" : ", inner reads ≤ \(mostPerRead)")
    }

    static let all = [
        ReadAheadShape(chunkSize: 4096, bufferCount: ReadAheadInputStream.defaultBufferCount, mostPerRead: .max),
        ReadAheadShape(chunkSize: 4096, bufferCount: 1, mostPerRead: .max),
        ReadAheadShape(chunkSize: 1000, bufferCount: 3, mostPerRead: 700),
        ReadAheadShape(chunkSize: 65536, bufferCount: 2, mostPerRead: 5000),
    ]
}

@Suite("ReadAheadInputStream", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct ReadAheadInputStreamTests {
    @Test("Every byte, in order, whatever the size and ring; inner reads of at most chunkSize",
          arguments: edgeSizes, ReadAheadShape.all)
    func roundTrip(size: Int, shape: ReadAheadShape) throws {
        let data = randomBytes(count: size, seed: UInt64(size))
        let inner = RecordingInputStream(bytes: data, mostPerRead: shape.mostPerRead)
        let stream = try ReadAheadInputStream(wrapping: inner, chunkSize: shape.chunkSize, bufferCount: shape.bufferCount)
        stream.open()
        #expect(stream.streamStatus == .open)
        let (bytes, results) = readAllByChunks(stream, maxLength: 3000)
        expectSameBytes(bytes, data)
        #expect(results.last == 0)
        #expect(stream.streamStatus == .atEnd)
        #expect(readOnce(stream, maxLength: 10).result == 0, "the end stays the end")
        stream.close()
        #expect(stream.streamStatus == .closed)
        #expect(inner.streamStatus == .closed, "closesInnerStream defaults to true")
        #expect(inner.readLengths.allSatisfy { $0 > 0 && $0 <= shape.chunkSize })
        #expect(stream.largestBufferedByteCount <= shape.chunkSize * shape.bufferCount)
    }

    @Test("A read larger than the ring and one-byte reads give the same bytes")
    func readLengths() throws {
        let data = randomBytes(count: 50_000)
        for maxLength in [1, 7, 100_000] {
            let stream = try ReadAheadInputStream(wrapping: MemoryInputStream(bytes: data), chunkSize: 512, bufferCount: 4)
            stream.open()
            let (bytes, results) = readAllByChunks(stream, maxLength: maxLength)
            expectSameBytes(bytes, data, "maxLength \(maxLength)")
            #expect(results.dropLast().allSatisfy { $0 > 0 && $0 <= min(maxLength, 512 * 4) })
            stream.close()
        }
    }

    @Test("An inner error comes after the bytes before it, unchanged and sticky",
          arguments: [0, 1, 4096, 7000])
    func errorAfterBytes(offset: Int) throws {
        let data = randomBytes(count: 20_000)
        let injected = InjectedError(id: offset)
        let inner = RecordingInputStream(bytes: data, failure: (offset, injected))
        let stream = try ReadAheadInputStream(wrapping: inner, chunkSize: 4096, bufferCount: 2)
        stream.open()
        let (bytes, results) = readAllByChunks(stream, maxLength: 1000)
        expectSameBytes(bytes, data[0..<offset])
        #expect(results.last == -1)
        #expect(stream.streamStatus == .error)
        #expect(stream.streamError as? InjectedError == injected)
        #expect(readOnce(stream, maxLength: 10).result == -1)
        #expect(stream.streamError as? InjectedError == injected)
        stream.close()
        #expect(stream.streamStatus == .error, "close keeps the failure visible")
        #expect(inner.readLengths.count == (offset + 4095) / 4096 + 1, "no read after the error")
    }

    @Test("A slow reader: the worker stops when the ring is full and the ring never grows")
    func slowReader() throws {
        let data = randomBytes(count: 1 << 20)
        let inner = RecordingInputStream(bytes: data)
        let stream = try ReadAheadInputStream(wrapping: inner, chunkSize: 4096, bufferCount: 4)
        stream.open()
        #expect(eventually { !stream.workerIsRunning }, "the worker stops once the ring is full")
        #expect(inner.readLengths.count == 4, "four chunks fill the ring; no fifth read")
        #expect(stream.largestBufferedByteCount == 4 * 4096)
        // Read one chunk: the ring is not half empty, the worker stays stopped; a second
        // chunk frees half the ring and the worker refills it.
        expectSameBytes(readExactly(stream, count: 4096, maxLength: 4096), data[0..<4096])
        #expect(!stream.workerIsRunning)
        #expect(inner.readLengths.count == 4)
        expectSameBytes(readExactly(stream, count: 4096, maxLength: 4096), data[4096..<8192])
        #expect(eventually { !stream.workerIsRunning })
        #expect(inner.readLengths.count == 6)
        let (rest, _) = readAllByChunks(stream, maxLength: 1000)
        expectSameBytes(rest, data[8192...])
        #expect(stream.largestBufferedByteCount == 4 * 4096)
        stream.close()
    }

    @Test("Close stops the worker and waits for its inner read; no read starts after")
    func closeJoinsWorker() throws {
        let gate = DispatchSemaphore(value: 0)
        let inner = RecordingInputStream(bytes: randomBytes(count: 100_000), gate: gate)
        // Closed on another thread while this one only waits for `closed`.
        nonisolated(unsafe) let stream = try ReadAheadInputStream(wrapping: inner, chunkSize: 4096, bufferCount: 4, closesInnerStream: false)
        stream.open()
        #expect(eventually { inner.activeReads == 1 }, "the worker is blocked in its first read")
        let closed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            stream.close()
            closed.signal()
        }
        #expect(eventually { stream.workerIsStopping })
        #expect(inner.activeReads == 1, "close cannot interrupt the read")
        gate.signal()
        #expect(closed.wait(timeout: .now() + waitLimit) == .success)
        #expect(inner.activeReads == 0, "the read returned before close did")
        #expect(!stream.workerIsRunning)
        #expect(inner.readLengths.count == 1, "the worker started no read after close asked it to stop")
        #expect(stream.streamStatus == .closed)
        #expect(inner.streamStatus == .open, "closesInnerStream: false leaves the inner stream open")
        inner.close()
    }

    @Test("Seeking a file re-reads the right bytes; the offset is the reader's position")
    func seekOnFile() throws {
        try withTemporaryDirectory { directory throws in
            let data = randomBytes(count: 1 << 20 + 1)
            let path = try makeFile("data", in: directory, bytes: data)
            let stream = try ReadAheadInputStream(wrapping: FileInputStream(path: path), chunkSize: 4096, bufferCount: 4)
            #expect(stream.property(forKey: .fileCurrentOffset) == nil, "not open: the inner stream's (none yet)")
            stream.open()
            #expect(stream.property(forKey: .fileCurrentOffset) as? Int64 == 0)
            expectSameBytes(readExactly(stream, count: 10_000), data[0..<10_000])
            #expect(stream.property(forKey: .fileCurrentOffset) as? Int64 == 10_000, "not the inner offset, which is ahead")

            #expect(stream.setProperty(Int64(5000), forKey: .fileCurrentOffset))
            #expect(stream.property(forKey: .fileCurrentOffset) as? Int64 == 5000)
            expectSameBytes(readExactly(stream, count: 3000), data[5000..<8000])
            #expect(stream.property(forKey: .fileCurrentOffset) as? Int64 == 8000)

            #expect(!stream.setProperty(Int64(-1), forKey: .fileCurrentOffset), "lseek refuses a negative offset")
            #expect(!stream.setProperty("x", forKey: .fileCurrentOffset))
            #expect(!stream.setProperty(Int64(0), forKey: .dataWrittenToMemoryStream))
            #expect(stream.property(forKey: .fileCurrentOffset) as? Int64 == 8000)
            expectSameBytes(readExactly(stream, count: 100), data[8000..<8100], "a refused seek loses nothing")

            let (rest, _) = readAllByChunks(stream, maxLength: 65536)
            expectSameBytes(rest, data[8100...])
            #expect(stream.streamStatus == .atEnd)
            #expect(stream.property(forKey: .fileCurrentOffset) as? Int64 == Int64(data.count))

            #expect(stream.setProperty(data.count - 4097, forKey: .fileCurrentOffset), "an Int offset, at end")
            #expect(stream.streamStatus == .open, "seeking at the end makes the stream readable again")
            let (tail, _) = readAllByChunks(stream, maxLength: 1000)
            expectSameBytes(tail, data[(data.count - 4097)...])
            stream.close()
            #expect(stream.streamStatus == .closed)
        }
    }

    @Test("A pipe: no offset, no seek, every byte")
    func pipe() throws {
        let pipe = try TestPipe()
        let data = randomBytes(count: 40_000)
        let writer = DispatchQueue(label: "test.writer")
        writer.async {
            try? pipe.write(data)
            pipe.closeWriteEnd()
        }
        let stream = try ReadAheadInputStream(wrapping: FileInputStream(fileDescriptor: pipe.readEnd))
        stream.open()
        #expect(stream.property(forKey: .fileCurrentOffset) == nil)
        #expect(!stream.setProperty(Int64(0), forKey: .fileCurrentOffset))
        let (bytes, results) = readAllByChunks(stream, maxLength: 4096)
        expectSameBytes(bytes, data)
        #expect(results.last == 0)
        stream.close()
        writer.sync {}
    }

    @Test("Lifecycle: open and close twice, read after close, close without open")
    func lifecycle() throws {
        let data = randomBytes(count: 10_000)
        let inner = RecordingInputStream(bytes: data)
        let stream = try ReadAheadInputStream(wrapping: inner)
        #expect(readOnce(stream, maxLength: 10).result == -1)
        #expect(code(of: stream.streamError) == .notOpen)
        stream.open()
        stream.open()
        #expect(stream.streamStatus == .open)
        #expect(stream.streamError == nil, "a misuse before open is not the opened stream's error")
        expectSameBytes(readExactly(stream, count: 100), data[0..<100])
        stream.close()
        stream.close()
        #expect(stream.streamStatus == .closed)
        #expect(inner.streamStatus == .closed)
        #expect(readOnce(stream, maxLength: 10).result == -1)
        #expect(code(of: stream.streamError) == .notOpen)
        #expect(stream.streamStatus == .closed)

        let neverOpened = RecordingInputStream(bytes: data)
        try ReadAheadInputStream(wrapping: neverOpened).close()
        #expect(neverOpened.streamStatus == .closed, "close without open still closes an owned inner stream")
        #expect(neverOpened.readLengths.isEmpty)

        let alreadyOpen = MemoryInputStream(bytes: data)
        alreadyOpen.open()
        expectSameBytes(readExactly(alreadyOpen, count: 10), data[0..<10])
        let wrapper = try ReadAheadInputStream(wrapping: alreadyOpen)
        wrapper.open()
        expectSameBytes(readAllByChunks(wrapper, maxLength: 4096).bytes, data[10...], "an open inner stream is read on")
        wrapper.close()
    }

    @Test("An inner stream that cannot open: the error is the inner one")
    func innerOpenFailure() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory.appendingPathComponent("missing").path
            let stream = try ReadAheadInputStream(wrapping: FileInputStream(path: path))
            stream.open()
            #expect(stream.streamStatus == .error)
            #expect(errnoValue(of: stream.streamError) == ENOENT)
            #expect(readOnce(stream, maxLength: 10).result == -1)
            stream.close()
        }
    }

    @Test("Dropped without close: deinit stops and joins the worker")
    func deinitJoins() throws {
        let inner = RecordingInputStream(bytes: randomBytes(count: 1 << 20))
        do {
            let stream = try ReadAheadInputStream(wrapping: inner, chunkSize: 4096, bufferCount: 2, closesInnerStream: false)
            stream.open()
            _ = readOnce(stream, maxLength: 100)
        }
        #expect(inner.activeReads == 0)
        let count = inner.readLengths.count
        #expect(count <= 3)
        inner.close()
    }
}

import ByteStreams
import ByteStreamsFoundation
import Dispatch
import Foundation
import GzipStreams
import Testing
import TestSupport

/// A fresh path under the temporary directory, removed when the body returns.
private func withTemporaryFile<T>(_ body: (URL) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("FoundationAdapterTests-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// Reads a Foundation stream to its end with `read(_:maxLength:)` in chunks of `chunkSize`
/// bytes, at most `limit` bytes; `nil` when a read fails.
private func readAll(_ stream: InputStream, chunkSize: Int = 1000, limit: Int = 1 << 24) -> [UInt8]? {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: chunkSize)
    while bytes.count <= limit {
        let count = stream.read(&chunk, maxLength: chunkSize)
        if count < 0 { return nil }
        if count == 0 { return bytes }
        bytes += chunk[0..<count]
    }
    return nil
}

/// Writes all of `bytes` to a Foundation stream in pieces of `chunkSize` bytes; `false` when a
/// write fails or takes nothing.
private func writeAll(_ bytes: [UInt8], to stream: OutputStream, chunkSize: Int = 1000) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let piece = Array(bytes[offset..<min(offset + chunkSize, bytes.count)])
        let count = stream.write(piece, maxLength: piece.count)
        if count <= 0 { return false }
        offset += count
    }
    return true
}

private let plain = randomBytes(count: 300_000, seed: 11).map { $0 % 16 }  // compressible

@Suite("Foundation adapters: FoundationInputStream/FoundationOutputStream and BridgedInputStream/BridgedOutputStream", .onDedicatedThreads,
       .timeLimit(.minutes(1)))
struct FoundationAdapterTests {
    // MARK: Foundation streams under ours

    @Test("InputStream(data:) feeds a GzipInputStream; the status goes not open, open, at end, closed")
    func foundationDataIntoGzip() throws {
        let source = InputStream(data: try Data(plain).gzipped())
        let input = FoundationInputStream(wrapping: source)
        #expect(input.streamStatus == .notOpen)
        input.open()
        #expect(input.streamStatus == .open)
        #expect(source.streamStatus == .open, "opening ours opens Foundation's")
        #expect(input.hasBytesAvailable)
        let gunzip = try GzipInputStream(wrapping: input)
        let result = try gunzip.readToEnd()
        #expect(result == plain)
        #expect(input.streamStatus == .atEnd)
        gunzip.close()
        #expect(input.streamStatus == .closed)
        #expect(source.streamStatus == .closed, "closing ours closes Foundation's")
    }

    @Test("closesInnerStream: false leaves the Foundation stream open")
    func keepsInnerOpen() throws {
        let source = InputStream(data: Data([1, 2, 3]))
        let input = FoundationInputStream(wrapping: source, closesInnerStream: false)
        #expect(try input.readChunk(maxLength: 2) == [1, 2])
        try input.closeOrThrow()
        #expect(source.streamStatus == .open)
        var byte: UInt8 = 0
        #expect(source.read(&byte, maxLength: 1) == 1 && byte == 3)
        source.close()
    }

    @Test("A GzipOutputStream writes into OutputStream(toMemory:)")
    func gzipIntoFoundationMemory() throws {
        let sink = OutputStream(toMemory: ())
        let output = FoundationOutputStream(wrapping: sink)
        let gzip = try GzipOutputStream(wrapping: output)
        try gzip.writeAll(plain)
        try gzip.closeOrThrow()
        #expect(output.streamStatus == .closed)
        let written = try #require(output.property(forKey: .dataWrittenToMemoryStream) as? Data)
        #expect(try [UInt8](written.gunzipped()) == plain)
        let foundationView = try #require(sink.property(forKey: .dataWrittenToMemoryStreamKey) as? Data)
        #expect(foundationView == written)
    }

    @Test("A file URL both ways: OutputStream(url:append:) takes gzip, InputStream(url:) gives it back")
    func fileURL() throws {
        try withTemporaryFile { url in
            let sink = try #require(OutputStream(url: url, append: false))
            let gzip = try GzipOutputStream(wrapping: FoundationOutputStream(wrapping: sink))
            try gzip.writeAll(plain)
            try gzip.closeOrThrow()
            #expect(try [UInt8](Data(contentsOf: url).gunzipped()) == plain)

            let source = try #require(InputStream(url: url))
            let input = FoundationInputStream(wrapping: source)
            try input.openOrThrow()
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == 0)
            let gunzip = try GzipInputStream(wrapping: input)
            #expect(try gunzip.readToEnd() == plain)
            try gunzip.closeOrThrow()
        }
    }

    @Test("A missing file: Foundation's error becomes ours, with the NSError kept")
    func foundationErrorSurfaces() throws {
        let source = try #require(InputStream(url: URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)")))
        let input = FoundationInputStream(wrapping: source)
        input.open()
        #expect(input.streamStatus == .error)
        let error = try #require(input.streamError as? FoundationStreamError)
        #expect(error.operation == "open")
        #expect(error.errno == ENOENT)
        let underlying = try #require(error.underlying.map { $0 as NSError })
        #expect(underlying.domain == NSPOSIXErrorDomain && underlying.code == Int(ENOENT))
        #expect(error.description == "open: No such file or directory")
        let thrown = #expect(throws: FoundationStreamError.self) { try input.readChunk() }
        #expect(thrown?.errno == ENOENT, "sticky: later calls report the same error")
    }

    @Test("A full fixed buffer: Foundation's write error (ENOMEM on Linux) stops writeAll")
    func fullFoundationBuffer() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 8)
        buffer.initialize(repeating: 0xFF, count: 8)
        defer { buffer.deallocate() }
        let output = FoundationOutputStream(wrapping: OutputStream(toBuffer: buffer, capacity: 8))
        try output.writeAll(Array(0..<8))
        let error = #expect(throws: (any Error).self) { try output.writeAll([8, 9]) }
        #expect(output.streamStatus == .error)
        let foundation = error as? FoundationStreamError
        #expect(foundation?.operation == "write")
        #expect(foundation?.errno != nil)
        #expect(Array(UnsafeBufferPointer(start: buffer, count: 8)) == Array(0..<8))
    }

    // MARK: Our streams under Foundation's

    @Test("BridgedInputStream: Foundation code reads gunzipped bytes; status and hasBytesAvailable follow ours")
    func bridgedGunzip() throws {
        let gunzip = try GzipInputStream(wrapping: MemoryInputStream(data: try Data(plain).gzipped()))
        let bridge = BridgedInputStream(gunzip)
        #expect(bridge.streamStatus == .notOpen)
        bridge.open()
        #expect(bridge.streamStatus == .open && bridge.hasBytesAvailable)
        #expect(readAll(bridge) == plain)
        #expect(bridge.streamStatus == .atEnd)
        #expect(!bridge.hasBytesAvailable)
        #expect(bridge.streamError == nil)
        bridge.close()
        #expect(bridge.streamStatus == .closed && gunzip.streamStatus == .closed)
    }

    @Test("BridgedInputStream over a file gives the offset and seeks through fileCurrentOffsetKey")
    func bridgedOffset() throws {
        try withTemporaryFile { url in
            try Data(Array(0..<100)).write(to: url)
            let bridge = BridgedInputStream(FileInputStream(path: url.path))
            bridge.open()
            #expect(readAll(bridge, chunkSize: 10, limit: 1000)?.count == 100)
            #expect((bridge.property(forKey: .fileCurrentOffsetKey) as? NSNumber)?.int64Value == 100)
            #expect(bridge.setProperty(NSNumber(value: 90), forKey: .fileCurrentOffsetKey))
            #expect(bridge.streamStatus == .open, "seeking a stream at its end makes it readable again")
            #expect(readAll(bridge) == Array(90..<100))
            bridge.close()
        }
    }

    @Test("BridgedOutputStream: Foundation code writes into a GzipOutputStream")
    func bridgedGzip() throws {
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory)
        let bridge = BridgedOutputStream(gzip)
        bridge.open()
        #expect(bridge.streamStatus == .open && bridge.hasSpaceAvailable)
        #expect(writeAll(plain, to: bridge))
        bridge.close()
        #expect(bridge.streamStatus == .closed && bridge.streamError == nil)
        #expect(try [UInt8](memory.data.gunzipped()) == plain)
    }

    @Test("BridgedOutputStream.toMemory() keeps what it is given, as Foundation's memory stream does")
    func bridgedToMemory() throws {
        let bridge = BridgedOutputStream.toMemory()
        #expect(bridge.byteStream is MemoryOutputStream)
        bridge.open()
        #expect(writeAll(Array(0..<50), to: bridge, chunkSize: 7))
        let data = try #require(bridge.property(forKey: .dataWrittenToMemoryStreamKey) as? Data)
        #expect(data == Data(Array(0..<50)))
        bridge.close()
    }

    @Test("Our errors reach Foundation code as NSErrors with the original kept")
    func bridgedErrors() throws {
        let missing = BridgedInputStream(FileInputStream(path: "/nonexistent-\(UUID().uuidString)"))
        missing.open()
        #expect(missing.streamStatus == .error)
        let error = try #require(missing.streamError.map { $0 as NSError })
        #expect(error.domain == NSPOSIXErrorDomain && error.code == Int(ENOENT), "as Foundation's own file streams report")
        let original = error.userInfo[NSUnderlyingErrorKey] as? ByteStreamError
        #expect(original?.errno == ENOENT)
        #expect(original.map { error.localizedDescription == $0.description } == true)

        // Not gzip: the GzipError's domain, the GzipError kept.
        let garbage = BridgedInputStream(try GzipInputStream(wrapping: MemoryInputStream(bytes: Array(repeating: 0x41, count: 64))))
        garbage.open()
        var chunk = [UInt8](repeating: 0, count: 64)
        #expect(garbage.read(&chunk, maxLength: 64) == -1)
        let gzipError = try #require(garbage.streamError.map { $0 as NSError })
        #expect(gzipError.domain.hasSuffix("GzipError"))
        #expect(gzipError.userInfo[NSUnderlyingErrorKey] is GzipError)
    }

    @Test("Through both adapters, a stream keeps its own error")
    func errorsRoundTrip() throws {
        // Ours → Foundation → ours: the ByteStreamError itself.
        let inner = FileInputStream(path: "/nonexistent-\(UUID().uuidString)")
        let twice = FoundationInputStream(wrapping: BridgedInputStream(inner))
        twice.open()
        #expect(twice.streamStatus == .error)
        #expect((twice.streamError as? ByteStreamError)?.errno == ENOENT)

        // Foundation → ours → Foundation: the NSError itself.
        let source = try #require(InputStream(url: URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)")))
        let back = BridgedInputStream(FoundationInputStream(wrapping: source))
        back.open()
        let error = try #require(back.streamError.map { $0 as NSError })
        #expect(error.domain == NSPOSIXErrorDomain && error.code == Int(ENOENT))
        #expect(error.userInfo[NSUnderlyingErrorKey] == nil, "Foundation's own error, not a wrapper")
    }

    @Test("A BridgedInputStream scheduled on a run loop tells its Foundation delegate, as itself")
    func bridgedEvents() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        let bridge = BridgedInputStream(MemoryInputStream(bytes: Array("0123456789".utf8)))
        nonisolated(unsafe) let foundationBridge = bridge
        let recorder = FoundationRecorder()
        recorder.readLength = 3
        loop.sync {
            foundationBridge.delegate = recorder
            foundationBridge.schedule(in: RunLoop.current, forMode: .default)
            foundationBridge.open()
        }
        #expect(recorder.waitUntilEnded())
        loop.sync {}
        #expect(recorder.events == [.openCompleted] + Array(repeating: .hasBytesAvailable, count: 5) + [.endEncountered])
        #expect(recorder.streams.allSatisfy { $0 == ObjectIdentifier(bridge) })
        loop.sync { foundationBridge.remove(from: RunLoop.current, forMode: .default) }
        #expect(bridge.byteStream.scheduler == nil)
        withExtendedLifetime(recorder) {}
    }
}

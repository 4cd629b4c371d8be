import ByteStreams
import Foundation
import Synchronization
@testable import GzipStreams
import Testing
import TestSupport

// MARK: - Status, sticky errors and the z_stream lifecycle

/// Serialized: the z_stream counts below would be disturbed by another test of this suite
/// creating or ending streams at the same moment. Tests of other suites may still run at the
/// same time, so the exact proofs use the `ZStream` instance of each stream (`isLive`, and a
/// weak reference that must empty when the stream goes); ``ZStream/liveCount`` is compared
/// over a window retried until no other test moved it (see `liveCountBalances`).
@Suite("Status, sticky errors and the z_stream lifecycle", .onDedicatedThreads, .serialized)
struct LifecycleTests {
    let data = textBytes(count: 20_000, seed: 31)

    @Test("Errors are sticky: later reads return -1 with the same error, and close keeps it")
    func stickyErrors() throws {
        var bytes = try pack(data)
        bytes[bytes.count - 8] ^= 1
        let stream = gunzipStream(bytes)
        let first = drain(stream)
        let error = try #require(first.gzipError)
        #expect(error.kind == "crc-mismatch")
        var buffer = [UInt8](repeating: 0, count: 16)
        for _ in 0..<3 {
            #expect(stream.read(&buffer, maxLength: buffer.count) == -1)
            #expect(stream.streamError as? GzipError == error)
            #expect(stream.streamStatus == .error)
        }
        #expect(throws: error) { try stream.readChunk() }
        stream.close()
        #expect(stream.streamStatus == .error)
        #expect(stream.streamError as? GzipError == error)
        #expect(stream.read(&buffer, maxLength: buffer.count) == -1)
        #expect(throws: error) { try stream.closeOrThrow() }
    }

    @Test("Reading after close returns -1 without crashing; closing twice is harmless")
    func readAfterClose() throws {
        let packed = try pack(data)
        for readFirst in [0, 100, data.count + 1] {
            let inner = MemoryInputStream(bytes: packed)
            let stream = try GzipInputStream(wrapping: inner)
            stream.open()
            var buffer = [UInt8](repeating: 0, count: max(1, readFirst))
            if readFirst > 0 { #expect(stream.read(&buffer, maxLength: readFirst) > 0) }
            stream.close()
            #expect(stream.streamStatus == .closed)
            #expect(inner.streamStatus == .closed, "closesInnerStream defaults to true")
            #expect(stream.read(&buffer, maxLength: max(1, readFirst)) == -1)
            #expect((stream.streamError as? ByteStreamError)?.code == .notOpen)
            stream.close()
            #expect(stream.streamStatus == .closed)
        }
        let never = gunzipStream(packed)
        never.close()
        never.close()
        #expect(never.streamStatus == .closed)
    }

    @Test("closesInnerStream: false leaves the inner stream open, on both sides")
    func innerStreamLeftOpen() throws {
        let packed = try pack(data)
        let inner = MemoryInputStream(bytes: packed + packed)
        let stream = try GzipInputStream(wrapping: inner, closesInnerStream: false)
        var buffer = [UInt8](repeating: 0, count: 10)
        stream.open()
        #expect(stream.read(&buffer, maxLength: 10) == 10)
        stream.close()
        #expect(inner.streamStatus == .open)
        inner.close()

        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, closesInnerStream: false)
        try gzip.openOrThrow()
        try gzip.closeOrThrow()
        #expect(memory.streamStatus == .open)
        let closing = try GzipOutputStream(wrapping: memory)
        try closing.openOrThrow()
        try closing.closeOrThrow()
        #expect(memory.streamStatus == .closed)
    }

    @Test("Each stream's z_stream is live while open and ended by close, after success and after errors")
    func zstreamEndedByClose() throws {
        let good = try pack(data)
        var bad = good
        bad[bad.count - 8] ^= 1
        for input in [good, bad, Array(good.prefix(100)), [UInt8]()] {
            let stream = gunzipStream(input)
            #expect(currentZStream(of: stream) == nil, "no z_stream before open")
            stream.open()
            let zstream = try #require(currentZStream(of: stream))
            #expect(zstream.isLive)
            _ = drain(stream)
            #expect(zstream.isLive, "still live until close, after the end or an error")
            stream.close()
            #expect(!zstream.isLive)
            #expect(currentZStream(of: stream) == nil)
            stream.close()
            #expect(!zstream.isLive)
        }

        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory)
        try gzip.openOrThrow()
        let zstream = try #require(currentZStream(of: gzip))
        #expect(zstream.isLive)
        try gzip.writeAll(data)
        try gzip.closeOrThrow()
        #expect(!zstream.isLive)
    }

    @Test("A stream dropped without close ends its z_stream when it is deallocated")
    func zstreamEndedByDeinit() throws {
        let packed = try pack(data)
        var inputProbe = Weak<ZStream>()
        var outputProbe = Weak<ZStream>()
        do {
            let stream = gunzipStream(packed)
            stream.open()
            var buffer = [UInt8](repeating: 0, count: 100)
            #expect(stream.read(&buffer, maxLength: 100) == 100)
            inputProbe.object = currentZStream(of: stream)
            #expect(inputProbe.object?.isLive == true)

            let gzip = try GzipOutputStream(wrapping: MemoryOutputStream())
            try gzip.openOrThrow()
            try gzip.writeAll(data)
            outputProbe.object = currentZStream(of: gzip)
            #expect(outputProbe.object?.isLive == true)
        }
        // ZStream's deinit always calls end(), so a deallocated ZStream was ended.
        #expect(inputProbe.object == nil)
        #expect(outputProbe.object == nil)
    }

    /// Runs `body` until ``ZStream/liveCount`` is the same after it as before it (see
    /// `countBalances`).
    private func liveCountBalances(_ body: () throws -> Void) rethrows -> Bool {
        try countBalances({ ZStream.liveCount.load(ordering: .sequentiallyConsistent) }, around: body)
    }

    @Test("ZStream.liveCount returns to its starting value after close, deinit and errors")
    func liveCountReturns() throws {
        let good = try pack(data)
        var bad = good
        bad[20] ^= 0xff
        let balanced = try liveCountBalances {
            for input in [good, bad, Array(good.prefix(50)), [], Array("not gzip".utf8)] {
                let closed = gunzipStream(input)
                _ = drain(closed)
                closed.close()
                _ = drain(gunzipStream(input)) // dropped without close
            }
            let gzip = try GzipOutputStream(wrapping: MemoryOutputStream())
            try gzip.openOrThrow()
            try gzip.writeAll(data)
            try gzip.closeOrThrow()
            let dropped = try GzipOutputStream(wrapping: MemoryOutputStream())
            try dropped.openOrThrow()
            try dropped.writeAll(data)
        }
        #expect(balanced, "liveCount never came back to its starting value in 50 tries")

        // The count does move: one open stream adds one (seen in a quiet window).
        var rose = false
        for _ in 0..<50 where !rose {
            let before = ZStream.liveCount.load(ordering: .sequentiallyConsistent)
            let stream = gunzipStream(good)
            stream.open()
            let during = ZStream.liveCount.load(ordering: .sequentiallyConsistent)
            stream.close()
            let after = ZStream.liveCount.load(ordering: .sequentiallyConsistent)
            rose = during == before + 1 && after == before
        }
        #expect(rose)
    }

    @Test("GzipOutputStream whose inner fixed buffer fills: close reports the inner error as .error")
    func closeWhenInnerFails() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 10)
        defer { buffer.deallocate() }
        let inner = MemoryOutputStream(buffer: buffer, capacity: 10)
        let gzip = try GzipOutputStream(wrapping: inner)
        try gzip.openOrThrow() // the 10-byte header just fits
        #expect(inner.writtenCount == 10)
        try gzip.writeAll(Array("short".utf8)) // deflate keeps it: nothing to write yet
        let zstream = try #require(currentZStream(of: gzip))
        gzip.close()
        #expect(gzip.streamStatus == .error)
        let error = gzip.streamError as? ByteStreamError
        #expect(error?.code == .noSpaceAvailable, "\(String(describing: gzip.streamError))")
        #expect(!zstream.isLive)
        #expect(throws: ByteStreamError.self) { try gzip.closeOrThrow() }
        var byte: UInt8 = 0
        #expect(gzip.write(&byte, maxLength: 1) == -1)
    }

    @Test("GzipOutputStream whose inner buffer cannot hold the header: open fails, close still ends zlib")
    func openWhenInnerFails() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 5)
        defer { buffer.deallocate() }
        let gzip = try GzipOutputStream(wrapping: MemoryOutputStream(buffer: buffer, capacity: 5))
        gzip.open()
        #expect(gzip.streamStatus == .error)
        #expect((gzip.streamError as? ByteStreamError)?.code == .noSpaceAvailable)
        let zstream = currentZStream(of: gzip)
        gzip.close()
        #expect(zstream?.isLive != true)
        #expect(gzip.streamStatus == .error)
    }

    @Test("GzipOutputStream whose inner buffer fills during a large write: -1, then close keeps the error")
    func writeWhenInnerFails() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 100)
        defer { buffer.deallocate() }
        let gzip = try GzipOutputStream(wrapping: MemoryOutputStream(buffer: buffer, capacity: 100))
        try gzip.openOrThrow()
        let big = randomBytes(count: 100_000)
        let written = big.withUnsafeBufferPointer { gzip.write($0.baseAddress!, maxLength: $0.count) }
        #expect(written == -1)
        #expect(gzip.streamStatus == .error)
        let zstream = currentZStream(of: gzip)
        gzip.close()
        #expect(gzip.streamStatus == .error)
        #expect((gzip.streamError as? ByteStreamError)?.code == .noSpaceAvailable)
        #expect(zstream?.isLive == false)
    }
}

import ByteStreams
import Testing
import TestSupport

/// The error a bad argument must give.
private func invalid(_ name: String, _ message: String, operation: String) -> ByteStreamError {
    ByteStreamError(.invalidArgument(name: name, message: message), operation: operation)
}

private let chunkRange = "1...\(ByteStream.maximumChunkSize)"

@Suite("Arguments: a value out of range is a thrown invalidArgument, never a trap", .onDedicatedThreads)
struct ArgumentTests {
    @Test("ReadAheadInputStream: chunkSize, bufferCount and their product (at most 4 GiB; an in-range count asking more throws, not traps)", arguments: [
        (0, 1, invalid("chunkSize", "must be \(chunkRange), not 0", operation: "create ReadAheadInputStream")),
        (-1, 1, invalid("chunkSize", "must be \(chunkRange), not -1", operation: "create ReadAheadInputStream")),
        (ByteStream.maximumChunkSize + 1, 1,
         invalid("chunkSize", "must be \(chunkRange), not \(ByteStream.maximumChunkSize + 1)",
                 operation: "create ReadAheadInputStream")),
        (4096, 0, invalid("bufferCount", "must be at least 1, not 0", operation: "create ReadAheadInputStream")),
        (1 << 30, Int.max / 2,
         invalid("bufferCount", "\(Int.max / 2) buffers of \(1 << 30) bytes are more than ByteStream.maximumRingSize (4 GiB)",
                 operation: "create ReadAheadInputStream")),
        (1 << 30, 1 << 32,
         invalid("bufferCount", "\(1 << 32) buffers of \(1 << 30) bytes are more than ByteStream.maximumRingSize (4 GiB)",
                 operation: "create ReadAheadInputStream")),
        (1 << 20, 4097,
         invalid("bufferCount", "4097 buffers of \(1 << 20) bytes are more than ByteStream.maximumRingSize (4 GiB)",
                 operation: "create ReadAheadInputStream")),
    ])
    func readAhead(chunkSize: Int, bufferCount: Int, expected: ByteStreamError) {
        let inner = ProbeInputStream(bytes: [1, 2, 3])
        #expect(throws: expected) {
            try ReadAheadInputStream(wrapping: inner, chunkSize: chunkSize, bufferCount: bufferCount)
        }
        #expect(inner.streamStatus == .notOpen, "the inner stream is left alone")
    }

    @Test("ReadAheadInputStream takes the smallest chunk and one buffer")
    func readAheadSmallest() throws {
        let stream = try ReadAheadInputStream(wrapping: ProbeInputStream(bytes: [1, 2, 3]), chunkSize: 1, bufferCount: 1)
        #expect(try stream.readToEnd() == [1, 2, 3])
        stream.close()
    }

    @Test("WriteBehindOutputStream: chunkSize, bufferSize, bufferCount and their product", arguments: [
        (0, nil, 4, invalid("chunkSize", "must be \(chunkRange), not 0", operation: "create WriteBehindOutputStream")),
        (4096, 0, 4, invalid("bufferSize", "must be \(chunkRange), not 0", operation: "create WriteBehindOutputStream")),
        (4096, -5, 4, invalid("bufferSize", "must be \(chunkRange), not -5", operation: "create WriteBehindOutputStream")),
        (4096, nil, 0, invalid("bufferCount", "must be at least 1, not 0", operation: "create WriteBehindOutputStream")),
        (4096, 1 << 30, Int.max / 2,
         invalid("bufferCount", "\(Int.max / 2) buffers of \(1 << 30) bytes are more than ByteStream.maximumRingSize (4 GiB)",
                 operation: "create WriteBehindOutputStream")),
        (4096, 1 << 30, 1 << 32,
         invalid("bufferCount", "\(1 << 32) buffers of \(1 << 30) bytes are more than ByteStream.maximumRingSize (4 GiB)",
                 operation: "create WriteBehindOutputStream")),
    ] as [(Int, Int?, Int, ByteStreamError)])
    func writeBehind(chunkSize: Int, bufferSize: Int?, bufferCount: Int, expected: ByteStreamError) {
        let inner = ProbeOutputStream()
        #expect(throws: expected) {
            try WriteBehindOutputStream(wrapping: inner, chunkSize: chunkSize, bufferSize: bufferSize,
                                        bufferCount: bufferCount)
        }
        #expect(inner.streamStatus == .notOpen)
    }

    @Test("withWritableBuffer: minimumCapacity outside 1...bufferSize throws and leaves the stream usable",
          arguments: [0, -1, 4097])
    func writableBufferCapacity(minimumCapacity: Int) throws {
        let inner = ProbeOutputStream()
        let stream = try WriteBehindOutputStream(wrapping: inner, chunkSize: 4096, bufferSize: 4096, bufferCount: 2)
        try stream.openOrThrow()
        var called = false
        #expect(throws: invalid("minimumCapacity", "must be 1...4096, not \(minimumCapacity)", operation: "write")) {
            try stream.withWritableBuffer(minimumCapacity: minimumCapacity) { _ in
                called = true
                return 0
            }
        }
        #expect(!called)
        #expect(stream.streamStatus == .open)
        #expect(stream.streamError == nil)
        try stream.writeAll([7, 8, 9])
        try stream.closeOrThrow()
        #expect(inner.received == [7, 8, 9])
    }

    @Test("PeekingInputStream: a negative length throws before the inner stream is opened")
    func peekLength() {
        let inner = ProbeInputStream(bytes: [1, 2, 3])
        #expect(throws: invalid("length", "must be 0...\(ByteStream.maximumChunkSize), not -1",
                                operation: "create PeekingInputStream")) {
            try PeekingInputStream(peeking: inner, length: -1)
        }
        #expect(inner.streamStatus == .notOpen)
        #expect(inner.readCalls == 0)
    }

    @Test("readChunk, copy and readToEnd check their sizes before opening anything")
    func conveniences() {
        let input = ProbeInputStream(bytes: [1, 2, 3])
        let output = ProbeOutputStream()
        #expect(throws: invalid("maxLength", "must be \(chunkRange), not 0", operation: "read chunk")) {
            try input.readChunk(maxLength: 0)
        }
        #expect(throws: invalid("chunkSize", "must be \(chunkRange), not -4096", operation: "copy")) {
            try input.copy(to: output, chunkSize: -4096)
        }
        #expect(throws: invalid("limit", "must be at least 0, not -1", operation: "read to end")) {
            try input.readToEnd(limit: -1)
        }
        #expect(input.streamStatus == .notOpen)
        #expect(output.streamStatus == .notOpen)
        #expect(input.readCalls == 0)
    }

    @Test("chunks(maxLength: 0) throws on the first iteration")
    func chunksMaxLength() async {
        let input = ProbeInputStream(bytes: [1, 2, 3])
        await #expect(throws: invalid("maxLength", "must be \(chunkRange), not 0", operation: "read chunk")) {
            for try await _ in input.chunks(maxLength: 0) {}
        }
        #expect(input.readCalls == 0)
    }

    @Test("The message a user reads names the operation, the parameter, the range and the value")
    func description() {
        let error = invalid("chunkSize", "must be \(chunkRange), not 0", operation: "create ReadAheadInputStream")
        #expect(error.description == "create ReadAheadInputStream: invalid chunkSize: must be 1...1073741824, not 0")
        #expect(error.errno == nil)
    }
}

import ByteStreams
import Foundation
import Testing
import TestSupport

@Suite("PeekingInputStream: peeked bytes come back first; the offset and seeking see through them", .onDedicatedThreads)
struct PeekingInputStreamTests {
    @Test("The peeked bytes, then the rest, for inputs shorter than, equal to and longer than the peek",
          arguments: [0, 1, 15, 16, 17, 5000])
    func bytesComeBack(size: Int) throws {
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let stream = try PeekingInputStream(peeking: MemoryInputStream(bytes: bytes), length: 16)
        #expect(stream.peekedBytes == Array(bytes.prefix(16)))
        try stream.openOrThrow()
        #expect(try stream.readToEnd() == bytes)
        #expect(stream.property(forKey: .fileCurrentOffset) == nil, "memory cannot seek")
        #expect(!stream.setProperty(Int64(0), forKey: .fileCurrentOffset))
    }

    @Test("From a file: the offset counts the peeked bytes as unread; seeking after the end reads again")
    func offsetAndSeek() throws {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try withTemporaryDirectory { directory in
            let path = try makeFile("data", in: directory, bytes: bytes)
            let file = FileInputStream(path: path)
            let stream = try PeekingInputStream(peeking: file, length: 16)
            defer { file.close() }
            try stream.openOrThrow()
            #expect(stream.property(forKey: .fileCurrentOffset) as? Int64 == 0)
            var buffer = [UInt8](repeating: 0, count: 10)
            #expect(buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: 10) } == 10)
            #expect(stream.property(forKey: .fileCurrentOffset) as? Int64 == 10)
            #expect(try stream.readToEnd() == Array(bytes.dropFirst(10)))
            #expect(stream.streamStatus == .atEnd)
            #expect(stream.setProperty(Int64(9_990), forKey: .fileCurrentOffset))
            #expect(try stream.readToEnd() == Array(bytes.suffix(10)))
            #expect(stream.setProperty(Int64(3), forKey: .fileCurrentOffset))
            #expect(try stream.readToEnd() == Array(bytes.dropFirst(3)), "the peeked bytes are not given twice")
        }
    }

    @Test("An inner stream that fails to open: the error comes on the first read")
    func innerFailure() throws {
        let stream = try PeekingInputStream(peeking: FileInputStream(path: "/nonexistent/gzstream-peek"), length: 16)
        #expect(stream.peekedBytes.isEmpty)
        stream.open()
        var byte: UInt8 = 0
        #expect(stream.read(&byte, maxLength: 1) == -1)
        #expect((stream.streamError as? ByteStreamError)?.errno == ENOENT)
    }
}

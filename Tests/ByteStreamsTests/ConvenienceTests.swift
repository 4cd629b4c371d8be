import ByteStreams
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("Conveniences: readChunk, readToEnd, writeAll, copy, chunks", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct ConvenienceTests {
    // MARK: readChunk

    @Test("readChunk opens the stream, returns at most maxLength bytes, and [] at the end")
    func readChunk() throws {
        let input = MemoryInputStream(bytes: Array(0..<10))
        #expect(try input.readChunk(maxLength: 4) == [0, 1, 2, 3])
        #expect(input.streamStatus == .open)
        #expect(try input.readChunk(maxLength: 4) == [4, 5, 6, 7])
        #expect(try input.readChunk(maxLength: 4) == [8, 9])
        #expect(try input.readChunk(maxLength: 4) == [])
        #expect(input.streamStatus == .atEnd)
        #expect(try input.readChunk() == [])
    }

    @Test("readChunk's default is one 4096-byte chunk")
    func readChunkDefault() throws {
        #expect(ByteStream.defaultChunkSize == 4096)
        let input = MemoryInputStream(bytes: randomBytes(count: 5000))
        #expect(try input.readChunk().count == 4096)
        #expect(try input.readChunk().count == 904)
    }

    @Test("readChunk throws the open error, and .notOpen after close")
    func readChunkErrors() throws {
        let missing = FileInputStream(path: "/nonexistent-\(UUID().uuidString)")
        let openError = #expect(throws: ByteStreamError.self) { try missing.readChunk() }
        #expect(openError?.errno == ENOENT)

        let closed = MemoryInputStream(bytes: [1])
        closed.open()
        closed.close()
        let closedError = #expect(throws: ByteStreamError.self) { try closed.readChunk() }
        #expect(closedError?.code == .notOpen)
    }

    @Test("readChunk returns a short chunk without treating it as the end")
    func readChunkShort() throws {
        let input = ProbeInputStream(bytes: Array(0..<10), mostPerRead: 3)
        #expect(try input.readChunk(maxLength: 8) == [0, 1, 2])
        #expect(input.streamStatus == .open)
    }

    // MARK: readToEnd

    /// One readToEnd(limit:) case: an input of `size` bytes read with `limit`.
    struct LimitCase: Sendable, CustomStringConvertible {
        var size: Int
        var limit: Int
        var fits: Bool { size <= limit }
        var description: String { "\(size) bytes, limit \(limit)" }
    }

    @Test("readToEnd within, at and over its limit", arguments: [
        LimitCase(size: 100, limit: 1000), LimitCase(size: 100, limit: 100), LimitCase(size: 100, limit: 99),
        LimitCase(size: 0, limit: 0), LimitCase(size: 1, limit: 0),
        LimitCase(size: 1 << 20 + 1, limit: 1 << 20 + 1), LimitCase(size: 1 << 20 + 1, limit: 1 << 20),
    ])
    func readToEndLimit(_ limitCase: LimitCase) throws {
        let content = randomBytes(count: limitCase.size, seed: 21)
        let input = MemoryInputStream(bytes: content)
        if limitCase.fits {
            expectSameBytes(try input.readToEnd(limit: limitCase.limit), content)
            #expect(input.streamStatus == .atEnd)
        } else {
            let error = #expect(throws: ByteStreamError.self) { try input.readToEnd(limit: limitCase.limit) }
            #expect(error?.code == .lengthLimitExceeded(limit: limitCase.limit))
        }
    }

    @Test("readToEnd gathers short reads until the end")
    func readToEndShortReads() throws {
        let content = randomBytes(count: 10_000)
        let input = ProbeInputStream(bytes: content, mostPerRead: 7)
        expectSameBytes(try input.readToEnd(), content)
        #expect(input.streamStatus == .atEnd)
    }

    @Test("readToEnd reads a file and throws its open error")
    func readToEndFile() throws {
        try withTemporaryDirectory { directory throws in
            let content = randomBytes(count: 70_000)
            let path = try makeFile("data", in: directory, bytes: content)
            let input = FileInputStream(path: path)
            expectSameBytes(try input.readToEnd(), content)
            input.close()
            let thrown = #expect(throws: ByteStreamError.self) {
                try FileInputStream(path: directory.appendingPathComponent("nope").path).readToEnd()
            }
            #expect(thrown?.errno == ENOENT)
        }
    }

    // MARK: writeAll

    @Test("writeAll into a fixed 10-byte buffer of 20 bytes writes 10, then throws .noSpaceAvailable")
    func writeAllOverflows() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 10)
        defer { buffer.deallocate() }
        let output = MemoryOutputStream(buffer: buffer, capacity: 10)
        let content: [UInt8] = Array(1...20)
        let error = #expect(throws: ByteStreamError.self) { try output.writeAll(content) }
        #expect(error?.code == .noSpaceAvailable)
        #expect(output.writtenCount == 10)
        #expect(output.data == Data(Array(1...10)))
        #expect(code(of: output.streamError) == .noSpaceAvailable)
    }

    @Test("writeAll loops over short writes until everything is taken")
    func writeAllShortWrites() throws {
        let output = ProbeOutputStream(mostPerWrite: 3)
        let content = randomBytes(count: 1000)
        try output.writeAll(content)
        expectSameBytes(output.received, content)
        #expect(output.writeCalls == 334)
        #expect(output.streamStatus == .open, "writeAll opened the stream")
    }

    @Test("writeAll throws .noSpaceAvailable when a write takes nothing")
    func writeAllStalls() throws {
        let output = ProbeOutputStream(mostPerWrite: 0)
        let error = #expect(throws: ByteStreamError.self) { try output.writeAll([1, 2, 3]) }
        #expect(error?.code == .noSpaceAvailable)
        #expect(output.writeCalls == 1, "no busy loop on a stream that takes nothing")
    }

    @Test("writeAll takes any sequence of bytes, contiguous or not, and the empty one")
    func writeAllSequences() throws {
        let output = MemoryOutputStream()
        try output.writeAll([UInt8]())
        #expect(output.streamStatus == .open, "opened even for nothing")
        try output.writeAll(Array("ab".utf8))
        try output.writeAll("cd".utf8)
        try output.writeAll(Data("ef".utf8))
        try output.writeAll(UInt8(ascii: "g")...UInt8(ascii: "i"))
        try output.writeAll(Array("xjkx".utf8)[1..<3])
        #expect(output.data == Data("abcdefghijk".utf8))
        let bytes: [UInt8] = Array("lm".utf8)
        try bytes.withUnsafeBytes { try output.writeAll($0) }
        try output.writeAll(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(output.data == Data("abcdefghijklm".utf8))
    }

    @Test("writeAll throws a stream's own error unchanged")
    func writeAllError() throws {
        let output = ProbeOutputStream()
        output.writeError = ByteStreamError(.system(errno: ENOSPC), operation: "write", target: "disk")
        let error = #expect(throws: ByteStreamError.self) { try output.writeAll([1]) }
        #expect(error == output.writeError)

        let closed = MemoryOutputStream()
        closed.open()
        closed.close()
        let closedError = #expect(throws: ByteStreamError.self) { try closed.writeAll([1]) }
        #expect(closedError?.code == .notOpen)
    }

    // MARK: copy

    @Test("copy(to:) returns the byte count and copies every edge size", arguments: edgeSizes)
    func copySizes(size: Int) throws {
        let content = randomBytes(count: size, seed: UInt64(size) &+ 4)
        let input = MemoryInputStream(bytes: content)
        let output = MemoryOutputStream()
        let copied = try input.copy(to: output)
        #expect(copied == Int64(size))
        expectSameBytes(output.data, content)
        #expect(input.streamStatus == .atEnd, "copy reads to the end")
        #expect(output.streamStatus == .open, "copy closes neither stream")
    }

    @Test("copy(to:chunkSize:) never asks for or offers more than one chunk",
          arguments: [1, 7, 4096, 65536])
    func copyChunkSize(chunkSize: Int) throws {
        let content = randomBytes(count: 100_000, seed: 8)
        let input = ProbeInputStream(bytes: content)
        let output = ProbeOutputStream(mostPerWrite: 5000)
        #expect(try input.copy(to: output, chunkSize: chunkSize) == 100_000)
        expectSameBytes(output.received, content)
        #expect(input.largestMaxLength == chunkSize)
        #expect(output.largestMaxLength <= chunkSize)
    }

    @Test("copy(to:) from a file to a file")
    func copyFiles() throws {
        try withTemporaryDirectory { directory throws in
            let content = randomBytes(count: 1 << 20 + 1, seed: 13)
            let source = try makeFile("source", in: directory, bytes: content)
            let destination = directory.appendingPathComponent("destination").path
            let input = FileInputStream(path: source)
            let output = FileOutputStream(path: destination)
            #expect(try input.copy(to: output, chunkSize: 4096) == content.count)
            try input.closeOrThrow()
            try output.closeOrThrow()
            expectSameBytes(try contents(of: destination), content)
        }
    }

    @Test("copy(to:) throws the first error of either stream")
    func copyErrors() throws {
        let missing = FileInputStream(path: "/nonexistent-\(UUID().uuidString)")
        let readError = #expect(throws: ByteStreamError.self) { try missing.copy(to: MemoryOutputStream()) }
        #expect(readError?.errno == ENOENT)

        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 10)
        defer { buffer.deallocate() }
        let full = MemoryOutputStream(buffer: buffer, capacity: 10)
        let writeError = #expect(throws: ByteStreamError.self) {
            try MemoryInputStream(bytes: Array(repeating: 1, count: 20)).copy(to: full)
        }
        #expect(writeError?.code == .noSpaceAvailable)

        let failing = ProbeInputStream(bytes: [1, 2, 3])
        failing.readError = ByteStreamError(.system(errno: EIO), operation: "read", target: "disk")
        let inputError = #expect(throws: ByteStreamError.self) { try failing.copy(to: MemoryOutputStream()) }
        #expect(inputError == failing.readError)
    }

    // MARK: chunks

    @Test("chunks(maxLength:) yields the bytes in chunks, then closes the stream")
    func chunks() async throws {
        let content = randomBytes(count: 10_000, seed: 17)
        let input = MemoryInputStream(bytes: content)
        var sizes: [Int] = []
        var bytes: [UInt8] = []
        for try await chunk in input.chunks(maxLength: 4096) {
            sizes.append(chunk.count)
            bytes += chunk
        }
        #expect(sizes == [4096, 4096, 1808])
        expectSameBytes(bytes, content)
        #expect(input.streamStatus == .closed)
    }

    @Test("chunks() of every edge size", arguments: edgeSizes)
    func chunkSizes(size: Int) async throws {
        let content = randomBytes(count: size, seed: UInt64(size) &+ 5)
        var bytes: [UInt8] = []
        var count = 0
        for try await chunk in MemoryInputStream(bytes: content).chunks() {
            #expect((1...4096).contains(chunk.count))
            bytes += chunk
            count += 1
        }
        expectSameBytes(bytes, content)
        #expect(count == (size + 4095) / 4096)
    }

    @Test("chunks() of a file, and of a missing file throws ENOENT")
    func chunksFile() async throws {
        try await withTemporaryDirectory { directory async throws in
            let content = randomBytes(count: 9000, seed: 19)
            let path = try makeFile("data", in: directory, bytes: content)
            var bytes: [UInt8] = []
            for try await chunk in FileInputStream(path: path).chunks(maxLength: 1000) {
                #expect(chunk.count <= 1000)
                bytes += chunk
            }
            expectSameBytes(bytes, content)

            let missing = FileInputStream(path: directory.appendingPathComponent("missing").path)
            let error = await #expect(throws: ByteStreamError.self) {
                for try await _ in missing.chunks() {}
            }
            #expect(error?.errno == ENOENT)
            #expect(missing.streamStatus == .error)
        }
    }

    @Test("chunks() throws a read error after the chunks before it")
    func chunksReadError() async throws {
        let input = ProbeInputStream(bytes: Array(0..<10), mostPerRead: 4)
        var iterator = input.chunks(maxLength: 100).makeAsyncIterator()
        #expect(try await iterator.next() == [0, 1, 2, 3])
        input.readError = ByteStreamError(.system(errno: EIO), operation: "read")
        let error = await #expect(throws: ByteStreamError.self) { _ = try await iterator.next() }
        #expect(error?.errno == EIO)
        #expect(input.closeCalls == 1, "the sequence closed the stream when it failed")
    }

    @Test("chunks() of a closed stream is empty")
    func chunksOfClosed() async throws {
        let input = MemoryInputStream(bytes: [1, 2, 3])
        input.open()
        input.close()
        var count = 0
        for try await _ in input.chunks() { count += 1 }
        #expect(count == 0)
    }

    // MARK: open / close / throwIfFailed

    @Test("openOrThrow, closeOrThrow and throwIfFailed report the stream's error")
    func throwingLifecycle() throws {
        let input = MemoryInputStream(bytes: [1])
        try input.openOrThrow()
        try input.throwIfFailed()
        try input.closeOrThrow()
        try input.closeOrThrow()

        let failing = ProbeInputStream(bytes: [])
        failing.closeError = ByteStreamError(.system(errno: EIO), operation: "close", target: "x")
        try failing.openOrThrow()
        let error = #expect(throws: ByteStreamError.self) { try failing.closeOrThrow() }
        #expect(error == failing.closeError)
        #expect(failing.streamStatus == .error)
    }
}

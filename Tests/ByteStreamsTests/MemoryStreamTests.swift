import ByteStreams
import Foundation
import Testing
import TestSupport

@Suite("MemoryInputStream and MemoryOutputStream", .onDedicatedThreads)
struct MemoryStreamTests {
    // MARK: MemoryInputStream

    @Test("A memory stream of an edge size reads back whole, in chunks of exactly 4096", arguments: edgeSizes)
    func inputSizes(size: Int) throws {
        let content = randomBytes(count: size, seed: UInt64(size) &+ 2)
        let input = MemoryInputStream(bytes: content)
        #expect(input.count == size)
        #expect(input.remainingCount == size)
        input.open()
        let (bytes, results) = readAllByChunks(input, maxLength: 4096)
        expectSameBytes(bytes, content)
        let expected = Array(repeating: 4096, count: size / 4096) + (size % 4096 == 0 ? [] : [size % 4096]) + [0]
        #expect(results == expected, "memory never returns fewer bytes than it has")
        #expect(input.streamStatus == .atEnd)
        #expect(input.remainingCount == 0)
        input.close()

        expectSameBytes(try MemoryInputStream(bytes: content).readToEnd(), content)
    }

    @Test("A read with maxLength one less, equal or one more than the size",
          arguments: [1, 4095, 4096, 4097, 1 << 20 + 1], [-1, 0, 1])
    func oneRead(size: Int, delta: Int) {
        let content = randomBytes(count: size, seed: 11)
        let input = MemoryInputStream(bytes: content)
        input.open()
        let maxLength = size + delta
        let (result, bytes) = readOnce(input, maxLength: maxLength)
        #expect(result == min(maxLength, size))
        expectSameBytes(bytes, Array(content.prefix(maxLength)))
        #expect(input.streamStatus == .open)
        #expect(input.remainingCount == size - result)
        #expect(input.hasBytesAvailable == (result < size))
    }

    @Test("A short read returns exactly maxLength and leaves the rest")
    func shortRead() {
        let content = Array("The quick brown fox".utf8)
        let input = MemoryInputStream(bytes: content)
        input.open()
        #expect(readOnce(input, maxLength: 3).bytes == Array("The".utf8))
        #expect(input.remainingCount == content.count - 3)
        #expect(input.hasBytesAvailable)
        #expect(input.streamStatus == .open)
        #expect(readOnce(input, maxLength: 7).bytes == Array(" quick ".utf8))
        #expect(readOnce(input, maxLength: 100).bytes == Array("brown fox".utf8))
        #expect(!input.hasBytesAvailable, "all bytes were read")
        #expect(input.streamStatus == .open, "the end is learnt by the next read")
        #expect(readOnce(input, maxLength: 100).result == 0)
        #expect(input.streamStatus == .atEnd)
    }

    @Test("init(data:) and init(bytes:) over any sequence hold the same bytes")
    func initializers() throws {
        let content: [UInt8] = [0, 1, 2, 250, 255]
        expectSameBytes(try MemoryInputStream(data: Data(content)).readToEnd(), content)
        #expect(try MemoryInputStream(bytes: content[1...]).readToEnd() == Array(content[1...]))
        #expect(try MemoryInputStream(bytes: (0..<UInt8(10)).lazy.map { $0 * 2 }).readToEnd()
                == (0..<UInt8(10)).map { $0 * 2 })
        var source = content
        let input = MemoryInputStream(bytes: source)
        source[0] = 99
        #expect(try input.readToEnd() == content, "a change to the caller's array after creation does not reach the stream")

        var large = randomBytes(count: 1000, seed: 5)
        let original = large
        let kept = MemoryInputStream(bytes: large)
        large[0] ^= 0xff
        #expect(try kept.readToEnd() == original, "nor to a large array kept without a copy (copy-on-write)")
    }

    @Test("A Data or an array of more than 64 bytes is read in place, not copied; a small one is copied",
          arguments: [65, 4097])
    func keptInPlace(size: Int) throws {
        let bytes = randomBytes(count: size, seed: 6)
        let data = Data(bytes)
        for (input, base) in [(MemoryInputStream(data: data), data.withUnsafeBytes { $0.baseAddress }),
                              (MemoryInputStream(bytes: bytes), bytes.withUnsafeBytes { $0.baseAddress })] {
            input.open()
            var pointer: UnsafeMutablePointer<UInt8>?
            var length = 0
            #expect(input.getBuffer(&pointer, length: &length))
            #expect(UnsafeRawPointer(pointer) == base, "the stream lends the caller's own buffer")
            #expect(length == size)
            #expect(try input.readToEnd() == bytes)
        }
        let small = Data(bytes.prefix(64))
        let copied = MemoryInputStream(data: small)
        copied.open()
        var pointer: UnsafeMutablePointer<UInt8>?
        var length = 0
        #expect(copied.getBuffer(&pointer, length: &length))
        #expect(length == 64)
        if let pointer { #expect(Array(UnsafeBufferPointer(start: pointer, count: length)) == Array(bytes.prefix(64))) }
    }

    @Test("A slice of a Data (start index not 0) reads its own bytes", arguments: [3, 100])
    func dataSlice(start: Int) throws {
        let bytes = randomBytes(count: 5000, seed: 8)
        let slice = Data(bytes)[start...]
        #expect(slice.startIndex == start)
        #expect(try MemoryInputStream(data: slice).readToEnd() == Array(bytes[start...]))
        #expect(try MemoryInputStream(bytes: slice).readToEnd() == Array(bytes[start...]), "a Data through init(bytes:)")
    }

    @Test("An empty memory stream: open, then the first read is the end")
    func emptyInput() {
        let input = MemoryInputStream(bytes: [])
        input.open()
        #expect(input.streamStatus == .open)
        #expect(!input.hasBytesAvailable)
        #expect(readOnce(input, maxLength: 10).result == 0)
        #expect(input.streamStatus == .atEnd)
        input.close()
        #expect(input.streamStatus == .closed)
    }

    @Test("MemoryInputStream has no properties")
    func inputProperties() {
        let input = MemoryInputStream(bytes: [1])
        input.open()
        #expect(input.property(forKey: .fileCurrentOffset) == nil)
        #expect(input.property(forKey: .dataWrittenToMemoryStream) == nil)
        #expect(!input.setProperty(Int64(0), forKey: .fileCurrentOffset))
    }

    @Test("getBuffer lends the unread bytes without moving the position")
    func getBuffer() {
        let content: [UInt8] = Array(0..<10)
        let input = MemoryInputStream(bytes: content)
        var pointer: UnsafeMutablePointer<UInt8>?
        var length = -1
        #expect(!input.getBuffer(&pointer, length: &length), "no buffer before open")

        input.open()
        #expect(input.getBuffer(&pointer, length: &length))
        #expect(length == 10)
        if let pointer { #expect(Array(UnsafeBufferPointer(start: pointer, count: length)) == content) }

        #expect(readOnce(input, maxLength: 3).bytes == [0, 1, 2])
        #expect(input.getBuffer(&pointer, length: &length))
        #expect(length == 7)
        if let pointer { #expect(Array(UnsafeBufferPointer(start: pointer, count: length)) == Array(3..<10)) }
        #expect(input.remainingCount == 7, "getBuffer does not consume")
        #expect(readOnce(input, maxLength: 2).bytes == [3, 4])

        _ = readAllByChunks(input, maxLength: 100)
        #expect(input.streamStatus == .atEnd)
        #expect(input.getBuffer(&pointer, length: &length))
        #expect(length == 0)

        input.close()
        #expect(!input.getBuffer(&pointer, length: &length), "no buffer after close")
    }

    @Test("getBuffer of an empty stream lends zero bytes")
    func getBufferEmpty() {
        let input = MemoryInputStream(bytes: [])
        input.open()
        var pointer: UnsafeMutablePointer<UInt8>?
        var length = -1
        #expect(input.getBuffer(&pointer, length: &length))
        #expect(length == 0)
    }

    // MARK: Growing MemoryOutputStream

    @Test("A growing stream keeps every byte, in data and in dataWrittenToMemoryStream")
    func growing() {
        let output = MemoryOutputStream()
        output.open()
        #expect(output.data.isEmpty)
        #expect(output.property(forKey: .dataWrittenToMemoryStream) as? Data == Data())
        #expect(writeOnce(output, Array("hello, ".utf8)) == 7)
        #expect(writeOnce(output, Array("world".utf8)) == 5)
        #expect(output.writtenCount == 12)
        #expect(output.data == Data("hello, world".utf8))
        #expect(output.property(forKey: .dataWrittenToMemoryStream) as? Data == Data("hello, world".utf8))
        #expect(output.hasSpaceAvailable)
        #expect(!output.isFull)
        #expect(output.property(forKey: .fileCurrentOffset) == nil)
        #expect(!output.setProperty(Data(), forKey: .dataWrittenToMemoryStream), "the property is read-only")
        output.close()
        #expect(output.streamStatus == .closed)
        #expect(output.data == Data("hello, world".utf8), "the bytes stay readable after close")
        #expect(output.property(forKey: .dataWrittenToMemoryStream) as? Data == Data("hello, world".utf8))
    }

    @Test("data is the stream's own Data, not a copy; a later write leaves a Data already taken unchanged")
    func dataIsShared() throws {
        let output = MemoryOutputStream()
        try output.writeAll(randomBytes(count: 10_000, seed: 9))
        let first = output.data
        let second = output.data
        #expect(first.withUnsafeBytes { $0.baseAddress } == second.withUnsafeBytes { $0.baseAddress },
                "two reads of data share one buffer")
        try output.writeAll([1, 2, 3])
        #expect(first.count == 10_000, "copy-on-write: what the caller holds does not change")
        #expect([UInt8](first) == randomBytes(count: 10_000, seed: 9))
        #expect([UInt8](output.data) == randomBytes(count: 10_000, seed: 9) + [1, 2, 3])
    }

    @Test("A growing stream takes every edge size in one write", arguments: edgeSizes)
    func growingSizes(size: Int) {
        let content = randomBytes(count: size, seed: UInt64(size) &+ 3)
        let output = MemoryOutputStream()
        output.open()
        #expect(writeOnce(output, content) == size)
        #expect(output.streamStatus == .open)
        #expect(output.hasSpaceAvailable)
        #expect(output.writtenCount == size)
        expectSameBytes(output.data, content)
        output.close()
    }

    // MARK: Fixed MemoryOutputStream

    @Test("A fixed buffer: a short write when it fills, then .atEnd, then -1 with .noSpaceAvailable")
    func fixedBuffer() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 10)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0xEE, count: 10)
        let output = MemoryOutputStream(buffer: buffer, capacity: 10)
        output.open()
        #expect(output.hasSpaceAvailable)
        #expect(output.property(forKey: .dataWrittenToMemoryStream) == nil, "nil for a fixed buffer, as in Cocoa")

        #expect(writeOnce(output, [1, 2, 3, 4]) == 4)
        #expect(output.streamStatus == .open)
        #expect(output.hasSpaceAvailable)
        #expect(output.data == Data([1, 2, 3, 4]))

        #expect(writeOnce(output, Array(5...14)) == 6, "a short write takes what fits")
        #expect(output.writtenCount == 10)
        #expect(output.isFull)
        #expect(!output.hasSpaceAvailable)
        #expect(output.streamStatus == .atEnd)
        #expect(output.streamError == nil, "filling up is not an error")
        #expect(Array(UnsafeBufferPointer(start: buffer, count: 10)) == Array(1...10))
        #expect(output.data == Data(Array(1...10)))
        #expect(writeOnce(output, []) == 0, "offering nothing at end is fine")
        #expect(output.streamStatus == .atEnd)

        #expect(writeOnce(output, [99]) == -1)
        #expect(output.streamStatus == .error)
        let error = try #require(output.streamError as? ByteStreamError)
        #expect(error.code == .noSpaceAvailable)
        #expect(error.operation == "write")
        #expect(writeOnce(output, [99]) == -1, "sticky")
        #expect(output.streamError as? ByteStreamError == error)
        #expect(Array(UnsafeBufferPointer(start: buffer, count: 10)) == Array(1...10), "nothing written past the end")
        #expect(output.property(forKey: .dataWrittenToMemoryStream) == nil)
        output.close()
        #expect(output.streamStatus == .error)
    }

    @Test("A fixed buffer filled exactly by one write is at end")
    func fixedBufferExactFill() {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4)
        defer { buffer.deallocate() }
        let output = MemoryOutputStream(buffer: buffer, capacity: 4)
        output.open()
        #expect(writeOnce(output, [1, 2, 3, 4]) == 4)
        #expect(output.streamStatus == .atEnd)
        #expect(!output.hasSpaceAvailable)
        #expect(output.data == Data([1, 2, 3, 4]))
    }

    @Test("A fixed buffer of capacity 0 has no space; a write fails with .noSpaceAvailable")
    func zeroCapacity() {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        defer { buffer.deallocate() }
        buffer.initialize(to: 0xAB)
        let output = MemoryOutputStream(buffer: buffer, capacity: 0)
        output.open()
        #expect(!output.hasSpaceAvailable)
        #expect(output.isFull)
        #expect(writeOnce(output, [1]) == -1)
        #expect(code(of: output.streamError) == .noSpaceAvailable)
        #expect(buffer.pointee == 0xAB)
        #expect(output.data.isEmpty)
    }
}

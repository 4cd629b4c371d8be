import ByteStreams
@testable import GzipStreams
import Testing

@Suite("GzipMemberInput: the one member reader's buffer, trailer and what follows a member", .onDedicatedThreads)
struct GzipMemberInputTests {
    /// An input over `bytes`, read `chunkSize` bytes at a time, so that small chunks put every
    /// two-byte look-ahead across a refill.
    private func input(_ bytes: [UInt8], chunkSize: Int = 1, capacity: Int? = nil) throws -> GzipMemberInput {
        let inner = MemoryInputStream(bytes: bytes)
        try inner.openOrThrow()
        return GzipMemberInput(inner: inner, chunkSize: chunkSize, capacity: capacity, followsReadiness: false)
    }

    private func following(_ bytes: [UInt8], chunkSize: Int) throws -> (String, Int64) {
        let source = try input(bytes, chunkSize: chunkSize)
        let description: String
        switch try source.readFollowing(member: 1, maximumFieldLength: 0) {
        case .end: description = "end"
        case .member(let parser): description = "member \(parser.member) at \(parser.offset)"
        case .cutHeader(let offset): description = "cut header at \(offset)"
        case .zeroPadding(let offset): description = "zero padding at \(offset)"
        case .other(let offset, let leadingBytes): description = "other at \(offset): \(leadingBytes)"
        }
        return (description, source.position)
    }

    @Test("What follows a member, in chunks of 1 and 4096 bytes; only a member's magic is taken",
          arguments: [1, 4096])
    func follows(chunkSize: Int) throws {
        #expect(try following([], chunkSize: chunkSize) == ("end", 0))
        #expect(try following([0x1f], chunkSize: chunkSize) == ("cut header at 0", 0))
        #expect(try following([0x1f, 0x8b, 8], chunkSize: chunkSize) == ("member 2 at 0", 2))
        #expect(try following([0x1f, 0x9d, 1], chunkSize: chunkSize) == ("other at 0: [31, 157]", 0))
        #expect(try following([0, 0, 1], chunkSize: chunkSize) == ("zero padding at 0", 0))
        #expect(try following([0x41, 0x1f], chunkSize: chunkSize) == ("other at 0: [65]", 0))
    }

    @Test("A lone ID1 put back after a refill is read again, then the bytes after it")
    func putBackAcrossRefill() throws {
        let source = try input([0x1f, 0x9d, 0x42], chunkSize: 1)
        _ = try source.readFollowing(member: 1, maximumFieldLength: 0)
        var bytes: [UInt8] = []
        while let byte = try source.nextByte() { bytes.append(byte) }
        #expect(bytes == [0x1f, 0x9d, 0x42])
        #expect(source.position == 3)
    }

    @Test("Zero padding: taken to the end, or up to the first other byte")
    func zeroPadding() throws {
        let padded = try input([0, 0, 0], chunkSize: 2)
        #expect(try padded.skipZeroPadding())
        #expect(padded.position == 3)
        let followed = try input([0, 0, 7, 0], chunkSize: 2)
        #expect(try !followed.skipZeroPadding())
        #expect(followed.position == 2)
    }

    @Test("The trailer: CRC-32 then ISIZE, little-endian; cut short, truncated at the input's end")
    func trailer() throws {
        let whole = try input([1, 2, 3, 4, 5, 6, 7, 8, 9], chunkSize: 3)
        _ = try whole.nextByte()
        let (trailer, offset) = try whole.readTrailer(member: 1)
        #expect(trailer == GzipTrailer(crc32: 0x0504_0302, isize: 0x0908_0706))
        #expect(offset == 1)
        let cut = try input([1, 2, 3], chunkSize: 2)
        #expect(throws: GzipError.truncated(member: 4, part: .trailer, offset: 3)) { try cut.readTrailer(member: 4) }
    }

    @Test("stage(_:) keeps a run of bytes whole across reads and moves it to the buffer's start")
    func stage() throws {
        let bytes = (0..<100).map { UInt8($0) }
        let source = try input(bytes, chunkSize: 7, capacity: 20 + 7)
        var offset = 0
        for length in [5, 13, 20, 1, 20, 19, 20] {
            #expect(try source.stage(length))
            let run = Array(UnsafeBufferPointer(start: source.buffer + source.start, count: length))
            #expect(run == Array(bytes[offset..<offset + length]))
            #expect(source.position == Int64(offset))
            source.start += length
            offset += length
        }
        #expect(offset == 98)
        #expect(try !source.stage(3))
        #expect(source.end - source.start == 2)
    }
}

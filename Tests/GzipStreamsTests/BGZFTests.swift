import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// BGZF (SAM/BAM specification §4.1) as BGZFOutputStream writes it: every member checked
// against the format, the output independent of the thread count, read back by us and by
// gzip, pigz and bgzip, the .gzi index checked against bgzip's, and the error paths.

// MARK: Helpers

/// One member of a BGZF file, as ``parseBGZF(_:)`` found it.
struct BGZFMemberInfo: Equatable {
    /// Where the member starts in the file, in bytes.
    var offset: Int
    /// The member's size in bytes, header and trailer included (BSIZE + 1).
    var size: Int
    /// The member's plain bytes.
    var plain: [UInt8]
}

/// The 16 bytes every BGZF member header starts with: ID1 ID2 CM FLG(FEXTRA), MTIME 0, XFL 0,
/// OS 255, XLEN 6, SI1 'B', SI2 'C', SLEN 2; BSIZE follows.
let bgzfHeaderStart: [UInt8] = [0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0xff, 0x06, 0x00, 0x42, 0x43, 0x02, 0x00]

/// Walks `bytes` member by member and checks each against SAM/BAM §4.1: the fixed header with
/// the `BC` subfield, BSIZE = member size − 1, at most 64 KiB per member and 65280 plain bytes,
/// the member decodable on its own, CRC-32 (computed without zlib) and ISIZE, and the file
/// ending with exactly the 28-byte end-of-file member, the only empty one. Records an issue
/// and returns `nil` at the first fault; the end-of-file member is not returned.
func parseBGZF(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [BGZFMemberInfo]? {
    func fault(_ text: String) -> [BGZFMemberInfo]? {
        Issue.record(Comment(rawValue: text), sourceLocation: sourceLocation)
        return nil
    }
    guard bytes.count >= 28, Array(bytes.suffix(28)) == BGZFOutputStream.endOfFileMember else {
        return fault("the file does not end with the 28-byte end-of-file member")
    }
    var members: [BGZFMemberInfo] = []
    var offset = 0
    let end = bytes.count - 28
    while offset < end {
        guard end - offset >= 26 else { return fault("a member at \(offset) is shorter than its framing") }
        guard Array(bytes[offset..<(offset + 16)]) == bgzfHeaderStart else {
            return fault("the member at \(offset) has another header: \(bytes[offset..<(offset + 16)])")
        }
        let size = Int(littleEndianUInt16(bytes, at: offset + 16)) + 1
        guard size <= 65536, size >= 26, offset + size <= end else {
            return fault("the member at \(offset) has BSIZE \(size - 1), past the data or too small")
        }
        let member = Array(bytes[offset..<(offset + size)])
        let decoded = unpack(member)
        guard decoded.error == nil else { return fault("the member at \(offset) does not decode: \(decoded.error!)") }
        guard !decoded.bytes.isEmpty, decoded.bytes.count <= 65280 else {
            return fault("the member at \(offset) holds \(decoded.bytes.count) plain bytes")
        }
        guard littleEndianUInt32(member, at: size - 8) == referenceCRC32(decoded.bytes),
              littleEndianUInt32(member, at: size - 4) == UInt32(decoded.bytes.count) else {
            return fault("the member at \(offset) has a wrong CRC-32 or ISIZE")
        }
        members.append(BGZFMemberInfo(offset: offset, size: size, plain: decoded.bytes))
        offset += size
    }
    return members
}

/// `data` written as BGZF into memory, `writeSize` bytes per write; the stream is returned
/// closed, for its counters and index.
func packBGZF(_ data: [UInt8], level: Int = BGZFOutputStream.defaultLevel, threads: Int = 1,
              chunkSize: Int = ByteStream.defaultChunkSize, buildsIndex: Bool = false,
              writeSize: Int = 1 << 20) throws -> (bytes: [UInt8], stream: BGZFOutputStream) {
    let memory = MemoryOutputStream()
    let bgzf = try BGZFOutputStream(wrapping: memory, level: level, threads: threads, chunkSize: chunkSize,
                                    buildsIndex: buildsIndex)
    try bgzf.openOrThrow()
    try writeInSlices(data, to: bgzf, writeSizes: [writeSize])
    try bgzf.closeOrThrow()
    #expect(bgzf.compressedByteCount == Int64(memory.writtenCount))
    #expect(bgzf.uncompressedByteCount == Int64(data.count))
    return ([UInt8](memory.data), bgzf)
}

/// Records the largest write it is offered and passes every byte to memory.
final class RecordingOutputStream: ByteOutputStream {
    let memory = MemoryOutputStream()
    private(set) var largestWrite = 0
    private(set) var writeCount = 0

    override func openBacking() throws {
        memory.open()
    }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        largestWrite = max(largestWrite, maxLength)
        writeCount += 1
        try memory.writeAll(UnsafeRawBufferPointer(start: buffer, count: maxLength))
        return maxLength
    }
}

/// Runs `body` until ``LibdeflateDeflater/liveCount`` is the same after it as before it
/// (see `countBalances`).
func compressorCountBalances(_ body: () throws -> Void) rethrows -> Bool {
    try countBalances({ LibdeflateDeflater.liveCount.load(ordering: .sequentiallyConsistent) }, around: body)
}

// MARK: Structure

@Suite("BGZF: BGZFOutputStream (SAM/BAM specification §4.1)", .onDedicatedThreads)
struct BGZFTests {
    static let sizes: [(String, [UInt8])] = [
        ("empty", []),
        ("1 byte", [0x41]),
        ("65279 text", textBytes(count: 65279, seed: 3)),
        ("65280 text", textBytes(count: 65280, seed: 4)),
        ("65281 text", textBytes(count: 65281, seed: 5)),
        ("3 MB random", randomBytes(count: 3_000_000, seed: 6)),
        ("3 MB text", textBytes(count: 3_000_000, seed: 7)),
    ]

    @Test("Member by member: BC subfield, BSIZE, at most 64 KiB, full members of 65280, CRC-32, ISIZE, EOF member",
          arguments: 0..<sizes.count)
    func structure(sizeIndex: Int) throws {
        let (name, data) = Self.sizes[sizeIndex]
        let (bytes, stream) = try packBGZF(data, threads: 2)
        let members = try #require(parseBGZF(bytes), "\(name)")
        #expect(members.count == (data.count + 65279) / 65280, "\(name)")
        #expect(stream.memberCount == members.count)
        #expect(members.dropLast().allSatisfy { $0.plain.count == 65280 }, "\(name): members before the last are full")
        #expect(members.flatMap(\.plain) == data, "\(name)")
        if name == "empty" { #expect(bytes == BGZFOutputStream.endOfFileMember) }
        // And as one stream through GzipInputStream: every member, then the empty one.
        let stream2 = gunzipStream(bytes)
        let decoded = drain(stream2)
        #expect(decoded.error == nil && decoded.bytes == data, "\(name)")
        #expect(stream2.memberCount == members.count + 1)
        stream2.close()
    }

    @Test("The same bytes for 1, 2, 3 and 8 threads and any split of the input into writes")
    func independentOfThreads() throws {
        let data = mixedBytes(count: 1_500_000, seed: 40)
        let (reference, _) = try packBGZF(data, threads: 1)
        #expect(parseBGZF(reference)?.flatMap(\.plain) == data)
        for threads in [2, 3, 8] {
            for writeSize in [1 << 20, 4096, 777] {
                let (bytes, _) = try packBGZF(data, threads: threads, writeSize: writeSize)
                #expect(bytes == reference, "\(threads) threads, writes of \(writeSize)")
            }
        }
    }

    @Test("Every level 0...9 round trips; level 0 stores each member in one stored block", arguments: 0...9)
    func levels(level: Int) throws {
        let data = mixedBytes(count: 200_000, seed: UInt64(50 + level))
        let (bytes, _) = try packBGZF(data, level: level, threads: 2)
        let members = try #require(parseBGZF(bytes))
        #expect(members.flatMap(\.plain) == data)
        if level == 0 {
            for member in members {
                // BFINAL 1, BTYPE 00, LEN, NLEN (RFC 1951 §3.2.4), then the bytes.
                let count = member.plain.count
                #expect(member.size == 18 + 5 + count + 8)
                #expect(bytes[member.offset + 18] == 0x01)
                #expect(littleEndianUInt16(bytes, at: member.offset + 19) == UInt16(count))
                #expect(littleEndianUInt16(bytes, at: member.offset + 21) == ~UInt16(count))
            }
        } else {
            #expect(bytes.count < data.count, "level \(level) compresses the text")
        }
    }

    @Test("Writes to the inner stream are at most chunkSize bytes; the bytes do not depend on it",
          arguments: [1, 1000, 4096, 1 << 20])
    func chunkSizeBoundsWrites(chunkSize: Int) throws {
        let data = mixedBytes(count: 300_000, seed: 60)
        let (reference, _) = try packBGZF(data)
        let recorder = RecordingOutputStream()
        let bgzf = try BGZFOutputStream(wrapping: recorder, threads: 2, chunkSize: chunkSize)
        try bgzf.openOrThrow()
        try bgzf.writeAll(data)
        try bgzf.closeOrThrow()
        #expect(recorder.largestWrite <= chunkSize)
        #expect([UInt8](recorder.memory.data) == reference)
        #expect(recorder.streamStatus == .closed, "the inner stream is closed by default")
    }

    @Test("closesInnerStream: false leaves the inner stream open after the EOF member")
    func keepsInnerOpen() throws {
        let memory = MemoryOutputStream()
        let bgzf = try BGZFOutputStream(wrapping: memory, closesInnerStream: false)
        try bgzf.openOrThrow()
        try bgzf.writeAll(Array("kept open\n".utf8))
        try bgzf.closeOrThrow()
        #expect(memory.streamStatus == .open)
        try memory.writeAll(Array("after".utf8))
        #expect([UInt8](memory.data).suffix(5) == Array("after".utf8))
        memory.close()
    }

    @Test("flush() ends the member: everything so far is decodable; the file stays valid")
    func flushEndsMember() throws {
        let memory = MemoryOutputStream()
        let bgzf = try BGZFOutputStream(wrapping: memory, threads: 2)
        try bgzf.openOrThrow()
        let first = textBytes(count: 1000, seed: 70)
        try bgzf.writeAll(first)
        try bgzf.flush()
        let flushed = [UInt8](memory.data)
        #expect(unpack(flushed).bytes == first, "the flushed bytes decode without the EOF member")
        try bgzf.flush()   // nothing new: no empty member
        #expect(memory.writtenCount == flushed.count)
        let second = textBytes(count: 70_000, seed: 71)
        try bgzf.writeAll(second)
        try bgzf.closeOrThrow()
        let members = try #require(parseBGZF([UInt8](memory.data)))
        #expect(members.map(\.plain.count) == [1000, 65280, 70_000 - 65280])
        #expect(members.flatMap(\.plain) == first + second)
    }

    @Test("Levels 0 to 3 write exactly what bgzip -l 0 to -l 3 write (htslib with libdeflate)", .requires(.bgzip))
    func sameBytesAsBgzip() throws {
        let bgzip = try #require(Tool.bgzip.path)
        try withTemporaryDirectory { directory in
            for (name, data) in [("one", [UInt8]([0x41])), ("mixed", mixedBytes(count: 300_000, seed: 80))] {
                let path = try makeFile(name, in: directory, bytes: data)
                for level in 0...3 {
                    let theirs = try runProcess(bgzip, ["-c", "-l", String(level), path])
                    #expect(theirs.status == 0, "\(theirs.stderrText)")
                    #expect(try packBGZF(data, level: level).bytes == theirs.stdout, "\(name), level \(level)")
                }
            }
        }
    }

    @Test("gzip, pigz and bgzip decode it, and gzip -t and bgzip -t pass",
          .requires(.gzip), .requires(.pigz), .requires(.bgzip))
    func otherReaders() throws {
        try withTemporaryDirectory { directory in
            for (name, data) in [("empty", [UInt8]()), ("1", [0x0a]), ("65281", textBytes(count: 65281, seed: 90)),
                                 ("mixed", mixedBytes(count: 2_000_000, seed: 91))] {
                let path = try makeFile("\(name).gz", in: directory, bytes: try packBGZF(data, threads: 3).bytes)
                for tool in [Tool.gzip, .pigz, .bgzip] {
                    let decoded = try runProcess(try #require(tool.path), ["-dc", path])
                    #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(tool.name) -dc \(name): \(decoded.stderrText)")
                    #expect(decoded.stdout == data, "\(tool.name) -dc \(name)")
                }
                for tool in [Tool.gzip, .bgzip] {
                    let tested = try runProcess(try #require(tool.path), ["-t", path])
                    #expect(tested.status == 0 && tested.stderr.isEmpty, "\(tool.name) -t \(name): \(tested.stderrText)")
                }
            }
        }
    }

    // MARK: The .gzi index

    @Test("index: one entry per member after the first; encoded as bgzip's .gzi (count, then offset pairs)")
    func indexEntries() throws {
        let data = mixedBytes(count: 400_000, seed: 100)
        let (bytes, stream) = try packBGZF(data, threads: 2, buildsIndex: true)
        let members = try #require(parseBGZF(bytes))
        let index = try #require(stream.index)
        var plainOffset = 0
        var expected: [BGZFIndex.Entry] = []
        for member in members {
            if member.offset > 0 {
                expected.append(BGZFIndex.Entry(compressedOffset: UInt64(member.offset),
                                                uncompressedOffset: UInt64(plainOffset)))
            }
            plainOffset += member.plain.count
        }
        #expect(index.entries == expected)
        let encoded = index.encoded
        #expect(encoded.count == 8 + 16 * expected.count)
        #expect(littleEndianUInt32(encoded, at: 0) == UInt32(expected.count) && littleEndianUInt32(encoded, at: 4) == 0)
        #expect(littleEndianUInt32(encoded, at: 8) == UInt32(members[1].offset))
        #expect(littleEndianUInt32(encoded, at: 16) == 65280)
        #expect(try packBGZF(data).stream.index == nil, "no index unless asked")
        #expect(try packBGZF([], buildsIndex: true).stream.index?.encoded == [UInt8](repeating: 0, count: 8))
    }

    @Test("The .gzi equals what bgzip -r writes, and bgzip -b OFFSET -s N reads ranges with it",
          .requires(.bgzip), arguments: [0, 1, 65280, 65281, 700_000])
    func indexMatchesBgzip(size: Int) throws {
        let bgzip = try #require(Tool.bgzip.path)
        try withTemporaryDirectory { directory in
            let data = mixedBytes(count: size, seed: UInt64(110 + size))
            let (bytes, stream) = try packBGZF(data, threads: 2, buildsIndex: true)
            let ours = try makeFile("ours.gz", in: directory, bytes: bytes)
            let oursIndex = try makeFile("ours.gz.gzi", in: directory, bytes: try #require(stream.index).encoded)
            let theirs = try makeFile("theirs.gz", in: directory, bytes: bytes)
            let reindexed = try runProcess(bgzip, ["-r", theirs])
            #expect(reindexed.status == 0, "\(reindexed.stderrText)")
            let theirIndex = try Array(Data(contentsOf: URL(fileURLWithPath: theirs + ".gzi")))
            if size == 0 {
                // htslib 1.16 writes the count of an empty file's index as 2^64 − 1 (one less than
                // its zero entries, unsigned) and reads it back as no entry; we write 0, which it
                // reads the same way.
                #expect(theirIndex == [UInt8](repeating: 0xff, count: 8) || theirIndex == [UInt8](repeating: 0, count: 8))
                #expect(try #require(stream.index).encoded == [UInt8](repeating: 0, count: 8))
                let empty = try runProcess(bgzip, ["-b", "0", "-s", "10", "-I", oursIndex, ours])
                #expect(empty.status == 0 && empty.stdout.isEmpty, "\(empty.stderrText)")
            } else {
                #expect(theirIndex == (try Array(Data(contentsOf: URL(fileURLWithPath: oursIndex)))), "size \(size)")
            }
            for (start, length) in [(0, 10), (65279, 3), (65280, 100), (size / 2, 70_000), (size - 1, 1)]
            where start >= 0 && start < size {
                let range = try runProcess(bgzip, ["-b", String(start), "-s", String(length), "-I", oursIndex, ours])
                #expect(range.status == 0, "\(range.stderrText)")
                #expect(range.stdout == Array(data[start..<min(size, start + length)]), "size \(size): \(start)+\(length)")
            }
        }
    }

    // MARK: Errors and lifecycle

    @Test("An inner stream that fills up: the error is the stream's, sticky, and the workers are joined")
    func innerFailure() throws {
        let data = randomBytes(count: 1_000_000, seed: 120)
        let balanced = try compressorCountBalances {
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 100_000)
            defer { buffer.deallocate() }
            let bgzf = try BGZFOutputStream(wrapping: MemoryOutputStream(buffer: buffer, capacity: 100_000), threads: 3)
            try bgzf.openOrThrow()
            #expect(throws: ByteStreamError(.noSpaceAvailable, operation: "write")) { try bgzf.writeAll(data) }
            #expect(bgzf.streamStatus == .error)
            var byte: UInt8 = 0
            #expect(bgzf.write(&byte, maxLength: 1) == -1)
            bgzf.close()
            #expect(bgzf.streamStatus == .error)
            #expect(bgzf.streamError as? ByteStreamError == ByteStreamError(.noSpaceAvailable, operation: "write"))
        }
        #expect(balanced, "a libdeflate compressor was left allocated")
    }

    @Test("A worker's failure surfaces as the stream's error, in a write or at close; no EOF member follows",
          arguments: [0, 3, 15])
    func workerFailure(failingMember: Int) throws {
        let data = textBytes(count: 16 * 65280 - 5, seed: 130)   // 16 members
        let balanced = try compressorCountBalances {
            let memory = MemoryOutputStream()
            let bgzf = try BGZFOutputStream(wrapping: memory, level: 6, threads: 2, chunkSize: 4096, buildsIndex: false,
                                            closesInnerStream: true, failingMember: failingMember)
            try bgzf.openOrThrow()
            let expected = GzipError.libdeflateFailure(message: "test failure in member \(failingMember)")
            do {
                try bgzf.writeAll(data)
                try bgzf.closeOrThrow()
                Issue.record("no error surfaced")
            } catch let error as GzipError {
                #expect(error == expected)
                #expect(error.kind == "libdeflate" && error.offset == nil)
            }
            bgzf.close()
            #expect(bgzf.streamError as? GzipError == expected)
            #expect(memory.streamStatus == .closed)
            // Only whole members before the failing one were written; no EOF member.
            let written = [UInt8](memory.data)
            #expect(written.count < 28 || Array(written.suffix(28)) != BGZFOutputStream.endOfFileMember)
            #expect(parseBGZF(written + BGZFOutputStream.endOfFileMember)?.count ?? -1 <= failingMember)
            #expect(bgzf.memberCount <= failingMember)
        }
        #expect(balanced, "a libdeflate compressor was left allocated")
    }

    @Test("abandon() joins the workers and writes no EOF member; close and abandon twice are harmless")
    func abandonWritesNoEOF() throws {
        let balanced = try compressorCountBalances {
            let memory = MemoryOutputStream()
            let bgzf = try BGZFOutputStream(wrapping: memory, threads: 2)
            try bgzf.openOrThrow()
            try bgzf.writeAll(textBytes(count: 300_000, seed: 140))
            bgzf.abandon()
            bgzf.abandon()
            bgzf.close()
            #expect(bgzf.streamStatus == .closed && bgzf.streamError == nil)
            #expect(memory.streamStatus == .closed)
            let written = [UInt8](memory.data)
            #expect(Array(written.suffix(28)) != BGZFOutputStream.endOfFileMember)
            // What was written is whole members.
            #expect(parseBGZF(written + BGZFOutputStream.endOfFileMember) != nil)
        }
        #expect(balanced, "a libdeflate compressor was left allocated")
    }

    @Test("Dropped without close, never opened, or written after close: no crash, no compressor left")
    func lifecycle() throws {
        let balanced = try compressorCountBalances {
            let dropped = try BGZFOutputStream(wrapping: MemoryOutputStream(), threads: 2)
            try dropped.openOrThrow()
            try dropped.writeAll(textBytes(count: 200_000, seed: 150))
            let neverOpened = try BGZFOutputStream(wrapping: MemoryOutputStream())
            neverOpened.close()
            #expect(neverOpened.streamStatus == .closed)
            let closed = try BGZFOutputStream(wrapping: MemoryOutputStream())
            try closed.openOrThrow()
            try closed.closeOrThrow()
            var byte: UInt8 = 1
            #expect(closed.write(&byte, maxLength: 1) == -1)
            #expect(throws: ByteStreamError(.notOpen, operation: "flush")) { try closed.flush() }
        }
        #expect(balanced, "a libdeflate compressor was left allocated")
    }
}

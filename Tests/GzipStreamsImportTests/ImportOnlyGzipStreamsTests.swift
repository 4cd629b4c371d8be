// This target depends on GzipStreams alone and this file imports nothing else: it compiles only
// if `import GzipStreams` brings the byte streams it wraps, as a user's code would need.
import GzipStreams
import Testing

/// The repository's fixtures folder, from this file's path.
private let fixtures: String = {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)  // Tests/GzipStreamsImportTests/<this file>
    return parts.joined(separator: "/") + "/fixtures/"
}()

@Suite("import GzipStreams alone")
struct ImportOnlyGzipStreamsTests {
    @Test("File and memory streams, their conveniences and errors, with the gzip streams")
    func streams() throws {
        let plainPath = fixtures + "corpus/corpus-text/alice29.txt"
        let plain = try FileInputStream(path: plainPath).readToEnd()
        #expect(plain.count == 152_089)

        let memory = MemoryOutputStream()
        let writer = try GzipOutputStream(wrapping: memory, level: 9)
        try FileInputStream(path: plainPath).copy(to: writer, chunkSize: 4096)
        try writer.closeOrThrow()
        #expect(memory.writtenCount > 0)

        let packed = try GzipInputStream(wrapping: FileInputStream(path: fixtures + "corpus/corpus-text/alice29.txt.gzip-9n.gz"))
        #expect(try packed.readToEnd() == plain)
        #expect(packed.memberCount == 1)

        // The README's one-liners.
        let gzipped = try plain.gzipped()
        #expect(gzipped.isGzip && !plain.isGzip)
        #expect(try gzipped.gunzipped(maximumOutputSize: 64 << 20) == plain)
        let roundTrip = try GzipInputStream(wrapping: MemoryInputStream(bytes: gzipped))
        #expect(try roundTrip.readToEnd() == plain)

        // The parallel engine, its index and --rsyncable's cuts, through the public API.
        let indexed = MemoryOutputStream()
        let parallel = try GzipOutputStream(wrapping: indexed, level: 11, threads: 2, blockSize: 64 << 10,
                                            engine: .chunks, rsyncable: true, buildsIndex: true)
        try parallel.writeAll(plain)
        try parallel.closeOrThrow()
        let index = try #require(parallel.index)
        #expect(index.points.first?.plainOffset == 0 && index.plainSize == UInt64(plain.count))
        #expect(try GzipIndex(gzidx: index.gzidxEncoded()) == index)
        #expect(try GzipInputStream(wrapping: MemoryInputStream(bytes: [UInt8](indexed.data))).readToEnd() == plain)

        let discard = try GzipOutputStream(wrapping: FileOutputStream(path: "/dev/null"))
        try discard.writeAll(plain)
        try discard.closeOrThrow()
        #expect(discard.uncompressedByteCount == Int64(plain.count))
    }

    @Test("ByteStreamError and GzipError are both in scope")
    func errors() {
        #expect(throws: ByteStreamError.self) { try FileInputStream(path: fixtures + "no such file").readToEnd() }
        #expect(throws: GzipError.notGzip(offset: 0)) { try Array("plain".utf8).gunzipped() }
        #expect(throws: ByteStreamError(.invalidArgument(name: "chunkSize", message: "must be 1...1073741824, not 0"),
                                        operation: "create GzipInputStream")) {
            try GzipInputStream(wrapping: MemoryInputStream(bytes: []), chunkSize: 0)
        }
    }
}

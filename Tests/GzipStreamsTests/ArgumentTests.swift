import ByteStreams
import GzipStreams
import Testing
import TestSupport

/// The error a bad argument must give.
private func invalid(_ name: String, _ message: String, _ type: String) -> ByteStreamError {
    ByteStreamError(.invalidArgument(name: name, message: message), operation: "create \(type)")
}

private let chunkRange = "1...\(ByteStream.maximumChunkSize)"

/// One bad value for a writer and the error it must give.
struct BadWriterArgument: Sendable, CustomTestStringConvertible {
    var label: String
    var level = 6
    var header = GzipHeader()
    var chunkSize = 4096
    var threads = 1
    var blockSize: Int?
    var expected: (name: String, message: String)

    var testDescription: String { label }

    static let gzip: [BadWriterArgument] = [
        .init(label: "level -1", level: -1, expected: ("level", "must be 0...9, not -1")),
        // Above 9 the chunks engine takes the level (libdeflate's 10 to 12).
        .init(label: "level 13", level: 13, expected: ("level", "must be 0...12, not 13")),
        .init(label: "FEXTRA of 65536 bytes", header: GzipHeader(extraField: [UInt8](repeating: 1, count: 65536)),
              expected: ("header.extraField", "must hold at most 65535 bytes, not 65536")),
        .init(label: "FNAME with a zero byte", header: GzipHeader(fileName: Array("a\u{0}b".utf8)),
              expected: ("header.fileName",
                         "must not contain a zero byte (RFC 1952 §2.3.1 ends the field with one), found at index 1")),
        .init(label: "FCOMMENT with a zero byte", header: GzipHeader(comment: [0]),
              expected: ("header.comment",
                         "must not contain a zero byte (RFC 1952 §2.3.1 ends the field with one), found at index 0")),
        .init(label: "chunkSize 0", chunkSize: 0, expected: ("chunkSize", "must be \(chunkRange), not 0")),
        .init(label: "chunkSize past 1 GiB", chunkSize: (1 << 30) + 1,
              expected: ("chunkSize", "must be \(chunkRange), not \((1 << 30) + 1)")),
        .init(label: "threads 0", threads: 0, expected: ("threads", "must be 1...256, not 0")),
        .init(label: "threads 257", threads: 257, expected: ("threads", "must be 1...256, not 257")),
        .init(label: "blockSize under 32 KiB", blockSize: 32767,
              expected: ("blockSize", "must be 32768...1073741824, not 32767")),
        .init(label: "blockSize past 1 GiB", blockSize: (1 << 30) + 1,
              expected: ("blockSize", "must be 32768...1073741824, not \((1 << 30) + 1)")),
    ]

    static let bgzf: [BadWriterArgument] = [
        .init(label: "level -1", level: -1, expected: ("level", "must be 0...12, not -1")),
        .init(label: "level 13", level: 13, expected: ("level", "must be 0...12, not 13")),
        .init(label: "threads 0", threads: 0, expected: ("threads", "must be 1...256, not 0")),
        .init(label: "threads 257", threads: 257, expected: ("threads", "must be 1...256, not 257")),
        .init(label: "chunkSize -1", chunkSize: -1, expected: ("chunkSize", "must be \(chunkRange), not -1")),
    ]
}

/// One bad value for a reader and the error it must give.
struct BadReaderArgument: Sendable, CustomTestStringConvertible {
    var label: String
    var chunkSize = 4096
    var maximumOutputSize: Int?
    var threads = 2
    var start = BGZFInputStream.Start(compressedOffset: 0, membersBefore: 0)
    var expected: (name: String, message: String)

    var testDescription: String { label }

    static let gzip: [BadReaderArgument] = [
        .init(label: "chunkSize 0", chunkSize: 0, expected: ("chunkSize", "must be \(chunkRange), not 0")),
        .init(label: "chunkSize Int.max", chunkSize: .max, expected: ("chunkSize", "must be \(chunkRange), not \(Int.max)")),
        .init(label: "maximumOutputSize -1", maximumOutputSize: -1,
              expected: ("maximumOutputSize", "must be at least 0, not -1")),
    ]

    static let bgzf: [BadReaderArgument] = gzip + [
        .init(label: "threads 0", threads: 0, expected: ("threads", "must be 1...256, not 0")),
        .init(label: "threads 257", threads: 257, expected: ("threads", "must be 1...256, not 257")),
        .init(label: "negative start offset", start: .init(compressedOffset: -1, membersBefore: 0),
              expected: ("start.compressedOffset", "must be at least 0, not -1")),
        .init(label: "negative members before", start: .init(compressedOffset: 0, membersBefore: -2),
              expected: ("start.membersBefore", "must be at least 0, not -2")),
    ]
}

@Suite("Arguments of the gzip streams: a value out of range is a thrown invalidArgument", .onDedicatedThreads)
struct GzipArgumentTests {
    @Test("GzipOutputStream refuses each bad value and leaves the inner stream alone", arguments: BadWriterArgument.gzip)
    func gzipWriter(_ bad: BadWriterArgument) {
        let inner = MemoryOutputStream()
        #expect(throws: invalid(bad.expected.name, bad.expected.message, "GzipOutputStream")) {
            try GzipOutputStream(wrapping: inner, level: bad.level, header: bad.header, chunkSize: bad.chunkSize,
                                 threads: bad.threads, blockSize: bad.blockSize)
        }
        #expect(inner.streamStatus == .notOpen)
    }

    @Test("GzipOutputStream takes every edge value: level 0 and 9, a 65535-byte FEXTRA, 1-byte chunks, 32 KiB blocks")
    func gzipWriterEdges() throws {
        for (level, threads) in [(0, 1), (9, 2)] {
            let memory = MemoryOutputStream()
            let gzip = try GzipOutputStream(wrapping: memory, level: level,
                                            header: GzipHeader(extraField: [UInt8](repeating: 7, count: 65535)),
                                            chunkSize: 1, threads: threads, blockSize: GzipOutputStream.minimumBlockSize)
            try gzip.writeAll(Array("edge".utf8))
            try gzip.closeOrThrow()
            #expect(unpack([UInt8](memory.data)).bytes == Array("edge".utf8), "level \(level), \(threads) threads")
        }
        // 256 threads are taken; they start only when the stream opens.
        #expect(try GzipOutputStream(wrapping: MemoryOutputStream(), threads: 256).threads == 256)
        #expect(try BGZFOutputStream(wrapping: MemoryOutputStream(), threads: 256).threads == 256)
        #expect(try BGZFInputStream(wrapping: MemoryInputStream(bytes: []), threads: 256).threads == 256)
    }

    @Test("BGZFOutputStream refuses each bad value", arguments: BadWriterArgument.bgzf)
    func bgzfWriter(_ bad: BadWriterArgument) {
        let inner = MemoryOutputStream()
        #expect(throws: invalid(bad.expected.name, bad.expected.message, "BGZFOutputStream")) {
            try BGZFOutputStream(wrapping: inner, level: bad.level, threads: bad.threads, chunkSize: bad.chunkSize)
        }
        #expect(inner.streamStatus == .notOpen)
    }

    @Test("GzipInputStream refuses each bad value", arguments: BadReaderArgument.gzip)
    func gzipReader(_ bad: BadReaderArgument) {
        let inner = MemoryInputStream(bytes: [0x1f, 0x8b])
        #expect(throws: invalid(bad.expected.name, bad.expected.message, "GzipInputStream")) {
            try GzipInputStream(wrapping: inner, chunkSize: bad.chunkSize, maximumOutputSize: bad.maximumOutputSize)
        }
        #expect(inner.streamStatus == .notOpen)
    }

    @Test("BGZFInputStream refuses each bad value", arguments: BadReaderArgument.bgzf)
    func bgzfReader(_ bad: BadReaderArgument) {
        let inner = MemoryInputStream(bytes: [0x1f, 0x8b])
        #expect(throws: invalid(bad.expected.name, bad.expected.message, "BGZFInputStream")) {
            try BGZFInputStream(wrapping: inner, threads: bad.threads, chunkSize: bad.chunkSize,
                                maximumOutputSize: bad.maximumOutputSize, start: bad.start)
        }
        #expect(inner.streamStatus == .notOpen)
    }

    @Test("A limit of 0 is a limit, not a bad value: the first byte is past it")
    func zeroLimit() throws {
        let packed = try pack(Array("x".utf8))
        let result = unpack(packed, maximumOutputSize: 0)
        #expect(result.bytes.isEmpty)
        #expect(result.gzipError?.kind == "output-limit")
    }

    @Test("BGZFIndex.scan refuses chunkSize 0 before reading")
    func scanChunkSize() {
        let input = MemoryInputStream(bytes: BGZFOutputStream.endOfFileMember)
        #expect(throws: ByteStreamError(.invalidArgument(name: "chunkSize", message: "must be \(chunkRange), not 0"),
                                        operation: "scan BGZF index")) {
            try BGZFIndex.scan(input, chunkSize: 0)
        }
        #expect(input.streamStatus == .notOpen)
    }

    @Test("The default thread count is one the readers take")
    func defaultThreads() {
        #expect((1...256).contains(BGZFInputStream.defaultThreadCount))
    }
}

/// The rules between a writer's engine, level, `rsyncable` and `buildsIndex`, kept in one place
/// (the `gzstream` command asks the same function before it opens a file): the first rule
/// broken is named, level first, and the engine chosen when none is asked for.
@Suite("DeflateEngine.resolved: the engine rules in one place")
struct EngineRuleTests {
    enum Verdict: Equatable, Sendable {
        case engine(DeflateEngine?)
        case refused(String)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var engine: DeflateEngine?
        var level = 6
        var threads = 1
        var blockSize: Int?
        var rsyncable = false
        var buildsIndex = false
        /// The engine chosen, or the argument named by the refusal.
        var expected: Verdict
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        .init(label: "nothing asked: one zlib deflate", expected: .engine(nil)),
        .init(label: "threads choose chunks", threads: 2, expected: .engine(.chunks)),
        .init(label: "a block size chooses chunks", blockSize: 65536, expected: .engine(.chunks)),
        .init(label: "level 11 chooses chunks", level: 11, expected: .engine(.chunks)),
        .init(label: "rsyncable chooses chunks", rsyncable: true, expected: .engine(.chunks)),
        .init(label: "zlib asked with threads stays zlib", engine: .zlib, threads: 4, expected: .engine(.zlib)),
        .init(label: "zlib at level 10", engine: .zlib, level: 10, expected: .refused("level")),
        .init(label: "zlib with rsyncable", engine: .zlib, rsyncable: true, expected: .refused("rsyncable")),
        .init(label: "zlib with an index", engine: .zlib, buildsIndex: true, expected: .refused("buildsIndex")),
        .init(label: "all three broken: level named first", engine: .zlib, level: 12, rsyncable: true,
              buildsIndex: true, expected: .refused("level")),
        .init(label: "rsyncable and an index: rsyncable named first", engine: .zlib, rsyncable: true,
              buildsIndex: true, expected: .refused("rsyncable")),
    ]

    @Test(arguments: cases)
    func rule(_ c: Case) throws {
        let result: Verdict
        do {
            result = .engine(try DeflateEngine.resolved(c.engine, level: c.level, threads: c.threads, blockSize: c.blockSize,
                                                         rsyncable: c.rsyncable, buildsIndex: c.buildsIndex))
        } catch {
            guard case .invalidArgument(let name, _) = error.code else { throw error }
            result = .refused(name)
        }
        #expect(result == c.expected)
        // The stream's initialiser gives the same verdict.
        let made = Result<Void, any Error> {
            _ = try GzipOutputStream(wrapping: MemoryOutputStream(), level: c.level, threads: c.threads,
                                     blockSize: c.blockSize, engine: c.engine, rsyncable: c.rsyncable,
                                     buildsIndex: c.buildsIndex)
        }
        switch (made, c.expected) {
        case (.success, .engine): break
        case (.failure(let error), .refused(let name)):
            guard case .invalidArgument(let named, _)? = (error as? ByteStreamError)?.code else {
                Issue.record("\(error)")
                return
            }
            #expect(named == name)
        default: Issue.record("the initialiser gave \(made), the rule \(c.expected)")
        }
    }
}

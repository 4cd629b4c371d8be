import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// IndexedGzipInputStream over indexes that indexed_gzip writes (zran's points, with windows and
// bit offsets): whole reads on 1-3 threads with both inflaters, seeks, and indexes that are not
// the file's.

/// Writes argv[1]'s bytes gzipped to argv[2] as members of the plain sizes in argv[3] (one
/// member: one size), then exports indexed_gzip's index with spacing argv[4] to argv[5].
private let makeIndexedScript = """
    import sys, gzip, indexed_gzip
    plain = open(sys.argv[1], 'rb').read()
    sizes = [int(size) for size in sys.argv[3].split(',')]
    out, start = b'', 0
    for size in sizes:
        out += gzip.compress(plain[start:start + size], compresslevel=6, mtime=0)
        start += size
    open(sys.argv[2], 'wb').write(out)
    with indexed_gzip.IndexedGzipFile(sys.argv[2], spacing=int(sys.argv[4])) as f:
        f.build_full_index()
        f.export_index(sys.argv[5])
    """

/// A gzip file, its plain data and indexed_gzip's index of it.
struct IndexedFile {
    var data: [UInt8]
    var path: String
    var index: GzipIndex

    init(in directory: URL, memberSizes: [Int], spacing: Int = 65536, seed: UInt64 = 20,
         name: String = "file.gz") throws {
        data = mixedBytes(count: memberSizes.reduce(0, +), seed: seed)
        let plainPath = try makeFile(name + ".plain", in: directory, bytes: data)
        path = directory.appendingPathComponent(name).path
        let indexPath = path + ".gzidx"
        let made = try runOracle(makeIndexedScript, [plainPath, path, memberSizes.map(String.init).joined(separator: ","),
                                                     String(spacing), indexPath])
        try #require(made.status == 0, "\(made.stderrText)")
        index = try GzipIndex(gzidx: Array(try Data(contentsOf: URL(fileURLWithPath: indexPath))))
    }

    func stream(threads: Int, inflater: GzipInputStream.Inflater = .isal, index: GzipIndex? = nil) throws -> IndexedGzipInputStream {
        try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index ?? self.index, threads: threads,
                                   inflater: inflater)
    }
}

/// Reads `stream` to its end in reads of `size` bytes.
func readAll(_ stream: ByteInputStream, size: Int = 100_000) throws -> [UInt8] {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: size)
    while true {
        let count = stream.read(&buffer, maxLength: size)
        if count < 0 { throw stream.streamError! }
        if count == 0 { return result }
        result += buffer[0..<count]
    }
}

@Suite("Indexed gzip input", .onDedicatedThreads, .requiresPythonOracle)
struct IndexedGzipTests {
    @Test("a whole read through the index gives the data, on 1 to 3 threads, with either inflater",
          arguments: [1, 2, 3], [GzipInputStream.Inflater.isal, .zlib])
    func wholeRead(threads: Int, inflater: GzipInputStream.Inflater) throws {
        try withTemporaryDirectory { directory in
            for sizes in [[3_000_000], [700_000, 5, 1_300_000, 0, 900_000]] {
                let file = try IndexedFile(in: directory, memberSizes: sizes)
                #expect(file.index.points.count > 10)
                #expect(file.index.points.contains { $0.bitOffset != 0 })
                let stream = try file.stream(threads: threads, inflater: inflater)
                stream.open()
                defer { stream.close() }
                let read = try readAll(stream)
                #expect(read == file.data)
                #expect(!stream.isSequential)
                #expect(stream.indexMismatch == nil)
                #expect(stream.memberCount == sizes.count)
                #expect(stream.compressedByteCount == Int64(file.index.compressedSize))
            }
        }
    }

    @Test("a seek reads any range: at the start, across a point, at and past the end", arguments: [1, 2])
    func seeks(threads: Int) throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [1_000_000, 1_000_000])
            let stream = try file.stream(threads: threads)
            stream.open()
            defer { stream.close() }
            let point = Int(file.index.points[5].plainOffset)
            for (offset, length) in [(0, 10), (point - 100, 200), (point, 70_000), (999_990, 20), (1_500_000, nil),
                                     (file.data.count - 5, 100), (file.data.count, 10), (12345, 0)] as [(Int, Int?)] {
                try stream.seek(toPlainOffset: Int64(offset), length: length.map(Int64.init))
                let read = try readAll(stream, size: 3000)
                let end = min(file.data.count, length.map { offset + $0 } ?? file.data.count)
                #expect(read == Array(file.data[offset..<end]), "offset \(offset) length \(String(describing: length))")
            }
            try stream.seek(toPlainOffset: Int64(file.data.count + 1))
            #expect(throws: IndexedGzipError.offsetPastEnd(offset: Int64(file.data.count + 1), size: Int64(file.data.count))) {
                try readAll(stream)
            }
        }
    }

    @Test("another file's index of the same size: a whole read decodes without it, a seek fails")
    func staleIndex() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [2_000_000], seed: 5)
            var other = try IndexedFile(in: directory, memberSizes: [2_000_000], seed: 6, name: "other.gz").index
            other.compressedSize = file.index.compressedSize
            let stream = try file.stream(threads: 2, index: other)
            stream.open()
            defer { stream.close() }
            #expect(try readAll(stream) == file.data)
            #expect(stream.indexMismatch != nil)
            // The seek checks the point it starts from (the span before it must end there).
            #expect(throws: (any Error).self) {
                try stream.seek(toPlainOffset: 1_000_000, length: 1000)
                _ = try readAll(stream)
            }
        }
    }

    @Test("an index made for a file of another size is refused when the stream opens")
    func sizeMismatch() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [100_000])
            var index = file.index
            index.compressedSize += 1
            let stream = try file.stream(threads: 1, index: index)
            stream.open()
            #expect(stream.streamError as? IndexedGzipError
                == .sizeMismatch(indexed: file.index.compressedSize + 1, actual: Int64(file.index.compressedSize)))
        }
    }

    @Test("damaged deflate data: the same error as the sequential reader's", arguments: [1, 2])
    func damage(threads: Int) throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [1_500_000, 1_000_000])
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file.path)))
            for position in [bytes.count / 3, bytes.count * 3 / 4, bytes.count - 6] {
                var damaged = bytes
                damaged[position] ^= 0x5a
                try Data(damaged).write(to: URL(fileURLWithPath: file.path))
                let sequential = try GzipInputStream(wrapping: MemoryInputStream(bytes: damaged))
                sequential.open()
                let expected = Result { try readAll(sequential) }
                let stream = try file.stream(threads: threads)
                stream.open()
                let got = Result { try readAll(stream) }
                stream.close()
                switch (expected, got) {
                case (.failure(let want), .failure(let have)):
                    #expect("\(want)" == "\(have)", "byte \(position)")
                default:
                    Issue.record("byte \(position): sequential \(expected), indexed \(got)")
                }
            }
            bytes = []
        }
    }
}

/// Inputs the fuzzer found where the indexed path and the sequential reader differed, read
/// through an index of one point where the deflate data starts.
@Suite("Indexed gzip input: fuzzer regressions", .onDedicatedThreads)
struct IndexedGzipRegressionTests {
    @Test("the sequential reader's bytes and error", arguments: ["header-only-fextra.gz", "indexed-trailer-mismatch.gz"])
    func regression(name: String) throws {
        let path = PackageLocations.fixtures.appendingPathComponent("regressions/\(name)").path
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let sequential = try GzipInputStream(wrapping: MemoryInputStream(bytes: bytes))
        sequential.open()
        let expected = Result { try readAll(sequential) }
        let headerEnd = try #require(GzipHeaderParser.parse(bytes.withUnsafeBytes { $0 })?.size ?? 12)
        let index = GzipIndex(compressedSize: UInt64(bytes.count), plainSize: 0, spacing: 32768,
                              points: [GzipAccessPoint(compressedOffset: UInt64(headerEnd), plainOffset: 0)])
        let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: 2)
        stream.open()
        let got = Result { try readAll(stream) }
        stream.close()
        #expect("\(got)" == "\(expected)")
    }
}

/// `data` packed by `pack --index`'s engine (a window-less access point every 32 KiB) into the
/// file `name` in `directory`: its path and index.
private func packWithPoints(_ data: [UInt8], named name: String, in directory: URL) throws -> (path: String, index: GzipIndex) {
    let memory = MemoryOutputStream()
    let packer = try GzipOutputStream(wrapping: memory, level: 1, threads: 2, blockSize: 32768, buildsIndex: true)
    try packer.openOrThrow()
    try packer.writeAll(data)
    try packer.closeOrThrow()
    var index = try #require(packer.index)
    let packed = Array(memory.data)
    let path = try makeFile(name, in: directory, bytes: packed)
    index.compressedSize = UInt64(packed.count)
    return (path, index)
}

/// Many small spans read slowly on several threads: a worker that finished the span the reader
/// waits for and went on to later ones once took every chunk, while the reader waited for a
/// span another worker could not finish without one (unpack of a 4 GiB `pack --index` file hung).
@Suite("Indexed gzip input: many spans", .onDedicatedThreads)
struct IndexedGzipManySpansTests {
    @Test("a file of 400 window-less spans read in small pieces gives its data on 2 to 4 threads",
          .timeLimit(.minutes(2)), arguments: [2, 3, 4])
    func manySpans(threads: Int) throws {
        try withTemporaryDirectory { directory in
            let data = mixedBytes(count: 400 * 32768 + 1234, seed: 77)
            let (path, index) = try packWithPoints(data, named: "spans.gz", in: directory)
            #expect(index.points.count > 300)
            for round in 0..<5 {
                let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: threads)
                stream.open()
                defer { stream.close() }
                #expect(try readAll(stream, size: 1000 + round * 3000) == data)
                #expect(!stream.isSequential)
            }
        }
    }
}

/// Runs stopped at every stage: a worker pool that is torn down while workers still hold spans
/// and lanes (a close after a few bytes, a seek back, a range that ends inside a span) must be
/// freed without a trap (libdispatch traps when a semaphore is freed below its initial value),
/// and what is read after a seek must be right.
@Suite("Indexed gzip input: runs stopped early", .onDedicatedThreads)
struct IndexedGzipStoppedRunTests {
    @Test("closing after any number of bytes, and seeking back and forth, on 1 to 4 threads",
          .timeLimit(.minutes(2)), arguments: [1, 2, 3, 4])
    func stoppedRuns(threads: Int) throws {
        try withTemporaryDirectory { directory in
            let data = mixedBytes(count: 40 * 32768 + 99, seed: 78)
            let (path, index) = try packWithPoints(data, named: "stopped.gz", in: directory)
            #expect(index.points.count > 30)
            var buffer = [UInt8](repeating: 0, count: 50_000)
            for stopAfter in stride(from: 0, to: data.count, by: 97_001) {
                let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: threads)
                stream.open()
                var read = 0
                while read < stopAfter {
                    let count = stream.read(&buffer, maxLength: min(buffer.count, stopAfter - read))
                    try #require(count > 0)
                    #expect(Array(buffer[0..<count]) == Array(data[read..<read + count]))
                    read += count
                }
                stream.close()
            }
            let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: path), index: index, threads: threads)
            stream.open()
            defer { stream.close() }
            for offset in [900_000, 10, 1_300_000, 32768 * 7 - 5, 0] {
                try stream.seek(toPlainOffset: Int64(offset), length: 40_000)
                let count = stream.read(&buffer, maxLength: buffer.count)
                try #require(count > 0)
                #expect(Array(buffer[0..<count]) == Array(data[offset..<min(data.count, offset + count)]), "\(offset)")
            }
        }
    }
}

/// Indexes made wrong on purpose (the attack round): never wrong bytes from a whole read, never
/// a trap, and a clear error from a seek.
@Suite("Indexed gzip input: forged indexes", .onDedicatedThreads, .requiresPythonOracle)
struct IndexedGzipForgedIndexTests {
    @Test("a window with one byte zeroed: a whole read gives the data, decoded without the index from there")
    func zeroedWindowByte() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [2_000_000])
            var index = file.index
            let point = try #require(index.points.indices.dropFirst().first { index.points[$0].window != nil })
            let window = try #require(index.points[point].window)
            let nonzero = try #require(window.indices.last { window[$0] != 0 })
            index.points[point].window![nonzero] = 0
            for threads in [1, 2] {
                let stream = try file.stream(threads: threads, index: index)
                stream.open()
                #expect(try readAll(stream) == file.data)
                #expect(stream.indexMismatch == .windowDiffers(point: point))
                stream.close()
            }
        }
    }

    @Test("offsets the decoder cannot hold, and windows other than 32 KiB, are refused when the stream opens")
    func unusable() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [300_000])
            var huge = file.index
            huge.plainSize = 0
            huge.points[huge.points.count - 1].plainOffset = UInt64.max
            var wide = file.index
            wide.windowSize = 65536
            for index in [huge, wide] {
                let stream = try file.stream(threads: 2, index: index)
                stream.open()
                guard case .unusable = stream.streamError as? IndexedGzipError else {
                    Issue.record("\(String(describing: stream.streamError))")
                    continue
                }
            }
        }
    }

    @Test("a seek with a length that overflows reads to the end; past the end of an index without a plain size is an error")
    func seekLimits() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [500_000])
            var index = file.index
            index.plainSize = 0
            let stream = try file.stream(threads: 2, index: index)
            stream.open()
            defer { stream.close() }
            try stream.seek(toPlainOffset: 1, length: Int64.max)
            #expect(try readAll(stream) == Array(file.data[1...]))
            try stream.seek(toPlainOffset: 999_999_999, length: 10)
            #expect(throws: IndexedGzipError.offsetPastEnd(offset: 999_999_999, size: 500_000)) { try readAll(stream) }
        }
    }

    @Test("a point forged at the end of the file does not cut a range short")
    func forgedEndPoint() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [500_000])
            var index = file.index
            index.points.removeAll { $0.compressedOffset == index.compressedSize }
            index.points.append(GzipAccessPoint(compressedOffset: index.compressedSize, plainOffset: 480_000))
            let stream = try file.stream(threads: 2, index: index)
            stream.open()
            defer { stream.close() }
            try stream.seek(toPlainOffset: 485_000, length: 1000)
            let got = Result { try readAll(stream) }
            if case .success(let bytes) = got { #expect(bytes == Array(file.data[485_000..<486_000])) }
        }
    }
}

import ByteStreams
import CZlib
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

/// The index GzipIndexBuilder writes for `compressed`, read back eagerly, and the builder's summary.
func buildIndex(_ compressed: [UInt8], span: Int = GzipIndexBuilder.minimumSpan, chunkSize: Int = 64 << 10,
                inflater: GzipInputStream.Inflater = .isal)
    throws -> (index: GzipIndex, bytes: [UInt8], summary: GzipIndexBuilder.Summary) {
    let output = MemoryOutputStream()
    output.open()
    let summary = try GzipIndexBuilder(span: span).build(from: MemoryInputStream(bytes: compressed), into: output,
                                                        chunkSize: chunkSize, inflater: inflater)
    let bytes = [UInt8](output.data)
    return (try GzipIndex(gzidx: bytes), bytes, summary)
}

/// Checks every point of `index` against the file: a window is the 32 KiB of plain data
/// before its point (zeros before the start), and zlib, primed with the point's bits and
/// window, decodes from it the plain bytes at its plain offset (up to 4 KiB, or to the end of
/// the member).
func expectPointsDecode<Plain: RandomAccessCollection<UInt8>>(
    _ index: GzipIndex, compressed: [UInt8], plain: Plain, sourceLocation: SourceLocation = #_sourceLocation
) throws where Plain.Index == Int {
    let stream = try ZStream(inflate: ())
    var output = [UInt8](repeating: 0, count: 4096)
    for (number, point) in index.points.enumerated() {
        let end = Int(point.plainOffset)
        if let window = try index.window(ofPoint: number) {
            let before = Array(plain[max(0, end - window.count)..<end])
            let same = window == [UInt8](repeating: 0, count: window.count - before.count) + before
            #expect(same, "window of point \(number) at plain \(end)", sourceLocation: sourceLocation)
        }
        stream.reset()
        let z = stream.pointer
        let start = Int(point.compressedOffset)
        if point.bitOffset > 0 {
            let bits = Int32(point.bitOffset)
            #expect(inflatePrime(z, bits, Int32(compressed[start - 1]) >> (8 - bits)) == Z_OK)
        }
        if let window = try index.window(ofPoint: number) {
            #expect(window.withUnsafeBufferPointer { inflateSetDictionary(z, $0.baseAddress, UInt32($0.count)) } == Z_OK)
        }
        let produced = compressed.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                z.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress! + start)
                z.pointee.avail_in = UInt32(input.count - start)
                z.pointee.next_out = out.baseAddress
                z.pointee.avail_out = UInt32(out.count)
                let code = CZlib.inflate(z, Z_NO_FLUSH)
                #expect(code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR, "zlib \(code) at point \(number)",
                        sourceLocation: sourceLocation)
                z.pointee.next_in = nil
                z.pointee.next_out = nil
                return out.count - Int(z.pointee.avail_out)
            }
        }
        let expected = plain[end..<min(plain.count, end + produced)]
        #expect(produced > 0 || end == plain.count || index.points.count == 1 && plain.isEmpty,
                "nothing decoded from point \(number)", sourceLocation: sourceLocation)
        let decodedRight = Array(output[0..<produced]) == Array(expected)
        #expect(decodedRight, "bytes from point \(number) at plain \(end)",
                sourceLocation: sourceLocation)
    }
}

@Suite("GzipIndexBuilder: GZIDX of any gzip file in one pass", .onDedicatedThreads)
struct GzipIndexBuilderTests {
    static let text = sampleText(byteCount: 3 << 20, seed: 5)

    @Test("Each valid fixture: sizes, the first point, windows and offsets as zlib decodes them",
          arguments: FixtureManifest.rows(.ok))
    func fixtures(_ row: FixtureRow) throws {
        let compressed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: row.path)))
        if let size = row.statedOutputSize, size > Self.decodedInMemoryLimit {
            // The 4 GiB + 7 file decodes to zeros (FixtureTests checks the decode against the
            // manifest's SHA-256), so its plain bytes are given as zeros rather than decoded
            // into 4 GiB of memory a second time.
            try #require(row.notes.contains(" zero bytes"), "only a file of zeros is given as zeros")
            try checkFixture(compressed, plain: repeatElement(UInt8(0), count: Int(size)))
        } else {
            let decoded = unpack(compressed)
            try #require(decoded.error == nil)
            try checkFixture(compressed, plain: decoded.bytes)
        }
    }

    /// Fixtures decoding to more than this have their plain bytes given, not decoded.
    static let decodedInMemoryLimit: Int64 = 64 << 20

    private func checkFixture<Plain: RandomAccessCollection<UInt8>>(_ compressed: [UInt8], plain: Plain) throws
        where Plain.Index == Int {
        let (index, bytes, summary) = try buildIndex(compressed)
        #expect(index.compressedSize == UInt64(compressed.count))
        #expect(index.plainSize == UInt64(plain.count))
        #expect(index.spacing == 32768 && index.windowSize == 32768)
        #expect(summary.indexSize == Int64(bytes.count) && summary.pointCount == index.points.count)
        #expect(summary.windowCount == index.points.count(where: { $0.window != nil }))
        let header = try #require(compressed.withUnsafeBytes { GzipHeaderParser.parse($0, maximumFieldLength: 0) })
        #expect(index.points.first == GzipAccessPoint(compressedOffset: UInt64(header.size), plainOffset: 0))
        try expectPointsDecode(index, compressed: compressed, plain: plain)
    }

    @Test("Points every span: one per span of plain bytes, inside bytes too, in gzip -6 and pack output",
          arguments: [32768, 100_000, 1 << 20], [GzipInputStream.Inflater.isal, .zlib])
    func spans(span: Int, inflater: GzipInputStream.Inflater) throws {
        let compressed = try pack(Self.text)
        let (index, bytes, summary) = try buildIndex(compressed, span: span, inflater: inflater)
        #expect(index.spacing == UInt32(span))
        let gaps = zip(index.points.dropFirst(), index.points).map { Int($0.plainOffset - $1.plainOffset) }
        #expect(gaps.allSatisfy { $0 >= span }, "\(gaps)")
        // zlib stops at the first block boundary after the span; ISA-L may pass over the first
        // few (blocks of this text hold about 210 KB, their headers under 30 bytes).
        let blocksPassed = inflater == .zlib ? 1 : 4
        #expect(gaps.allSatisfy { $0 < span + blocksPassed * (256 << 10) }, "\(gaps)")
        // zlib's points do not depend on how the input is read. (ISA-L's can: it decodes ahead
        // into its own buffer as far as its input allows, so a search may begin later.)
        if inflater == .zlib {
            #expect(try buildIndex(compressed, span: span, chunkSize: 1000, inflater: inflater).bytes == bytes)
        }
        #expect(summary.windowCount == index.points.count - 1)
        #expect(index.points.contains { $0.bitOffset != 0 })
        try expectPointsDecode(index, compressed: compressed, plain: Self.text)
    }

    @Test("Multi-member input: a later member's start is a point without window; all members checked")
    func members() throws {
        // The first member's blocks (random bytes: stored, about 16 KiB each) end before
        // 40000 bytes only inside it, so the first point after the span is member 2's start.
        let pieces = [randomBytes(count: 40_000, seed: 8), Array(Self.text[0..<700_000]), [], Array(Self.text[0..<50_000])]
        let compressed = try pieces.flatMap { try pack($0) }
        let plain = pieces.flatMap { $0 }
        let (index, _, summary) = try buildIndex(compressed, span: 40_000, chunkSize: 1000)
        #expect(summary.memberCount == 4)
        let secondStart = try pack(pieces[0]).count
        let points = index.points.map { "\($0.compressedOffset)/\($0.bitOffset)/\($0.plainOffset)/\($0.window != nil)" }
        #expect(Array(points.prefix(2)) == ["10/0/0/false", "\(secondStart + 10)/0/40000/false"])
        #expect(index.points.contains { $0.window != nil })
        // The empty member's start is no point; the fourth member's is.
        let emptyStart = secondStart + (try pack(pieces[1])).count
        #expect(!points.contains { $0.hasPrefix("\(emptyStart + 10)/") })
        #expect(points.contains("\(emptyStart + 30)/0/740000/false"), "\(points)")
        try expectPointsDecode(index, compressed: compressed, plain: plain)
        // Zero padding to the end is taken, as the sequential reader takes it. (Read in the
        // same pieces: ISA-L's points may depend on the reads, see spans(span:inflater:).)
        let padded = try buildIndex(compressed + [UInt8](repeating: 0, count: 100), span: 40_000, chunkSize: 1000)
        #expect(padded.index.compressedSize == UInt64(compressed.count + 100))
        #expect(padded.index.points == index.points, "the points differ")
    }

    @Test("Each damaged fixture: refused with the error the sequential reader gives", arguments: FixtureManifest.rows(.error))
    func damagedFixtures(_ row: FixtureRow) throws {
        let compressed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: row.path)))
        let sequential = try #require(unpack(compressed, chunkSize: 4096).gzipError)
        #expect(throws: sequential) { try buildIndex(compressed, chunkSize: 4096) }
    }

    @Test("A file cut at every kind of place, and a changed CRC-32 or ISIZE: the sequential reader's error")
    func damage() throws {
        let compressed = try pack(Self.text) + (try pack(Array(Self.text[0..<1000])))
        var cases: [[UInt8]] = [0, 1, 2, 9, 10, 5000, 300_000, compressed.count - 30, compressed.count - 4, compressed.count - 1]
            .map { Array(compressed[0..<$0]) }
        for offset in [compressed.count - 8, compressed.count - 2, 200_000, 20] {
            var changed = compressed
            changed[offset] ^= 0x55
            cases.append(changed)
        }
        cases.append(compressed + [0x1f])
        cases.append(compressed + [0, 0, 7, 0])
        cases.append(compressed + Array("garbage".utf8))
        for input in cases {
            let expected = try #require(unpack(input, chunkSize: 4096).gzipError, "\(input.count) bytes")
            #expect(throws: expected) { try buildIndex(input, chunkSize: 4096) }
        }
    }

    @Test("The index kept in its file: the same header and points, windows read on demand from many threads at once")
    func windowsInFile() throws {
        let compressed = try pack(Self.text)
        let (eager, bytes, _) = try buildIndex(compressed, span: 65536)
        try withTemporaryDirectory { directory in
            let path = try makeFile("text.gz.gzidx", in: directory, bytes: bytes)
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            let lazy = try GzipIndex(gzidxFile: fd, path: path)
            close(fd)
            #expect(lazy.points.allSatisfy { $0.window == nil })
            #expect(lazy.compressedSize == eager.compressedSize && lazy.plainSize == eager.plainSize)
            #expect(lazy.points.map { GzipAccessPoint(compressedOffset: $0.compressedOffset, bitOffset: $0.bitOffset,
                                                      plainOffset: $0.plainOffset) }
                    == eager.points.map { GzipAccessPoint(compressedOffset: $0.compressedOffset, bitOffset: $0.bitOffset,
                                                          plainOffset: $0.plainOffset) })
            #expect(lazy.points.indices.allSatisfy { lazy.hasWindow(ofPoint: $0) == eager.hasWindow(ofPoint: $0) })
            let count = lazy.points.count
            let matches = Locked([Bool](repeating: false, count: count * 4))
            DispatchQueue.concurrentPerform(iterations: count * 4) { job in
                let point = job % count
                let same = (try? lazy.window(ofPoint: point)) == eager.points[point].window
                matches.update { $0[job] = same }
            }
            #expect(matches.value.allSatisfy { $0 })
            #expect(try lazy.loadingWindows() == eager)
            #expect(try lazy.loadingWindows().gzidxEncoded() == bytes)
            // The same checks of the file's size, the line table (before the seal) and the seal
            // (the last 20 bytes) as the eager reader's: without the two the index is another
            // tool's, still valid; without the line table, an index that counts no lines.
            let sealStart = bytes.count - 20
            let linesStart = sealStart - (24 + 8 * count)
            var flipped = bytes
            flipped[linesStart - 100] ^= 1
            var flippedLines = bytes
            flippedLines[linesStart + 30] ^= 1
            let unsealed = Array(bytes[..<linesStart])
            let withoutLines = try GzipIndex(gzidx: unsealed)
            #expect(withoutLines.compressedTail == nil && withoutLines.lineTable == nil)
            #expect(try GzipIndex(gzidx: bytes).compressedTail != nil)
            #expect(try GzipIndex(gzidx: bytes).lineTable?.newlinesBefore.count == count)
            var linesStripped = try GzipIndex(gzidx: bytes)
            linesStripped.lineTable = nil
            #expect(try GzipIndex(gzidx: linesStripped.gzidxEncoded()).lineTable == nil)
            let trailing = 24 + 8 * count + 20
            for (cut, expected) in [(bytes.dropLast(1), GzipIndexError.trailingBytes(count: trailing - 1, offset: linesStart)),
                                    (unsealed.dropLast(1), GzipIndexError.truncated(.window(point: count - 1),
                                                                                  offset: linesStart - 32768)),
                                    (bytes[...] + [0], GzipIndexError.trailingBytes(count: trailing + 1, offset: linesStart)),
                                    (flipped[...], GzipIndexError.sealMismatch(offset: sealStart)),
                                    (flippedLines[...], GzipIndexError.sealMismatch(offset: sealStart))] {
                let damaged = try makeFile("damaged.gzidx", in: directory, bytes: Array(cut))
                let descriptor = open(damaged, O_RDONLY | O_CLOEXEC)
                defer { close(descriptor) }
                #expect(throws: expected) { try GzipIndex(gzidx: Array(cut)) }
                #expect(throws: expected) { try GzipIndex(gzidxFile: descriptor, path: damaged) }
            }
        }
    }

    @Test("A 64 MiB input with a point every 32 KiB: every window goes through the spill file")
    func largeInput() throws {
        // 64 copies of 1 MiB of text, each with its number in its first byte. The builder's
        // memory is one window, the input chunk and 18 bytes a point whatever the count of
        // windows (by design: they go to the spill file as found), so here the windows are
        // checked after passing through it.
        let mebibyte = 1 << 20
        var block = sampleText(byteCount: mebibyte, seed: 77)
        let output = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: output, level: 1)
        try gzip.openOrThrow()
        for number in 0..<64 {
            block[0] = UInt8(number)
            try gzip.writeAll(block)
        }
        try gzip.closeOrThrow()
        let compressed = [UInt8](output.data)
        func plainByte(_ offset: Int) -> UInt8 { offset % mebibyte == 0 ? UInt8(offset / mebibyte) : block[offset % mebibyte] }
        try withTemporaryDirectory { directory in
            let indexPath = directory.appendingPathComponent("big.gzidx").path
            let file = FileOutputStream(path: indexPath)
            try file.openOrThrow()
            // zlib: a point at the first boundary after each 32 KiB, so that there are many.
            let summary = try GzipIndexBuilder(span: 32768).build(from: MemoryInputStream(bytes: compressed), into: file,
                                                                  inflater: .zlib)
            try file.closeOrThrow()
            #expect(summary.plainSize == 64 << 20)
            #expect(summary.windowCount >= 500 && summary.pointCount == summary.windowCount + 1, "\(summary)")
            let fd = open(indexPath, O_RDONLY | O_CLOEXEC)
            defer { close(fd) }
            let index = try GzipIndex(gzidxFile: fd, path: indexPath)
            #expect(Int64(35 + 18 * index.points.count + 32768 * summary.windowCount + 24 + 8 * index.points.count + 20) == summary.indexSize)
            for point in [1, index.points.count / 2, index.points.count - 1] {
                let end = Int(index.points[point].plainOffset)
                let window = try #require(try index.window(ofPoint: point))
                let same = window == (end - 32768..<end).map(plainByte)
                #expect(same, "window of point \(point)")
            }
        }
    }

    @Test("A span below the window size or above 4 GiB - 1 is refused")
    func spanRange() {
        #expect(throws: ByteStreamError.self) { try GzipIndexBuilder(span: 32767) }
        #expect(throws: ByteStreamError.self) { try GzipIndexBuilder(span: 1 << 32) }
        #expect(throws: GzipError.emptyInput) { try buildIndex([]) }
    }
}

@Suite("GzipIndexBuilder on real text: ISA-L's skimming search against zlib's Z_BLOCK", .onDedicatedThreads)
struct GzipIndexSkimTests {
    /// The Canterbury corpus's English texts (fixtures/corpus/corpus-text), one after another.
    static let text: [UInt8] = ["alice29.txt", "asyoulik.txt", "lcet10.txt", "plrabn12.txt"].flatMap { name in
        let directory = PackageLocations.fixtures.appendingPathComponent("corpus/corpus-text")
        return (try? [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))) ?? []
    }

    @Test("gzip -6 and -9 of real text: ISA-L takes zlib's points, the first block boundary after each span",
          arguments: [6, 9], [32768, 100_000])
    func sameAsZlib(level: Int, span: Int) throws {
        #expect(Self.text.count > 1_100_000)
        let compressed = try pack(Self.text, level: level)
        let zlib = try buildIndex(compressed, span: span, inflater: .zlib).index
        for chunkSize in [64 << 10, 1000] {
            let isal = try buildIndex(compressed, span: span, chunkSize: chunkSize, inflater: .isal).index
            #expect(isal.points == zlib.points, "read in \(chunkSize)-byte chunks")
        }
        #expect(zlib.points.count > 5)
        try expectPointsDecode(zlib, compressed: compressed, plain: Self.text)
    }
}

@Suite("IsalInflater's search for a block boundary at the edges of its input", .onDedicatedThreads)
struct IsalBoundarySearchEdgeTests {
    @Test("A step with no input while ISA-L rests between blocks returns, at the start and after a block")
    func emptyInputBetweenBlocks() throws {
        // Two blocks, the first ending on a byte boundary (a full flush adds an empty stored block).
        let first = textBytes(count: 5000), second = textBytes(count: 3000)
        let pieces = rawDeflate([(first, Z_FULL_FLUSH), (second, Z_FINISH)])
        let head = pieces[0], tail = pieces[1]
        // (consumed, produced) of: no input at the start, the first block, no input after it.
        let steps = result(within: .seconds(20)) {
            let inflater = IsalInflater()
            var output = [UInt8](repeating: 0, count: 20_000)
            var input = head + tail
            return output.withUnsafeMutableBufferPointer { out in
                input.withUnsafeMutableBufferPointer { bytes in
                    var counts: [[Int]] = []
                    inflater.seeksBlockBoundary = true
                    var step = inflater.step(input: bytes.baseAddress!, inputCount: 0, output: out.baseAddress!,
                                             outputCapacity: out.count)
                    counts.append([step.consumed, step.produced])
                    inflater.seeksBlockBoundary = false
                    step = inflater.step(input: bytes.baseAddress!, inputCount: head.count, output: out.baseAddress!,
                                         outputCapacity: out.count)
                    counts.append([step.consumed, step.produced])
                    inflater.seeksBlockBoundary = true
                    step = inflater.step(input: bytes.baseAddress! + head.count, inputCount: 0,
                                         output: out.baseAddress! + first.count, outputCapacity: out.count - first.count)
                    counts.append([step.consumed, step.produced])
                    return counts
                }
            }
        }
        #expect(steps == [[0, 0], [head.count, first.count], [0, 0]], "nil: the search did not return")
    }
}

/// Runs `body` on a thread of its own and waits up to `limit` for its result; `nil` when it
/// has not returned by then (a search that loops without taking input fails the test instead
/// of hanging the run; its thread spins on until the process ends).
func result<T: Sendable>(within limit: DispatchTimeInterval, of body: @escaping @Sendable () -> T) -> T? {
    let done = DispatchSemaphore(value: 0)
    let box = Locked<T?>(nil)
    Thread.detachNewThread {
        box.value = body()
        done.signal()
    }
    guard done.wait(timeout: .now() + limit) == .success else { return nil }
    return box.value
}

/// Raw deflate (zlib level 6, no wrapper) of each piece, flushed as given; the output of each.
func rawDeflate(_ pieces: [(bytes: [UInt8], flush: Int32)]) -> [[UInt8]] {
    var stream = z_stream()
    #expect(czlib_deflateInit2(&stream, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK)
    defer { deflateEnd(&stream) }
    return pieces.map { piece in
        var input = piece.bytes
        var output = [UInt8](repeating: 0, count: piece.bytes.count + 1024)
        let count = input.withUnsafeMutableBufferPointer { inBytes in
            output.withUnsafeMutableBufferPointer { outBytes in
                stream.next_in = inBytes.baseAddress
                stream.avail_in = UInt32(inBytes.count)
                stream.next_out = outBytes.baseAddress
                stream.avail_out = UInt32(outBytes.count)
                _ = deflate(&stream, piece.flush)
                return outBytes.count - Int(stream.avail_out)
            }
        }
        return Array(output.prefix(count))
    }
}

@Suite("GzipIndexBuilder: ISA-L's search begun where a read ended inside a block header", .onDedicatedThreads)
struct GzipIndexSearchAtReadEndTests {
    /// How long a build of 64 KiB may take before it counts as spinning: generous, it takes
    /// milliseconds (a bound on a hang, not a speed).
    static let waitLimit: DispatchTimeInterval = .seconds(60)

    @Test("A sync flush at the span, the next block's header cut by the end of a read: the build ends, its points decode",
          arguments: [1, 8, 20])
    func headerCutByRead(bytesIntoHeader: Int) throws {
        // The call before the search fills its room at the span exactly (the room is cut
        // there) and takes all of its input, ISA-L keeping the header's first bytes; the
        // search's first call then has no input (the stream asks the decoder for the output it
        // may hold before reading more), and must not skim nothing over and over.
        let plain = sampleText(byteCount: 65536, seed: 11)
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, level: 6)
        try gzip.openOrThrow()
        try gzip.writeAll(Array(plain[..<32768]))
        try gzip.flush()
        let headerStart = memory.writtenCount
        try gzip.writeAll(Array(plain[32768...]))
        try gzip.closeOrThrow()
        let compressed = [UInt8](memory.data)
        let built = result(within: Self.waitLimit) {
            Result { try buildIndex(compressed, span: 32768, chunkSize: headerStart + bytesIntoHeader).index }
        }
        let index = try #require(built, "the build did not end").get()
        #expect(index.plainSize == 65536)
        try expectPointsDecode(index, compressed: compressed, plain: plain)
    }
}

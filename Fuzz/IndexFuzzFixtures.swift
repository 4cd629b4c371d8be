// The fixed compressed files that Fuzz/IndexFileFuzzer.swift reads through fuzzed indexes: made
// once at start-up, deterministically, in memory (no fixture, no network), then kept in unlinked
// temporary files, with what is true of them (the plain data, every deflate block boundary, the
// BGZF members) for the oracle to judge against and to classify a wrong answer by.
import ByteStreams
import CZlib
import GzipStreams
#if canImport(Glibc)
import Glibc
#endif

/// A place where decoding of the fixed gzip file can start: a deflate block boundary (or a
/// member's first deflate byte), as zran records it.
struct BlockBoundary: Hashable {
    var compressedOffset: UInt64
    var bitOffset: UInt8
    var plainOffset: UInt64
    /// The first deflate byte of a member: the data from here refers to nothing before it.
    var isMemberStart: Bool
}

/// The fixed files and the truth about them. Immutable after ``make()``.
final class IndexFuzzFixtures: @unchecked Sendable {
    /// The plain data both files hold: 320,011 bytes of seeded, somewhat compressible text.
    let plain: [UInt8]
    /// The gzip file: three members (120,001, 130,003 and 70,007 plain bytes), zlib level 6.
    let gzip: [UInt8]
    /// The BGZF file (libdeflate level 6), members of uneven size, and its end-of-file member.
    let bgzf: [UInt8]
    /// The BGZF file's `.gzi`, as BGZFOutputStream built it.
    let bgzfIndex: BGZFIndex
    /// Every BGZF member holding data: its compressed offset and first plain byte (0, 0 first).
    let bgzfMembers: [BGZFIndex.Entry]
    /// The gzip file's GZIDX index, built by GzipIndexBuilder with a 64 KiB span.
    let gzidx: [UInt8]
    /// The same index, parsed, windows in memory.
    let index: GzipIndex
    /// Every block boundary and member start of the gzip file, and its end.
    let boundaries: [BlockBoundary]
    /// Read-only descriptors of unlinked temporary files holding `gzip` and `bgzf`.
    let gzipDescriptor: Int32
    let bgzfDescriptor: Int32

    /// The plain sizes of the gzip file's members.
    static let memberSizes = [120_001, 130_003, 70_007]

    private init(plain: [UInt8], gzip: [UInt8], bgzf: [UInt8], bgzfIndex: BGZFIndex, bgzfMembers: [BGZFIndex.Entry],
                 gzidx: [UInt8], index: GzipIndex, boundaries: [BlockBoundary]) {
        self.plain = plain
        self.gzip = gzip
        self.bgzf = bgzf
        self.bgzfIndex = bgzfIndex
        self.bgzfMembers = bgzfMembers
        self.gzidx = gzidx
        self.index = index
        self.boundaries = boundaries
        gzipDescriptor = unlinkedFile(holding: gzip)
        bgzfDescriptor = unlinkedFile(holding: bgzf)
    }

    /// Makes the files and checks them against each other; a failure here is a bug in the
    /// target or the library's writers, and stops the run.
    static func make() -> IndexFuzzFixtures {
        let plain = seededText(count: memberSizes.reduce(0, +))
        do {
            var gzip: [UInt8] = []
            var start = 0
            for size in memberSizes {
                gzip += try Array(plain[start..<start + size]).gzipped(level: 6)
                start += size
            }
            let (bgzf, bgzfIndex) = try makeBGZF(plain)
            let gzidx = CollectingOutputStream()
            _ = try GzipIndexBuilder(span: 64 << 10).build(from: MemoryInputStream(bytes: gzip), into: gzidx)
            let index = try GzipIndex(gzidx: gzidx.bytes)
            let boundaries = blockBoundaries(gzip)
            let known = Set(boundaries.map { [$0.compressedOffset, UInt64($0.bitOffset), $0.plainOffset] })
            for point in index.points where !known.contains([point.compressedOffset, UInt64(point.bitOffset), point.plainOffset]) {
                fatalError("the builder's point \(point) is no block boundary zlib reports")
            }
            let scan = try BGZFIndex.scan(MemoryInputStream(bytes: bgzf))
            guard scan.index == bgzfIndex, scan.uncompressedSize == Int64(plain.count) else {
                fatalError("BGZFOutputStream's index differs from a scan of what it wrote")
            }
            let members = [BGZFIndex.Entry(compressedOffset: 0, uncompressedOffset: 0)] + bgzfIndex.entries
            return IndexFuzzFixtures(plain: plain, gzip: gzip, bgzf: bgzf, bgzfIndex: bgzfIndex, bgzfMembers: members,
                                     gzidx: gzidx.bytes, index: index, boundaries: boundaries)
        } catch {
            fatalError("could not make the fixed files: \(error)")
        }
    }

    /// The 32 KiB of plain data before `plainOffset`, zeros before the start of the data: the
    /// window a point there must have.
    func trueWindow(before plainOffset: Int) -> [UInt8] {
        let size = Int(GzipIndex.defaultWindowSize)
        let start = max(0, plainOffset - size)
        return [UInt8](repeating: 0, count: size - (plainOffset - start)) + plain[start..<plainOffset]
    }
}

/// Text of `count` bytes from a fixed seed: words from a small made-up vocabulary, numbers and
/// line breaks (about 3:1 at level 6), with a run of random bytes now and then, so deflate
/// makes blocks of every kind and distances reach back across block boundaries.
func seededText(count: Int) -> [UInt8] {
    var random = SplitMix64(seed: 0x6a09_e667_f3bc_c908)
    let vocabulary: [[UInt8]] = (0..<300).map { _ in
        (0..<(2 + Int(random.next() % 9))).map { _ in UInt8(ascii: "a") + UInt8(random.next() % 26) }
    }
    var text: [UInt8] = []
    text.reserveCapacity(count + 64)
    while text.count < count {
        let roll = random.next() % 100
        if roll < 80 {
            text += vocabulary[Int(random.next() % 40 + (roll < 20 ? random.next() % 260 : 0))]
            text.append(UInt8(ascii: " "))
        } else if roll < 90 {
            text += Array(String(random.next() % 100_000).utf8) + [UInt8(ascii: ",")]
        } else if roll < 99 {
            text.append(UInt8(ascii: "\n"))
        } else {
            text += (0..<(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
    }
    return Array(text.prefix(count))
}

/// Vigna's SplitMix64: a fixed sequence from a seed, the same on every machine.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// The BGZF file of `plain` and its `.gzi`: written in pieces of uneven size with a flush after
/// some of them, so that members are not all 0xff00 plain bytes.
private func makeBGZF(_ plain: [UInt8]) throws -> ([UInt8], BGZFIndex) {
    let sink = CollectingOutputStream()
    let bgzf = try BGZFOutputStream(wrapping: sink, level: 6, threads: 1, buildsIndex: true, closesInnerStream: false)
    try bgzf.openOrThrow()
    var start = 0
    var piece = 0
    for size in [70_000, 9_001, 100_000, 30_000, 40_000] {
        try bgzf.writeAll(plain[start..<start + size])
        if piece % 2 == 0 { try bgzf.flush() }
        start += size
        piece += 1
    }
    try bgzf.writeAll(plain[start...])
    bgzf.close()
    if let error = bgzf.streamError { throw error }
    guard let index = bgzf.index else { fatalError("BGZFOutputStream kept no index") }
    return (sink.bytes, index)
}

/// Every deflate block boundary of every member of `gzip` (zlib's `inflate` with `Z_BLOCK`, as
/// zran.c walks them), each member's first deflate byte, and the end of the file.
private func blockBoundaries(_ gzip: [UInt8]) -> [BlockBoundary] {
    var boundaries: [BlockBoundary] = []
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    defer { stream.deallocate() }
    var output = [UInt8](repeating: 0, count: 64 << 10)
    var memberStart = 0
    var plainBase: UInt64 = 0
    gzip.withUnsafeBufferPointer { input in
        output.withUnsafeMutableBufferPointer { out in
            while memberStart < input.count {
                let deflateStart = memberStart + gzipHeaderSize(input, at: memberStart)
                boundaries.append(BlockBoundary(compressedOffset: UInt64(deflateStart), bitOffset: 0,
                                                plainOffset: plainBase, isMemberStart: true))
                stream.initialize(to: z_stream())
                guard czlib_inflateInit2(stream, -15) == Z_OK else { fatalError("inflateInit2 failed") }
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress! + deflateStart)
                stream.pointee.avail_in = uInt(input.count - deflateStart)
                while true {
                    if stream.pointee.avail_out == 0 {
                        stream.pointee.next_out = out.baseAddress
                        stream.pointee.avail_out = uInt(out.count)
                    }
                    let code = inflate(stream, Z_BLOCK)
                    if code == Z_STREAM_END { break }
                    guard code == Z_OK else { fatalError("inflate of the fixed gzip file failed: \(code)") }
                    let type = stream.pointee.data_type
                    if type & 128 != 0 && type & 64 == 0 {
                        boundaries.append(BlockBoundary(compressedOffset: UInt64(deflateStart) + UInt64(stream.pointee.total_in),
                                                        bitOffset: UInt8(type & 7),
                                                        plainOffset: plainBase + UInt64(stream.pointee.total_out),
                                                        isMemberStart: false))
                    }
                }
                plainBase += UInt64(stream.pointee.total_out)
                memberStart = deflateStart + Int(stream.pointee.total_in) + 8
                inflateEnd(stream)
            }
        }
    }
    boundaries.append(BlockBoundary(compressedOffset: UInt64(gzip.count), bitOffset: 0, plainOffset: plainBase,
                                    isMemberStart: true))
    return boundaries
}

/// The size of the member header at `offset` (RFC 1952 §2.3.1): the fixed 10 bytes and the
/// optional fields its flags announce. The fixed file's headers are valid.
private func gzipHeaderSize(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int {
    let flags = bytes[offset + 3]
    var position = offset + 10
    if flags & 4 != 0 { position += 2 + Int(bytes[position]) + Int(bytes[position + 1]) << 8 }
    for bit: UInt8 in [8, 16] where flags & bit != 0 {
        while bytes[position] != 0 { position += 1 }
        position += 1
    }
    if flags & 2 != 0 { position += 2 }
    return position - offset
}

/// An output stream that keeps every byte written, in an array.
final class CollectingOutputStream: ByteOutputStream, @unchecked Sendable {
    private(set) var bytes: [UInt8] = []

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        bytes.append(contentsOf: UnsafeBufferPointer(start: buffer, count: maxLength))
        return maxLength
    }
}

/// A descriptor of a new temporary file (under `$TMPDIR`, else /tmp) holding `bytes`, already
/// unlinked, so nothing is left behind however the process ends. The caller owns it.
func unlinkedFile(holding bytes: [UInt8]) -> Int32 {
    let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var name = Array("\(directory)/gzstream-index-fuzz-XXXXXX".utf8CString)
    let descriptor = mkstemp(&name)
    guard descriptor >= 0 else { fatalError("mkstemp failed: errno \(errno)") }
    unlink(&name)
    var written = 0
    while written < bytes.count {
        let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
        guard count > 0 else { fatalError("write to a temporary file failed: errno \(errno)") }
        written += count
    }
    return descriptor
}

// Seeded data: the same bytes on every run for the same seed, so big inputs are made by the
// tests instead of committed, and a failure can be reproduced.

/// SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit generator whose output depends only on
/// its seed. Every seeded byte the tests make comes from it.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` incompressible bytes: the numbers of a ``SplitMix64`` started at `seed`, each
/// stored little-endian, cut to `count`.
public func randomBytes(count: Int, seed: UInt64 = 1) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) }
    }
    return Array(bytes.prefix(count))
}

/// `count` bytes of text: words drawn from `vocabulary` by a ``SplitMix64`` started at `seed`,
/// each followed by a space, or by a newline once a line is longer than `lineWidth` bytes.
/// It deflates well and gives dynamic Huffman blocks.
private func wordText(count: Int, seed: UInt64, lineWidth: Int?, vocabulary: [String]) -> [UInt8] {
    let words = vocabulary.map { Array($0.utf8) }
    var generator = SplitMix64(seed: seed)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 16)
    var column = 0
    while bytes.count < count {
        let word = words[Int(generator.next() % UInt64(words.count))]
        bytes += word
        column += word.count + 1
        if let lineWidth, column > lineWidth {
            bytes.append(0x0A)
            column = 0
        } else {
            bytes.append(0x20)
        }
    }
    return Array(bytes.prefix(count))
}

/// `count` bytes of the format's own words, space-separated on one line (the library tests'
/// text).
public func textBytes(count: Int, seed: UInt64 = 2) -> [UInt8] {
    wordText(count: count, seed: seed, lineWidth: nil, vocabulary: [
        "gzip", "member", "header", "trailer", "deflate", "block", "window", "the", "of", "and", "stream",
        "CRC-32", "ISIZE", "MTIME", "\n", "zlib", "level",
    ])
}

/// `byteCount` bytes of lines of about 60 columns (the command-line tests' text, whose sizes
/// packed some expectations were read from).
public func sampleText(byteCount: Int, seed: UInt64 = 1) -> [UInt8] {
    wordText(count: byteCount, seed: seed, lineWidth: 60, vocabulary: [
        "stream", "gzip", "member", "header", "trailer", "deflate", "window", "chunk", "level", "inflate",
        "crc", "isize", "mtime", "fname", "block", "sync", "flush", "byte", "zlib", "pipe",
    ])
}

/// `count` bytes of log lines that differ in a few random fields ("2026-12-07 11:42:00 worker-3
/// request done in 7 ms"), 1 MiB of them repeated: deflate at level 6 packs them about 15:1,
/// where points every 16 MiB of plain data would cost 2% of the gzip file.
public func repetitiveLog(count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var block: [UInt8] = []
    block.reserveCapacity((1 << 20) + 64)
    while block.count < 1 << 20 {
        let value = generator.next()
        block.append(contentsOf: "2026-12-07 11:\(10 + value % 50):00 worker-\((value >> 24) % 4) request done in \((value >> 48) % 16) ms\n".utf8)
    }
    block.removeLast(block.count - (1 << 20))
    return (0..<(count >> 20)).flatMap { _ in block } + block.prefix(count & ((1 << 20) - 1))
}

/// `count` bytes of words, each followed by 16 random bits in hex and a space or, one time in
/// four, a newline: compressible, as cached files usually are (the cache tests' data).
public func sampleBytes(count: Int, seed: UInt64 = 1) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    let words = ["stream", "member", "header", "trailer", "window", "deflate", "block", "cache", "entry", "key"]
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 16)
    while bytes.count < count {
        let value = generator.next()
        bytes.append(contentsOf: words[Int(value % 10)].utf8)
        bytes.append(contentsOf: String(value >> 48, radix: 16).utf8)
        bytes.append(value & 0x300 == 0 ? 0x0A : 0x20)
    }
    return Array(bytes.prefix(count))
}

/// Whether `needle` occurs in `haystack`; an empty needle occurs everywhere.
public func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
    }
    return false
}

import ByteStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Lines over more than 2 GiB, made on the fly and never stored: the count and a checksum of the
// lines prove the splitting at scale, and the process's peak memory proves that the reader
// keeps one buffer rather than the input.

/// The generated input's lines: line `i` is `length(i)` bytes of `pattern` from `start(i)`
/// (0 to 32767 bytes, 16 KiB on average, so that a debug build's cost per line does not make the
/// test slow; some empty), ended by `\r\n` when `i` is a multiple of 5 and by `\n` otherwise;
/// the last line has no terminator.
struct GeneratedLines {
    /// Printable ASCII, no `\r` or `\n`, long enough for any line.
    static let pattern: [UInt8] = (0..<65536).map { (index: Int) -> UInt8 in
        UInt8(0x21 + (index &* 7 &+ index / 94) % 94)
    }
    let lineCount: Int

    /// Enough lines for at least `byteCount` bytes.
    init(atLeast byteCount: Int) {
        var lines = 0
        var total = 0
        while total < byteCount {
            total += Self.length(lines) + Self.terminatorLength(lines)
            lines += 1
        }
        lineCount = lines
    }

    static func length(_ line: Int) -> Int { (line &* 2_654_435_761) % 32768 }
    static func start(_ line: Int) -> Int { (line &* 40_503) % 32768 }

    /// The length of line `line`'s terminator: 2 (`\r\n`), 1 (`\n`) or 0 for the last line.
    func terminatorLength(_ line: Int) -> Int {
        line == lineCount - 1 ? 0 : Self.terminatorLength(line)
    }

    private static func terminatorLength(_ line: Int) -> Int { line % 5 == 0 ? 2 : 1 }

    /// The input's size in bytes.
    var byteCount: Int {
        (0..<lineCount).reduce(0) { $0 + Self.length($1) + terminatorLength($1) }
    }

    /// The checksum of the lines the input must give (an unterminated empty last line gives
    /// none), and their count.
    var expected: (count: Int, checksum: LineChecksum) {
        var checksum = LineChecksum()
        var count = 0
        Self.pattern.withUnsafeBufferPointer { pattern in
            for line in 0..<lineCount where !(line == lineCount - 1 && Self.length(line) == 0) {
                let start = Self.start(line)
                checksum.add(UnsafeBufferPointer(rebasing: pattern[start..<start + Self.length(line)]))
                count += 1
            }
        }
        return (count, checksum)
    }
}

/// FNV-1a over each line's length, first 16 bytes and last 16 bytes: cheap enough for many
/// lines in a debug build, and wrong as soon as one line starts or ends at a wrong byte.
struct LineChecksum: Equatable {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    private mutating func mix(_ word: UInt64) {
        value = (value ^ word) &* 0x100_0000_01B3
    }

    mutating func add(_ line: UnsafeBufferPointer<UInt8>) {
        mix(UInt64(line.count))
        let ends = min(16, line.count)
        for index in 0..<ends { mix(UInt64(line[index])) }
        for index in line.count - ends..<line.count { mix(UInt64(line[index])) }
    }

    mutating func add(_ line: String) {
        var line = line
        line.withUTF8 { add($0) }
    }

    mutating func add(_ line: [UInt8]) {
        line.withUnsafeBufferPointer { add($0) }
    }
}

/// An input stream that makes ``GeneratedLines`` as it is read, from one pattern in memory.
final class GeneratedLinesStream: ByteInputStream {
    // Not `lines`, which would hide ByteInputStream's.
    private let generated: GeneratedLines
    private var line = 0
    /// How far into line `line`, its terminator included, the reads have come.
    private var offsetInLine = 0

    init(_ lines: GeneratedLines) {
        generated = lines
        super.init()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        var written = 0
        GeneratedLines.pattern.withUnsafeBufferPointer { pattern in
            while written < maxLength && line < generated.lineCount {
                let length = GeneratedLines.length(line)
                let terminatorLength = generated.terminatorLength(line)
                if offsetInLine < length {
                    let count = min(length - offsetInLine, maxLength - written)
                    (buffer + written).update(from: pattern.baseAddress! + GeneratedLines.start(line) + offsetInLine, count: count)
                    written += count
                    offsetInLine += count
                } else if offsetInLine < length + terminatorLength {
                    // `\r\n` or `\n`: a `\r` only at the first of two terminator bytes.
                    buffer[written] = terminatorLength == 2 && offsetInLine == length ? 0x0D : 0x0A
                    written += 1
                    offsetInLine += 1
                }
                if offsetInLine == length + terminatorLength {
                    line += 1
                    offsetInLine = 0
                }
            }
        }
        return written
    }
}

/// The process's peak resident set size in bytes (`getrusage(2)`, which Linux gives in KiB).
private func peakResidentBytes() -> Int {
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return Int(usage.ru_maxrss) * 1024
}

@Suite("Lines at scale: more than 2 GiB of generated lines", .onDedicatedThreads, .timeLimit(.minutes(2)))
struct LinesScaleTests {
    @Test("lines reads 2 GiB + of lines in one flat buffer: the count and checksum match, peak memory barely moves")
    func twoGiBOfLines() async throws {
        let generated = GeneratedLines(atLeast: (2 << 30) + 1)
        #expect(generated.byteCount > 2 << 30)
        let expected = generated.expected
        let peakBefore = peakResidentBytes()

        var count = 0
        var checksum = LineChecksum()
        for try await line in GeneratedLinesStream(generated).lines {
            checksum.add(line)
            count += 1
        }

        #expect(count == expected.count)
        #expect(checksum == expected.checksum)
        // The reader needs about 128 KiB; tests of other suites running meanwhile share the
        // process, hence the generous bound, still far below the 2 GiB a reader that kept the
        // input would need.
        let growth = peakResidentBytes() - peakBefore
        #expect(growth < 512 << 20, "peak resident memory grew by \(growth >> 20) MiB")
    }

    @Test("forEachLine and rawLines give the same lines as lines over 64 MiB")
    func apisAgree() async throws {
        let generated = GeneratedLines(atLeast: 64 << 20)
        let expected = generated.expected

        var count = 0
        var checksum = LineChecksum()
        try GeneratedLinesStream(generated).forEachLine { line in
            checksum.add(line)
            count += 1
        }
        #expect(count == expected.count)
        #expect(checksum == expected.checksum)

        count = 0
        checksum = LineChecksum()
        for try await line in GeneratedLinesStream(generated).rawLines {
            checksum.add(line)
            count += 1
        }
        #expect(count == expected.count)
        #expect(checksum == expected.checksum)
    }
}

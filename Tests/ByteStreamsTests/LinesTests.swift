import ByteStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Line splitting through all three line APIs (lines, rawLines, forEachLine) and through reads of
// every small size, so that every byte boundary is also a read boundary somewhere.

/// Gives `data` in reads of at most `mostPerRead` bytes; then ends, or, when `fails`, throws
/// ``failure`` as an I/O error would.
final class SplitInputStream: ByteInputStream {
    static let failure = ByteStreamError(.system(errno: EIO), operation: "read", target: "split test stream")
    private let data: [UInt8]
    private let mostPerRead: Int
    private let fails: Bool
    /// How many bytes the reads have returned.
    private(set) var position = 0

    init(_ data: [UInt8], mostPerRead: Int = .max, fails: Bool = false) {
        self.data = data
        self.mostPerRead = mostPerRead
        self.fails = fails
        super.init()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = min(maxLength, mostPerRead, data.count - position)
        if count == 0 {
            if fails { throw Self.failure }
            return 0
        }
        data.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + position, count: count) }
        position += count
        return count
    }
}

/// What reading lines gave: the lines before the end or the error, and the error.
struct LinesResult {
    var lines: [[UInt8]] = []
    var error: (any Error)?
    var strings: [String] { lines.map { String(decoding: $0, as: UTF8.self) } }
}

/// The three ways of reading lines, each given a fresh stream.
enum LineAPI: String, CaseIterable, Sendable {
    case lines, rawLines, forEachLine

    func read(_ input: ByteInputStream, maxLength: Int = ByteInputStream.defaultMaxLineLength) async -> LinesResult {
        var result = LinesResult()
        do {
            switch self {
            case .lines:
                for try await line in input.lines(maxLength: maxLength) { result.lines.append(Array(line.utf8)) }
            case .rawLines:
                for try await line in input.rawLines(maxLength: maxLength) { result.lines.append(line) }
            case .forEachLine:
                try input.forEachLine(maxLength: maxLength) { result.lines.append(Array($0.utf8)) }
            }
        } catch {
            result.error = error
        }
        return result
    }
}

/// An input and the lines it must give.
struct SplitCase: Sendable, CustomStringConvertible {
    var input: String
    var expected: [String]
    var description: String { "\(input.debugDescription) → \(expected)" }
}

let splitCases: [SplitCase] = [
    SplitCase(input: "", expected: []),
    SplitCase(input: "a", expected: ["a"]),
    SplitCase(input: "a\n", expected: ["a"]),
    SplitCase(input: "a\nb", expected: ["a", "b"]),
    SplitCase(input: "a\r\nbc\r\n", expected: ["a", "bc"]),
    SplitCase(input: "a\nb\r\nc", expected: ["a", "b", "c"]),
    SplitCase(input: "a\rb\n", expected: ["a\rb"]),
    SplitCase(input: "\r", expected: ["\r"]),
    SplitCase(input: "a\r", expected: ["a\r"]),
    SplitCase(input: "a\r\r\n", expected: ["a\r"]),
    SplitCase(input: "\n", expected: [""]),
    SplitCase(input: "\r\n", expected: [""]),
    SplitCase(input: "\n\n", expected: ["", ""]),
    SplitCase(input: "a\n\nb\r\n\r\n\n", expected: ["a", "", "b", "", ""]),
    SplitCase(input: "\u{0B}\u{0C}\u{85}\u{2028}\u{2029}\n", expected: ["\u{0B}\u{0C}\u{85}\u{2028}\u{2029}"]),
    SplitCase(input: "tab\there\0nul\n€ 😀\n", expected: ["tab\there\0nul", "€ 😀"]),
]

@Suite("Lines: lines, rawLines, forEachLine and bytes() over any input stream", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct LinesTests {
    @Test("Lines end at \\n and \\r\\n only, empty lines kept, an unterminated last line given, in reads of every size",
          arguments: splitCases)
    func splitting(_ splitCase: SplitCase) async {
        let data = Array(splitCase.input.utf8)
        for api in LineAPI.allCases {
            for mostPerRead in [1, 2, 3, 5, .max] {
                let input = SplitInputStream(data, mostPerRead: mostPerRead)
                let result = await api.read(input)
                #expect(result.error == nil, "\(api) in reads of \(mostPerRead)")
                #expect(result.strings == splitCase.expected, "\(api) in reads of \(mostPerRead)")
                #expect(input.position == data.count)
            }
        }
    }

    @Test("Lines of exactly maxLength bytes are given, with \\n, \\r\\n or at the end, in reads of every size")
    func lineAtLimit() async {
        let ten = String(repeating: "x", count: 10)
        for tail in ["\n", "\r\n", ""] {
            let data = Array("short\n\(ten)\r\n\(ten)\(tail)".utf8)
            for api in LineAPI.allCases {
                for mostPerRead in [1, 3, 11, .max] {
                    let result = await api.read(SplitInputStream(data, mostPerRead: mostPerRead), maxLength: 10)
                    #expect(result.error == nil, "\(api), tail \(tail.debugDescription), reads of \(mostPerRead)")
                    #expect(result.strings == ["short", ten, ten])
                }
            }
        }
    }

    @Test("A line one byte over maxLength throws lineTooLong with its number and offset, after the lines before it")
    func lineOverLimit() async throws {
        let ten = String(repeating: "x", count: 10)
        // Each over-long line is line 3 and starts at byte 6 + 12 = 18.
        for overLong in ["\(ten)y\n", "\(ten)y\r\n", "\(ten)y", "\(ten)\r", "\(ten)\rz\n", "\(ten)yyyyyyyyyyyyyyyyyy"] {
            let data = Array("short\n\(ten)\r\n\(overLong)after\n".utf8)
            for api in LineAPI.allCases {
                for mostPerRead in [1, 3, .max] {
                    let input = SplitInputStream(data, mostPerRead: mostPerRead)
                    let result = await api.read(input, maxLength: 10)
                    let context: Comment = "\(api), \(overLong.debugDescription), reads of \(mostPerRead)"
                    #expect(result.strings == ["short", ten], context)
                    let error = try #require(result.error as? ByteStreamError, context)
                    #expect(error.code == .lineTooLong(lineNumber: 3, offset: 18, limit: 10), context)
                    #expect(error.description == "read lines: line 3 (at byte offset 18) is longer than 10 bytes; give a larger maxLength to read it")
                    #expect(input.streamStatus == (api == .forEachLine ? .open : .closed), context)
                }
            }
        }
    }

    @Test("The default maximum is 1 MiB: a line of 1 MiB is given, one of 1 MiB + 1 throws")
    func defaultLimit() async throws {
        #expect(ByteInputStream.defaultMaxLineLength == 1 << 20)
        let limit = ByteInputStream.defaultMaxLineLength
        let atLimit = [UInt8](repeating: 0x61, count: limit)
        var lengths: [Int] = []
        for try await line in MemoryInputStream(bytes: [0x0A] + atLimit + [0x0D, 0x0A] + atLimit).rawLines {
            lengths.append(line.count)
        }
        #expect(lengths == [0, limit, limit])

        let result = await LineAPI.lines.read(MemoryInputStream(bytes: Array("a\n".utf8) + atLimit + [0x61, 0x0A]))
        #expect(result.strings == ["a"])
        #expect((result.error as? ByteStreamError)?.code == .lineTooLong(lineNumber: 2, offset: 2, limit: limit))
    }

    @Test("A line too long is refused without reading it to its end")
    func overLongLineIsNotReadToItsEnd() async throws {
        let input = SplitInputStream([UInt8](repeating: 0x78, count: 4 << 20))
        let result = await LineAPI.lines.read(input, maxLength: 1000)
        #expect((result.error as? ByteStreamError)?.code == .lineTooLong(lineNumber: 1, offset: 0, limit: 1000))
        // One read of 64 KiB holds more than the limit already.
        #expect(input.position <= 64 * 1024)
    }

    @Test("maxLength out of 1...1 GiB throws invalidArgument before anything is opened")
    func invalidMaximum() async throws {
        for maxLength in [0, -1, ByteStream.maximumChunkSize + 1] {
            for api in LineAPI.allCases {
                let input = MemoryInputStream(bytes: Array("a\n".utf8))
                let error = try #require(await api.read(input, maxLength: maxLength).error as? ByteStreamError)
                guard case .invalidArgument(let name, _) = error.code else {
                    Issue.record("\(api): \(error)")
                    continue
                }
                #expect(name == "maxLength")
                #expect(input.streamStatus != .open)
            }
        }
    }

    @Test("Invalid UTF-8 becomes U+FFFD in lines and forEachLine; rawLines gives the bytes unchanged")
    func invalidUTF8() async {
        let data: [UInt8] = [0x61, 0xFF, 0x62, 0x0A, 0xC3, 0x0D, 0x0A, 0xE2, 0x82, 0xAC, 0x0A, 0xED, 0xA0, 0x80]
        for api in [LineAPI.lines, .forEachLine] {
            let result = await api.read(MemoryInputStream(bytes: data))
            #expect(result.strings == ["a\u{FFFD}b", "\u{FFFD}", "€", "\u{FFFD}\u{FFFD}\u{FFFD}"], "\(api)")
        }
        let raw = await LineAPI.rawLines.read(MemoryInputStream(bytes: data))
        #expect(raw.lines == [[0x61, 0xFF, 0x62], [0xC3], [0xE2, 0x82, 0xAC], [0xED, 0xA0, 0x80]])
    }

    @Test("A stream error is thrown after every complete line before it; the line it cuts is not given")
    func streamErrorMidway() async {
        let data = Array("one\ntwo\r\nthr".utf8)
        for api in LineAPI.allCases {
            for mostPerRead in [1, 4, .max] {
                let input = SplitInputStream(data, mostPerRead: mostPerRead, fails: true)
                let result = await api.read(input)
                #expect(result.strings == ["one", "two"], "\(api), reads of \(mostPerRead)")
                #expect(result.error as? ByteStreamError == SplitInputStream.failure)
                #expect(input.streamStatus == .error)
            }
        }
    }

    @Test("The sequences open the stream and close it at the end; forEachLine opens and leaves it open")
    func openingAndClosing() async throws {
        for api in LineAPI.allCases {
            let input = MemoryInputStream(bytes: Array("a\nb".utf8))
            #expect(input.streamStatus == .notOpen)
            #expect(await api.read(input).strings == ["a", "b"])
            #expect(input.streamStatus == (api == .forEachLine ? .atEnd : .closed), "\(api)")
            input.close()
            // A closed stream gives nothing, as chunks() does.
            #expect(await api.read(input).lines.isEmpty)
        }
        let empty = MemoryInputStream(bytes: [])
        var calls = 0
        try empty.forEachLine { _ in calls += 1 }
        #expect(calls == 0)
    }

    @Test("forEachLine throws the closure's error unchanged, after the lines before it")
    func closureError() throws {
        struct Stop: Error, Equatable {}
        let input = MemoryInputStream(bytes: Array("a\nb\nc\n".utf8))
        var seen: [String] = []
        #expect(throws: Stop()) {
            try input.forEachLine { line in
                seen.append(line)
                if line == "b" { throw Stop() }
            }
        }
        #expect(seen == ["a", "b"])
        #expect(input.streamStatus == .open)
    }

    @Test("Leaving the loop early leaves the stream open")
    func leavingEarly() async throws {
        let input = MemoryInputStream(bytes: Array("a\nb\nc\n".utf8))
        for try await line in input.lines {
            #expect(line == "a")
            break
        }
        #expect(input.streamStatus == .atEnd || input.streamStatus == .open)
        input.close()
    }

    @Test("A cancelled task ends the lines with CancellationError before the next read")
    func cancellation() async {
        let input = SplitInputStream(Array("a\nb\nc\n".utf8), mostPerRead: 2)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var lines: [String] = []
            do {
                for try await line in input.lines { lines.append(line) }
                return (lines, nil as (any Error)?)
            } catch {
                return (lines, error)
            }
        }
        let (lines, error) = await task.value
        #expect(lines.isEmpty)
        #expect(error is CancellationError)
    }

    // MARK: bytes()

    @Test("bytes() gives every byte, in reads of chunkSize, never one read per byte", arguments: edgeSizes)
    func bytes(_ size: Int) async throws {
        let data = randomBytes(count: size, seed: UInt64(size) + 40)
        for chunkSize in [1, 7, ByteStream.defaultChunkSize] where size < (1 << 20) || chunkSize > 1 {
            let input = ProbeInputStream(bytes: data)
            var received: [UInt8] = []
            received.reserveCapacity(size)
            for try await byte in input.bytes(chunkSize: chunkSize) { received.append(byte) }
            #expect(received == data, "chunkSize \(chunkSize)")
            #expect(input.readCalls == (size + chunkSize - 1) / chunkSize + 1)
            #expect(input.largestMaxLength <= chunkSize)
            #expect(input.streamStatus == .closed)
        }
    }

    @Test("bytes() throws the stream's error after the bytes before it; a bad chunkSize is invalidArgument")
    func bytesErrors() async throws {
        let input = SplitInputStream(Array(0..<10), mostPerRead: 4, fails: true)
        var received: [UInt8] = []
        do {
            for try await byte in input.bytes() { received.append(byte) }
            Issue.record("no error")
        } catch {
            #expect(error as? ByteStreamError == SplitInputStream.failure)
        }
        #expect(received == Array(0..<10))
        #expect(input.streamStatus == .error)

        var iterator = MemoryInputStream(bytes: [1]).bytes(chunkSize: 0).makeAsyncIterator()
        let error = await #expect(throws: ByteStreamError.self) { _ = try await iterator.next() }
        guard case .invalidArgument(let name, _)? = error?.code else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(name == "chunkSize")
    }
}

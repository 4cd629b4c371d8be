import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `message-exchange` example (Examples/MessageExchange): a server and a client that talk
/// gzip over one TCP connection through scheduled streams and delegates; and its Swift
/// concurrency form, `async-message-exchange` (Examples/AsyncMessageExchange: `@main`,
/// `async`, awaited sockets), which must behave the same, and talk to the other form. The
/// server runs on a free loopback port and announces it on its first line of output.
@Suite("message-exchange examples, run-loop and async: client and server over loopback", .onDedicatedThreads,
       .timeLimit(.minutes(2)))
struct MessageExchangeTests {
    /// The two forms of the example.
    static let examples = ["message-exchange", "async-message-exchange"]

    static func binary(_ example: String) -> String {
        URL(fileURLWithPath: Locations.binary).deletingLastPathComponent().appendingPathComponent(example).path
    }

    /// A running server: its process and the file its standard output goes to.
    struct Server {
        let process: Process
        let outputPath: String
        let port: String

        var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

        func stop() {
            // SIGKILL: a test's child may inherit a signal mask that blocks SIGTERM.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            _ = waitForExit(process, timeout: 10)
        }

        /// Waits (at most 10 s) until the server's output holds `count` lines.
        func waitForLines(_ count: Int) -> [Substring] {
            for _ in 0..<500 {
                let lines = output.split(separator: "\n")
                if lines.count >= count { return lines }
                usleep(20_000)
            }
            return output.split(separator: "\n")
        }
    }

    func startServer(_ example: String, in scratch: Scratch) throws -> Server {
        let outputPath = scratch.ioPath("server-stdout")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary(example))
        process.arguments = ["server", "--port", "0"]
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle(forWritingAtPath: scratch.ioPath("server-stderr"))
        try withDefaultSignalMask { try process.run() }
        var server = Server(process: process, outputPath: outputPath, port: "")
        let first = server.waitForLines(1).first ?? ""
        guard first.hasPrefix("listening on 127.0.0.1:") else {
            server.stop()
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "server said \(first.debugDescription)"])
        }
        server = Server(process: process, outputPath: outputPath, port: String(first.split(separator: ":").last!))
        return server
    }

    /// `byteCount` bytes of random hexadecimal digits: one long line without a newline.
    static func hexLine(byteCount: Int, seed: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: randomBytes(count: byteCount / 2, seed: seed).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] },
                      as: UTF8.self)
    }

    @Test("a peer that sends everything and half-closes before it reads gets every echo: the server finishes sending before it closes",
          arguments: examples)
    func halfCloseBeforeReading(example: String) throws {
        try withScratch { scratch in
            let server = try startServer(example, in: scratch)
            defer { server.stop() }
            // The echo of 2 MiB cannot all be in the socket buffers when the peer's end comes:
            // the server still has some of it to send then.
            let messages = ["first", Self.hexLine(byteCount: 2 << 20, seed: 8735), "last"]
            let connection = try SocketStreams.connect(host: "127.0.0.1", port: try #require(Int(server.port)),
                                                       timeout: .seconds(10))
            let writer = try GzipOutputStream(wrapping: connection.output)
            try writer.openOrThrow()
            try writer.writeAll(Array(messages.map { $0 + "\n" }.joined().utf8))
            try writer.closeOrThrow()  // the trailer, then the half-close, before any echo is read
            let reader = try GzipInputStream(wrapping: connection.input)
            try reader.openOrThrow()
            let echoed = String(decoding: try reader.readToEnd(limit: 8 << 20), as: UTF8.self)
            reader.close()
            let answers = echoed.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            #expect(answers.count == messages.count)
            for (index, (answer, message)) in zip(answers, messages).enumerated() {
                #expect(answer == "echo: " + message, "answer \(index + 1) of \(answer.utf8.count) bytes")
            }
            #expect(server.waitForLines(1 + messages.count + 1).last?.hasSuffix(": closed") == true)
        }
    }

    @Test("the client's messages, read from standard input, come back as echoes in order, a large one included, and the server logs each",
          arguments: examples, examples)
    func messagesAreEchoed(serverExample: String, clientExample: String) throws {
        try withScratch { scratch in
            let server = try startServer(serverExample, in: scratch)
            defer { server.stop() }
            // 1 MiB of text on one line: more than the socket buffers, in both directions.
            let large = Self.hexLine(byteCount: 1 << 20, seed: 8734)
            let messages = ["hello", "", "grüße, 世界", large, "last"]
            // On standard input: one argument may hold at most 128 KiB.
            let client = try run(Self.binary(clientExample), ["client", "--port", server.port], in: scratch,
                                 input: .bytes(Array(messages.map { $0 + "\n" }.joined().utf8)), timeout: 60)
            #expect(client.status == 0, "status \(client.status), stderr \(client.err.debugDescription)")
            // Compared line by line: a failure names the first line that differs, not 2 MiB of text.
            let answers = client.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            #expect(answers.count == messages.count)
            for (index, (answer, message)) in zip(answers, messages).enumerated() {
                #expect(answer == "echo: " + message, "answer \(index + 1) of \(answer.utf8.count) bytes")
            }
            // The server logs "PEER: LINE" for each line, then "PEER: closed".
            let logged = server.waitForLines(1 + messages.count + 1).dropFirst()
            let received = logged.prefix(messages.count).map { line in
                line.range(of: ": ").map { String(line[$0.upperBound...]) } ?? String(line)
            }
            #expect(received == messages, "server log lines \(received.map(\.utf8.count)) bytes")
            #expect(logged.last?.hasSuffix(": closed") == true)
        }
    }

    @Test("the server serves one connection after another; the client takes its messages as arguments", arguments: examples)
    func secondConnectionAndStandardInput(example: String) throws {
        try withScratch { scratch in
            let server = try startServer(example, in: scratch)
            defer { server.stop() }
            for round in 1...2 {
                let client = try run(Self.binary(example), ["client", "--port", server.port, "one \(round)", "two \(round)"],
                                     in: scratch, timeout: 60)
                #expect(client.status == 0, "\(client)")
                #expect(client.out == "echo: one \(round)\necho: two \(round)\n")
            }
        }
    }

    @Test("a client with no server to talk to fails with one line naming the refused connection", arguments: examples)
    func refused(example: String) throws {
        try withScratch { scratch in
            // A port that was free a moment ago: bound, read, closed.
            let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) } }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) } }
            close(probe)
            let port = UInt16(bigEndian: address.sin_port)
            let client = try run(Self.binary(example), ["client", "--port", "\(port)", "hello"], in: scratch, timeout: 60)
            #expect(client.status == 1)
            #expect(client.errLines.count == 1 && client.err.contains("Connection refused"), "\(client)")
            #expect(client.out.isEmpty)
        }
    }
}

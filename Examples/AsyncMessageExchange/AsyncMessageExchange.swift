// The message-exchange example in Swift concurrency: the same server and client, the same
// bytes on the wire (one gzip member each way, a sync flush after each line), written with
// `@main` and `async` instead of a queue and a delegate. Where the run-loop form schedules its
// streams and reacts to events, this one awaits: `listener.connections` for each peer,
// `lines` for each message, `write(contentsOf:)` and `drain()` for each answer. No thread
// waits for a socket: a task with nothing to read or no room to write is suspended, and one
// internal poll(2) loop resumes it.
//
//   async-message-exchange server [--host 127.0.0.1] [--port 8734]
//   async-message-exchange client [--host 127.0.0.1] [--port 8734] [MESSAGE ...]
//
// The server answers each line with "echo: LINE" and serves each connection in a task of its
// own. The client sends its messages (or the lines of standard input) while it prints the
// answers, and ends once the server has ended its side.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GzipStreams

/// The port of the classic Cocoa streams chat tutorial, as the run-loop form uses.
let defaultPort = 8734
/// The longest line either side takes: messages may be long (a test sends 2 MiB on one line).
let maxLineLength = 16 << 20

@main
struct AsyncMessageExchange {
    static func main() async {
        let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
        do {
            if options.role == "server" {
                try await serve(options)
            } else {
                try await talk(options)
            }
        } catch {
            fail("\(error)")
        }
    }

    /// Serves connections until the process ends: each in a task of its own.
    static func serve(_ options: Options) async throws {
        let listener = try SocketListener(host: options.host, port: options.port)
        printLine("listening on \(listener.displayName)")
        for try await connection in listener.connections {
            Task {
                let peer = connection.peerName
                do {
                    try await answer(connection)
                } catch {
                    printLine("\(peer): \(error)")
                }
                printLine("\(peer): closed")
            }
        }
    }

    /// Answers each line of one connection with "echo: LINE", then ends its own member.
    static func answer(_ connection: SocketConnection) async throws {
        let peer = connection.peerName
        let input = try GzipInputStream(wrapping: connection.input)
        let output = try GzipOutputStream(wrapping: connection.output, level: 6)
        do {
            for try await line in input.lines(maxLength: maxLineLength) {  // closes input at the end
                printLine("\(peer): \(line)")
                try await output.write(contentsOf: Array("echo: \(line)\n".utf8))
                try output.flush()         // a sync flush: the peer can inflate the line at once
                try await output.drain()   // and it is in the socket before the next line is awaited
            }
        } catch {
            // The peer must not take a cut member for a whole one: reset the connection.
            connection.output.resetsOnClose = true
            output.close()
            throw error
        }
        try await output.finishAndClose()  // the trailer, then the half-close
    }

    /// Sends the messages and prints the answers, at once: one task writes while this one reads.
    static func talk(_ options: Options) async throws {
        var lines = options.messages
        if lines.isEmpty {
            while let line = readLine() { lines.append(line) }
        }
        let messages = lines
        let connection = try SocketConnection(host: options.host, port: options.port, timeout: .seconds(10))
        let answers = try await connection.separated { input, output in
            let sender = Task {
                let gzip = try GzipOutputStream(wrapping: output, level: 6)
                for message in messages {
                    try await gzip.write(contentsOf: Array((message + "\n").utf8))
                    try gzip.flush()
                    try await gzip.drain()
                }
                try await gzip.finishAndClose()
            }
            var answers = 0
            do {
                for try await line in try GzipInputStream(wrapping: input).lines(maxLength: maxLineLength) {
                    printLine(line)
                    answers += 1
                }
            } catch {
                sender.cancel()
                throw error
            }
            try await sender.value
            return answers
        }
        if answers < messages.count { fail("the server answered \(answers) of \(messages.count) messages") }
    }
}

struct Options {
    var role: String
    var host = "127.0.0.1"
    var port = defaultPort
    var messages: [String] = []
}

func usage() -> Never {
    let text = """
        usage: async-message-exchange server [--host HOST] [--port PORT]
               async-message-exchange client [--host HOST] [--port PORT] [MESSAGE ...]
        The port is \(defaultPort) by default; a server given port 0 takes a free one.

        """
    writeAll(text, to: STDERR_FILENO)
    exit(2)
}

func parseOptions(_ arguments: [String]) -> Options {
    guard let role = arguments.first, role == "server" || role == "client" else { usage() }
    var options = Options(role: role)
    var rest = arguments.dropFirst()
    while let argument = rest.popFirst() {
        switch argument {
        case "--host":
            guard let value = rest.popFirst() else { usage() }
            options.host = value
        case "--port":
            guard let value = rest.popFirst(), let port = Int(value), (0...65535).contains(port) else { usage() }
            options.port = port
        default:
            guard role == "client" else { usage() }
            options.messages.append(argument)
        }
    }
    return options
}

func fail(_ message: String) -> Never {
    writeAll("async-message-exchange: \(message)\n", to: STDERR_FILENO)
    exit(1)
}

/// Writes `text` and a newline to standard output at once (unbuffered: a script or test
/// reading the server's output sees each line as it happens).
func printLine(_ text: String) {
    writeAll(text + "\n", to: STDOUT_FILENO)
}

func writeAll(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}

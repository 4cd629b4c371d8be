// Two programs in one: a server and a client that exchange gzip-compressed messages over one
// TCP connection, written the Cocoa way: streams scheduled on a queue, a delegate told when
// bytes or space are available. Each message is one line; the writer ends each with a sync
// flush so the peer can inflate it at once, and the connection carries one gzip member each way.
//
//   message-exchange server [--host 127.0.0.1] [--port 8734]
//   message-exchange client [--host 127.0.0.1] [--port 8734] [MESSAGE ...]
//
// The server answers each line with "echo: LINE" and serves one connection after another.
// The client sends its messages (or the lines of standard input), prints each answer, and
// ends the connection when every message is answered.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import GzipStreams

/// The port of the classic Cocoa streams chat tutorial.
let defaultPort = 8734

/// One end of a connection: reads lines from a scheduled `GzipInputStream` over the socket and
/// writes lines through a scheduled `GzipOutputStream`, all on one serial queue.
final class Conversation: ByteStreamDelegate, @unchecked Sendable {
    let queue: DispatchQueue
    private let input: GzipInputStream
    private let output: GzipOutputStream
    /// Plain bytes queued to send, written when the output stream has space.
    private var unsent: [UInt8] = []
    /// Whether the output stream said it has space and nothing was written since.
    private var outputHasSpace = false
    /// Sync flush once `unsent` is written, so the peer can inflate the last line.
    private var flushPending = false
    private var closeWhenSent = false
    /// Called once this side's member is finished (or sending failed); see `finishSending`.
    private var whenSent: (() -> Void)?
    /// Bytes of a line not yet ended by "\n".
    private var partialLine: [UInt8] = []
    private let readBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: ByteStream.defaultChunkSize)

    /// Called on `queue` for each line received, without its "\n".
    var onLine: (String) -> Void = { _ in }
    /// Called on `queue` once: `nil` when the peer ended its stream cleanly, else the error.
    var onFinish: ((any Error)?) -> Void = { _ in }
    private var finished = false

    init(input: ByteInputStream, output: ByteOutputStream, queue: DispatchQueue) throws {
        self.queue = queue
        self.input = try GzipInputStream(wrapping: input)
        self.output = try GzipOutputStream(wrapping: output, level: 6)
    }

    deinit { readBuffer.deallocate() }

    /// Opens both directions and schedules them; call on `queue`.
    func start() {
        for stream in [input, output] as [ByteStream] {
            stream.delegate = self
            stream.schedule(on: queue)
            stream.open()
        }
    }

    /// Queues `line` (a "\n" is added) to be sent as soon as the socket takes it; call on `queue`.
    func send(_ line: String) {
        unsent += Array(line.utf8) + [UInt8(ascii: "\n")]
        flushPending = true
        writeUnsent()
    }

    /// Ends this side's member (trailer) and half-closes the socket once everything queued is
    /// sent, then calls `completion` on `queue` (also when sending failed: the error goes to
    /// `onFinish`, if it is the first). Call on `queue`.
    ///
    /// Closing the output writes the last held bytes and the trailer and blocks until the
    /// socket has taken them. It comes only once every queued line was handed to the output,
    /// so it waits for at most about one deflate block, and only while the peer does not read.
    func finishSending(then completion: @escaping () -> Void = {}) {
        closeWhenSent = true
        whenSent = completion
        writeUnsent()
    }

    func stream(_ stream: ByteStream, handle event: ByteStream.Event) {
        if event == .errorOccurred, stream === output {
            sendingFailed(stream.streamError)
        } else if event == .errorOccurred {
            finish(stream.streamError)
        } else if stream === input, event == .hasBytesAvailable {
            readLines()
        } else if stream === input, event == .endEncountered {
            if !partialLine.isEmpty { onLine(String(decoding: partialLine, as: UTF8.self)) }
            partialLine = []
            finish(nil)
        } else if stream === output, event == .hasSpaceAvailable {
            outputHasSpace = true
            writeUnsent()
        }
    }

    private func readLines() {
        let count = input.read(readBuffer, maxLength: ByteStream.defaultChunkSize)
        guard count > 0 else { return }  // 0: nothing to read now, or the end (its own event)
        for byte in UnsafeBufferPointer(start: readBuffer, count: count) {
            if byte == UInt8(ascii: "\n") {
                onLine(String(decoding: partialLine, as: UTF8.self))
                partialLine.removeAll(keepingCapacity: true)
            } else {
                partialLine.append(byte)
            }
        }
    }

    private func writeUnsent() {
        // A failed output gets no more events: finish now rather than wait for space.
        if output.streamStatus == .error { return sendingFailed(output.streamError) }
        guard outputHasSpace else { return }
        if !unsent.isEmpty {
            let written = output.write(unsent, maxLength: unsent.count)
            guard written >= 0 else { return sendingFailed(output.streamError) }
            unsent.removeFirst(written)
            outputHasSpace = false  // told again when there is space for more
            if !unsent.isEmpty { return }
        }
        if flushPending {
            flushPending = false
            do { try output.flush() } catch { return sendingFailed(error) }
        }
        if closeWhenSent {
            closeWhenSent = false
            output.close()  // writes the trailer, then half-closes the socket
            if output.streamStatus == .error { return sendingFailed(output.streamError) }
            sendingFinished()
        }
    }

    /// The output failed: the error goes to `onFinish` (if first), and a pending
    /// `finishSending` completes.
    private func sendingFailed(_ error: (any Error)?) {
        unsent = []
        closeWhenSent = false
        finish(error)
        sendingFinished()
    }

    private func sendingFinished() {
        let completion = whenSent
        whenSent = nil
        completion?()
    }

    private func finish(_ error: (any Error)?) {
        guard !finished else { return }
        finished = true
        onFinish(error)
    }

    /// Closes both directions; call on `queue`.
    func close() {
        input.close()
        output.close()
    }
}

// MARK: Command line

struct Options {
    var role: String
    var host = "127.0.0.1"
    var port = defaultPort
    var messages: [String] = []
}

func usage() -> Never {
    let text = """
        usage: message-exchange server [--host HOST] [--port PORT]
               message-exchange client [--host HOST] [--port PORT] [MESSAGE ...]
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
    writeAll("message-exchange: \(message)\n", to: STDERR_FILENO)
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

/// Serves one connection after another: each line received is answered with "echo: LINE".
func runServer(_ options: Options) -> Never {
    let listener: SocketListener
    do {
        listener = try SocketListener(host: options.host, port: options.port)
    } catch {
        fail("\(error)")
    }
    printLine("listening on \(listener.displayName)")
    while true {
        let connection: (input: ByteInputStream, output: ByteOutputStream)
        do {
            connection = try listener.accept()
        } catch {
            fail("\(error)")
        }
        let peer = (connection.input as? SocketInputStream)?.displayName ?? "peer"
        let queue = DispatchQueue(label: "message-exchange.server")
        let done = DispatchSemaphore(value: 0)
        let conversation: Conversation
        do {
            conversation = try Conversation(input: connection.input, output: connection.output, queue: queue)
        } catch {
            fail("\(error)")
        }
        conversation.onLine = { [unowned conversation] line in
            printLine("\(peer): \(line)")
            conversation.send("echo: \(line)")
        }
        conversation.onFinish = { [unowned conversation] error in
            if let error { printLine("\(peer): \(error)") }
            // The peer has ended (or failed): answer what is queued, end the member, then close.
            // Closing at once would drop the answers still waiting for space.
            conversation.finishSending { done.signal() }
        }
        queue.sync { conversation.start() }
        done.wait()
        queue.sync { conversation.close() }
        printLine("\(peer): closed")
    }
}

/// Sends each message, prints each answer, and ends once every message is answered.
func runClient(_ options: Options) -> Never {
    var messages = options.messages
    if messages.isEmpty {
        while let line = readLine() { messages.append(line) }
    }
    let connection: (input: ByteInputStream, output: ByteOutputStream)
    do {
        connection = try SocketStreams.connect(host: options.host, port: options.port, timeout: .seconds(10))
    } catch {
        fail("\(error)")
    }
    let queue = DispatchQueue(label: "message-exchange.client")
    let conversation: Conversation
    do {
        conversation = try Conversation(input: connection.input, output: connection.output, queue: queue)
    } catch {
        fail("\(error)")
    }
    var answers = 0
    let done = DispatchSemaphore(value: 0)
    var failure: (any Error)?
    conversation.onLine = { [unowned conversation] line in
        printLine(line)
        answers += 1
        if answers == messages.count { conversation.finishSending() }
    }
    conversation.onFinish = { error in
        failure = error
        done.signal()
    }
    queue.sync {
        conversation.start()
        for message in messages { conversation.send(message) }
        if messages.isEmpty { conversation.finishSending() }
    }
    done.wait()
    queue.sync { conversation.close() }
    if let failure { fail("\(failure)") }
    if answers < messages.count { fail("the server answered \(answers) of \(messages.count) messages") }
    exit(0)
}

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
if options.role == "server" { runServer(options) } else { runClient(options) }

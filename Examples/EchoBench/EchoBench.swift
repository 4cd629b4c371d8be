// The asynchronous sockets under load: CONNECTIONS concurrent loopback connections in one
// process (all connected before the first byte is sent), each sending BYTES of text through a GzipOutputStream to an echo server that
// inflates them with a GzipInputStream and deflates them back, while the client inflates the
// echo and checks every byte. Every stream is used from Swift concurrency: no thread waits for
// a socket, one poll(2) loop resumes the tasks. `make bench-echo` runs it from a release build
// under /usr/bin/time -v (bench/echo.md has the numbers).
//
//   echo-bench [--connections 1000] [--bytes 1048576] [--level 6]
//
// Prints one line: connections, bytes, level, wall time, throughput (plain bytes echoed per
// second, both directions counted once), and the peak RSS from getrusage(2). Exits 1 on the
// first mismatch or error.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GzipStreams

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

@main
struct EchoBench {
    static func main() async {
        var connections = 1000
        var bytes = 1 << 20
        var level = 6
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            guard let value = arguments.popFirst().flatMap(Int.init), value >= 0 else { usage() }
            switch argument {
            case "--connections" where value >= 1: connections = value
            case "--bytes": bytes = value
            case "--level" where (1...9).contains(value): level = value
            default: usage()
            }
        }
        let (connectionCount, byteCount, deflateLevel) = (connections, bytes, level)
        raiseDescriptorLimit(to: 2 * connectionCount + 64)
        // A few different texts, shared read-only by the connections: a client checks its echo
        // against the text it sent.
        let texts = (0..<4).map { seededText(count: byteCount, seed: UInt64($0 + 1)) }
        do {
            let listener = try SocketListener(port: 0, backlog: 4096)
            let server = Task { try await serve(listener, level: deflateLevel) }
            let start = ContinuousClock.now
            // Every client connects, then waits until all have: the echoes then run at once,
            // each with its four gzip streams open, rather than one after another.
            let connected = Barrier(count: connectionCount)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<connectionCount {
                    let text = texts[index % texts.count]
                    group.addTask {
                        try await exchange(port: listener.port, text: text, level: deflateLevel, after: connected)
                    }
                }
                try await group.waitForAll()
            }
            let elapsed = ContinuousClock.now - start
            try listener.close()
            try await server.value
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            let total = Double(connectionCount) * Double(byteCount)
            print("echo-bench: \(connectionCount) connections x \(byteCount) bytes, level \(deflateLevel): "
                  + "\(format(seconds)) s, \(format(total / seconds / 1e6)) MB/s echoed, "
                  + "peak RSS \(usage.ru_maxrss / 1024) MiB")
        } catch {
            printError("echo-bench: \(error)")
            exit(1)
        }
    }

    /// Echoes every connection, each in a task of its own, until the listener is closed.
    static func serve(_ listener: SocketListener, level: Int) async throws {
        var echoes: [Task<Void, any Error>] = []
        for try await connection in listener.connections {
            echoes.append(Task { try await echo(connection, level: level) })
        }
        for echo in echoes { try await echo.value }
    }

    /// Inflates what comes in and deflates it back out, until the peer's member ends.
    static func echo(_ connection: SocketConnection, level: Int) async throws {
        let input = try GzipInputStream(wrapping: connection.input)
        let output = try GzipOutputStream(wrapping: connection.output, level: level)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = try await input.read(into: buffer)
            if count == 0 { break }
            try await output.write(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        input.close()
        try await output.finishAndClose()
    }

    /// One client: sends `text` through gzip while it reads the echo back and checks it.
    static func exchange(port: Int, text: [UInt8], level: Int, after connected: Barrier) async throws {
        let connection = try SocketConnection(host: "127.0.0.1", port: port, timeout: .seconds(60))
        await connected.arrive()
        try await connection.separated { input, output in
            let sender = Task {
                let gzip = try GzipOutputStream(wrapping: output, level: level)
                try await gzip.write(contentsOf: text)
                try await gzip.finishAndClose()
            }
            let gzip = try GzipInputStream(wrapping: input)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
            defer { buffer.deallocate() }
            var offset = 0
            while true {
                let count = try await gzip.read(into: buffer)
                if count == 0 { break }
                let same = offset + count <= text.count && text.withUnsafeBytes { sent in
                    memcmp(sent.baseAddress! + offset, buffer.baseAddress!, count) == 0
                }
                guard same else { throw BenchError(description: "the echo differs within bytes \(offset)..<\(offset + count)") }
                offset += count
            }
            gzip.close()
            guard offset == text.count else { throw BenchError(description: "the echo ended after \(offset) of \(text.count) bytes") }
            try await sender.value
        }
    }
}

/// Lets tasks wait until `count` of them have arrived.
actor Barrier {
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var remaining: Int

    init(count: Int) {
        remaining = count
    }

    /// Returns once `count` tasks have called this.
    func arrive() async {
        remaining -= 1
        if remaining <= 0 {
            for waiter in waiting { waiter.resume() }
            waiting.removeAll()
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}

func usage() -> Never {
    printError("usage: echo-bench [--connections N] [--bytes N] [--level 1-9]")
    exit(2)
}

/// Writes `text` and a newline to standard error.
func printError(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

func format(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
}

/// Raises the soft limit on open descriptors to `count` (two sockets per connection), at most
/// to the hard limit. The corresponding C functions are `getrlimit(2)` and `setrlimit(2)`.
func raiseDescriptorLimit(to count: Int) {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(count) else { return }
    limit.rlim_cur = min(rlim_t(count), limit.rlim_max)
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// `count` bytes of seeded text: words from a small vocabulary, lines of about 70 bytes, so
/// that deflate has work like a log's (it compresses to about a third).
func seededText(count: Int, seed: UInt64) -> [UInt8] {
    let words = ["stream", "gzip", "member", "socket", "poll", "task", "echo", "deflate", "inflate", "window",
                 "trailer", "header", "byte", "chunk", "loopback", "connection", "reader", "writer"].map { Array($0.utf8) }
    var state = seed
    var text: [UInt8] = []
    text.reserveCapacity(count + 16)
    var lineLength = 0
    while text.count < count {
        // SplitMix64.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let word = words[Int(z % UInt64(words.count))]
        text += word
        lineLength += word.count + 1
        if lineLength > 70 {
            text.append(UInt8(ascii: "\n"))
            lineLength = 0
        } else {
            text.append(UInt8(ascii: " "))
        }
    }
    return Array(text[..<count])
}

import ByteStreams
import Dispatch
import Foundation
@testable import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers of GzipSchedulingTests: loopback sockets, an event log, peers on their own threads.

/// When a wait that started now gives up and fails the test.
func deadline() -> DispatchTime { .now() + .seconds(10) }

/// Records a stream's events and hands each to `handler`, on the stream's queue.
final class EventLog: ByteStreamDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [ByteStream.Event] = []
    private let seen = DispatchSemaphore(value: 0)
    /// What to do on each event; set before the stream is scheduled.
    var handler: (ByteStream, ByteStream.Event) -> Void = { _, _ in }

    var events: [ByteStream.Event] { lock.withLock { recorded } }

    func stream(_ stream: ByteStream, handle event: ByteStream.Event) {
        lock.withLock { recorded.append(event) }
        handler(stream, event)
        seen.signal()
    }

    /// Waits until some event satisfies `condition` (bounded); `false` on timeout.
    func wait(until condition: ([ByteStream.Event]) -> Bool) -> Bool {
        while !condition(events) {
            if seen.wait(timeout: deadline()) == .timedOut { return false }
        }
        return true
    }

    func waitForEnd() -> Bool {
        wait { $0.contains(.endEncountered) || $0.contains(.errorOccurred) }
    }
}

/// What the delegate of a scheduled input read: the bytes and each read's result.
final class Reads: @unchecked Sendable {
    private let lock = NSLock()
    private var storedBytes: [UInt8] = []
    private var storedResults: [Int] = []

    var bytes: [UInt8] { lock.withLock { storedBytes } }
    var byteCount: Int { lock.withLock { storedBytes.count } }
    var results: [Int] { lock.withLock { storedResults } }

    /// Reads once, at most `maxLength` bytes, and keeps what came.
    func read(_ stream: ByteInputStream, maxLength: Int) {
        var buffer = [UInt8](repeating: 0, count: maxLength)
        let count = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: maxLength) }
        lock.withLock {
            storedResults.append(count)
            if count > 0 { storedBytes += buffer[0..<count] }
        }
    }
}

/// A connected loopback socket: the client's pair and the server's pair, all unopened.
final class Loopback {
    let listener: SocketListener
    let client: (input: ByteInputStream, output: ByteOutputStream)
    let server: (input: ByteInputStream, output: ByteOutputStream)

    init() throws {
        listener = try SocketListener(port: 0)
        client = try SocketStreams.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        server = try listener.accept()
    }

    /// Closes the four streams (closing twice is harmless) and the listener.
    func close() {
        for stream in [client.input, client.output, server.input, server.output] as [ByteStream] { stream.close() }
        try? listener.close()
    }
}

/// On `queue`: gives `stream` its delegate (held weakly: keep it), schedules it on `queue` and
/// opens it.
func scheduleAndOpen(_ stream: ByteStream, on queue: DispatchQueue, delegate: any ByteStreamDelegate) {
    queue.sync {
        stream.delegate = delegate
        stream.schedule(on: queue)
        stream.open()
    }
}

/// Runs `body` on a global queue; `wait()` on the group tells when it is done.
func peer(_ body: @escaping @Sendable () throws -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
        do { try body() } catch { Issue.record("peer failed: \(error)") }
    }
    return group
}

/// Writes `bytes` to `output` (opening it) in pieces of `pieceSize` with a pause of `pauseMicroseconds`
/// after each, then closes it.
func send(_ bytes: [UInt8], to output: ByteOutputStream, pieceSize: Int, pauseMicroseconds: UInt32 = 0) throws {
    if output.streamStatus == .notOpen { try output.openOrThrow() }
    for start in stride(from: 0, to: bytes.count, by: pieceSize) {
        try output.writeAll(bytes[start..<min(start + pieceSize, bytes.count)])
        if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
    }
    try output.closeOrThrow()
}

/// Reads `input` (opening it) to its end and unpacks what came.
func receivedPlainBytes(from input: ByteInputStream, limit: Int) throws -> [UInt8] {
    try input.openOrThrow()
    let decoded = unpack(try input.readToEnd(limit: limit))
    #expect(decoded.error == nil)
    return decoded.bytes
}

/// Bytes a peer received, read once the peer is done.
final class Received: @unchecked Sendable {
    var bytes: [UInt8] = []
}

/// Sets a socket buffer size (`SO_SNDBUF`, `SO_RCVBUF`) so that little data fills it.
func shrinkBuffer(of stream: ByteStream, _ option: Int32) {
    let fd = (stream as? SocketInputStream)?.fileDescriptor ?? (stream as! SocketOutputStream).fileDescriptor
    var size: Int32 = 16 * 1024
    _ = setsockopt(fd, SOL_SOCKET, option, &size, socklen_t(MemoryLayout<Int32>.size))
}

/// Whether `queue` runs a block within the bounded wait: a reader that blocks the queue fails.
func isResponsive(_ queue: DispatchQueue) -> Bool {
    let ran = DispatchSemaphore(value: 0)
    queue.async { ran.signal() }
    return ran.wait(timeout: deadline()) == .success
}

import ByteStreams
import Testing
import TestSupport
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers of the ByteStreams tests alone: pipes, stream probes and a delegate that records
// events. Seeded data and temporary directories come from TestSupport.

/// The edge sizes every reader is tried with (STYLE.md, "Tests").
let edgeSizes = [0, 1, 4095, 4096, 4097, 1 << 20 + 1]

/// How long a test waits for an event or another thread before it fails instead of hanging.
let waitLimit: DispatchTimeInterval = .seconds(5)

/// Writes `bytes` to `name` in `directory` and returns the path.
func makeFile(_ name: String, in directory: URL, bytes: [UInt8]) throws -> String {
    let url = directory.appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url.path
}

/// The bytes of the file at `path`.
func contents(of path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// A pipe(2) whose ends are closed at most once each, whoever closes them first.
final class TestPipe: @unchecked Sendable {
    private let lock = NSLock()
    private var ends: [Int32] = [-1, -1]

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw ByteStreamError(.system(errno: errno), operation: "pipe") }
        ends = fds
    }

    var readEnd: Int32 { lock.withLock { ends[0] } }
    var writeEnd: Int32 { lock.withLock { ends[1] } }

    /// Closes the read end unless it was closed or handed over already.
    func closeReadEnd() { close(index: 0) }
    /// Closes the write end unless it was closed or handed over already.
    func closeWriteEnd() { close(index: 1) }
    /// Records that a stream now owns the read end and will close it.
    func forgetReadEnd() { lock.withLock { ends[0] = -1 } }
    /// Records that a stream now owns the write end and will close it.
    func forgetWriteEnd() { lock.withLock { ends[1] = -1 } }

    private func close(index: Int) {
        let fd = lock.withLock { () -> Int32 in
            let fd = ends[index]
            ends[index] = -1
            return fd
        }
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// Writes all of `bytes` to the write end with write(2).
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress! + offset, bytes.count - offset) }
            if result < 0 {
                if errno == EINTR { continue }
                throw ByteStreamError(.system(errno: errno), operation: "write", target: "test pipe")
            }
            offset += result
        }
    }

    /// Reads the read end with read(2) until end of file.
    func readAll() throws -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ByteStreamError(.system(errno: errno), operation: "read", target: "test pipe")
            }
            if count == 0 { return result }
            result += chunk[0..<count]
        }
    }

    deinit {
        for fd in ends where fd >= 0 { _ = Glibc.close(fd) }
    }
}

/// Sets `O_NONBLOCK` on a descriptor.
func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
}

/// Ignores `SIGPIPE` so a write to a broken pipe fails with `EPIPE` rather than killing the
/// test process. Safe to call from several tests at once.
func ignoreSIGPIPE() {
    _ = signal(SIGPIPE, SIG_IGN)
}

/// Calls `read` once with `maxLength` and returns the result and the bytes read.
func readOnce(_ stream: ByteInputStream, maxLength: Int) -> (result: Int, bytes: [UInt8]) {
    var buffer = [UInt8](repeating: 0, count: max(maxLength, 1))
    let result = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: maxLength) }
    return (result, result > 0 ? Array(buffer[0..<result]) : [])
}

/// Calls `write` once with all of `bytes` and returns its result.
func writeOnce(_ stream: ByteOutputStream, _ bytes: [UInt8]) -> Int {
    if bytes.isEmpty {
        var none: UInt8 = 0
        return stream.write(&none, maxLength: 0)
    }
    return bytes.withUnsafeBufferPointer { stream.write($0.baseAddress!, maxLength: $0.count) }
}

/// Reads with `read` in chunks of `maxLength` until it returns 0 (or -1), keeping every result.
func readAllByChunks(_ stream: ByteInputStream, maxLength: Int) -> (bytes: [UInt8], results: [Int]) {
    var bytes: [UInt8] = []
    var results: [Int] = []
    while true {
        let (result, chunk) = readOnce(stream, maxLength: maxLength)
        results.append(result)
        bytes += chunk
        if result <= 0 || results.count > 10_000_000 { return (bytes, results) }
    }
}

/// The ``ByteStreamError`` code of an error, or `nil` when it is not a ``ByteStreamError``.
func code(of error: (any Error)?) -> ByteStreamError.Code? {
    (error as? ByteStreamError)?.code
}

/// The `errno` of an error, or `nil` when it is not a system ``ByteStreamError``.
func errnoValue(of error: (any Error)?) -> Int32? {
    (error as? ByteStreamError)?.errno
}

/// Whether the pipe's read end is still open somewhere: a write to the write end succeeds
/// while it is, and fails with `EPIPE` once every read end is closed.
func readEndIsOpen(_ pipe: TestPipe) -> Bool {
    ignoreSIGPIPE()
    var byte: UInt8 = 0x2A
    return Glibc.write(pipe.writeEnd, &byte, 1) == 1
}

// MARK: Probes

/// An input stream over fixed bytes that records what the base class asks of it.
final class ProbeInputStream: ByteInputStream {
    private let bytes: [UInt8]
    private var position = 0
    /// The largest number of bytes any read(2)-like call may return; simulates short reads.
    let mostPerRead: Int
    /// When set, every `readBytes` throws it (the count of calls is still kept).
    var readError: ByteStreamError?
    var openError: ByteStreamError?
    var closeError: ByteStreamError?
    private(set) var statusDuringOpen: Status?
    private(set) var statusDuringRead: Status?
    private(set) var readCalls = 0
    private(set) var closeCalls = 0
    private(set) var largestMaxLength = 0

    init(bytes: [UInt8], mostPerRead: Int = .max) {
        self.bytes = bytes
        self.mostPerRead = mostPerRead
        super.init()
    }

    override func openBacking() throws {
        statusDuringOpen = streamStatus
        if let openError { throw openError }
    }

    override func closeBacking() throws {
        closeCalls += 1
        if let closeError { throw closeError }
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        readCalls += 1
        statusDuringRead = streamStatus
        largestMaxLength = max(largestMaxLength, maxLength)
        if let readError { throw readError }
        let count = min(maxLength, mostPerRead, bytes.count - position)
        for index in 0..<count { buffer[index] = bytes[position + index] }
        position += count
        return count
    }
}

/// An output stream that keeps what it is given, taking at most `mostPerWrite` bytes a call.
final class ProbeOutputStream: ByteOutputStream {
    let mostPerWrite: Int
    var writeError: ByteStreamError?
    private(set) var received: [UInt8] = []
    private(set) var statusDuringWrite: Status?
    private(set) var writeCalls = 0
    private(set) var largestMaxLength = 0

    init(mostPerWrite: Int = .max) {
        self.mostPerWrite = mostPerWrite
        super.init()
    }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        writeCalls += 1
        statusDuringWrite = streamStatus
        largestMaxLength = max(largestMaxLength, maxLength)
        if let writeError { throw writeError }
        let count = min(maxLength, mostPerWrite)
        received += UnsafeBufferPointer(start: buffer, count: count)
        return count
    }
}

// MARK: Delegate

/// A delegate that records every event under a lock, optionally reads or writes in its
/// handler, and signals when the stream ends or fails.
final class EventRecorder: ScriptedDelegate, ByteStreamDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [ByteStream.Event] = []
    private var bytes: [UInt8] = []
    private var transfers: [Int] = []
    private let finished = DispatchSemaphore(value: 0)
    private let eventSeen = DispatchSemaphore(value: 0)
    private var sourceOffset = 0

    var events: [ByteStream.Event] { lock.withLock { recorded } }
    var bytesRead: [UInt8] { lock.withLock { bytes } }
    /// What each read or write made in a handler returned, in order.
    var transferResults: [Int] { lock.withLock { transfers } }
    /// The bytes of `source` written so far.
    var bytesWritten: Int { lock.withLock { sourceOffset } }
    /// Called after each event was handled (on the stream's queue), to close a stream, say.
    var afterEvent: ((ByteStream, ByteStream.Event) -> Void)?

    func stream(_ stream: ByteStream, handle event: ByteStream.Event) {
        lock.withLock { recorded.append(event) }
        if event == .hasBytesAvailable, let readLength, let input = stream as? ByteInputStream {
            let (result, chunk) = readOnce(input, maxLength: readLength)
            lock.withLock {
                bytes += chunk
                transfers.append(result)
            }
        }
        if event == .hasSpaceAvailable, writeLength != nil, let output = stream as? ByteOutputStream {
            let written = writeOnce(output, nextSlice(after: bytesWritten))
            lock.withLock {
                if written > 0 { sourceOffset += written }
                transfers.append(written)
            }
        }
        afterEvent?(stream, event)
        eventSeen.signal()
        if event == .endEncountered || event == .errorOccurred { finished.signal() }
    }

    /// Waits until `count` events have been handled in all; `false` on timeout.
    func waitForEvents(_ count: Int) -> Bool {
        while true {
            let seen = events.count
            if seen >= count { return true }
            if eventSeen.wait(timeout: .now() + waitLimit) == .timedOut { return false }
        }
    }

    /// Waits until the stream reports its end or an error; `false` on timeout.
    func waitUntilFinished() -> Bool {
        finished.wait(timeout: .now() + waitLimit) == .success
    }

    /// Waits at most `timeoutMilliseconds` for the end or an error; `false` on timeout.
    func waitUntilFinished(timeoutMilliseconds: Int) -> Bool {
        finished.wait(timeout: .now() + .milliseconds(timeoutMilliseconds)) == .success
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

/// Expects two byte sequences to be equal, reporting the sizes and the first differing offset
/// rather than a diff: `#expect(a == b)` on a failure diffs the arrays, which takes minutes
/// for a megabyte.
func expectSameBytes<Actual: Sequence, Expected: Sequence>(
    _ actual: Actual, _ expected: Expected, _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) where Actual.Element == UInt8, Expected.Element == UInt8 {
    let actual = Array(actual)
    let expected = Array(expected)
    if actual == expected { return }
    let common = min(actual.count, expected.count)
    let offset = (0..<common).first { actual[$0] != expected[$0] } ?? common
    var message = "bytes differ: got \(actual.count), expected \(expected.count); first difference at offset \(offset)"
    if let comment { message += " (\(comment))" }
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
}

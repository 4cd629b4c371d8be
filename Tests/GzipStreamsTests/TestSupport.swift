import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers of the GzipStreams tests alone: packing and unpacking in memory, an independent
// CRC-32, child processes (the hash command, gzip, python3), a failing inner stream and a probe for
// the z_stream inside a gzip stream. Seeded data, temporary directories, tools and fixtures
// come from TestSupport.

/// The edge sizes every path is tried with (STYLE.md, "Tests").
let edgeSizes = [0, 1, 4095, 4096, 4097, (1 << 20) + 1]

// MARK: CRC-32, independent of zlib

private let crcTable: [UInt32] = (0..<256).map { index in
    var value = UInt32(index)
    for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
    return value
}

/// CRC-32 (RFC 1952 §8), computed bit-table style without zlib, to check the library's value.
func referenceCRC32<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8) }
    return crc ^ 0xFFFF_FFFF
}

/// The little-endian `UInt32` at `offset` in `bytes`.
func littleEndianUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
}

/// The little-endian `UInt16` at `offset` in `bytes`.
func littleEndianUInt16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
    UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
}

/// Text with stretches of random bytes: both kinds of deflate block, and matches that reach
/// back across block boundaries.
func mixedBytes(count: Int, seed: UInt64) -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(count)
    var piece: UInt64 = 0
    while result.count < count {
        let length = min(count - result.count, 50_000 + Int(piece % 3) * 20_000)
        result += piece % 4 == 3 ? randomBytes(count: length, seed: seed &+ piece) : textBytes(count: length, seed: seed &+ piece)
        piece += 1
    }
    return result
}

// MARK: Packing and unpacking in memory

/// Writes all of `data` to `stream`, in writes whose sizes come from `writeSizes` in turn.
func writeInSlices(_ data: [UInt8], to stream: ByteOutputStream, writeSizes: [Int]) throws {
    var start = 0
    var turn = 0
    while start < data.count {
        let end = min(data.count, start + writeSizes[turn % writeSizes.count])
        try stream.writeAll(data[start..<end])
        start = end
        turn += 1
    }
}

/// Runs `body` until `count()` reads the same after it as before it, up to 50 times; `false`
/// if it never did. A leak in `body` leaves the count above its start every time; streams made
/// or ended by tests of other suites running at the same moment may disturb one try, which is
/// why it is retried.
func countBalances(_ count: () -> Int, around body: () throws -> Void) rethrows -> Bool {
    for _ in 0..<50 {
        let before = count()
        try body()
        if count() == before { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return false
}

/// `data` packed as one gzip member through ``GzipOutputStream`` into memory.
/// - Parameter writeSize: The most bytes offered per write.
func pack(_ data: [UInt8], level: Int = GzipOutputStream.defaultLevel, header: GzipHeader = GzipHeader(),
          chunkSize: Int = ByteStream.defaultChunkSize, writeSize: Int = 1 << 20) throws -> [UInt8] {
    let memory = MemoryOutputStream()
    let gzip = try GzipOutputStream(wrapping: memory, level: level, header: header, chunkSize: chunkSize)
    try gzip.openOrThrow()
    try writeInSlices(data, to: gzip, writeSizes: [writeSize])
    try gzip.closeOrThrow()
    #expect(gzip.compressedByteCount == Int64(memory.writtenCount))
    #expect(gzip.uncompressedByteCount == Int64(data.count))
    return [UInt8](memory.data)
}

/// What a gzip stream gave before it ended or failed.
struct Decoded {
    /// Every byte the reads returned.
    var bytes: [UInt8]
    /// The stream's error, or `nil` when a read returned `0`.
    var error: (any Error)?
    var gzipError: GzipError? { error as? GzipError }
}

/// Reads `stream` (opening it) until a read returns `0` or `-1`, `readSize` bytes at a time;
/// leaves it open.
func drain(_ stream: ByteInputStream, readSize: Int = 64 * 1024) -> Decoded {
    if stream.streamStatus == .notOpen { stream.open() }
    if stream.streamStatus == .error { return Decoded(bytes: [], error: stream.streamError) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: readSize)
    while true {
        let count = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: readSize) }
        if count < 0 { return Decoded(bytes: bytes, error: stream.streamError) }
        if count == 0 { return Decoded(bytes: bytes, error: nil) }
        bytes += buffer[0..<count]
    }
}

/// A gzip stream over a copy of `compressed` in memory, not yet opened.
func gunzipStream(_ compressed: [UInt8], chunkSize: Int = ByteStream.defaultChunkSize,
                  trailingGarbage: GzipInputStream.TrailingGarbagePolicy = .fail,
                  maximumOutputSize: Int? = nil, oneByteInner: Bool = false,
                  inflater: GzipInputStream.Inflater = .zlib) -> GzipInputStream {
    let memory = MemoryInputStream(bytes: compressed)
    let inner: ByteInputStream = oneByteInner ? OneByteInputStream(wrapping: memory) : memory
    return try! GzipInputStream(wrapping: inner, chunkSize: chunkSize, trailingGarbage: trailingGarbage,
                                maximumOutputSize: maximumOutputSize, inflater: inflater)
}

/// Unpacks `compressed` and closes the stream; returns what it gave.
func unpack(_ compressed: [UInt8], chunkSize: Int = ByteStream.defaultChunkSize, readSize: Int = 64 * 1024,
            trailingGarbage: GzipInputStream.TrailingGarbagePolicy = .fail, maximumOutputSize: Int? = nil,
            oneByteInner: Bool = false, inflater: GzipInputStream.Inflater = .zlib) -> Decoded {
    let stream = gunzipStream(compressed, chunkSize: chunkSize, trailingGarbage: trailingGarbage,
                              maximumOutputSize: maximumOutputSize, oneByteInner: oneByteInner, inflater: inflater)
    let result = drain(stream, readSize: readSize)
    stream.close()
    return result
}

// MARK: Inner streams for tests

/// Gives `bytes` up to `failAt`, then fails with ``failure`` as an I/O error would.
final class FailingInputStream: ByteInputStream {
    static let failure = ByteStreamError(.system(errno: EIO), operation: "read", target: "failing test stream")
    private let bytes: [UInt8]
    private let failAt: Int
    private var position = 0

    init(bytes: [UInt8], failAt: Int) {
        self.bytes = bytes
        self.failAt = failAt
        super.init()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = min(maxLength, failAt - position)
        if count <= 0 { throw Self.failure }
        for index in 0..<count { buffer[index] = bytes[position + index] }
        position += count
        return count
    }
}

// MARK: The z_stream inside a gzip stream

/// The `ZStream` a gzip stream holds right now, found by reflection (it is private), or `nil`.
func currentZStream(of stream: AnyObject) -> ZStream? {
    Mirror(reflecting: stream).children.first { $0.label == "zstream" }?.value as? ZStream
}

/// A weak reference, to learn whether an object was deallocated.
struct Weak<Object: AnyObject> {
    weak var object: Object?
}

// MARK: Files and child processes

/// Writes `bytes` to `name` in `directory` and returns the path.
func makeFile(_ name: String, in directory: URL, bytes: [UInt8]) throws -> String {
    let url = directory.appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url.path
}

struct ProcessResult {
    var status: Int32
    var stdout: [UInt8]
    var stderr: [UInt8]
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs `executable` with `arguments` and standard input from /dev/null; its standard output
/// and error go to temporary files (no pipe can fill up), read back after it exits.
func runProcess(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
    try withTemporaryDirectory { directory in
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try spawnLock.withLock { try process.run() }
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus,
                             stdout: [UInt8](try Data(contentsOf: outURL)),
                             stderr: [UInt8](try Data(contentsOf: errURL)))
    }
}

/// `python3` from the system, not a version manager's shim.
let python3 = "/usr/bin/python3"

/// Held from the creation of a pipe until its ends are close-on-exec and, for the helpers
/// here, until the child is spawned: no child spawned by another test at the same time may
/// inherit a pipe end (a stray write end would hold back the end of a child's input).
let spawnLock = NSLock()

/// A pipe whose two ends are close-on-exec (Glibc's Swift module has no `pipe2`).
/// Call with ``spawnLock`` held.
private func closeOnExecPipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else {
        throw ByteStreamError(.system(errno: errno), operation: "pipe")
    }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return (fds[0], fds[1])
}

private let ignoringSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

/// The SHA-256 of everything a stream gave, computed by ``HashCommand``.
struct HashedOutput {
    var sha256: String
    var byteCount: Int64
    /// The stream's error, or `nil` when it ended cleanly.
    var error: (any Error)?
    var gzipError: GzipError? { error as? GzipError }
}

/// Reads `input` (opening it, leaving it open) until it ends or fails, `readSize` bytes at a
/// time, and streams every byte into a ``HashCommand`` child through a pipe, written with our
/// ``FileOutputStream``. Memory: one buffer of `readSize` bytes, whatever the output's size.
func sha256OfOutput(_ input: ByteInputStream, readSize: Int = 256 * 1024) throws -> HashedOutput {
    _ = ignoringSIGPIPE
    let process = Process()
    process.executableURL = URL(fileURLWithPath: HashCommand.arguments[0])
    process.arguments = Array(HashCommand.arguments.dropFirst())
    let (toChild, fromChild) = try spawnLock.withLock {
        let toChild = try closeOnExecPipe()
        let fromChild: (read: Int32, write: Int32)
        do { fromChild = try closeOnExecPipe() } catch {
            close(toChild.read)
            close(toChild.write)
            throw error
        }
        process.standardInput = FileHandle(fileDescriptor: toChild.read, closeOnDealloc: false)
        process.standardOutput = FileHandle(fileDescriptor: fromChild.write, closeOnDealloc: false)
        do { try process.run() } catch {
            [toChild.read, toChild.write, fromChild.read, fromChild.write].forEach { _ = close($0) }
            throw error
        }
        return (toChild, fromChild)
    }
    close(toChild.read)
    close(fromChild.write)

    let sink = FileOutputStream(fileDescriptor: toChild.write, closesDescriptor: true)
    let source = FileInputStream(fileDescriptor: fromChild.read, closesDescriptor: true)
    defer {
        sink.close()
        source.close()
    }
    sink.open()
    if input.streamStatus == .notOpen { input.open() }
    let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: readSize)
    defer { buffer.deallocate() }
    var total: Int64 = 0
    var failure: (any Error)? = input.streamStatus == .error ? input.streamError : nil
    var sinkError: (any Error)?
    while failure == nil {
        let count = input.read(buffer, maxLength: readSize)
        if count < 0 {
            failure = input.streamError
            break
        }
        if count == 0 { break }
        total += Int64(count)
        do {
            try sink.writeAll(UnsafeRawBufferPointer(start: buffer, count: count))
        } catch {
            sinkError = error
            break
        }
    }
    sink.close()
    let answer = try source.readToEnd()
    process.waitUntilExit()
    if let sinkError { throw sinkError }
    guard process.terminationStatus == 0, let digest = HashCommand.digest(inOutput: answer) else {
        throw ByteStreamError(.innerStreamFailed, operation: HashCommand.arguments[0])
    }
    return HashedOutput(sha256: digest, byteCount: total,
                        error: failure)
}

/// The SHA-256 of `bytes`, by ``HashCommand``.
func sha256(of bytes: [UInt8]) throws -> String {
    let stream = MemoryInputStream(bytes: bytes)
    defer { stream.close() }
    return try sha256OfOutput(stream).sha256
}

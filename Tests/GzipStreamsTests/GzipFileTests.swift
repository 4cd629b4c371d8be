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

/// Passes writes to `inner` until `limit` bytes were taken, then fails them as a full disk
/// would; closes `inner` with itself.
private final class FillingOutputStream: ByteOutputStream {
    private let inner: ByteOutputStream
    private let limit: Int
    private var taken = 0

    init(_ inner: ByteOutputStream, limit: Int) {
        self.inner = inner
        self.limit = limit
        super.init()
    }

    override func openBacking() throws { try inner.openOrThrow() }
    override func closeBacking() throws { try inner.closeOrThrow() }
    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        if taken + maxLength > limit { throw ByteStreamError(.system(errno: ENOSPC), operation: "write", target: "filling") }
        try inner.writeAll(UnsafeRawBufferPointer(start: buffer, count: maxLength))
        taken += maxLength
        return maxLength
    }
}

/// The names in `directory`, sorted.
private func names(in directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
}

private struct Interrupted: Error {}

@Suite("Gzip files by path: initialisers, scoped helpers that finish what they open, the dropped-stream warning")
struct GzipFileTests {
    let text = Array("first line\nsecond line\n".utf8)

    @Test("withFile writes a whole member that withFile reads back; the bodies' results come out; no temporary file stays")
    func roundTrip() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("notes.gz").path
            let written = try GzipOutputStream.withFile(at: path, level: 9) { gzip in
                try gzip.writeAll(text)
                return gzip.uncompressedByteCount
            }
            #expect(written == Int64(text.count))
            #expect(try names(in: directory) == ["notes.gz"])
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))).gunzipped() == text)
            let read = try GzipInputStream.withFile(at: Pathname(path)) { try $0.readToEnd() }
            #expect(read == text)
        }
    }

    @Test("A body that throws, or a level out of range, leaves no file and an existing file as it was; the error comes out")
    func bodyThrows() throws {
        try withTemporaryDirectory { directory in
            let fresh = directory.appendingPathComponent("fresh.gz").path
            #expect(throws: Interrupted.self) {
                try GzipOutputStream.withFile(at: fresh) { gzip in
                    try gzip.writeAll(text)
                    throw Interrupted()
                }
            }
            let existing = try makeFile("existing.gz", in: directory, bytes: Array("old".utf8))
            #expect(throws: Interrupted.self) {
                try GzipOutputStream.withFile(at: existing) { _ in throw Interrupted() }
            }
            let level = #expect(throws: ByteStreamError.self) {
                try GzipOutputStream.withFile(at: existing, level: 13) { try $0.writeAll(text) }
            }
            #expect(level?.code == .invalidArgument(name: "level", message: "must be 0...12, not 13"))
            #expect(try names(in: directory) == ["existing.gz"])
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: existing))) == Array("old".utf8))
        }
    }

    @Test("A body that abandons the stream and returns: an error, and the existing file as it was (it was replaced by a header)")
    func bodyAbandons() throws {
        try withTemporaryDirectory { directory in
            let existing = try makeFile("data.gz", in: directory, bytes: try Array("good old data\n".utf8).gzipped())
            let error = #expect(throws: ByteStreamError.self) {
                let result: Bool = try GzipOutputStream.withFile(at: existing) { gzip in
                    try gzip.writeAll(Array("partial new da".utf8))
                    gzip.abandon()
                    return false
                }
                _ = result
            }
            #expect(error?.code == .invalidArgument(name: "body", message: "abandoned the stream, so nothing was written"))
            #expect(try names(in: directory) == ["data.gz"])
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: existing))).gunzipped() == Array("good old data\n".utf8))
        }
    }

    @Test("A trailer that cannot be written is thrown, and nothing is left at the path")
    func failedTrailerThrows() throws {
        try withTemporaryDirectory { (directory: URL) throws in
            let path = directory.appendingPathComponent("full.gz").path
            // The 10-byte header fits; the deflate data's end and the trailer do not.
            let error = #expect(throws: ByteStreamError.self) {
                try GzipOutputStream.withReplacementFile(at: Pathname(path), makeStream: { file throws(ByteStreamError) in
                    try GzipOutputStream(wrapping: FillingOutputStream(file, limit: 12))
                }) { gzip in try gzip.writeAll(text) }
            }
            #expect(error?.errno == ENOSPC)
            #expect(try names(in: directory).isEmpty)
        }
    }

    @Test("A symbolic link at the path is replaced by the file, its target left alone; a directory there is an error")
    func linkAndDirectory() throws {
        try withTemporaryDirectory { directory in
            let target = try makeFile("target", in: directory, bytes: Array("target".utf8))
            let link = directory.appendingPathComponent("link.gz").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            try GzipOutputStream.withFile(at: link) { try $0.writeAll(text) }
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: target))) == Array("target".utf8))
            #expect(try FileManager.default.attributesOfItem(atPath: link)[.type] as? FileAttributeType == .typeRegular)
            #expect(try GzipInputStream.withFile(at: link) { try $0.readToEnd() } == text)

            let subdirectory = directory.appendingPathComponent("dir")
            try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: false)
            let error = #expect(throws: ByteStreamError.self) {
                try GzipOutputStream.withFile(at: subdirectory.path) { try $0.writeAll(text) }
            }
            #expect(error?.errno == EISDIR)
            let slash = #expect(throws: ByteStreamError.self) {
                try GzipOutputStream.withFile(at: subdirectory.path + "/") { try $0.writeAll(text) }
            }
            #expect(slash?.errno == EISDIR)
            #expect(try names(in: directory) == ["dir", "link.gz", "target"])
        }
    }

    @Test("GzipInputStream.withFile throws a failed read the body ignored, and a missing file's errno")
    func inputErrors() throws {
        try withTemporaryDirectory { directory in
            let damaged = try makeFile("damaged.gz", in: directory, bytes: Array(try text.gzipped().dropLast(3)))
            #expect(throws: GzipError.self) {
                try GzipInputStream.withFile(at: damaged) { gzip in
                    var buffer = [UInt8](repeating: 0, count: 100)
                    while gzip.read(&buffer, maxLength: buffer.count) > 0 {}
                }
            }
            let missing = #expect(throws: ByteStreamError.self) {
                try GzipInputStream.withFile(at: directory.appendingPathComponent("missing.gz").path) { _ in }
            }
            #expect(missing?.errno == ENOENT)
        }
    }

    @Test("The asynchronous helpers run async bodies, and clean up after one that throws")
    func asyncHelpers() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("async.gz").path
            try await GzipOutputStream.withFile(at: path) { gzip in
                await Task.yield()
                try text.withUnsafeBytes { try gzip.writeAll($0) }
            }
            var chunks: [UInt8] = []
            try await GzipInputStream.withFile(at: path) { gzip in
                for try await chunk in gzip.chunks(maxLength: 5) { chunks += chunk }
            }
            #expect(chunks == text)
            await #expect(throws: Interrupted.self) {
                try await GzipOutputStream.withFile(at: path) { gzip in
                    await Task.yield()
                    try Array("replaced".utf8).withUnsafeBytes { try gzip.writeAll($0) }
                    throw Interrupted()
                }
            }
            #expect(try names(in: directory) == ["async.gz"])
            #expect(try GzipInputStream.withFile(at: path) { try $0.readToEnd() } == text)
        }
    }

    @Test("GzipOutputStream(path:) creates or truncates as FileOutputStream; GzipInputStream and BGZFInputStream(path:) read it")
    func pathInitializers() throws {
        try withTemporaryDirectory { directory in
            let path = try makeFile("out.gz", in: directory, bytes: [UInt8](repeating: 7, count: 10_000))
            let output = try GzipOutputStream(path: path, level: 1)
            try output.writeAll(text)
            try output.closeOrThrow()
            let input = try GzipInputStream(path: path)
            #expect(try input.readToEnd() == text)
            input.close()
            let bgzf = try BGZFInputStream(path: Pathname(path), threads: 2)
            #expect(try bgzf.readToEnd() == text)
            bgzf.close()
            #expect(throws: ByteStreamError.self) { try GzipOutputStream(path: path, level: 13) }
        }
    }

    #if DEBUG
    @Test("A GzipOutputStream dropped open says so once on standard error; one closed, or never opened, does not")
    func droppedOpenWarns() throws {
        let messages = QueueGuarded<[String]>([])
        let previous = droppedOutputWarningSink.withLock { sink in
            defer { sink = { message in messages.withLock { $0.append(message) } } }
            return sink
        }
        defer { droppedOutputWarningSink.withLock { $0 = previous } }
        // Distinctive sizes: other suites may drop streams while this test listens.
        func drop(count: Int, closing: Bool, opening: Bool = true) throws {
            let gzip = try GzipOutputStream(wrapping: MemoryOutputStream())
            if opening { try gzip.writeAll([UInt8](repeating: 1, count: count)) }
            if closing { try gzip.closeOrThrow() }
        }
        try drop(count: 12_345, closing: false)
        try drop(count: 23_456, closing: true)
        try drop(count: 0, closing: false, opening: false)
        let heard = messages.withLock { $0 }
        #expect(heard.filter { $0.contains(" 12345 plain bytes") }.count == 1)
        #expect(!heard.contains { $0.contains(" 23456 plain bytes") })
        #expect(heard.first { $0.contains(" 12345 plain bytes") }
                == "GzipStreams: warning: a GzipOutputStream was deinitialized without close() after 12345 plain bytes: "
                + "its output has no trailer and is not a valid gzip file (call closeOrThrow(), or use "
                + "GzipOutputStream.withFile(at:))\n")
    }
    #endif
}

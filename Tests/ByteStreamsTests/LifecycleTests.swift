import ByteStreams
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Every concrete stream, so that the lifecycle tests run over all of them.
enum Backing: String, CaseIterable, Sendable, CustomStringConvertible {
    case fileInputByPath, fileInputByDescriptor, memoryInput
    case fileOutputByPath, fileOutputByDescriptor, memoryOutputGrowing, memoryOutputFixed

    var description: String { rawValue }
}

/// One stream of a ``Backing`` and what it needs kept alive and released: its folder, the
/// descriptor it borrows, the buffer it writes into.
final class BackingFixture {
    static let content: [UInt8] = Array("abc".utf8)
    static let capacity = 64

    let stream: ByteStream
    private let directory: URL
    private var borrowedDescriptor: Int32 = -1
    private var buffer: UnsafeMutablePointer<UInt8>?

    init(_ backing: Backing) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ByteStreamsTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let input = try makeFile("input", in: directory, bytes: Self.content)
        let output = directory.appendingPathComponent("output").path
        switch backing {
        case .fileInputByPath:
            stream = FileInputStream(path: input)
        case .fileInputByDescriptor:
            borrowedDescriptor = Glibc.open(input, O_RDONLY | O_CLOEXEC)
            stream = FileInputStream(fileDescriptor: borrowedDescriptor)
        case .memoryInput:
            stream = MemoryInputStream(bytes: Self.content)
        case .fileOutputByPath:
            stream = FileOutputStream(path: output)
        case .fileOutputByDescriptor:
            borrowedDescriptor = Glibc.open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            stream = FileOutputStream(fileDescriptor: borrowedDescriptor)
        case .memoryOutputGrowing:
            stream = MemoryOutputStream()
        case .memoryOutputFixed:
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.capacity)
            self.buffer = buffer
            stream = MemoryOutputStream(buffer: buffer, capacity: Self.capacity)
        }
        if borrowedDescriptor < 0, backing == .fileInputByDescriptor || backing == .fileOutputByDescriptor {
            throw ByteStreamError(.system(errno: errno), operation: "open", target: "fixture")
        }
    }

    /// Reads (input) or writes (output) a few bytes and returns the call's result.
    func transfer() -> Int {
        switch stream {
        case let input as ByteInputStream: readOnce(input, maxLength: 1).result
        case let output as ByteOutputStream: writeOnce(output, Array("xyz".utf8))
        default: preconditionFailure("not a stream")
        }
    }

    var operation: String { stream is ByteInputStream ? "read" : "write" }

    deinit {
        if borrowedDescriptor >= 0 { _ = Glibc.close(borrowedDescriptor) }
        buffer?.deallocate()
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite("Lifecycle of every concrete stream", .onDedicatedThreads)
struct LifecycleTests {
    @Test("notOpen → open → (reading | writing) → open → closed, twice closed", arguments: Backing.allCases)
    func statusTransitions(backing: Backing) throws {
        let fixture = try BackingFixture(backing)
        let stream = fixture.stream
        #expect(stream.streamStatus == .notOpen)
        #expect(stream.streamError == nil)

        stream.open()
        #expect(stream.streamStatus == .open)
        #expect(stream.streamError == nil)
        if let input = stream as? ByteInputStream { #expect(input.hasBytesAvailable) }
        if let output = stream as? ByteOutputStream { #expect(output.hasSpaceAvailable) }

        #expect(fixture.transfer() > 0)
        #expect(stream.streamStatus == .open)

        stream.close()
        #expect(stream.streamStatus == .closed)
        #expect(stream.streamError == nil)
        stream.close()
        #expect(stream.streamStatus == .closed)
        #expect(stream.streamError == nil)
        if let input = stream as? ByteInputStream { #expect(!input.hasBytesAvailable) }
        if let output = stream as? ByteOutputStream { #expect(!output.hasSpaceAvailable) }
    }

    @Test("Input streams: reading the last byte leaves the stream open; the next read is 0 and .atEnd",
          arguments: [Backing.fileInputByPath, .fileInputByDescriptor, .memoryInput])
    func inputReachesEnd(backing: Backing) throws {
        let fixture = try BackingFixture(backing)
        let input = try #require(fixture.stream as? ByteInputStream)
        input.open()
        let (result, bytes) = readOnce(input, maxLength: 100)
        #expect(result == BackingFixture.content.count)
        #expect(bytes == BackingFixture.content)
        #expect(input.streamStatus == .open)

        #expect(readOnce(input, maxLength: 100).result == 0)
        #expect(input.streamStatus == .atEnd)
        #expect(!input.hasBytesAvailable)
        #expect(readOnce(input, maxLength: 100).result == 0, "reading at end keeps returning 0")
        #expect(input.streamStatus == .atEnd)
        #expect(input.streamError == nil)

        input.close()
        #expect(input.streamStatus == .closed)
        #expect(input.streamError == nil)
    }

    @Test("Read or write before open returns -1, records .notOpen, keeps .notOpen", arguments: Backing.allCases)
    func transferBeforeOpen(backing: Backing) throws {
        let fixture = try BackingFixture(backing)
        let stream = fixture.stream
        #expect(fixture.transfer() == -1)
        #expect(stream.streamStatus == .notOpen)
        let error = try #require(stream.streamError as? ByteStreamError)
        #expect(error.code == .notOpen)
        #expect(error.operation == fixture.operation)
        #expect(fixture.transfer() == -1, "a second misuse does not crash either")

        // The stream can still be opened and used afterwards.
        stream.open()
        #expect(stream.streamStatus == .open)
        #expect(fixture.transfer() > 0)
        stream.close()
        #expect(stream.streamStatus == .closed)
    }

    @Test("Read or write after close returns -1, records .notOpen, stays .closed", arguments: Backing.allCases)
    func transferAfterClose(backing: Backing) throws {
        let fixture = try BackingFixture(backing)
        let stream = fixture.stream
        stream.open()
        stream.close()
        #expect(fixture.transfer() == -1)
        #expect(stream.streamStatus == .closed)
        #expect(code(of: stream.streamError) == .notOpen)
        #expect((stream.streamError as? ByteStreamError)?.operation == fixture.operation)
        #expect(fixture.transfer() == -1)
        #expect(stream.streamStatus == .closed)
        stream.close()
        #expect(stream.streamStatus == .closed)
    }

    @Test("Closing a stream that was never opened is harmless, and it cannot be opened after",
          arguments: Backing.allCases)
    func closeWithoutOpen(backing: Backing) throws {
        let fixture = try BackingFixture(backing)
        let stream = fixture.stream
        stream.close()
        #expect(stream.streamStatus == .closed)
        stream.close()
        #expect(stream.streamStatus == .closed)
        #expect(stream.streamError == nil)
        stream.open()
        #expect(stream.streamStatus == .closed, "open after close does nothing, as in Cocoa")
        #expect(fixture.transfer() == -1)
        #expect(code(of: stream.streamError) == .notOpen)
    }

    @Test("Opening an open stream does nothing", arguments: [Backing.fileInputByPath, .memoryInput])
    func openTwice(backing: Backing) throws {
        let fixture = try BackingFixture(backing)
        let input = try #require(fixture.stream as? ByteInputStream)
        input.open()
        #expect(readOnce(input, maxLength: 1).bytes == [BackingFixture.content[0]])
        input.open()
        #expect(input.streamStatus == .open)
        #expect(readOnce(input, maxLength: 1).bytes == [BackingFixture.content[1]], "open did not rewind")
        input.close()
    }

    @Test("Opening at end or after an error does nothing")
    func openAfterEndOrError() {
        let input = MemoryInputStream(bytes: [])
        input.open()
        #expect(readOnce(input, maxLength: 1).result == 0)
        input.open()
        #expect(input.streamStatus == .atEnd)

        let missing = FileInputStream(path: "/nonexistent-\(UUID().uuidString)")
        missing.open()
        missing.open()
        #expect(missing.streamStatus == .error)
        #expect(errnoValue(of: missing.streamError) == ENOENT)
    }

    @Test("The base class passes .opening, .reading and .writing to the hooks")
    func statusInsideHooks() throws {
        let input = ProbeInputStream(bytes: [1, 2, 3])
        input.open()
        #expect(input.statusDuringOpen == .opening)
        #expect(readOnce(input, maxLength: 2).result == 2)
        #expect(input.statusDuringRead == .reading)
        #expect(input.streamStatus == .open)
        input.close()
        #expect(input.closeCalls == 1)
        input.close()
        #expect(input.closeCalls == 1, "the backing is released once")

        let output = ProbeOutputStream()
        output.open()
        #expect(writeOnce(output, [1, 2]) == 2)
        #expect(output.statusDuringWrite == .writing)
        #expect(output.streamStatus == .open)
        output.close()
    }

    @Test("A stream closed without being opened releases its backing once and reads nothing")
    func closeBackingCalledOnceWithoutOpen() {
        let input = ProbeInputStream(bytes: [1])
        input.close()
        input.close()
        #expect(input.closeCalls == 1, "a backing it was handed (a descriptor) must still be released")
        #expect(input.readCalls == 0)
        #expect(input.streamStatus == .closed)
    }

    @Test("Zero-length reads and writes return 0 and change nothing")
    func zeroLength() {
        let input = MemoryInputStream(bytes: [1, 2, 3])
        input.open()
        #expect(readOnce(input, maxLength: 0).result == 0)
        #expect(input.streamStatus == .open, "a read of 0 bytes is not the end")
        #expect(input.remainingCount == 3)
        input.close()

        let empty = MemoryInputStream(bytes: [])
        empty.open()
        #expect(readOnce(empty, maxLength: 0).result == 0)
        #expect(empty.streamStatus == .open)
        #expect(readOnce(empty, maxLength: 1).result == 0)
        #expect(empty.streamStatus == .atEnd)

        let output = MemoryOutputStream()
        output.open()
        #expect(writeOnce(output, []) == 0)
        #expect(output.streamStatus == .open)
        #expect(output.writtenCount == 0)
    }
}

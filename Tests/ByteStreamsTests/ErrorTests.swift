import ByteStreams
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("Errors: sticky errors, ByteStreamError, descriptions", .onDedicatedThreads)
struct ErrorTests {
    @Test("After a read error, reads return -1, the backing is not called again, the first error stays")
    func stickyReadError() throws {
        let input = ProbeInputStream(bytes: [1, 2, 3])
        input.open()
        let first = ByteStreamError(.system(errno: EIO), operation: "read", target: "disk")
        input.readError = first
        #expect(readOnce(input, maxLength: 2).result == -1)
        #expect(input.streamStatus == .error)
        #expect(input.streamError as? ByteStreamError == first)
        #expect(!input.hasBytesAvailable)

        input.readError = ByteStreamError(.system(errno: EBADF), operation: "read")
        #expect(readOnce(input, maxLength: 2).result == -1)
        #expect(readOnce(input, maxLength: 0).result == -1, "even a read of 0 reports the error")
        #expect(input.readCalls == 1)
        #expect(input.streamError as? ByteStreamError == first)
        let thrown = #expect(throws: ByteStreamError.self) { try input.readChunk() }
        #expect(thrown == first)

        input.close()
        #expect(input.closeCalls == 1, "close still releases the backing after an error")
        #expect(input.streamStatus == .error)
        #expect(input.streamError as? ByteStreamError == first)
        #expect(throws: ByteStreamError.self) { try input.closeOrThrow() }
    }

    @Test("After a write error, writes return -1 and the first error stays")
    func stickyWriteError() throws {
        let output = ProbeOutputStream()
        output.open()
        let first = ByteStreamError(.system(errno: ENOSPC), operation: "write", target: "disk")
        output.writeError = first
        #expect(writeOnce(output, [1]) == -1)
        #expect(output.streamStatus == .error)
        #expect(!output.hasSpaceAvailable)
        output.writeError = nil
        #expect(writeOnce(output, [1]) == -1)
        #expect(writeOnce(output, []) == -1)
        #expect(output.writeCalls == 1)
        #expect(output.streamError as? ByteStreamError == first)
        #expect(output.received.isEmpty)
    }

    @Test("A failed open is sticky, and close keeps it")
    func stickyOpenError() throws {
        let input = ProbeInputStream(bytes: [1])
        let first = ByteStreamError(.system(errno: EMFILE), operation: "open", target: "x")
        input.openError = first
        input.open()
        #expect(input.streamStatus == .error)
        #expect(input.streamError as? ByteStreamError == first)
        #expect(readOnce(input, maxLength: 1).result == -1)
        #expect(input.readCalls == 0)
        input.close()
        #expect(input.streamStatus == .error)
        #expect(input.streamError as? ByteStreamError == first)
    }

    @Test("An error while closing puts the stream in .error; an earlier error wins")
    func closeErrors() throws {
        let closeError = ByteStreamError(.system(errno: EIO), operation: "close", target: "x")
        let input = ProbeInputStream(bytes: [1])
        input.closeError = closeError
        input.open()
        input.close()
        #expect(input.streamStatus == .error)
        #expect(input.streamError as? ByteStreamError == closeError)
        input.close()
        #expect(input.closeCalls == 1)

        let earlier = ByteStreamError(.system(errno: ENOSPC), operation: "read")
        let both = ProbeInputStream(bytes: [1])
        both.open()
        both.readError = earlier
        _ = readOnce(both, maxLength: 1)
        both.closeError = closeError
        both.close()
        #expect(both.closeCalls == 1)
        #expect(both.streamError as? ByteStreamError == earlier)
    }

    @Test("Misuse after an error keeps the first error")
    func misuseAfterError() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 2)
        defer { buffer.deallocate() }
        let output = MemoryOutputStream(buffer: buffer, capacity: 2)
        output.open()
        #expect(writeOnce(output, [1, 2, 3]) == 2)
        #expect(writeOnce(output, [3]) == -1)
        output.close()
        #expect(writeOnce(output, [3]) == -1)
        #expect(code(of: output.streamError) == .noSpaceAvailable)
    }

    @Test("A real file error is sticky too: a directory read twice")
    func stickyFileError() throws {
        try withTemporaryDirectory { directory throws in
            let input = FileInputStream(path: directory.path)
            input.open()
            _ = readOnce(input, maxLength: 1)
            let first = try #require(input.streamError as? ByteStreamError)
            #expect(readOnce(input, maxLength: 1).result == -1)
            #expect(input.streamError as? ByteStreamError == first)
            #expect(first.errno == EISDIR)
            #expect(first.operation == "read" || first.operation == "open")
            #expect(first.target == directory.path)
        }
    }

    /// One ByteStreamError and the text a user should read.
    struct DescriptionCase: Sendable, CustomStringConvertible {
        var error: ByteStreamError
        var reason: String
        var text: String
        var errno: Int32?
        var description: String { text }
    }

    @Test("ByteStreamError says what, where and why", arguments: [
        DescriptionCase(error: ByteStreamError(.notOpen, operation: "read"),
                        reason: "stream is not open", text: "read: stream is not open", errno: nil),
        DescriptionCase(error: ByteStreamError(.system(errno: ENOENT), operation: "open", target: "/tmp/x"),
                        reason: "No such file or directory",
                        text: "open /tmp/x: No such file or directory", errno: ENOENT),
        DescriptionCase(error: ByteStreamError(.system(errno: EPIPE), operation: "write", target: "standard output"),
                        reason: "Broken pipe", text: "write standard output: Broken pipe", errno: EPIPE),
        DescriptionCase(error: ByteStreamError(.noSpaceAvailable, operation: "write"),
                        reason: "no space left in the buffer", text: "write: no space left in the buffer", errno: nil),
        DescriptionCase(error: ByteStreamError(.innerStreamFailed, operation: "read", target: "a.gz"),
                        reason: "inner stream failed", text: "read a.gz: inner stream failed", errno: nil),
    ])
    func errorText(_ testCase: DescriptionCase) {
        #expect(testCase.error.reason == testCase.reason)
        #expect(testCase.error.description == testCase.text)
        #expect(String(describing: testCase.error) == testCase.text)
        #expect(testCase.error.errno == testCase.errno)
    }

    @Test("ByteStreamError equality compares code, operation and target")
    func errorEquality() {
        let error = ByteStreamError(.system(errno: EIO), operation: "read", target: "x")
        #expect(error == ByteStreamError(.system(errno: EIO), operation: "read", target: "x"))
        #expect(error != ByteStreamError(.system(errno: EINTR), operation: "read", target: "x"))
        #expect(error != ByteStreamError(.system(errno: EIO), operation: "write", target: "x"))
        #expect(error != ByteStreamError(.system(errno: EIO), operation: "read", target: nil))
    }

    @Test("Status descriptions", arguments: [
        (ByteStream.Status.notOpen, "not open"), (.opening, "opening"), (.open, "open"), (.reading, "reading"),
        (.writing, "writing"), (.atEnd, "at end"), (.closed, "closed"), (.error, "error"),
    ])
    func statusText(status: ByteStream.Status, text: String) {
        #expect(status.description == text)
    }

    @Test("Event descriptions, single and combined")
    func eventText() {
        #expect(ByteStream.Event.openCompleted.description == "open completed")
        #expect(ByteStream.Event.hasBytesAvailable.description == "has bytes available")
        #expect(ByteStream.Event.hasSpaceAvailable.description == "has space available")
        #expect(ByteStream.Event.errorOccurred.description == "error occurred")
        #expect(ByteStream.Event.endEncountered.description == "end encountered")
        #expect(([.openCompleted, .endEncountered] as ByteStream.Event).description
                == "open completed, end encountered")
        #expect(ByteStream.Event([]).description == "")
        let all: [ByteStream.Event] = [.openCompleted, .hasBytesAvailable, .hasSpaceAvailable, .errorOccurred,
                                       .endEncountered]
        #expect(Set(all.map(\.rawValue)).count == 5, "distinct bits")
    }

    @Test("Property keys are distinct")
    func propertyKeys() {
        #expect(ByteStream.PropertyKey.fileCurrentOffset != .dataWrittenToMemoryStream)
        #expect(ByteStream.PropertyKey(rawValue: "fileCurrentOffset") == .fileCurrentOffset)
    }
}

import ByteStreams
import Dispatch
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("FileInputStream and FileOutputStream", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct FileStreamTests {
    // MARK: Open failures

    @Test("A missing file: open fails with ENOENT, the error names the operation and path")
    func missingFile() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory.appendingPathComponent("missing").path
            let input = FileInputStream(path: path)
            input.open()
            #expect(input.streamStatus == .error)
            let error = try #require(input.streamError as? ByteStreamError)
            #expect(error.code == .system(errno: ENOENT))
            #expect(error.errno == ENOENT)
            #expect(error.operation == "open")
            #expect(error.target == path)
            #expect(error.description == "open \(path): No such file or directory")
            #expect(!input.hasBytesAvailable)
            #expect(input.fileDescriptor == -1)

            #expect(readOnce(input, maxLength: 10).result == -1)
            #expect(input.streamError as? ByteStreamError == error, "the first error stays")
            input.close()
            #expect(input.streamStatus == .error, "close keeps the failure visible")
            #expect(input.streamError as? ByteStreamError == error)
            input.close()
            #expect(input.streamStatus == .error)

            let thrown = #expect(throws: ByteStreamError.self) { try FileInputStream(path: path).openOrThrow() }
            #expect(thrown?.errno == ENOENT)
        }
    }

    @Test("Reading a directory fails with EISDIR (at open or at the first read)")
    func readDirectory() throws {
        try withTemporaryDirectory { directory throws in
            let input = FileInputStream(path: directory.path)
            input.open()
            if input.streamStatus != .error {
                #expect(readOnce(input, maxLength: 10).result == -1)
            }
            #expect(input.streamStatus == .error)
            #expect(errnoValue(of: input.streamError) == EISDIR)
            #expect(readOnce(input, maxLength: 10).result == -1)
            #expect(errnoValue(of: input.streamError) == EISDIR)
            input.close()
            #expect(input.streamStatus == .error)

            let thrown = #expect(throws: ByteStreamError.self) {
                _ = try FileInputStream(path: directory.path).readToEnd()
            }
            #expect(thrown?.errno == EISDIR)
        }
    }

    @Test("Writing to a directory fails at open with EISDIR; in a missing folder with ENOENT")
    func outputOpenFailures() throws {
        try withTemporaryDirectory { directory throws in
            let toDirectory = FileOutputStream(path: directory.path)
            toDirectory.open()
            #expect(toDirectory.streamStatus == .error)
            #expect(errnoValue(of: toDirectory.streamError) == EISDIR)
            #expect(writeOnce(toDirectory, [1]) == -1)
            #expect(errnoValue(of: toDirectory.streamError) == EISDIR)
            toDirectory.close()

            let inMissingFolder = FileOutputStream(path: directory.appendingPathComponent("no/such/file").path)
            let thrown = #expect(throws: ByteStreamError.self) { try inMissingFolder.openOrThrow() }
            #expect(thrown?.errno == ENOENT)
            #expect(thrown?.operation == "open")
            #expect(inMissingFolder.streamStatus == .error)
        }
    }

    @Test("An unreadable file fails with EACCES", .enabled(if: geteuid() != 0, "root reads any file"))
    func unreadableFile() throws {
        try withTemporaryDirectory { directory throws in
            let path = try makeFile("secret", in: directory, bytes: [1, 2, 3])
            #expect(chmod(path, 0) == 0)
            let input = FileInputStream(path: path)
            input.open()
            #expect(input.streamStatus == .error)
            #expect(errnoValue(of: input.streamError) == EACCES)
        }
    }

    @Test("A bad descriptor fails at the first read with EBADF")
    func badDescriptor() {
        let input = FileInputStream(fileDescriptor: -1)
        input.open()
        #expect(input.streamStatus == .open, "a descriptor stream has nothing to open")
        #expect(readOnce(input, maxLength: 1).result == -1)
        #expect(input.streamStatus == .error)
        #expect(errnoValue(of: input.streamError) == EBADF)
        #expect((input.streamError as? ByteStreamError)?.target == "descriptor -1")
    }

    // MARK: Reading sizes

    @Test("A file of an edge size reads back whole in chunks of 4096", arguments: edgeSizes)
    func fileSizes(size: Int) throws {
        try withTemporaryDirectory { directory throws in
            let content = randomBytes(count: size, seed: UInt64(size))
            let path = try makeFile("data", in: directory, bytes: content)
            let input = FileInputStream(path: path)
            input.open()
            let (bytes, results) = readAllByChunks(input, maxLength: 4096)
            expectSameBytes(bytes, content)
            #expect(results.last == 0)
            #expect(results.dropLast().allSatisfy { $0 > 0 && $0 <= 4096 })
            #expect(input.streamStatus == .atEnd)
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == Int64(size))
            input.close()
            #expect(input.streamStatus == .closed)

            expectSameBytes(try FileInputStream(path: path).readToEnd(), content)
        }
    }

    @Test("A read with maxLength one less, equal or one more than a file's size",
          arguments: [1, 4095, 4096, 4097, 1 << 20 + 1], [-1, 0, 1])
    func oneRead(size: Int, delta: Int) throws {
        try withTemporaryDirectory { directory throws in
            let content = randomBytes(count: size, seed: 7)
            let path = try makeFile("data", in: directory, bytes: content)
            let input = FileInputStream(path: path)
            input.open()
            defer { input.close() }
            let maxLength = size + delta
            let (result, bytes) = readOnce(input, maxLength: maxLength)
            // A regular file gives every byte asked for that it has.
            #expect(result == min(maxLength, size))
            expectSameBytes(bytes, Array(content.prefix(maxLength)))
            #expect(input.streamStatus == .open, "a read that returns bytes is never the end")
        }
    }

    @Test("A short read (maxLength smaller than the content) returns exactly maxLength bytes")
    func shortReadFromFile() throws {
        try withTemporaryDirectory { directory throws in
            let content = randomBytes(count: 100)
            let path = try makeFile("data", in: directory, bytes: content)
            let input = FileInputStream(path: path)
            input.open()
            let first = readOnce(input, maxLength: 10)
            #expect(first.result == 10)
            #expect(first.bytes == Array(content[0..<10]))
            #expect(input.streamStatus == .open)
            #expect(input.hasBytesAvailable)
            let second = readOnce(input, maxLength: 30)
            #expect(second.bytes == Array(content[10..<40]))
            #expect(try input.readToEnd() == Array(content[40...]))
            #expect(input.streamStatus == .atEnd)
            input.close()
        }
    }

    @Test("getBuffer is not offered by file streams")
    func fileHasNoBuffer() throws {
        try withTemporaryDirectory { directory throws in
            let input = FileInputStream(path: try makeFile("data", in: directory, bytes: [1, 2]))
            input.open()
            var pointer: UnsafeMutablePointer<UInt8>?
            var length = -1
            #expect(!input.getBuffer(&pointer, length: &length))
            input.close()
        }
    }

    // MARK: Pipes

    @Test("A pipe: a short read is not the end; the end comes when the writer closes")
    func pipeShortRead() throws {
        let pipe = try TestPipe()
        let input = FileInputStream(fileDescriptor: pipe.readEnd)
        #expect(input.displayName == "descriptor \(pipe.readEnd)")
        #expect(input.fileDescriptor == pipe.readEnd)
        input.open()
        #expect(input.streamStatus == .open)

        try pipe.write(Array("hello".utf8))
        let first = readOnce(input, maxLength: 100)
        #expect(first.result == 5)
        #expect(first.bytes == Array("hello".utf8))
        #expect(input.streamStatus == .open, "fewer bytes than asked for is not the end")
        #expect(input.hasBytesAvailable)

        try pipe.write(Array("abc".utf8))
        #expect(readOnce(input, maxLength: 2).bytes == Array("ab".utf8))
        #expect(readOnce(input, maxLength: 100).bytes == Array("c".utf8))

        pipe.closeWriteEnd()
        #expect(readOnce(input, maxLength: 100).result == 0)
        #expect(input.streamStatus == .atEnd)
        input.close()
        #expect(input.streamStatus == .closed)
        #expect(input.streamError == nil)
    }

    @Test("A pipe has no offset: fileCurrentOffset is nil and cannot be set")
    func pipeHasNoOffset() throws {
        let pipe = try TestPipe()
        let input = FileInputStream(fileDescriptor: pipe.readEnd)
        input.open()
        #expect(input.property(forKey: .fileCurrentOffset) == nil)
        #expect(!input.setProperty(Int64(0), forKey: .fileCurrentOffset))
        #expect(input.streamStatus == .open, "a refused seek is not an error")
        let output = FileOutputStream(fileDescriptor: pipe.writeEnd)
        output.open()
        #expect(output.property(forKey: .fileCurrentOffset) == nil)
        #expect(!output.setProperty(Int64(0), forKey: .fileCurrentOffset))
        input.close()
        output.close()
    }

    @Test("1 MiB + 1 through a pipe, written by another thread, read in chunks")
    func bigPipe() throws {
        let pipe = try TestPipe()
        let content = randomBytes(count: 1 << 20 + 1, seed: 99)
        let writerDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? pipe.write(content)
            pipe.closeWriteEnd()
            writerDone.signal()
        }
        let input = FileInputStream(fileDescriptor: pipe.readEnd)
        input.open()
        let (bytes, results) = readAllByChunks(input, maxLength: 4096)
        expectSameBytes(bytes, content)
        #expect(results.last == 0)
        #expect(input.streamStatus == .atEnd)
        input.close()
        #expect(writerDone.wait(timeout: .now() + waitLimit) == .success)
    }

    @Test("A non-blocking pipe: read waits for data instead of failing with EAGAIN")
    func nonBlockingRead() throws {
        let pipe = try TestPipe()
        setNonBlocking(pipe.readEnd)
        let input = FileInputStream(fileDescriptor: pipe.readEnd)
        input.open()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            try? pipe.write(Array("late".utf8))
            pipe.closeWriteEnd()
        }
        let first = readOnce(input, maxLength: 100)
        #expect(first.result == 4)
        #expect(first.bytes == Array("late".utf8))
        #expect(input.streamError == nil)
        #expect(readOnce(input, maxLength: 100).result == 0)
        #expect(input.streamStatus == .atEnd)
        input.close()
    }

    @Test("A non-blocking pipe: writeAll of 1 MiB + 1 waits for room instead of failing with EAGAIN")
    func nonBlockingWrite() throws {
        let pipe = try TestPipe()
        setNonBlocking(pipe.writeEnd)
        let content = randomBytes(count: 1 << 20 + 1, seed: 5)
        let received = Locked<[UInt8]>([])
        let readerDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let bytes = (try? pipe.readAll()) ?? []
            received.value = bytes
            readerDone.signal()
        }
        let output = FileOutputStream(fileDescriptor: pipe.writeEnd, closesDescriptor: true)
        pipe.forgetWriteEnd()
        output.open()
        #expect(throws: Never.self) { try output.writeAll(content) }
        output.close()
        #expect(output.streamStatus == .closed)
        #expect(readerDone.wait(timeout: .now() + waitLimit) == .success,
                "the reader saw end of file: the stream closed the descriptor it owns")
        expectSameBytes(received.value, content)
    }

    @Test("Writing to a pipe whose read end is closed fails with EPIPE")
    func brokenPipe() throws {
        ignoreSIGPIPE()
        let pipe = try TestPipe()
        pipe.closeReadEnd()
        let output = FileOutputStream(fileDescriptor: pipe.writeEnd)
        output.open()
        #expect(writeOnce(output, [1, 2, 3]) == -1)
        #expect(output.streamStatus == .error)
        let error = try #require(output.streamError as? ByteStreamError)
        #expect(error.errno == EPIPE)
        #expect(error.operation == "write")
        #expect(error.target == "descriptor \(pipe.writeEnd)")
        #expect(!output.hasSpaceAvailable)
        output.close()
        #expect(output.streamStatus == .error)

        let again = FileOutputStream(fileDescriptor: pipe.writeEnd)
        let thrown = #expect(throws: ByteStreamError.self) { try again.writeAll(Array("data".utf8)) }
        #expect(thrown?.errno == EPIPE)
    }

}

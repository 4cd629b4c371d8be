import ByteStreams
import Dispatch
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// FileInputStream and FileOutputStream, continued: descriptor ownership, the file offset, and
// FileOutputStream.

extension FileStreamTests {
    // MARK: Descriptor ownership

    @Test("A descriptor stream closes its descriptor only when it owns it", arguments: [false, true])
    func inputDescriptorOwnership(closesDescriptor: Bool) throws {
        let pipe = try TestPipe()
        let input = FileInputStream(fileDescriptor: pipe.readEnd, closesDescriptor: closesDescriptor)
        if closesDescriptor { pipe.forgetReadEnd() }
        input.open()
        input.close()
        #expect(readEndIsOpen(pipe) == !closesDescriptor)
    }

    @Test("An output descriptor stream closes its descriptor only when it owns it", arguments: [false, true])
    func outputDescriptorOwnership(closesDescriptor: Bool) throws {
        let pipe = try TestPipe()
        let output = FileOutputStream(fileDescriptor: pipe.writeEnd, closesDescriptor: closesDescriptor)
        if closesDescriptor { pipe.forgetWriteEnd() }
        output.open()
        #expect(writeOnce(output, [7]) == 1)
        output.close()
        setNonBlocking(pipe.readEnd)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(Glibc.read(pipe.readEnd, &buffer, 8) == 1)
        let result = Glibc.read(pipe.readEnd, &buffer, 8)
        if closesDescriptor {
            #expect(result == 0, "end of file: the only write end was closed")
        } else {
            #expect(result == -1 && errno == EAGAIN, "the write end is still open")
        }
    }

    // Known bug (ByteStream.close skips closeBacking for a stream still .notOpen): a stream
    // given a descriptor to own leaks it when closed without being opened.
    @Test("An input stream that owns its descriptor releases it even when closed without being opened")
    func ownedInputDescriptorClosedWithoutOpen() throws {
        let pipe = try TestPipe()
        let input = FileInputStream(fileDescriptor: pipe.readEnd, closesDescriptor: true)
        input.close()
        let stillOpen = readEndIsOpen(pipe)
        #expect(stillOpen == false, "close() should release a descriptor the stream was given to own")
        if !stillOpen { pipe.forgetReadEnd() }
    }

    @Test("An output stream that owns its descriptor releases it even when closed without being opened")
    func ownedOutputDescriptorClosedWithoutOpen() throws {
        let pipe = try TestPipe()
        let output = FileOutputStream(fileDescriptor: pipe.writeEnd, closesDescriptor: true)
        output.close()
        setNonBlocking(pipe.readEnd)
        var byte: UInt8 = 0
        let result = Glibc.read(pipe.readEnd, &byte, 1)
        #expect(result == 0, "end of file: close() should release the write end the stream was given to own")
        if result == 0 { pipe.forgetWriteEnd() }
    }

    @Test("A path stream's descriptor is -1 before open and after close")
    func pathDescriptorLifetime() throws {
        try withTemporaryDirectory { directory throws in
            let path = try makeFile("data", in: directory, bytes: [1])
            let input = FileInputStream(path: path)
            #expect(input.fileDescriptor == -1)
            #expect(input.displayName == path)
            input.open()
            #expect(input.fileDescriptor >= 0)
            #expect(fcntl(input.fileDescriptor, F_GETFD) & FD_CLOEXEC != 0, "opened with O_CLOEXEC")
            input.close()
            #expect(input.fileDescriptor == -1)

            let output = FileOutputStream(path: directory.appendingPathComponent("out").path)
            #expect(output.fileDescriptor == -1)
            output.open()
            #expect(output.fileDescriptor >= 0)
            output.close()
            #expect(output.fileDescriptor == -1)
        }
    }

    @Test("A descriptor stream given a displayName uses it in errors")
    func descriptorDisplayName() throws {
        let input = FileInputStream(fileDescriptor: -1, displayName: "in.gz")
        #expect(input.displayName == "in.gz")
        input.open()
        #expect(readOnce(input, maxLength: 1).result == -1)
        let readError = try #require(input.streamError as? ByteStreamError)
        #expect(readError.target == "in.gz")
        #expect(readError.description == "read in.gz: \(String(cString: strerror(EBADF)))")

        ignoreSIGPIPE()
        let pipe = try TestPipe()
        pipe.closeReadEnd()
        let output = FileOutputStream(fileDescriptor: pipe.writeEnd, displayName: "out.gz")
        #expect(output.displayName == "out.gz")
        let thrown = #expect(throws: ByteStreamError.self) { try output.writeAll([1]) }
        #expect(thrown?.target == "out.gz")
        #expect(thrown?.errno == EPIPE)
        #expect(FileOutputStream(fileDescriptor: STDOUT_FILENO, displayName: "named").displayName == "named")
        #expect(FileInputStream(fileDescriptor: STDIN_FILENO, displayName: "named").displayName == "named")
    }

    @Test("Standard streams are named and not opened by creating them")
    func standardStreams() {
        #expect(FileInputStream.standardInput().displayName == "standard input")
        #expect(FileInputStream.standardInput().fileDescriptor == STDIN_FILENO)
        #expect(FileOutputStream.standardOutput().displayName == "standard output")
        #expect(FileOutputStream.standardOutput().fileDescriptor == STDOUT_FILENO)
        #expect(FileOutputStream.standardError().displayName == "standard error")
        #expect(FileOutputStream.standardError().fileDescriptor == STDERR_FILENO)
        #expect(FileInputStream.standardInput().streamStatus == .notOpen)
    }

    // MARK: fileCurrentOffset

    @Test("fileCurrentOffset on input: read it, seek with it, and make an ended stream readable again")
    func inputOffset() throws {
        try withTemporaryDirectory { directory throws in
            let content = (0..<100).map { UInt8($0) }
            let input = FileInputStream(path: try makeFile("data", in: directory, bytes: content))
            #expect(input.property(forKey: .fileCurrentOffset) == nil, "no descriptor before open")
            #expect(!input.setProperty(Int64(5), forKey: .fileCurrentOffset))
            input.open()
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == 0)
            _ = readOnce(input, maxLength: 10)
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == 10)

            #expect(input.setProperty(Int64(50), forKey: .fileCurrentOffset))
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == 50)
            #expect(readOnce(input, maxLength: 5).bytes == [50, 51, 52, 53, 54])
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == 55)

            _ = readAllByChunks(input, maxLength: 64)
            #expect(input.streamStatus == .atEnd)
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == 100)
            #expect(readOnce(input, maxLength: 5).result == 0)

            #expect(input.setProperty(Int64(90), forKey: .fileCurrentOffset))
            #expect(input.streamStatus == .open, "seeking back makes an ended stream readable")
            #expect(input.hasBytesAvailable)
            #expect(try input.readToEnd() == Array(90..<100))
            #expect(input.streamStatus == .atEnd)

            #expect(!input.setProperty(Int64(-1), forKey: .fileCurrentOffset), "a negative offset is refused")
            #expect(!input.setProperty("5", forKey: .fileCurrentOffset), "a string is not an offset")
            #expect(!input.setProperty(nil, forKey: .fileCurrentOffset))
            #expect(input.property(forKey: .dataWrittenToMemoryStream) == nil)
            #expect(input.streamStatus == .atEnd)
            #expect(input.streamError == nil)

            input.close()
            #expect(input.property(forKey: .fileCurrentOffset) == nil, "no descriptor after close")
            #expect(!input.setProperty(Int64(0), forKey: .fileCurrentOffset))
            #expect(input.streamStatus == .closed)
        }
    }

    @Test("fileCurrentOffset accepts the integer types a caller is likely to pass",
          arguments: [Int64(3) as any Sendable, 3 as Int, Int32(3), UInt64(3)])
    func offsetTypes(value: any Sendable) throws {
        try withTemporaryDirectory { directory throws in
            let input = FileInputStream(path: try makeFile("data", in: directory, bytes: [0, 1, 2, 3, 4]))
            input.open()
            #expect(input.setProperty(value, forKey: .fileCurrentOffset))
            #expect(readOnce(input, maxLength: 10).bytes == [3, 4])
            input.close()
        }
    }

    @Test("fileCurrentOffset refuses values that are not offsets",
          arguments: [UInt64.max as any Sendable, "3", 3.0, UInt8(3)])
    func offsetRefused(value: any Sendable) throws {
        try withTemporaryDirectory { directory throws in
            let input = FileInputStream(path: try makeFile("data", in: directory, bytes: [0, 1, 2, 3, 4]))
            input.open()
            #expect(!input.setProperty(value, forKey: .fileCurrentOffset))
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == 0)
            input.close()
        }
    }

    @Test("fileCurrentOffset of a descriptor stream follows the shared descriptor")
    func descriptorOffset() throws {
        try withTemporaryDirectory { directory throws in
            let path = try makeFile("data", in: directory, bytes: Array(0..<20))
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            defer { _ = Glibc.close(fd) }
            #expect(lseek(fd, 4, SEEK_SET) == 4)
            let input = FileInputStream(fileDescriptor: fd)
            input.open()
            #expect(input.property(forKey: .fileCurrentOffset) as? Int64 == 4)
            #expect(readOnce(input, maxLength: 2).bytes == [4, 5])
            #expect(lseek(fd, 0, SEEK_CUR) == 6)
            input.close()
            #expect(fcntl(fd, F_GETFD) != -1, "a borrowed descriptor stays open")
        }
    }

    // MARK: FileOutputStream

    @Test("FileOutputStream by path creates, then truncates, the file")
    func outputByPath() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory.appendingPathComponent("out").path
            let output = FileOutputStream(path: path)
            #expect(!FileManager.default.fileExists(atPath: path), "nothing happens before open")
            output.open()
            #expect(output.streamStatus == .open)
            #expect(output.hasSpaceAvailable)
            #expect(writeOnce(output, Array("hello world".utf8)) == 11)
            #expect(output.property(forKey: .fileCurrentOffset) as? Int64 == 11)
            output.close()
            #expect(output.streamStatus == .closed)
            #expect(try contents(of: path) == Array("hello world".utf8))

            let again = FileOutputStream(path: path)
            again.open()
            #expect(try contents(of: path) == [], "append: false truncates at open")
            #expect(writeOnce(again, Array("X".utf8)) == 1)
            again.close()
            #expect(try contents(of: path) == Array("X".utf8))
        }
    }

    @Test("FileOutputStream with append: true adds to the end, even after a seek")
    func outputAppend() throws {
        try withTemporaryDirectory { directory throws in
            let path = try makeFile("out", in: directory, bytes: Array("abc".utf8))
            let output = FileOutputStream(path: path, append: true)
            output.open()
            try output.writeAll(Array("def".utf8))
            #expect(output.setProperty(Int64(0), forKey: .fileCurrentOffset))
            try output.writeAll(Array("gh".utf8))
            try output.closeOrThrow()
            #expect(try contents(of: path) == Array("abcdefgh".utf8))

            let missing = directory.appendingPathComponent("new").path
            let creating = FileOutputStream(path: missing, append: true)
            try creating.writeAll(Array("new".utf8))
            try creating.closeOrThrow()
            #expect(try contents(of: missing) == Array("new".utf8), "append creates a missing file")
        }
    }

    @Test("FileOutputStream fileCurrentOffset seeks to overwrite")
    func outputSeek() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory.appendingPathComponent("out").path
            let output = FileOutputStream(path: path)
            #expect(output.property(forKey: .fileCurrentOffset) == nil)
            output.open()
            try output.writeAll(Array("hello world".utf8))
            #expect(output.setProperty(0, forKey: .fileCurrentOffset))
            #expect(writeOnce(output, Array("J".utf8)) == 1)
            #expect(output.property(forKey: .fileCurrentOffset) as? Int64 == 1)
            #expect(!output.setProperty(Int64(-5), forKey: .fileCurrentOffset))
            output.close()
            #expect(output.property(forKey: .fileCurrentOffset) == nil)
            #expect(try contents(of: path) == Array("Jello world".utf8))
        }
    }

    @Test("FileOutputStream by descriptor writes and leaves a borrowed descriptor open")
    func outputByDescriptor() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory.appendingPathComponent("out").path
            let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            try #require(fd >= 0)
            defer { _ = Glibc.close(fd) }
            let output = FileOutputStream(fileDescriptor: fd)
            #expect(output.displayName == "descriptor \(fd)")
            output.open()
            try output.writeAll(Array("by descriptor".utf8))
            #expect(output.property(forKey: .fileCurrentOffset) as? Int64 == 13)
            output.close()
            #expect(output.streamStatus == .closed)
            #expect(Glibc.write(fd, "!", 1) == 1, "the borrowed descriptor is still usable")
            #expect(try contents(of: path) == Array("by descriptor!".utf8))
        }
    }

    @Test("FileOutputStream writes every edge size intact", arguments: edgeSizes)
    func outputSizes(size: Int) throws {
        try withTemporaryDirectory { directory throws in
            let content = randomBytes(count: size, seed: UInt64(size) &+ 1)
            let path = directory.appendingPathComponent("out").path
            let output = FileOutputStream(path: path)
            try output.writeAll(content)
            try output.closeOrThrow()
            expectSameBytes(try contents(of: path), content)
        }
    }
}

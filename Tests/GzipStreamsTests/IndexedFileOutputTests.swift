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

// IndexedGzipInputStream.writeRemaining(to:at:name:): the workers write the spans into a file at
// offsets, before the checks of the spans before them. Whatever the index, the data or the
// limits, the file must end up holding exactly what a read returns, and nothing after it.

/// A file in `directory` holding `prefix`, open for writing with its offset at its end: the
/// descriptor (the caller closes it) and the path.
private func openOutput(_ name: String, in directory: URL, prefix: [UInt8], flags: Int32 = O_WRONLY) throws -> (Int32, String) {
    let path = try makeFile(name, in: directory, bytes: prefix)
    let descriptor = open(path, flags | O_CLOEXEC)
    try #require(descriptor >= 0)
    try #require(lseek(descriptor, 0, SEEK_END) == prefix.count)
    return (descriptor, path)
}

/// What a read of `stream` to its end returns: the bytes before the first error, and the error.
private func readUntilError(_ stream: ByteInputStream) -> (bytes: [UInt8], error: (any Error)?) {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = stream.read(&buffer, maxLength: buffer.count)
        if count < 0 { return (result, stream.streamError) }
        if count == 0 { return (result, nil) }
        result += buffer[0..<count]
    }
}

/// Writes the rest of `stream` into a new file after `prefix`: the file's bytes after the
/// prefix, the descriptor's offset after it, and the error thrown.
private func writeRemaining(_ stream: IndexedGzipInputStream, in directory: URL, prefix: [UInt8] = Array("head:".utf8),
                            name: String = "out") throws -> (bytes: [UInt8], offset: Int64, error: (any Error)?) {
    let (descriptor, path) = try openOutput(name, in: directory, prefix: prefix)
    defer { close(descriptor) }
    var thrown: (any Error)?
    do {
        let count = try stream.writeRemaining(to: descriptor, at: Int64(prefix.count), name: path)
        #expect(Int64(prefix.count) + count == Int64(lseek(descriptor, 0, SEEK_CUR)))
    } catch {
        thrown = error
    }
    let all = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    #expect(Array(all.prefix(prefix.count)) == prefix)
    return (Array(all.dropFirst(prefix.count)), Int64(lseek(descriptor, 0, SEEK_CUR)) - Int64(prefix.count), thrown)
}

@Suite("Indexed gzip input written into a file at offsets", .onDedicatedThreads, .requiresPythonOracle)
struct IndexedFileOutputTests {
    @Test("the whole file, after bytes already there, on 1 to 3 threads with either inflater",
          arguments: [1, 2, 3], [GzipInputStream.Inflater.isal, .zlib])
    func whole(threads: Int, inflater: GzipInputStream.Inflater) throws {
        try withTemporaryDirectory { directory in
            for sizes in [[3_000_000], [700_000, 5, 1_300_000, 0, 900_000]] {
                let file = try IndexedFile(in: directory, memberSizes: sizes)
                let stream = try file.stream(threads: threads, inflater: inflater)
                stream.open()
                defer { stream.close() }
                let written = try writeRemaining(stream, in: directory)
                #expect(written.error == nil)
                #expect(written.bytes == file.data)
                #expect(written.offset == Int64(file.data.count))
                #expect(stream.workersWriteOutput)
                #expect(stream.streamStatus == .atEnd && !stream.isSequential)
                #expect(stream.memberCount == sizes.count && stream.uncompressedByteCount == Int64(file.data.count))
            }
        }
    }

    @Test("an index that does not fit: what the workers wrote past the last check is written again from the data")
    func forged() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [2_000_000], seed: 5)
            var zeroed = file.index
            let point = try #require(zeroed.points.indices.dropFirst(3).first { zeroed.points[$0].window != nil })
            let window = try #require(zeroed.points[point].window)
            zeroed.points[point].window![try #require(window.indices.last { window[$0] != 0 })] = 0
            var other = try IndexedFile(in: directory, memberSizes: [2_000_000], seed: 6, name: "other.gz").index
            other.compressedSize = file.index.compressedSize
            for (index, mismatch) in [(zeroed, IndexedGzipError.windowDiffers(point: point)), (other, nil)] {
                for threads in [1, 2] {
                    let stream = try file.stream(threads: threads, index: index)
                    stream.open()
                    defer { stream.close() }
                    let written = try writeRemaining(stream, in: directory)
                    #expect(written.error == nil)
                    #expect(written.bytes == file.data)
                    #expect(stream.isSequential && stream.indexMismatch != nil)
                    if let mismatch { #expect(stream.indexMismatch == mismatch) }
                }
            }
        }
    }

    @Test("the file's space taken at once from the index's plain size: an index that gives a size other than the data's (larger, smaller, past deflate's ratio) leaves the file as the data's, with no block past its end",
          arguments: [1, 2])
    func reservedSize(threads: Int) throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [1_200_000, 800_000], seed: 7)
            let plain = UInt64(file.data.count)
            for size in [plain, plain * 3, plain / 2, file.index.compressedSize * 1032 + 1, 1 << 61] {
                var index = file.index
                index.plainSize = size
                let stream = try file.stream(threads: threads, index: index)
                stream.open()
                defer { stream.close() }
                let written = try writeRemaining(stream, in: directory)
                // Compared as one Bool: a failing comparison of two arrays of megabytes would
                // have the test library work out their difference.
                let same = written.bytes == file.data
                #expect(written.error == nil, "plain size \(size)")
                #expect(same, "plain size \(size): \(written.bytes.count) bytes, \(written.bytes.indices.first { $0 >= file.data.count || written.bytes[$0] != file.data[$0] } ?? -1) the first that differs")
                #expect(written.offset == Int64(plain), "plain size \(size)")
                // No block allocated for a larger claim stays past the end (ext4 may keep one
                // block of its extent tree).
                var info = stat()
                try #require(stat(directory.appendingPathComponent("out").path, &info) == 0)
                #expect(Int64(info.st_blocks) * 512 <= Int64(plain) + 5 + 65536, "plain size \(size): \(info.st_blocks) blocks")
            }
        }
    }

    @Test("damaged deflate data: the file holds what a read returns before its error, and the error is the same",
          arguments: [1, 2])
    func damage(threads: Int) throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [1_500_000, 1_000_000])
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file.path)))
            for position in [bytes.count / 3, bytes.count * 3 / 4, bytes.count - 6] {
                var damaged = bytes
                damaged[position] ^= 0x5a
                try Data(damaged).write(to: URL(fileURLWithPath: file.path))
                let reading = try file.stream(threads: threads)
                reading.open()
                let read = readUntilError(reading)
                reading.close()
                let stream = try file.stream(threads: threads)
                stream.open()
                defer { stream.close() }
                let written = try writeRemaining(stream, in: directory)
                #expect(written.bytes == read.bytes, "byte \(position)")
                #expect(written.offset == Int64(read.bytes.count))
                #expect("\(String(describing: written.error))" == "\(String(describing: read.error))", "byte \(position)")
                #expect(read.error != nil)
            }
        }
    }

    @Test("a decompression limit: the file ends at the limit")
    func limit() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [3_000_000])
            let stream = try IndexedGzipInputStream(wrapping: FileInputStream(path: file.path), index: file.index,
                                                    threads: 2, maximumOutputSize: 1_000_001)
            stream.open()
            defer { stream.close() }
            let written = try writeRemaining(stream, in: directory)
            #expect(written.bytes == Array(file.data.prefix(1_000_001)))
            // A worker writing ahead would write spans past the limit before the reader gets
            // there, as far as a forged index makes them reach: this thread writes instead.
            #expect(!stream.workersWriteOutput)
            guard case .outputLimitExceeded(let limit, _) = written.error as? GzipError else {
                Issue.record("\(String(describing: written.error))")
                return
            }
            #expect(limit == 1_000_001)
        }
    }

    @Test("after a seek, this thread writes the range")
    func afterSeek() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [2_000_000])
            let stream = try file.stream(threads: 2)
            stream.open()
            defer { stream.close() }
            try stream.seek(toPlainOffset: 1_234_567, length: 500_000)
            let written = try writeRemaining(stream, in: directory)
            #expect(written.error == nil)
            #expect(written.bytes == Array(file.data[1_234_567..<1_734_567]))
        }
    }

    @Test("a write that fails on a worker is the error, named by the output, and nothing else is decoded")
    func writeFails() throws {
        try withTemporaryDirectory { directory in
            let file = try IndexedFile(in: directory, memberSizes: [2_000_000])
            let path = try makeFile("read-only", in: directory, bytes: [])
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            let stream = try file.stream(threads: 2)
            stream.open()
            defer { stream.close() }
            #expect(throws: ByteStreamError(.system(errno: EBADF), operation: "write", target: "the output")) {
                try stream.writeRemaining(to: descriptor, at: 0, name: "the output")
            }
            #expect(!stream.isSequential)
        }
    }
}

import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

@Suite("unpack and test --write-index: FILE.gzidx from the decode itself", .onDedicatedThreads)
struct WriteIndexCLITests {
    /// 6 MiB of text, under the default span (16 MiB): the index has its first point only, and
    /// points every span are checked on the library's builder and recorder
    /// (GzipIndexBuilderTests, GzipIndexRecorderTests).
    static let plain = sampleText(byteCount: 6 << 20, seed: 43)

    /// `data` as one zlib deflate member at `level` (what gzip writes).
    private func pack(_ data: [UInt8], level: Int) throws -> [UInt8] {
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, level: level)
        try gzip.openOrThrow()
        try gzip.writeAll(data)
        try gzip.closeOrThrow()
        return [UInt8](memory.data)
    }

    @Test("unpack --write-index: the plain file and FILE.gz.gzidx with the file's mode; ranges read through it; -v says both")
    func unpack() throws {
        try withScratch { scratch in
            let packed = try pack(Self.plain, level: 6)
            let path = try scratch.write("data.gz", packed)
            #expect(chmod(path, 0o640) == 0)
            let result = try gzstream(["unpack", "-v", "-k", "--write-index", "data.gz"], in: scratch)
            let index = try GzipIndex(gzidx: try scratch.read("data.gz.gzidx"))
            let indexSize = try scratch.read("data.gz.gzidx").count
            #expect(result.status == 0 && result.out == "", "\(result)")
            let lines = result.err.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.count == 3 && lines[2] == "", "\(result.err)")
            #expect(lines.first == "gzstream: data.gz: 1 member, \(Self.plain.count) bytes -> data.gz.gzidx "
                + "(\(index.points.count) points, \(indexSize) bytes)")
            #expect(lines.count > 1 && lines[1].hasPrefix("gzstream: data.gz: \(packed.count) -> \(Self.plain.count) bytes, ")
                && lines[1].hasSuffix("% saved -> data"), "\(result.err)")
            #expect(try scratch.read("data") == Self.plain)
            #expect(fileStatus(scratch.path("data.gz.gzidx"))?.permissions == 0o640)
            #expect(index.compressedSize == UInt64(packed.count) && index.plainSize == UInt64(Self.plain.count))
            let range = try gzstream(["unpack", "-c", "-v", "--offset", "5000000", "--length", "4000", "data.gz"], in: scratch)
            #expect(range.status == 0 && range.stdout == Array(Self.plain[5_000_000..<5_004_000]), "\(range)")
            #expect(range.err.contains("read through data.gz.gzidx"), "\(range.err)")
            // An index is never replaced without -f, and nothing is decoded then.
            try FileManager.default.removeItem(atPath: scratch.path("data"))
            let again = try gzstream(["unpack", "-k", "--write-index", "data.gz"], in: scratch)
            #expect(again.status == 1 && again.out == "")
            #expect(again.err == "gzstream: data.gz.gzidx: already exists; not overwritten (use -f to overwrite)\n")
            #expect(try scratch.listing() == ["data.gz", "data.gz.gzidx"])
        }
    }

    @Test("test --write-index (zlib stops at the first block boundary after each span) and -f replaces an index")
    func test() throws {
        try withScratch { scratch in
            let packed = try pack(Self.plain, level: 6)
            _ = try scratch.write("data.gz", packed)
            _ = try scratch.write("data.gz.gzidx", "stale\n")
            let refused = try gzstream(["test", "--write-index", "data.gz"], in: scratch)
            #expect(refused.status == 1 && refused.err == "gzstream: data.gz.gzidx: already exists; not overwritten (use -f to overwrite)\n")
            let result = try gzstream(["test", "-f", "--write-index", "data.gz"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            // What `test` decodes with (zlib) gives the points the library's zlib builder gives.
            let output = MemoryOutputStream()
            output.open()
            _ = try GzipIndexBuilder().build(from: MemoryInputStream(bytes: packed), into: output, inflater: .zlib)
            #expect(try scratch.read("data.gz.gzidx") == [UInt8](output.data))
            #expect(try scratch.listing() == ["data.gz", "data.gz.gzidx"])
        }
    }

    @Test("The default spacing on a 15:1 file: index and unpack --write-index (ISA-L), index --strict and test --write-index (zlib) write the same bytes, each within 1% of the file")
    func defaultSpacing() throws {
        try withScratch { scratch in
            // 64 MiB of log lines, 4.5 MB packed: a point every 16 MiB would make 2% of it.
            let packed = try pack(repetitiveLog(count: 64 << 20, seed: 9), level: 6)
            _ = try scratch.write("log.gz", packed)
            var written: [[UInt8]] = []
            for arguments in [["index", "log.gz"], ["unpack", "-k", "--write-index", "log.gz"],
                              ["index", "--strict", "log.gz"], ["test", "--write-index", "log.gz"]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 0 && result.err == "", "\(arguments): \(result)")
                written.append(try scratch.read("log.gz.gzidx"))
                for name in try scratch.listing() where name != "log.gz" {
                    try FileManager.default.removeItem(atPath: scratch.path(name))
                }
            }
            #expect(written[0] == written[1] && written[2] == written[3])
            for bytes in [written[0], written[2]] {
                let index = try GzipIndex(gzidx: bytes)
                #expect(index.points.count > 1 && index.points.count < 4, "\(index.points.count) points")
                #expect(bytes.count <= packed.count / 100 + 35 + 26 * index.points.count + 44, "\(bytes.count) bytes")
            }
        }
    }

    @Test("A damaged file: the error, exit 1, no index and no temporary file left")
    func damaged() throws {
        try withScratch { scratch in
            var packed = try pack(Self.plain, level: 6)
            packed[packed.count - 6] ^= 1
            _ = try scratch.write("crc.gz", packed)
            for command in ["unpack", "test"] {
                let result = try gzstream([command, "-k", "--write-index", "crc.gz"], in: scratch)
                #expect(result.status == 1 && result.err.hasPrefix("gzstream: crc.gz: "), "\(result)")
                #expect(try scratch.listing() == ["crc.gz"], "\(command)")
            }
        }
    }

    @Test("--write-index refused with a reason", arguments: [
        (["unpack", "-c", "--write-index", "data.bgz"],
         "gzstream: data.bgz: is BGZF: its index is bgzip's .gzi, which 'gzstream index' writes from the member headers "
            + "(--write-index writes GZIDX for other gzip files)\n"),
        (["unpack", "-c", "-f", "--write-index", "data.bgz"],
         usageError("--write-index does not go with -c -f (what is not gzip passes through unindexed)")),
        (["unpack", "--write-index", "-"],
         usageError("--write-index needs files (each index is written beside its file), not standard input")),
        (["unpack", "--write-index", "--index", "x", "data.bgz"],
         usageError("--write-index decodes each file whole to index it: --index PATH does not apply")),
        (["unpack", "-c", "--write-index", "--offset", "5", "data.bgz"],
         usageError("--write-index decodes each file whole to index it: --offset, --length and --lines do not apply")),
        (["list", "--write-index", "data.bgz"],
         usageError("--write-index applies to unpack and test (index writes an index by itself)")),
        (["unpack", "-o", "data.bgz.gzidx", "--write-index", "data.bgz"],
         usageError("-o names the index --write-index writes beside FILE")),
        (["unpack", "--rm", "--write-index", "data.bgz"],
         usageError("--write-index writes an index of FILE, which --rm (or gzip's -d without -k) removes")),
        (["-d", "--write-index", "data.bgz"],
         usageError("--write-index writes an index of FILE, which --rm (or gzip's -d without -k) removes")),
    ])
    func refused(arguments: [String], expected: String) throws {
        try withScratch { scratch in
            let bgzf = try gzstream(["pack", "-c", "--bgzf"], in: scratch, input: .bytes(Array(Self.plain.prefix(100_000)))).stdout
            _ = try scratch.write("data.bgz", bgzf)
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1 && result.out == "" && result.err == expected, "\(result)")
            #expect(try scratch.listing() == ["data.bgz"])
        }
    }

    @Test("A file modified in the future: its index gets the file's time, so that it is used")
    func futureFile() throws {
        try withScratch { scratch in
            let path = try scratch.write("future.gz", try pack(Array(Self.plain.prefix(1 << 20)), level: 6))
            let future = time(nil) + 7200
            var times = [timespec(tv_sec: future, tv_nsec: 0), timespec(tv_sec: future, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            let written = try gzstream(["index", "future.gz"], in: scratch)
            #expect(written.status == 0 && written.err == "", "\(written)")
            let range = try gzstream(["unpack", "-c", "-v", "--offset", "1000", "--length", "10", "future.gz"], in: scratch)
            #expect(range.status == 0 && range.stdout == Array(Self.plain[1000..<1010]), "\(range)")
            #expect(range.err.contains("read through future.gz.gzidx"), "\(range.err)")
        }
    }

    @Test("An index name too long for the file system: refused before anything is decoded or written")
    func longName() throws {
        try withScratch { scratch in
            let name = String(repeating: "a", count: 250) + ".gz"
            _ = try scratch.write(name, try pack(Array(Self.plain.prefix(100_000)), level: 6))
            for arguments in [["unpack", "-k", "--write-index", name], ["index", name]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1 && result.out == "")
                #expect(result.err == "gzstream: \(name).gzidx: cannot write: File name too long\n", "\(result.err)")
                #expect(try scratch.listing() == [name])
            }
        }
    }

    @Test("index --strict builds with zlib: the library's zlib index, byte for byte")
    func strictIndex() throws {
        try withScratch { scratch in
            let packed = try pack(Self.plain, level: 6)
            _ = try scratch.write("data.gz", packed)
            let result = try gzstream(["index", "--strict", "--span", "1M", "data.gz"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            let output = MemoryOutputStream()
            output.open()
            _ = try GzipIndexBuilder(span: 1 << 20).build(from: MemoryInputStream(bytes: packed), into: output, inflater: .zlib)
            #expect(try scratch.read("data.gz.gzidx") == [UInt8](output.data))
        }
    }
}

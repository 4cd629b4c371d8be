import Foundation
import Testing
import TestSupport

/// `test`, `list` and `unpack --strict` give zlib's verdict on the files of `fixtures/lenient/`
/// (deflate data ISA-L or libdeflate accept and zlib rejects); plain `unpack` gives the fast
/// path's, whose output stands only where the member's CRC-32 and ISIZE match it.
@Suite("--strict: zlib's verdict for test, list and unpack --strict", .onDedicatedThreads)
struct StrictCLITests {
    /// The one line zlib's error gives for `data.gz`.
    private func zlibLine(_ row: LenientFixture, offsetShift: Int64 = 0) -> String {
        "gzstream: data.gz: invalid deflate data in member 1 at byte \(row.zlibOffset + offsetShift): \(row.zlibMessage)\n"
    }

    /// gzip mode's line for the same fault, in GNU gzip's words.
    private let gzipModeLine = "\ngzstream: data.gz: invalid compressed data--format violated\n"

    @Test("test, test --strict and gzip's -t: exit 1 with zlib's message", arguments: LenientManifest.rows)
    func testFails(_ row: LenientFixture) throws {
        try withScratch { scratch in
            try scratch.copyFixture("lenient/" + row.file, as: "data.gz")
            for arguments in [["test", "data.gz"], ["test", "--strict", "data.gz"], ["-t", "data.gz"]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1, "\(arguments): \(result)")
                #expect(result.err == (arguments[0] == "-t" ? gzipModeLine : zlibLine(row)), "\(arguments)")
                #expect(result.out == "", "\(arguments)")
            }
        }
    }

    @Test("list and list --strict: exit 1 with zlib's message, the table stopped by it", arguments: LenientManifest.rows)
    func listFails(_ row: LenientFixture) throws {
        try withScratch { scratch in
            try scratch.copyFixture("lenient/" + row.file, as: "data.gz")
            for arguments in [["list", "data.gz"], ["list", "--strict", "data.gz"]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1, "\(arguments): \(result)")
                #expect(result.err == zlibLine(row), "\(arguments)")
                // No member row; the total is the bytes read up to zlib's error and those it gave.
                let lines = result.out.split(separator: "\n")
                #expect(lines.count == 3 && lines.first == "data.gz:", "\(arguments): \(result.out)")
                var total = lines.last?.split(separator: " ") ?? []
                if total.count > 3 { total.remove(at: 3) }  // the space saved
                #expect(total == ["total", "\(row.zlibOffset)", "\(row.zlibBytesBefore)", "0", "members,", "stopped", "by", "an",
                                  "error"], "\(arguments): \(result.out)")
            }
            let gzipList = try gzstream(["-l", "data.gz"], in: scratch)
            #expect(gzipList.status == 1, "\(gzipList)")
            #expect(gzipList.err == gzipModeLine)
        }
    }

    @Test("unpack --strict: zlib's error after zlib's bytes, no file left; plain unpack: the fast path's result",
          arguments: LenientManifest.rows)
    func unpack(_ row: LenientFixture) throws {
        try withScratch { scratch in
            try scratch.copyFixture("lenient/" + row.file, as: "data.gz")
            let strictOut = scratch.ioPath("strict")
            let strict = try gzstream(["unpack", "--strict", "-c", "data.gz"], in: scratch, stdoutPath: strictOut)
            #expect(strict.status == 1 && strict.err == zlibLine(row), "\(strict)")
            #expect(fileStatus(strictOut)?.size == Int64(row.zlibBytesBefore))
            let toFile = try gzstream(["unpack", "--strict", "data.gz"], in: scratch)
            #expect(toFile.status == 1 && toFile.err == zlibLine(row), "\(toFile)")
            #expect(try scratch.listing() == ["data.gz"])
            let gzipMode = try gzstream(["-dc", "--strict", "data.gz"], in: scratch)
            #expect(gzipMode.status == 1 && gzipMode.err == gzipModeLine, "\(gzipMode)")

            let fastOut = scratch.ioPath("fast")
            let fast = try gzstream(["unpack", "-c", "data.gz"], in: scratch, stdoutPath: fastOut)
            switch row.fast {
            case .ok(let sha256, let size):
                #expect(fast.status == 0 && fast.err == "", "\(fast)")
                #expect(fileStatus(fastOut)?.size == Int64(size))
                #expect(try GZStreamCLITests.sha256(ofFile: fastOut, in: scratch) == sha256)
            case .invalidDeflate(let offset, let bytesBefore):
                #expect(fast.status == 1, "\(fast)")
                #expect(fast.err == "gzstream: data.gz: invalid deflate data in member 1 at byte \(offset): \(row.zlibMessage)\n")
                #expect(fileStatus(fastOut)?.size == Int64(bytesBefore))
            }
        }
    }

    @Test("BGZF: test and unpack --strict take zlib's verdict, plain unpack the fast path's",
          arguments: LenientManifest.rows.filter { if case .ok = $0.fast { true } else { false } })
    func bgzf(_ row: LenientFixture) throws {
        try withScratch { scratch in
            try scratch.write("data.gz", bgzfMember(of: try readBytes(row.path)) + bgzfEndOfFile)
            // The BGZF header is 8 bytes longer than the plain member's.
            let tested = try gzstream(["test", "data.gz"], in: scratch)
            #expect(tested.status == 1 && tested.err == zlibLine(row, offsetShift: 8), "\(tested)")
            let strict = try gzstream(["unpack", "--strict", "-c", "data.gz"], in: scratch, stdoutPath: "/dev/null")
            #expect(strict.status == 1 && strict.err == zlibLine(row, offsetShift: 8), "\(strict)")
            guard case .ok(let sha256, _) = row.fast else { return }
            let outPath = scratch.ioPath("out")
            let fast = try gzstream(["unpack", "-c", "data.gz"], in: scratch, stdoutPath: outPath)
            #expect(fast.status == 0 && fast.err == "", "\(fast)")
            #expect(try GZStreamCLITests.sha256(ofFile: outPath, in: scratch) == sha256)
        }
    }

    @Test("--strict applies to unpack, test and list only", arguments: [
        // End to end, one or two per command; every usage error is parsed in-process in CommandLineParsingTests.
        (["pack", "--strict", "a"], "--strict applies to unpack, test, list and index"),
    ])
    func usage(_ arguments: [String], message: String) throws {
        try withScratch { scratch in
            try scratch.write("a", "a\n")
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1 && result.out == "", "\(result)")
            #expect(result.err == usageError(message))
            #expect(try scratch.listing() == ["a"])
        }
    }

    /// The gzip member `member` (a 10-byte header without flags) as a BGZF member: the same
    /// deflate data and trailer behind BGZF's 18-byte header (SAM/BAM specification §4.1).
    private func bgzfMember(of member: [UInt8]) -> [UInt8] {
        let body = member[10...]
        let blockSize = 18 + body.count - 1
        return [0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 0x42, 0x43, 2, 0, UInt8(blockSize & 0xff), UInt8(blockSize >> 8)]
            + body
    }

    /// BGZF's empty end-of-file member.
    private let bgzfEndOfFile: [UInt8] = [0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 0x42, 0x43, 2, 0, 0x1b, 0, 3, 0,
                                          0, 0, 0, 0, 0, 0, 0, 0]
}

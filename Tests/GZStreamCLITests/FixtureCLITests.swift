import Foundation
import Testing
import TestSupport

/// What `GzipError.description` starts with for each `GzipError.kind`.
let messagePrefixes: [String: [String]] = [
    "empty-input": ["empty input: no gzip member"],
    "bad-magic": ["not in gzip format (bad magic at byte "],
    "bad-header": ["unsupported compression method ", "bad header in member "],
    "header-crc": ["header CRC mismatch in member "],
    "truncated": ["unexpected end of input in the "],
    "invalid-deflate": ["invalid deflate data in member "],
    "crc-mismatch": ["CRC-32 mismatch in member "],
    "length-mismatch": ["length mismatch in member "],
    "output-limit": ["output exceeds the limit of "],
]

/// Outputs at least this big are hashed through a pipe, never written to disk or memory.
let pipedOutputThreshold: Int64 = 256 << 20

@Suite("Fixtures through the gzstream binary", .onDedicatedThreads)
struct FixtureCLITests {
    @Test("The manifest is read and every fixture exists")
    func manifestIsComplete() {
        #expect(FixtureManifest.rows(.ok).count >= 100)
        #expect(FixtureManifest.rows(.error).count >= 50)
        #expect(FixtureManifest.rows(.roundtrip).count >= 5)
        for row in FixtureManifest.rows {
            #expect(FileManager.default.fileExists(atPath: row.path), "missing fixture \(row.file)")
        }
    }

    @Test("unpack -c FILE writes the expected bytes, exit 0, nothing on stderr", arguments: FixtureManifest.rows(.ok))
    func unpacksToStandardOutput(row: FixtureRow) throws {
        try withScratch { scratch in
            if let size = row.statedOutputSize, size >= pipedOutputThreshold {
                // `gzstream unpack -c F | openssl dgst -sha256`: the output never touches memory or disk.
                let statusPath = scratch.ioPath("status")
                let errPath = scratch.ioPath("err")
                let result = try shell(#"{ "$0" unpack -c "$1" 2>"$2"; echo $? >"$3"; } | "# + HashCommand.shellLine,
                                       [row.path, errPath, statusPath], in: scratch, timeout: 300)
                #expect(result.status == 0 && !result.timedOut, "\(result)")
                #expect(HashCommand.digest(inOutput: result.stdout) == row.value)
                #expect(try String(contentsOfFile: statusPath, encoding: .utf8) == "0\n")
                #expect(try readBytes(errPath) == [])
                return
            }
            let outPath = scratch.ioPath("out")
            let result = try gzstream(["unpack", "-c", row.path], in: scratch, stdoutPath: outPath)
            #expect(result.status == 0, "\(result)")
            #expect(result.err == "")
            #expect(try sha256(ofFile: outPath, in: scratch) == row.value)
            if let size = row.statedOutputSize { #expect(fileStatus(outPath)?.size == size) }
        }
    }

    @Test("unpack NAME.gz writes NAME with the expected bytes and keeps the input",
          arguments: FixtureManifest.rows(.ok).filter { ($0.statedOutputSize ?? 0) < pipedOutputThreshold })
    func unpacksToFile(row: FixtureRow) throws {
        try withScratch { scratch in
            let input = try scratch.copyFixture(row.file, as: "data.gz")
            let result = try gzstream(["unpack", "data.gz"], in: scratch)
            #expect(result.status == 0, "\(result)")
            #expect(result.err == "")
            #expect(result.out == "")
            #expect(try scratch.listing() == ["data", "data.gz"])
            #expect(try sha256(ofFile: scratch.path("data"), in: scratch) == row.value)
            #expect(try readBytes(input) == readBytes(row.path))
        }
    }

    @Test("unpack -c of a bad file: exit 1 and one line naming the file (trailing garbage: exit 2, data kept)",
          arguments: FixtureManifest.rows(.error))
    func reportsErrorOnStandardOutput(row: FixtureRow) throws {
        try withScratch { scratch in
            let outPath = scratch.ioPath("out")
            let result = try gzstream(["unpack", "-c", row.path], in: scratch, stdoutPath: outPath)
            try checkFailure(row: row, result: result, subject: row.path, output: outPath, in: scratch)
        }
    }

    @Test("unpack NAME.gz of a bad file leaves no output and no temporary file, and the input as it was",
          arguments: FixtureManifest.rows(.error))
    func reportsErrorInFileMode(row: FixtureRow) throws {
        try withScratch { scratch in
            let input = try scratch.copyFixture(row.file, as: "data.gz")
            let result = try gzstream(["unpack", "data.gz"], in: scratch)
            #expect(result.out == "")
            try checkFailure(row: row, result: result, subject: "data.gz", output: scratch.path("data"), in: scratch)
            if result.status == 2 {
                #expect(try scratch.listing() == ["data", "data.gz"])
            } else {
                #expect(try scratch.listing() == ["data.gz"])
            }
            #expect(try readBytes(input) == readBytes(row.path))
        }
    }

    /// Checks exit status, standard error and (for trailing garbage) the output kept.
    private func checkFailure(row: FixtureRow, result: RunResult, subject: String, output: String,
                              in scratch: Scratch) throws {
        #expect(result.signal == nil && !result.timedOut, "\(result)")
        if row.errorKinds == ["trailing-garbage"] || (row.allowsTrailingGarbage && result.status == 2) {
            #expect(result.status == 2, "\(result)")
            #expect(result.err == "gzstream: \(subject): decompression OK, trailing garbage ignored\n")
            let expected = try #require(row.outputBeforeFault, "the notes give no output for \(row.file)")
            #expect(try sha256(ofFile: output, in: scratch) == expected.sha256)
            return
        }
        #expect(result.status == 1, "\(result)")
        #expect(result.errLines.count == 1, "\(result)")
        let prefix = "gzstream: \(subject): "
        #expect(result.err.hasPrefix(prefix) && result.err.hasSuffix("\n"), "\(result)")
        let message = result.err.hasPrefix(prefix) ? String(result.err.dropFirst(prefix.count)) : result.err
        let allowed = row.errorKinds.flatMap { messagePrefixes[$0] ?? [] }
        #expect(allowed.contains { message.hasPrefix($0) },
                "message \(message.debugDescription) is not one of the kinds \(row.value)")
    }

    @Test("pack then unpack gives the file back; gzip -dc reads our .gz", .requires(.gzip), arguments: FixtureManifest.rows(.roundtrip))
    func roundTrips(row: FixtureRow) throws {
        try withScratch { scratch in
            let name = URL(fileURLWithPath: row.file).lastPathComponent
            try scratch.copyFixture(row.file, as: name)
            let packed = try gzstream(["pack", name], in: scratch)
            #expect(packed.status == 0 && packed.err == "" && packed.out == "", "\(packed)")
            #expect(try scratch.listing() == [name, name + ".gz"])
            let viaGzip = scratch.ioPath("gzip-out")
            let gzip = try run("/bin/sh", ["-c", #"/usr/bin/gzip -dc "$0" >"$1""#, scratch.path(name + ".gz"), viaGzip],
                               in: scratch)
            #expect(gzip.status == 0 && gzip.err == "", "\(gzip)")
            #expect(try sha256(ofFile: viaGzip, in: scratch) == row.value)

            try FileManager.default.moveItem(atPath: scratch.path(name), toPath: scratch.path("original"))
            let unpacked = try gzstream(["unpack", name + ".gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "" && unpacked.out == "", "\(unpacked)")
            #expect(try scratch.listing() == [name, name + ".gz", "original"].sorted())
            #expect(try sha256(ofFile: scratch.path(name), in: scratch) == row.value)
        }
    }
}

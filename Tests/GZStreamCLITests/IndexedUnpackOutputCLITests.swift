import Foundation
import GzipStreams
import Testing
import TestSupport

// unpack through an index writes a regular file from the workers, at offsets (pwrite), and
// anything else (a pipe, a file opened to append) from one thread in order: the bytes, the
// messages and the exit status must not depend on which, and a file written at offsets must
// end where the bytes end, with the descriptor's offset there for what is written after.

@Suite("unpack through an index into files, pipes and appending outputs", .onDedicatedThreads,
       .requiresPythonOracle, .requires(.gzip))
struct IndexedUnpackOutputCLITests {
    /// The same unpack with standard output a new file, a pipe, a file opened to append after
    /// "head", and a file the shell wrote "head" into before and "tail" after.
    static func outputs(_ arguments: [String], in scratch: Scratch) throws
        -> (file: RunResult, piped: RunResult, appended: RunResult, between: RunResult) {
        let file = try gzstream(arguments, in: scratch)
        // The pipe's reader is cat; gzstream's status comes through a file.
        var piped = try shell("{ \"$0\" \"$@\"; echo $? > status; } | cat", arguments, in: scratch)
        piped.status = Int32(String(decoding: try scratch.read("status"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))!
        let appended = try shell("printf head > appended && \"$0\" \"$@\" >> appended", arguments, in: scratch)
        let between = try shell("{ printf head; \"$0\" \"$@\"; s=$?; printf tail; exit $s; } > between", arguments, in: scratch)
        return (file, piped,
                RunResult(status: appended.status, stdout: try scratch.read("appended"), stderr: appended.stderr, timedOut: false),
                RunResult(status: between.status, stdout: try scratch.read("between"), stderr: between.stderr, timedOut: false))
    }

    /// Expects the four outputs of ``outputs(_:in:)`` to be `expected` (with "head" and "tail"
    /// where the shell wrote them), each with the status and message of the first.
    static func expectSame(_ runs: (file: RunResult, piped: RunResult, appended: RunResult, between: RunResult),
                           _ expected: [UInt8], _ label: String) {
        let head = Array("head".utf8)
        #expect(runs.file.stdout == expected, "\(label): \(runs.file)")
        #expect(runs.piped.stdout == expected, "\(label) piped: \(runs.piped)")
        #expect(runs.appended.stdout == head + expected, "\(label) appended")
        #expect(runs.between.stdout == head + expected + Array("tail".utf8), "\(label) between")
        for other in [runs.piped, runs.appended, runs.between] {
            #expect(other.status == runs.file.status && other.err == runs.file.err, "\(label): \(other) vs \(runs.file)")
        }
    }

    @Test("a right index, another file's beside the file, damaged data, a decompression limit: the same bytes, messages and status every way")
    func everyWay() throws {
        try withScratch { scratch in
            let data = IndexedUnpackCLITests.data
            try IndexedUnpackCLITests.makeIndexed("data.gz", in: scratch)
            let good = try Self.outputs(["unpack", "-c", "-p", "2", "data.gz"], in: scratch)
            #expect(good.file.status == 0 && good.file.err == "")
            Self.expectSame(good, data, "right index")

            let limited = try Self.outputs(["unpack", "-c", "-p", "2", "--max-output", "1000001", "data.gz"], in: scratch)
            #expect(limited.file.status == 1 && limited.file.errLines.count == 1)
            Self.expectSame(limited, Array(data.prefix(1_000_001)), "limit")

            // Damage in the middle: the bytes before it, then the sequential reader's error.
            let packed = try scratch.read("data.gz")
            var damaged = packed
            damaged[packed.count / 2] ^= 0x5a
            _ = try scratch.write("data.gz", damaged)
            // The index stays newer than the file, so that it is used.
            setModificationTime(scratch.path("data.gz"), seconds: 1_000_000_000)
            let broken = try Self.outputs(["unpack", "-c", "-p", "2", "data.gz"], in: scratch)
            #expect(broken.file.status == 1 && broken.file.errLines.count == 1, "\(broken.file)")
            #expect(broken.file.stdout.count <= data.count)
            Self.expectSame(broken, broken.file.stdout, "damaged")

            // Another file's index beside it, of the same size: said, not used past the first
            // span that does not fit; the workers had written spans after it.
            _ = try scratch.write("data.gz", packed)
            try IndexedUnpackCLITests.makeIndexed("other.gz", data: sampleBytes(count: data.count, seed: 99), in: scratch)
            var other = try GzipIndex(gzidx: try scratch.read("other.gz.gzidx"))
            other.compressedSize = UInt64(packed.count)
            _ = try scratch.write("data.gz.gzidx", other.gzidxEncoded())
            setModificationTime(scratch.path("data.gz"), seconds: 1_000_000_000)
            let stale = try Self.outputs(["unpack", "-c", "-p", "2", "data.gz"], in: scratch)
            #expect(stale.file.status == 0 && stale.file.errLines.count == 1, "\(stale.file)")
            Self.expectSame(stale, data, "another file's index")
        }
    }

    @Test("--max-output through an index says how far into the input the limit was passed, not the header's end")
    func limitOffset() throws {
        try withScratch { scratch in
            try IndexedUnpackCLITests.makeIndexed("data.gz", in: scratch)
            for arguments in [["-c"], ["-p", "1", "-c"], ["-o", "out"]] {
                let result = try gzstream(["unpack", "--max-output", "1M"] + arguments + ["data.gz"], in: scratch)
                let prefix = "gzstream: data.gz: output exceeds the limit of 1048576 bytes (at byte "
                #expect(result.status == 1 && result.errLines.count == 1 && result.err.hasPrefix(prefix), "\(result)")
                // The 1 MiB limit lies well inside the deflate data (the header ends at byte 10).
                let byte = Int(result.err.dropFirst(prefix.count).prefix { $0.isNumber }) ?? 0
                #expect(byte > 100_000, "\(arguments): \(result.err)")
            }
            #expect(!scratch.exists("out"))
        }
    }

    @Test("--max-output bounds what reaches the disk: no worker writes a span past the limit into a file")
    func limitBoundsWrites() throws {
        try withScratch { scratch in
            // 48 MiB of zeros in spans of 16 MiB: a worker given a span writes all of it.
            _ = try scratch.write("zeros", [UInt8](repeating: 0, count: 48 << 20))
            #expect(try shell("gzip -1 < zeros > zeros.gz && rm zeros && \"$0\" index --span 16M zeros.gz", in: scratch).status == 0)
            // The bytes this shell's children wrote, from the kernel's count of the reaped ones.
            let counted = "\"$0\" \"$@\" > out; s=$?; sed -n 's/^wchar: //p' /proc/$$/io; exit $s"
            let run = try shell(counted, ["unpack", "-c", "-p", "2", "--max-output", "1M", "zeros.gz"], in: scratch)
            #expect(run.status == 1 && run.errLines.count == 1, "\(run)")
            #expect(try scratch.read("out") == [UInt8](repeating: 0, count: 1 << 20))
            // Without the kernel's I/O accounting (CONFIG_TASK_IO_ACCOUNTING) there is nothing to count.
            guard FileManager.default.isReadableFile(atPath: "/proc/self/io") else { return }
            let written = Int(String(decoding: run.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            #expect(written > 0 && written < 4 << 20, "\(written) bytes written for a limit of 1 MiB")
        }
    }

    @Test("SIGTERM while the workers write standard output's file: the file holds a prefix of the data, never a later span after a hole")
    func interrupted() throws {
        try withScratch { scratch in
            // 24 MiB in spans of 1 MiB: many spans in flight at once.
            let data = sampleBytes(count: 24 << 20, seed: 12)
            _ = try scratch.write("big", data)
            #expect(try shell("gzip -6 < big > big.gz && rm big && \"$0\" index --span 1M big.gz", in: scratch).status == 0)
            var generator = SystemRandomNumberGenerator()
            var stopped = 0
            for round in 0..<30 {
                let out = scratch.path("out")
                try? FileManager.default.removeItem(atPath: out)
                let started = try StartedProcess(Locations.binary, ["unpack", "-c", "-p", "2", "big.gz"], in: scratch,
                                                 stdoutPath: out)
                usleep(UInt32.random(in: 2_000...120_000, using: &generator))
                kill(started.process.processIdentifier, SIGTERM)
                let result = try started.finish()
                let written = try scratch.read("out")
                if result.status == 128 + SIGTERM { stopped += 1 }
                #expect(result.status == 0 || result.status == 128 + SIGTERM, "round \(round): \(result)")
                #expect(written.count <= data.count && written == Array(data.prefix(written.count)),
                        "round \(round): \(written.count) bytes, not a prefix of the data")
            }
            // Most rounds are stopped in the middle (the decode takes longer than the waits).
            #expect(stopped > 0)
        }
    }

    @Test("a write the file size limit refuses (EFBIG): one line, the same as without the index, and no output left")
    func fileTooLarge() throws {
        try withScratch { scratch in
            try IndexedUnpackCLITests.makeIndexed("data.gz", in: scratch)
            // 1024 blocks of 512 bytes; SIGXFSZ ignored, so that the write fails with EFBIG.
            let limited = "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\""
            let indexed = try shell(limited, ["unpack", "-p", "2", "-o", "out", "data.gz"], in: scratch)
            try FileManager.default.moveItem(atPath: scratch.path("data.gz.gzidx"), toPath: scratch.path("saved"))
            let sequential = try shell(limited, ["unpack", "-o", "out", "data.gz"], in: scratch)
            #expect(indexed.status == 1 && indexed.errLines.count == 1 && indexed.err.hasSuffix(": File too large\n"), "\(indexed)")
            #expect(indexed.err == sequential.err && sequential.status == 1, "\(indexed) vs \(sequential)")
            #expect(try scratch.listing() == ["data.gz", "saved"])
        }
    }
}

import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// What GzipInputStream, the sequential reference, gives for `bytes`: the plain bytes before
/// any error, and the error's one-line message.
private func sequentialResult(_ bytes: [UInt8]) -> (bytes: [UInt8], error: String?) {
    let stream = try! GzipInputStream(wrapping: MemoryInputStream(bytes: bytes), trailingGarbage: .ignore)
    stream.open()
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = stream.read(&buffer, maxLength: buffer.count)
        if count < 0 { return (output, stream.streamError.map { "\($0)" }) }
        if count == 0 { return (output, nil) }
        output += buffer[0..<count]
    }
}

/// Runs bgzip, for tests that are `.requires(.bgzip)`.
private func bgzip(_ arguments: [String], in scratch: Scratch) throws -> RunResult {
    try run(try #require(Tool.bgzip.path), arguments, in: scratch)
}

@Suite("gzstream unpack/test of BGZF on threads, unpack --offset/--length, gzstream index", .onDedicatedThreads)
struct BlockedUnpackCLITests {
    static let plain: [UInt8] = sampleText(byteCount: 400_000, seed: 71) + randomBytes(count: 70_000, seed: 72)

    /// `plain` as bgzip writes it.
    static func bgzf(in scratch: Scratch) throws -> [UInt8] {
        let path = try scratch.write("made", plain)
        let result = try bgzip(["-c", path], in: scratch)
        #expect(result.status == 0)
        return result.stdout
    }

    @Test("unpack of BGZF: -c, to a file, from a pipe, -p 1 and -p 4: the plain bytes, nothing on stderr", .requires(.bgzip))
    func unpack() throws {
        try withScratch { scratch in
            let packed = try Self.bgzf(in: scratch)
            _ = try scratch.write("data.gz", packed)
            for threads in ["1", "4"] {
                let toStdout = try gzstream(["unpack", "-p", threads, "-c", "data.gz"], in: scratch)
                #expect(toStdout.status == 0 && toStdout.stdout == Self.plain && toStdout.err == "", "\(toStdout)")
                let fromPipe = try gzstream(["unpack", "-p", threads], in: scratch, input: .bytes(packed))
                #expect(fromPipe.status == 0 && fromPipe.stdout == Self.plain && fromPipe.err == "", "\(fromPipe)")
                let tested = try gzstream(["test", "-p", threads, "data.gz"], in: scratch)
                #expect(tested.status == 0 && tested.out == "" && tested.err == "", "\(tested)")
            }
            let verbose = try gzstream(["test", "-v", "data.gz"], in: scratch)
            #expect(verbose.err == "gzstream: data.gz: OK (\(Self.plain.count / 65280 + 2) members, \(Self.plain.count) bytes)\n")
            let toFile = try gzstream(["unpack", "data.gz"], in: scratch)
            #expect(toFile.status == 0 && toFile.err == "", "\(toFile)")
            #expect(try scratch.read("data") == Self.plain)
        }
    }

    @Test("Damaged BGZF: unpack -c and test print GzipInputStream's error, after the same bytes; garbage warns", .requires(.bgzip))
    func damaged() throws {
        try withScratch { scratch in
            let packed = try Self.bgzf(in: scratch)
            let secondMember = Int(packed[16]) | Int(packed[17]) << 8 + 1
            var crc = packed
            crc[secondMember + 30] ^= 0x40
            var cut = packed
            cut.removeLast(100)
            let cases: [(String, [UInt8], Int32)] = [
                ("deflate.gz", crc, 1), ("cut.gz", cut, 1),
                ("garbage.gz", packed + Array("garbage\n".utf8), 2),
                ("plain-after.gz", packed + [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0], 0),
            ]
            for (name, bytes, status) in cases {
                _ = try scratch.write(name, bytes)
                let expected = sequentialResult(bytes)
                let message = expected.error.map { "gzstream: \(name): \($0)\n" }
                    ?? (status == 2 ? "gzstream: \(name): decompression OK, trailing garbage ignored\n" : "")
                for threads in ["1", "3"] {
                    let unpacked = try gzstream(["unpack", "-p", threads, "-c", name], in: scratch)
                    #expect(unpacked.status == status && unpacked.err == message, "\(name): \(unpacked)")
                    #expect(unpacked.stdout == expected.bytes, "\(name): the bytes before the error")
                    let tested = try gzstream(["test", "-p", threads, name], in: scratch)
                    #expect(tested.status == status && tested.err == message, "\(name): \(tested)")
                }
            }
        }
    }

    @Test("unpack --offset N --length M equals bgzip -b N -s M; -o writes a file; no --length reads to the end", .requires(.bgzip))
    func ranges() throws {
        try withScratch { scratch in
            let packed = try Self.bgzf(in: scratch)
            _ = try scratch.write("data.gz", packed)
            let indexed = try gzstream(["index", "data.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.out == "" && indexed.err == "", "\(indexed)")
            let size = Self.plain.count
            for (offset, length) in [(0, 10), (65279, 2), (65280, 65280), (100_000, 150_000), (size - 1, 5), (size, 5), (3, 0)] {
                let ours = try gzstream(["unpack", "--offset", String(offset), "--length", String(length), "-c", "data.gz"],
                                        in: scratch)
                #expect(ours.status == 0 && ours.err == "", "\(offset)+\(length): \(ours)")
                #expect(ours.stdout == Array(Self.plain[offset..<min(size, offset + length)]), "\(offset)+\(length)")
                if length > 0, offset < size {
                    let theirs = try bgzip(["-b", String(offset), "-s", String(length), "data.gz"], in: scratch)
                    #expect(theirs.stdout == ours.stdout, "bgzip -b \(offset) -s \(length)")
                }
            }
            let rest = try gzstream(["unpack", "--offset=400000", "-c", "data.gz"], in: scratch)
            #expect(rest.status == 0 && rest.stdout == Array(Self.plain[400_000...]), "\(rest)")
            let toFile = try gzstream(["unpack", "--offset", "70000", "--length", "1K", "-o", "part", "data.gz"], in: scratch)
            #expect(toFile.status == 0 && toFile.err == "", "\(toFile)")
            #expect(try scratch.read("part") == Array(Self.plain[70_000..<71_024]))
            let past = try gzstream(["unpack", "--offset", String(size + 1), "-c", "data.gz"], in: scratch)
            #expect(past.status == 1 && past.out == "")
            #expect(past.err == "gzstream: data.gz: offset \(size + 1) is past the end of the data (\(size) bytes)\n")
        }
    }

    @Test("--index PATH may name a BGZF file's .gzi elsewhere: ranges, unpack and test through it; a bad one is an error")
    func gziNamedByIndexOption() throws {
        try withScratch { scratch in
            _ = try scratch.write("data.gz", try Self.bgzf(in: scratch))
            #expect(try gzstream(["index", "data.gz"], in: scratch).status == 0)
            #expect(rename(scratch.path("data.gz.gzi"), scratch.path("elsewhere.gzi")) == 0)
            let size = Self.plain.count
            for (offset, length) in [(0, 10), (65279, 2), (100_000, 150_000), (size - 1, 5)] {
                let ranged = try gzstream(["unpack", "-c", "--index", "elsewhere.gzi", "--offset", String(offset),
                                           "--length", String(length), "data.gz"], in: scratch)
                #expect(ranged.status == 0 && ranged.err == "", "\(offset): \(ranged)")
                #expect(ranged.stdout == Array(Self.plain[offset..<min(size, offset + length)]), "\(offset)")
            }
            let whole = try gzstream(["unpack", "-c", "--index", "elsewhere.gzi", "data.gz"], in: scratch)
            #expect(whole.status == 0 && whole.err == "" && whole.stdout == Self.plain, "\(whole)")
            let tested = try gzstream(["test", "--index", "elsewhere.gzi", "data.gz"], in: scratch)
            #expect(tested.status == 0 && tested.err == "", "\(tested)")
            _ = try scratch.write("bad.gzi", Array("not an index\n".utf8))
            for arguments in [["unpack", "-c", "--index", "bad.gzi", "--offset", "5", "data.gz"],
                              ["unpack", "-c", "--index", "bad.gzi", "data.gz"]] {
                let bad = try gzstream(arguments, in: scratch)
                #expect(bad.status == 1 && bad.out == "", "\(arguments)")
                #expect(bad.err == "gzstream: bad.gzi: not a valid .gzi index: 13 bytes for 7575175936672558958 entries\n")
            }
            let missing = try gzstream(["unpack", "-c", "--index", "none.gzi", "--offset", "5", "data.gz"], in: scratch)
            #expect(missing.status == 1 && missing.err == "gzstream: none.gzi: open failed: No such file or directory\n")
        }
    }

    @Test("unpack --offset without an index says how to make one; usage errors for misuse", .requires(.bgzip))
    func rangeErrors() throws {
        try withScratch { scratch in
            _ = try scratch.write("data.gz", try Self.bgzf(in: scratch))
            let missing = try gzstream(["unpack", "--offset", "5", "-c", "data.gz"], in: scratch)
            #expect(missing.status == 1 && missing.out == "")
            #expect(missing.err == "gzstream: data.gz: no index data.gz.gzi (run 'gzstream index data.gz' to build it)\n")
            // A plain gzip file's index is a GZIDX one.
            _ = try scratch.write("plain.gz", try gzstream(["pack", "-c"], in: scratch, input: .bytes([1, 2, 3])).stdout)
            let plain = try gzstream(["unpack", "--offset", "1", "-c", "plain.gz"], in: scratch)
            #expect(plain.status == 1 && plain.out == "")
            #expect(plain.err == "gzstream: plain.gz: no index plain.gz.gzidx (run 'gzstream index plain.gz' to build it)\n")
            for arguments in [["unpack", "--offset", "5", "data.gz"], ["unpack", "--offset", "5", "-c"],
                              ["test", "--offset", "5", "data.gz"], ["unpack", "--length", "x", "-c", "data.gz"]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1 && result.out == "" && result.err.hasSuffix("\n" + tryHelpLine), "\(arguments): \(result)")
            }
        }
    }

    /// None of these may end with exit 0: a range whose member fails its CRC-32, an index made
    /// for another file (which would give no bytes), and --length 0 past the end.
    @Test("unpack --offset: a damaged member in the range is an error; a foreign index and an offset past the end too")
    func rangeChecks() throws {
        try withScratch { scratch in
            _ = try scratch.write("plain", Self.plain)
            #expect(try gzstream(["pack", "--bgzf", "--level", "0", "--index", "plain", "-o", "stored.gz"], in: scratch).status == 0)
            // Level 0: members of 18 + 5 + 65280 + 8 bytes; flip plain byte 3 * 65280 + 1000.
            var stored = try readBytes(scratch.path("stored.gz"))
            stored[3 * 65311 + 18 + 5 + 1000] ^= 1
            _ = try scratch.write("stored.gz", stored)
            // Damage, not a rewrite: the index is made no older than the file again.
            setModificationTime(scratch.path("stored.gz"), seconds: 1_000_000_000)
            let damaged = try gzstream(["unpack", "-c", "--offset", "196000", "--length", "1000", "stored.gz"], in: scratch)
            #expect(damaged.status == 1, "\(damaged)")
            #expect(damaged.err.hasPrefix("gzstream: stored.gz: CRC-32 mismatch in member 4 at byte "), "\(damaged)")
            let before = try gzstream(["unpack", "-c", "--offset", "1000", "--length", "1000", "stored.gz"], in: scratch)
            #expect(before.status == 0 && before.stdout == Array(Self.plain[1000..<2000]), "\(before)")

            #expect(try gzstream(["pack", "--bgzf", "-1", "--index", "plain", "-o", "one.gz"], in: scratch).status == 0)
            #expect(try gzstream(["pack", "--bgzf", "-9", "plain", "-o", "nine.gz"], in: scratch).status == 0)
            try FileManager.default.copyItem(atPath: scratch.path("one.gz.gzi"), toPath: scratch.path("nine.gz.gzi"))
            // Found beside the file, another file's index is not used: the range is decoded
            // from the start; named, it is an error.
            let foreign = try gzstream(["unpack", "-c", "--offset", "65280", "--length", "10", "nine.gz"], in: scratch)
            #expect(foreign.status == 0 && foreign.stdout == Array(Self.plain[65280..<65290]), "\(foreign)")
            #expect(foreign.err.hasPrefix("gzstream: nine.gz.gzi: not used: ")
                && foreign.err.hasSuffix("; rebuild it with: gzstream index -f nine.gz\n") && foreign.errLines.count == 1, "\(foreign)")
            let named = try gzstream(["unpack", "-c", "--index", "nine.gz.gzi", "--offset", "65280", "--length", "10", "nine.gz"],
                                     in: scratch)
            #expect(named.status == 1 && named.out == "", "\(named)")

            let size = Self.plain.count
            let past = try gzstream(["unpack", "-c", "--offset", "\(size + 1)", "--length", "0", "one.gz"], in: scratch)
            #expect(past.status == 1 && past.err == "gzstream: one.gz: offset \(size + 1) is past the end of the data (\(size) bytes)\n")
            let atEnd = try gzstream(["unpack", "-c", "--offset", "\(size)", "--length", "0", "one.gz"], in: scratch)
            #expect(atEnd.status == 0 && atEnd.out == "" && atEnd.err == "", "\(atEnd)")
        }
    }

    @Test("A .gzi with an offset above 2^63 - 1 is refused in one line, exit 1, nothing left behind (the range trapped)",
          arguments: [0, 8])
    func hostileIndexOffsets(field: Int) throws {
        try withScratch { scratch in
            _ = try scratch.write("plain", Self.plain)
            #expect(try gzstream(["pack", "--bgzf", "-1", "--index", "plain", "-o", "x.gz"], in: scratch).status == 0)
            // The last entry's compressed offset (field 0) or uncompressed offset (field 8),
            // little-endian (SAM/BAM specification §4.1.3): 2^63, and 2^64 - 1 (no order check
            // stops it, being the largest).
            var gzi = try readBytes(scratch.path("x.gz.gzi"))
            let count = gzi.withUnsafeBytes { Int($0.loadUnaligned(as: UInt64.self).littleEndian) }
            #expect(count >= 2)
            let value: UInt64 = field == 0 ? 1 << 63 : .max
            for byte in 0..<8 { gzi[8 + 16 * (count - 1) + field + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte))) }
            _ = try scratch.write("x.gz.gzi", gzi)
            // Named, it is an error and nothing is left; found beside the file, it is not used
            // and the range is decoded from the start.
            let named = try gzstream(["unpack", "-o", "out", "--index", "x.gz.gzi", "--offset", "\(Self.plain.count - 20)",
                                      "--length", "10", "x.gz"], in: scratch)
            #expect(named.status == 1, "\(named)")
            #expect(named.err == "gzstream: x.gz.gzi: not a valid .gzi index: entry \(count) has an offset above 2^63 - 1\n", "\(named)")
            let left = try FileManager.default.contentsOfDirectory(atPath: scratch.work.path).sorted()
            #expect(left == ["plain", "x.gz", "x.gz.gzi"], "\(left)")
            let result = try gzstream(["unpack", "-o", "out", "--offset", "\(Self.plain.count - 20)", "--length", "10", "x.gz"],
                                      in: scratch)
            #expect(result.status == 0, "\(result)")
            #expect(result.err == "gzstream: x.gz.gzi: not used: not a valid .gzi index: entry \(count) has an offset above 2^63 - 1\n",
                    "\(result)")
            #expect(try scratch.read("out") == Array(Self.plain.suffix(20).prefix(10)))
        }
    }

    @Test("gzstream index writes bgzip -r's .gzi; refuses to overwrite without -f, non-BGZF input and stdin", .requires(.bgzip))
    func index() throws {
        try withScratch { scratch in
            let packed = try Self.bgzf(in: scratch)
            _ = try scratch.write("data.gz", packed)
            _ = try scratch.write("copy.gz", packed)
            let result = try gzstream(["index", "data.gz"], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
            let reference = try bgzip(["-r", "copy.gz"], in: scratch)
            #expect(reference.status == 0)
            #expect(try scratch.read("data.gz.gzi") == (try scratch.read("copy.gz.gzi")))
            let again = try gzstream(["index", "data.gz"], in: scratch)
            #expect(again.status == 1)
            #expect(again.err == "gzstream: data.gz.gzi: already exists; not overwritten (use -f to overwrite)\n")
            let forced = try gzstream(["index", "-f", "data.gz"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            // A file that starts as BGZF must stay BGZF (one that does not gets a GZIDX index).
            let plainMember = try gzstream(["pack", "-c"], in: scratch, input: .bytes([1, 2, 3])).stdout
            _ = try scratch.write("mixed.gz", packed + plainMember)
            let members = try BGZFIndex.scan(MemoryInputStream(bytes: packed)).memberCount
            let mixed = try gzstream(["index", "mixed.gz"], in: scratch)
            #expect(mixed.status == 1)
            #expect(mixed.err == "gzstream: mixed.gz: not BGZF: the bytes at byte \(packed.count) (member \(members + 1)) are not "
                + "a BGZF member with a BC subfield; an index needs a file of BGZF members only (no zero padding or other members after them)\n")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("mixed.gz.gzi")))
            let stdin = try gzstream(["index", "-"], in: scratch, input: .bytes(packed))
            #expect(stdin.status == 1 && stdin.err.contains("index needs a file"), "\(stdin)")
            let noFile = try gzstream(["index"], in: scratch)
            #expect(noFile.status == 1 && noFile.err == usageError("index needs a FILE"), "\(noFile)")
        }
    }
}

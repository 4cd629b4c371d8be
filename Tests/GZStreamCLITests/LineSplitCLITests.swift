import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// Files whose lines meet split edges in every way: a line longer than a split and than a
/// span, runs of empty lines, `\r\n` ends, and with and without a last `\n`.
enum LineSplitFile: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case logLines, longLine, emptyLines, noFinalNewline, crlf, onlyNewlines

    var testDescription: String { rawValue }

    var bytes: [UInt8] {
        var generator = SplitMix64(seed: UInt64(rawValue.utf8.reduce(0) { $0 &* 31 &+ Int($1) } & 0xffff))
        var data: [UInt8] = []
        switch self {
        case .logLines:
            while data.count < 400_000 {
                let length = Int.random(in: 0...160, using: &generator)
                data += (0..<length).map { _ in UInt8.random(in: 0x20...0x7e, using: &generator) } + [0x0a]
            }
        case .longLine:
            data = Array("first\nsecond line\n".utf8)
            data += (0..<300_000).map { _ in UInt8.random(in: 0x61...0x7a, using: &generator) } + [0x0a]
            data += sampleText(byteCount: 100_000, seed: 5)
        case .emptyLines:
            while data.count < 300_000 {
                data += Array(repeating: 0x0a, count: Int.random(in: 1...2000, using: &generator))
                data += Array("some words\n".utf8)
            }
        case .noFinalNewline:
            data = sampleText(byteCount: 300_000, seed: 9)
            while data.last == 0x0a { data.removeLast() }
        case .crlf:
            while data.count < 300_000 {
                data += Array("GET /index.html HTTP/1.1 200 \(Int.random(in: 0...99999, using: &generator))\r\n".utf8)
            }
        case .onlyNewlines:
            data = Array(repeating: 0x0a, count: 200_000)
        }
        return data
    }
}

@Suite("unpack --whole-lines and index --plan: splits that give every line once", .onDedicatedThreads)
struct LineSplitCLITests {
    /// `data` as one zlib deflate member (what gzip -6 writes).
    private func gzip(_ data: [UInt8]) throws -> [UInt8] {
        let memory = MemoryOutputStream()
        let gzip = try GzipOutputStream(wrapping: memory, level: 6)
        try gzip.openOrThrow()
        try gzip.writeAll(data)
        try gzip.closeOrThrow()
        return [UInt8](memory.data)
    }

    /// The splits `index --plan SIZE --json` prints for `name`, and the whole JSON object.
    private func plan(_ name: String, size: Int, in scratch: Scratch) throws -> (splits: [(Int, Int?)], json: [String: Any]) {
        let result = try gzstream(["index", "--plan", "\(size)", "--json", name], in: scratch)
        #expect(result.status == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        let splits = try #require(object["splits"] as? [[String: Any]])
        return (splits.map { (($0["offset"] as? Int) ?? -1, $0["length"] as? Int) }, object)
    }

    @Test("Every split of every plan gives the oracle's lines, and a plan's splits give the file", arguments: LineSplitFile.allCases)
    func plans(file: LineSplitFile) throws {
        try withScratch { scratch in
            let plain = file.bytes
            _ = try scratch.write("data.gz", try gzip(plain))
            let indexed = try gzstream(["index", "--span", "32K", "data.gz"], in: scratch)
            #expect(indexed.status == 0, "\(indexed)")
            for size in [1 << 30, 150_000, 64 << 10, 40_000] {
                let (splits, json) = try plan("data.gz", size: size, in: scratch)
                #expect(json["plainSize"] as? Int == plain.count && json["index"] as? String == "data.gz.gzidx")
                // Consecutive, from 0 to the end.
                #expect(splits.first?.0 == 0 && splits.last.map { $0.0 + ($0.1 ?? -1) } == plain.count, "\(size): \(splits)")
                #expect(zip(splits, splits.dropFirst()).allSatisfy { $0.0 + ($0.1 ?? -1) == $1.0 }, "\(size): \(splits)")
                var whole: [UInt8] = []
                for (offset, length) in splits {
                    var arguments = ["unpack", "-c", "--whole-lines", "--offset", "\(offset)"]
                    if let length { arguments += ["--length", "\(length)"] }
                    let result = try gzstream(arguments + ["data.gz"], in: scratch)
                    #expect(result.status == 0 && result.err == "", "\(offset) \(String(describing: length)): \(result)")
                    #expect(result.stdout == linesStarting(in: plain, offset: offset, length: length),
                            "split \(offset) +\(String(describing: length)) of \(size)")
                    whole += result.stdout
                }
                #expect(whole == plain, "the splits of --plan \(size) together")
            }
        }
    }

    @Test("Ranges not at access points, through the index and without one, against the oracle")
    func anyRange() throws {
        try withScratch { scratch in
            let plain = LineSplitFile.logLines.bytes
            let packed = try gzip(plain)
            _ = try scratch.write("data.gz", packed)
            _ = try scratch.write("bare.gz", packed)
            #expect(try gzstream(["index", "--span", "32K", "data.gz"], in: scratch).status == 0)
            let ranges: [(Int, Int?)] = [(0, 0), (0, 1), (1, 0), (1, 1), (100, 5000), (32_767, 2), (32_768, 70_000),
                                         (plain.count - 3, 10), (plain.count - 1, nil), (plain.count, nil), (250_000, nil)]
            for name in ["data.gz", "bare.gz"] {
                for (offset, length) in ranges {
                    var arguments = ["unpack", "-c", "--whole-lines", "--offset", "\(offset)"]
                    if let length { arguments += ["--length", "\(length)"] }
                    let result = try gzstream(arguments + [name], in: scratch)
                    #expect(result.status == 0 && result.err == "", "\(name) \(offset): \(result)")
                    #expect(result.stdout == linesStarting(in: plain, offset: offset, length: length), "\(name) \(offset)")
                }
            }
            let past = try gzstream(["unpack", "-c", "--whole-lines", "--offset", "\(plain.count + 2)", "data.gz"], in: scratch)
            #expect(past.status == 1 && past.out == "", "\(past)")
        }
    }

    @Test("A pack --index file: its chunk starts are the splits")
    func packIndex() throws {
        try withScratch { scratch in
            let plain = LineSplitFile.logLines.bytes
            _ = try scratch.write("data", plain)
            #expect(try gzstream(["pack", "-k", "-b", "64", "--index", "data"], in: scratch).status == 0)
            let (splits, _) = try plan("data.gz", size: 100_000, in: scratch)
            #expect(splits.map(\.0) == [0, 131_072, 262_144, 393_216].filter { $0 < plain.count })
            var whole: [UInt8] = []
            for (offset, length) in splits {
                var arguments = ["unpack", "-c", "--whole-lines", "--offset", "\(offset)"]
                if let length { arguments += ["--length", "\(length)"] }
                whole += try gzstream(arguments + ["data.gz"], in: scratch).stdout
            }
            #expect(whole == plain)
        }
    }

    @Test("--plan: text lines, one split and a warning without an index, a stale index refused")
    func planCases() throws {
        try withScratch { scratch in
            let plain = LineSplitFile.logLines.bytes
            _ = try scratch.write("data.gz", try gzip(plain))
            let bare = try gzstream(["index", "--plan", "1M", "--json", "data.gz"], in: scratch)
            let warning = "no index, so one split (run 'gzstream index data.gz' to build one)"
            #expect(bare.status == 0 && bare.err == "gzstream: data.gz: \(warning)\n", "\(bare)")
            let size = try scratch.read("data.gz").count
            #expect(bare.out == "{\"file\": \"data.gz\", \"compressedSize\": \(size), \"index\": null, \"plainSize\": null, "
                + "\"splits\": [{\"offset\": 0, \"length\": null}], \"warning\": \"\(warning)\"}\n")
            #expect(try gzstream(["index", "--span", "64K", "data.gz"], in: scratch).status == 0)
            let text = try gzstream(["index", "--plan", "1G", "data.gz"], in: scratch)
            #expect(text.status == 0 && text.out == "0 \(plain.count)\n" && text.err == "", "\(text)")
            // The file rewritten after it was indexed: its index no longer fits.
            Thread.sleep(forTimeInterval: 0.01)
            _ = try scratch.write("data.gz", try gzip(plain + Array("one more line\n".utf8)))
            let stale = try gzstream(["index", "--plan", "100K", "--json", "data.gz"], in: scratch)
            #expect(stale.status == 1 && stale.out == "", "\(stale)")
            #expect(stale.err.hasPrefix("gzstream: data.gz.gzidx: ") && stale.err.hasSuffix("rebuild it with: gzstream index -f data.gz\n"),
                    "\(stale.err)")
            #expect(stale.err.split(separator: "\n").count == 1, "\(stale.err)")
            // Another file's index, newer than this one: it does not fit, found before any split.
            _ = try scratch.write("other.gz", try gzip(Array(plain.prefix(200_000))))
            #expect(try gzstream(["index", "-f", "-o", "data.gz.gzidx", "other.gz"], in: scratch).status == 0)
            let foreign = try gzstream(["index", "--plan", "100K", "data.gz"], in: scratch)
            #expect(foreign.status == 1 && foreign.out == "", "\(foreign)")
            #expect(foreign.err.hasPrefix("gzstream: data.gz.gzidx: ") && foreign.err.hasSuffix("rebuild it with: gzstream index -f data.gz\n")
                    && foreign.err.split(separator: "\n").count == 1, "\(foreign.err)")
        }
    }

    @Test("Usage: --whole-lines needs a range; --plan writes no index; --json belongs to --plan",
          arguments: [
              (["unpack", "-c", "--whole-lines", "x.gz"], "--whole-lines needs --offset or --length (the range whose lines are written)"),
              (["index", "--plan", "1M", "-o", "y", "x.gz"], "--plan writes no index: -o, --span and --strict do not apply"),
              (["index", "--plan", "0", "x.gz"], "--plan needs a split size above 0"),
              (["index", "--json", "x.gz"], "--json applies to list and index --plan"),
              (["test", "--whole-lines", "x.gz"], "--whole-lines applies to unpack (with --offset and --length)"),
          ])
    func usage(arguments: [String], message: String) throws {
        try withScratch { scratch in
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1 && result.out == "")
            #expect(result.err == "gzstream: \(message)\nTry 'gzstream --help' for more information.\n", "\(result.err)")
        }
    }
}

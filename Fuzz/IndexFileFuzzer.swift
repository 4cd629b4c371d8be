// libFuzzer entry for index files: the fuzzed input is an index, read beside a fixed valid
// compressed file that the target makes at start-up (Fuzz/IndexFuzzFixtures.swift). By its first
// bytes it is a GZIDX file (`GZIDX`, read with GzipIndex(gzidxFile:path:) from a temporary file
// as the CLI reads it, and with GzipIndex(gzidx:), which must agree), a gztool index (8 zero bytes
// and `gzipindx` or `gzipindX`), or else bgzip's .gzi over the fixed BGZF file. An index that
// does not parse is fine. One that parses is read through: the whole plain data from offset 0,
// then three ranges at offsets taken from the input, checked by the oracle in
// Fuzz/IndexFuzzOracle.swift (a prefix of the right bytes; all of them without an error).
//
// `index-file-fuzzer --write-seeds DIR` writes valid indexes of the fixed files into DIR and
// `--write-fixed DIR` writes the fixed files (fixed.gz, fixed.bgz) there, for gztool and for
// reproducing a finding with the CLI; both are handled before libFuzzer reads its flags.
// A violation prints `ORACLE VIOLATION [category]` and aborts; INDEX_FUZZ_IGNORE=PREFIX,... lets
// the categories that start with those prefixes pass (to look for others while one is fixed).
// Built by `make fuzz` (scripts/fuzz.sh), not by SwiftPM: libFuzzer supplies `main`.
import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#endif

/// Made on first use: in LLVMFuzzerInitialize, before the first input is timed.
let fixtures = IndexFuzzFixtures.make()

@_cdecl("LLVMFuzzerInitialize")
public func initializeIndexFuzzer(_ argc: UnsafeMutablePointer<CInt>,
                                  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let arguments = (0..<Int(argc.pointee)).map { String(cString: argv.pointee![$0]!) }
    var handled = false
    for (option, write) in [("--write-seeds", writeSeeds(into:)), ("--write-fixed", writeFixedFiles(into:))] {
        guard let at = arguments.firstIndex(of: option) else { continue }
        guard at + 1 < arguments.count else {
            fputs("index-file-fuzzer: \(option) needs a directory\n", stderr)
            exit(2)
        }
        write(arguments[at + 1])
        handled = true
    }
    if handled { exit(0) }
    _ = fixtures
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIndexFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Every choice (threads, inflater, read size, ranges) comes from the input's hash.
    var choices = SplitMix64(seed: fnv1a(bytes))
    if bytes.starts(with: GzipIndex.magic) {
        guard let (whole, ranges) = parseGZIDX(bytes, choices: &choices) else { return 0 }
        checkGzip(whole: whole, ranges: ranges, format: bytes.count > 5 && bytes[5] == 0 ? "gzidx-v0" : "gzidx",
                  choices: &choices)
    } else if bytes.count >= 16 && bytes[0..<8].allSatisfy({ $0 == 0 }) && bytes[8..<15].elementsEqual("gzipind".utf8) {
        guard let index = try? GzipIndex(gztool: bytes, compressedSize: UInt64(fixtures.gzip.count)) else { return 0 }
        checkGzip(whole: index, ranges: index, format: "gztool", choices: &choices)
    } else {
        guard let index = try? BGZFIndex(decoding: bytes) else { return 0 }
        checkBGZF(index, choices: &choices)
    }
    return 0
}

/// The GZIDX input parsed both ways: from a file (windows left there) for the whole read, and
/// for the ranges one of the two, chosen by the input. The two must agree on whether the input
/// is an index and, if it is, on every field and window; nil when neither takes it.
private func parseGZIDX(_ bytes: [UInt8], choices: inout SplitMix64) -> (GzipIndex, GzipIndex)? {
    let descriptor = unlinkedFile(holding: bytes)
    defer { close(descriptor) }
    let fromFile = Result { try GzipIndex(gzidxFile: descriptor, path: "fuzzed.gzidx") }
    let fromBytes = Result { () throws(GzipIndexError) in try GzipIndex(gzidx: bytes) }
    switch (fromFile, fromBytes) {
    case (.failure, .failure):
        return nil
    case (.success(let fileIndex), .success(let index)):
        guard let loaded = try? fileIndex.loadingWindows(), loaded == index else {
            return reportDisagreement("GzipIndex(gzidxFile:) and GzipIndex(gzidx:) read different indexes")
        }
        return (fileIndex, choices.next() & 1 == 0 ? fileIndex : index)
    case (.success, .failure(let error)):
        return reportDisagreement("GzipIndex(gzidxFile:) took an index that GzipIndex(gzidx:) refuses: \(error)")
    case (.failure(let error), .success):
        return reportDisagreement("GzipIndex(gzidx:) took an index that GzipIndex(gzidxFile:) refuses: \(describe(error))")
    }
}

private func reportDisagreement(_ message: String) -> (GzipIndex, GzipIndex)? {
    let key = "gzidx-parse/parsers-disagree"
    abortUnlessIgnored(key, ["ORACLE VIOLATION [\(key)]", "  " + message])
    return nil
}

/// What one input reads with: the whole read's threads and inflater, the other ones for the
/// ranges (so each input exercises both), and the size of each read.
private struct ReadChoices {
    var wholeThreads: Int
    var wholeInflater: GzipInputStream.Inflater
    var readSize: Int
    var rangeThreads: Int { 3 - wholeThreads }
    var rangeInflater: GzipInputStream.Inflater { wholeInflater == .isal ? .zlib : .isal }

    init(_ choices: inout SplitMix64) {
        let bits = choices.next()
        wholeThreads = 1 + Int(bits & 1)
        wholeInflater = bits & 2 == 0 ? .isal : .zlib
        readSize = [61, 4096, 65536][Int((bits >> 8) % 3)]
    }
}

/// A range's start and length from the input: at or after one of the index's starts (`starts`,
/// plain offsets), by 0 or up to 80,000 bytes; sometimes past the end of the data.
private func rangeChoice(_ choices: inout SplitMix64, starts: [UInt64], allowsToEnd: Bool) -> (offset: Int, length: Int?) {
    let bits = choices.next()
    // An index may hold no point at all (one the readers refuse): the range then starts at 0.
    let start = starts.isEmpty ? 0 : starts[Int(bits % UInt64(starts.count))]
    let base = Int(min(start, UInt64(fixtures.plain.count + 100_000)))
    let offset = base + ((bits >> 16) % 4 == 0 ? 0 : Int((bits >> 20) % 80_000))
    let lengths: [Int?] = [1, 17, 4096, 40_000, 150_000, allowsToEnd ? nil : 300_000]
    var length = lengths[Int((bits >> 40) % UInt64(lengths.count))]
    if offset == 0 && length == nil { length = 40_000 }
    return (offset, length)
}

/// The expected bytes of a read at `offset` of `length` bytes (to the end when nil).
private func expectedSlice(offset: Int, length: Int?) -> ArraySlice<UInt8> {
    let count = fixtures.plain.count
    let lower = min(offset, count)
    return fixtures.plain[lower..<min(length.map { lower + $0 } ?? count, count)]
}

/// Reads the fixed gzip file through `whole` from the start, and through `ranges` at three
/// ranges, each checked by the oracle.
private func checkGzip(whole: GzipIndex, ranges: GzipIndex, format: String, choices: inout SplitMix64) {
    let read = ReadChoices(&choices)
    func stream(_ index: GzipIndex, threads: Int, inflater: GzipInputStream.Inflater) -> IndexedGzipInputStream {
        do {
            let stream = try IndexedGzipInputStream(wrapping: FileInputStream(fileDescriptor: fixtures.gzipDescriptor),
                                                    index: index, threads: threads, inflater: inflater, chunkSize: 4096,
                                                    trailingGarbage: .fail, maximumOutputSize: 8 << 20,
                                                    closesInnerStream: false)
            stream.open()
            return stream
        } catch {
            fatalError("IndexedGzipInputStream refused valid arguments: \(error)")
        }
    }
    let wholeStream = stream(whole, threads: read.wholeThreads, inflater: read.wholeInflater)
    var checker = PrefixChecker(expected: fixtures.plain[...])
    let error = readChecking(wholeStream, readSize: read.readSize, into: &checker)
    if let violation = checker.violation(error: error) {
        let (key, details) = fixtures.category(index: whole, first: 0, failedAt: Int64(checker.matched))
        reportViolation(ReadDescription(format: format, threads: read.wholeThreads, inflater: read.wholeInflater,
                                        api: "read from the start"),
                        category: key, violation: violation, error: error,
                        details: details + ["index mismatch noted: \(wholeStream.indexMismatch.map { "\($0)" } ?? "none")"])
    }
    wholeStream.close()

    let starts = ranges.points.map(\.plainOffset)
    var rangeStream: IndexedGzipInputStream?
    for _ in 0..<3 {
        let (offset, length) = rangeChoice(&choices, starts: starts, allowsToEnd: true)
        let current = rangeStream ?? stream(ranges, threads: read.rangeThreads, inflater: read.rangeInflater)
        rangeStream = current
        var error: String?
        var checker = PrefixChecker(expected: expectedSlice(offset: offset, length: length))
        do {
            try current.seek(toPlainOffset: Int64(offset), length: length.map(Int64.init))
            error = readChecking(current, readSize: read.readSize, into: &checker)
        } catch let seekError {
            error = "seek: " + describe(seekError)
        }
        if let violation = checker.violation(error: error) {
            let first = fixtures.startPoint(for: Int64(offset), in: ranges)
            let (key, details) = fixtures.category(index: ranges, first: first, failedAt: Int64(offset + checker.matched))
            reportViolation(ReadDescription(format: format, range: (offset, length), threads: read.rangeThreads,
                                            inflater: read.rangeInflater, api: "seek(toPlainOffset:length:)"),
                            category: key, violation: violation, error: error, details: details)
        }
        // A failed stream stays failed: the next range gets a new one.
        if error != nil {
            current.close()
            rangeStream = nil
        }
    }
    rangeStream?.close()
}

/// Reads the fixed BGZF file through `index` from the start, then three ranges: with
/// `read(range:)` and with `seek(toPlainOffset:)` and reads, alternately.
private func checkBGZF(_ index: BGZFIndex, choices: inout SplitMix64) {
    let read = ReadChoices(&choices)
    func stream(threads: Int, inflater: GzipInputStream.Inflater) -> IndexedBGZFInputStream {
        do {
            let stream = try IndexedBGZFInputStream(wrapping: FileInputStream(fileDescriptor: fixtures.bgzfDescriptor),
                                                    index: index, threads: threads, trailingGarbage: .fail,
                                                    inflater: inflater, closesInnerStream: false)
            stream.open()
            return stream
        } catch {
            fatalError("IndexedBGZFInputStream refused valid arguments: \(error)")
        }
    }
    let wholeStream = stream(threads: read.wholeThreads, inflater: read.wholeInflater)
    var checker = PrefixChecker(expected: fixtures.plain[...])
    let error = readChecking(wholeStream, readSize: read.readSize, into: &checker)
    if let violation = checker.violation(error: error) {
        reportViolation(ReadDescription(format: "gzi", threads: read.wholeThreads, inflater: read.wholeInflater,
                                        api: "read from the start"),
                        category: "file-start", violation: violation, error: error, details: [])
    }
    wholeStream.close()

    let starts = [0] + index.entries.map(\.uncompressedOffset)
    var rangeStream: IndexedBGZFInputStream?
    for number in 0..<3 {
        let (offset, length) = rangeChoice(&choices, starts: starts, allowsToEnd: false)
        let count = length ?? 0
        let current = rangeStream ?? stream(threads: read.rangeThreads, inflater: read.rangeInflater)
        rangeStream = current
        var error: String?
        var checker = PrefixChecker(expected: expectedSlice(offset: offset, length: count))
        let api = number % 2 == 0 ? "read(range:)" : "seek(toPlainOffset:) and reads"
        do {
            if number % 2 == 0 {
                try current.read(range: offset..<offset + count) { piece in
                    if !checker.take(piece) { throw WrongBytes() }
                }
            } else {
                try current.seek(toPlainOffset: offset)
                error = readChecking(current, readSize: read.readSize, limit: count, into: &checker)
            }
        } catch is WrongBytes {
        } catch let readError {
            error = describe(readError)
        }
        if let violation = checker.violation(error: error) {
            let (entry, membersBefore) = index.start(containing: UInt64(offset))
            let kind = fixtures.classify(entry: entry, membersBefore: membersBefore)
            let members = fixtures.bgzfMembers.map { "(\($0.compressedOffset), \($0.uncompressedOffset))" }
            reportViolation(ReadDescription(format: "gzi", range: (offset, count), threads: read.rangeThreads,
                                            inflater: read.rangeInflater, api: api),
                            category: "start-entry/" + kind, violation: violation,
                            error: error,
                            details: ["started at entry \(membersBefore) (compressed \(entry.compressedOffset),"
                                        + " uncompressed \(entry.uncompressedOffset)): \(kind)",
                                      "the file's members (compressed, uncompressed): " + members.joined(separator: " ")])
        }
        if error != nil {
            current.close()
            rangeStream = nil
        }
    }
    rangeStream?.close()
}

/// Thrown from a `read(range:)` body to stop at the first wrong byte.
private struct WrongBytes: Error {}

/// FNV-1a, 64 bits: the input's hash, from which every choice is made.
private func fnv1a(_ bytes: [UInt8]) -> UInt64 {
    bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
}

// libFuzzer entry for GzipInputStream: any byte string must give either the right data or a
// typed error — never a crash, a hang or an unbounded allocation. zlib's inflate (`.zlib`) is
// the strict verdict, what `test` and `list` give; the fast paths (ISA-L's sequential reader,
// BGZFInputStream's parallel members) must give zlib's bytes wherever zlib succeeds, and where
// zlib fails they may succeed only with every member's CRC-32 and ISIZE matching what they gave.
// Built by `make fuzz` (scripts/fuzz.sh), not by SwiftPM: libFuzzer supplies `main`.
import ByteStreams
import CZlib
import GzipStreams

/// Returns at most `limit` bytes per read, so members, headers and trailers straddle reads.
final class ShortReadInputStream: ByteInputStream, @unchecked Sendable {
    private let inner: MemoryInputStream
    private let limit: Int

    init(bytes: UnsafeBufferPointer<UInt8>, limit: Int) {
        inner = MemoryInputStream(bytes: bytes)
        self.limit = limit
        super.init()
    }

    override func openBacking() throws { inner.open() }
    override func closeBacking() throws { inner.close() }
    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let count = inner.read(buffer, maxLength: min(maxLength, limit))
        if count < 0 { throw inner.streamError! }
        return count
    }
}

/// A gzip stream over `inner` as the fuzzer reads every input: 61-byte chunks (so members,
/// headers and trailers straddle refills), trailing garbage an error, at most 8 MiB out. The
/// arguments are valid, so a stream that refuses them is a bug, and stops the run.
func gunzipStream(_ inner: ByteInputStream, inflater: GzipInputStream.Inflater) -> GzipInputStream {
    do {
        return try GzipInputStream(wrapping: inner, chunkSize: 61, trailingGarbage: .fail,
                                   maximumOutputSize: 8 << 20, inflater: inflater)
    } catch {
        fatalError("GzipInputStream refused valid arguments: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGzipInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // The first byte picks the read size, so the fuzzer explores chunk boundaries too.
    let readLimit = size > 0 ? Int(data[0] % 17) + 1 : 1
    var results: [(output: [UInt8], error: String?)] = []
    for inner in [MemoryInputStream(bytes: bytes), ShortReadInputStream(bytes: bytes, limit: readLimit)] as [ByteInputStream] {
        let gzip = gunzipStream(inner, inflater: .zlib)
        var output: [UInt8] = []
        var error: String?
        do {
            output = try gzip.readToEnd()
        } catch let failure as GzipError {
            error = failure.kind
            // Every input fault names an offset inside the input (or its end).
            if let offset = failure.offset, offset < 0 || offset > Int64(size) {
                fatalError("offset \(offset) outside the input of \(size) bytes: \(failure)")
            }
        } catch {
            fatalError("unexpected error type: \(error)")
        }
        gzip.close()
        gzip.close()
        var byte: UInt8 = 0
        if gzip.read(&byte, maxLength: 1) != -1 {
            fatalError("read after close did not fail")
        }
        results.append((output, error))
    }
    // Chunking must not change the outcome.
    if results[0].output != results[1].output || results[0].error != results[1].error {
        fatalError("one-shot and short-read decoding differ: \(results[0].error ?? "ok") vs \(results[1].error ?? "ok")")
    }
    // ISA-L's inflate, in short reads (so its read-ahead is put back across refills): a fast
    // path under the rule, checked member by member.
    let isal = gunzipStream(ShortReadInputStream(bytes: bytes, limit: readLimit), inflater: .isal)
    var members: [GzipInputStream.Member] = []
    isal.memberHandler = { members.append($0) }
    let fast = decode(isal)
    checkFastPath("ISA-L", fast, against: results[0])
    if results[0].error != nil, fast.error == nil, !trailersMatch(fast.output, members: members, input: bytes) {
        fatalError("ISA-L gave output that its members' CRC-32 and ISIZE do not vouch for")
    }
    // BGZFInputStream on two threads (its parallel path for BGZF members, the sequential reader
    // from the first bytes that are not one) must give what the sequential reader gives.
    let bgzf: BGZFInputStream
    do {
        bgzf = try BGZFInputStream(wrapping: MemoryInputStream(bytes: bytes), threads: 2, chunkSize: 61,
                                   trailingGarbage: .fail, maximumOutputSize: 8 << 20)
    } catch {
        fatalError("BGZFInputStream refused valid arguments: \(error)")
    }
    let parallel = decode(bgzf)
    checkFastPath("BGZF", parallel, against: results[0])
    // Its BGZF members are inflated by libdeflate, which takes other invalid deflate data than
    // ISA-L (the reserved distance codes 30-31, lengths 286-287): it may succeed where the
    // sequential reader fails, when each member's trailer vouches for what it gave.
    let lenientOnly = parallel.error == nil && fast.error != nil
        && bgzfTrailersVouch(parallel.output, input: bytes)
    if !lenientOnly, parallel.output != fast.output || parallel.error != fast.error {
        fatalError("BGZF and the sequential reader differ: \(parallel.error ?? "ok") vs \(fast.error ?? "ok")")
    }
    // IndexedGzipInputStream over the input as a file, through indexes that fit and that do
    // not (IndexedFuzzCheck.swift): the sequential reader's bytes and error.
    checkIndexedPath(bytes, sequential: ReadOutcome(output: fast.output, errorKind: fast.error))
    // The index recorded from a decode reads back what the decode gave.
    if fast.error == nil { checkRecordedIndex(bytes, plain: fast.output) }
    return 0
}

/// Reads `stream` to its end and closes it: its bytes, and its error's kind if it failed.
func decode(_ stream: ByteInputStream) -> (output: [UInt8], error: String?) {
    defer { stream.close() }
    do {
        return (try stream.readToEnd(), nil)
    } catch {
        return ([], (error as? GzipError)?.kind ?? "\(error)")
    }
}

/// The rule for a fast path, against zlib's `strict` result: where zlib succeeds, the same
/// bytes; where zlib fails, success only when zlib's failure is invalid deflate data (which
/// ISA-L may decode, see ``GzipInputStream/Inflater/isal``) or the output limit (which a path
/// that reads further meets later).
func checkFastPath(_ name: String, _ fast: (output: [UInt8], error: String?), against strict: (output: [UInt8], error: String?)) {
    if strict.error == nil {
        if fast.error != nil || fast.output != strict.output {
            fatalError("\(name) decoded an input zlib accepts differently from zlib: \(fast.error ?? "other bytes")")
        }
    } else if fast.error == nil, strict.error != "invalid-deflate", strict.error != "output-limit" {
        fatalError("\(name) accepted an input zlib rejects as \(strict.error!)")
    }
}

/// Whether `output` is, member by member, bytes whose CRC-32 (zlib's `crc32`, not the stream's)
/// and size modulo 2^32 are those in each member's trailer in `input` (RFC 1952 §2.3.1).
func trailersMatch(_ output: [UInt8], members: [GzipInputStream.Member], input: UnsafeBufferPointer<UInt8>) -> Bool {
    var start = 0
    for member in members {
        let end = start + Int(member.uncompressedSize)
        let trailer = Int(member.offset + member.compressedSize) - 8
        guard end <= output.count, trailer >= 0, trailer + 8 <= input.count else { return false }
        let crc = output[start..<end].withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        let stored = (0..<8).map { UInt64(input[trailer + $0]) << (8 * UInt64($0 % 4)) }
        if UInt64(crc) != stored[0..<4].reduce(0, |) || UInt64(end - start) & 0xffff_ffff != stored[4...].reduce(0, |) {
            return false
        }
        start = end
    }
    return start == output.count
}

/// Whether `output` is what BGZFInputStream may give for `input` on its fast path: for each
/// BGZF member at the start of `input` (as BGZFInputStream frames them: FLG FEXTRA alone,
/// subfields that fill XLEN, the first `BC` subfield with SLEN 2 giving BSIZE), ISIZE bytes whose
/// CRC-32 (zlib's `crc32`) is the trailer's; then, for the bytes after the last such member,
/// nothing if they are all zero (padding), else what ISA-L's sequential reader gives for them.
func bgzfTrailersVouch(_ output: [UInt8], input: UnsafeBufferPointer<UInt8>) -> Bool {
    func load(_ offset: Int, _ count: Int) -> Int {
        (0..<count).reduce(0) { $0 | Int(input[offset + $1]) << (8 * $1) }
    }
    var offset = 0
    var produced = 0
    while let size = bgzfMemberSize(input, at: offset), offset + size <= input.count {
        let isize = load(offset + size - 4, 4)
        guard produced + isize <= output.count else { return false }
        let crc = output[produced..<produced + isize].withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        guard Int(crc) == load(offset + size - 8, 4) else { return false }
        produced += isize
        offset += size
    }
    let rest = Array(input[offset...])
    if rest.allSatisfy({ $0 == 0 }) { return produced == output.count }
    let tail = decode(gunzipStream(MemoryInputStream(bytes: rest), inflater: .isal))
    return tail.error == nil && Array(output[produced...]) == tail.output
}

/// The size (BSIZE + 1) of the BGZF member at `offset` in `input`, or nil if none starts there
/// (SAM/BAM specification §4.1).
func bgzfMemberSize(_ input: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int? {
    func load16(_ at: Int) -> Int { Int(input[at]) | Int(input[at + 1]) << 8 }
    guard offset + 12 <= input.count, input[offset] == 0x1f, input[offset + 1] == 0x8b,
          input[offset + 2] == 8, input[offset + 3] == 4 else { return nil }
    let headerSize = 12 + load16(offset + 10)
    guard offset + headerSize <= input.count else { return nil }
    var position = 12
    var size: Int?
    while position + 4 <= headerSize {
        let length = load16(offset + position + 2)
        guard position + 4 + length <= headerSize else { return nil }
        if size == nil, input[offset + position] == 0x42, input[offset + position + 1] == 0x43, length == 2 {
            size = load16(offset + position + 4) + 1
        }
        position += 4 + length
    }
    guard position == headerSize, let size, size >= headerSize + 8 else { return nil }
    return size
}

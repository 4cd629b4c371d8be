// libFuzzer entry for GzipInputStream: any byte string must give either the right data or a
// typed error — never a crash, a hang or an unbounded allocation — through zlib's inflate and
// through ISA-L's, which must agree on every valid input. Built by `make fuzz`
// (scripts/fuzz.sh), not by SwiftPM: libFuzzer supplies `main`.
import ByteStreams
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
    // ISA-L's inflate, in short reads (so its read-ahead is put back across refills): where
    // zlib succeeds it must give the same bytes. ISA-L accepts some deflate data zlib rejects
    // (an incomplete distance code, say) when the CRC-32 and ISIZE still check; nothing else.
    let isal = gunzipStream(ShortReadInputStream(bytes: bytes, limit: readLimit), inflater: .isal)
    let isalOutput = try? isal.readToEnd()
    isal.close()
    if results[0].error == nil, isalOutput != results[0].output {
        fatalError("ISA-L decoded a valid input differently from zlib")
    }
    if let zlibError = results[0].error, isalOutput != nil, zlibError != "invalid-deflate", zlibError != "output-limit" {
        fatalError("ISA-L accepted an input zlib rejects as \(zlibError)")
    }
    return 0
}

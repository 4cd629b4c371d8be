// The indexed path against the sequential one, for the libFuzzer target in GzipInputFuzzer.swift:
// any input, read whole through an index, must give the sequential reader's bytes and error.
import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#endif

/// What a whole read gave: its bytes, or (as `decode` in GzipInputFuzzer.swift) no bytes and the
/// error's kind when it failed.
struct ReadOutcome: Equatable {
    var output: [UInt8]
    var errorKind: String?
}

/// Reads `stream` to its end in 61-byte reads (so chunks are returned in pieces).
func readOutcome(_ stream: ByteInputStream) -> ReadOutcome {
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 61)
    stream.open()
    while true {
        let count = stream.read(&buffer, maxLength: buffer.count)
        if count < 0 {
            let kind = (stream.streamError as? GzipError)?.kind ?? "other: \(String(describing: stream.streamError))"
            return ReadOutcome(output: [], errorKind: kind)
        }
        if count == 0 { return ReadOutcome(output: output, errorKind: nil) }
        output += buffer[0..<count]
    }
}

/// The input written to an unlinked temporary file, read through two indexes on two threads:
/// one point where the deflate data starts (the whole file is one span, members and all), and
/// that point plus one made up in the middle (which does not decode as it says, so the
/// sequential reader takes over from the member's start). Both must equal `sequential` (ISA-L's
/// sequential reader, as the indexed path inflates with ISA-L).
func checkIndexedPath(_ bytes: UnsafeBufferPointer<UInt8>, sequential: ReadOutcome) {
    guard let headerEnd = firstHeaderEnd(bytes) else { return }
    let fd = unlinkedFile(holding: bytes)
    defer { close(fd) }
    let size = UInt64(bytes.count)
    let first = GzipAccessPoint(compressedOffset: UInt64(headerEnd), plainOffset: 0)
    var indexes = [GzipIndex(compressedSize: size, plainSize: 0, spacing: 32768, points: [first])]
    if size > UInt64(headerEnd) + 2 {
        let madeUp = GzipAccessPoint(compressedOffset: (UInt64(headerEnd) + size) / 2, bitOffset: 3, plainOffset: 1000)
        indexes.append(GzipIndex(compressedSize: size, plainSize: 0, spacing: 32768, points: [first, madeUp]))
    }
    for index in indexes {
        let stream: IndexedGzipInputStream
        do {
            stream = try IndexedGzipInputStream(wrapping: FileInputStream(fileDescriptor: fd), index: index, threads: 2,
                                                chunkSize: 61, trailingGarbage: .fail, maximumOutputSize: 8 << 20,
                                                closesInnerStream: false)
        } catch {
            fatalError("IndexedGzipInputStream refused valid arguments: \(error)")
        }
        let outcome = readOutcome(stream)
        stream.close()
        if outcome != sequential {
            fatalError("the indexed path (\(index.points.count) points) gave \(outcome.output.count) bytes and "
                + "\(outcome.errorKind ?? "no error"); the sequential one \(sequential.output.count) and "
                + "\(sequential.errorKind ?? "no error")")
        }
    }
}

/// The offset just past the first member's header, if `bytes` start with a whole valid one.
private func firstHeaderEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    // A gzip stream over the header alone reports where its deflate data starts: the bytes of
    // the header are those consumed when the first read needs deflate data. Simplest: parse
    // the fixed part and the optional fields (RFC 1952 §2.3.1).
    guard bytes.count >= 10, bytes[0] == 0x1f, bytes[1] == 0x8b, bytes[2] == 8, bytes[3] & 0xe0 == 0 else { return nil }
    let flags = bytes[3]
    var offset = 10
    if flags & 4 != 0 {
        guard offset + 2 <= bytes.count else { return nil }
        offset += 2 + Int(bytes[offset]) + Int(bytes[offset + 1]) << 8
    }
    for bit: UInt8 in [8, 16] where flags & bit != 0 {
        while offset < bytes.count && bytes[offset] != 0 { offset += 1 }
        offset += 1
    }
    if flags & 2 != 0 { offset += 2 }
    return offset <= bytes.count ? offset : nil
}

/// An unlinked temporary file holding `bytes`, its descriptor (the caller closes it).
private func unlinkedFile(holding bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
    var name = Array("/tmp/gzstream-fuzz-XXXXXX".utf8CString)
    let fd = mkstemp(&name)
    guard fd >= 0 else { fatalError("mkstemp failed: \(errno)") }
    unlink(&name)
    guard bytes.isEmpty || write(fd, bytes.baseAddress!, bytes.count) == bytes.count else { fatalError("write failed") }
    return fd
}

/// For an input the sequential reader decodes to `plain`: the GZIDX index GzipIndexRecorder
/// records from a decode with each inflater (a point every 32 KiB; ISA-L's boundary search in
/// 61-byte chunks), then reads through it: the whole file, and from every point (a seek), must
/// give `plain`'s bytes. A point that is not a block boundary, or a wrong window or bit count,
/// gives other bytes or an error.
func checkRecordedIndex(_ bytes: UnsafeBufferPointer<UInt8>, plain: [UInt8]) {
    for inflater in [GzipInputStream.Inflater.isal, .zlib] {
        let index: GzipIndex
        do {
            let recorder = try GzipIndexRecorder(span: 32768)
            let stream = try GzipInputStream(wrapping: ShortReadInputStream(bytes: bytes, limit: 61), chunkSize: 61,
                                             trailingGarbage: .fail, maximumOutputSize: 8 << 20, inflater: inflater,
                                             indexRecorder: recorder)
            let decoded = decode(stream)
            // zlib rejects some deflate data ISA-L decodes (GzipInputFuzzer's rule); no index then.
            guard decoded.error == nil else { continue }
            if decoded.output != plain { fatalError("the recording decode (\(inflater)) gave other bytes") }
            let output = MemoryOutputStream()
            try recorder.write(to: output)
            index = try GzipIndex(gzidx: [UInt8](output.data))
        } catch {
            fatalError("recording an index of a valid input failed: \(error)")
        }
        let fd = unlinkedFile(holding: bytes)
        defer { close(fd) }
        for start in [nil] + index.points.map({ Optional(Int($0.plainOffset)) }) {
            let stream: IndexedGzipInputStream
            do {
                stream = try IndexedGzipInputStream(wrapping: FileInputStream(fileDescriptor: fd), index: index, threads: 2,
                                                    chunkSize: 61, trailingGarbage: .fail, maximumOutputSize: 8 << 20,
                                                    closesInnerStream: false)
                try stream.openOrThrow()
                if let start { try stream.seek(toPlainOffset: Int64(start)) }
            } catch {
                fatalError("reading through a recorded index failed to start: \(error)")
            }
            let outcome = readOutcome(stream)
            stream.close()
            let expected = Array(plain[(start ?? 0)...])
            if outcome != ReadOutcome(output: expected, errorKind: nil) {
                fatalError("through the index recorded with \(inflater) (\(index.points.count) points), from "
                    + "\(start.map(String.init) ?? "the start"): \(outcome.output.count) bytes and "
                    + "\(outcome.errorKind ?? "no error"); expected \(expected.count)")
            }
        }
    }
}

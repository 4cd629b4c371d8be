import ByteStreams
import Foundation
@testable import GzipStreams
import Testing
import TestSupport

// Trailer checks made where the bytes are written (GzipTrailerChecks, GzipCheckingOutputStream)
// against the same checks on the reading thread: the same bytes reach the output and the same
// error ends it, for whole and damaged inputs, in reads and writes of every shape.

/// Decodes `compressed` with the checks deferred to a ``GzipCheckingOutputStream``, as
/// `gzstream unpack` does: each read's bytes written through it, a decode error reported after
/// the checks of the members before it. Returns what reached the output and the first error.
private func unpackCheckingOnWrite(_ compressed: [UInt8], readSize: Int, inflater: GzipInputStream.Inflater,
                                   trailingGarbage: GzipInputStream.TrailingGarbagePolicy = .fail) -> Decoded {
    let checks = GzipTrailerChecks()
    let reader = try! GzipInputStream(wrapping: MemoryInputStream(bytes: compressed), chunkSize: 1000,
                                      trailingGarbage: trailingGarbage, inflater: inflater, trailerChecks: checks)
    let memory = MemoryOutputStream()
    let output = GzipCheckingOutputStream(wrapping: memory, checks: checks, closesInnerStream: false)
    reader.open()
    output.open()
    var buffer = [UInt8](repeating: 0, count: readSize)
    var failure: (any Error)?
    while true {
        let count = buffer.withUnsafeMutableBufferPointer { reader.read($0.baseAddress!, maxLength: readSize) }
        if count < 0 {
            // A member before the failure that fails its check is the first error.
            do { try checks.finish() } catch { failure = error; break }
            failure = reader.streamError
            break
        }
        if count == 0 { break }
        do {
            try output.writeAll(Array(buffer[0..<count]))
        } catch {
            failure = error
            break
        }
    }
    if failure == nil {
        do { try output.closeOrThrow() } catch { failure = error }
    }
    reader.close()
    return Decoded(bytes: [UInt8](memory.data), error: failure)
}

private func describe(_ decoded: Decoded) -> String {
    "\(decoded.bytes.count) bytes, \(decoded.error.map { String(describing: $0) } ?? "no error")"
}

@Suite("Trailer checks where the bytes are written: the reader's bytes and errors")
struct GzipTrailerChecksTests {
    static let readSizes = [1, 7, 1000, 64 * 1024]

    @Test("Whole files: every byte, every member checked, in reads of any size", arguments: DamageSample.all)
    func wholeFiles(_ sample: DamageSample) throws {
        let (bytes, data, layout) = try sample.build()
        for readSize in Self.readSizes {
            for inflater in [GzipInputStream.Inflater.zlib, .isal] {
                let checked = unpackCheckingOnWrite(bytes, readSize: readSize, inflater: inflater)
                #expect(checked.error == nil, "read size \(readSize)")
                #expect(checked.bytes == data, "read size \(readSize)")
            }
        }
        // Every member's check ran (none was skipped by ending early).
        let checks = GzipTrailerChecks()
        let reader = try GzipInputStream(wrapping: MemoryInputStream(bytes: bytes), trailerChecks: checks)
        let output = GzipCheckingOutputStream(wrapping: MemoryOutputStream(), checks: checks)
        try output.openOrThrow()
        _ = try reader.copy(to: output, chunkSize: 4096)
        try output.closeOrThrow()
        #expect(checks.checkedCount == layout.count)
    }

    @Test("Every trailer byte flipped, and a seeded sample of deflate bits: the bytes and error of checks on the reading thread",
          arguments: DamageSample.all)
    func damaged(_ sample: DamageSample) throws {
        let (bytes, _, layout) = try sample.build()
        var rng = SplitMix64(seed: 77)
        var offsets: [Int] = []
        for member in layout {
            offsets += Array(member.trailerStart..<member.end)
            for _ in 0..<12 { offsets.append(Int(rng.next() % UInt64(member.trailerStart - member.headerEnd)) + member.headerEnd) }
        }
        var failures = 0
        for offset in offsets {
            let damaged = flipping(bytes, at: offset, bit: Int(rng.next() % 8))
            for inflater in [GzipInputStream.Inflater.zlib, .isal] {
                let inline = unpack(damaged, readSize: 1000, inflater: inflater)
                for readSize in [7, 64 * 1024] {
                    let checked = unpackCheckingOnWrite(damaged, readSize: readSize, inflater: inflater)
                    let same = checked.bytes == inline.bytes && describe(checked) == describe(inline)
                    if !same { failures += 1 }
                    #expect(same, "offset \(offset), \(inflater), read size \(readSize): \(describe(checked)) against \(describe(inline))")
                }
            }
        }
        #expect(failures == 0)
    }

    @Test("A bad CRC-32 in the first of two members: its bytes written, none of the second's, the first's error")
    func firstOfTwoFails() throws {
        let first = textBytes(count: 5000, seed: 3)
        let second = textBytes(count: 5000, seed: 4)
        var file = try pack(first) + pack(second)
        let crcOffset = try pack(first).count - 8
        file[crcOffset] ^= 0x01
        let checked = unpackCheckingOnWrite(file, readSize: 64 * 1024, inflater: .isal)
        #expect(checked.bytes == first)
        guard case .crcMismatch(member: 1, _, _, offset: let offset)? = checked.gzipError else {
            Issue.record("expected member 1's CRC-32 mismatch, got \(describe(checked))")
            return
        }
        #expect(offset == Int64(crcOffset))
    }

    @Test("Behind a WriteBehindOutputStream (checks on its worker while the reader inflates): the bytes, then member 3's error",
          arguments: [false, true])
    func behindWriteBehind(damaged: Bool) throws {
        let pieces = (0..<6).map { textBytes(count: 300_000, seed: UInt64(40 + $0)) }
        var file: [UInt8] = []
        var thirdTrailer = 0
        for (number, piece) in pieces.enumerated() {
            file += try pack(piece, level: 1)
            if number == 2 { thirdTrailer = file.count - 8 }
        }
        if damaged { file[thirdTrailer + 1] ^= 0x40 }
        let checks = GzipTrailerChecks()
        let reader = try GzipInputStream(wrapping: MemoryInputStream(bytes: file), chunkSize: 65536, trailerChecks: checks)
        let memory = MemoryOutputStream()
        let sink = try WriteBehindOutputStream(wrapping: GzipCheckingOutputStream(wrapping: memory, checks: checks),
                                               chunkSize: 32768, bufferSize: 32768, bufferCount: 3)
        try sink.openOrThrow()
        var failure: (any Error)?
        do {
            _ = try reader.copy(to: sink, chunkSize: 10_000)
            try sink.closeOrThrow()
        } catch {
            failure = error
            sink.close()
        }
        if damaged {
            guard case .crcMismatch(member: 3, _, _, offset: let offset)? = failure as? GzipError else {
                Issue.record("expected member 3's CRC-32 mismatch, got \(String(describing: failure))")
                return
            }
            #expect(offset == Int64(thirdTrailer))
            #expect([UInt8](memory.data) == Array(pieces[0..<3].joined()))
        } else {
            #expect(failure == nil)
            #expect([UInt8](memory.data) == Array(pieces.joined()))
            #expect(checks.checkedCount == 6)
        }
    }

    @Test("Members with no plain bytes are checked by the reader: none waits")
    func emptyMembers() throws {
        let empty = try pack([])
        let file = Array(repeating: empty, count: 500).joined() + (try pack([1, 2, 3]))
        let checks = GzipTrailerChecks()
        let reader = try GzipInputStream(wrapping: MemoryInputStream(bytes: Array(file)), trailerChecks: checks)
        let memory = MemoryOutputStream()
        let output = GzipCheckingOutputStream(wrapping: memory, checks: checks)
        try output.openOrThrow()
        _ = try reader.copy(to: output, chunkSize: 4096)
        try output.closeOrThrow()
        #expect([UInt8](memory.data) == [1, 2, 3])
        #expect(checks.checkedCount == 1)
        #expect(reader.memberCount == 501)
    }
}

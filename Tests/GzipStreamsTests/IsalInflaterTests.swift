import ByteStreams
import Foundation
import GzipStreams
import Testing
import TestSupport

/// The ISA-L backend (`GzipInputStream(inflater: .isal)`, the default) against zlib's
/// (`.zlib`): the same bytes for every valid input however it is fed, and on damaged input the
/// same outcome to the byte (bytes before the error, the error with its message and offset),
/// both when the member is read again from a file (seek) and from the copy kept of it (memory,
/// one byte per read).
@Suite("GzipInputStream with ISA-L's inflate gives zlib's results", .onDedicatedThreads)
struct IsalInflaterTests {
    /// Fixtures decoding to more than this are compared once, from the file (the 4 GiB + 7 one).
    static let compareLimit: Int64 = 64 << 20

    @Test("Each fixture: ISA-L's outcome equals zlib's, from a file, from memory and one byte per read",
          arguments: Fixture.all)
    func fixture(_ fixture: Fixture) throws {
        if case .roundtrip = fixture.expectation { return }   // raw files: covered below
        let zlib = DecoderOutcome(try GzipInputStream(wrapping: FileInputStream(path: fixture.path), inflater: .zlib))
        let isal = DecoderOutcome(try GzipInputStream(wrapping: FileInputStream(path: fixture.path), inflater: .isal))
        if case .ok = fixture.expectation { #expect(zlib.error == nil) }
        if case .error = fixture.expectation { #expect(zlib.error != nil) }
        if let lenientByteCount = Self.lenient[fixture.file] {
            // The error is zlib's; the literals before it, from the block zlib rejects, stay.
            #expect(isal.error == zlib.error && zlib.byteCount == 0 && isal.byteCount == lenientByteCount,
                    "\(isal) against \(zlib)")
            return
        }
        #expect(isal == zlib, "from the file")
        guard zlib.byteCount <= Self.compareLimit else { return }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        #expect(DecoderOutcome(gunzipStream(bytes, inflater: .isal)) == zlib, "from memory")
        guard bytes.count <= Fixture.oneBytePassLimit else { return }
        let slowZlib = DecoderOutcome(gunzipStream(bytes, oneByteInner: true, inflater: .zlib))
        #expect(DecoderOutcome(gunzipStream(bytes, oneByteInner: true, inflater: .isal)) == slowZlib,
                "one byte per read")
    }

    /// The fixtures where ISA-L's leniency shows (see `Inflater.isal`), with the bytes it
    /// returns before zlib's error: zlib rejects the dynamic block's over-subscribed distance
    /// code at its header; ISA-L decodes the block's 21 literals first.
    static let lenient = ["corpus/zlib/infcover-invalid-distances-set.gz": Int64(21)]

    @Test("300 seeded deflate-bit flips of each damage sample: ISA-L's outcome equals zlib's, from memory and from a file",
          arguments: DamageSample.all)
    func deflateBitFlips(sample: DamageSample) throws {
        let (file, _, layout) = try sample.build()
        let bits = layout.flatMap { member in (member.headerEnd * 8)..<(member.trailerStart * 8) }
        var generator = SplitMix64(seed: 0x15A1 ^ UInt64(file.count))
        try withTemporaryDirectory { directory in
        let path = directory.appendingPathComponent("damaged.gz").path
        var errors = 0
        for _ in 0..<300 {
            let position = bits[Int(generator.next() % UInt64(bits.count))]
            let damaged = flipping(file, at: position / 8, bit: position % 8)
            let label = "byte \(position / 8), bit \(position % 8)"
            for readSize in [1, 4096, 64 * 1024] {
                let zlib = DecoderOutcome(gunzipStream(damaged, inflater: .zlib), readSize: readSize)
                let isal = DecoderOutcome(gunzipStream(damaged, inflater: .isal), readSize: readSize)
                #expect(isal == zlib, "\(label), \(readSize)-byte reads, from memory")
                if zlib.error != nil, readSize == 4096 { errors += 1 }
            }
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            let zlib = DecoderOutcome(try GzipInputStream(wrapping: FileInputStream(path: path), inflater: .zlib))
            let isal = DecoderOutcome(try GzipInputStream(wrapping: FileInputStream(path: path), inflater: .isal))
            #expect(isal == zlib, "\(label), from a file")
        }
        #expect(errors > 150, "most flips must be errors, so the comparison covers them: \(errors)")
        }
    }

    @Test("A member past the replay limit: from a file zlib's exact error; through a pipe ISA-L's, of the same kind")
    func pastTheReplayLimit() throws {
        let data = mixedBytes(count: GzipInputStream.replayLimit + 1_000_000, seed: 44)
        var file = try pack(data, level: 1)
        // A flip near the end of the deflate data, far past the first MiB of the member.
        file[file.count - 200] ^= 0x10
        let zlib = try withTemporaryDirectory { directory in
            let path = try makeFile("big.gz", in: directory, bytes: file)
            let zlib = DecoderOutcome(try GzipInputStream(wrapping: FileInputStream(path: path), inflater: .zlib))
            #expect(DecoderOutcome(try GzipInputStream(wrapping: FileInputStream(path: path), inflater: .isal)) == zlib)
            return zlib
        }
        let zlibError = try #require(zlib.error)
        // Memory cannot seek and the member is past the limit: ISA-L's own error.
        let isal = DecoderOutcome(gunzipStream(file, inflater: .isal))
        let isalError = try #require(isal.error)
        #expect(["invalid-deflate", "crc-mismatch"].contains(isalError.kind), "\(isalError)")
        #expect(["invalid-deflate", "crc-mismatch"].contains(zlibError.kind), "\(zlibError)")
        // A damaged member inside the limit, after the big one, is zlib's again.
        let good = try pack(data, level: 1)
        var small = try pack(textBytes(count: 5000, seed: 45))
        small[small.count - 300] ^= 0x04
        let twoMembers = good + small
        #expect(DecoderOutcome(gunzipStream(twoMembers, inflater: .isal))
                == DecoderOutcome(gunzipStream(twoMembers, inflater: .zlib)))
    }

    /// ISA-L holds a block header until it has all of it; at the end of the input an invalid
    /// one (here a code-length code zlib rejects) is a data error, not the end of the input.
    @Test("A dynamic block header whose code-length code is invalid, then the end: zlib's error, also past the replay limit")
    func invalidHeaderThenEnd() throws {
        let path = PackageLocations.fixtures.appendingPathComponent("regressions/code-length-code-then-end.gz").path
        let small = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let big = memberWithStoredPrefix(small, randomBytes(count: GzipInputStream.replayLimit + 100_000, seed: 46))
        for (bytes, label) in [(small, "as made"), (big, "after 1.1 MB of stored blocks")] {
            let zlib = DecoderOutcome(gunzipStream(bytes, inflater: .zlib))
            let error = try #require(zlib.error, "\(label)")
            #expect(error == .invalidDeflateData(member: 1, message: "invalid code lengths set", offset: Int64(bytes.count)),
                    "\(label)")
            // From memory, which cannot seek: past the replay limit the verdict is ISA-L's alone.
            let isal = DecoderOutcome(gunzipStream(bytes, inflater: .isal))
            #expect(isal == zlib, "\(label): \(String(describing: isal.error))")
            for readSize in [1, 4096] {
                #expect(DecoderOutcome(gunzipStream(bytes, chunkSize: 4096, inflater: .isal), readSize: readSize) == zlib,
                        "\(label), reads of \(readSize)")
            }
        }
    }

    @Test("Multi-member data at every chunk size and in uneven reads: the same bytes as zlib")
    func membersAcrossBufferBoundaries() throws {
        var file: [UInt8] = []
        var plain: [UInt8] = []
        for (index, size) in [0, 1, 100, 4095, 4096, 4097, 70_000].enumerated() {
            let data = mixedBytes(count: size, seed: UInt64(index + 1))
            file += try pack(data, level: index % 2 == 0 ? 6 : 1)
            plain += data
        }
        for chunkSize in [1, 2, 7, 8, 9, 100, 4096] {
            let decoded = unpack(file, chunkSize: chunkSize, inflater: .isal)
            #expect(decoded.error == nil, "chunk \(chunkSize): \(String(describing: decoded.error))")
            #expect(decoded.bytes == plain, "chunk \(chunkSize)")
        }
        let slow = unpack(file, oneByteInner: true, inflater: .isal)
        #expect(slow.error == nil && slow.bytes == plain)
    }

    /// A cut inside a match: zlib gives the rest of the match only when called again, and the
    /// end of input must not prevent that call (once 488 of 3,100 cuts of one member lost a byte,
    /// how many depending on the read sizes).
    @Test("Every prefix of a two-member file: ISA-L's outcome equals zlib's, whatever the read and chunk sizes")
    func everyPrefix() throws {
        let first = try pack(textBytes(count: 4000, seed: 7))
        let file = first + (try pack(mixedBytes(count: 500, seed: 8)))
        for length in 0..<file.count {
            let prefix = Array(file.prefix(length))
            let reference = DecoderOutcome(gunzipStream(prefix, chunkSize: 4096, inflater: .zlib))
            if length != first.count {
                #expect(reference.error != nil, "prefix of \(length) bytes decoded without an error")
            }
            for (chunkSize, readSize) in [(4096, 64 * 1024), (5, 1), (100, 7)] {
                let zlib = DecoderOutcome(gunzipStream(prefix, chunkSize: chunkSize, inflater: .zlib), readSize: readSize)
                let isal = DecoderOutcome(gunzipStream(prefix, chunkSize: chunkSize, inflater: .isal), readSize: readSize)
                #expect(zlib.bytes == reference.bytes && zlib.error == reference.error,
                        "zlib, prefix \(length), chunk \(chunkSize), reads of \(readSize)")
                #expect(isal == zlib, "ISA-L, prefix \(length), chunk \(chunkSize), reads of \(readSize)")
            }
        }
    }

    /// The one difference left (see `Inflater.isal`): ISA-L does not fail, so zlib is never asked.
    @Test("ISA-L accepts an incomplete distance code that zlib rejects, when CRC-32 and ISIZE check")
    func lenientWhereZlibIsStrict() throws {
        let file: [UInt8] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x0d, 0xc1, 0x01, 0x09, 0x00, 0x00,
            0x00, 0x80, 0xa0, 0xeb, 0xcf, 0xab, 0x12, 0x17, 0x63, 0x63, 0x58, 0x99, 0x05, 0x00, 0x00, 0x00,
        ]
        let zlib = unpack(file)
        #expect(zlib.gzipError?.kind == "invalid-deflate", "\(String(describing: zlib.error))")
        let isal = unpack(file, inflater: .isal)
        #expect(isal.error == nil, "\(String(describing: isal.error))")
        #expect(isal.bytes == [0xfe, 0xff, 0xfe, 0xff, 0xfe])
    }

    @Test("Parallel and BGZF output, levels 0 to 9, decode to the input")
    func ourOutput() throws {
        let data = mixedBytes(count: 600_000, seed: 12)
        for level in [0, 1, 6, 9] {
            for inflater in [GzipInputStream.Inflater.isal, .zlib] {
                #expect(unpack(try pack(data, level: level), inflater: inflater).bytes == data, "level \(level), \(inflater)")
                #expect(unpack(try packInBlocks(data, level: level, threads: 2), inflater: inflater).bytes == data)
            }
        }
    }
}

/// What reading a gzip stream to its end gave, to compare two decoders: the bytes (kept when
/// there are at most 4 MiB, else their count), each checked member, the error, and how much
/// compressed input was consumed.
struct DecoderOutcome: Equatable {
    var byteCount: Int64 = 0
    var bytes: [UInt8]? = []
    var members: [GzipInputStream.Member] = []
    var error: GzipError?
    var otherError: String?
    var compressedByteCount: Int64 = 0

    /// Reads `stream` in reads of `readSize` bytes to its end or first error, and closes it.
    init(_ stream: GzipInputStream, readSize: Int = 64 * 1024) {
        var members: [GzipInputStream.Member] = []
        stream.memberHandler = { members.append($0) }
        stream.open()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: readSize)
        defer { buffer.deallocate() }
        while true {
            let count = stream.read(buffer, maxLength: readSize)
            if count < 0 {
                if let gzipError = stream.streamError as? GzipError { error = gzipError } else {
                    otherError = String(describing: stream.streamError)
                }
                break
            }
            if count == 0 { break }
            byteCount += Int64(count)
            if byteCount > 4 << 20 { bytes = nil }
            bytes? += UnsafeBufferPointer(start: buffer, count: count)
        }
        self.members = members
        compressedByteCount = stream.compressedByteCount
        stream.close()
    }
}

import ByteStreams
import SecretStreams
import Testing
import TestSupport

/// A small file of four chunks: 50 plaintext bytes in chunks of 16 (three full chunks of
/// 4 + 16 + 17 = 37 bytes from offset 33, then a final chunk of 4 + 2 + 17 = 23 bytes), 167 bytes.
private let smallChunkSize = 16
private let smallPlain = randomBytes(count: 50, seed: 3)
private let chunkRecord = 4 + smallChunkSize + 17

/// The offset where chunk `number` (1 for the first) of the small file starts.
private func chunkStart(_ number: Int) -> Int { 33 + (number - 1) * chunkRecord }

private func smallFile(key: SecretStreamKey) throws -> [UInt8] {
    try encrypt(smallPlain, key: key, chunkSize: smallChunkSize, writeSize: 7)
}

@Suite("SecretStreams: truncation, damage, reordering, trailing data, wrong key, wrong format", .onDedicatedThreads)
struct DamageTests {
    @Test("The small file has the expected layout")
    func layout() throws {
        #expect(try smallFile(key: testKey()).count == 167)
    }

    @Test("Every cut of the small file is truncated at the cut, with only the whole chunks before it given out")
    func everyCut() throws {
        let key = try testKey()
        let encrypted = try smallFile(key: key)
        for cut in 0..<encrypted.count {
            let result = try decrypt(Array(encrypted[0..<cut]), key: key, readSize: 7, oneByteReads: cut % 2 == 1)
            let wholeChunks = cut < 33 ? 0 : min(3, (cut - 33) / chunkRecord)
            let chunk = cut < 33 ? 0 : wholeChunks + 1
            #expect(result.secretStreamError == .truncated(chunk: chunk, offset: Int64(cut)), "cut at \(cut)")
            #expect(result.plaintext == Array(smallPlain.prefix(wholeChunks * smallChunkSize)), "cut at \(cut)")
        }
    }

    @Test("Cuts of a file of 64 KiB chunks: in the header, at and around chunk boundaries, just before the final chunk")
    func cutsAtBoundaries() throws {
        let key = try testKey()
        let chunk = SecretStreamFraming.defaultChunkSize
        let plain = randomBytes(count: 2 * chunk + 5, seed: 4)
        let encrypted = try encrypt(plain, key: key)
        let record = 4 + chunk + 17
        let finalStart = 33 + 2 * record
        #expect(encrypted.count == finalStart + 4 + 5 + 17)
        let cuts = [0, 1, 3, 4, 5, 8, 9, 20, 32, 33, 34, 36, 37, 33 + record - 1, 33 + record, 33 + record + 1,
                    finalStart - 1, finalStart, finalStart + 1, finalStart + 4, encrypted.count - 1]
        for cut in cuts {
            let result = try decrypt(Array(encrypted[0..<cut]), key: key)
            #expect(result.secretStreamError?.kind == "truncated", "cut at \(cut)")
            #expect(result.secretStreamError?.offset == Int64(cut), "cut at \(cut)")
            let wholeChunks = cut < 33 ? 0 : (cut - 33) / record
            #expect(result.plaintext == Array(plain.prefix(wholeChunks * chunk)), "cut at \(cut)")
        }
    }

    @Test("Every bit flipped in the small file is an error, and no changed plaintext is given out")
    func everyBit() throws {
        let key = try testKey()
        let encrypted = try smallFile(key: key)
        for bit in 0..<(encrypted.count * 8) {
            var damaged = encrypted
            damaged[bit / 8] ^= 1 << (bit % 8)
            let position = bit / 8
            let result = try decrypt(damaged, key: key)
            #expect(result.secretStreamError != nil, "bit \(bit)")
            #expect(smallPlain.starts(with: result.plaintext), "bit \(bit)")
            switch position {
            case 0..<4:
                #expect(result.secretStreamError == .notSecretStream(offset: 0), "bit \(bit)")
            case 4:
                #expect(result.secretStreamError == .unsupportedVersion(damaged[4], offset: 4), "bit \(bit)")
            case 9..<33:
                #expect(result.secretStreamError == .authenticationFailed(chunk: 1, offset: 33), "bit \(bit)")
            case 33...:
                // In a chunk's ciphertext (not its length field): that chunk fails to authenticate.
                let number = min(4, (position - 33) / chunkRecord + 1)
                if position - chunkStart(number) >= 4 {
                    #expect(result.secretStreamError == .authenticationFailed(chunk: number, offset: Int64(chunkStart(number))),
                            "bit \(bit)")
                    #expect(result.plaintext == Array(smallPlain.prefix((number - 1) * smallChunkSize)), "bit \(bit)")
                }
            default:
                break
            }
        }
    }

    @Test("Swapped, dropped or spliced chunks fail to authenticate at the first one out of place")
    func reordered() throws {
        let key = try testKey()
        let encrypted = try smallFile(key: key)
        func record(_ number: Int, of bytes: [UInt8] = encrypted) -> [UInt8] {
            Array(bytes[chunkStart(number)..<chunkStart(number + 1)])
        }
        let head = Array(encrypted[0..<33])
        let tail = Array(encrypted[chunkStart(4)...])

        let swapped23 = head + record(1) + record(3) + record(2) + tail
        var result = try decrypt(swapped23, key: key)
        #expect(result.secretStreamError == .authenticationFailed(chunk: 2, offset: Int64(chunkStart(2))))
        #expect(result.plaintext == Array(smallPlain.prefix(16)))

        let swapped12 = head + record(2) + record(1) + record(3) + tail
        result = try decrypt(swapped12, key: key)
        #expect(result.secretStreamError == .authenticationFailed(chunk: 1, offset: 33))
        #expect(result.plaintext.isEmpty)

        let dropped = head + record(1) + record(3) + tail
        result = try decrypt(dropped, key: key)
        #expect(result.secretStreamError == .authenticationFailed(chunk: 2, offset: Int64(chunkStart(2))))

        // The same plaintext encrypted again, same key: its chunks belong to another stream.
        let other = try smallFile(key: key)
        let spliced = head + record(1) + record(2, of: other) + record(3) + tail
        result = try decrypt(spliced, key: key)
        #expect(result.secretStreamError == .authenticationFailed(chunk: 2, offset: Int64(chunkStart(2))))

        // The final chunk dropped: the input ends after chunk 3, none final.
        result = try decrypt(head + record(1) + record(2) + record(3), key: key)
        #expect(result.secretStreamError == .truncated(chunk: 4, offset: Int64(chunkStart(4))))
    }

    @Test("Bytes after the final chunk are trailing data at the final chunk's end",
          arguments: [[0], [0x47, 0x5A, 0x53, 0x53], Array(repeating: 0, count: 100)])
    func trailingData(extra: [UInt8]) throws {
        let key = try testKey()
        let encrypted = try smallFile(key: key)
        let result = try decrypt(encrypted + extra, key: key, readSize: 3)
        #expect(result.secretStreamError == .trailingData(offset: 167))
        #expect(result.plaintext == smallPlain)

        // A copy of the final chunk appended.
        let again = try decrypt(encrypted + encrypted[chunkStart(4)...], key: key)
        #expect(again.secretStreamError == .trailingData(offset: 167))
    }

    @Test("A wrong key fails chunk 1's authentication and gives out nothing")
    func wrongKey() throws {
        let encrypted = try smallFile(key: testKey())
        var wrongBytes = testKeyBytes
        wrongBytes[31] ^= 1
        for key in [try SecretStreamKey(bytes: wrongBytes), try SecretStreamKey.generate()] {
            let result = try decrypt(encrypted, key: key)
            #expect(result.secretStreamError == .authenticationFailed(chunk: 1, offset: 33))
            #expect(result.plaintext.isEmpty)
        }
    }

    @Test("Another file is not this format; another version or chunk size is told apart; empty input is truncated")
    func wrongFormat() throws {
        let key = try testKey()
        let encrypted = try smallFile(key: key)
        let gzip = try [UInt8]("hello".utf8).gzipped()
        #expect(try decrypt(gzip, key: key).secretStreamError == .notSecretStream(offset: 0))
        #expect(try decrypt(Array("GZ".utf8) + [0], key: key).secretStreamError == .notSecretStream(offset: 0))
        #expect(try decrypt([], key: key).secretStreamError == .truncated(chunk: 0, offset: 0))

        var version2 = encrypted
        version2[4] = 2
        #expect(try decrypt(version2, key: key).secretStreamError == .unsupportedVersion(2, offset: 4))

        var zeroChunk = encrypted
        zeroChunk[5..<9] = [0, 0, 0, 0]
        #expect(try decrypt(zeroChunk, key: key).secretStreamError == .invalidChunkSize(0, offset: 5))
        var hugeChunk = encrypted
        hugeChunk[5..<9] = [0x01, 0, 0, 1]
        #expect(try decrypt(hugeChunk, key: key).secretStreamError == .invalidChunkSize(0x0100_0001, offset: 5))

        // A length field beyond the chunk size is found before anything is read for it.
        var longLength = encrypted
        longLength[chunkStart(2)..<(chunkStart(2) + 4)] = [0, 0, 0, UInt8(smallChunkSize + 18)]
        #expect(try decrypt(longLength, key: key).secretStreamError
                == .invalidChunkLength(UInt32(smallChunkSize + 18), chunk: 2, offset: Int64(chunkStart(2))))
    }

    @Test("Errors are sticky: a read after the error returns -1 with the same error")
    func sticky() throws {
        let key = try testKey()
        let encrypted = try smallFile(key: key)
        let stream = try DecryptingInputStream(wrapping: MemoryInputStream(bytes: Array(encrypted[0..<50])), key: key)
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: 64) } == -1)
        #expect(buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: 64) } == -1)
        #expect(stream.streamError as? SecretStreamError == .truncated(chunk: 1, offset: 50))
        #expect(stream.streamStatus == .error)
        stream.close()
        #expect(stream.streamStatus == .error)
    }
}

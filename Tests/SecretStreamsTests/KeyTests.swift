import ByteStreams
import CSodium
import Foundation
import SecretStreams
import Testing

@Suite("SecretStreams: keys from bytes, from libsodium's generator and from key files")
struct KeyTests {
    @Test("Key bytes of another length than 32 are invalidArgument", arguments: [0, 31, 33, 64])
    func wrongLength(count: Int) {
        #expect {
            _ = try SecretStreamKey(bytes: [UInt8](repeating: 7, count: count))
        } throws: { error in
            guard let error = error as? ByteStreamError, case .invalidArgument(let name, let message) = error.code else {
                return false
            }
            return name == "bytes" && message == "a key must be 32 bytes, not \(count)"
        }
    }

    @Test("Generated keys differ, hold 32 bytes and round-trip")
    func generated() throws {
        let first = try SecretStreamKey.generate()
        let second = try SecretStreamKey.generate()
        let firstBytes = first.withUnsafeBytes { Array($0) }
        #expect(firstBytes.count == 32)
        #expect(firstBytes != second.withUnsafeBytes { Array($0) })
        let plain = randomBytes(count: 1000)
        #expect(try decrypt(encrypt(plain, key: first), key: first).plaintext == plain)
        // The same bytes make the same key.
        #expect(try decrypt(encrypt(plain, key: first), key: SecretStreamKey(bytes: firstBytes)).plaintext == plain)
    }

    @Test("A key file of exactly 32 bytes is the key those bytes make")
    func keyFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("key").path
            try Data(testKeyBytes).write(to: URL(fileURLWithPath: path))
            let fromFile = try SecretStreamKey(contentsOfFile: path)
            #expect(fromFile.withUnsafeBytes { Array($0) } == testKeyBytes)
            let plain = randomBytes(count: 300)
            #expect(try decrypt(encrypt(plain, key: testKey()), key: fromFile).plaintext == plain)
        }
    }

    @Test("A key file of another size is refused with its size", arguments: [0, 1, 31, 33, 100_000])
    func keyFileSize(count: Int) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("key").path
            try Data(randomBytes(count: count)).write(to: URL(fileURLWithPath: path))
            #expect(throws: SecretStreamError.invalidKeyFile(path: path, byteCount: Int64(count))) {
                _ = try SecretStreamKey(contentsOfFile: path)
            }
            let message = SecretStreamError.invalidKeyFile(path: path, byteCount: Int64(count)).description
            #expect(message == "\(path): a key file must hold exactly 32 bytes, not \(count)")
        }
    }

    @Test("A missing key file is the I/O error of opening it")
    func missingKeyFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("absent").path
            #expect {
                _ = try SecretStreamKey(contentsOfFile: path)
            } throws: { error in
                (error as? ByteStreamError)?.errno == ENOENT
            }
        }
    }

    @Test("The framing's sizes are libsodium's")
    func sizes() {
        #expect(SecretStreamKey.byteCount == 32)
        #expect(SecretStreamKey.byteCount == crypto_secretstream_xchacha20poly1305_keybytes())
        #expect(SecretStreamFraming.headerByteCount == crypto_secretstream_xchacha20poly1305_headerbytes())
        #expect(SecretStreamFraming.chunkOverhead == crypto_secretstream_xchacha20poly1305_abytes())
    }
}

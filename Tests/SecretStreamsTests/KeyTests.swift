import ByteStreams
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SecretStreams
import Testing
import TestSupport

@Suite("SecretStreams: keys from bytes, from libsodium's generator and from key files", .onDedicatedThreads)
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
            // Whatever the umask: a key file the group may write is refused.
            #expect(chmod(path, 0o600) == 0)
            let fromFile = try SecretStreamKey(contentsOfFile: path)
            #expect(fromFile.fileExposure == nil)
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

    @Test("Files that are not regular are refused at once, naming what they are (nothing is read from them)",
          arguments: ["/dev/zero", "/dev/urandom", "fifo", "directory", "symlink"])
    func notRegular(name: String) throws {
        try withTemporaryDirectory { directory in
            var path = name
            var fileType = "a character device"
            if !name.hasPrefix("/") {
                path = directory.appendingPathComponent(name).path
                switch name {
                case "fifo":
                    // No writer ever comes: a blocking open or read would wait for good.
                    #expect(mkfifo(path, 0o600) == 0)
                    fileType = "a FIFO"
                case "directory":
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
                    fileType = "a directory"
                default:
                    // A link to a good key file: a link is refused whatever it points to.
                    let target = directory.appendingPathComponent("key").path
                    try Data(testKeyBytes).write(to: URL(fileURLWithPath: target))
                    #expect(chmod(target, 0o600) == 0)
                    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
                    fileType = "a symbolic link"
                }
            }
            #expect(throws: SecretStreamError.keyFileNotRegular(path: path, fileType: fileType)) {
                _ = try SecretStreamKey(contentsOfFile: path)
            }
            #expect(SecretStreamError.keyFileNotRegular(path: path, fileType: fileType).description
                == "\(path): a key file must be a regular file, not \(fileType)")
        }
    }

    @Test("A key file others may read is used, and says so in fileExposure; a 0600 file of ours has none",
          arguments: [(0o600 as mode_t, nil as String?), (0o640, "readable by group (mode 0640)"),
                      (0o604, "readable by others (mode 0604)"), (0o644, "readable by group and others (mode 0644)")])
    func exposure(mode: mode_t, expected: String?) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("key").path
            try Data(testKeyBytes).write(to: URL(fileURLWithPath: path))
            #expect(chmod(path, mode) == 0)
            let key = try SecretStreamKey(contentsOfFile: path)
            #expect(key.withUnsafeBytes { Array($0) } == testKeyBytes)
            #expect(key.fileExposure?.description == expected)
            #expect(key.fileExposure?.path == (expected == nil ? nil : path))
            #expect(key.fileExposure?.isOwnedByAnotherUser != true)
            #expect(try SecretStreamKey(bytes: testKeyBytes).fileExposure == nil)
        }
    }

    @Test("A key file the group or others may write is refused, with its mode", arguments: [0o620 as mode_t, 0o602, 0o666])
    func writableByOthers(mode: mode_t) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("key").path
            try Data(testKeyBytes).write(to: URL(fileURLWithPath: path))
            #expect(chmod(path, mode) == 0)
            #expect(throws: SecretStreamError.keyFileWritableByOthers(path: path, permissions: UInt32(mode))) {
                _ = try SecretStreamKey(contentsOfFile: path)
            }
            #expect(SecretStreamError.keyFileWritableByOthers(path: path, permissions: UInt32(mode)).description
                == "\(path): a key file must not be writable by group or others (mode 0\(String(mode, radix: 8)))")
        }
    }

    @Test("A key file of another user (not root) is refused: they could choose the key",
          .enabled(if: geteuid() == 0, "needs root, to give the key file to another user"))
    func ownedByAnotherUser() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("key").path
            try Data(testKeyBytes).write(to: URL(fileURLWithPath: path))
            #expect(chmod(path, 0o600) == 0 && chown(path, 65534, 65534) == 0)
            #expect(throws: SecretStreamError.keyFileOwnedByAnotherUser(path: path, owner: 65534)) {
                _ = try SecretStreamKey(contentsOfFile: path)
            }
            #expect(SecretStreamError.keyFileOwnedByAnotherUser(path: path, owner: 65534).description
                == "\(path): a key file must be owned by you or root, not by uid 65534")
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

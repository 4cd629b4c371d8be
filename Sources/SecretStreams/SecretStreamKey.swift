import ByteStreams
import CSodium
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A 32-byte key for ``EncryptingOutputStream`` and ``DecryptingInputStream``
/// (`crypto_secretstream_xchacha20poly1305_KEYBYTES`).
///
/// The bytes live in memory from libsodium's guarded allocator (`sodium_malloc`), locked so
/// that it is not swapped out (`sodium_mlock`), never copied into arrays the key hands out,
/// and zeroed and freed (`sodium_free`) when the key is released. Immutable, so safe to share
/// between threads: `Sendable` is unchecked only because the bytes are behind a pointer, which
/// nothing writes after the key is made.
public final class SecretStreamKey: @unchecked Sendable {
    /// The key size in bytes: 32.
    public static let byteCount = 32

    /// The key bytes, in guarded and locked memory.
    let storage: UnsafeMutablePointer<UInt8>

    /// For a key read from a file: who besides the effective user may read that file, or `nil`
    /// when nobody may (or the key was not read from a file). The library does not print it;
    /// a command line warns with it.
    public let fileExposure: KeyFileExposure?

    /// A key of 32 zero bytes in guarded, locked memory, for an initialiser to fill.
    /// - Throws: ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start or
    ///   allocate.
    init(exposure: KeyFileExposure?) throws {
        try requireSodium()
        storage = try Self.allocateLocked(Self.byteCount)
        fileExposure = exposure
    }

    /// `count` bytes from `sodium_malloc`, locked with `sodium_mlock` and zeroed; free them with
    /// `sodium_free`. A lock refused by the system (`RLIMIT_MEMLOCK`) is not an error: the
    /// key is then usable but may be swapped out, as libsodium itself allows.
    private static func allocateLocked(_ count: Int) throws(SecretStreamError) -> UnsafeMutablePointer<UInt8> {
        guard let raw = sodium_malloc(count) else { throw .sodiumFailure(function: "sodium_malloc") }
        _ = sodium_mlock(raw, count)
        sodium_memzero(raw, count)
        return raw.bindMemory(to: UInt8.self, capacity: count)
    }

    /// A key holding a copy of `bytes`.
    /// - Parameter bytes: Exactly 32 bytes.
    /// - Throws: `ByteStreamError`'s `invalidArgument` (named `bytes`) for another length;
    ///   ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start or allocate.
    public convenience init(bytes: some Collection<UInt8>) throws {
        try requireArgument(bytes.count == Self.byteCount, "bytes",
                            "a key must be \(Self.byteCount) bytes, not \(bytes.count)", operation: "create SecretStreamKey")
        try self.init(exposure: nil)
        var index = 0
        for byte in bytes {
            storage[index] = byte
            index += 1
        }
    }

    /// A new random key from libsodium's generator.
    /// - Throws: ``SecretStreamError/sodiumFailure(function:)`` when libsodium cannot start.
    /// Wraps `crypto_secretstream_xchacha20poly1305_keygen`.
    public static func generate() throws -> SecretStreamKey {
        let key = try SecretStreamKey(exposure: nil)
        crypto_secretstream_xchacha20poly1305_keygen(key.storage)
        return key
    }

    /// The key read from a file of exactly 32 raw bytes (no encoding, no newline).
    ///
    /// The name is looked up once: the file is opened without following a symbolic link and
    /// without waiting for a FIFO's writer (`O_NOFOLLOW | O_NONBLOCK`), and every check is made
    /// on that descriptor (`fstat`): it must be a regular file of 32 bytes, and at most 33
    /// bytes are read, so `/dev/zero`, `/dev/urandom`, a FIFO or a huge file are refused at
    /// once instead of read without end. Who else may read the file is kept in
    /// ``fileExposure``.
    /// - Parameter path: The key file.
    /// - Throws: ``SecretStreamError/keyFileNotRegular(path:fileType:)`` for a symbolic link,
    ///   directory, device, FIFO or socket; ``SecretStreamError/invalidKeyFile(path:byteCount:)``
    ///   when the file holds another number of bytes (its size, or 33 when it grew while read);
    ///   ``SecretStreamError/keyFileWritableByOthers(path:permissions:)`` when the group or
    ///   others may write it (they could choose the key);
    ///   ``SecretStreamError/keyFileOwnedByAnotherUser(path:owner:)`` when another user than
    ///   the effective one or root owns it;
    ///   the file's I/O error (`ByteStreamError`, `ENOENT`, `EACCES`…); a libsodium failure.
    /// Blocks while the file is read (a regular file: briefly). The bytes read pass through no
    /// memory but the key's own and one guarded, locked buffer of 33 bytes, zeroed and freed
    /// before returning. The corresponding C functions are `open(2)`, `fstat(2)`, `read(2)`.
    public convenience init(contentsOfFile path: String) throws {
        try requireSodium()
        let fd: Int32
        do {
            fd = try SystemCalls.open(Pathname(path), flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        } catch let error as ByteStreamError where error.errno == ELOOP {
            // O_NOFOLLOW's answer for a symbolic link as the last component.
            throw SecretStreamError.keyFileNotRegular(path: path, fileType: "a symbolic link")
        }
        defer { try? SystemCalls.close(fd, target: path) }
        let info = try SystemCalls.status(of: fd, target: path)
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            throw SecretStreamError.keyFileNotRegular(path: path, fileType: Self.describe(fileType: type))
        }
        guard info.st_size == off_t(Self.byteCount) else {
            throw SecretStreamError.invalidKeyFile(path: path, byteCount: Int64(info.st_size))
        }
        // Whoever can write the file can choose the key, and so forge what it authenticates.
        guard info.st_mode & 0o022 == 0 else {
            throw SecretStreamError.keyFileWritableByOthers(path: path, permissions: UInt32(info.st_mode & 0o7777))
        }
        // Nor may another user own it (root aside, who can read and write anything anyway).
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw SecretStreamError.keyFileOwnedByAnotherUser(path: path, owner: UInt32(info.st_uid))
        }
        let room = Self.byteCount + 1
        let buffer = try Self.allocateLocked(room)
        defer { sodium_free(buffer) }
        var total = 0
        // One byte more than a key, to see a file that grew after the fstat.
        while total < room {
            let count = try SystemCalls.read(fd, buffer + total, room - total, target: path)
            if count == 0 { break }
            total += count
        }
        guard total == Self.byteCount else {
            throw SecretStreamError.invalidKeyFile(path: path, byteCount: Int64(total))
        }
        try self.init(exposure: KeyFileExposure(path: path, status: info, effectiveUser: geteuid()))
        storage.update(from: buffer, count: Self.byteCount)
    }

    /// "a directory", "a FIFO", … for a file type from `st_mode`.
    private static func describe(fileType: mode_t) -> String {
        switch fileType {
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }

    deinit {
        sodium_free(storage)
    }

    /// Lends the 32 key bytes, to save a generated key; do not keep the pointer.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: storage, count: Self.byteCount))
    }

    /// The key for libsodium's calls.
    var pointer: UnsafePointer<UInt8> { UnsafePointer(storage) }
}

/// Who besides the effective user may read a key file, found by `fstat` on the descriptor the
/// key was read from: anyone who can read it can decrypt and forge what the key protects.
public struct KeyFileExposure: Equatable, Sendable, CustomStringConvertible {
    /// The key file as it was named.
    public var path: String
    /// The permission bits, `st_mode & 0o7777`.
    public var permissions: UInt32
    /// The file's owner, `st_uid`.
    public var owner: UInt32
    /// The effective user of the process that read it, `geteuid()`.
    public var effectiveUser: UInt32

    /// Whether the group may read the file (`S_IRGRP`).
    public var isReadableByGroup: Bool { permissions & 0o040 != 0 }
    /// Whether every other user may read the file (`S_IROTH`).
    public var isReadableByOthers: Bool { permissions & 0o004 != 0 }
    /// Whether another user than the effective one owns the file (and so may read or change it).
    public var isOwnedByAnotherUser: Bool { owner != effectiveUser }

    /// The exposure of a file with `status` read by `effectiveUser`, or `nil` when it has none.
    init?(path: String, status: stat, effectiveUser: uid_t) {
        self.path = path
        permissions = UInt32(status.st_mode & 0o7777)
        owner = UInt32(status.st_uid)
        self.effectiveUser = UInt32(effectiveUser)
        if !isReadableByGroup && !isReadableByOthers && !isOwnedByAnotherUser { return nil }
    }

    /// What is wrong, as a warning puts it: `readable by group and others (mode 0644)`,
    /// `owned by user 1000, not by the effective user 0`, or both, joined by `, and `.
    public var description: String {
        var parts: [String] = []
        let readers = [isReadableByGroup ? "group" : nil, isReadableByOthers ? "others" : nil].compactMap { $0 }
        if !readers.isEmpty {
            let octal = String(permissions, radix: 8)
            parts.append("readable by \(readers.joined(separator: " and ")) (mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal))")
        }
        if isOwnedByAnotherUser { parts.append("owned by user \(owner), not by the effective user \(effectiveUser)") }
        return parts.joined(separator: ", and ")
    }
}

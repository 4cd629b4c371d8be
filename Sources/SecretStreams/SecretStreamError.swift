/// A malformed, damaged or wrongly keyed encrypted input, a bad key file, or a libsodium
/// failure. Every case that concerns the encrypted input names the byte offset in it where the
/// fault was found, and, for a chunk, its number (1 for the first).
///
/// I/O failures of the wrapped stream or of the key file are not `SecretStreamError`s: they come
/// through unchanged (a `ByteStreamError` for the file and memory streams). A key of the wrong
/// length given as bytes is `ByteStreamError`'s `invalidArgument`.
public enum SecretStreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input does not start with the magic `GZSS`: not this format (another file, not a
    /// wrong key). An input shorter than 4 bytes that matches the magic as far as it goes is
    /// ``truncated(chunk:offset:)`` instead, as every other cut.
    case notSecretStream(offset: Int64)
    /// The format version byte is not one this reader knows (1).
    case unsupportedVersion(UInt8, offset: Int64)
    /// The plaintext chunk size in the prefix is outside
    /// `1...SecretStreamFraming.maximumChunkSize`.
    case invalidChunkSize(UInt32, offset: Int64)
    /// The plaintext chunk size in the prefix is valid but larger than the reader accepts
    /// (`limit`, its `maximumChunkSize`): refused before anything that size is allocated.
    case chunkSizeOverLimit(UInt32, limit: Int, offset: Int64)
    /// The input ended, at `offset`, before the end of the chunk tagged final: in the prefix or
    /// the secretstream header (`chunk` 0), or in or before chunk `chunk`'s length or
    /// ciphertext, every chunk before it whole and none final. The plaintext read is incomplete.
    case truncated(chunk: Int, offset: Int64)
    /// Chunk `chunk`'s length field, at `offset`, is outside `17...chunkSize + 17`: the data
    /// was changed (a length in range but changed fails authentication instead).
    case invalidChunkLength(UInt32, chunk: Int, offset: Int64)
    /// The chunk starting at `offset` did not authenticate: a wrong key, a changed, reordered,
    /// dropped or cut chunk (libsodium's `crypto_secretstream_xchacha20poly1305_pull` failed).
    case authenticationFailed(chunk: Int, offset: Int64)
    /// Bytes follow the chunk tagged final, from `offset` on.
    case trailingData(offset: Int64)
    /// A key file does not hold exactly 32 bytes; `byteCount` is what it holds.
    case invalidKeyFile(path: String, byteCount: Int64)
    /// A key file is not a regular file: `fileType` says what it is (`a symbolic link`,
    /// `a directory`, `a character device`, `a FIFO`, `a socket`, `a block device`).
    case keyFileNotRegular(path: String, fileType: String)
    /// The group or others may write a key file (`permissions`, `st_mode & 0o7777`): they could
    /// put a key of their choosing there.
    case keyFileWritableByOthers(path: String, permissions: UInt32)
    /// A key file belongs to another user (`owner`, its uid), neither the effective user nor
    /// root: that user could put a key of their choosing there.
    case keyFileOwnedByAnotherUser(path: String, owner: UInt32)
    /// libsodium itself failed: `function` is the C function (`sodium_init`,
    /// `crypto_secretstream_xchacha20poly1305_init_push`, …).
    case sodiumFailure(function: String)

    /// A stable name for the kind of fault: `not-secret-stream`, `unsupported-version`,
    /// `invalid-chunk-size`, `truncated`, `invalid-chunk-length`, `authentication`, `trailing-data`, `key-file`, `sodium`.
    public var kind: String {
        switch self {
        case .notSecretStream: "not-secret-stream"
        case .unsupportedVersion: "unsupported-version"
        case .invalidChunkSize, .chunkSizeOverLimit: "invalid-chunk-size"
        case .truncated: "truncated"
        case .invalidChunkLength: "invalid-chunk-length"
        case .authenticationFailed: "authentication"
        case .trailingData: "trailing-data"
        case .invalidKeyFile, .keyFileNotRegular, .keyFileWritableByOthers, .keyFileOwnedByAnotherUser: "key-file"
        case .sodiumFailure: "sodium"
        }
    }

    /// The byte offset in the encrypted input where the fault was found, when it has one.
    public var offset: Int64? {
        switch self {
        case .notSecretStream(let offset), .trailingData(let offset): offset
        case .unsupportedVersion(_, let offset), .invalidChunkSize(_, let offset): offset
        case .truncated(_, let offset), .authenticationFailed(_, let offset): offset
        case .invalidChunkLength(_, _, let offset), .chunkSizeOverLimit(_, _, let offset): offset
        case .invalidKeyFile, .keyFileNotRegular, .keyFileWritableByOthers, .keyFileOwnedByAnotherUser, .sodiumFailure: nil
        }
    }

    /// The message a user reads, with the byte offset where it applies.
    public var description: String {
        switch self {
        case .notSecretStream(let offset):
            return "not an encrypted gzstream file (bad magic at byte \(offset))"
        case .unsupportedVersion(let version, let offset):
            return "unsupported encrypted format version \(version) at byte \(offset) (this reader knows version 1)"
        case .invalidChunkSize(let size, let offset):
            return "invalid chunk size \(size) at byte \(offset) (must be 1...\(SecretStreamFraming.maximumChunkSize))"
        case .chunkSizeOverLimit(let size, let limit, let offset):
            return "chunk size \(size) at byte \(offset) is over this reader's limit of \(limit) bytes"
        case .truncated(let chunk, let offset):
            let part = chunk == 0 ? "in the header" : "in chunk \(chunk), before the final chunk"
            return "unexpected end of encrypted input \(part) at byte \(offset)"
        case .invalidChunkLength(let length, let chunk, let offset):
            return "invalid length \(length) of chunk \(chunk) at byte \(offset)"
        case .authenticationFailed(let chunk, let offset):
            return "authentication failed for chunk \(chunk) at byte \(offset) (wrong key, or the data was changed, reordered or cut)"
        case .trailingData(let offset):
            return "trailing data at byte \(offset) after the final chunk"
        case .invalidKeyFile(let path, let byteCount):
            return "\(path): a key file must hold exactly \(SecretStreamKey.byteCount) bytes, not \(byteCount)"
        case .keyFileNotRegular(let path, let fileType):
            return "\(path): a key file must be a regular file, not \(fileType)"
        case .keyFileWritableByOthers(let path, let permissions):
            return "\(path): \(keyFileWritableProblem(permissions))"
        case .keyFileOwnedByAnotherUser(let path, let owner):
            return "\(path): \(keyFileOwnerProblem(owner))"
        case .sodiumFailure(let function):
            return "libsodium failure: \(function) failed"
        }
    }
}

/// Why a key file that others may write is refused, with its mode in octal: `a key file must
/// not be writable by group or others (mode 0666)`.
public func keyFileWritableProblem(_ permissions: UInt32) -> String {
    let octal = String(permissions, radix: 8)
    return "a key file must not be writable by group or others (mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal))"
}

/// Why a key file of another user is refused, as messages put it.
public func keyFileOwnerProblem(_ owner: UInt32) -> String {
    "a key file must be owned by you or root, not by uid \(owner)"
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Temporary directories: one way to make them, so every suite's scratch space is unique,
// made atomically and removed afterwards.

/// Makes a new, empty directory `<tmp>/<prefix>-XXXXXX` (mkdtemp(3): unique, created
/// atomically) and gives it `permissions`.
/// - Parameters:
///   - prefix: The start of its name, so a leftover one says which tests made it.
///   - permissions: Its mode; 0o755 as `mkdir` gives under the usual umask, or 0o700 where a
///     test needs a directory no other user can enter (the cache's trust checks).
/// - Returns: Its URL. The caller removes it (``removeTemporaryDirectory(_:)``).
/// - Throws: `POSIXError` with mkdtemp's errno.
public func makeTemporaryDirectory(prefix: String, permissions: mode_t = 0o755) throws -> URL {
    var template = Array((FileManager.default.temporaryDirectory.path + "/\(prefix)-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    let path = String(cString: made)
    _ = chmod(path, permissions)
    return URL(fileURLWithPath: path, isDirectory: true)
}

/// Removes a directory made by ``makeTemporaryDirectory(prefix:permissions:)`` and all in it,
/// first making it writable again in case a test took its write permission away.
public func removeTemporaryDirectory(_ directory: URL) {
    _ = chmod(directory.path, 0o755)
    try? FileManager.default.removeItem(at: directory)
}

/// Runs `body` with a new empty directory (0o755), removed when `body` returns or throws.
public func withTemporaryDirectory<T>(prefix: String = "gzstream-tests", _ body: (URL) throws -> T) throws -> T {
    let directory = try makeTemporaryDirectory(prefix: prefix)
    defer { removeTemporaryDirectory(directory) }
    return try body(directory)
}

/// The async form of ``withTemporaryDirectory(prefix:_:)``.
public func withTemporaryDirectory<T>(prefix: String = "gzstream-tests", _ body: (URL) async throws -> T) async throws -> T {
    let directory = try makeTemporaryDirectory(prefix: prefix)
    defer { removeTemporaryDirectory(directory) }
    return try await body(directory)
}

/// Runs `body` with the path of a new empty directory that only its owner may enter (0o700),
/// removed afterwards: where the directory's own permissions are part of what is tested.
public func withOwnerOnlyTemporaryDirectory<T>(prefix: String = "gzstream-tests", _ body: (String) throws -> T) throws -> T {
    let directory = try makeTemporaryDirectory(prefix: prefix, permissions: 0o700)
    defer { removeTemporaryDirectory(directory) }
    return try body(directory.path)
}

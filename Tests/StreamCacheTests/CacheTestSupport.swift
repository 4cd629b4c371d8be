import Foundation
import StreamCache
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// Helpers of the cache tests alone: fixed keys, file surgery (cut, flip, swap, set times),
// lookups. Seeded data, temporary directories and dedicated threads come from TestSupport.

/// The fixed key bytes the tests use: 0x01, 0x02, … 0x20, and another key.
let testKeyBytes = (1...32).map { UInt8($0) }
let otherKeyBytes = (1...32).map { UInt8(100 + $0) }

func testKey() throws -> SecretStreamKey { try SecretStreamKey(bytes: testKeyBytes) }
func otherKey() throws -> SecretStreamKey { try SecretStreamKey(bytes: otherKeyBytes) }

func fileBytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
func writeFileBytes(_ bytes: [UInt8], to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
func fileExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

/// Sets a file's access and modification times to `seconds` since 1970.
func setFileTime(_ path: String, seconds: Int) {
    var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
    precondition(utimensat(AT_FDCWD, path, &times, 0) == 0, "utimensat \(path)")
}

/// The entry file of `key` in `cache`.
func entryPath(_ cache: DiskCache, _ key: String) -> String {
    cache.directory.description + "/" + cache.entryFileName(forKey: key)
}

/// The plain bytes of a hit, or `nil` for a miss.
func lookupBytes(_ cache: DiskCache, _ key: String, verifyingFirst: Bool = false) throws -> [UInt8]? {
    guard case .hit(let stream, _) = try cache.inputStream(forKey: key, verifyingFirst: verifyingFirst) else { return nil }
    defer { stream.close() }
    return try stream.readToEnd()
}

import Foundation
import StreamCache
#if canImport(Glibc)
import Glibc
#endif

// Helpers shared by the cache tests: seeded data, fixed keys, temporary directories, file
// surgery (cut, flip, swap, set times).

/// SplitMix64: the same numbers on every run for the same seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` bytes of text-like data (compressible, as cached files usually are) from `seed`.
func sampleBytes(count: Int, seed: UInt64 = 1) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    let words = ["stream", "member", "header", "trailer", "window", "deflate", "block", "cache", "entry", "key"]
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 16)
    while bytes.count < count {
        let value = generator.next()
        bytes.append(contentsOf: words[Int(value % 10)].utf8)
        bytes.append(contentsOf: String(value >> 48, radix: 16).utf8)
        bytes.append(value & 0x300 == 0 ? 0x0A : 0x20)
    }
    return Array(bytes.prefix(count))
}

/// The fixed key bytes the tests use: 0x01, 0x02, … 0x20, and another key.
let testKeyBytes = (1...32).map { UInt8($0) }
let otherKeyBytes = (1...32).map { UInt8(100 + $0) }

func testKey() throws -> SecretStreamKey { try SecretStreamKey(bytes: testKeyBytes) }
func otherKey() throws -> SecretStreamKey { try SecretStreamKey(bytes: otherKeyBytes) }

/// Runs `body` with a new empty directory, removed afterwards.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    var template = Array((FileManager.default.temporaryDirectory.path + "/gzstream-cache-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
    let path = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
    }
    return false
}

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

/// Runs `body` on a thread of its own and waits for it without holding one of Swift
/// concurrency's threads: a long blocking test must not starve the suite's other tests (on 2
/// cores there are only 2 such threads, and a starved test fails its time limit).
func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Swift.Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

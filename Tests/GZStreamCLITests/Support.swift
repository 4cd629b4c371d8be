import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers for tests that run the real `gzstream` binary (and gzip, pigz, bgzip, sh, script)
// as child processes, each in its own temporary directory.

// MARK: Where things are

enum Locations {
    /// The package root (TestSupport's ``PackageLocations``).
    static let repository: URL = PackageLocations.root

    static let fixtures: URL = PackageLocations.fixtures

    /// The built `gzstream`: `$GZSTREAM_BIN`, else the `gzstream` next to the test bundle, else
    /// `<repo>/.build/debug/gzstream`.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["GZSTREAM_BIN"], !path.isEmpty { return path }
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL {
            var directory = executable.deletingLastPathComponent()
            candidates.append(directory.appendingPathComponent("gzstream"))
            // Inside an `.xctest` bundle (Darwin): <dir>/X.xctest/Contents/MacOS/X.
            while directory.path != "/" {
                if directory.pathExtension == "xctest" {
                    candidates.append(directory.deletingLastPathComponent().appendingPathComponent("gzstream"))
                    break
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent().appendingPathComponent("gzstream"))
        }
        candidates.append(repository.appendingPathComponent(".build/debug/gzstream"))
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return (found ?? candidates.last!).path
    }()
}

// MARK: A temporary directory per test

/// A fresh directory `<tmp>/gzstream-cli-XXXXXX` (TestSupport's temporary directory) with
/// `work/` (where the commands run and which tests list) and `io/` (captured standard output
/// and error). Removed by `remove()`.
final class Scratch: Sendable {
    let root: URL
    let work: URL
    let io: URL

    init() throws {
        root = try makeTemporaryDirectory(prefix: "gzstream-cli")
        work = root.appendingPathComponent("work")
        io = root.appendingPathComponent("io")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
    }

    func remove() {
        // A test may have made something read-only; make it removable first.
        _ = chmod(work.path, 0o755)
        removeTemporaryDirectory(root)
    }

    /// A path in `work/`.
    func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    /// A path in `io/` that nothing else uses.
    func ioPath(_ label: String) -> String { io.appendingPathComponent("\(label)-\(UUID().uuidString)").path }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = self.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Array(text.utf8))
    }

    func read(_ name: String) throws -> [UInt8] {
        try readBytes(path(name))
    }

    /// The names in `work/`, hidden ones included, sorted.
    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
    }

    func exists(_ name: String) -> Bool {
        var info = stat()
        return lstat(path(name), &info) == 0
    }

    /// Copies a fixture into `work/` under `name`.
    @discardableResult
    func copyFixture(_ relativePath: String, as name: String) throws -> String {
        let destination = path(name)
        try FileManager.default.copyItem(atPath: Locations.fixtures.appendingPathComponent(relativePath).path,
                                         toPath: destination)
        return destination
    }
}

/// Runs `body` with a fresh scratch directory and removes it afterwards.
func withScratch<T>(_ body: (Scratch) throws -> T) throws -> T {
    let scratch = try Scratch()
    defer { scratch.remove() }
    return try body(scratch)
}

/// ``withScratch(_:)`` for an `async` body.
func withAsyncScratch<T>(_ body: (Scratch) async throws -> T) async throws -> T {
    let scratch = try Scratch()
    defer { scratch.remove() }
    return try await body(scratch)
}

func readBytes(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

// MARK: Checksums and data

/// The SHA-256 of a file in lowercase hex, by ``HashCommand``.
func sha256(ofFile path: String, in scratch: Scratch) throws -> String {
    let result = try run(HashCommand.arguments[0], Array(HashCommand.arguments.dropFirst()) + [path], in: scratch)
    #expect(result.status == 0, "\(HashCommand.arguments[0]) \(path): \(result)")
    return HashCommand.digest(inOutput: Array(result.out.utf8)) ?? ""
}

func sha256(of bytes: [UInt8], in scratch: Scratch) throws -> String {
    let path = scratch.ioPath("hash-input")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return try sha256(ofFile: path, in: scratch)
}

// MARK: Files and headers

struct FileStatus {
    var mode: mode_t
    var modificationSeconds: Int
    var modificationNanoseconds: Int
    var size: Int64
    var permissions: mode_t { mode & 0o7777 }
}

func fileStatus(_ path: String) -> FileStatus? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return FileStatus(mode: info.st_mode, modificationSeconds: Int(info.st_mtim.tv_sec),
                      modificationNanoseconds: Int(info.st_mtim.tv_nsec), size: Int64(info.st_size))
}

/// Sets the access and modification times of `path` (seconds and nanoseconds since 1970).
func setModificationTime(_ path: String, seconds: Int, nanoseconds: Int = 0) {
    var times = [timespec(tv_sec: time_t(seconds), tv_nsec: nanoseconds),
                 timespec(tv_sec: time_t(seconds), tv_nsec: nanoseconds)]
    let result = utimensat(AT_FDCWD, path, &times, 0)
    precondition(result == 0, "utimensat \(path)")
}

/// The process's umask, read without changing it (from `/proc/self/status`; 022 elsewhere).
func currentUmask() -> mode_t {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
          let value = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
    else { return 0o022 }
    return value
}

/// The fixed fields of a gzip member header and its FNAME (RFC 1952 §2.3).
struct HeaderFields: Equatable {
    var flags: UInt8
    var modificationTime: UInt32
    var fileName: String?
}

func headerFields(_ bytes: [UInt8]) -> HeaderFields? {
    guard bytes.count >= 10, bytes[0] == 0x1F, bytes[1] == 0x8B, bytes[2] == 8 else { return nil }
    let flags = bytes[3]
    let mtime = UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24
    var index = 10
    if flags & 0x04 != 0 {
        guard bytes.count >= 12 else { return nil }
        index += 2 + (Int(bytes[10]) | Int(bytes[11]) << 8)
    }
    var name: String?
    if flags & 0x08 != 0 {
        guard let end = bytes[min(index, bytes.count)...].firstIndex(of: 0) else { return nil }
        name = String(decoding: bytes[index..<end], as: UTF8.self)
    }
    return HeaderFields(flags: flags, modificationTime: mtime, fileName: name)
}

/// The expected text `fixtures/cli/<name>`: the command line's help and usage kept as data
/// (compared byte for byte), not as a second copy in Swift source.
func cliText(_ name: String) -> String {
    (try? PackageLocations.fixtureText("cli/" + name)) ?? "<fixtures/cli/\(name) cannot be read>"
}

/// The line that follows every usage error's.
let tryHelpLine = "Try 'gzstream --help' for more information.\n"

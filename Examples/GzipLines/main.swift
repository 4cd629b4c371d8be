// The library's everyday tasks in one program: write a gzip file with the scoped API (whole or
// not at all), read it back line by line, print what a real error says, and read a plain
// range through an index.
//
//   gzip-lines [DIRECTORY]
//
// It works in DIRECTORY, leaving its files there (notes.gz, notes.gz.gzidx, damaged.gz), or
// without one in a new temporary directory that it removes at the end. Its output is the same
// on every run.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation  // Error.localizedDescription

let keepsFiles = CommandLine.arguments.count > 1
var directory = keepsFiles ? CommandLine.arguments[1] : ""
if !keepsFiles {
    let temporary = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(temporary)/gzip-lines-XXXXXX".utf8CString)
    guard mkdtemp(&template) != nil else { fatalError("gzip-lines: cannot make a temporary directory") }
    directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
// The files are written at the top level below (the README's snippet, imports and all), where
// an error would stop the program with a backtrace: a directory that cannot be entered or
// written is refused here, in one line.
guard chdir(directory) == 0, access(".", W_OK) == 0 else {
    let message = "gzip-lines: \(directory): \(String(cString: strerror(errno)))\n"
    try FileOutputStream.standardError().writeAll(Array(message.utf8))
    exit(1)
}

// README-SNIPPET-BEGIN (README.md's library example, verbatim: a test keeps them equal)
import GzipStreams   // re-exports ByteStreams

let data = Array("hello, gzip\n".utf8)
let packed = try data.gzipped()                                 // one gzip member, level 6
let plain = try packed.gunzipped(maximumOutputSize: 64 << 20)   // every member checked
assert(plain == data)

// The whole member or nothing: written beside notes.gz, renamed onto it after the trailer.
try GzipOutputStream.withFile(at: "notes.gz") { gzip in
    for number in 1...3 { try gzip.writeAll(Array("line \(number)\n".utf8)) }
}
try GzipInputStream.withFile(at: "notes.gz") { gzip in
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while case let count = gzip.read(&buffer, maxLength: buffer.count), count > 0 {
        print(String(decoding: buffer[..<count], as: UTF8.self), terminator: "")
    }
}   // closed here; a failed read (-1) is thrown: a GzipError names what and at which byte
// README-SNIPPET-END

// Line by line.
try await GzipInputStream.withFile(at: "notes.gz") { input in
    for try await line in input.lines { print("line: \(line)") }
}

/// The bytes of the file at `path`, as they are on disk.
func contents(of path: String) throws -> [UInt8] {
    let file = FileInputStream(path: path)
    defer { file.close() }
    return try file.readToEnd()
}

// A body that throws leaves nothing behind: notes.gz keeps its old bytes.
struct Interrupted: Error {}
let before = try contents(of: "notes.gz")
do {
    try GzipOutputStream.withFile(at: "notes.gz") { gzip in
        try gzip.writeAll(Array("half a file\n".utf8))
        throw Interrupted()
    }
} catch is Interrupted {
    print("after a failed write, notes.gz is unchanged: \(try contents(of: "notes.gz") == before)")
}

// A real error: the CRC-32 of a copy changed.
var damaged = before
damaged[damaged.count - 8] ^= 0xff
let copy = FileOutputStream(path: "damaged.gz")
try copy.writeAll(damaged)
try copy.closeOrThrow()
do {
    try GzipInputStream.withFile(at: "damaged.gz") { gzip in _ = try gzip.readToEnd() }
} catch {
    print("damaged.gz: \(error.localizedDescription)")
}

// A plain range through an index (any gzip file; `gzstream index notes.gz` writes the same).
let indexInput = FileInputStream(path: "notes.gz")
let indexOutput = FileOutputStream(path: "notes.gz.gzidx")
_ = try GzipIndexBuilder().build(from: indexInput, into: indexOutput)
indexInput.close()
try indexOutput.closeOrThrow()
let indexed = try IndexedGzipInputStream(path: "notes.gz")   // reads notes.gz.gzidx
print("bytes 7..<13 through the index: \(String(decoding: try indexed.read(range: 7..<13), as: UTF8.self))")
do {
    _ = try indexed.read(range: 14..<40)
} catch {
    print("bytes 14..<40: \(error.localizedDescription)")
}
indexed.close()

if !keepsFiles {
    for name in ["notes.gz", "notes.gz.gzidx", "damaged.gz"] { unlink(name) }
    _ = chdir("/")
    rmdir(directory)
}

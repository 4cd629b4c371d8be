import ByteStreams
import Foundation
import TarArchives
import TestSupport

// What the tar suites share: running GNU tar and Python's tarfile in a scratch directory, and
// reading an archive with the reader or the scanner.

/// Runs `script` with `/bin/sh -c` in `directory`.
/// - Returns: Its standard output.
/// - Throws: `ShellFailure` when it exits non-zero.
func shell(_ script: String, in directory: URL) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script]
    process.currentDirectoryURL = directory
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let bytes = output.fileHandleForReading.readDataToEndOfFile()
    let errorBytes = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw ShellFailure(script: script, status: process.terminationStatus, stderr: String(decoding: errorBytes, as: UTF8.self))
    }
    return Array(bytes)
}

struct ShellFailure: Error, CustomStringConvertible {
    var script: String
    var status: Int32
    var stderr: String
    var description: String { "`\(script)` exited \(status): \(stderr)" }
}

/// Every member of `archive` with its content, read by ``TarReader`` (in reads of `readSize`).
func readMembers(_ archive: [UInt8], readSize: Int = 4096, bufferSize: Int = 64 << 10) throws -> [(TarEntry, [UInt8])] {
    let reader = TarReader(MemoryInputStream(bytes: archive), bufferSize: bufferSize)
    var members: [(TarEntry, [UInt8])] = []
    while let member = try reader.next() {
        members.append((member.entry, try member.content.readToEnd()))
    }
    return members
}

/// Every entry of `archive` from ``TarScanner`` fed in pieces of `pieceSize` bytes, with the
/// data bytes it reported per entry, and the error it met.
func scanEntries(_ archive: [UInt8], pieceSize: Int) -> (entries: [TarEntry], dataCounts: [Int], error: TarError?) {
    var scanner = TarScanner()
    var entries: [TarEntry] = []
    var dataCounts: [Int] = []
    do {
        var position = 0
        outer: while position < archive.count {
            let piece = Array(archive[position..<min(position + pieceSize, archive.count)])
            var used = 0
            while used < piece.count {
                let (consumed, event) = try piece.withUnsafeBytes { try scanner.scan(UnsafeRawBufferPointer(rebasing: $0[used...])) }
                used += consumed
                switch event {
                case .entry(let entry):
                    entries.append(entry)
                    dataCounts.append(0)
                case .data(let range): dataCounts[dataCounts.count - 1] += range.count
                case .end: break outer
                case nil: break
                }
            }
            position += piece.count
        }
        try scanner.finish()
        return (entries, dataCounts, nil)
    } catch {
        return (entries, dataCounts, error as? TarError)
    }
}

/// Python's tarfile's view of an archive, one JSON object a member: name and names as hex of
/// their bytes, type, size, mode, uid, gid, mtime, offset (the header chain's first block),
/// data (the data's offset), devmajor, devminor.
func pythonMembers(of path: URL, in directory: URL) throws -> [[String: Any]] {
    let script = """
    import json, sys, tarfile
    def raw(s): return s.encode('utf-8', 'surrogateescape').hex()
    out = []
    with tarfile.open(sys.argv[1], encoding='utf-8', errors='surrogateescape') as t:
        for m in t:
            out.append(dict(name=raw(m.name), link=raw(m.linkname), uname=raw(m.uname), gname=raw(m.gname),
                            type=m.type.decode('latin-1'), size=m.size, mode=m.mode, uid=m.uid, gid=m.gid,
                            mtime=int(m.mtime), offset=m.offset, data=m.offset_data, devmajor=m.devmajor,
                            devminor=m.devminor))
    print(json.dumps(out))
    """
    let scriptURL = directory.appendingPathComponent("oracle.py")
    try Data(script.utf8).write(to: scriptURL)
    let output = try shell("python3 oracle.py '\(path.path)'", in: directory)
    return try JSONSerialization.jsonObject(with: Data(output)) as? [[String: Any]] ?? []
}

extension Array where Element == UInt8 {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}

/// The ``TarError`` `body` throws, or `nil` when it throws none (or another error).
func failure(_ body: () throws -> Void) -> TarError? {
    do {
        try body()
        return nil
    } catch {
        return error as? TarError
    }
}

import Foundation
import Testing
import ByteStreams
import TarArchives
import TestSupport

/// TarWriter's archives read back by GNU tar and Python's tarfile, its exact ustar bytes against
/// `tar --format=ustar`, and its refusals.
@Suite("TarWriter", .onDedicatedThreads)
struct TarWriterTests {
    /// The archive of `members` (entry and content) as TarWriter writes it.
    static func archive(_ members: [(TarEntry, [UInt8])], storesSubsecondTimes: Bool = false) throws -> (bytes: [UInt8], entries: [TarEntry]) {
        let output = MemoryOutputStream()
        try output.openOrThrow()
        let writer = TarWriter(output: output, storesSubsecondTimes: storesSubsecondTimes, keepsWrittenEntries: true,
                               bufferSize: 1024)
        for (entry, content) in members {
            try writer.append(entry, content: entry.kind.holdsFileContent ? MemoryInputStream(bytes: content) : nil)
        }
        try writer.finish()
        return ([UInt8](output.data), writer.writtenEntries)
    }

    static func file(_ path: [UInt8], _ content: [UInt8], mode: UInt32 = 0o644, userID: Int = 1000, groupID: Int = 50,
                     seconds: Int64 = 1_700_000_000) -> (TarEntry, [UInt8]) {
        (TarEntry(path: path, kind: .regular, size: content.count, mode: mode, userID: userID, groupID: groupID,
                  userName: Array("alice".utf8), groupName: Array("staff".utf8),
                  modificationTime: TarEntry.Timestamp(seconds: seconds)), content)
    }

    /// One empty-metadata member written by GNU tar 1.34 with the same metadata: every byte of
    /// the 10240-byte archive is the same (ustar header, data, end blocks, record padding).
    @Test(.requires(.tar)) func ustarBytesEqualGNUTar() throws {
        try withTemporaryDirectory { directory in
            try Data("hello, tar\n".utf8).write(to: directory.appendingPathComponent("a.txt"))
            let made = try runProcess(Tool.tar.path!, ["--format=ustar", "--owner=alice:1000", "--group=staff:50",
                                                      "--mtime=@1700000000", "--mode=644", "-C", directory.path,
                                                      "-cf", directory.appendingPathComponent("t.tar").path, "a.txt"])
            #expect(made.status == 0, "\(made.stderrText)")
            let gnu = [UInt8](try Data(contentsOf: directory.appendingPathComponent("t.tar")))
            let ours = try Self.archive([Self.file(Array("a.txt".utf8), Array("hello, tar\n".utf8))]).bytes
            #expect(ours.count == 10240)
            let firstDifference = zip(ours, gnu).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(ours == gnu, "first differing byte: \(String(describing: firstDifference))")
        }
    }

    /// The names and values that need PAX records, and one ustar prefix split, read back by
    /// Python's tarfile (names as bytes) and listed by GNU tar.
    @Test(.requires(.tar), .requires(.python3)) func paxMembersReadByTarAndPython() throws {
        let prefixSplit = Array(String(repeating: "d", count: 150).utf8) + [UInt8(ascii: "/")] + Array(String(repeating: "n", count: 90).utf8)
        let long = Array((0..<6).map { _ in String(repeating: "x", count: 60) }.joined(separator: "/").utf8)
        let nonUTF8: [UInt8] = Array("caf".utf8) + [0xe9] + Array(".txt".utf8)
        let utf8 = Array("größe/ünïcode.txt".utf8)
        let longTarget = Array(String(repeating: "t/", count: 80).utf8)
        var link = TarEntry(path: Array("link".utf8), kind: .symbolicLink, mode: 0o777,
                            modificationTime: TarEntry.Timestamp(seconds: 1_700_000_000))
        link.linkTarget = longTarget
        var bigOwner = Self.file(Array("owner".utf8), Array("o".utf8), userID: 3_000_000, groupID: 0o7777777 + 1)
        bigOwner.0.userName = Array(String(repeating: "u", count: 40).utf8)
        let members: [(TarEntry, [UInt8])] = [
            Self.file(prefixSplit, Array("split".utf8)),
            Self.file(long, Array("long".utf8)),
            Self.file(nonUTF8, Array("latin".utf8)),
            Self.file(utf8, Array("utf8".utf8)),
            (link, []),
            bigOwner,
            Self.file(Array("old".utf8), [], seconds: -86400),
        ]
        let (bytes, entries) = try Self.archive(members)
        #expect(entries.count == members.count)
        // The ustar split needs no PAX header; the 365-byte path does.
        #expect(entries[0].dataOffset - entries[0].headerOffset == 512)
        #expect(entries[1].dataOffset - entries[1].headerOffset == 1536)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("t.tar").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let script = """
            import sys, tarfile, os
            with tarfile.open(sys.argv[1], encoding='utf-8', errors='surrogateescape') as t:
                for m in t:
                    data = t.extractfile(m).read().decode() if m.isfile() else ''
                    print(os.fsencode(m.name).hex(), m.type.decode(), m.size, oct(m.mode), m.uid, m.gid, m.uname, int(m.mtime),
                          os.fsencode(m.linkname).hex(), data)
            """
            let python = try runProcess("/usr/bin/python3", ["-c", script, path])
            #expect(python.status == 0, "\(python.stderrText)")
            let expected = members.map { entry, content in
                let type = entry.kind == .symbolicLink ? "2" : "0"
                let name = String(decoding: entry.userName, as: UTF8.self)
                return "\(hex(entry.path)) \(type) \(entry.size) 0o\(String(entry.mode, radix: 8)) \(entry.userID) \(entry.groupID) "
                    + "\(name) \(entry.modificationTime.seconds) \(hex(entry.linkTarget)) \(String(decoding: content, as: UTF8.self))"
            }
            #expect(python.stdoutText.split(separator: "\n").map(String.init) == expected)
            let listed = try runProcess(Tool.tar.path!, ["--quoting-style=literal", "-tf", path])
            #expect(listed.status == 0, "\(listed.stderrText)")
            #expect(listed.stdout == members.flatMap { $0.0.path + [UInt8(ascii: "\n")] })
            let verbose = try runProcess(Tool.tar.path!, ["--numeric-owner", "--full-time", "--quoting-style=literal", "-tvf", path])
            let owner = verbose.stdoutText.split(separator: "\n").first { $0.hasSuffix(" owner") }
            #expect(owner?.split(separator: " ").dropFirst().first == "3000000/2097152")
            let old = verbose.stdoutText.split(separator: "\n").first { $0.hasSuffix(" old") }
            #expect(old?.contains("1969-12-31 00:00:00") == true, "\(verbose.stdoutText)")
        }
    }

    /// A size of 8 GiB or more goes into a PAX `size` record: the header alone, parsed by
    /// Python's tarfile (no 8 GiB are written).
    @Test(.requires(.python3)) func hugeSizeInPaxRecordReadByPython() throws {
        let size = 10 << 30
        let entry = TarEntry(path: Array("huge.bin".utf8), kind: .regular, size: size,
                             modificationTime: TarEntry.Timestamp(seconds: 1_700_000_000))
        let header = try TarHeaderEncoding.headerBlocks(for: entry)
        #expect(header.count == 1536)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("h.tar").path
            try Data(header).write(to: URL(fileURLWithPath: path))
            let python = try runProcess("/usr/bin/python3", ["-c", """
                import sys, tarfile
                t = tarfile.open(sys.argv[1])
                m = t.next()
                print(m.name, m.size, m.pax_headers.get('size'))
                """, path])
            #expect(python.status == 0, "\(python.stderrText)")
            #expect(python.stdoutText == "huge.bin \(size) \(size)\n")
        }
    }

    /// A sub-second time gets a PAX `mtime` only when asked; Python's tarfile reads it back.
    @Test(.requires(.python3)) func subsecondTimes() throws {
        var entry = Self.file(Array("t".utf8), [])
        entry.0.modificationTime = TarEntry.Timestamp(seconds: 1_700_000_000, nanoseconds: 250_000_000)
        let whole = try Self.archive([entry]).entries[0]
        #expect(whole.dataOffset == 512)
        var early = Self.file(Array("e".utf8), [])
        early.0.modificationTime = TarEntry.Timestamp(seconds: -2, nanoseconds: 500_000_000)
        let (bytes, entries) = try Self.archive([entry, early], storesSubsecondTimes: true)
        #expect(entries[0].dataOffset - entries[0].headerOffset == 1536)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("s.tar").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let python = try runProcess("/usr/bin/python3", ["-c", """
                import sys, tarfile
                for m in tarfile.open(sys.argv[1]): print(m.name, m.pax_headers.get('mtime'))
                """, path])
            #expect(python.stdoutText == "t 1700000000.25\ne -1.5\n", "\(python.stderrText)")
        }
    }

    /// A PAX record's length counts its own digits, also across a power of ten.
    @Test(arguments: 0...120) func paxRecordLength(valueLength: Int) {
        let record = TarHeaderEncoding.record("path", [UInt8](repeating: UInt8(ascii: "a"), count: valueLength))
        let digits = record.prefix { $0 != UInt8(ascii: " ") }
        #expect(Int(String(decoding: digits, as: UTF8.self)) == record.count)
        #expect(record.last == UInt8(ascii: "\n"))
    }

    /// Each member's offsets point at its first header block and its data.
    @Test func offsetsOfEachMember() throws {
        let members = [Self.file(Array("one".utf8), Array("1".utf8)),
                       Self.file(Array(String(repeating: "p", count: 300).utf8), [UInt8](repeating: 7, count: 1000)),
                       Self.file(Array("three".utf8), Array("333".utf8))]
        let (bytes, entries) = try Self.archive(members)
        #expect(entries.map(\.headerOffset) == [0, 1024, 1024 + 1536 + 1024])
        for (entry, member) in zip(entries, members) {
            #expect(Array(bytes[entry.dataOffset..<entry.dataOffset + entry.size]) == member.1)
            #expect(entry.endOffset == (entries.first { $0.headerOffset > entry.headerOffset }?.headerOffset ?? entry.endOffset))
        }
        #expect(bytes[entries[1].headerOffset + TarFormat.Field.typeflag] == UInt8(ascii: "x"))
        #expect(bytes.count % 10240 == 0)
    }

    /// Content shorter or longer than the header's size is an error, and the writer stops.
    @Test(arguments: [3, 5]) func contentOfTheWrongSize(contentLength: Int) throws {
        let output = MemoryOutputStream()
        let writer = TarWriter(output: output)
        let entry = TarEntry(path: Array("f".utf8), kind: .regular, size: 4)
        let content = MemoryInputStream(bytes: [UInt8](repeating: 1, count: contentLength))
        let expected = TarWriteError(.contentSizeMismatch(expected: 4, actual: contentLength < 4 ? 3 : 5), path: Array("f".utf8))
        #expect(throws: expected) { try writer.append(entry, content: content) }
        #expect(throws: expected) { try writer.finish() }
    }

    /// With padding, short content is completed with zeros and long content cut, and said.
    @Test func paddedContent() throws {
        let output = MemoryOutputStream()
        let writer = TarWriter(output: output, recordSize: 512)
        let entry = TarEntry(path: Array("f".utf8), kind: .regular, size: 4)
        let short = try writer.append(entry, paddingContent: MemoryInputStream(bytes: [1, 2]))
        #expect(short.bytesRead == 2 && !short.hadMore && short.readError == nil)
        let long = try writer.append(entry, paddingContent: MemoryInputStream(bytes: [1, 2, 3, 4, 5]))
        #expect(long.bytesRead == 4 && long.hadMore)
        try writer.finish()
        let bytes = [UInt8](output.data)
        #expect(bytes.count == 6 * 512)
        #expect(Array(bytes[512..<516]) == [1, 2, 0, 0])
        #expect(Array(bytes[1536..<1540]) == [1, 2, 3, 4])
    }

    @Test func refusals() throws {
        let writer = TarWriter(output: MemoryOutputStream())
        #expect(throws: TarWriteError(.emptyPath, path: [])) {
            try writer.append(TarEntry(path: [], kind: .directory), content: nil)
        }
        var link = TarEntry(path: Array("l".utf8), kind: .symbolicLink)
        link.linkTarget = [UInt8(ascii: "a"), 0]
        #expect(throws: TarWriteError(.nulInName, path: Array("l".utf8))) { try writer.append(link, content: nil) }
        // Nothing was written: the writer still works.
        try writer.append(TarEntry(path: Array("d/".utf8), kind: .directory, mode: 0o755), content: nil)
        try writer.finish()
        #expect(throws: TarWriteError(.finished, path: Array("x".utf8))) {
            try writer.append(TarEntry(path: Array("x".utf8), kind: .directory), content: nil)
        }
    }

    @Test(arguments: [
        (String(repeating: "a", count: 100), "", String(repeating: "a", count: 100)),
        (String(repeating: "a", count: 155) + "/" + String(repeating: "b", count: 100), String(repeating: "a", count: 155),
         String(repeating: "b", count: 100)),
        ("x/" + String(repeating: "a", count: 99) + "/", "x", String(repeating: "a", count: 99) + "/"),
    ])
    func ustarSplits(path: String, prefix: String, name: String) throws {
        let split = try #require(TarHeaderEncoding.splitPath(Array(path.utf8)))
        #expect(Array(split.prefix) == Array(prefix.utf8) && Array(split.name) == Array(name.utf8))
    }

    @Test(arguments: [String(repeating: "a", count: 101), String(repeating: "a", count: 156) + "/b",
                      "a/" + String(repeating: "b", count: 101), String(repeating: "a", count: 101) + "/"])
    func pathsUstarCannotSplit(path: String) {
        #expect(TarHeaderEncoding.splitPath(Array(path.utf8)) == nil)
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// What a child process wrote and how it ended.
struct ProcessResult {
    var status: Int32
    var stdout: [UInt8]
    var stderr: [UInt8]
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// Runs `executable` with `arguments`, standard input from /dev/null, standard output and
/// error through temporary files (no pipe can fill up).
func runProcess(_ executable: String, _ arguments: [String], directory: URL? = nil) throws -> ProcessResult {
    try withTemporaryDirectory(prefix: "gzstream-tar-tests") { scratch in
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        // Times in UTC and names in UTF-8, whatever the machine's locale.
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "UTC"
        environment["LC_ALL"] = "C.UTF-8"
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus, stdout: [UInt8](try Data(contentsOf: outURL)),
                             stderr: [UInt8](try Data(contentsOf: errURL)))
    }
}

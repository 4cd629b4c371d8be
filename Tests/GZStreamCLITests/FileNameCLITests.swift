import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Names are bytes, as a file system keeps them: a name that is not UTF-8 is passed through a
// shell's `printf` (Foundation's Process takes only String arguments) and made and read here
// through Glibc.

/// `café.txt` in ISO 8859-1: the byte e9 alone is not UTF-8.
let latin1Name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)

/// Glibc calls on names given as bytes, relative to a scratch directory's `work/`.
enum RawFiles {
    /// `work/<name>` as a C string.
    static func path(_ scratch: Scratch, _ name: [UInt8]) -> [CChar] {
        (Array(scratch.work.path.utf8) + [UInt8(ascii: "/")] + name + [0]).map { CChar(bitPattern: $0) }
    }

    static func write(_ scratch: Scratch, _ name: [UInt8], _ bytes: [UInt8]) throws {
        let fd = open(path(scratch, name), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw POSIXError(.EIO) }
    }

    /// The file's bytes, or `nil` when it cannot be opened.
    static func read(_ scratch: Scratch, _ name: [UInt8]) -> [UInt8]? {
        let fd = open(path(scratch, name), O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return count == 0 ? result : nil }
            result += buffer[0..<count]
        }
    }

    /// The names in `work/<directory>` (hidden ones included, `.` and `..` not), as bytes, sorted.
    static func listing(_ scratch: Scratch, _ directory: [UInt8] = []) -> [[UInt8]] {
        guard let stream = opendir(path(scratch, directory)) else { return [] }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    static func modificationSeconds(_ scratch: Scratch, _ name: [UInt8]) -> Int? {
        var info = stat()
        guard stat(path(scratch, name), &info) == 0 else { return nil }
        return Int(info.st_mtim.tv_sec)
    }
}

/// `name` written for a shell script's `printf`: printable ASCII as it is, other bytes as `\ooo`.
func printfEscaped(_ name: [UInt8]) -> String {
    name.map { byte in
        (0x20..<0x7F).contains(byte) && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "%")
            && byte != UInt8(ascii: "'")
            ? String(UnicodeScalar(byte)) : "\\" + String(byte, radix: 8)
    }.joined()
}

@Suite("File names are bytes", .onDedicatedThreads)
struct FileNameCLITests {
    @Test("A name that is not UTF-8 packs, tests, lists and unpacks; messages show it with octal escapes")
    func latin1RoundTrip() throws {
        try withScratch { scratch in
            let content = Array("hello\n".utf8)
            try RawFiles.write(scratch, latin1Name, content)
            let packed = try shell(#""$0" pack -v "$(printf "$1")""#, [printfEscaped(latin1Name)], in: scratch)
            let packedName = latin1Name + Array(".gz".utf8)
            let gz = try #require(RawFiles.read(scratch, packedName), "\(packed)")
            #expect(packed.status == 0, "\(packed)")
            #expect(packed.err == verboseLine(#"caf\351.txt"#, bytesIn: 6, bytesOut: gz.count, plain: 6,
                                              packed: gz.count, output: #"caf\351.txt.gz"#))
            #expect(RawFiles.listing(scratch) == [latin1Name, packedName])
            // FNAME holds the name's own bytes (gzip's -N restores them).
            let fileName = Array(gz[10...].prefix { $0 != 0 })
            #expect(fileName == latin1Name)
            #expect(try gunzip(writeCopy(gz, in: scratch), in: scratch) == content)

            let tested = try shell(#""$0" test -v "$(printf "$1")""#, [printfEscaped(packedName)], in: scratch)
            #expect(tested.status == 0)
            #expect(tested.err == #"gzstream: caf\351.txt.gz: OK (1 member, 6 bytes)"# + "\n")

            let listed = try shell(#""$0" list "$(printf "$1")""#, [printfEscaped(packedName)], in: scratch)
            #expect(listed.status == 0 && listed.err == "", "\(listed)")
            #expect(listed.out.hasPrefix(#"caf\351.txt.gz:"# + "\n"), "\(listed)")
            #expect(listed.out.contains("  café.txt\n"), "FNAME shown as ISO 8859-1 (RFC 1952): \(listed)")
            let json = try shell(#""$0" list --json "$(printf "$1")""#, [printfEscaped(packedName)], in: scratch)
            #expect(json.status == 0)
            #expect(json.out.contains(#"{"file":"caf\\351.txt.gz","members":["#), "\(json)")

            try #require(unlink(RawFiles.path(scratch, latin1Name)) == 0)
            let unpacked = try shell(#""$0" unpack "$(printf "$1")""#, [printfEscaped(packedName)], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(RawFiles.read(scratch, latin1Name) == content)
            #expect(RawFiles.listing(scratch) == [latin1Name, packedName])
        }
    }

    @Test("-o takes a name that is not UTF-8, in each of its spellings",
          arguments: [#"-o "$n""#, #"--output "$n""#, #""--output=$n""#, #""-ko$n""#])
    func outputName(spelling: String) throws {
        try withScratch { scratch in
            try scratch.write("plain.txt", "plain\n")
            let output = Array("out".utf8) + [0xFF] + Array(".gz".utf8)
            let script = #"n="$(printf "$1")"; "$0" pack "# + spelling + " plain.txt"
            let packed = try shell(script, [printfEscaped(output)], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(RawFiles.listing(scratch) == [output, Array("plain.txt".utf8)])
            let gz = try #require(RawFiles.read(scratch, output))
            #expect(try gunzip(writeCopy(gz, in: scratch), in: scratch) == Array("plain\n".utf8))
        }
    }

    @Test("unpack -N creates the file under FNAME's exact bytes, not UTF-8 ones too, and shows them escaped")
    func unpackNameBytes() throws {
        try withScratch { scratch in
            // FNAME "../caf\351.txt": the directory part goes, the bytes stay.
            try scratch.write("named.gz", memberOfX(fileName: Array("../".utf8) + latin1Name, mtime: 1_234_567_890))
            let unpacked = try gzstream(["unpack", "-N", "-v", "named.gz"], in: scratch)
            #expect(unpacked.status == 0, "\(unpacked)")
            let size = try scratch.read("named.gz").count
            #expect(unpacked.err == verboseLine("named.gz", bytesIn: size, bytesOut: 1, plain: 1, packed: size,
                                                output: #"caf\351.txt"#))
            #expect(RawFiles.listing(scratch) == [latin1Name, Array("named.gz".utf8)])
            #expect(RawFiles.read(scratch, latin1Name) == Array("x".utf8))
            #expect(RawFiles.modificationSeconds(scratch, latin1Name) == 1_234_567_890)

            let refused = try gzstream(["unpack", "-N", "named.gz"], in: scratch)
            #expect(refused.status == 1)
            #expect(refused.err == #"gzstream: caf\351.txt: already exists; not overwritten (use -f to overwrite)"# + "\n")
            try RawFiles.write(scratch, latin1Name, Array("in the way".utf8))
            let forced = try gzstream(["unpack", "-N", "-f", "named.gz"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            #expect(RawFiles.read(scratch, latin1Name) == Array("x".utf8))
        }
    }

    @Test("gzip mode -S on a name that is not UTF-8, and with a suffix that is not: packs, lists and unpacks as gzip -S")
    func suffixBytes() throws {
        try withScratch { scratch in
            let content = Array("hello\n".utf8)
            let latinSuffix: [UInt8] = [UInt8(ascii: "."), 0xE9]
            for suffix in [Array(".gzip".utf8), latinSuffix] {
                for directory in ["g", "d"] {
                    try FileManager.default.createDirectory(atPath: scratch.path(directory), withIntermediateDirectories: true)
                    try RawFiles.write(scratch, Array((directory + "/").utf8) + latin1Name, content)
                }
                let packedName = latin1Name + suffix
                let arguments = [printfEscaped(suffix), printfEscaped(latin1Name)]
                let script = #"cd "$1" && "$0" -S "$(printf "$2")" "$(printf "$3")""#
                let gzip = try run("/bin/sh", ["-c", script, "/usr/bin/gzip", "g"] + arguments, in: scratch)
                #expect(gzip.status == 0 && gzip.err == "", "\(gzip)")
                let packed = try run("/bin/sh", ["-c", script, Locations.binary, "d"] + arguments, in: scratch)
                #expect(packed.status == 0 && packed.err == "", "\(packed)")
                #expect(RawFiles.listing(scratch, Array("d".utf8)) == [packedName])
                #expect(RawFiles.listing(scratch, Array("g".utf8)) == [packedName])
                let gz = try #require(RawFiles.read(scratch, Array("d/".utf8) + packedName))
                #expect(Array(gz[10...].prefix { $0 != 0 }) == latin1Name)

                // Packed already: gzip's note with the suffix as the name spells it, exit 0.
                let again = try run("/bin/sh", ["-c", #"cd "$1" && "$0" -S "$(printf "$2")" "$(printf "$3")""#,
                                                Locations.binary, "d", printfEscaped(suffix),
                                                printfEscaped(packedName)], in: scratch)
                let shownSuffix = suffix == latinSuffix ? #".\351"# : ".gzip"
                #expect(again.status == 0)
                #expect(again.err == "gzstream: caf\\351.txt\(shownSuffix) already has \(shownSuffix) suffix -- unchanged\n")

                let listed = try run("/bin/sh", ["-c", #"cd "$1" && "$0" -l -S "$(printf "$2")" "$(printf "$3")""#,
                                                 Locations.binary, "d", printfEscaped(suffix),
                                                 printfEscaped(packedName)], in: scratch)
                #expect(listed.status == 0 && listed.err == "", "\(listed)")
                #expect(listed.out.hasSuffix(#" caf\351.txt"# + "\n"), "\(listed)")

                let unpacked = try run("/bin/sh", ["-c", #"cd "$1" && "$0" -d -S "$(printf "$2")" "$(printf "$3")""#,
                                                   Locations.binary, "d", printfEscaped(suffix),
                                                   printfEscaped(packedName)], in: scratch)
                #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
                #expect(RawFiles.listing(scratch, Array("d".utf8)) == [latin1Name])
                #expect(RawFiles.read(scratch, Array("d/".utf8) + latin1Name) == content)
                for directory in ["g", "d"] { try FileManager.default.removeItem(atPath: scratch.path(directory)) }
            }
        }
    }

    @Test("Called as gunzip or zcat, a .gz name that is not UTF-8 unpacks, as gzip -d and -dc")
    func gunzipLinkBytes() throws {
        try withScratch { scratch in
            let content = Array("hello\n".utf8)
            let packedName = latin1Name + Array(".gz".utf8)
            try RawFiles.write(scratch, latin1Name, content)
            let packed = try shell(#""$0" "$(printf "$1")""#, [printfEscaped(latin1Name)], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(RawFiles.listing(scratch) == [packedName])
            try FileManager.default.createDirectory(atPath: scratch.path("bin"), withIntermediateDirectories: false)
            for name in ["gunzip", "zcat"] {
                try FileManager.default.createSymbolicLink(atPath: scratch.path("bin/" + name),
                                                           withDestinationPath: Locations.binary)
            }
            let shown = try shell(#""$1/bin/zcat" "$(printf "$2")""#, [scratch.work.path, printfEscaped(packedName)],
                                  in: scratch)
            #expect(shown.status == 0 && shown.err == "" && shown.stdout == content, "\(shown)")
            let size = try #require(RawFiles.read(scratch, packedName)).count
            let unpacked = try shell(#""$1/bin/gunzip" -v "$(printf "$2")""#, [scratch.work.path, printfEscaped(packedName)],
                                     in: scratch)
            #expect(unpacked.status == 0, "\(unpacked)")
            // gzip's -v line; its ratio leaves out the header (FNAME of 8 bytes) and the trailer.
            let ratio = String(format: "%5.1f%%", 100 * Double(6 - (size - (10 + 9 + 8))) / 6)
            #expect(unpacked.err == #"caf\351.txt.gz:"# + "\t\(ratio) -- replaced with " + #"caf\351.txt"# + "\n")
            #expect(RawFiles.listing(scratch) == [Array("bin".utf8), latin1Name])
            #expect(RawFiles.read(scratch, latin1Name) == content)
        }
    }

    @Test("A missing name that is not UTF-8 is named with octal escapes; control characters as \\u{…}")
    func missingName() throws {
        try withScratch { scratch in
            let result = try shell(#""$0" pack "$(printf 'missing\351\001')""#, in: scratch)
            #expect(result.status == 1)
            #expect(result.err == #"gzstream: missing\351\u{1}: No such file or directory"# + "\n")
            #expect(RawFiles.listing(scratch).isEmpty)
        }
    }
}

/// A gzip member of the one byte `x` (a stored block) whose header has FNAME `fileName` and
/// MTIME `mtime`, made by hand so that the name's bytes are exactly these (RFC 1952 §2.3).
func memberOfX(fileName: [UInt8], mtime: UInt32) -> [UInt8] {
    var bytes: [UInt8] = [0x1F, 0x8B, 8, 0x08] + withUnsafeBytes(of: mtime.littleEndian, Array.init) + [0, 3]
    bytes += fileName + [0]
    bytes += [0x01, 0x01, 0x00, 0xFE, 0xFF, UInt8(ascii: "x")]   // final stored block of 1 byte
    bytes += [0x83, 0x16, 0xDC, 0x8C, 1, 0, 0, 0]                // CRC-32 of "x" (8cdc1683), ISIZE 1
    return bytes
}

/// Copies `bytes` to a fresh file in `io/` (for tools run on a plain name) and returns its path.
func writeCopy(_ bytes: [UInt8], in scratch: Scratch) throws -> String {
    let path = scratch.ioPath("copy")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

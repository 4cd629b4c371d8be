import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Issue 8: times gzip's MTIME cannot hold, nothing written before the input is readable, and
// file mode as GNU gzip's (each case compared with gzip 1.12).

@Suite("Times and file mode, as GNU gzip")
struct FileModeCLITests {
    // MARK: MTIME out of range

    static let timestampWarning = "gzstream: f: warning: file timestamp out of range for gzip format\n"

    /// `touch -d` sets the time; `nil` is out of range: stored as 0 with gzip's warning, exit 2.
    @Test("A modification time MTIME cannot hold is stored as 0 with gzip's warning and exit 2, never clamped",
          arguments: [
              ("2107-01-01 00:00:00 UTC", nil),
              ("2106-02-07 06:28:16 UTC", nil),
              ("1969-12-31 23:59:59 UTC", nil),
              ("@0", nil),                                   // MTIME 0 means none, so it warns too
              ("@1", 1),
              ("2106-02-07 06:28:15 UTC", 0xFFFF_FFFF),
          ] as [(String, UInt32?)])
    func timestampRange(date: String, stored: UInt32?) throws {
        try withScratch { scratch in
            try scratch.write("f", "timed\n")
            let touched = try run("/usr/bin/touch", ["-d", date, "f"], in: scratch)
            try #require(touched.status == 0, "\(touched)")
            let result = try gzstream(["pack", "f"], in: scratch)
            #expect(result.status == (stored == nil ? 2 : 0))
            #expect(result.err == (stored == nil ? Self.timestampWarning : ""))
            let header = try #require(headerFields(try scratch.read("f.gz")))
            #expect(header.modificationTime == stored ?? 0)
            #expect(header.fileName == "f")
            #expect(try gunzip(scratch.path("f.gz"), in: scratch) == Array("timed\n".utf8))
            // The output keeps the input's time, whatever MTIME holds.
            #expect(fileStatus(scratch.path("f.gz"))?.modificationSeconds == fileStatus(scratch.path("f"))?.modificationSeconds)
        }
    }

    // MARK: Nothing written before the input is readable

    @Test("pack with standard input closed or a directory writes no byte (no header) and exits 1",
          arguments: [(#"<&-"#, "Bad file descriptor"), (#"< dir"#, "Is a directory")],
          [[], ["-c"], ["--bgzf"], ["-p", "2"], ["-1"]])
    func unreadableStandardInput(redirection: (String, String), flags: [String]) throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("dir"), withIntermediateDirectories: false)
            let result = try shell(#""$0" pack "$@" "# + redirection.0, flags, in: scratch)
            #expect(result.status == 1)
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.err == "gzstream: standard input: read failed: \(redirection.1)\n")
            let toFile = try shell(#""$0" pack -o out.gz "$@" "# + redirection.0, flags.filter { $0 != "-c" }, in: scratch)
            #expect(toFile.status == 1)
            #expect(toFile.err == "gzstream: standard input: read failed: \(redirection.1)\n")
            #expect(try scratch.listing() == ["dir"], "no output, no temporary file")
        }
    }

    @Test("Out of range: -c warns too, -q keeps the exit status, -n and --bgzf store no time and do not warn")
    func timestampRangeOptions() throws {
        try withScratch { scratch in
            try scratch.write("f", "timed\n")
            setModificationTime(scratch.path("f"), seconds: -86_400)
            let toOutput = try gzstream(["pack", "-c", "f"], in: scratch)
            #expect(toOutput.status == 2 && toOutput.err == Self.timestampWarning)
            #expect(headerFields(toOutput.stdout)?.modificationTime == 0)
            let quiet = try gzstream(["pack", "-cq", "f"], in: scratch)
            #expect(quiet.status == 2 && quiet.err == "")
            for flags in [["-n"], ["--bgzf"]] {
                let result = try gzstream(["pack", "-c"] + flags + ["f"], in: scratch)
                #expect(result.status == 0 && result.err == "", "\(flags): \(result)")
            }
        }
    }
}

import Foundation
import Testing
import TestSupport

// gzip mode's usage errors, -S's limits, -L, --synchronous and -n/-N, against GNU gzip 1.12.

/// Whether strace(1) is installed and may trace a child here (ptrace can be forbidden).
let straceWorks: Bool = {
    guard let strace = Tool.strace.path, let scratch = try? Scratch() else { return false }
    defer { scratch.remove() }
    return (try? run(strace, ["-o", "/dev/null", "/bin/true"], in: scratch))?.status == 0
}()

@Suite("gzip mode: usage errors, -S, -L, --synchronous and -n/-N, as gzip 1.12", .onDedicatedThreads)
struct GzipModeUsageCLITests {
    static let text = sampleText(byteCount: 3000, seed: 42)

    // MARK: Usage errors

    @Test("A usage error is one line and where help is, signed with the program's name, as gzip's",
          .requires(.gzip), arguments: [
              ["-x", "f"], ["--bogus", "f"], ["--bogus=1", "f"], ["-S"], ["--suffix"], ["--stdout=yes", "f"],
              ["--fast=3", "f"], ["-x", "-h"], ["-cx", "f"], ["-S", "", "f"], ["-dS", "", "f.gz"], ["-dc", "-S", "", "f.gz"],
              ["-S", "1234567890123456789012345678901", "f"],
          ])
    func usageErrorsAsGzip(arguments: [String]) throws {
        try withScratch { mine in
            try withScratch { reference in
                for scratch in [mine, reference] {
                    try scratch.write("f", Self.text)
                    try scratch.write("f.gz", Array(Self.text.prefix(10)))
                }
                let ours = try runAsGzip(arguments, in: mine)
                let gzip = try runAsGzip(arguments, program: "gzip", in: reference)
                #expect(gzip.status == 1)
                #expect(ours.status == gzip.status && ours.out == gzip.out, "gzstream: \(ours)\ngzip: \(gzip)")
                #expect(ours.err == withStraightQuotes(gzip.err))
                #expect(try mine.listing() == ["f", "f.gz"])
            }
        }
    }

    @Test("The name is argv[0]'s last component: gzstream's own, or a link's")
    func signedWithProgramName() throws {
        try withScratch { scratch in
            for name in ["gzstream", "gz", "zcat"] {
                let result = try runAsGzip(["-x"], linkName: name, in: scratch)
                #expect(result.status == 1 && result.out == "", "\(result)")
                #expect(result.err == "\(name): invalid option -- 'x'\nTry '\(name) --help' for more information.\n")
            }
        }
    }

    // MARK: -S

    @Test("-S with a / is refused in gzip 1.13's words before anything is touched (gzip 1.12 writes into the directory)",
          arguments: [["-S", "a/b", "f"], ["--suffix=/x", "f"], ["-d", "-S", ".gz/", "f.gz"], ["pack", "-S", "a/b", "f"],
                      ["-S", "/", "-x", "f"]])
    func suffixWithSlash(arguments: [String]) throws {
        try withScratch { scratch in
            try scratch.write("f", Self.text)
            try scratch.write("f.gz", Array(Self.text.prefix(10)))
            // Where gzip 1.12 (and gzstream before) put `-S a/b f`'s output, removing f.
            try FileManager.default.createDirectory(atPath: scratch.path("fa"), withIntermediateDirectories: false)
            let result = try gzstream(arguments, in: scratch)
            #expect(result.status == 1 && result.out == "", "\(result)")
            #expect(result.err == "gzstream: suffix contains '/'\n")
            #expect(try scratch.listing() == ["f", "f.gz", "fa"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("fa")) == [])
            #expect(try scratch.read("f") == Self.text)
        }
    }

    // MARK: -L

    @Test("-L and --license print the licence in gzip -L's shape and exit 0, touching no FILE", .requires(.gzip))
    func license() throws {
        try withScratch { scratch in
            try scratch.write("f", Self.text)
            let gzip = try run("/usr/bin/gzip", ["-L", "f"], in: scratch)
            #expect(gzip.status == 0 && gzip.err == "", "\(gzip)")
            let gzipLines = gzip.out.split(separator: "\n")
            for arguments in [["-L", "f"], ["--license"], ["-kL"], ["pack", "--license"]] {
                let ours = try gzstream(arguments, in: scratch)
                #expect(ours.status == gzip.status && ours.err == "", "\(arguments): \(ours)")
                let lines = ours.out.split(separator: "\n")
                #expect(lines.first == "gzstream \(try PackageLocations.version())", "\(arguments)")
                #expect(lines.last == gzipLines.last, "\(arguments)")
                #expect(ours.out.contains("Apache License, Version 2.0"))
            }
            #expect(try scratch.listing() == ["f"])
            // Options are met in order, as gzip meets them.
            let refused = try runAsGzip(["-x", "-L"], in: scratch)
            let gzipRefused = try runAsGzip(["-x", "-L"], program: "gzip", in: scratch)
            #expect(refused.status == 1 && refused.err == withStraightQuotes(gzipRefused.err), "\(refused)")
        }
    }

    // MARK: --synchronous

    @Test("--synchronous leaves what gzip --synchronous leaves", .requires(.gzip),
          arguments: [["--synchronous", "f"], ["--synchronous", "-d", "g.gz"], ["--synchronous", "-c", "f"]])
    func synchronousLikeGzip(arguments: [String]) throws {
        try withScratch { mine in
            try withScratch { reference in
                for scratch in [mine, reference] {
                    try scratch.write("f", Self.text)
                    try scratch.write("g", Self.text)
                    #expect(try run("/usr/bin/gzip", ["g"], in: scratch).status == 0)
                }
                let ours = try gzstream(arguments, in: mine)
                let gzip = try run("/usr/bin/gzip", arguments, in: reference)
                #expect(ours.status == gzip.status && ours.err == gzip.err, "gzstream: \(ours)\ngzip: \(gzip)")
                #expect(try mine.listing() == reference.listing())
            }
        }
    }

    @Test("--synchronous flushes the output file, then its directory once the name is in place, before the input is removed",
          .enabled(if: straceWorks, "needs strace(1) allowed to trace a child (Debian package: strace)"))
    func synchronousOrder() throws {
        let strace = try #require(Tool.strace.path)
        try withScratch { scratch in
            try scratch.write("f", Self.text)
            let calls = "fsync,fdatasync,rename,renameat,renameat2,link,linkat,unlink,unlinkat"
            let traced = try run(strace, ["-f", "-qq", "-e", "trace=" + calls, Locations.binary, "--synchronous", "f"],
                                 in: scratch)
            #expect(traced.status == 0, "\(traced)")
            let removal = try #require(traced.errLines.firstIndex { $0.contains("unlink") && $0.contains("\"f\"") })
            let renamed = try #require(traced.errLines.firstIndex { $0.contains("rename") && $0.contains("\"f.gz\"") })
            let flushes = traced.errLines.indices.filter { traced.errLines[$0].contains("sync(") }
            #expect(flushes.contains { $0 < renamed }, "the file before it is renamed: \(traced.err)")
            #expect(flushes.contains { $0 > renamed && $0 < removal }, "the directory before the input goes: \(traced.err)")
            #expect(try scratch.listing() == ["f.gz"])

            try scratch.write("g", Self.text)
            let plain = try run(strace, ["-f", "-qq", "-e", "trace=" + calls, Locations.binary, "g"], in: scratch)
            #expect(plain.status == 0 && !plain.err.contains("sync("), "without --synchronous, no flush: \(plain)")
        }
    }

    // MARK: -n and -N

    /// Cases for -n/-N: arguments, on `plain` (mtime 1_500_000_000) and `x.gz` (made from a
    /// file named `stored.txt`, MTIME 1_400_000_000, the .gz file's own time 1_600_000_000).
    static let nameCases: [[String]] = [
        ["-k", "plain"], ["-k", "-n", "plain"], ["-k", "-N", "plain"], ["-k", "--no-name", "plain"], ["-k", "--name", "plain"],
        ["-k", "-n", "-N", "plain"], ["-k", "-N", "-n", "plain"],
        ["-d", "x.gz"], ["-dn", "x.gz"], ["-dN", "x.gz"], ["-d", "--name", "x.gz"], ["-d", "--no-name", "x.gz"],
        ["-dNc", "x.gz"], ["-dN", "-k", "x.gz"], ["-dNn", "x.gz"],
    ]

    @Test("-n and -N, and their defaults, as gzip: the name and MTIME stored, and restored only with -N", .requires(.gzip),
          arguments: nameCases)
    func nameAndTime(arguments: [String]) throws {
        try withScratch { mine in
            try withScratch { reference in
                for scratch in [mine, reference] {
                    try scratch.write("plain", Self.text)
                    setModificationTime(scratch.path("plain"), seconds: 1_500_000_000)
                    try scratch.write("stored.txt", "stored\n")
                    setModificationTime(scratch.path("stored.txt"), seconds: 1_400_000_000)
                    #expect(try run("/usr/bin/gzip", ["-c", "stored.txt"], in: scratch, stdoutPath: scratch.path("x.gz")).status == 0)
                    try FileManager.default.removeItem(atPath: scratch.path("stored.txt"))
                    setModificationTime(scratch.path("x.gz"), seconds: 1_600_000_000)
                }
                let ours = try gzstream(arguments, in: mine)
                let gzip = try run("/usr/bin/gzip", arguments, in: reference)
                #expect(ours.status == gzip.status && ours.stdout == gzip.stdout, "gzstream: \(ours)\ngzip: \(gzip)")
                let names = try mine.listing()
                #expect(names == (try reference.listing()))
                for name in names where reference.exists(name) {
                    let (theirs, ourBytes) = (try reference.read(name), try mine.read(name))
                    if name.hasSuffix(".gz") {
                        #expect(headerFields(ourBytes) == headerFields(theirs), "\(name)")
                    } else {
                        #expect(ourBytes == theirs, "\(name)")
                    }
                    #expect(fileStatus(mine.path(name))?.modificationSeconds
                        == fileStatus(reference.path(name))?.modificationSeconds, "\(name)")
                }
            }
        }
    }
}

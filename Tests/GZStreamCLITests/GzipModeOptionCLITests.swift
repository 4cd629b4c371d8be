import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// gzip mode, continued: tar -I, argv[0], -S with the commands, -0, zcat -f and -l beyond gzip.

extension GzipModeCLITests {
    // MARK: tar -I

    @Test("tar -I gzstream round-trips a tree (files, subfolders, an empty file, a symlink); tar -z reads it; gzstream reads tar -z's",
          .requires(.tar))
    func tarRoundTrip() throws {
        let tar = try #require(Tool.tar.path)
        try withScratch { scratch in
            let manager = FileManager.default
            try manager.createDirectory(atPath: scratch.path("src/sub/deeper"), withIntermediateDirectories: true)
            try manager.createDirectory(atPath: scratch.path("src/empty folder"), withIntermediateDirectories: true)
            try scratch.write("src/one.txt", sampleText(byteCount: 20_000, seed: 31))
            try scratch.write("src/empty", [])
            try scratch.write("src/sub/random.bin", randomBytes(count: 300_000, seed: 32))
            try scratch.write("src/sub/deeper/d.txt", "deep\n")
            try manager.createSymbolicLink(atPath: scratch.path("src/sub/link"), withDestinationPath: "../one.txt")
            let source = try tree(at: scratch.path("src"))
            #expect(source.count == 8)

            let made = try run(tar, ["-I", Locations.binary, "-cf", "ours.tgz", "src"], in: scratch)
            #expect(made.status == 0 && made.err == "", "\(made)")
            #expect(try gunzip(scratch.path("ours.tgz"), in: scratch) != nil)
            let theirs = try run(tar, ["-czf", "theirs.tgz", "src"], in: scratch)
            #expect(theirs.status == 0, "\(theirs)")

            for (folder, arguments) in [("x1", ["-I", Locations.binary, "-xf", "../ours.tgz"]),
                                        ("x2", ["-xzf", "../ours.tgz"]),
                                        ("x3", ["--use-compress-program=\(Locations.binary)", "-xf", "../theirs.tgz"])] {
                try manager.createDirectory(atPath: scratch.path(folder), withIntermediateDirectories: false)
                let extracted = try run(tar, arguments, in: scratch, directory: scratch.work.appendingPathComponent(folder))
                #expect(extracted.status == 0 && extracted.err == "", "\(folder): \(extracted)")
                #expect(try tree(at: scratch.path(folder + "/src")) == source, "\(folder)")
            }
        }
    }

    // MARK: argv[0]

    @Test("Called as gunzip, zcat or gzcat (a link's name), it is gzip -d or gzip -dc; any other name is gzstream")
    func programNames() throws {
        try withScratch { scratch in
            try FileManager.default.createDirectory(atPath: scratch.path("bin"), withIntermediateDirectories: false)
            for name in ["gunzip", "zcat", "gzcat", "gz"] {
                try FileManager.default.createSymbolicLink(atPath: scratch.path("bin/" + name),
                                                           withDestinationPath: Locations.binary)
            }
            try scratch.write("b.txt", Self.bText)
            #expect(try run("/usr/bin/gzip", ["b.txt"], in: scratch).status == 0)
            // A file named like a command is a file: zcat takes no command.
            try FileManager.default.copyItem(atPath: scratch.path("b.txt.gz"), toPath: scratch.path("pack"))

            for name in ["zcat", "gzcat"] {
                let shown = try run(scratch.path("bin/" + name), ["b.txt.gz", "pack"], in: scratch)
                #expect(shown.status == 0 && shown.err == "", "\(name): \(shown)")
                #expect(shown.stdout == Self.bText + Self.bText, "\(name)")
                let piped = try run(scratch.path("bin/" + name), [], in: scratch, input: .file(scratch.path("pack")))
                #expect(piped.status == 0 && piped.stdout == Self.bText, "\(name) < pack: \(piped)")
                let listed = try run(scratch.path("bin/" + name), ["-l", "b.txt.gz"], in: scratch)
                let gzipListed = try run("/usr/bin/gzip", ["-l", "b.txt.gz"], in: scratch)
                #expect(listed.status == 0 && listed.out == gzipListed.out, "\(name) -l: \(listed)")
            }
            #expect(try scratch.listing() == ["b.txt.gz", "bin", "pack"])

            let tested = try run(scratch.path("bin/gunzip"), ["-t", "b.txt.gz"], in: scratch)
            #expect(tested.status == 0 && tested.err == "" && tested.out == "", "\(tested)")
            let kept = try run(scratch.path("bin/gunzip"), ["-c", "b.txt.gz"], in: scratch)
            #expect(kept.status == 0 && kept.stdout == Self.bText, "\(kept)")
            let unpacked = try run(scratch.path("bin/gunzip"), ["b.txt.gz"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "" && unpacked.out == "", "\(unpacked)")
            #expect(try scratch.listing() == ["b.txt", "bin", "pack"])
            #expect(try scratch.read("b.txt") == Self.bText)
            let skipped = try run(scratch.path("bin/gunzip"), ["pack"], in: scratch)
            // Messages name the program as invoked, as gzip's do.
            #expect(skipped.status == 2 && skipped.err == "gunzip: pack: unknown suffix -- ignored\n", "\(skipped)")

            // Another name: the commands work, and without one it is gzip.
            let command = try run(scratch.path("bin/gz"), ["unpack", "-c", "pack"], in: scratch)
            #expect(command.status == 0 && command.stdout == Self.bText, "\(command)")
            let packed = try run(scratch.path("bin/gz"), ["b.txt"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(try scratch.listing() == ["b.txt.gz", "bin", "pack"])
        }
    }

    // MARK: -S with the commands

    @Test("pack -S writes FILE+SUF and refuses a name that has it; unpack -S takes it, and still the built-in suffixes")
    func suffixWithCommands() throws {
        try withScratch { scratch in
            try scratch.write("a.txt", Self.aText)
            let packed = try gzstream(["pack", "-S", ".gzip", "a.txt"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(try scratch.listing() == ["a.txt", "a.txt.gzip"])
            #expect(try gunzip(scratch.path("a.txt.gzip"), in: scratch) == Self.aText)
            let again = try gzstream(["pack", "--suffix", ".GZIP", "a.txt.gzip"], in: scratch)
            #expect(again.status == 2 && again.err == "gzstream: a.txt.gzip: already has .GZIP suffix -- unchanged\n",
                    "\(again)")
            try FileManager.default.removeItem(atPath: scratch.path("a.txt"))
            let unpacked = try gzstream(["unpack", "--suffix=.gzip", "a.txt.gzip"], in: scratch)
            #expect(unpacked.status == 0 && unpacked.err == "", "\(unpacked)")
            #expect(try scratch.listing() == ["a.txt", "a.txt.gzip"])
            #expect(try scratch.read("a.txt") == Self.aText)
            try FileManager.default.moveItem(atPath: scratch.path("a.txt.gzip"), toPath: scratch.path("b.TGZ"))
            let builtIn = try gzstream(["unpack", "-S", ".gzip", "b.TGZ"], in: scratch)
            #expect(builtIn.status == 0 && builtIn.err == "", "\(builtIn)")
            #expect(try scratch.read("b.tar") == Self.aText)
        }
    }

    // MARK: -0

    @Test("-0, pack -0 and --level 0 write stored deflate blocks only, which gzip -t passes",
          arguments: [["-0", "-c"], ["pack", "-0", "-c"], ["pack", "--level", "0", "-p", "2", "-b", "32", "-c"],
                      ["-0c", "-p", "1"]])
    func levelZero(arguments: [String]) throws {
        try withScratch { scratch in
            for size in [0, 1000, 300_000] {
                let data = randomBytes(count: size, seed: 33)
                try scratch.write("data", data)
                let result = try gzstream(arguments + ["data"], in: scratch)
                #expect(result.status == 0 && result.err == "", "\(result)")
                #expect(storedBlocksContent(result.stdout) == data, "\(size) bytes")
                let path = scratch.ioPath("stored")
                try Data(result.stdout).write(to: URL(fileURLWithPath: path))
                let checked = try run("/usr/bin/gzip", ["-t", path], in: scratch)
                #expect(checked.status == 0 && checked.err == "", "\(checked)")
            }
        }
    }

    // MARK: zcat -f

    @Test("zcat -f reads a rotated log set: plain files copied, gzip decoded, as gzip -cdf; without -f plain is an error")
    func zcatForce() throws {
        try withScratch { scratch in
            try FileManager.default.createSymbolicLink(atPath: scratch.path("zcat"), withDestinationPath: Locations.binary)
            try scratch.write("app.log", "newest line\n")
            try scratch.write("app.log.1", "older line\n")
            try scratch.write("app.log.2", sampleText(byteCount: 40_000, seed: 34))
            #expect(try run("/usr/bin/gzip", ["app.log.1", "app.log.2"], in: scratch).status == 0)
            try scratch.write("empty.log", [])
            // A gzip member, then plain text: gzip -cdf copies the rest.
            let member = try scratch.read("app.log.1.gz")
            try scratch.write("mixed", member + Array("not gzip after it\n".utf8) + [0, 0])
            try scratch.write("lone", [0x1f])
            let files = ["app.log", "app.log.1.gz", "app.log.2.gz", "empty.log", "mixed", "lone"]
            let gzip = try run("/usr/bin/gzip", ["-cdf"] + files, in: scratch)
            #expect(gzip.status == 0, "\(gzip)")
            for (tool, arguments) in [(scratch.path("zcat"), ["-f"]), (Locations.binary, ["-dcf"]),
                                      (Locations.binary, ["unpack", "-c", "-f"])] {
                let ours = try run(tool, arguments + files, in: scratch)
                #expect(ours.status == 0 && ours.err == "", "\(arguments): \(ours)")
                #expect(ours.stdout == gzip.stdout, "\(arguments)")
            }
            let piped = try run(scratch.path("zcat"), ["-f"], in: scratch, input: .file(scratch.path("mixed")))
            let gzipPiped = try run("/usr/bin/gzip", ["-cdf"], in: scratch, input: .file(scratch.path("mixed")))
            #expect(piped.status == 0 && piped.stdout == gzipPiped.stdout, "\(piped)")
            #expect(try scratch.listing() == ["app.log", "app.log.1.gz", "app.log.2.gz", "empty.log", "lone", "mixed", "zcat"])

            // Without -f: an error for what is not gzip, the gzip files still decoded; trailing
            // text is a warning, as gzip's.
            let strict = try run(scratch.path("zcat"), ["app.log", "app.log.1.gz", "mixed", "empty.log"], in: scratch)
            #expect(strict.status == 1)
            #expect(strict.out == "older line\nolder line\n")
            // In gzip's words, after the program's name as invoked.
            #expect(strict.err == """

                zcat: app.log: not in gzip format

                zcat: mixed: decompression OK, trailing garbage ignored

                zcat: empty.log: unexpected end of file

                """)
            // Bytes that begin with the magic must be a member, with -f too.
            try scratch.write("bad", member + [0x1f, 0x8b, 0x08])
            let bad = try run(scratch.path("zcat"), ["-f", "bad"], in: scratch)
            let gzipBad = try run("/usr/bin/gzip", ["-cdf", "bad"], in: scratch)
            #expect(bad.status == 1 && gzipBad.status == 1)
            #expect(bad.stdout == gzipBad.stdout)
        }
    }

    // MARK: -l beyond gzip

    @Test("-l counts every member: sizes, CRC-32 and ratio of the whole file, and a totals line over the files")
    func listMultiMember() throws {
        try withScratch { scratch in
            try Self.makeFiles(scratch, extra: .none)
            let plain = Array("short\n".utf8) + Array("a file named pack\n".utf8)
            let fileSize = try scratch.read("multi.gz").count
            // Each member's header is 10 bytes and its name ("d.txt", "pack") with its zero; 8-byte trailers.
            let overhead = (10 + 6 + 8) + (10 + 5 + 8)
            func ratio(_ plainCount: Int, _ packedCount: Int, _ overhead: Int) -> String {
                String(format: "%5.1f%%", 100 * Double(plainCount - (packedCount - overhead)) / Double(plainCount))
            }
            func number(_ value: Int) -> String { String(repeating: " ", count: 19 - String(value).count) + String(value) }
            let heading = "         compressed        uncompressed  ratio uncompressed_name\n"
            let multiRow = number(fileSize) + " " + number(plain.count) + " " + ratio(plain.count, fileSize, overhead) + " multi\n"

            let single = try gzstream(["-l", "multi.gz"], in: scratch)
            #expect(single.status == 0 && single.err == "", "\(single)")
            #expect(single.out == heading + multiRow)

            let bSize = try scratch.read("b.txt.gz").count
            let bOverhead = 10 + 6 + 8
            let bRow = number(bSize) + " " + number(Self.bText.count) + " " + ratio(Self.bText.count, bSize, bOverhead) + " b.txt\n"
            let totals = number(fileSize + bSize) + " " + number(plain.count + Self.bText.count) + " "
                + ratio(plain.count + Self.bText.count, fileSize + bSize, overhead + bOverhead) + " (totals)\n"
            let two = try gzstream(["-l", "multi.gz", "b.txt.gz", "a.txt"], in: scratch)
            #expect(two.status == 1)
            #expect(two.err == "\ngzstream: a.txt: not in gzip format\n")
            #expect(two.out == heading + multiRow + bRow + totals)

            // -v: the CRC-32 of all the data (gzip's of the joined plain bytes) and gzip's date.
            try scratch.write("joined", plain)
            let joined = try run("/usr/bin/gzip", ["-c", "joined"], in: scratch).stdout
            let crc = joined[(joined.count - 8)..<(joined.count - 4)].reversed().map { String(format: "%02x", $0) }.joined()
            let gzipVerbose = try run("/usr/bin/gzip", ["-lv", "multi.gz"], in: scratch).out.split(separator: "\n")
            let date = String(gzipVerbose[1].dropFirst(15).prefix(13))
            let verbose = try gzstream(["-lv", "multi.gz"], in: scratch)
            #expect(verbose.out == "method  crc     date  time  " + heading + "defla " + crc + " " + date + multiRow)

            // --json: gzstream list's JSON.
            let json = try gzstream(["-l", "--json", "multi.gz"], in: scratch)
            let listJSON = try gzstream(["list", "--json", "multi.gz"], in: scratch)
            #expect(json.status == 0 && json.out == listJSON.out && json.out.hasPrefix("["), "\(json)")
        }
    }
}

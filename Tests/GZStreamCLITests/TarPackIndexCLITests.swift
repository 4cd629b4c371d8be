import Foundation
import Testing
import TarArchives
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `pack --tar --index`: the member index (`OUTPUT.tarix`) written with the archive from the
/// members as they were written, against what `gzstream index` builds by decoding the archive.
@Suite("pack --tar --index: the member index beside the archive", .onDedicatedThreads, .requires(.tar))
struct TarPackIndexCLITests {
    /// Files around a block's size, a long name (a pax record), links, an empty directory.
    static let makeTree = #"""
        set -e
        mkdir -p tree/sub/deeper tree/empty
        printf 'hello\n' > tree/a.txt
        head -c 513 /dev/zero | tr '\0' 'b' > tree/sub/b513
        seq 1 60000 > tree/sub/deeper/numbers
        ln -s ../a.txt tree/sub/link
        ln tree/a.txt tree/sub/hard
        long=tree/$(printf '%0120d' 7); printf 'long\n' > "$long"
        chmod 640 tree/sub/b513
        find tree -exec touch -h -d @1600000000 {} +
        """#

    static func permissions(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("the .tarix is gzstream index's own, byte for byte; list and unpack read members through it")
    func sameAsIndex() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeTree, in: scratch).status == 0)
            let packed = try gzstream(["pack", "--tar", "--index", "-v", "tree"], in: scratch)
            #expect(packed.status == 0 && packed.out == "", "\(packed)")
            #expect(packed.errLines.last?.hasPrefix("gzstream: tree.tar.gz: 10 tar members -> tree.tar.gz.tarix (") == true,
                    "\(packed)")
            #expect(scratch.exists("tree.tar.gz.gzidx") && scratch.exists("tree.tar.gz.tarix"))
            let archiveMode = try Self.permissions(scratch.path("tree.tar.gz"))
            let indexMode = try Self.permissions(scratch.path("tree.tar.gz.tarix"))
            #expect(indexMode & ~archiveMode == 0 && indexMode == archiveMode & 0o644, "\(indexMode) \(archiveMode)")

            // The same archive (its bytes and time) indexed by decoding it: the same index.
            #expect(try shell("mkdir copy && cp -p tree.tar.gz copy/", in: scratch).status == 0)
            let indexed = try gzstream(["index", "copy/tree.tar.gz"], in: scratch)
            #expect(indexed.status == 0 && indexed.err == "", "\(indexed)")
            let written = try scratch.read("tree.tar.gz.tarix")
            let rebuilt = try scratch.read("copy/tree.tar.gz.tarix")
            #expect(!written.isEmpty && written == rebuilt)

            let tar = try shell("tar -tzf tree.tar.gz", in: scratch)
            let listed = try gzstream(["list", "--members", "tree.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.out == tar.out && !tar.out.isEmpty && listed.err == "", "\(listed)")
            let json = try gzstream(["list", "--members", "--json", "tree.tar.gz"], in: scratch)
            let copyJSON = try gzstream(["list", "--members", "--json", "copy/tree.tar.gz"], in: scratch)
            #expect(json.status == 0 && json.err == "" && json.out == copyJSON.out && copyJSON.err == "", "\(json)")

            let numbers = try scratch.read("tree/sub/deeper/numbers")
            let member = try gzstream(["unpack", "-c", "tree.tar.gz", "tree/sub/deeper/numbers"], in: scratch)
            #expect(member.status == 0 && member.err == "" && member.stdout == numbers, "\(member.err)")
            // Extracting a member without its index says it read from the start; with it, nothing.
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let extracted = try gzstream(["unpack", "tree.tar.gz", "-C", "out", "tree/sub/deeper/numbers"], in: scratch)
            #expect(extracted.status == 0 && extracted.err == "", "\(extracted)")
            #expect(try scratch.read("out/tree/sub/deeper/numbers") == numbers)
            #expect(unlink(scratch.path("tree.tar.gz.tarix")) == 0)
            let unindexed = try gzstream(["unpack", "-f", "tree.tar.gz", "-C", "out", "tree/sub/deeper/numbers"], in: scratch)
            #expect(unindexed.status == 0 && unindexed.err.contains("read from the start, without a member index"), "\(unindexed)")
        }
    }

    @Test("-o NAME: NAME.tarix beside it; -p 1 and -p 2 give the same records and binding but the time")
    func explicitOutputAndThreads() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeTree + "\nmkdir a b", in: scratch).status == 0)
            for (threads, directory) in [("1", "a"), ("2", "b")] {
                let packed = try gzstream(["pack", "--tar", "--index", "-p", threads, "-o", "\(directory)/x.tgz", "tree"],
                                          in: scratch)
                #expect(packed.status == 0 && packed.err == "", "\(packed)")
                #expect(scratch.exists("\(directory)/x.tgz.gzidx") && scratch.exists("\(directory)/x.tgz.tarix"))
            }
            #expect(try scratch.read("a/x.tgz") == scratch.read("b/x.tgz"))
            let first = try TarIndex(decoding: scratch.read("a/x.tgz.tarix"), expecting: nil)
            var second = try TarIndex(decoding: scratch.read("b/x.tgz.tarix"), expecting: nil)
            #expect(first.entries.count == 10)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: scratch.path("a/x.tgz"))[.size] as? Int)
            #expect(first.binding.compressedSize == Int64(size))
            #expect(first.binding.compressedTail == Array(try scratch.read("a/x.tgz").suffix(8)))
            second.binding.modificationSeconds = first.binding.modificationSeconds
            second.binding.modificationNanoseconds = first.binding.modificationNanoseconds
            #expect(second == first)
            // Bound to each archive's own time: each one's list uses its own, silently.
            for directory in ["a", "b"] {
                let listed = try gzstream(["list", "--members", "\(directory)/x.tgz"], in: scratch)
                #expect(listed.status == 0 && listed.err == "" && listed.out.split(separator: "\n").count == 10, "\(listed)")
            }
        }
    }

    @Test("times with nanoseconds: the .tarix records the whole seconds the headers hold, as gzstream index reads them",
          arguments: [[], ["--bgzf"]])
    func subsecondTimes(options: [String]) throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeTree + "\ntouch -d @1600000000.25 tree/a.txt tree/sub", in: scratch).status == 0)
            let packed = try gzstream(["pack", "--tar", "--index", "-o", "x.tgz"] + options + ["tree"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            #expect(try shell("mkdir copy && cp -p x.tgz copy/", in: scratch).status == 0)
            let indexed = try gzstream(["index", "copy/x.tgz"], in: scratch)
            #expect(indexed.status == 0 && indexed.err == "", "\(indexed)")
            let written = try scratch.read("x.tgz.tarix")
            let rebuilt = try scratch.read("copy/x.tgz.tarix")
            #expect(!written.isEmpty && written == rebuilt)
        }
    }

    @Test("replacing an archive removes its old .tarix with its GZIDX; --index keeps the two it writes")
    func staleMemberIndexRemoved() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeTree, in: scratch).status == 0)
            let indexed = try gzstream(["pack", "--tar", "--index", "tree"], in: scratch)
            #expect(indexed.status == 0 && indexed.err == "", "\(indexed)")
            let replaced = try gzstream(["pack", "--tar", "-f", "tree"], in: scratch)
            #expect(replaced.status == 0 && replaced.err == "", "\(replaced)")
            #expect(try scratch.listing().filter { $0.hasPrefix("tree.") } == ["tree.tar.gz"])
            let reindexed = try gzstream(["pack", "--tar", "--index", "-f", "tree"], in: scratch)
            #expect(reindexed.status == 0 && reindexed.err == "", "\(reindexed)")
            #expect(try scratch.listing().filter { $0.hasPrefix("tree.") } == ["tree.tar.gz", "tree.tar.gz.gzidx", "tree.tar.gz.tarix"])
            let listed = try gzstream(["list", "--members", "tree.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.err == "" && listed.out.split(separator: "\n").count == 10, "\(listed)")
            // gzip mode over the archive, and unpack to its name, remove it too.
            #expect(try shell("cp tree.tar.gz t.tar && gzip -c tree.tar.gz > x.tar.gz.gz", in: scratch).status == 0)
            try scratch.write("t.tar.gz.tarix", "stale")
            try scratch.write("x.tar.gz.tarix", "stale")
            let gzipMode = try gzstream(["-f", "-k", "t.tar"], in: scratch)
            let unpacked = try gzstream(["unpack", "-k", "x.tar.gz.gz"], in: scratch)
            #expect(gzipMode.status == 0 && gzipMode.err == "" && unpacked.status == 0 && unpacked.err == "", "\(gzipMode) \(unpacked)")
            #expect(!scratch.exists("t.tar.gz.tarix") && !scratch.exists("x.tar.gz.tarix"))
        }
    }

    @Test("an existing .tarix is not replaced without -f (nor the archive written); -c is refused; --bgzf writes it beside the .gzi")
    func refusals() throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeTree, in: scratch).status == 0)
            try scratch.write("tree.tar.gz.tarix", "keep me")
            let refused = try gzstream(["pack", "--tar", "--index", "tree"], in: scratch)
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.err == "gzstream: tree.tar.gz.tarix: already exists; not overwritten (use -f to overwrite)\n")
            #expect(!scratch.exists("tree.tar.gz") && !scratch.exists("tree.tar.gz.gzidx"))
            #expect(try scratch.read("tree.tar.gz.tarix") == Array("keep me".utf8))
            let forced = try gzstream(["pack", "--tar", "--index", "-f", "tree"], in: scratch)
            #expect(forced.status == 0 && forced.err == "", "\(forced)")
            let listed = try gzstream(["list", "--members", "tree.tar.gz"], in: scratch)
            #expect(listed.status == 0 && listed.err == "" && listed.out.split(separator: "\n").count == 10, "\(listed)")

            let standardOutput = try gzstream(["pack", "--tar", "--index", "-c", "tree"], in: scratch)
            #expect(standardOutput.status == 1 && standardOutput.stdout.isEmpty)
            #expect(standardOutput.err == usageError("--index needs an output file (not standard output)"), "\(standardOutput)")

            let bgzf = try gzstream(["pack", "--tar", "--index", "--bgzf", "-o", "t.bgz", "tree"], in: scratch)
            #expect(bgzf.status == 0 && bgzf.err == "", "\(bgzf)")
            #expect(scratch.exists("t.bgz.gzi") && scratch.exists("t.bgz.tarix"))
        }
    }
}

import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The tar commands at the edges of their input: gzip data that is not a tar, and the -C
// destination as the user names it.

@Suite("gzstream's tar commands on input that is not a tar, and their destination", .onDedicatedThreads, .requires(.gzip))
struct TarInputCLITests {
    /// Gzip data whose plain bytes are not a tar: shorter than one 512-byte block, and longer.
    /// Named as tar archives, so that MEMBER names after them are members.
    static let makeNotTar = "printf 'hello\\n' | gzip -n > short.tar.gz && seq 1 1000 | gzip -n > long.tar.gz"

    @Test("list --members, unpack MEMBER, -c and --extract of data that is not a tar: one line, exit 1, nothing written",
          arguments: ["short.tar.gz", "long.tar.gz"])
    func notATarArchive(name: String) throws {
        try withScratch { scratch in
            #expect(try shell(Self.makeNotTar, in: scratch).status == 0)
            try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: false)
            let line = "gzstream: \(name): the data is not a tar archive (no tar header at byte 0)\n"
            for arguments in [["list", "--members", name], ["unpack", name, "-C", "out", "a.txt"],
                              ["unpack", "-c", name, "a.txt"], ["unpack", "--extract", name, "-C", "out"]] {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 1 && result.out == "" && result.err == line, "\(arguments): \(result)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).isEmpty)
        }
    }
}

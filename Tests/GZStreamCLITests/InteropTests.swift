import Foundation
import Testing
import TestSupport

/// A peer compressor and the arguments that make it write to standard output.
struct PeerCommand: Sendable, CustomTestStringConvertible {
    var tool: Tool
    var arguments: [String]
    var testDescription: String { ([tool.name] + arguments).joined(separator: " ") }

    /// The executable, for tests that are `.requires(tool)`.
    func executable() throws -> String {
        try #require(tool.path)
    }
}

@Suite("gzstream and other gzip tools", .onDedicatedThreads)
struct InteropTests {
    static let gzipPeers: [PeerCommand] = [
        PeerCommand(tool: .gzip, arguments: ["-c"]),
        PeerCommand(tool: .gzip, arguments: ["-9", "-c"]),
        PeerCommand(tool: .gzip, arguments: ["-1", "-n", "-c"]),
    ]
    static let pigzPeers: [PeerCommand] = [
        PeerCommand(tool: .pigz, arguments: ["-c"]),
        PeerCommand(tool: .pigz, arguments: ["-c", "-b", "32", "-p", "2"]),
        PeerCommand(tool: .pigz, arguments: ["-c", "-i", "-p", "2"]),
        PeerCommand(tool: .pigz, arguments: ["-c", "--rsyncable"]),
    ]
    static let bgzipPeers: [PeerCommand] = [
        PeerCommand(tool: .bgzip, arguments: ["-c"]),
        PeerCommand(tool: .bgzip, arguments: ["-c", "-l", "9", "-@", "2"]),
    ]

    static let input: [UInt8] = sampleText(byteCount: 600_000, seed: 11) + randomBytes(count: 100_000, seed: 12)

    @Test("unpack reads what GNU gzip writes, to standard output and to a file", .requires(.gzip), arguments: gzipPeers)
    func unpackGzipOutput(peer: PeerCommand) throws {
        try expectUnpacksOutput(of: peer)
    }

    @Test("unpack reads what pigz writes, to standard output and to a file", .requires(.pigz), arguments: pigzPeers)
    func unpackPigzOutput(peer: PeerCommand) throws {
        try expectUnpacksOutput(of: peer)
    }

    @Test("unpack reads what bgzip writes, to standard output and to a file", .requires(.bgzip), arguments: bgzipPeers)
    func unpackBgzipOutput(peer: PeerCommand) throws {
        try expectUnpacksOutput(of: peer)
    }

    private func expectUnpacksOutput(of peer: PeerCommand) throws {
        try withScratch { scratch in
            try scratch.write("peer.dat", Self.input)
            let made = try run(peer.executable(), peer.arguments + ["peer.dat"], in: scratch,
                               stdoutPath: scratch.path("peer.dat.gz"))
            #expect(made.status == 0, "\(peer.testDescription): \(made)")

            let piped = try gzstream(["unpack", "-c", "peer.dat.gz"], in: scratch)
            #expect(piped.status == 0 && piped.err == "", "\(piped)")
            #expect(piped.stdout == Self.input)

            try FileManager.default.removeItem(atPath: scratch.path("peer.dat"))
            let filed = try gzstream(["unpack", "peer.dat.gz"], in: scratch)
            #expect(filed.status == 0 && filed.err == "" && filed.out == "", "\(filed)")
            #expect(try scratch.listing() == ["peer.dat", "peer.dat.gz"])
            #expect(try scratch.read("peer.dat") == Self.input)
        }
    }

    @Test("unpack -N restores the name and time GNU gzip stored", .requires(.gzip))
    func unpackNameFromGzip() throws {
        try withScratch { scratch in
            let path = try scratch.write("from-gzip.txt", "stored by gzip\n")
            setModificationTime(path, seconds: 1_111_111_111)
            #expect(try run("/usr/bin/gzip", ["from-gzip.txt"], in: scratch).status == 0)
            try FileManager.default.moveItem(atPath: scratch.path("from-gzip.txt.gz"), toPath: scratch.path("other.gz"))
            let result = try gzstream(["unpack", "-N", "other.gz"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(try scratch.listing() == ["from-gzip.txt", "other.gz"])
            #expect(fileStatus(scratch.path("from-gzip.txt"))?.modificationSeconds == 1_111_111_111)
        }
    }

    @Test("members from different tools, concatenated, unpack to the concatenation",
          .requires(.gzip), .requires(.pigz), .requires(.bgzip))
    func mixedMembers() throws {
        try withScratch { scratch in
            var expected: [UInt8] = []
            var packed: [UInt8] = []
            for (index, peer) in (Self.gzipPeers + Self.pigzPeers + Self.bgzipPeers).enumerated() {
                let part = sampleText(byteCount: 3_000 + index * 1_000, seed: UInt64(20 + index))
                try scratch.write("part", part)
                let made = try run(peer.executable(), peer.arguments + ["part"], in: scratch)
                #expect(made.status == 0, "\(peer.testDescription): \(made)")
                expected += part
                packed += made.stdout
            }
            let ours = try gzstream(["pack", "-c", "part"], in: scratch)
            expected += try scratch.read("part")
            packed += ours.stdout
            try scratch.write("mixed.gz", packed)
            let result = try gzstream(["unpack", "-c", "mixed.gz"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(result)")
            #expect(result.stdout == expected)
            #expect(try gunzip(scratch.path("mixed.gz"), in: scratch) == expected)
        }
    }

    @Test("GNU gzip reads what pack writes", .requires(.gzip))
    func gzipReadsPackOutput() throws {
        try expectReadsPackOutput(PeerCommand(tool: .gzip, arguments: ["-dc"]))
    }

    @Test("pigz reads what pack writes", .requires(.pigz), .requires(.gzip))
    func pigzReadsPackOutput() throws {
        try expectReadsPackOutput(PeerCommand(tool: .pigz, arguments: ["-dc"]))
    }

    @Test("bgzip reads what pack writes", .requires(.bgzip), .requires(.gzip))
    func bgzipReadsPackOutput() throws {
        try expectReadsPackOutput(PeerCommand(tool: .bgzip, arguments: ["-dc"]))
    }

    /// `peer` decodes what `pack` writes, and `gzip -t` passes it.
    private func expectReadsPackOutput(_ peer: PeerCommand) throws {
        try withScratch { scratch in
            try scratch.write("ours", Self.input)
            let packed = try gzstream(["pack", "ours"], in: scratch)
            #expect(packed.status == 0 && packed.err == "", "\(packed)")
            let result = try run(peer.executable(), peer.arguments + ["ours.gz"], in: scratch)
            #expect(result.status == 0 && result.err == "", "\(peer.testDescription): \(result)")
            #expect(result.stdout == Self.input)
            let test = try run("/usr/bin/gzip", ["-t", "ours.gz"], in: scratch)
            #expect(test.status == 0 && test.err == "", "gzip -t: \(test)")
        }
    }
}

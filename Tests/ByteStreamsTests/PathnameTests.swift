import ByteStreams
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("Pathname", .onDedicatedThreads)
struct PathnameTests {
    /// `café` in ISO 8859-1: byte e9 alone is not UTF-8.
    static let latin1Name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)

    @Test("description: valid UTF-8 as it is, every other byte as \\ and three octal digits",
          arguments: [
              (Array("plain.txt".utf8), "plain.txt"),
              (Array("café.txt".utf8), "café.txt"),
              (latin1Name, #"caf\351.txt"#),
              ([0xE2, 0x82], #"\342\202"#),                  // a three-byte sequence cut short
              ([0xC0, 0xAF], #"\300\257"#),                  // an overlong `/`
              ([0xED, 0xA0, 0x80], #"\355\240\200"#),        // a UTF-16 surrogate
              ([0x01, 0xFF, 0x41], "\u{1}" + #"\377"# + "A"),  // control characters are left to the caller
          ])
    func description(bytes: [UInt8], shown: String) throws {
        let name = try #require(Pathname(bytes: bytes))
        #expect(name.bytes == bytes)
        #expect(name.description == shown)
    }

    @Test("Bytes with a NUL make no pathname; a String stops at its first NUL, as open(2) would")
    func nul() {
        #expect(Pathname(bytes: [0x61, 0x00, 0x62]) == nil)
        #expect(Pathname(bytes: []) == Pathname(""))
        #expect(Pathname("a\u{0}b").bytes == [0x61])
        #expect(Pathname("é").bytes == [0xC3, 0xA9])
        #expect(Pathname(stringLiteral: "x.gz") == Pathname("x.gz"))
        let fromC = "caf\u{E9}".withCString { Pathname(cString: $0) }
        #expect(fromC.bytes == Array("café".utf8))
        #expect(Pathname(bytes: Self.latin1Name)!.withCString { strlen($0) } == Self.latin1Name.count)
    }

    @Test("File streams write and read a file whose name is not UTF-8; errors show the name escaped")
    func fileStreams() throws {
        try withTemporaryDirectory { directory throws in
            let path = try #require(Pathname(bytes: Array(directory.path.utf8) + [0x2F] + Self.latin1Name))
            let output = FileOutputStream(path: path)
            try output.openOrThrow()
            try output.writeAll(Array("hello".utf8))
            try output.closeOrThrow()
            #expect(try FileInputStream(path: path).readToEnd() == Array("hello".utf8))
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(names.count == 1, "one file, under the name's own bytes")

            let missing = try #require(Pathname(bytes: path.bytes + [0xFF]))
            let input = FileInputStream(path: missing)
            input.open()
            let error = try #require(input.streamError as? ByteStreamError)
            #expect(error.errno == ENOENT)
            #expect(error.target == directory.path + #"/caf\351.txt\377"#)
            #expect(input.displayName == error.target)
        }
    }
}

import Foundation
import Testing
import TestSupport

/// One verdict, one wording: deflate data found invalid before the input ends is a data error,
/// not the end of the input, whichever inflater found it and whether or not the member can be
/// read again (as zlib and GNU gzip judge it). `fixtures/regressions/code-length-code-then-end.gz`
/// ends right after an invalid code-length code; put after 1.2 MB of stored blocks and read
/// from a pipe, the member cannot be decoded again by zlib, so ISA-L's verdict stands.
@Suite("A data error before the end of the input outranks the end", .onDedicatedThreads)
struct EndOfInputCLITests {
    static let data = randomBytes(count: 1_200_000, seed: 47)

    static func bigMember() throws -> [UInt8] {
        let small = try readBytes(Locations.fixtures.appendingPathComponent("regressions/code-length-code-then-end.gz").path)
        return memberWithStoredPrefix(small, data)
    }

    @Test("An invalid code-length code, then the end, past the first MiB of a member from a pipe: gzip mode's data error, unpack's zlib error")
    func invalidHeaderThenEnd() throws {
        let big = try Self.bigMember()
        try withScratch { scratch in
            let path = try scratch.write("data.gz", big)
            let out = scratch.ioPath("out")
            let gzipMode = try shell(#"cat "$1" | "$0" -dc > "$2""#, [path, out], in: scratch)
            #expect(gzipMode.status == 1, "\(gzipMode)")
            #expect(gzipMode.err == "\ngzstream: stdin: invalid compressed data--format violated\n")
            #expect(try readBytes(out) == Self.data)
            let tested = try shell(#"cat "$1" | "$0" -t"#, [path], in: scratch)
            #expect(tested.status == 1 && tested.err == gzipMode.err, "\(tested)")
            let unpacked = try shell(#"cat "$1" | "$0" unpack -c > "$2""#, [path, out], in: scratch)
            #expect(unpacked.status == 1, "\(unpacked)")
            #expect(unpacked.err
                == "gzstream: standard input: invalid deflate data in member 1 at byte \(big.count): invalid code lengths set\n")
            #expect(try readBytes(out) == Self.data)
        }
    }

    @Test("GNU gzip gives the same words for the same file, with -t and from a pipe", .requires(.gzip))
    func gzipAgrees() throws {
        let big = try Self.bigMember()
        try withScratch { scratch in
            let path = try scratch.write("data.gz", big)
            let gzipTest = try run("/bin/sh", ["-c", #"gzip -t "$0""#, path], in: scratch)
            #expect(gzipTest.status == 1 && gzipTest.err == "\ngzip: \(path): invalid compressed data--format violated\n",
                    "\(gzipTest)")
            let ours = try gzstream(["-t", path], in: scratch)
            #expect(ours.status == 1 && ours.err == "\ngzstream: \(path): invalid compressed data--format violated\n")
            let gzipPipe = try shell(#"cat "$1" | gzip -dc > /dev/null"#, [path], in: scratch)
            let oursPipe = try shell(#"cat "$1" | "$0" -dc > /dev/null"#, [path], in: scratch)
            #expect(gzipPipe.status == 1 && oursPipe.status == 1)
            #expect(oursPipe.err == gzipPipe.err.replacingOccurrences(of: "gzip: ", with: "gzstream: "))
        }
    }
}

import ByteStreams
@testable import GZStreamCLI
import Testing

// What a run gets once the command line parses: the options every command takes, and the
// command's own value holding only what that command takes (CommandOptions.swift). Parsed in
// this process; what the options then do is checked end to end by each command's suite.

/// The typed value `arguments` parse to, called `programName`.
private func invocation(_ arguments: [String], programName: Pathname = "gzstream") throws -> Invocation {
    let parsed = try parseCommandLine(arguments.map { Array($0.utf8) }, programName: programName)
    guard case .run(let invocation) = parsed else {
        Issue.record("\(arguments) parsed to \(parsed), not a run")
        throw UsageError(message: "not a run")
    }
    return invocation
}

@Suite("The options a run gets: a common set and one value per command")
struct CommandOptionsTests {
    @Test("index gets -o and --span, and the common options")
    func index() throws {
        let run = try invocation(["index", "-f", "--span", "64", "-o", "data.idx", "data.gz"])
        #expect(run.command == .index(IndexOptions(outputPath: "data.idx", span: 64 << 10)))
        #expect(run.common.files == ["data.gz"] && run.common.force && run.gzip == nil)
        #expect(run.mode == .index)
    }

    @Test("unpack's range, output and decode options")
    func unpack() throws {
        let run = try invocation(["unpack", "--offset", "10", "--strict", "-c", "data.gz"])
        let expected = UnpackOptions(output: OutputOptions(toStandardOutput: true),
                                     decode: DecodeOptions(strict: true), range: PlainRange(offset: 10))
        #expect(run.command == .unpack(expected))
        #expect(run.command.pack == nil && run.command.indexPath == nil)
    }

    @Test("pack's own options; pack --index writes an index beside its output")
    func pack() throws {
        let run = try invocation(["pack", "--bgzf", "--index", "-r", "--no-progress", "dir"])
        let expected = PackOptions(recursive: true, progress: false, bgzf: true, writeIndex: true)
        #expect(run.command == .pack(expected))
        #expect(run.command.pack?.indexSuffix == ".gzi" && run.command.decode == nil)
    }

    @Test("test and list hold no output options")
    func testAndList() throws {
        #expect(try invocation(["test", "--index", "data.idx", "data.gz"]).command
            == .test(TestOptions(indexPath: "data.idx")))
        let list = try invocation(["list", "--json", "--max-output", "1K", "data.gz"]).command
        #expect(list == .list(ListOptions(decode: DecodeOptions(maximumOutputSize: 1024), json: true)))
        #expect(list.output == nil && list.outputPath == nil)
    }

    @Test("send and receive carry pack's and unpack's options and the connection's")
    func network() throws {
        let sendAddress = try NetworkAddress(parsing: "127.0.0.1:8734", for: .send)
        let receiveAddress = try NetworkAddress(parsing: "8734", for: .receive)
        let send = try invocation(["send", "--bgzf", "--timeout", "5", "127.0.0.1:8734", "data"])
        #expect(send.command == .send(PackOptions(bgzf: true),
                                      ConnectionOptions(address: sendAddress,
                                                        timeout: .seconds(5))))
        #expect(send.common.files == ["data"] && send.mode == .pack)
        // Without -o, receive writes to standard output, as unpack -c.
        let receive = try invocation(["receive", "--key-file", "key", "8734"])
        #expect(receive.command == .receive(UnpackOptions(output: OutputOptions(toStandardOutput: true)),
                                            ConnectionOptions(address: receiveAddress,
                                                              keyFile: "key")))
        #expect(receive.common.files.isEmpty && receive.mode == .unpack)
    }

    @Test("gzip mode: the command comes from -d, -t and -l, and the options only pack takes are dropped")
    func gzipMode() throws {
        let unpack = try invocation(["-d", "--rsyncable", "-b", "64", "data.gz"])
        #expect(unpack.command == .unpack(UnpackOptions(output: OutputOptions(removeInput: true))))
        #expect(unpack.gzip != nil)
        #expect(try invocation(["-t", "data.gz"], programName: "zcat").command == .test(TestOptions()))
        #expect(try invocation(["data"], programName: "gzip").command
            == .pack(PackOptions(output: OutputOptions(removeInput: true))))
    }
}

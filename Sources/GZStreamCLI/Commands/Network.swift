import ByteStreams
import GzipStreams
import StreamCache

/// `send` and `receive`: pack onto one TCP connection, or unpack what one connection brings.
/// Both run pack's and unpack's own pipeline (``Command/transform(_:inputPath:inputInfo:into:outputName:closesOutput:)``),
/// and receive writes through unpack's outputs (standard output, or `-o` with its temporary
/// file, no-clobber and `-f`).
enum NetworkCommand: String, Equatable {
    case send, receive
}

/// A TCP endpoint as the command line names it: `HOST:PORT`, `[IPV6]:PORT`, or, for receive,
/// `PORT` alone on the default host.
struct NetworkAddress: Equatable, CustomStringConvertible {
    /// A name, or an IPv4 or IPv6 literal (without brackets).
    var host: String
    var port: Int

    /// The host receive listens on when only a port is given: loopback, so that nothing is
    /// reachable from elsewhere unless asked for.
    static let defaultListeningHost = "127.0.0.1"

    /// `host:port`, with brackets around an IPv6 literal (as ByteStreams names peers).
    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Parses `text` for `command`: send needs `HOST:PORT` with a port of 1 to 65535; receive
    /// also takes `PORT` alone, and port 0 (any free port).
    init(parsing text: String, for command: NetworkCommand) throws(UsageError) {
        let listens = command == .receive
        let form = listens ? "[HOST:]PORT" : "HOST:PORT"
        let portRange = listens ? 0...65535 : 1...65535
        func bad(_ why: String) -> UsageError {
            UsageError(message: "\(command.rawValue) needs \(form), not '\(text)': \(why)")
        }
        var hostPart: Substring?
        var portPart = Substring(text)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw bad("no ']' after the IPv6 address") }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.first == ":" else { throw bad("no ':PORT' after ']'") }
            portPart = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            if hostPart?.contains(":") == true { throw bad("an IPv6 address goes in brackets, as [::1]:8734") }
        } else if !listens {
            throw bad("no ':PORT'")
        }
        if let hostPart, hostPart.isEmpty { throw bad("the host is empty") }
        guard !portPart.isEmpty, portPart.allSatisfy(\.isASCII), portPart.allSatisfy(\.isNumber),
              let port = Int(portPart), portRange.contains(port)
        else {
            throw bad("the port must be \(portRange.lowerBound) to \(portRange.upperBound)")
        }
        host = hostPart.map(String.init) ?? Self.defaultListeningHost
        self.port = port
    }
}

extension Command {
    /// Runs send or receive (`body`) over `connection` and reports its failure, as
    /// ``handle(_:)`` does for a file.
    func runOverNetwork(_ connection: ConnectionOptions, _ body: () throws -> ExitStatus) -> ExitStatus {
        do {
            return try body()
        } catch let reported as Reported {
            return reported.status
        } catch {
            return reportError(connection.address.description, describe(error))
        }
    }

    /// `send HOST:PORT [FILE]`: connects, packs FILE (standard input for none or `-`) onto the
    /// connection (encrypted under the session's data key with `--key-file`, once receive's
    /// challenge has come), half-closes it, then waits for receive's acknowledgement
    /// (``TransferProtocol``): exit 0 means a gzstream receive read, checked and wrote
    /// everything sent. A peer that closes or resets without acknowledging (one that never
    /// reads, a receive that failed, or a receiver that is not gzstream, such as `nc -l`) is an
    /// error: nothing confirms the data arrived. `channel` holds the endpoint, the limits and the key.
    func send(over channel: ConnectionOptions) throws -> ExitStatus {
        let address = channel.address
        // A key file that cannot be used is reported before anyone is connected to.
        let key = try channel.keyFile.map { try loadKeyFile($0, diagnostics: diagnostics) }
        let operand = common.files.first ?? "-"
        // A FILE that cannot be read is reported before anyone is connected to; it is opened
        // once and read through that descriptor.
        let opened = operand == "-" ? nil : try openInput(operand)
        let info = opened?.info
        // A FIFO waits here for its writer, not a connected peer.
        let input: ByteInputStream
        if let opened {
            do {
                input = try opened.stream()
                try input.openOrThrow()
            } catch {
                throw Reported(status: reportError(displayName(operand), describe(error)))
            }
        } else {
            input = environment.standardInput
        }
        let deadline = channel.deadline.map { TransferDeadline(instant: .now + $0.duration, text: $0.text) }
        let connection: (input: ByteInputStream, output: ByteOutputStream)
        do {
            connection = try SocketStreams.connect(host: address.host, port: address.port,
                                                   timeout: [channel.timeout, channel.deadline?.duration].compactMap { $0 }.min(),
                                                   idleTimeout: channel.idleTimeout)
        } catch {
            throw Reported(status: reportError(address.description, describe(error)))
        }
        let peer = address.description
        let reader = ConnectionInputStream(connection.input, peer: peer, deadline: deadline)
        let writer = ConnectionOutputStream(connection.output, peer: peer, deadline: deadline)
        defer {
            reader.close()
            writer.close()
        }
        func fail(_ problem: String) -> Reported { Reported(status: reportError(peer, problem)) }
        var sessionKeys: (data: SecretStreamKey, ack: SecretStreamKey)?
        do {
            try writer.openOrThrow()
            try reader.openOrThrow()
            if let key {
                // The marker makes a receive without a key fail at once rather than wait.
                try writer.writeAll(TransferProtocol.keyedMarker)
                // The data key depends on receive's challenge: no data is sent before it comes.
                let hello = try reader.read(upTo: TransferProtocol.helloByteCount)
                guard let (mode, challenge) = TransferProtocol.parseHello(hello) else {
                    throw fail(hello.isEmpty ? "no challenge: the peer closed the connection (is it gzstream receive --key-file?)"
                                             : "not gzstream receive: unexpected reply")
                }
                guard mode == .keyed else { throw fail("the receiver has no key: give receive --key-file too") }
                sessionKeys = try TransferProtocol.sessionKeys(key, challenge: challenge)
            }
        } catch let reported as Reported {
            throw reported
        } catch {
            throw fail(describe(error))
        }
        let sink: ByteOutputStream = try sessionKeys.map {
            try EncryptingOutputStream(wrapping: writer, key: $0.data, chunkSize: TransferProtocol.wireChunkSize)
        } ?? writer
        // transform takes an EPIPE on an output of this name for a closed standard output, to
        // end quietly; a peer that went away is an error, so the name is one no error carries.
        let outcome = try transform(input, inputPath: operand, inputInfo: info, into: sink,
                                    outputName: "connection to \(peer)", closesOutput: true)
        do {
            try awaitAcknowledgement(from: reader, sent: writer, ackKey: sessionKeys?.ack, fail: fail)
        } catch let reported as Reported {
            throw reported
        } catch {
            throw fail(describe(error))
        }
        report(outcome, inputName: displayName(operand), outputName: peer)
        return outcome.status
    }


    /// Reads receive's acknowledgement and checks that it covers every byte of `sent` (and,
    /// keyed, that it was made with the key, for this stream's header). A plain send may meet
    /// a keyed receive's hello instead, which it had not waited for.
    /// - Throws: ``Reported`` for a missing or wrong acknowledgement; the connection's errors.
    private func awaitAcknowledgement(from reader: ConnectionInputStream, sent writer: ConnectionOutputStream,
                                      ackKey: SecretStreamKey?, fail: (String) -> Reported) throws {
        let noAcknowledgement = "no acknowledgement: the peer closed the connection without confirming that it read "
            + "and checked everything (it failed, or it is not gzstream receive)"
        let magic = try reader.read(upTo: TransferProtocol.ackMagic.count)
        if magic.isEmpty { throw fail(noAcknowledgement) }
        if ackKey == nil, magic == TransferProtocol.helloMagic {
            throw fail("the receiver expects an encrypted stream: give send --key-file too")
        }
        guard magic == TransferProtocol.ackMagic else { throw fail("not gzstream receive: unexpected reply") }
        let tagCount = ackKey == nil ? 0 : SecretStreamKey.tagByteCount
        let rest = try reader.read(upTo: TransferProtocol.plainAckByteCount - magic.count + tagCount)
        guard rest.count == TransferProtocol.plainAckByteCount - magic.count + tagCount else { throw fail(noAcknowledgement) }
        let body = magic + rest.prefix(8)
        if let ackKey, !ackKey.verifiesTag(Array(rest.dropFirst(8)), for: body + writer.tally.head) {
            throw fail("the acknowledgement is not authentic (made without the key, or for another stream)")
        }
        let count = rest.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard count == writer.tally.byteCount else {
            throw fail("the receiver acknowledged \(count) bytes, not the \(writer.tally.byteCount) sent")
        }
    }

    /// `receive [HOST:]PORT [-o FILE]`: listens, says where when the port was 0 (or with
    /// `-v`), accepts one connection and unpacks it as unpack unpacks standard input (with
    /// `--key-file`, after sending its hello with a fresh challenge and checking the sender's
    /// marker, decrypting and authenticating each chunk first); once the data is checked to its end and written, it sends the
    /// acknowledgement (``TransferProtocol``). When the run fails, the connection is reset
    /// rather than closed, and no acknowledgement is sent, so a sender fails too.
    /// - Parameters:
    ///   - channel: The endpoint, the limits and the key.
    ///   - output: Where the data goes: `-o FILE`, else standard output.
    func receive(over channel: ConnectionOptions, output: OutputOptions) throws -> ExitStatus {
        let address = channel.address
        if let outputPath = output.outputPath { try refuseOutputBeforeListening(outputPath) }
        let key = try channel.keyFile.map { try loadKeyFile($0, diagnostics: diagnostics) }
        let listener: SocketListener
        do {
            listener = try SocketListener(host: address.host, port: address.port, backlog: 1)
        } catch {
            throw Reported(status: reportError(address.description, describe(error)))
        }
        defer { try? listener.close() }
        if address.port == 0 || common.verbose {
            // Even under -q: with port 0 this line is the only way to learn the port.
            diagnostics.write("\(diagnostics.programName): listening on \(escapingControlCharacters(listener.displayName))\n")
        }
        if key == nil, !isLoopback(listener.displayName) {
            diagnostics.warning(listener.displayName,
                                "warning: no --key-file: anyone who can connect may send the data received")
        }
        let connection: (input: ByteInputStream, output: ByteOutputStream)
        do {
            connection = try listener.accept(timeout: channel.timeout, idleTimeout: channel.idleTimeout)
        } catch {
            throw Reported(status: reportError(listener.displayName, describe(error)))
        }
        try? listener.close()  // one connection only: later ones are refused
        let deadline = channel.deadline.map { TransferDeadline(instant: .now + $0.duration, text: $0.text) }
        // Reset unless cleared on success: also when a signal ends the process mid-transfer
        // (the kernel closes the socket), so a sender waiting for the close never exits 0.
        (connection.output as? SocketOutputStream)?.resetsOnClose = true
        let peerName = (connection.input as? SocketInputStream)?.displayName ?? address.description
        let reader = ConnectionInputStream(connection.input, peer: peerName, deadline: deadline)
        let writer = ConnectionOutputStream(connection.output, peer: peerName, deadline: deadline)
        var succeeded = false
        defer {
            (connection.output as? SocketOutputStream)?.resetsOnClose = !succeeded
            reader.close()
            writer.close()
        }
        let peer = Pathname(peerName)
        var sessionKeys: (data: SecretStreamKey, ack: SecretStreamKey)?
        do {
            try writer.openOrThrow()
            try reader.openOrThrow()
            if let key {
                let challenge = try secureRandomBytes(count: TransferProtocol.challengeByteCount)
                try writer.writeAll(TransferProtocol.hello(mode: .keyed, challenge: challenge))
                guard try reader.read(upTo: TransferProtocol.keyedMarker.count) == TransferProtocol.keyedMarker else {
                    throw Reported(status: reportError(peerName, "not an encrypted stream: give send --key-file too"))
                }
                sessionKeys = try TransferProtocol.sessionKeys(key, challenge: challenge)
            }
        } catch let reported as Reported {
            throw reported
        } catch {
            throw Reported(status: reportError(peerName, describe(error)))
        }
        let source: ByteInputStream
        if let sessionKeys {
            source = try DecryptingInputStream(wrapping: reader, key: sessionKeys.data,
                                               maximumChunkSize: TransferProtocol.wireChunkSize)
        } else {
            // A keyed send's marker is told apart here: found by unpack, its read-ahead would
            // wait for more from a sender that waits for a hello.
            let peeked = try PeekingInputStream(peeking: reader, length: TransferProtocol.keyedMarker.count)
            if peeked.peekedBytes == TransferProtocol.keyedMarker {
                throw Reported(status: reportError(peerName, "the sender uses --key-file: give receive --key-file too"))
            }
            source = peeked
        }
        let status: ExitStatus
        if let outputPath = output.outputPath {
            status = try toFile(input: source, inputPath: peer, inputInfo: nil, outputPath: outputPath)
        } else {
            status = try toStandardOutput(input: source, inputPath: peer, inputInfo: nil)
        }
        succeeded = status != .error
        if succeeded {
            // The output is in place: the data is the receiver's whether or not the sender
            // hears of it, so a failure to acknowledge fails only the sender.
            let ack = TransferProtocol.acknowledgement(count: reader.tally.byteCount, head: reader.tally.head, ackKey: sessionKeys?.ack)
            try? writer.writeAll(ack)
        }
        return status
    }

    /// Refuses `-o` before listening when unpack would refuse it after reading (a directory, an
    /// existing file without `-f`, or a directory where no file can be made), so that no sender
    /// is accepted only to be turned away.
    /// Devices, FIFOs and descriptors are written into, as by unpack; ``toFile(input:inputPath:inputInfo:outputPath:)``
    /// checks again once the data is there.
    private func refuseOutputBeforeListening(_ outputPath: Pathname) throws {
        if outputDirectory != nil {
            throw Reported(status: reportError(outputPath.description,
                                               "is a directory: receive writes one file (give -o DIRECTORY/NAME)"))
        }
        guard processDescriptor(named: outputPath) == nil else { return }
        let existing = FileInfo(path: outputPath)
        if !common.force, existing?.isRegularFile == true || (existing == nil && FileInfo.isSymbolicLink(outputPath)) {
            throw Reported(status: refuseExisting(outputPath.description))
        }
        // A file goes through a temporary file beside it: make (and remove) one now, so that a
        // missing or read-only directory is found before a sender is accepted.
        if existing == nil || existing?.isRegularFile == true {
            try temporaryFile(besides: outputPath, shownAs: outputPath).discard()
        }
    }
}

extension ConnectionOptions {
    /// The longest wait of one read or write on the connection: `--timeout`, else `--deadline`
    /// (so that a write takes what fits and the deadline is checked between writes), else none.
    var idleTimeout: Duration? { timeout ?? deadline?.duration }
}

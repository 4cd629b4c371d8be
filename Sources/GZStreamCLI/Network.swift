import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `send` and `receive`: pack onto one TCP connection, or unpack what one connection brings.
/// Both run pack's and unpack's own pipeline (``Command/transform(_:inputPath:inputInfo:into:outputName:closesOutput:)``),
/// and receive writes through unpack's outputs (standard output, or `-o` with its temporary
/// file, no-clobber and `-f`).
enum NetworkCommand: String, Equatable {
    case send, receive
}

/// A send or receive run: the command and its endpoint.
struct NetworkRun: Equatable {
    var command: NetworkCommand
    var address: NetworkAddress
}

/// A TCP endpoint as the command line names it: `HOST:PORT`, `[IPV6]:PORT`, or, for receive,
/// `PORT` alone on the default host.
struct NetworkAddress: Equatable, CustomStringConvertible {
    /// A name, or an IPv4 or IPv6 literal (without brackets).
    var host: String
    var port: UInt16

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
        self.port = UInt16(port)
    }
}

/// The longest `--timeout`: a year, far past any wait a user means, and well inside `Duration`.
let maximumTimeoutSeconds = 365.0 * 24 * 3600

/// `--timeout SECONDS`: more than 0, fractions allowed (`0.5`).
func parseTimeout(_ text: String) throws(UsageError) -> Duration {
    guard let seconds = Double(text), seconds > 0, seconds <= maximumTimeoutSeconds else {
        throw UsageError(message: "--timeout takes seconds, more than 0 (such as 30 or 0.5), not '\(text)'")
    }
    return .seconds(seconds)
}

/// Takes send's `HOST:PORT` or receive's `[HOST:]PORT` from the operands and refuses the
/// options that do not apply; run on the options as parsed, before the general checks.
/// `keepOrRemoveGiven`: whether `-k`, `--keep` or `--rm` was given.
func takeNetworkOperands(_ options: inout Options, for command: NetworkCommand,
                         keepOrRemoveGiven: Bool) throws(UsageError) {
    guard let first = options.files.first else {
        throw UsageError(message: command == .send ? "send needs HOST:PORT" : "receive needs [HOST:]PORT")
    }
    options.network = NetworkRun(command: command, address: try NetworkAddress(parsing: first.description, for: command))
    options.files.removeFirst()
    switch command {
    case .send:
        if options.files.count > 1 { throw UsageError(message: "send takes one FILE at most") }
        if options.outputPath != nil || options.toStandardOutput || options.recursive || options.suffix != nil
            || keepOrRemoveGiven || options.force || options.index {
            throw UsageError(message: "send writes to its connection: -c, -o, -r, -S, -f, -k, --rm and --index do not apply")
        }
    case .receive:
        if !options.files.isEmpty { throw UsageError(message: "receive takes no FILE (write one with -o FILE)") }
        if options.recursive || options.suffix != nil || keepOrRemoveGiven
            || options.useName == true || options.rangeOffset != nil || options.rangeLength != nil {
            throw UsageError(message: "receive reads one connection: -r, -S, -k, --rm, -N, --offset and --length do not apply")
        }
        // Without -o the output is standard output, as unpack -c.
        if options.outputPath == nil { options.toStandardOutput = true }
    }
}

extension Command {
    /// Runs send or receive and reports its failure, as ``handle(_:)`` does for a file.
    func runOverNetwork(_ run: NetworkRun) -> ExitStatus {
        do {
            switch run.command {
            case .send: return try send(to: run.address)
            case .receive: return try receive(on: run.address)
            }
        } catch let reported as Reported {
            return reported.status
        } catch {
            return reportError(run.address.description, describe(error))
        }
    }

    /// `send HOST:PORT [FILE]`: connects, packs FILE (standard input for none or `-`) onto the
    /// connection, half-closes it, then reads until the peer closes, so that success means the
    /// peer read everything to the end of the stream. What the peer sends back is discarded.
    private func send(to address: NetworkAddress) throws -> ExitStatus {
        let operand = options.files.first ?? "-"
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
        let connection: (input: ByteInputStream, output: ByteOutputStream)
        do {
            connection = try SocketStreams.connect(host: address.host, port: address.port, timeout: options.timeout,
                                                   idleTimeout: options.timeout)
        } catch {
            throw Reported(status: reportError(address.description, describe(error)))
        }
        defer {
            connection.input.close()
            connection.output.close()
        }
        let peer = address.description
        try connection.output.openOrThrow()
        let outcome = try transform(input, inputPath: operand, inputInfo: info, into: connection.output,
                                    outputName: peer, closesOutput: true)
        do {
            try connection.input.openOrThrow()
            try discardToEnd(connection.input)
        } catch {
            throw Reported(status: reportError(peer, describe(error)))
        }
        report(outcome, inputName: displayName(operand), outputName: peer)
        return outcome.status
    }

    /// Reads `input` to its end and drops the bytes.
    private func discardToEnd(_ input: ByteInputStream) throws {
        var scratch = [UInt8](repeating: 0, count: ByteStream.defaultChunkSize)
        while try scratch.withUnsafeMutableBufferPointer({ buffer in
            let count = input.read(buffer.baseAddress!, maxLength: buffer.count)
            if count < 0 { throw input.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read") }
            return count
        }) > 0 {}
    }

    /// `receive [HOST:]PORT [-o FILE]`: listens, says where when the port was 0 (or with
    /// `-v`), accepts one connection and unpacks it as unpack unpacks standard input. When the
    /// run fails, the connection is reset rather than closed, so that a sender still waiting
    /// for it to close fails too.
    private func receive(on address: NetworkAddress) throws -> ExitStatus {
        if let outputPath = options.outputPath { try refuseOutputBeforeListening(outputPath) }
        let listener: SocketListener
        do {
            listener = try SocketListener(host: address.host, port: address.port, backlog: 1)
        } catch {
            throw Reported(status: reportError(address.description, describe(error)))
        }
        defer { try? listener.close() }
        if address.port == 0 || options.verbose {
            // Even under -q: with port 0 this line is the only way to learn the port.
            diagnostics.write("gzstream: listening on \(escapingControlCharacters(listener.displayName))\n")
        }
        let connection: (input: ByteInputStream, output: ByteOutputStream)
        do {
            connection = try listener.accept(timeout: options.timeout, idleTimeout: options.timeout)
        } catch {
            throw Reported(status: reportError(listener.displayName, describe(error)))
        }
        try? listener.close()  // one connection only: later ones are refused
        // Reset unless cleared on success: also when a signal ends the process mid-transfer
        // (the kernel closes the socket), so a sender waiting for the close never exits 0.
        (connection.output as? SocketOutputStream)?.resetsOnClose = true
        var succeeded = false
        defer {
            (connection.output as? SocketOutputStream)?.resetsOnClose = !succeeded
            connection.input.close()
            connection.output.close()
        }
        let peer = Pathname((connection.input as? SocketInputStream)?.displayName ?? address.description)
        let status: ExitStatus
        if let outputPath = options.outputPath {
            status = try toFile(input: connection.input, inputPath: peer, inputInfo: nil, outputPath: outputPath)
        } else {
            status = try toStandardOutput(input: connection.input, inputPath: peer, inputInfo: nil)
        }
        succeeded = status != .error
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
        if !options.force, existing?.isRegularFile == true || (existing == nil && FileInfo.isSymbolicLink(outputPath)) {
            throw Reported(status: refuseExisting(outputPath.description))
        }
        // A file goes through a temporary file beside it: make (and remove) one now, so that a
        // missing or read-only directory is found before a sender is accepted.
        if existing == nil || existing?.isRegularFile == true {
            try temporaryFile(besides: outputPath, shownAs: outputPath).discard()
        }
    }
}

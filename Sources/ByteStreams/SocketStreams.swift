#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// The one connected socket behind a ``SocketInputStream`` and ``SocketOutputStream`` pair.
/// Closing the output half-closes the socket (`shutdown(SHUT_WR)`); the descriptor is closed
/// when both streams are closed, or when both are dropped.
///
/// The two streams may be used from two threads (one reading, one writing): a ``QueueGuarded``
/// holds which halves are closed. Reads and writes use the immutable `descriptor`, which is
/// closed only after both streams have stopped using it.
final class SharedSocket: Sendable {
    let displayName: String
    let descriptor: Int32
    /// The longest wait for one read or write to move a byte; `nil` waits as long as it takes.
    let idleTimeout: Duration?

    private struct Halves: Sendable {
        var inputOpen = true
        var outputOpen = true
        var descriptorOpen = true
        /// Set once either stream meets `ECONNRESET`: the kernel reports a reset to one call
        /// only, and the other half would then read a clean end (0) of a connection that was cut.
        var reset = false

        /// `true` once, when both halves are closed.
        mutating func takeDescriptorIfDone() -> Bool {
            guard !inputOpen, !outputOpen, descriptorOpen else { return false }
            descriptorOpen = false
            return true
        }
    }

    private let halves = QueueGuarded(Halves(), label: "gzstream.socket.state")

    init(descriptor: Int32, displayName: String, idleTimeout: Duration?) {
        self.descriptor = descriptor
        self.displayName = displayName
        self.idleTimeout = idleTimeout
    }

    deinit {
        if halves.withLock({ $0.descriptorOpen }) { try? SystemCalls.close(descriptor, target: displayName) }
    }

    /// The descriptor while either stream is open, `-1` after.
    var currentDescriptor: Int32 {
        halves.withLock { $0.descriptorOpen ? descriptor : -1 }
    }

    /// The local address while either stream is open (the descriptor cannot close meanwhile).
    var localName: String? {
        halves.withLock {
            $0.descriptorOpen ? (try? SystemCalls.localAddress(descriptor, target: displayName))?.description : nil
        }
    }

    /// Runs one read or write, remembering a reset for the other half; a read that finds the
    /// end (0) after a reset throws the reset instead.
    func transfer(reading: Bool, _ body: () throws -> Int) throws -> Int {
        let count: Int
        do {
            count = try body()
        } catch let error as ByteStreamError where error.errno == ECONNRESET {
            halves.withLock { $0.reset = true }
            throw error
        }
        // A write that took nothing (a full buffer, scheduled) is not an end.
        if reading, count == 0, halves.withLock({ $0.reset }) {
            throw ByteStreamError(.system(errno: ECONNRESET), operation: "read", target: displayName)
        }
        return count
    }

    func closeInput() throws {
        let last: Bool = halves.withLock { halves in
            guard halves.inputOpen else { return false }
            halves.inputOpen = false
            return halves.takeDescriptorIfDone()
        }
        if last { try SystemCalls.close(descriptor, target: displayName) }
    }

    /// Ends the sending direction: with `reset`, the connection is reset when the descriptor
    /// closes instead of ended in order (see ``SocketOutputStream/resetsOnClose``).
    func closeOutput(reset: Bool) throws {
        let (first, last): (Bool, Bool) = halves.withLock { halves in
            guard halves.outputOpen else { return (false, false) }
            halves.outputOpen = false
            return (true, halves.takeDescriptorIfDone())
        }
        guard first else { return }
        var failure: (any Error)?
        do {
            if reset {
                try SystemCalls.resetOnClose(descriptor, target: displayName)
            } else {
                try SystemCalls.shutdownWrite(descriptor, target: displayName)
            }
        } catch {
            failure = error
        }
        if last {
            do { try SystemCalls.close(descriptor, target: displayName) } catch { if failure == nil { failure = error } }
        }
        if let failure { throw failure }
    }
}

/// Reads the bytes a TCP peer sends. Made in pairs with a ``SocketOutputStream`` by
/// ``SocketStreams/connect(host:port:timeout:idleTimeout:)`` and
/// ``SocketListener/accept(timeout:idleTimeout:)``, or held by a ``SocketConnection`` of
/// ``SocketListener/connections``; the streams come unopened, as in Cocoa, and
/// ``ByteStream/open()`` does no I/O (the socket is connected).
///
/// Ownership: the pair owns the socket. Closing this stream leaves the connection open for the
/// output stream; the descriptor is closed when both streams are closed (or dropped).
///
/// Reads block until the peer sends at least one byte or ends its direction (`0`, end of
/// stream), or, with an ``idleTimeout``, fail with `ETIMEDOUT` once no byte came for that long.
/// Scheduled, the stream is driven by readiness instead
/// (``ByteStream/schedule(on:)-(DispatchQueue)``): "has bytes available" comes when the peer
/// has sent bytes or ended, a read never blocks (0 with the status left `.open` when nothing
/// has come), and a reset connection is ``ByteStream/Event/errorOccurred`` (`ECONNRESET`).
/// A reset that the output stream met first is this stream's error too: its next read that
/// would return the end fails with `ECONNRESET` instead. In Swift concurrency,
/// ``ByteInputStream/read(into:isolation:)`` suspends the task until bytes come instead of
/// blocking (``ByteOutputStream/write(contentsOf:isolation:)`` for the output stream).
/// Thread safety: one thread may read this stream while another writes its output
/// partner. The corresponding C functions are `recv(2)`, `read(2)`, `poll(2)` and `close(2)`.
public final class SocketInputStream: ByteInputStream {
    private let socket: SharedSocket

    init(socket: SharedSocket) {
        self.socket = socket
        super.init()
    }

    /// The peer, `host:port` (`[::1]:8080` for IPv6), as errors name it.
    public var displayName: String { socket.displayName }

    /// The socket's descriptor, shared with the output stream; `-1` once both are closed.
    public var fileDescriptor: Int32 { socket.currentDescriptor }

    /// This side of the connection, `host:port` (`127.0.0.1:54321`), as the peer's errors name
    /// it; `nil` once the socket is closed. The corresponding C function is `getsockname(2)`.
    public var localName: String? { socket.localName }

    /// The longest a read waits for a byte before it fails with `ETIMEDOUT`, shared with the
    /// output stream; `nil` waits as long as it takes. Set when the pair is made.
    public var idleTimeout: Duration? { socket.idleTimeout }

    override public func closeBacking() throws {
        try socket.closeInput()
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        try socket.transfer(reading: true) {
            if descriptorReadiness != nil {
                return try readDescriptor(socket.descriptor, into: buffer, maxLength: maxLength,
                                          displayName: socket.displayName)
            }
            return try SystemCalls.receive(socket.descriptor, buffer, maxLength, idleTimeout: socket.idleTimeout,
                                           target: socket.displayName)
        }
    }

    override var readinessDescriptor: (descriptor: Int32, displayName: String)? {
        (socket.descriptor, socket.displayName)
    }
}

/// Sends bytes to a TCP peer; the other half of a ``SocketInputStream`` pair.
///
/// Ownership: the pair owns the socket. Closing this stream half-closes the connection
/// (`shutdown(2)` with `SHUT_WR`), so the peer reads end of stream while this side can still
/// read its reply (or, with ``resetsOnClose``, resets it); the descriptor is closed when both
/// streams are closed (or dropped).
///
/// Writes block until the system takes at least one byte, or, with an ``idleTimeout``, fail with
/// `ETIMEDOUT` once the peer took no byte for that long. A peer that has gone is an error with
/// `errno == EPIPE` (or `ECONNRESET`); on Linux no `SIGPIPE` is raised (`MSG_NOSIGNAL`).
/// Scheduled, the stream is driven by readiness instead
/// (``ByteStream/schedule(on:)-(DispatchQueue)``): "has space available" comes when the socket
/// buffer has room, and a write takes what fits, possibly nothing (it returns 0). The socket is
/// non-blocking while either stream of the pair is scheduled.
/// Thread safety: one thread may write this stream while another reads its input partner.
/// The corresponding C functions are `send(2)`, `poll(2)`, `shutdown(2)` and `close(2)`.
public final class SocketOutputStream: ByteOutputStream {
    private let socket: SharedSocket

    init(socket: SharedSocket) {
        self.socket = socket
        super.init()
    }

    /// The peer, `host:port` (`[::1]:8080` for IPv6), as errors name it.
    public var displayName: String { socket.displayName }

    /// The socket's descriptor, shared with the input stream; `-1` once both are closed.
    public var fileDescriptor: Int32 { socket.currentDescriptor }

    /// The longest a write waits for the peer to take a byte before it fails with `ETIMEDOUT`,
    /// shared with the input stream; `nil` waits as long as it takes. Set when the pair is made.
    public var idleTimeout: Duration? { socket.idleTimeout }

    /// Whether closing this stream resets the connection instead of half-closing it: no end of
    /// stream is sent, and once the input stream is closed too the peer's reads and writes fail
    /// with `ECONNRESET` (an abortive close; unsent bytes are dropped). For a side that failed
    /// and must not let the peer take the end of the connection for success. Default `false`.
    /// It takes effect at once, on the socket: while it is set, a process that ends without
    /// closing (killed by a signal, `SIGKILL` included) resets the connection too, so a side
    /// can set it when the connection is made and clear it once it has succeeded.
    /// Set it from the thread that writes.
    /// The corresponding C function is `setsockopt(2)` with `SO_LINGER` of zero seconds.
    public var resetsOnClose = false {
        didSet {
            let descriptor = socket.currentDescriptor
            if descriptor >= 0, resetsOnClose != oldValue {
                try? SystemCalls.resetOnClose(descriptor, resetsOnClose, target: socket.displayName)
            }
        }
    }

    override public func closeBacking() throws {
        try socket.closeOutput(reset: resetsOnClose)
    }

    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        try socket.transfer(reading: false) {
            if descriptorReadiness != nil {
                return try SystemCalls.sendIfReady(socket.descriptor, buffer, maxLength, target: socket.displayName) ?? 0
            }
            return try SystemCalls.send(socket.descriptor, buffer, maxLength, idleTimeout: socket.idleTimeout,
                                        target: socket.displayName)
        }
    }

    override var readinessDescriptor: (descriptor: Int32, displayName: String)? {
        (socket.descriptor, socket.displayName)
    }
}

/// Makes TCP stream pairs (Core Foundation's `CFStreamCreatePairWithSocketToHost`).
public enum SocketStreams {
    /// Connects to `host`:`port` and returns the two streams of the connection, unopened.
    ///
    /// - Parameters:
    ///   - host: A name (`"localhost"`) or an IPv4 or IPv6 literal (`"127.0.0.1"`, `"::1"`).
    ///   - port: The TCP port, `1...65535` (an `Int`, as callers hold it; checked, never truncated).
    ///   - timeout: The most time for the whole connect, over all the host's addresses; `nil`
    ///     waits as long as the system does.
    ///   - idleTimeout: The longest each read or write of the pair may wait without moving a
    ///     byte before it fails with `ETIMEDOUT` (``SocketInputStream/idleTimeout``); more than
    ///     zero, or `nil` (the default) to wait as long as it takes.
    /// - Returns: The input and output streams (``SocketInputStream``, ``SocketOutputStream``),
    ///   sharing the socket. Open both before use; close both to release the socket.
    /// - Throws: ``ByteStreamError`` with operation `"connect"` and target `host:port`:
    ///   ``ByteStreamError/Code-swift.enum/system(errno:)`` with `ECONNREFUSED`, `ENETUNREACH`,
    ///   `EHOSTUNREACH`, or `ETIMEDOUT` when `timeout` passed (the error of the last address
    ///   tried); ``ByteStreamError/Code-swift.enum/hostNotFound(message:)`` for a host the
    ///   resolver cannot find (`message` is the resolver's text);
    ///   ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a port outside
    ///   `1...65535`, a negative timeout or an idle timeout that is not more than zero.
    ///
    /// The host's addresses are tried in the resolver's order, IPv6 and IPv4, until one accepts.
    /// Blocks while resolving and connecting. Thread-safe (no shared state).
    /// The corresponding C functions are `getaddrinfo(3)`, `socket(2)`, `connect(2)` and `poll(2)`.
    public static func connect(host: String, port: Int, timeout: Duration?, idleTimeout: Duration? = nil) throws
        -> sending (input: ByteInputStream, output: ByteOutputStream)
    {
        try requireArgument(port, in: 1...65535, "port", operation: "connect")
        let port = UInt16(port)
        try requireTimeouts(timeout, idleTimeout: idleTimeout, operation: "connect")
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let target = SocketAddress.describe(host: host, port: port)
        let addresses = try SystemCalls.resolve(host: host, port: port, passive: false, operation: "connect")
        var lastError: any Error = ByteStreamError(.system(errno: EHOSTUNREACH), operation: "connect", target: target)
        for address in addresses {
            let fd: Int32
            do {
                fd = try SystemCalls.socket(family: address.family, operation: "connect", target: target)
            } catch {
                lastError = error  // EAFNOSUPPORT: no IPv6 here; try the next address
                continue
            }
            do {
                try SystemCalls.connect(fd, to: address, deadline: deadline, target: target)
            } catch {
                try? SystemCalls.close(fd, target: target)
                lastError = error
                if (error as? ByteStreamError)?.errno == ETIMEDOUT { break }
                continue
            }
            let socket = SharedSocket(descriptor: fd, displayName: target, idleTimeout: idleTimeout)
            return (SocketInputStream(socket: socket), SocketOutputStream(socket: socket))
        }
        throw lastError
    }

    /// Checks a timeout for the whole operation (zero or more) and an idle timeout (more than zero).
    static func requireTimeouts(_ timeout: Duration?, idleTimeout: Duration?, operation: String) throws {
        if let timeout {
            try requireArgument(timeout >= .zero, "timeout", "must not be negative, not \(timeout)", operation: operation)
        }
        if let idleTimeout {
            try requireArgument(idleTimeout > .zero, "idleTimeout", "must be more than zero, not \(idleTimeout)",
                                operation: operation)
        }
    }
}

extension SocketAddress {
    mutating func setPort(_ port: UInt16) {
        let family = self.family
        withUnsafeMutablePointer(to: &storage) { pointer in
            switch family {
            case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port = port.bigEndian }
            case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port = port.bigEndian }
            default: break
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening TCP socket that hands out a stream pair per connection: blocking with
/// ``accept(timeout:idleTimeout:)``, or as an `AsyncSequence` with ``connections``.
///
/// Ownership: the listener owns the listening descriptor and closes it on ``close()`` or when
/// dropped; each accepted pair owns its own socket (see ``SocketInputStream``).
///
/// Thread safety: `Sendable`. Any task or thread may call ``close()`` while another accepts or
/// iterates ``connections``: the descriptor is shut down at once (`shutdown(2)`, which wakes a
/// waiting `accept(2)` or `poll(2)` on Linux) and closed once the last call using it has
/// returned, so its number is never reused under a waiting call. A waiting
/// ``accept(timeout:idleTimeout:)`` then throws ``ByteStreamError/Code-swift.enum/notOpen``
/// and ``connections`` ends. The streams a connection brings are the caller's, free to send
/// to another task or thread.
/// The corresponding C functions are `getaddrinfo(3)`, `socket(2)`, `bind(2)`, `listen(2)`,
/// `accept(2)`, `shutdown(2)` and `close(2)`.
public final class SocketListener: Sendable {
    /// The port the listener is bound to: the one asked for, or the one the system chose for 0.
    public let port: Int
    /// The local address, `127.0.0.1:port` or `[::1]:port`, as errors name it.
    public let displayName: String
    /// The listening descriptor, fixed for the listener's life; closed once `closed` is set
    /// and no call uses it.
    private let descriptor: Int32

    private struct State: Sendable {
        /// Set by ``close()``: no new call may use the descriptor.
        var closed = false
        /// The calls using the descriptor now (accepting, or waiting to).
        var users = 0
        /// Whether `close(2)` has been called on the descriptor.
        var released = false
    }

    private let state = QueueGuarded(State(), label: "gzstream.listener.state")

    /// Binds `host`:`port` and listens.
    ///
    /// - Parameters:
    ///   - host: The local address to bind: `"127.0.0.1"` (default, loopback only), `"::1"`,
    ///     `"0.0.0.0"`, or a name; the first address that binds is used.
    ///   - port: The TCP port, `0...65535`, or 0 for any free port (read it back from ``port``).
    ///   - backlog: The most pending connections, `1...65535`; default 128 (the system caps it
    ///     at `net.core.somaxconn`).
    /// - Throws: ``ByteStreamError`` with operation `"bind"` or `"listen"` and `errno`
    ///   (`EADDRINUSE`, `EADDRNOTAVAIL`, `EACCES`); `"listen"` with
    ///   ``ByteStreamError/Code-swift.enum/hostNotFound(message:)`` for a host the resolver
    ///   cannot find, or ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for
    ///   a port or a backlog out of range.
    ///
    /// Does not block. The corresponding C functions are `bind(2)` and `listen(2)`.
    public init(host: String = "127.0.0.1", port: Int, backlog: Int = 128) throws {
        try requireArgument(port, in: 0...65535, "port", operation: "listen")
        try requireArgument(backlog, in: 1...65535, "backlog", operation: "listen")
        let port = UInt16(port)
        let target = SocketAddress.describe(host: host, port: port)
        let addresses = try SystemCalls.resolve(host: host, port: port, passive: true, operation: "listen")
        var lastError: any Error = ByteStreamError(.system(errno: EADDRNOTAVAIL), operation: "bind", target: target)
        for address in addresses {
            do {
                let fd = try SystemCalls.socket(family: address.family, operation: "listen", target: target)
                do {
                    try SystemCalls.bindAndListen(fd, to: address, backlog: Int32(backlog), target: target)
                    let bound = try SystemCalls.localAddress(fd, target: target).port
                    descriptor = fd
                    self.port = Int(bound)
                    var local = address
                    local.setPort(bound)
                    displayName = local.description
                    return
                } catch {
                    try? SystemCalls.close(fd, target: target)
                    throw error
                }
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    deinit {
        if !state.withLock({ $0.released }) { try? SystemCalls.close(descriptor, target: displayName) }
    }

    /// The listening descriptor, or `-1` after ``close()``.
    public var fileDescriptor: Int32 {
        state.withLock { $0.closed ? -1 : descriptor }
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool {
        state.withLock { $0.closed }
    }

    /// Waits for the next connection and returns its two streams, unopened.
    ///
    /// - Parameters:
    ///   - timeout: The longest wait for a peer, zero or more; `nil` (the default) waits as
    ///     long as it takes.
    ///   - idleTimeout: The longest each read or write of the pair may wait without moving a
    ///     byte before it fails with `ETIMEDOUT` (``SocketInputStream/idleTimeout``); more than
    ///     zero, or `nil` (the default) to wait as long as it takes.
    /// - Returns: The input and output streams of the connection, named after the peer
    ///   (`127.0.0.1:54321`); open both before use and close both to release the socket.
    /// - Throws: ``ByteStreamError`` with operation `"accept"` and the listener's
    ///   ``displayName``: `ETIMEDOUT` when no peer came within `timeout`, `errno` from the
    ///   system (`EMFILE` when out of descriptors), ``ByteStreamError/Code-swift.enum/notOpen``
    ///   after ``close()`` (also when another thread closes the listener during the wait), or
    ///   ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a negative
    ///   timeout or an idle timeout that is not more than zero.
    ///
    /// Blocks the calling thread until a peer connects or `timeout` passes: in Swift
    /// concurrency, iterate ``connections`` instead. The corresponding C functions are
    /// `accept(2)` and `poll(2)`.
    public func accept(timeout: Duration? = nil, idleTimeout: Duration? = nil) throws
        -> sending (input: ByteInputStream, output: ByteOutputStream)
    {
        try SocketStreams.requireTimeouts(timeout, idleTimeout: idleTimeout, operation: "accept")
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let (fd, peer) = try usingDescriptor(operation: "accept") { descriptor in
            try SystemCalls.accept(descriptor, deadline: deadline, target: displayName)
        }
        let socket = SharedSocket(descriptor: fd, displayName: peer, idleTimeout: idleTimeout)
        return (SocketInputStream(socket: socket), SocketOutputStream(socket: socket))
    }

    /// Stops listening: connections not accepted yet are refused, a call waiting for one stops
    /// (see the type's thread safety), and the descriptor is closed, at once or when the last
    /// call using it returns. Connections already accepted stay open. Closing twice, or from
    /// two tasks, is harmless.
    /// - Throws: ``ByteStreamError`` with operation `"close"` and `errno`.
    /// The corresponding C functions are `shutdown(2)` and `close(2)`.
    public func close() throws {
        let closeNow: Bool? = state.withLock { state in
            guard !state.closed else { return nil }
            state.closed = true
            guard state.users == 0 else { return false }
            state.released = true
            return true
        }
        switch closeNow {
        case true?: try SystemCalls.close(descriptor, target: displayName)
        case false?: SystemCalls.shutdownListener(descriptor)
        case nil: break
        }
    }

    /// Runs `body` with the descriptor, which stays open meanwhile even if another thread
    /// closes the listener; a failure once the listener is closed is reported as `notOpen`.
    func usingDescriptor<Result>(operation: String, _ body: (Int32) throws -> Result) throws -> Result {
        try beginUse(operation: operation)
        defer { endUse() }
        do {
            return try body(descriptor)
        } catch {
            if isClosed { throw ByteStreamError(.notOpen, operation: operation, target: displayName) }
            throw error
        }
    }

    /// Counts one more call using the descriptor.
    /// - Throws: ``ByteStreamError/Code-swift.enum/notOpen`` once the listener is closed.
    func beginUse(operation: String) throws {
        let open = state.withLock { state in
            guard !state.closed else { return false }
            state.users += 1
            return true
        }
        if !open { throw ByteStreamError(.notOpen, operation: operation, target: displayName) }
    }

    /// Counts one call less; the last one after ``close()`` closes the descriptor.
    func endUse() {
        let closeNow = state.withLock { state in
            state.users -= 1
            guard state.closed, state.users == 0, !state.released else { return false }
            state.released = true
            return true
        }
        if closeNow { try? SystemCalls.close(descriptor, target: displayName) }
    }

    /// The descriptor, for a call between ``beginUse(operation:)`` and ``endUse()``.
    var descriptorInUse: Int32 { descriptor }
}

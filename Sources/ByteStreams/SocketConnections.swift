#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One accepted TCP connection: its two streams, unopened, over one socket (see
/// ``SocketInputStream`` for who owns and closes it).
///
/// Not `Sendable`, as its streams are not: it belongs to the task that took it from
/// ``SocketListener/connections`` (a `sending` element, free to move into a task of its own).
/// The input and output may be used from two tasks at once, one reading and one writing:
/// ``separated(isolation:_:)`` hands them over as two values the compiler lets move apart.
public struct SocketConnection {
    /// Reads what the peer sends.
    public let input: SocketInputStream
    /// Sends to the peer; closing it half-closes the connection.
    public let output: SocketOutputStream

    /// The peer, `host:port`, as errors name it.
    public var peerName: String { input.displayName }

    /// Connects to `host`:`port`, as ``SocketStreams/connect(host:port:timeout:idleTimeout:)``
    /// does, and returns the connection, its streams unopened.
    ///
    /// - Parameters:
    ///   - host: A name (`"localhost"`) or an IPv4 or IPv6 literal.
    ///   - port: The TCP port, `1...65535`.
    ///   - timeout: The most time for the whole connect; `nil` waits as long as the system does.
    /// - Throws: ``ByteStreamError`` with operation `"connect"`, as
    ///   ``SocketStreams/connect(host:port:timeout:idleTimeout:)`` throws.
    ///
    /// Blocks while resolving and connecting (on loopback, an instant).
    /// The corresponding C functions are `getaddrinfo(3)`, `socket(2)`, `connect(2)` and `poll(2)`.
    public init(host: String, port: Int, timeout: Duration?) throws {
        let (input, output) = try SocketStreams.connect(host: host, port: port, timeout: timeout)
        // The connect returns exactly these two types.
        self.input = input as! SocketInputStream
        self.output = output as! SocketOutputStream
    }

    init(descriptor: Int32, peer: String) {
        let socket = SharedSocket(descriptor: descriptor, displayName: peer, idleTimeout: nil)
        input = SocketInputStream(socket: socket)
        output = SocketOutputStream(socket: socket)
    }

    /// Calls `body` with the input and the output as two separate values, each free to move
    /// into a task of its own (a reader and a writer), which one value holding both is not.
    ///
    /// The socket behind them is shared safely (``SocketInputStream``: one thread may read
    /// while another writes); the compiler cannot see that, so this says it. Use the
    /// connection's own ``input`` and ``output`` no more once this is called.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public consuming func separated<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (sending SocketInputStream, sending SocketOutputStream) async throws -> sending Result
    ) async rethrows -> sending Result {
        nonisolated(unsafe) let input = input
        nonisolated(unsafe) let output = output
        return try await body(input, output)
    }
}

/// The connections of a ``SocketListener`` as an `AsyncSequence`
/// (``SocketListener/connections``): each element is a ``SocketConnection`` taken as soon as
/// `accept(2)` will not block.
///
/// While no peer is waiting the iterating task is suspended, not blocked: the listening
/// descriptor is watched by the one internal `poll(2)` loop that also drives scheduled and
/// asynchronous streams. The sequence ends (`nil`) once the listener is closed, from any task.
/// Cancelling the iterating task closes the listener and throws `CancellationError`.
/// Errors: ``ByteStreamError`` with operation `"accept"` and `errno` (`EMFILE` when out of
/// descriptors: the listener stays open, and the next iteration tries again).
/// Iterate it from one task at a time; it holds the listener, which is `Sendable`, so the
/// sequence is too. The corresponding C functions are `accept(2)` and `poll(2)`.
public struct SocketConnections: AsyncSequence, Sendable {
    /// A connection, unopened.
    public typealias Element = SocketConnection
    let listener: SocketListener

    /// Takes the connections; made by ``makeAsyncIterator()``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let listener: SocketListener

        /// The next connection, or `nil` once the listener is closed.
        /// - Throws: ``ByteStreamError`` from `accept(2)`, or `CancellationError` (the listener
        ///   is then closed).
        public mutating func next() async throws -> sending SocketConnection? {
            try await next(isolation: nil)
        }

        /// ``next()``, run isolated to `actor` (what `for try await` passes: the caller's).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> sending SocketConnection? {
            do {
                try listener.beginUse(operation: "accept")
            } catch {
                return nil
            }
            defer { listener.endUse() }
            while true {
                if listener.isClosed { return nil }
                do {
                    try Task.checkCancellation()
                    if let (descriptor, peer) = try SystemCalls.acceptIfReady(listener.descriptorInUse,
                                                                              target: listener.displayName) {
                        return SocketConnection(descriptor: descriptor, peer: peer)
                    }
                    // The descriptor stays open during the wait (beginUse); a close from
                    // another task shuts it down, which ends the wait.
                    try await awaitReadiness(of: listener.descriptorInUse, events: Int16(POLLIN))
                } catch is CancellationError {
                    try? listener.close()
                    throw CancellationError()
                } catch {
                    if listener.isClosed { return nil }
                    throw error
                }
            }
        }
    }

    /// An iterator over the connections; iterate from one task.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(listener: listener)
    }
}

extension SocketListener {
    /// The connections, as they come, as an `AsyncSequence` of ``SocketConnection``s; the
    /// asynchronous form of ``accept(timeout:idleTimeout:)``. See ``SocketConnections``:
    /// the iterating task waits without a thread; the sequence ends when the listener is
    /// closed (from any task); cancelling the iterating task closes the listener.
    ///
    /// ```swift
    /// for try await connection in listener.connections {
    ///     Task { try await echo(connection) }   // each connection in a task of its own
    /// }
    /// ```
    public var connections: SocketConnections { SocketConnections(listener: self) }
}

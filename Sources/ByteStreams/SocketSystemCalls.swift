#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The socket calls of the one syscall layer: each retries on `EINTR` and turns `errno` into a
// ``ByteStreamError`` naming the operation and the peer (`host:port`).
extension SystemCalls {
    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let sendFlags: Int32 = 0
    #endif
    private static let dontWaitFlag = Int32(MSG_DONTWAIT)

    /// The addresses of `host`:`port` for a TCP socket, IPv6 and IPv4 in the resolver's order.
    /// Failure other than `EAI_SYSTEM` is ``ByteStreamError/Code-swift.enum/hostNotFound(message:)``
    /// with the resolver's text. The corresponding C function is `getaddrinfo(3)`.
    static func resolve(host: String, port: UInt16, passive: Bool, operation: String) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let target = SocketAddress.describe(host: host, port: port)
        var status: Int32
        repeat {
            status = getaddrinfo(host, String(port), &hints, &list)
        } while status == EAI_SYSTEM && errno == EINTR
        guard status == 0 else {
            if status == EAI_SYSTEM {
                throw ByteStreamError(.system(errno: errno), operation: operation, target: target)
            }
            throw ByteStreamError(.hostNotFound(message: String(cString: gai_strerror(status))),
                                  operation: operation, target: target)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr {
                addresses.append(SocketAddress(family: current.pointee.ai_family, address: address,
                                               length: current.pointee.ai_addrlen))
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }

    /// A TCP socket of `family` with close-on-exec set. The corresponding C function is `socket(2)`.
    static func socket(family: Int32, operation: String, target: String) throws -> Int32 {
        #if canImport(Glibc)
        let fd = Glibc.socket(family, streamType | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = Darwin.socket(family, streamType, 0)
        if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        #endif
        if fd < 0 { throw ByteStreamError(.system(errno: errno), operation: operation, target: target) }
        return fd
    }

    /// Connects `fd` to `address`, giving up at `deadline` (`nil`: wait as long as the system does)
    /// with `ETIMEDOUT`. The socket is non-blocking during the attempt and blocking again after.
    /// The corresponding C functions are `connect(2)`, `poll(2)` and `getsockopt(2)` (`SO_ERROR`).
    static func connect(_ fd: Int32, to address: SocketAddress, deadline: ContinuousClock.Instant?,
                        target: String) throws {
        func failure(_ number: Int32) -> ByteStreamError {
            ByteStreamError(.system(errno: number), operation: "connect", target: target)
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { throw failure(errno) }
        let result = address.withSockaddr { pointer, length in
            {
                #if canImport(Glibc)
                Glibc.connect(fd, pointer, length)
                #else
                Darwin.connect(fd, pointer, length)
                #endif
            }()
        }
        if result != 0 {
            // EINTR: the connection goes on in the background, as with EINPROGRESS.
            guard errno == EINPROGRESS || errno == EINTR else { throw failure(errno) }
            try wait(fd, for: Int16(POLLOUT), deadline: deadline, operation: "connect", target: target)
            var pending: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &size) == 0 else { throw failure(errno) }
            if pending != 0 { throw failure(pending) }
        }
        guard fcntl(fd, F_SETFL, flags) == 0 else { throw failure(errno) }
    }

    /// Receives up to `count` bytes; 0 only at end of stream. With an `idleTimeout` the call does
    /// not block in `recv` but waits in `poll(2)`, and fails with `ETIMEDOUT` when no byte came
    /// for that long. The corresponding C functions are `recv(2)` and `poll(2)`.
    static func receive(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, idleTimeout: Duration?,
                        target: String) throws -> Int {
        while true {
            if let result = try receiveIfReady(fd, buffer, count, dontWait: idleTimeout != nil, target: target) {
                return result
            }
            try wait(fd, for: Int16(POLLIN), deadline: idleTimeout.map { .now + $0 }, operation: "read", target: target)
        }
    }

    /// One `recv(2)`: the bytes received (0 only at end of stream), or `nil` when the socket has
    /// nothing (`EAGAIN`: it is non-blocking, or `dontWait` asked `MSG_DONTWAIT`).
    static func receiveIfReady(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, dontWait: Bool,
                               target: String) throws -> Int? {
        let result = retryingOnInterrupt { Glibc_recv(fd, buffer, count, dontWait ? dontWaitFlag : 0) }
        if result >= 0 { return result }
        if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
        throw ByteStreamError(.system(errno: errno), operation: "read", target: target)
    }

    /// Sends up to `count` bytes; a peer that has gone is `EPIPE`, never `SIGPIPE` on Linux.
    /// With an `idleTimeout` the call does not block in `send` but waits in `poll(2)`, and fails
    /// with `ETIMEDOUT` when the peer took no byte for that long; so does a non-blocking socket
    /// (its partner stream scheduled) without one, with no limit.
    /// Returns at least 1 when `count > 0`. The corresponding C functions are `send(2)` and `poll(2)`.
    static func send(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, idleTimeout: Duration?,
                     target: String) throws -> Int {
        while true {
            if let result = try sendIfReady(fd, buffer, count, dontWait: idleTimeout != nil, target: target),
               result > 0 || count == 0 {
                return result
            }
            try wait(fd, for: Int16(POLLOUT), deadline: idleTimeout.map { .now + $0 }, operation: "write", target: target)
        }
    }

    /// One `send(2)`: the bytes taken, or `nil` when the socket's buffer is full (`EAGAIN`: it is
    /// non-blocking, or `dontWait` asked `MSG_DONTWAIT`). The corresponding C function is `send(2)`.
    static func sendIfReady(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, dontWait: Bool = false,
                            target: String) throws -> Int? {
        let result = retryingOnInterrupt { Glibc_send(fd, buffer, count, sendFlags | (dontWait ? dontWaitFlag : 0)) }
        if result >= 0 { return result }
        if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
        throw ByteStreamError(.system(errno: errno), operation: "write", target: target)
    }

    /// Ends the sending direction: the peer reads end of stream. The corresponding C function
    /// is `shutdown(2)` with `SHUT_WR`.
    static func shutdownWrite(_ fd: Int32, target: String) throws {
        #if canImport(Glibc)
        let how = Int32(SHUT_WR)
        #else
        let how = SHUT_WR
        #endif
        // ENOTCONN: the peer already reset the connection; there is nothing left to end.
        if shutdown(fd, how) != 0 && errno != ENOTCONN {
            throw ByteStreamError(.system(errno: errno), operation: "shutdown", target: target)
        }
    }

    /// Stops the listening socket `fd`: pending connections are refused, and on Linux a call
    /// waiting in `accept(2)` or `poll(2)` on it wakes (`accept` then fails with `EINVAL`).
    /// Errors are ignored: the descriptor is closed next in any case.
    /// The corresponding C function is `shutdown(2)` with `SHUT_RDWR`.
    static func shutdownListener(_ fd: Int32) {
        #if canImport(Glibc)
        _ = shutdown(fd, Int32(SHUT_RDWR))
        #else
        _ = shutdown(fd, SHUT_RDWR)
        #endif
    }

    /// Makes the coming `close` of `fd` reset the connection (RST) rather than end it (FIN), or,
    /// with `resets` false, end it in order again.
    /// The corresponding C function is `setsockopt(2)` with `SO_LINGER` of zero seconds.
    static func resetOnClose(_ fd: Int32, _ resets: Bool = true, target: String) throws {
        var immediate = linger(l_onoff: resets ? 1 : 0, l_linger: 0)
        if setsockopt(fd, SOL_SOCKET, SO_LINGER, &immediate, socklen_t(MemoryLayout<linger>.size)) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "close", target: target)
        }
    }

    /// Binds `fd` to `address` (with `SO_REUSEADDR`) and listens; `fd` is made non-blocking, so
    /// that ``accept(_:deadline:target:)`` waits in `poll(2)` and never in `accept`. The
    /// corresponding C functions are `setsockopt(2)`, `bind(2)`, `listen(2)` and `fcntl(2)`.
    static func bindAndListen(_ fd: Int32, to address: SocketAddress, backlog: Int32, target: String) throws {
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        if bound != 0 { throw ByteStreamError(.system(errno: errno), operation: "bind", target: target) }
        if listen(fd, backlog) != 0 {
            throw ByteStreamError(.system(errno: errno), operation: "listen", target: target)
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw ByteStreamError(.system(errno: errno), operation: "listen", target: target)
        }
    }

    /// The local address `fd` is bound to. The corresponding C function is `getsockname(2)`.
    static func localAddress(_ fd: Int32, target: String) throws -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        if result != 0 { throw ByteStreamError(.system(errno: errno), operation: "getsockname", target: target) }
        return SocketAddress(storage: storage, length: length)
    }

    /// Waits for and takes the next connection on the non-blocking listener `fd`, at most until
    /// `deadline` (`nil`: as long as it takes; then `ETIMEDOUT`). The connection is blocking, with
    /// close-on-exec set; one the peer aborted before it was taken is skipped.
    /// The corresponding C functions are `accept(2)`, `poll(2)` and `fcntl(2)`.
    static func accept(_ fd: Int32, deadline: ContinuousClock.Instant?, target: String) throws
        -> (descriptor: Int32, peer: String)
    {
        while true {
            if let accepted = try acceptIfReady(fd, target: target) { return accepted }
            try wait(fd, for: Int16(POLLIN), deadline: deadline, operation: "accept", target: target)
        }
    }

    /// Takes the next connection on the non-blocking listener `fd` if one is waiting; `nil`
    /// when none is (`EAGAIN`). The connection is blocking, with close-on-exec set; one the
    /// peer aborted before it was taken is skipped.
    /// The corresponding C functions are `accept(2)` and `fcntl(2)`.
    static func acceptIfReady(_ fd: Int32, target: String) throws -> (descriptor: Int32, peer: String)? {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                    // accept4(2) is not in Glibc's Swift overlay (it needs _GNU_SOURCE); the
                    // window before FD_CLOEXEC matters only to a process that forks meanwhile.
                    #if canImport(Glibc)
                    let client = Glibc.accept(fd, pointer, &length)
                    #else
                    let client = Darwin.accept(fd, pointer, &length)
                    #endif
                    if client >= 0 {
                        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                        // BSD accept(2) hands the listener's O_NONBLOCK on (Linux does not).
                        let flags = fcntl(client, F_GETFL)
                        if flags >= 0 && flags & O_NONBLOCK != 0 { _ = fcntl(client, F_SETFL, flags & ~O_NONBLOCK) }
                    }
                    return client
                }
            }
            if client >= 0 { return (client, SocketAddress(storage: storage, length: length).description) }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw ByteStreamError(.system(errno: errno), operation: "accept", target: target)
            }
        }
    }
}

@inline(__always)
private func Glibc_recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ flags: Int32) -> Int {
    #if canImport(Glibc)
    return Glibc.recv(fd, buffer, count, flags)
    #else
    return Darwin.recv(fd, buffer, count, flags)
    #endif
}

@inline(__always)
private func Glibc_send(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    #if canImport(Glibc)
    return Glibc.send(fd, buffer, count, flags)
    #else
    return Darwin.send(fd, buffer, count, flags)
    #endif
}

/// One resolved socket address, copied out of the resolver's list.
struct SocketAddress: CustomStringConvertible {
    var storage: sockaddr_storage
    var length: socklen_t

    init(family: Int32, address: UnsafePointer<sockaddr>, length: socklen_t) {
        storage = sockaddr_storage()
        self.length = min(length, socklen_t(MemoryLayout<sockaddr_storage>.size))
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(self.length)))
        }
    }

    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    var family: Int32 { Int32(storage.ss_family) }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafePointer(to: storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    var port: UInt16 {
        withUnsafePointer(to: storage) { pointer in
            switch family {
            case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            default: 0
            }
        }
    }

    /// `127.0.0.1:8080` or `[::1]:8080`.
    var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withUnsafePointer(to: storage) { pointer in
            switch family {
            case AF_INET:
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                }
            case AF_INET6:
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                }
            default: break
            }
        }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Self.describe(host: host, port: port)
    }

    /// `host:port`, with brackets around an IPv6 literal.
    static func describe(host: String, port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

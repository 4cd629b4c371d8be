import ByteStreams
import StreamCache

/// The bytes `send` and `receive` exchange around the data, version 1.
///
/// ```
/// plain (no --key-file):
///   send → receive   the gzip stream, as pack writes it; then a half-close
///   receive → send   once everything was read, checked and written, the acknowledgement:
///                    magic "GZOK" (47 5a 4f 4b), then the bytes receive read, 8, big-endian
/// keyed (--key-file on both):
///   send → receive   at once, the marker (16 bytes): "GZSK" (47 5a 53 4b), version 1, then 11
///                    zero bytes
///   receive → send   at once, the hello (38 bytes): magic "GZRH" (47 5a 52 48), version 1,
///                    mode 1 (keyed), a 32-byte challenge (randombytes_buf)
///   send → receive   the gzip stream in SecretStreams framing (GZSS, 64 KiB chunks) under the
///                    data key; then a half-close
///   receive → send   the acknowledgement: "GZOK", the bytes read (8, big-endian, the marker
///                    included), and a 32-byte crypto_auth tag under the acknowledgement key
///                    over those 12 bytes and the first 49 bytes send sent (the marker, the
///                    GZSS prefix and the sender's random secretstream header)
/// ```
/// Keys: data key = BLAKE2b-256 keyed with the pre-shared key over ``dataLabel``, a zero byte
/// and the challenge; acknowledgement key the same over ``ackLabel``. A recorded session
/// replayed to a new receive meets another challenge, so another data key, and fails
/// authentication at chunk 1; an acknowledgement cannot be made without the key, nor replayed,
/// since it covers the sender's fresh header.
///
/// A plain receive sends nothing before the acknowledgement, so a sender that never reads
/// (`gzip -c f | nc HOST PORT`) still feeds it: bytes it left unread would make its close a
/// reset, which discards data not yet read here. A plain receive recognises a keyed send's
/// marker in its first 16 bytes and fails at once, instead of both waiting for the other; a
/// keyed receive's hello tells a plain send that a key is wanted.
enum TransferProtocol {
    static let helloMagic: [UInt8] = [0x47, 0x5A, 0x52, 0x48]
    /// What a keyed send sends first: "GZSK", version 1, 11 zero bytes.
    static let keyedMarker: [UInt8] = [0x47, 0x5A, 0x53, 0x4B, version] + [UInt8](repeating: 0, count: 11)
    static let ackMagic: [UInt8] = [0x47, 0x5A, 0x4F, 0x4B]
    static let version: UInt8 = 1
    static let challengeByteCount = 32
    /// Magic, version, mode and challenge: 38 bytes.
    static let helloByteCount = 6 + challengeByteCount
    /// Magic and count: 12 bytes; a keyed acknowledgement adds a 32-byte tag.
    static let plainAckByteCount = 12
    /// The plaintext bytes per encrypted chunk on the wire, and the most a receive accepts:
    /// 64 KiB, so a peer that has not yet proved it holds the key cannot make receive buffer
    /// more than about twice that.
    static let wireChunkSize = 64 << 10
    /// The start of a keyed send's bytes that an acknowledgement covers: the marker, the GZSS
    /// prefix and the secretstream header.
    static let headByteCount = keyedMarker.count + SecretStreamFraming.prefixByteCount + SecretStreamFraming.headerByteCount
    static let dataLabel = "gzstream send to receive: data v1"
    static let ackLabel = "gzstream receive to send: acknowledgement v1"

    enum Mode: UInt8 { case plain = 0, keyed = 1 }

    static func hello(mode: Mode, challenge: [UInt8]) -> [UInt8] {
        helloMagic + [version, mode.rawValue] + challenge
    }

    /// The mode and challenge of a 38-byte hello, or `nil` when it is not one.
    static func parseHello(_ bytes: [UInt8]) -> (mode: Mode, challenge: [UInt8])? {
        guard bytes.count == helloByteCount, bytes.starts(with: helloMagic), bytes[4] == version,
              let mode = Mode(rawValue: bytes[5]) else { return nil }
        return (mode, Array(bytes[6...]))
    }

    /// The acknowledgement of `count` data bytes; with keys, tagged over `head` too.
    static func acknowledgement(count: Int64, head: [UInt8], ackKey: SecretStreamKey?) -> [UInt8] {
        let body = ackMagic + withUnsafeBytes(of: UInt64(count).bigEndian, Array.init)
        guard let ackKey else { return body }
        return body + ackKey.authenticationTag(for: body + head)
    }

    /// The data and acknowledgement keys of one session.
    static func sessionKeys(_ key: SecretStreamKey, challenge: [UInt8]) throws
        -> (data: SecretStreamKey, ack: SecretStreamKey)
    {
        (try key.derived(label: dataLabel, context: challenge), try key.derived(label: ackLabel, context: challenge))
    }
}

/// `--deadline`: the instant a whole transfer must end by, and the text given, for messages.
struct TransferDeadline {
    var instant: ContinuousClock.Instant
    var text: String

    /// Waits until `descriptor` is ready for `events`.
    /// - Throws: ``DeadlinePassed`` when the deadline comes first; `poll`'s error.
    func wait(_ descriptor: Int32, for events: Int16, operation: String, peer: String) throws {
        guard try SystemCalls.waitUntilReady(descriptor, for: events, deadline: instant, operation: operation,
                                             target: peer)
        else { throw DeadlinePassed(text: text) }
    }
}

/// The transfer went on past `--deadline`.
struct DeadlinePassed: Error, CustomStringConvertible {
    var text: String
    var description: String { "the transfer did not end within --deadline \(text)" }
}

/// What both directions of a connection keep: each wait bounded by the transfer's deadline
/// (when there is one), the bytes moved counted, the first ``TransferProtocol/headByteCount``
/// kept (the acknowledgement is tagged over them).
struct ConnectionTally {
    let descriptor: Int32
    let peer: String
    let deadline: TransferDeadline?

    /// A tally for a connection stream; its deadline waits need the socket's descriptor (a
    /// stream that is not a socket's has none: it is never waited on).
    init(_ stream: ByteStream, peer: String, deadline: TransferDeadline?) {
        descriptor = (stream as? SocketInputStream)?.fileDescriptor ?? (stream as? SocketOutputStream)?.fileDescriptor ?? -1
        self.peer = peer
        self.deadline = deadline
    }
    /// The bytes moved so far.
    private(set) var byteCount: Int64 = 0
    /// The first bytes moved, at most ``TransferProtocol/headByteCount``.
    private(set) var head: [UInt8] = []

    /// Waits for `events` on the socket while the deadline allows; nothing without one.
    /// - Throws: ``DeadlinePassed``; `poll`'s error.
    func waitForDeadline(_ events: Int16, operation: String) throws {
        if let deadline, descriptor >= 0 { try deadline.wait(descriptor, for: events, operation: operation, peer: peer) }
    }

    /// Counts `count` bytes moved from `buffer` (`count` < 0: the inner stream's failure) and
    /// keeps the first of them.
    /// - Returns: `count`.
    /// - Throws: The inner stream's error when `count` < 0.
    mutating func record(_ buffer: UnsafePointer<UInt8>, count: Int, of inner: ByteStream, operation: String) throws -> Int {
        if count < 0 { throw inner.streamErrorOrFallback(operation: operation, target: peer) }
        let kept = min(count, TransferProtocol.headByteCount - head.count)
        if kept > 0 { head += UnsafeBufferPointer(start: buffer, count: kept) }
        byteCount += Int64(count)
        return count
    }
}

/// A connection's input as send and receive read it (``ConnectionTally``). Opens and closes
/// the socket stream it wraps. Not thread-safe.
final class ConnectionInputStream: ByteInputStream {
    private let inner: ByteInputStream
    /// The bytes read so far (`byteCount`) and the first of them (`head`).
    private(set) var tally: ConnectionTally

    init(_ inner: ByteInputStream, peer: String, deadline: TransferDeadline?) {
        self.inner = inner
        tally = ConnectionTally(inner, peer: peer, deadline: deadline)
        super.init()
    }

    override func openBacking() throws {
        try inner.openUnlessOpened()
    }

    override func closeBacking() throws {
        try inner.closeOrThrow()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        try tally.waitForDeadline(SystemCalls.readableEvents, operation: "read")
        return try tally.record(buffer, count: inner.read(buffer, maxLength: maxLength), of: inner, operation: "read")
    }

    /// Reads until `count` bytes are there or the input ends.
    /// - Returns: The bytes read, fewer than `count` at the end of the input.
    func read(upTo count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count {
            let chunk = try readChunk(maxLength: count - bytes.count)
            if chunk.isEmpty { break }
            bytes += chunk
        }
        return bytes
    }
}

/// A connection's output as send and receive write it (``ConnectionTally``). Closing it closes
/// the socket stream it wraps (a half-close). Not thread-safe.
final class ConnectionOutputStream: ByteOutputStream {
    private let inner: ByteOutputStream
    /// The bytes written so far (`byteCount`) and the first of them (`head`).
    private(set) var tally: ConnectionTally

    init(_ inner: ByteOutputStream, peer: String, deadline: TransferDeadline?) {
        self.inner = inner
        tally = ConnectionTally(inner, peer: peer, deadline: deadline)
        super.init()
    }

    override func openBacking() throws {
        try inner.openUnlessOpened()
    }

    override func closeBacking() throws {
        try inner.closeOrThrow()
    }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        guard maxLength > 0 else { return 0 }
        try tally.waitForDeadline(SystemCalls.writableEvents, operation: "write")
        return try tally.record(buffer, count: inner.write(buffer, maxLength: maxLength), of: inner, operation: "write")
    }
}

/// Whether `displayName` (`127.0.0.1:PORT`, `[::1]:PORT`) is a loopback address: only this
/// machine can connect to it.
func isLoopback(_ displayName: String) -> Bool {
    displayName.hasPrefix("127.") || displayName.hasPrefix("[::1]:") || displayName.hasPrefix("[::ffff:127.")
}

import ByteStreams

/// The members' trailer checks (CRC-32 and ISIZE, RFC 1952 §2.3.1) of a ``GzipInputStream``,
/// made where its plain bytes are written instead of on the thread that inflates: give one to
/// the stream (`deferringTrailerChecksTo:`) and write every byte the stream returns, in order,
/// through a ``GzipCheckingOutputStream`` holding the same checks (behind a
/// `WriteBehindOutputStream`, its worker computes the CRC-32 while the reader inflates the next
/// bytes: the inflating thread then only inflates).
///
/// The stream records each member's stored trailer and plain end as it reads the trailer; the
/// output stream computes the CRC-32 of the bytes it passes and compares at each member's end,
/// exactly as the stream would have (``GzipError/crcMismatch(member:stored:computed:offset:)``,
/// then ``GzipError/lengthMismatch(member:stored:computed:offset:)``, with the same member
/// number and offset). A member whose trailer fails has all its bytes written first, as with
/// checks on the reading thread, and none of the next member's. A member of no plain bytes is
/// checked by the stream itself, so that the checks waiting are never more than the members
/// whose bytes are between the reader and the output.
///
/// The data is tentative until ``finish()`` returns: a read that returned 0 means only that the
/// input ended well-formed. Memory: one record (about 40 bytes) per member waiting.
///
/// Thread safety: safe to share; the reading thread records, the writing thread checks, and
/// the state is kept behind one serial Dispatch queue (`QueueGuarded`).
public final class GzipTrailerChecks: Sendable {
    /// A member's stored trailer, where its plain bytes end, and where the error would point.
    struct Pending {
        let trailer: GzipTrailer
        let plainEnd: Int64
        let member: Int
        let offset: Int64
    }

    struct State {
        /// Recorded and not yet checked, oldest first from `head`.
        var pending: [Pending] = []
        var head = 0
        /// Plain bytes passed so far, their member's CRC-32 and size so far.
        var passed: Int64 = 0
        var crc: UInt32 = 0
        var memberSize: Int64 = 0
        /// The first failure, returned again by every later call.
        var failure: GzipError?
        var checkedCount = 0
        /// The line table's counts, when an index recorder leaves them to the writing side.
        var lines: LineTally?

        /// Checks every member that ends at `passed`.
        mutating func checkReached() throws(GzipError) {
            if let failure { throw failure }
            while head < pending.count, pending[head].plainEnd <= passed {
                let next = pending[head]
                head += 1
                do {
                    try next.trailer.check(crc32: crc, plainSize: memberSize, member: next.member, offset: next.offset)
                } catch {
                    failure = error
                    throw error
                }
                checkedCount += 1
                crc = 0
                memberSize = 0
            }
            if head > 64, head * 2 > pending.count {
                pending.removeFirst(head)
                head = 0
            }
        }

        /// ``checkReached()``'s failure, returned.
        mutating func checkReachedFailure() -> GzipError? {
            do {
                try checkReached()
                return nil
            } catch {
                return error
            }
        }

        /// Counts `bytes` as passed, checking each member that ends in them.
        /// - Returns: How many of them may be written: all, or those up to the end of the
        ///   member that failed, and the failure.
        mutating func pass(_ bytes: UnsafeRawBufferPointer) -> (count: Int, failure: GzipError?) {
            var start = 0
            do {
                try checkReached()
            } catch {
                return (0, error)
            }
            while start < bytes.count {
                // Up to the next member's end (after `passed`: checkReached checked the rest).
                let remaining = bytes.count - start
                let take = head < pending.count ? Int(min(Int64(remaining), pending[head].plainEnd - passed)) : remaining
                let piece = UnsafeRawBufferPointer(rebasing: bytes[start..<start + take])
                crc = crc32(crc, piece)
                lines?.count(piece, from: passed)
                memberSize += Int64(piece.count)
                passed += Int64(piece.count)
                start += piece.count
                do {
                    try checkReached()
                } catch {
                    return (start, error)
                }
            }
            return (start, nil)
        }
    }

    /// The `\n` bytes of the plain data, and of the bytes before each access point of an index
    /// being recorded (``GzipLineTable``): counted here where the bytes are written, or by
    /// ``GzipIndexRecorder`` on the reading thread.
    struct LineTally {
        /// Points whose counts are not yet known, ascending plain offsets, from `pointHead`.
        var points: [Int64] = []
        var pointHead = 0
        var newlines: UInt64 = 0
        var newlinesBefore: [UInt64] = []
        var lastByte: UInt8?

        /// Counts `piece`, whose first byte is at plain offset `offset`, and the counts before
        /// each point in it or at its start.
        mutating func count(_ piece: UnsafeRawBufferPointer, from offset: Int64) {
            var start = 0
            while pointHead < points.count, points[pointHead] - offset <= Int64(piece.count) {
                let cut = max(start, Int(points[pointHead] - offset))
                newlines += UInt64(NewlineCounter.count(in: UnsafeRawBufferPointer(rebasing: piece[start..<cut])))
                newlinesBefore.append(newlines)
                start = cut
                pointHead += 1
            }
            newlines += UInt64(NewlineCounter.count(in: UnsafeRawBufferPointer(rebasing: piece[start...])))
            if let last = piece.last { lastByte = last }
        }

        /// The counts once every byte up to plain offset `end` was counted: the `\n` bytes
        /// before each point (points at `end` count them all), in all, and the last byte.
        mutating func finish(at end: Int64) -> (newlinesBefore: [UInt64], newlines: UInt64, lastByte: UInt8?) {
            count(UnsafeRawBufferPointer(start: nil, count: 0), from: end)
            return (newlinesBefore, newlines, lastByte)
        }
    }

    private let state = QueueGuarded(State(), label: "gzstream.trailer-checks")

    /// Checks with none recorded.
    public init() {}

    /// The members whose trailers were checked so far.
    public var checkedCount: Int { state.withLock { $0.checkedCount } }

    // MARK: The reading side

    /// Records a member's trailer: its plain bytes end at `plainEnd` (counted from the first
    /// member's first byte).
    func record(_ trailer: GzipTrailer, plainEnd: Int64, member: Int, offset: Int64) {
        state.withLock { $0.pending.append(Pending(trailer: trailer, plainEnd: plainEnd, member: member, offset: offset)) }
    }

    /// Counts the line table for an index recorder from here on (before the first byte).
    func countLines() {
        state.withLock { $0.lines = LineTally() }
    }

    /// An access point of the index being recorded is at plain offset `offset`.
    func point(at offset: Int64) {
        state.withLock { $0.lines?.points.append(offset) }
    }

    /// The line counts, once every byte was written: the `\n` bytes before each point, in all,
    /// and the last byte. Points at the end of the bytes written count them all.
    func lineCounts() -> (newlinesBefore: [UInt64], newlines: UInt64, lastByte: UInt8?) {
        state.withLock { state in
            guard var lines = state.lines else { return ([], 0, nil) }
            let counts = lines.finish(at: state.passed)
            state.lines = lines
            return counts
        }
    }

    // MARK: The writing side

    /// Counts `bytes` as passed, in order, checking each member that ends in them (and those
    /// that end where the bytes before them ended).
    /// - Returns: How many of `bytes` may be written (all but those after a failed member's
    ///   end), and the first failure, once and for every later call.
    func pass(_ bytes: UnsafeRawBufferPointer) -> (count: Int, failure: GzipError?) {
        state.withLock { $0.pass(bytes) }
    }

    /// Checks every member recorded so far that ends where the bytes passed end, and returns
    /// the first failure if any check failed. Call once the reader returned 0 and every byte
    /// was written (after closing or flushing the output stream): then every member read has
    /// been checked. Idempotent.
    /// - Throws: ``GzipError/crcMismatch(member:stored:computed:offset:)`` or
    ///   ``GzipError/lengthMismatch(member:stored:computed:offset:)`` for the first member that
    ///   failed.
    public func finish() throws(GzipError) {
        if let failure = state.withLock({ $0.checkReachedFailure() }) { throw failure }
    }
}

/// Writes the plain bytes of a ``GzipInputStream`` to `inner` and checks each member's trailer
/// on the way (``GzipTrailerChecks``): a member whose CRC-32 or ISIZE does not match fails the
/// write after the member's last byte, with the ``GzipError`` the reader would have thrown,
/// which becomes this stream's error.
///
/// Ownership: ``ByteStream/close()`` closes `inner` when `closesInnerStream` is `true` (the
/// default), after ``GzipTrailerChecks/finish()``, whose failure it reports. Blocking: as
/// `inner`'s writes. Thread safety: as every stream, one thread at a time; the checks may be
/// recorded from another.
public final class GzipCheckingOutputStream: ByteOutputStream {
    /// The checks this stream makes.
    public let checks: GzipTrailerChecks
    private let inner: ByteOutputStream
    private let closesInnerStream: Bool

    /// A stream that writes to `inner` and checks the members recorded in `checks`.
    public init(wrapping inner: ByteOutputStream, checks: GzipTrailerChecks, closesInnerStream: Bool = true) {
        self.inner = inner
        self.checks = checks
        self.closesInnerStream = closesInnerStream
        super.init()
    }

    override public func openBacking() throws {
        if inner.streamStatus == .notOpen { try inner.openOrThrow() }
    }

    /// Checks the members that end in the bytes first, then writes all of them to `inner` in
    /// as few writes as it takes (a file of many small members is not written a member at a
    /// time), or those up to the end of a member that failed, then throws its error.
    override public func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        let (count, failure) = checks.pass(UnsafeRawBufferPointer(start: buffer, count: maxLength))
        try inner.writeAll(UnsafeRawBufferPointer(start: buffer, count: count))
        if let failure { throw failure }
        return count
    }

    override public func closeBacking() throws {
        var failure: (any Error)?
        do { try checks.finish() } catch { failure = error }
        if closesInnerStream {
            do { try inner.closeOrThrow() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }
}

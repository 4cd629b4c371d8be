@testable import ByteStreams
import Dispatch
import Foundation
import Testing
import TestSupport

// Inner streams for ReadAheadInputStream and WriteBehindOutputStream: their workers call them
// on another thread, so everything they record is kept under a lock.

/// An error an inner stream is told to throw, told apart from every other by `id`.
struct InjectedError: Error, Equatable {
    let id: Int
}

/// An input stream over fixed bytes that records every read of the worker: the lengths asked,
/// reads in progress, and reads after it was closed. It can fail at a given offset (after the
/// bytes before it) and hold each read until a `gate` is signalled.
final class RecordingInputStream: ByteInputStream {
    private let lock = NSLock()
    private let bytes: [UInt8]
    private let mostPerRead: Int
    private let failure: (offset: Int, error: InjectedError)?
    private let gate: DispatchSemaphore?
    private var position = 0
    private var asked: [Int] = []
    private var active = 0

    /// - Parameters:
    ///   - mostPerRead: The most bytes a read returns (a short read below what was asked).
    ///   - failure: Throw `error` from the read that starts at `offset`.
    ///   - gate: When set, each read waits for one signal before it returns.
    init(bytes: [UInt8], mostPerRead: Int = .max, failure: (offset: Int, error: InjectedError)? = nil,
         gate: DispatchSemaphore? = nil) {
        self.bytes = bytes
        self.mostPerRead = mostPerRead
        self.failure = failure
        self.gate = gate
        super.init()
    }

    /// The `maxLength` of every read so far.
    var readLengths: [Int] { lock.withLock { asked } }
    /// Reads started and not returned.
    var activeReads: Int { lock.withLock { active } }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        lock.withLock {
            asked.append(maxLength)
            active += 1
        }
        defer { lock.withLock { active -= 1 } }
        gate?.wait()
        return try lock.withLock {
            let end = failure.map { min(bytes.count, $0.offset) } ?? bytes.count
            if let failure, position == failure.offset { throw failure.error }
            let count = min(maxLength, mostPerRead, end - position)
            bytes.withUnsafeBufferPointer { source in
                buffer.update(from: source.baseAddress! + position, count: count)
            }
            position += count
            return count
        }
    }
}

/// An output stream that keeps what the worker writes and records each write: the lengths
/// offered, writes in progress. It can take at most `mostPerWrite` bytes a call, fail once
/// `failAfter` bytes are taken, and hold each write until a `gate` is signalled.
final class RecordingOutputStream: ByteOutputStream {
    private let lock = NSLock()
    private let mostPerWrite: Int
    private let failure: (offset: Int, error: InjectedError)?
    private let gate: DispatchSemaphore?
    private var kept: [UInt8] = []
    private var offered: [Int] = []
    private var active = 0

    init(mostPerWrite: Int = .max, failure: (offset: Int, error: InjectedError)? = nil, gate: DispatchSemaphore? = nil) {
        self.mostPerWrite = mostPerWrite
        self.failure = failure
        self.gate = gate
        super.init()
    }

    var received: [UInt8] { lock.withLock { kept } }
    var writeLengths: [Int] { lock.withLock { offered } }
    var activeWrites: Int { lock.withLock { active } }

    override func writeBytes(from buffer: UnsafePointer<UInt8>, maxLength: Int) throws -> Int {
        lock.withLock {
            offered.append(maxLength)
            active += 1
        }
        defer { lock.withLock { active -= 1 } }
        gate?.wait()
        return try lock.withLock {
            var count = min(maxLength, mostPerWrite)
            if let failure {
                if kept.count >= failure.offset { throw failure.error }
                count = min(count, failure.offset - kept.count)
            }
            kept += UnsafeBufferPointer(start: buffer, count: count)
            return count
        }
    }
}

/// Polls `condition` every millisecond until it holds; `false` after ``waitLimit``. For states
/// another thread reaches (a worker blocked, a ring full): the test's outcome never depends on
/// how long that takes, only the time it may wait does.
func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + waitLimit
    while !condition() {
        if DispatchTime.now() > deadline { return false }
        usleep(1000)
    }
    return true
}

/// Reads until `count` bytes are collected or the stream ends or fails.
func readExactly(_ stream: ByteInputStream, count: Int, maxLength: Int = 3000) -> [UInt8] {
    var bytes: [UInt8] = []
    while bytes.count < count {
        let (result, chunk) = readOnce(stream, maxLength: min(maxLength, count - bytes.count))
        if result <= 0 { break }
        bytes += chunk
    }
    return bytes
}

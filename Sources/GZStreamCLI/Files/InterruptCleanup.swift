import ByteStreams
import GzipStreams
import StreamCache
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The signal side of temporary files: a handler for SIGINT, SIGTERM, SIGHUP and SIGXCPU (and
// SIGPIPE and SIGXFSZ sent by another process) that removes the temporary outputs still
// pending and erases the progress line, then dies of the signal: GNU gzip's set. It may only make async-signal-safe calls, so it calls the C library directly
// (the wrappers in SystemCalls build errors, which allocates): this file and the other
// signal and terminal files are the CLI's only ones that import it.

/// How many temporary files the interrupt handler can know at once: an output and its index
/// are two; the others are room to spare.
private let pendingCapacity = 4

/// A temporary file for the interrupt handler to remove: its directory's descriptor, its name
/// there, and the device and inode it had when created (a name that another user has since
/// given to another file is left alone).
private struct PendingTemporary {
    var directory: Int32 = -1
    var device: UInt64 = 0
    var inode: UInt64 = 0
    /// The name, NUL-terminated, in 32 bytes (a temporary name is 16).
    var name: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
}

/// The state of each slot of ``pendingRecords``: 0 free, 1 being written (the handler skips
/// it), 2 complete (the handler may read it). A record is written only between 1 and 2, so the
/// handler, which reads one only after seeing 2, never sees half a name.
private let pendingStates: InlineArray<4, Atomic<Int>> = InlineArray { _ in Atomic(0) }

/// The records, allocated once and never freed: a signal on one thread can read them while
/// another thread releases its slot.
private nonisolated(unsafe) let pendingRecords: UnsafeMutablePointer<PendingTemporary> = {
    let records = UnsafeMutablePointer<PendingTemporary>.allocate(capacity: pendingCapacity)
    records.initialize(repeating: PendingTemporary(), count: pendingCapacity)
    return records
}()

/// Set by the interrupt handler before it reads any record. A thread that released a slot
/// and finds it set stops there (the process is about to die of the signal): it must not
/// close the directory or reuse the slot that the handler may be reading.
private let interruptCleanupStarted = Atomic<Bool>(false)

/// Tells the interrupt handler of a temporary file. - Returns: the slot to release, or `nil`
/// when every slot is taken (the file is then not removed on a signal).
/// Thread safety: safe from any thread.
func registerPendingTemporary(directory: Int32, name: Pathname, device: UInt64, inode: UInt64) -> Int? {
    precondition(name.bytes.count < 32, "a temporary name is 16 bytes")
    for slot in 0..<pendingCapacity {
        guard pendingStates[slot].compareExchange(expected: 0, desired: 1, ordering: .sequentiallyConsistent).exchanged else {
            continue
        }
        var record = PendingTemporary(directory: directory, device: device, inode: inode)
        withUnsafeMutableBytes(of: &record.name) { buffer in
            buffer.copyBytes(from: name.bytes)
        }
        pendingRecords[slot] = record
        pendingStates[slot].store(2, ordering: .sequentiallyConsistent)
        // A signal handled on another thread (a worker's) while this one went on creating
        // the file: the handler may have read the slots before this one was complete. Both
        // sequentially consistent: either the handler sees the record, or this load sees that
        // it started; then the file is removed here and the signal ends the process.
        if interruptCleanupStarted.load(ordering: .sequentiallyConsistent) {
            removeTemporary(pendingRecords[slot])
            while true { pause() }
        }
        return slot
    }
    return nil
}

/// Runs `body` with the signals that remove temporary files (SIGINT, SIGTERM, SIGHUP, SIGXCPU,
/// and SIGPIPE and SIGXFSZ from others) held off on this thread: a file created in `body` and
/// registered there (``registerPendingTemporary(directory:name:device:inode:)``) is then never
/// missed by the handler. Without it, a signal that arrived during the `openat(2)` creating the
/// file (on ext4 the longest call of a small member's extraction) was handled as that call
/// returned, before the file was registered: an interrupted `unpack --extract` left a
/// `.gzstream-` file in 17 of 24 runs. Held signals are handled when `body` returns (or throws).
/// The corresponding C function is `pthread_sigmask(3)`.
func withInterruptsHeld<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
    var held = sigset_t()
    sigemptyset(&held)
    for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGXCPU, SIGPIPE, SIGXFSZ] { sigaddset(&held, signalNumber) }
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &held, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try body()
}

/// Tells the interrupt handler that the file of `slot` is gone or published. Returns only
/// when the handler cannot be reading the slot; when the handler has started, never returns
/// (the signal ends the process).
/// Thread safety: safe from any thread; `slot` is the caller's.
func releasePendingTemporary(_ slot: Int) {
    pendingStates[slot].store(0, ordering: .sequentiallyConsistent)
    // Both sequentially consistent: either the handler saw the slot free, or this load sees
    // that the handler started, and then the record and its directory stay as they are.
    while interruptCleanupStarted.load(ordering: .sequentiallyConsistent) {
        pause()
    }
}

/// The fence of the output the workers of an indexed unpack write at offsets
/// (``registerOrderedOutput(_:)``), as an unretained pointer's bits; 0 for none.
private let pendingOutputFence = Atomic<UInt>(0)

/// Tells the interrupt handler of an output written at offsets by worker threads: on a signal
/// it stops their writes and cuts the file after the bytes written in order
/// (``OrderedOutputFence/cutToOrderedEnd()``), so that standard output redirected to a file
/// keeps what `gzip -dc` would have written by then, not later spans after a hole. The caller
/// keeps `fence` alive until ``releaseOrderedOutput()``. Thread safety: one output at a time.
func registerOrderedOutput(_ fence: OrderedOutputFence) {
    let bits = UInt(bitPattern: Unmanaged.passUnretained(fence).toOpaque())
    pendingOutputFence.store(bits, ordering: .sequentiallyConsistent)
}

/// The output of ``registerOrderedOutput(_:)`` is finished. Returns only when the handler
/// cannot be using its fence; when the handler has started, never returns.
func releaseOrderedOutput() {
    pendingOutputFence.store(0, ordering: .sequentiallyConsistent)
    while interruptCleanupStarted.load(ordering: .sequentiallyConsistent) {
        pause()
    }
}

/// Cuts the registered output back to its bytes written in order. Async-signal-safe.
private func cutPendingOutput() {
    guard let raw = UnsafeRawPointer(bitPattern: pendingOutputFence.load(ordering: .sequentiallyConsistent)) else { return }
    Unmanaged<OrderedOutputFence>.fromOpaque(raw).takeUnretainedValue().cutToOrderedEnd()
}

/// Removes every temporary file registered, each only if its name still refers to the
/// file created. Async-signal-safe: atomics, `fstatat(2)` and `unlinkat(2)` only, called
/// directly (the wrappers in SystemCalls build errors, which allocates).
private func removePendingTemporaries() {
    interruptCleanupStarted.store(true, ordering: .sequentiallyConsistent)
    for slot in 0..<pendingCapacity where pendingStates[slot].load(ordering: .sequentiallyConsistent) == 2 {
        removeTemporary(pendingRecords[slot])
    }
}

/// Removes the file of `record` if its name still refers to the file created.
/// Async-signal-safe: `fstatat(2)` and `unlinkat(2)`, called directly.
private func removeTemporary(_ record: PendingTemporary) {
    withUnsafeBytes(of: record.name) { name in
        let cName = name.baseAddress!.assumingMemoryBound(to: CChar.self)
        var info = stat()
        if fstatat(record.directory, cName, &info, AT_SYMLINK_NOFOLLOW) == 0,
           UInt64(info.st_dev) == record.device, UInt64(info.st_ino) == record.inode {
            unlinkat(record.directory, cName, 0)
        }
    }
}

/// Whether SIGINT was ignored when ``installInterruptCleanup()`` ran: the process is then a
/// background job of a shell without job control, and asks no question (GNU gzip's
/// `foreground`).
private let interruptIgnoredAtStart = Atomic<Bool>(false)

/// Whether the process runs in the foreground as GNU gzip tells it: SIGINT was not ignored
/// when it started (known once ``installInterruptCleanup()`` has run; `true` before).
func runsInForeground() -> Bool {
    !interruptIgnoredAtStart.load(ordering: .sequentiallyConsistent)
}

/// Removes the temporary outputs (and a cache entry being written) when SIGINT, SIGTERM, SIGHUP or SIGXCPU (`ulimit -t`) arrives,
/// erases the progress line shown on a terminal (``progressColumnsShown``), then dies of the
/// same signal, so an interrupted run leaves neither a partial output, a stray temporary file
/// nor a stale line.
/// A signal ignored when the process started (`nohup`, a background job of a shell without
/// job control) stays ignored, as GNU gzip leaves it.
///
/// SIGPIPE and SIGXFSZ are also what the kernel sends this process for its own write to a
/// closed pipe or past the file size limit; that write must fail with `EPIPE` or `EFBIG`
/// instead, so that the run stops and cleans up as after any failed write (BrokenPipe.swift).
/// The caller ignores them for that, and names in `signalsFromOthers` those of the two that
/// had their default action at start: each is then caught, and one sent by another process
/// (`kill -PIPE`) is handled as SIGTERM is, while the kernel's for this process's own write
/// (whose sender is this process) returns at once, and the write fails as if it was ignored.
/// - Parameter signalsFromOthers: SIGPIPE, SIGXFSZ or both; other numbers are a programmer error.
/// Call once, before any thread starts. The corresponding C functions are `signal(2)` and
/// `sigaction(2)`.
public func installInterruptCleanup(signalsFromOthers: [Int32] = []) {
    // Globals are initialised on first use: done here, not in the handler.
    _ = pendingStates[0].load(ordering: .sequentiallyConsistent)
    _ = pendingRecords
    _ = interruptCleanupStarted.load(ordering: .sequentiallyConsistent)
    _ = pendingOutputFence.load(ordering: .sequentiallyConsistent)
    _ = pendingTemporaryEntryPath.load(ordering: .sequentiallyConsistent)
    _ = progressColumnsShown.load(ordering: .sequentiallyConsistent)
    _ = progressStopped.load(ordering: .sequentiallyConsistent)
    _ = progressDrawing.load(ordering: .sequentiallyConsistent)
    for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGXCPU] {
        let previous = signal(signalNumber, SIG_IGN)
        if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
            if signalNumber == SIGINT { interruptIgnoredAtStart.store(true, ordering: .sequentiallyConsistent) }
            continue
        }
        signal(signalNumber) { received in
            cleanUpAndDie(of: received)
        }
    }
    for signalNumber in signalsFromOthers {
        precondition(signalNumber == SIGPIPE || signalNumber == SIGXFSZ, "only SIGPIPE and SIGXFSZ come from writes")
        var action = sigaction()
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_SIGINFO | SA_RESTART
        action.__sigaction_handler.sa_sigaction = { received, info, _ in
            // The kernel sends a failed write's signal as if this process had sent it.
            if let info, info.pointee._sifields._kill.si_pid == getpid() { return }
            cleanUpAndDie(of: received)
        }
        sigaction(signalNumber, &action, nil)
    }
}

/// The handler's work: removes the pending temporary files and cache entry, erases the
/// progress line, and ends the process by `received` with its default action (delivered
/// once the handler returns, the signal being blocked while it runs). Async-signal-safe.
private func cleanUpAndDie(of received: Int32) {
    removePendingTemporaries()
    cutPendingOutput()
    if let path = UnsafePointer<CChar>(bitPattern: pendingTemporaryEntryPath.load(ordering: .sequentiallyConsistent)) {
        unlink(path)
    }
    eraseProgressLineFromSignalHandler()
    signal(received, SIG_DFL)
    raise(received)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A closed pipe on an output (`gzstream unpack -c big.gz | head -1`) ends the run as it ends
// every Unix filter: the process dies of SIGPIPE, so that the shell reports 141 and
// `set -o pipefail` scripts see it. The signal is held back while the run goes on: writes fail
// with EPIPE, the run stops writing, cleans up (worker threads joined, temporary files
// removed), and only then does the process die of the signal. A caller that ignored SIGPIPE
// (`trap '' PIPE`) gets GNU gzip's behaviour instead: one line on stderr, exit status 1.

/// Whether SIGPIPE, as the process started, would end it (the default action, not blocked);
/// then ignores SIGPIPE, so that a write to a closed pipe fails with `EPIPE` instead.
/// Call once, before any thread starts.
///
/// A signal ignored at `exec` stays ignored and a blocked one stays blocked; a caught one is
/// reset to the default action, so those are the only states a new process can start in.
/// The corresponding C functions are `signal(2)` and `sigprocmask(2)`.
public func holdBrokenPipeSignal() -> Bool {
    let previous = signal(SIGPIPE, SIG_IGN)
    var mask = sigset_t()
    sigprocmask(SIG_BLOCK, nil, &mask)
    return unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_DFL, to: Int.self)
        && sigismember(&mask, SIGPIPE) == 0
}

/// Whether SIGXFSZ, as the process started, would end it (the default action, not blocked);
/// then ignores it, so that a write past the file size limit (`ulimit -f`) fails with `EFBIG`,
/// an error that removes the temporary output, instead of killing the process.
/// Call once, before any thread starts.
/// The corresponding C functions are `signal(2)` and `sigprocmask(2)`.
public func holdFileSizeSignal() -> Bool {
    let previous = signal(SIGXFSZ, SIG_IGN)
    var mask = sigset_t()
    sigprocmask(SIG_BLOCK, nil, &mask)
    return unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_DFL, to: Int.self)
        && sigismember(&mask, SIGXFSZ) == 0
}

/// Ends the process by SIGPIPE with its default action, as a write to the closed pipe would
/// have. Call after the run has cleaned up, from the main thread.
/// The corresponding C function is `raise(3)`.
public func dieOfBrokenPipe() -> Never {
    signal(SIGPIPE, SIG_DFL)
    var pipeOnly = sigset_t()
    sigemptyset(&pipeOnly)
    sigaddset(&pipeOnly, SIGPIPE)
    sigprocmask(SIG_UNBLOCK, &pipeOnly, nil)
    raise(SIGPIPE)
    // Not reached: the default action of SIGPIPE ends the process.
    exit(ExitStatus.error.rawValue)
}

import GZStreamCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A closed pipe on an output fails write(2) with EPIPE, so that the run can stop and clean up;
// then the process dies of SIGPIPE, unless the caller had ignored it (BrokenPipe.swift).
let brokenPipeIsFatal = holdBrokenPipeSignal()
// A write past the file size limit (`ulimit -f`) fails with EFBIG, an error that removes the
// temporary output, instead of SIGXFSZ killing the process and leaving it behind.
signal(SIGXFSZ, SIG_IGN)

// A standard descriptor the caller closed (`<&-`) must not be reused by the next open (a
// temporary output would become "standard input"): hold it with /dev/null opened the other
// way round, so that reading fd 0 or writing fd 1 and 2 still fails with EBADF.
for (descriptor, flags) in [(STDIN_FILENO, O_WRONLY), (STDOUT_FILENO, O_RDONLY), (STDERR_FILENO, O_RDONLY)]
where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
    let placeholder = open("/dev/null", flags)
    if placeholder >= 0 && placeholder != descriptor {
        dup2(placeholder, descriptor)
        close(placeholder)
    }
}
installInterruptCleanup()
var environment = CommandEnvironment.process()
environment.reportsBrokenPipe = !brokenPipeIsFatal
let result = runCommand(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment)
if result.brokenPipe && brokenPipeIsFatal { dieOfBrokenPipe() }
exit(result.status.rawValue)

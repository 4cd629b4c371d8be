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
let fileSizeSignalIsFatal = holdFileSizeSignal()

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
// SIGPIPE and SIGXFSZ that another process sends still end the run, after its cleanup, as
// GNU gzip's do (unless they were ignored at start).
installInterruptCleanup(signalsFromOthers: (brokenPipeIsFatal ? [SIGPIPE] : []) + (fileSizeSignalIsFatal ? [SIGXFSZ] : []))
// The arguments' bytes as the system passed them: CommandLine.arguments decodes them as UTF-8
// and replaces what is not, so a file named in ISO 8859-1 could not be opened.
let arguments = (0..<Int(CommandLine.argc)).map { index in
    let argument = CommandLine.unsafeArgv[index]!
    return Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument)))
}
var environment = CommandEnvironment.process()
environment.reportsBrokenPipe = !brokenPipeIsFatal
environment.gzipVariable = getenv("GZIP").map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) }
// Called through a link named gzip, gunzip, zcat or gzcat, it acts as that program.
let result = runCommand(arguments: Array(arguments.dropFirst()), programName: arguments.first ?? Array("gzstream".utf8),
                        environment: environment)
if result.brokenPipe && brokenPipeIsFatal { dieOfBrokenPipe() }
exit(result.status.rawValue)

import GZStreamCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A closed pipe on standard output is reported as EPIPE by write(2) and handled quietly.
signal(SIGPIPE, SIG_IGN)
installInterruptCleanup()
let status = runCommand(arguments: Array(CommandLine.arguments.dropFirst()), environment: .process())
exit(status.rawValue)

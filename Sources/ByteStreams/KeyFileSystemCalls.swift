#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The calls a key file needs beyond `open` and `read`: kept apart from the file system calls the
// CLI uses, so that the key file's checks do not depend on how those change.
extension SystemCalls {
    /// The status of an open key file. - Throws: ``ByteStreamError`` with operation `"stat"`.
    /// The corresponding C function is `fstat(2)`.
    package static func keyFileStatus(_ fd: Int32, target: String) throws -> stat {
        var info = stat()
        while fstat(fd, &info) != 0 {
            if errno == EINTR { continue }
            throw ByteStreamError(.system(errno: errno), operation: "stat", target: target)
        }
        return info
    }

    /// The effective user of the process. The corresponding C function is `geteuid(2)`.
    package static var effectiveUser: uid_t { geteuid() }
}

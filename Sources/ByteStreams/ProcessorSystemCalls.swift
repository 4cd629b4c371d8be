#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SystemCalls {
    /// The number of processors this process may run on: its CPU affinity mask, as `taskset`
    /// or a container's cpuset sets it, at least 1.
    ///
    /// Reads the kernel's `Cpus_allowed` line of `/proc/self/status` on Linux (Glibc's
    /// `sched_getaffinity` is not visible to Swift); falls back to the
    /// processors online when that file cannot be read, and uses them elsewhere.
    /// Blocks on `/proc` only. Thread safety: safe from any thread.
    /// The corresponding C functions are `fopen(3)`/`fgets(3)` on `/proc/self/status` and
    /// `sysconf(_SC_NPROCESSORS_ONLN)`.
    package static func allowedProcessorCount() -> Int {
        let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #if os(Linux)
        guard let file = fopen("/proc/self/status", "r") else { return online }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("Cpus_allowed:") else { continue }
            let count = text.dropFirst("Cpus_allowed:".count).reduce(0) { sum, character in
                sum + (character.hexDigitValue.map { $0.nonzeroBitCount } ?? 0)
            }
            return count > 0 ? count : online
        }
        #endif
        return online
    }

    /// The effective user ID of this process: the owner of the files it creates and the user
    /// the kernel checks permissions for. The corresponding C function is `geteuid(2)`.
    package static var effectiveUserID: UInt32 { geteuid() }

    /// This process's ID. The corresponding C function is `getpid(2)`.
    package static var processID: Int32 { getpid() }

    /// The permission bits that this process's umask removes from a new file's mode, read
    /// without changing it for longer than the two calls; not safe against another thread
    /// setting the umask at the same moment.
    /// The corresponding C function is `umask(2)` (called twice: it can only be read by setting it).
    package static func fileCreationMask() -> UInt32 {
        let mask = umask(0)
        umask(mask)
        return UInt32(mask)
    }
}

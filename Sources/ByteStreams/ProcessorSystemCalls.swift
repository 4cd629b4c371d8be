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

    /// How many of the processors this process may run on (``allowedProcessorCount()``) no
    /// other thread wants at this moment: that count less the threads the kernel counts as
    /// runnable besides the caller's, the median of three readings a millisecond apart, in
    /// `0...allowedProcessorCount()`; `nil` where the count cannot be read (not Linux).
    ///
    /// The runnable count is `/proc/loadavg`'s fourth field (`runnable/total`), counted over
    /// the whole machine, not only the processors allowed, and at one instant, not averaged
    /// as the load average is: a busy loop on another core counts from the moment it runs. A
    /// parallel reader asks this before it starts workers that would only take turns with
    /// someone else's on the same cores. Blocks about 2 ms. Thread safety: safe from any thread.
    /// The corresponding C functions are `open(2)`/`pread(2)` on `/proc/loadavg`.
    package static func idleProcessorEstimate() -> Int? {
        #if os(Linux)
        let allowed = allowedProcessorCount()
        let descriptor = Glibc.open("/proc/loadavg", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = Glibc.close(descriptor) }
        var readings: [Int] = []
        var text = [UInt8](repeating: 0, count: 128)
        for reading in 0..<3 {
            if reading > 0 { usleep(1000) }
            let count = text.withUnsafeMutableBytes { Glibc.pread(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0, let runnable = runnableCount(inLoadAverage: text[0..<count]) else { return nil }
            readings.append(runnable)
        }
        let runnable = readings.sorted()[1]
        // The caller is runnable itself while it reads.
        return min(allowed, max(0, allowed - max(0, runnable - 1)))
        #else
        return nil
        #endif
    }

    /// The `runnable` of `/proc/loadavg`'s `runnable/total` field ("0.52 0.58 0.59 2/345 1234").
    package static func runnableCount(inLoadAverage text: ArraySlice<UInt8>) -> Int? {
        let fields = text.split(separator: UInt8(ascii: " "))
        guard fields.count >= 4, let slash = fields[3].firstIndex(of: UInt8(ascii: "/")) else { return nil }
        return Int(String(decoding: fields[3][..<slash], as: UTF8.self))
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

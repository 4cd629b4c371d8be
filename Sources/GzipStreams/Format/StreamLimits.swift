import ByteStreams

// The ranges every compressing and decompressing stream of this package checks its arguments
// against, and the one default thread count; the command line and the cache take theirs from
// here too, so a range is written once.

/// The compression levels every writer takes: 0 (stored) to 9 (best).
package let compressionLevels = 0...9

/// The worker thread counts every parallel stream takes: 1 to 256.
package let threadCounts = 1...256

/// The default number of worker threads: the processors this process may run on (its CPU
/// affinity, as `taskset` or a container's cpuset limit it), 1 to 256. Does not block;
/// thread-safe. The corresponding C function is `sched_getaffinity(2)`, through
/// ``SystemCalls/allowedProcessorCount()``.
package var defaultThreadCount: Int {
    min(max(1, SystemCalls.allowedProcessorCount()), threadCounts.upperBound)
}

import Foundation
import GzipStreams
import Testing
import TestSupport

/// The directory an index goes into, against another process that swaps the file's directory
/// for a link to another directory while gzstream runs: the index must land beside the file
/// that was read, never in a directory found again by its path.
@Suite("An index is written in the directory its file was read from, not one found again by path",
       .onDedicatedThreads)
struct IndexDirectoryRaceTests {
    /// Swaps `d` and `dlink` (a link to `elsewhere`) with renameat2's RENAME_EXCHANGE as fast as
    /// it can, until killed: python3's ctypes, as Swift's Glibc does not import renameat2.
    static let swapper = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        while True:
            libc.renameat2(-100, b"d", -100, b"dlink", 2)
        """

    /// Reads `x.gz.gzidx` in the directory `directory` (a descriptor), if any, removes it, and
    /// says whether it describes that directory's `x.gz` (its compressed size).
    private func takeIndex(in directory: Int32, fileSize: Int) -> Bool? {
        let fd = openat(directory, "x.gz.gzidx", O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer {
            close(fd)
            unlinkat(directory, "x.gz.gzidx", 0)
        }
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0, let index = try? GzipIndex(gzidx: Array(bytes[0..<count])) else { return false }
        return index.compressedSize == UInt64(fileSize)
    }

    @Test("index, test --write-index and unpack --write-index, 30 runs each while the directory is swapped for a link")
    func swappedDirectory() throws {
        try withScratch { scratch in
            let manager = FileManager.default
            try manager.createDirectory(atPath: scratch.path("d"), withIntermediateDirectories: false)
            try manager.createDirectory(atPath: scratch.path("elsewhere"), withIntermediateDirectories: false)
            #expect(symlink("elsewhere", scratch.path("dlink")) == 0)
            // Two files of different sizes: an index names the size of the file it describes.
            let packed = try gzstream(["pack", "-c"], in: scratch, input: .bytes(sampleText(byteCount: 200_000, seed: 3))).stdout
            let other = try gzstream(["pack", "-c"], in: scratch, input: .bytes(sampleText(byteCount: 150_000, seed: 4))).stdout
            _ = try scratch.write("d/x.gz", packed)
            _ = try scratch.write("elsewhere/x.gz", other)
            // The two directories by descriptor, whatever their names become.
            let first = open(scratch.path("d"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            let second = open(scratch.path("elsewhere"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer {
                close(first)
                close(second)
            }
            let swap = Process()
            swap.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            swap.arguments = ["-c", Self.swapper]
            swap.currentDirectoryURL = URL(fileURLWithPath: scratch.path(""))
            try swap.run()
            defer {
                // SIGKILL: the child inherits the test thread's signal mask, which blocks SIGTERM.
                kill(swap.processIdentifier, SIGKILL)
                swap.waitUntilExit()
            }
            var misplaced: [String] = []
            var written = 0
            for arguments in [["index", "-f", "d/x.gz"], ["test", "-f", "--write-index", "d/x.gz"],
                              ["unpack", "-c", "-f", "--write-index", "d/x.gz"]] {
                for run in 0..<30 {
                    // A run may fail (the swap can leave no x.gz at d/ for a moment): only where
                    // an index lands is checked.
                    _ = try gzstream(arguments, in: scratch)
                    for (directory, size) in [(first, packed.count), (second, other.count)] {
                        guard let right = takeIndex(in: directory, fileSize: size) else { continue }
                        written += 1
                        if !right { misplaced.append("\(arguments.joined(separator: " ")), run \(run)") }
                    }
                }
            }
            #expect(misplaced.isEmpty, "\(misplaced)")
            #expect(written > 0)
        }
    }
}

import ByteStreams
import Dispatch

// A stream captured by a `@Sendable` closure that runs on another thread while the caller
// keeps it.
func shareWithAQueue() throws {
    let input = MemoryInputStream(bytes: [1, 2, 3])
    DispatchQueue.global().async { _ = try? input.readChunk(maxLength: 1) }
    _ = try input.readChunk(maxLength: 1)
}

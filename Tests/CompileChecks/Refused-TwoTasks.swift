import ByteStreams

// One stream captured by two tasks: each closure is `sending`, and the second one sends a
// stream the first task may be using.
func shareOneStreamBetweenTwoTasks() async throws {
    let input = MemoryInputStream(bytes: [1, 2, 3])
    let first = Task { try input.readChunk(maxLength: 1) }
    let second = Task { try input.readChunk(maxLength: 1) }
    _ = try await (first.value, second.value)
}

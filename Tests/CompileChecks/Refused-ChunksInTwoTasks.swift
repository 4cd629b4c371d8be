import ByteStreams

// The chunks of one stream iterated by two tasks at once.
func iterateOneStreamTwice() async throws {
    let chunks = MemoryInputStream(bytes: [1, 2, 3]).chunks(maxLength: 1)
    let first = Task { for try await _ in chunks {} }
    let second = Task { for try await _ in chunks {} }
    _ = try await (first.value, second.value)
}

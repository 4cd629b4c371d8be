import ByteStreams

// The lines of one stream iterated by two tasks at once.
func iterateLinesTwice() async throws {
    let lines = MemoryInputStream(bytes: Array("a\nb\n".utf8)).lines
    let first = Task { for try await _ in lines {} }
    let second = Task { for try await _ in lines {} }
    _ = try await (first.value, second.value)
}

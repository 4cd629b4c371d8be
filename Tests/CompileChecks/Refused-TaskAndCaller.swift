import ByteStreams

// A stream moved into a task and then used by the caller while the task may run.
func useAfterSending() async throws {
    let output = MemoryOutputStream()
    let writer = Task { try await output.write(contentsOf: [1, 2, 3] as [UInt8]) }
    output.close()
    try await writer.value
}

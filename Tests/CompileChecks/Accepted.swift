import ByteStreams

// A stream made here moves into one task, which then owns it.
func moveIntoOneTask() async throws -> [UInt8] {
    let input = MemoryInputStream(bytes: [1, 2, 3])
    let reader = Task { try input.readToEnd(limit: 10) }
    return try await reader.value
}

// A stream handed over with `sending` moves on into a task.
func handOver(_ input: sending ByteInputStream) -> Task<[UInt8], any Error> {
    Task { try input.readToEnd(limit: 10) }
}

// Iterating a stream's chunks in the task that owns the stream.
func iterateInATask() async throws -> Int {
    let input = MemoryInputStream(bytes: Array(repeating: 7, count: 10_000))
    let counter = Task {
        var total = 0
        for try await chunk in input.chunks() { total += chunk.count }
        return total
    }
    return try await counter.value
}

// An accepted connection's streams are the caller's: the pair moves into one task.
func serveOneConnection(_ listener: SocketListener) async throws {
    let connection = try listener.accept()
    let echo = Task {
        connection.input.open()
        connection.output.open()
        try connection.input.copy(to: connection.output)
        try connection.output.closeOrThrow()
        connection.input.close()
    }
    try await echo.value
}

// The listener itself moves into a task with `sending`.
func acceptInATask(_ listener: sending SocketListener) -> Task<Void, any Error> {
    Task {
        let connection = try listener.accept()
        connection.input.close()
        connection.output.close()
    }
}

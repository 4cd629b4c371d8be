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

// The blocking writeAll compiles without `await` in an async function: the asynchronous
// write has a name of its own, so it does not take over the call.
func blockingWriteInAnAsyncFunction() async throws {
    let output = MemoryOutputStream()
    try output.writeAll(Array("sync".utf8))
    try await output.write(contentsOf: Array(" and async".utf8))
    try output.closeOrThrow()
}

// A listener is Sendable: one task iterates its connections while another closes it.
func closeAListenerAnotherTaskIterates() async throws {
    let listener = try SocketListener(port: 0)
    let server = Task {
        for try await connection in listener.connections {
            connection.input.close()
            connection.output.close()
        }
    }
    try listener.close()
    try await server.value
}

// Each connection moves into a task of its own.
func serveEachConnectionInATask(_ listener: SocketListener) async throws {
    for try await connection in listener.connections {
        Task {
            for try await chunk in connection.input.chunks() {
                try await connection.output.write(contentsOf: chunk)
            }
            try await connection.output.finishAndClose()
        }
    }
}

// A connection's two halves, separated, move into two tasks: one reads while the other writes.
func readAndWriteInTwoTasks(_ connection: sending SocketConnection) async throws -> Int {
    try await connection.separated { input, output in
        let writer = Task {
            try await output.write(contentsOf: [UInt8](repeating: 1, count: 1 << 20))
            try await output.finishAndClose()
        }
        let reader = Task {
            var total = 0
            for try await chunk in input.chunks() { total += chunk.count }
            return total
        }
        try await writer.value
        return try await reader.value
    }
}

import ByteStreams

// Streams and the chunk sequence over one are not `Sendable`.
func requireSendable<T: Sendable>(_ value: T) {}

func streamsAreNotSendable() {
    requireSendable(MemoryInputStream(bytes: [1]).chunks())
}

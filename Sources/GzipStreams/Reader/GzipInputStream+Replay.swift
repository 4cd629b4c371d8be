import ByteStreams

// ISA-L's fallback to zlib within a member (see `GzipInputStream.Inflater.isal`): the member's
// deflate data is kept (or found again by seeking) from its first byte, and when ISA-L fails
// zlib decodes the member again, drops the bytes already returned and decodes the rest, so
// the outcome (bytes, error, offset) is zlib's.
extension GzipInputStream {
    /// Readies ISA-L for a member whose deflate data starts at the current position, and marks
    /// that position for a replay (on an input that cannot seek, its data is kept from here).
    func startMemberWithIsal(_ isal: IsalInflater) {
        isal.reset()
        memberUsesZlib = false
        input.markForRewind(keepLimit: replayCapacity)
    }

    /// The most bytes kept for a replay: ``replayLimit``, or two chunks when they are larger.
    var replayCapacity: Int { max(Self.replayLimit, 2 * chunkSize) }

    /// Decodes the current member again with zlib from its first deflate byte, skipping the
    /// bytes already returned, and leaves zlib to decode the rest of it.
    /// - Returns: `false` when the member's bytes cannot be had again (an input that cannot
    ///   seek, past ``replayLimit``).
    /// - Throws: zlib's error when it fails within the bytes already returned.
    func continueMemberWithZlib() throws -> Bool {
        guard input.rewindToMark() else { return false }
        if let zstream { zstream.reset() } else { zstream = try ZStream(inflate: ()) }
        zstream?.seeksBlockBoundary = false
        decoderFilledOutput = false
        memberUsesZlib = true
        bytesToSkip = member.uncompressedSize
        try skipReturnedBytes()
        return true
    }

    /// Decodes with zlib, and drops, the ``bytesToSkip`` bytes of the member already returned;
    /// resumable where a scheduled inner stream has nothing yet.
    /// - Throws: zlib's error when it fails within those bytes.
    func skipReturnedBytes() throws {
        let scratchSize = 32 * 1024
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        while bytesToSkip > 0, state == .deflateData {
            guard let zstream else { throw ByteStreamError(.notOpen, operation: "read") }
            let (produced, error) = try inflateCall(zstream, into: scratch, capacity: Int(min(Int64(scratchSize), bytesToSkip)))
            bytesToSkip -= Int64(produced)
            if let error { throw error }
        }
        bytesToSkip = 0
    }
}

import ByteStreams

// ISA-L's fallback to zlib within a member (see `GzipInputStream.Inflater.isal`): the member's
// deflate data is kept (or found again by seeking) from its first byte, and when ISA-L fails
// zlib decodes the member again, drops the bytes already returned and decodes the rest, so
// the outcome (bytes, error, offset) is zlib's.
extension GzipInputStream {
    /// Readies ISA-L for a member whose deflate data starts at the current position, and,
    /// on an input that cannot seek, starts keeping that data for a replay.
    func startMemberWithIsal(_ isal: IsalInflater) {
        isal.reset()
        memberUsesZlib = false
        deflateStart = position
        if rewindBase == nil {
            replay.removeAll(keepingCapacity: true)
            // Growing by doubling would hold the old and the new copy at once.
            replay.reserveCapacity(replayCapacity)
            isRecording = true
            record(inputBuffer + inputStart, count: inputEnd - inputStart)
        }
    }

    /// Decodes the current member again with zlib from its first deflate byte, skipping the
    /// bytes already returned, and leaves zlib to decode the rest of it.
    /// - Returns: `false` when the member's bytes cannot be had again (an input that cannot
    ///   seek, past ``replayLimit``).
    /// - Throws: zlib's error when it fails within the bytes already returned.
    func continueMemberWithZlib() throws -> Bool {
        if let rewindBase {
            guard inner.setProperty(rewindBase + deflateStart, forKey: .fileCurrentOffset) else { return false }
        } else {
            guard isRecording else { return false }
            isRecording = false
            replayPending = replay
            replayCursor = 0
            replay = []
        }
        bufferOffset = deflateStart
        inputStart = 0
        inputEnd = 0
        if let zstream { zstream.reset() } else { zstream = try ZStream(inflate: ()) }
        decoderFilledOutput = false
        memberUsesZlib = true
        bytesToSkip = memberSize
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

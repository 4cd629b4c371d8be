import ByteStreams

// The compressed-input buffer of GzipInputStream: refill from the inner stream (or from a
// member's replay), byte-wise peek and take, push back of what ISA-L read ahead, and the
// checkpoint that undoes a parsing step a scheduled inner stream cut short.
extension GzipInputStream {
    /// What a parsing step changes before it can fail for want of input, and the input it
    /// consumed: restored, and the input given back, when the inner stream has nothing yet.
    struct Checkpoint {
        var state: State
        var position: Int64
        var memberIndex: Int
        var memberOffset: Int64
        /// The input from `position` on, as far as it has been read.
        var bytes: [UInt8]
    }

    /// The compressed-input offset of the next unread byte.
    var position: Int64 { bufferOffset + Int64(inputStart) }

    /// Reads the next chunk from the inner stream once the buffer is used up; `false` at its end.
    func refill() throws -> Bool {
        bufferOffset += Int64(inputEnd)
        inputStart = 0
        inputEnd = 0
        let count: Int
        if replayCursor < replayPending.count {
            count = min(chunkSize, replayPending.count - replayCursor)
            replayPending.withUnsafeBufferPointer {
                inputBuffer.update(from: $0.baseAddress! + replayCursor, count: count)
            }
            replayCursor += count
            if replayCursor == replayPending.count { replayPending = [] }
        } else {
            count = inner.read(inputBuffer, maxLength: chunkSize)
            if count < 0 {
                throw inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read")
            }
            // A scheduled inner stream that has nothing yet returns 0 and stays open.
            if count == 0, inner.streamStatus == .open { throw WouldBlock() }
        }
        inputEnd = count
        if isRecording { record(inputBuffer, count: count) }
        checkpoint?.bytes.append(contentsOf: UnsafeBufferPointer(start: inputBuffer, count: count))
        return count > 0
    }

    /// Starts a step: a parsing step of a stream that follows a scheduled inner stream keeps
    /// what it needs to be undone; any other step needs none.
    func beginStep() {
        guard innerEvents != nil, state == .streamStart || state == .betweenMembers || state == .trailer else {
            checkpoint = nil
            return
        }
        checkpoint = Checkpoint(state: state, position: position, memberIndex: memberIndex, memberOffset: memberOffset,
                                bytes: Array(UnsafeBufferPointer(start: inputBuffer + inputStart,
                                                                 count: inputEnd - inputStart)))
    }

    /// Undoes a parsing step that ran out of input: its state back, and the bytes it consumed
    /// put in front of the input, to be parsed again when more has come. The bytes kept are
    /// those of one header, trailer or gap between members.
    func rollBack() {
        guard let checkpoint else { return }
        self.checkpoint = nil
        state = checkpoint.state
        memberIndex = checkpoint.memberIndex
        memberOffset = checkpoint.memberOffset
        replayPending = checkpoint.bytes + replayPending[min(replayCursor, replayPending.count)...]
        replayCursor = 0
        bufferOffset = checkpoint.position
        inputStart = 0
        inputEnd = 0
    }

    /// Keeps `count` bytes of the member's deflate data for a replay, or stops keeping them
    /// once the member has passed ``replayLimit``.
    func record(_ bytes: UnsafePointer<UInt8>, count: Int) {
        guard replay.count + count <= replayCapacity else {
            isRecording = false
            replay.removeAll(keepingCapacity: true)
            return
        }
        replay.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
    }

    /// The most bytes kept for a replay: ``replayLimit``, or two chunks when they are larger.
    var replayCapacity: Int { max(Self.replayLimit, 2 * chunkSize) }

    /// The most bytes ISA-L can have read past the end of deflate data: its 64-bit bit buffer.
    static let maximumReadAhead = 8

    /// Puts `bytes`, which directly precede the unread input, back in front of it.
    func pushBack(_ bytes: [UInt8]) {
        let count = bytes.count
        guard count > 0 else { return }
        precondition(count <= Self.maximumReadAhead)
        if inputStart < count {
            let unread = inputEnd - inputStart
            UnsafeMutableRawPointer(inputBuffer + count).copyMemory(from: inputBuffer + inputStart, byteCount: unread)
            bufferOffset += Int64(inputStart - count)
            inputStart = count
            inputEnd = count + unread
        }
        inputStart -= count
        for index in 0..<count { inputBuffer[inputStart + index] = bytes[index] }
    }

    func peekByte() throws -> UInt8? {
        if inputStart == inputEnd, try !refill() { return nil }
        return inputBuffer[inputStart]
    }

    func nextByte() throws -> UInt8? {
        guard let byte = try peekByte() else { return nil }
        inputStart += 1
        return byte
    }
}

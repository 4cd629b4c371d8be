import ByteStreams

// The deflate data of a member for GzipInputStream: one inflate loop over any RawInflater
// (zlib's or ISA-L's), the output limit, and the accounting (CRC-32, sizes) of what it gives.
extension GzipInputStream {
    /// Inflates into `buffer`; returns the bytes produced, `0` when the member's deflate data
    /// ended without producing more. ISA-L decodes unless it failed in this member; when it
    /// fails (invalid data, or the input ends inside the member), zlib takes the member over
    /// if it can (see ``Inflater/isal``), so the outcome is zlib's.
    func inflate(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if let isal, !memberUsesZlib {
            let capacity = seekBoundaryIfDue(isal, capacity: outputCapacity(maxLength))
            let (produced, failure) = try inflateCall(isal, into: buffer, capacity: capacity)
            // On a failure the bytes of this call are left out: ISA-L can inflate a few bytes past
            // the point where zlib stops, and zlib's bytes replace them.
            if failure != nil, try continueMemberWithZlib() {
                return try inflate(into: buffer, maxLength: maxLength)
            }
            return try give(buffer, produced: produced, then: failure)
        }
        if bytesToSkip > 0 {
            try skipReturnedBytes()
            if state != .deflateData { return 0 }
        }
        guard let zstream else { throw ByteStreamError(.notOpen, operation: "read") }
        let capacity = seekBoundaryIfDue(zstream, capacity: outputCapacity(maxLength))
        let (produced, failure) = try inflateCall(zstream, into: buffer, capacity: capacity)
        return try give(buffer, produced: produced, then: failure)
    }

    /// Tells `decoder` whether its next call should stop at a block boundary (when
    /// ``indexRecorder`` has an access point due) and cuts the call's room to end where one
    /// becomes due, so that the search begins at the same plain offset whatever the read sizes.
    /// - Returns: The room for the call: `capacity`, or less.
    private func seekBoundaryIfDue(_ decoder: some RawInflater, capacity: Int) -> Int {
        boundaryFound = nil
        guard let indexRecorder else { return capacity }
        let plain = uncompressedByteCount
        decoder.seeksBlockBoundary = indexRecorder.seeksBoundary(plainOffset: plain, position: input.position)
        guard let due = indexRecorder.bytesUntilPointDue(plainOffset: plain) else { return capacity }
        return Int(min(Int64(capacity), due))
    }

    /// The bytes one inflate call made, then its `failure` if any: thrown now when there are
    /// no bytes, else kept for the next read, so that what a caller gets does not depend on
    /// buffer sizes. The bytes are accounted (CRC-32, sizes, the output limit).
    private func give(_ buffer: UnsafeMutablePointer<UInt8>, produced: Int, then failure: GzipError?) throws -> Int {
        if let failure {
            if produced == 0 { throw failure }
            pendingError = failure
        }
        let given = try account(buffer, produced: produced)
        try indexRecorder?.record(buffer, count: given, plainEnd: uncompressedByteCount, boundary: boundaryFound)
        boundaryFound = nil
        return given
    }

    /// One inflate call into `buffer` through `decoder`, refilling the input as needed, until it
    /// produces bytes, the deflate data ends (state `.trailer`, the bytes the decoder read past
    /// it put back for the trailer) or the data is invalid or cut short (returned, so that the
    /// bytes before it can be given first). Accounts nothing. Generic, so that each decoder's
    /// calls are direct: one call per buffer, none per byte.
    /// - Throws: The inner stream's error; ``GzipError/zlibFailure(code:message:)`` when the
    ///   library fails.
    func inflateCall<Decoder: RawInflater>(_ decoder: Decoder, into buffer: UnsafeMutablePointer<UInt8>,
                                           capacity: Int) throws -> (produced: Int, failure: GzipError?) {
        var produced = 0
        while true {
            // Read more only when the decoder needs it: after a call that filled its room, it may
            // hold output that needs no more input (the rest of a match, symbols whose bits it
            // took: after a sync flush, all of them). Read then, and those bytes would wait for
            // the peer's next bytes: forever, for a peer that sync-flushed and waits for an
            // answer. (Asking it first on every read would instead return a short read at each
            // refill: unpack of a 256 MiB gzip -6 file with ISA-L, median 0.49 s against 0.45 s.)
            var inputEnded = false
            if !input.hasUnreadBytes, !decoderFilledOutput, try !input.refill() {
                guard Decoder.stepsAfterInputEnd else {
                    // ISA-L judges a block header only whole: invalid data it already holds
                    // outranks the end.
                    if let (reason, bytesAfter) = decoder.invalidAtEndOfInput() {
                        return (produced, GzipError.invalidDeflateData(member: member.index, message: reason,
                                                                       offset: input.position - Int64(bytesAfter)))
                    }
                    return (produced, GzipError.truncated(member: member.index, part: .deflateData, offset: input.position))
                }
                // zlib may still hold output without more input: one more call gives it.
                inputEnded = true
            }
            let room = capacity - produced
            let step = decoder.step(input: input.buffer + input.start, inputCount: input.end - input.start,
                                    output: buffer + produced, outputCapacity: room)
            decoderFilledOutput = step.produced == room
            if inputEnded, produced + step.produced == 0, !step.outcome.isStreamEnd {
                // The last call's verdict first: invalid data found before the end outranks it.
                if case .invalid(let reason) = step.outcome {
                    return (0, GzipError.invalidDeflateData(member: member.index, message: reason, offset: input.position))
                }
                return (0, GzipError.truncated(member: member.index, part: .deflateData, offset: input.position))
            }
            input.start += step.consumed
            produced += step.produced
            switch step.outcome {
            case .streamEnd(let readAhead):
                decoderFilledOutput = false
                input.pushBack(readAhead)
                input.stopKeeping()
                state = .trailer
                return (produced, nil)
            case .progress:
                if let (bits, bytesAfter) = decoder.blockBoundaryFound {
                    // The boundary sought: the call ends there, so that the bytes before it are
                    // those of one call.
                    input.pushBack(bytesAfter)
                    boundaryFound = (input.position, bits)
                    return (produced, nil)
                }
                if produced > 0 { return (produced, nil) }
            case .stalled(let error):
                if produced > 0 { return (produced, nil) }
                if input.hasUnreadBytes { throw error }
            case .invalid(let reason):
                return (produced, GzipError.invalidDeflateData(member: member.index, message: reason, offset: input.position))
            case .failed(let error):
                throw error
            }
        }
    }

    /// The room for one inflate call: `maxLength`, cut to one byte past the output limit.
    func outputCapacity(_ maxLength: Int) -> Int {
        var capacity = min(maxLength, Int(UInt32.max))
        if let limit = maximumOutputSize.map(Int64.init) {
            // One byte past the limit is enough to know it is exceeded.
            let remaining = limit - uncompressedByteCount
            if remaining < Int64(capacity) { capacity = Int(remaining) + 1 }
        }
        return capacity
    }

    /// Adds `produced` bytes at `buffer` to the member's CRC-32 and sizes, up to the output
    /// limit: past it, only the bytes up to the limit count, and the next read fails with
    /// ``GzipError/outputLimitExceeded(limit:offset:)`` (so exactly `maximumOutputSize` bytes
    /// come out, whatever the read sizes).
    /// - Returns: The bytes to return: `produced`, or fewer at the limit.
    /// - Throws: ``GzipError/outputLimitExceeded(limit:offset:)`` when no byte is left under it.
    func account(_ buffer: UnsafeMutablePointer<UInt8>, produced: Int) throws -> Int {
        guard produced > 0 else { return 0 }
        var given = produced
        if let limit = maximumOutputSize.map(Int64.init), uncompressedByteCount + Int64(produced) > limit {
            given = Int(limit - uncompressedByteCount)
            let error = GzipError.outputLimitExceeded(limit: limit, offset: input.position)
            if given == 0 { throw error }
            pendingError = error
        }
        if trailerChecks == nil {
            member.crc32 = crc32(member.crc32, UnsafeRawBufferPointer(start: buffer, count: given))
        }
        member.uncompressedSize += Int64(given)
        uncompressedByteCount += Int64(given)
        return given
    }
}

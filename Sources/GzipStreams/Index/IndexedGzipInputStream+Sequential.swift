import ByteStreams

// The sequential takeover of IndexedGzipInputStream: when a span cannot be decoded as the index
// says, a GzipInputStream goes on from the start of the member it is in, giving again (and
// checking the CRC-32 of) the bytes already returned.

extension IndexedGzipInputStream {
    /// A span could not be decoded as it should: the sequential reader takes over when it can,
    /// else the error is thrown.
    func failed(_ reason: SpanStop, trailerCheck: (stored: GzipTrailer, computed: GzipTrailer, offset: Int64)?) throws {
        if case .writeFailed(let error) = reason {
            stopRun()
            throw error
        }
        if case .boundary(let offset) = reason {
            // After a checked member: the sequential reader's rules for what follows a member.
            // A held span decoded to that member's end, as a sequential decode would.
            if held?.span == span { held!.checked = true }
            stopRun()
            startSequential(at: offset, membersBefore: max(membersRead, 1), plainBefore: chunkPlainEnd)
            return
        }
        guard fromStart, let start = memberStart else {
            stopRun()
            if let trailerCheck {
                let member = 0
                if trailerCheck.stored.crc32 != trailerCheck.computed.crc32 {
                    throw GzipError.crcMismatch(member: member, stored: trailerCheck.stored.crc32,
                                                computed: trailerCheck.computed.crc32, offset: trailerCheck.offset)
                }
                throw GzipError.lengthMismatch(member: member, stored: trailerCheck.stored.isize,
                                               computed: trailerCheck.computed.isize, offset: trailerCheck.offset + 4)
            }
            switch reason {
            case .mismatch(let error): throw error
            case .failed(let error as GzipError): throw IndexedGzipError.undecodable(point: span, error: error)
            case .failed(let error): throw error
            case .boundary, .writeFailed: preconditionFailure("handled above")
            }
        }
        if case .mismatch(let error) = reason, trailerCheck == nil { indexMismatch = error }
        stopRun()
        fallbackSkip = chunkPlainEnd - start.plain
        fallbackExpectedCRC = memberCRC
        // Only whole chunks were returned before an item is taken, so `plainOffset` is at
        // `chunkPlainEnd`: the sequential reader gives again from the member's start.
        startSequential(at: start.offset, membersBefore: membersRead, plainBefore: start.plain)
    }

    /// Hands the input from `offset` (a member boundary) on to a ``GzipInputStream``.
    func startSequential(at offset: Int64, membersBefore: Int, plainBefore: Int64) {
        guard file.setProperty(offset, forKey: .fileCurrentOffset) else {
            fallback = nil
            return
        }
        // Without an offset property, so that the reader keeps its own copy to replay a member
        // (its offsets are the whole file's, which a seek of `file` would not be).
        let spliced = PeekingInputStream(prefix: [], then: file, failure: nil, offset: offset, alignment: chunkSize)
        let sequential = GzipInputStream(resuming: spliced, at: offset, membersBefore: membersBefore,
                                         bytesBefore: plainBefore, firstHeader: firstHeader, chunkSize: chunkSize,
                                         trailingGarbage: trailingGarbagePolicy, maximumOutputSize: maximumOutputSize,
                                         inflater: inflater)
        sequential.open()
        fallback = sequential
    }

    /// A read through the sequential reader: first it gives again (and the CRC-32 of what it
    /// gives is compared with) the bytes already returned from the member, then the rest.
    func readSequential(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        guard let fallback else { throw ByteStreamError(.notOpen, operation: "read") }
        func readOnce(_ count: Int) throws -> Int {
            let read = fallback.read(buffer, maxLength: count)
            if read < 0 { throw fallback.streamErrorOrFallback(operation: "read") }
            return read
        }
        if fallbackSkip > 0 {
            var crc: UInt32 = 0
            while fallbackSkip > 0 {
                let read = try readOnce(Int(min(Int64(maxLength), fallbackSkip)))
                if read == 0 { break }
                crc = crc32(crc, UnsafeRawBufferPointer(start: buffer, count: read))
                fallbackSkip -= Int64(read)
            }
            if fallbackSkip > 0 || crc != fallbackExpectedCRC {
                indexMismatch = .pointMismatch(point: span)
                throw IndexedGzipError.pointMismatch(point: span)
            }
        }
        var count = maxLength
        if let rangeEnd { count = Int(min(Int64(count), rangeEnd - plainOffset)) }
        guard count > 0 else { return 0 }
        let read = try readOnce(count)
        plainOffset += Int64(read)
        returnedCount += Int64(read)
        return read
    }
}

import ByteStreams

// RFC 1952 member framing for GzipInputStream: a member's header and trailer, and what may
// follow a member (another member, zero padding, trailing garbage, pass-through bytes). The
// bytes' meaning is GzipFormat's; these steps feed it from the input buffer.
extension GzipInputStream {
    // MARK: Header (RFC 1952 §2.3.1)

    /// Reads a whole header, the magic included, and readies the decoder for the member's data.
    func readHeader() throws {
        memberIndex += 1
        memberOffset = position
        var parser = GzipHeaderParser(member: memberIndex, offset: memberOffset,
                                      maximumFieldLength: Self.maximumHeaderFieldLength)
        try readHeader(with: &parser)
    }

    /// Feeds `parser` the rest of the header, then starts the member's deflate data.
    /// - Throws: The parser's ``GzipError``; ``GzipError/truncated(member:part:offset:)`` when
    ///   the input ends inside the header.
    private func readHeader(with parser: inout GzipHeaderParser) throws {
        while !parser.isDone {
            guard let byte = try nextByte() else {
                throw GzipError.truncated(member: memberIndex, part: .header, offset: position)
            }
            _ = try parser.consume(byte)
        }
        let fields = parser.header
        memberHeaderFieldCut = parser.isFieldCut
        memberHeader = fields
        memberHeaderSize = position - memberOffset
        if header == nil { header = fields }
        memberCRC = 0
        memberSize = 0
        zstream?.reset()
        decoderFilledOutput = false
        if let isal { startMemberWithIsal(isal) }
        state = .deflateData
    }

    // MARK: Trailer and what follows

    /// Reads and checks CRC-32 and ISIZE (RFC 1952 §2.3.1).
    func readTrailer() throws {
        let trailerOffset = position
        var value: UInt64 = 0
        for index in 0..<GzipTrailer.size {
            guard let byte = try nextByte() else {
                throw GzipError.truncated(member: memberIndex, part: .trailer, offset: position)
            }
            value |= UInt64(byte) << UInt64(8 * index)
        }
        try GzipTrailer(littleEndian: value).check(crc32: memberCRC, plainSize: memberSize, member: memberIndex,
                                                   offset: trailerOffset)
        memberCount += 1
        memberHandler?(Member(index: memberIndex, offset: memberOffset, header: memberHeader,
                              compressedSize: position - memberOffset, uncompressedSize: memberSize,
                              crc32: memberCRC, isHeaderFieldCut: memberHeaderFieldCut,
                              headerSize: memberHeaderSize))
        state = .betweenMembers
    }

    /// Decides what follows a member (or, under ``TrailingGarbagePolicy/passThrough``, begins
    /// the input): the end, zero padding, another member, or garbage.
    func readBetweenMembers() throws {
        let start = position
        guard let first = try peekByte() else {
            state = .end
            return
        }
        let passes = trailingGarbagePolicy == .passThrough
        switch first {
        case GzipFormat.magic.0:
            inputStart += 1
            guard let second = try peekByte() else {
                if passes {
                    passThroughLead = [first]
                    state = .passingThrough
                    return
                }
                // A lone 1f: the start of a header cut short.
                throw GzipError.truncated(member: memberIndex + 1, part: .header, offset: position)
            }
            if GzipFormat.isMagic(first, second) {
                inputStart += 1
                memberIndex += 1
                memberOffset = start
                var parser = GzipHeaderParser(member: memberIndex, offset: memberOffset,
                                              maximumFieldLength: Self.maximumHeaderFieldLength)
                _ = try parser.consume(first)
                _ = try parser.consume(second)
                try readHeader(with: &parser)
                return
            }
            if passes {
                passThroughLead = [first]
                state = .passingThrough
                return
            }
            garbageLead = [first, second]
        case _ where passes:
            state = .passingThrough
            return
        case 0:
            garbageStart = start
            garbageLead = [first]
            state = .padding
            return
        default:
            garbageLead = [first]
        }
        garbageStart = start
        state = .garbage
    }

    /// Skips zero padding after a member (state `padding`); the end of the input ends the
    /// stream, anything else makes the padding part of trailing garbage.
    func skipPadding() throws {
        while let byte = try peekByte() {
            if byte != 0 {
                state = .garbage
                return
            }
            inputStart += 1
        }
        endedWithZeroPadding = true
        state = .end
    }

    /// Copies the rest of the input into `buffer` unchanged (``TrailingGarbagePolicy/passThrough``).
    /// - Returns: The bytes copied, `0` at the end of the input.
    func passThrough(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let capacity = outputCapacity(maxLength)
        var count = 0
        if !passThroughLead.isEmpty, capacity > 0 {
            buffer[0] = passThroughLead.removeFirst()
            count = 1
        }
        if count < capacity {
            if inputStart == inputEnd {
                do {
                    _ = try refill()
                } catch is WouldBlock where count > 0 {
                    // The lead byte goes now; the rest when the inner stream has more.
                }
            }
            let copied = min(capacity - count, inputEnd - inputStart)
            (buffer + count).update(from: inputBuffer + inputStart, count: copied)
            inputStart += copied
            count += copied
        }
        if count == 0 { state = .end }
        // The bytes go through the member accounting for the output limit; no member follows,
        // so its CRC-32 and size are not looked at again.
        return try account(buffer, produced: count)
    }

    /// Reads to the end of the input to measure the garbage from ``garbageStart`` (state
    /// `garbage`), then fails or ends as the policy says.
    func skipTrailingGarbage() throws {
        inputStart = inputEnd
        while try refill() { inputStart = inputEnd }
        let garbage = TrailingGarbage(offset: garbageStart, length: position - garbageStart, leadingBytes: garbageLead)
        trailingGarbage = garbage
        state = .end
        if trailingGarbagePolicy == .fail {
            throw GzipError.trailingGarbage(offset: garbage.offset, length: garbage.length)
        }
    }
}

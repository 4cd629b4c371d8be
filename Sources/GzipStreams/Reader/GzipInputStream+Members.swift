import ByteStreams

// RFC 1952 member framing for GzipInputStream: a member's header and trailer, and what may
// follow a member (another member, zero padding, trailing garbage, pass-through bytes). The
// bytes' meaning is GzipFormat's; these steps feed it from the input buffer.
extension GzipInputStream {
    // MARK: Header (RFC 1952 §2.3.1)

    /// Reads a whole header, the magic included, and readies the decoder for the member's data.
    func readHeader() throws {
        var parser = GzipHeaderParser(member: member.index + 1, offset: input.position,
                                      maximumFieldLength: Self.maximumHeaderFieldLength)
        try readHeader(with: &parser)
    }

    /// Feeds `parser` the rest of the header, then starts the member's deflate data.
    /// - Throws: The parser's ``GzipError``; ``GzipError/truncated(member:part:offset:)`` when
    ///   the input ends inside the header.
    private func readHeader(with parser: inout GzipHeaderParser) throws {
        // The member's number and offset count from here, so that the error of a header cut
        // short (and a step undone) sees them.
        member.index = parser.member
        member.offset = parser.offset
        try input.readHeader(&parser)
        let fields = parser.header
        member.isHeaderFieldCut = parser.isFieldCut
        member.header = fields
        member.headerSize = input.position - member.offset
        indexRecorder?.memberStarted(member.index, at: input.position, plainOffset: uncompressedByteCount)
        if header == nil { header = fields }
        member.crc32 = 0
        member.uncompressedSize = 0
        zstream?.reset()
        decoderFilledOutput = false
        if let isal { startMemberWithIsal(isal) }
        state = .deflateData
    }

    // MARK: Trailer and what follows

    /// Reads and checks CRC-32 and ISIZE (RFC 1952 §2.3.1).
    func readTrailer() throws {
        let (stored, offset) = try input.readTrailer(member: member.index)
        if let trailerChecks, member.uncompressedSize > 0 {
            trailerChecks.record(stored, plainEnd: uncompressedByteCount, member: member.index, offset: offset)
            member.crc32 = stored.crc32
        } else {
            try stored.check(crc32: member.crc32, plainSize: member.uncompressedSize, member: member.index, offset: offset)
        }
        memberCount += 1
        member.compressedSize = input.position - member.offset
        memberHandler?(member)
        state = .betweenMembers
    }

    /// Decides what follows a member (or, under ``TrailingGarbagePolicy/passThrough``, begins
    /// the input): the end, zero padding, another member, or garbage.
    func readBetweenMembers() throws {
        let passes = trailingGarbagePolicy == .passThrough
        switch try input.readFollowing(member: member.index, maximumFieldLength: Self.maximumHeaderFieldLength) {
        case .end:
            state = .end
        case .member(var parser):
            try readHeader(with: &parser)
        case .cutHeader(let offset):
            guard passes else {
                // A lone 1f: the start of a header cut short.
                throw GzipError.truncated(member: member.index + 1, part: .header, offset: offset + 1)
            }
            state = .passingThrough
        case _ where passes:
            state = .passingThrough
        case .zeroPadding(let offset):
            state = .padding(start: offset)
        case .other(let offset, let leadingBytes):
            state = .garbage(start: offset, leadingBytes: leadingBytes)
        }
    }

    /// Skips zero padding after a member (state `padding`, from `start`); the end of the input
    /// ends the stream, anything else makes the padding part of trailing garbage.
    func skipPadding(from start: Int64) throws {
        guard try input.skipZeroPadding() else {
            state = .garbage(start: start, leadingBytes: [0])
            return
        }
        endedWithZeroPadding = true
        state = .end
    }

    /// Copies the rest of the input into `buffer` unchanged (``TrailingGarbagePolicy/passThrough``).
    /// - Returns: The bytes copied, `0` at the end of the input.
    func passThrough(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let capacity = outputCapacity(maxLength)
        if !input.hasUnreadBytes { _ = try input.refill() }
        let count = min(capacity, input.end - input.start)
        buffer.update(from: input.buffer + input.start, count: count)
        input.start += count
        if count == 0 { state = .end }
        // The bytes go through the member accounting for the output limit; no member follows,
        // so its CRC-32 and size are not looked at again.
        return try account(buffer, produced: count)
    }

    /// Reads to the end of the input to measure the garbage from `start` (state `garbage`),
    /// then fails or ends as the policy says.
    func skipTrailingGarbage(from start: Int64, leadingBytes: [UInt8]) throws {
        try input.skipToEnd()
        let garbage = TrailingGarbage(offset: start, length: input.position - start, leadingBytes: leadingBytes)
        trailingGarbage = garbage
        state = .end
        if trailingGarbagePolicy == .fail {
            throw GzipError.trailingGarbage(offset: garbage.offset, length: garbage.length)
        }
    }
}

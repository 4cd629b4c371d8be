import ByteStreams

/// Where a BGZF member's parts lie, read from its header alone (SAM/BAM specification §4.1):
/// the `BC` extra subfield gives the member's whole size, so members are found without inflating.
struct BGZFFrame: Equatable {
    /// The member's size in bytes, header and trailer included: BSIZE + 1.
    var size: Int
    /// The header's size in bytes: 12 + XLEN; the deflate data starts there.
    var headerSize: Int

    /// The largest member, in bytes: BSIZE is 16 bits, so 65536; a header alone can ask for
    /// 12 + 65535 bytes before it is known not to fit.
    static let maximumSize = 12 + 65535

    /// What the bytes at the start of a member say.
    enum Parse: Equatable {
        /// A BGZF member header.
        case member(BGZFFrame)
        /// At least this many bytes are needed to tell.
        case needMore(Int)
        /// Not a BGZF member header: not `1f 8b 08`, FLG other than FEXTRA alone, extra
        /// subfields that do not fill XLEN exactly, no `BC` subfield with SLEN 2, or a BSIZE too
        /// small for the header and trailer.
        case notBGZF
    }

    /// Parses the header at the start of `bytes` (which may hold less than a whole header).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Parse {
        guard bytes.count >= 12 else {
            // Decide as early as the bytes allow, so that garbage is not read further than needed.
            let fixed: [UInt8] = [GzipHeader.magic.0, GzipHeader.magic.1, GzipHeader.methodDeflate, GzipHeader.flagExtra]
            for index in 0..<min(bytes.count, 4) where bytes[index] != fixed[index] { return .notBGZF }
            return .needMore(12)
        }
        guard bytes[0] == GzipHeader.magic.0, bytes[1] == GzipHeader.magic.1,
              bytes[2] == GzipHeader.methodDeflate, bytes[3] == GzipHeader.flagExtra else { return .notBGZF }
        let headerSize = 12 + Int(loadUInt16(bytes, at: 10))
        guard bytes.count >= headerSize else { return .needMore(headerSize) }
        var position = 12
        var blockSize: Int?
        while position + 4 <= headerSize {
            let length = Int(loadUInt16(bytes, at: position + 2))
            guard position + 4 + length <= headerSize else { return .notBGZF }
            if blockSize == nil, bytes[position] == 0x42, bytes[position + 1] == 0x43, length == 2 {
                blockSize = Int(loadUInt16(bytes, at: position + 4)) + 1
            }
            position += 4 + length
        }
        guard position == headerSize, let size = blockSize, size >= headerSize + 8 else { return .notBGZF }
        return .member(BGZFFrame(size: size, headerSize: headerSize))
    }

    /// The member's header fields, from its first `headerSize` bytes.
    static func header(of member: UnsafeRawBufferPointer, headerSize: Int) -> GzipHeader {
        GzipHeader(isText: false, modificationTime: loadUInt32(member, at: 4), extraFlags: member[8],
                   operatingSystem: member[9], extraField: Array(member[12..<headerSize]))
    }
}

/// The ISIZE a whole member's trailer stores, from its last 4 bytes (RFC 1952 §2.3.1); the
/// member holds at least its 8-byte trailer.
func storedPlainSize(ofMember member: UnsafeRawBufferPointer) -> Int {
    Int(loadUInt32(member, at: member.count - 4))
}

func loadUInt16(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
    UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
}

func loadUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
    UInt32(loadUInt16(bytes, at: offset)) | UInt32(loadUInt16(bytes, at: offset + 2)) << 16
}

/// Cuts an input stream into whole BGZF members without inflating them: reads the inner stream
/// in `chunkSize` reads into a buffer allocated once (room for two largest members and a
/// chunk), and lends out each member's bytes. Stops at the first point that is not a whole
/// BGZF member (the end of the input, another kind of member, zero padding, garbage, a member
/// cut short, or a failed read); the bytes from there on stay in ``unconsumed``.
///
/// Used by one thread at a time. Does not open or close the inner stream.
final class BGZFMemberFramer {
    private let inner: ByteInputStream
    private let chunkSize: Int
    private let capacity: Int
    private let storage: UnsafeMutablePointer<UInt8>
    private var stagedStart = 0
    private var stagedEnd = 0
    /// The offset in the whole compressed input of the next unconsumed byte.
    private(set) var offset: Int64
    /// Set once a read of the inner stream returned 0.
    private(set) var innerEnded = false
    /// The inner stream's error, once a read failed; nothing more is read after it.
    private(set) var innerError: (any Error)?

    /// - Parameters:
    ///   - offset: The offset of the inner stream's next byte in the whole input, in bytes.
    init(inner: ByteInputStream, chunkSize: Int, offset: Int64) {
        self.inner = inner
        self.chunkSize = chunkSize
        self.offset = offset
        capacity = 2 * BGZFFrame.maximumSize + chunkSize
        storage = .allocate(capacity: capacity)
    }

    deinit {
        storage.deallocate()
    }

    /// The bytes read and not handed out.
    var unconsumed: [UInt8] { Array(UnsafeBufferPointer(start: storage + stagedStart, count: stagedEnd - stagedStart)) }

    /// Whether the input ended cleanly right here: nothing staged, the inner stream at its end.
    var isAtCleanEnd: Bool { stagedStart == stagedEnd && innerEnded && innerError == nil }

    /// The next whole member: its offset, frame and bytes (lent: valid until the next call);
    /// `nil` where the input stops being whole BGZF members (see the type's summary).
    func next() -> (offset: Int64, frame: BGZFFrame, bytes: UnsafeRawBufferPointer)? {
        var frame: BGZFFrame
        parsing: while true {
            let parsed = BGZFFrame.parse(UnsafeRawBufferPointer(start: storage + stagedStart, count: stagedEnd - stagedStart))
            switch parsed {
            case .member(let found):
                frame = found
                break parsing
            case .needMore(let count):
                guard stage(count) else { return nil }
            case .notBGZF:
                return nil
            }
        }
        guard stage(frame.size) else { return nil }
        let bytes = UnsafeRawBufferPointer(start: storage + stagedStart, count: frame.size)
        let start = offset
        stagedStart += frame.size
        offset += Int64(frame.size)
        return (start, frame, bytes)
    }

    /// Reads until at least `count` bytes (at most ``BGZFFrame/maximumSize``) are staged;
    /// `false` when the input ends or fails first.
    private func stage(_ count: Int) -> Bool {
        while stagedEnd - stagedStart < count {
            if innerEnded || innerError != nil { return false }
            if capacity - stagedEnd < chunkSize {
                // At most one member's bytes move per member consumed.
                let unread = stagedEnd - stagedStart
                storage.update(from: storage + stagedStart, count: unread)
                stagedStart = 0
                stagedEnd = unread
            }
            let read = inner.read(storage + stagedEnd, maxLength: chunkSize)
            if read < 0 {
                innerError = inner.streamError ?? ByteStreamError(.innerStreamFailed, operation: "read")
            } else if read == 0 {
                innerEnded = true
            } else {
                stagedEnd += read
            }
        }
        return true
    }
}

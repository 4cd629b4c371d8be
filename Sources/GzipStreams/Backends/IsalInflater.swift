import CIsal
import CZlib
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One raw inflate (RFC 1951, no wrapper) through ISA-L's streaming `isal_inflate`, the
/// decoder igzip uses; as a ``WholeBufferInflater`` (`isal_inflate_stateless`), the decoder of
/// ``BGZFInputStream``'s members.
///
/// ISA-L reads input ahead into a 64-bit bit buffer, so at the end of a deflate stream up to
/// 8 whole bytes it took (perhaps from an earlier call's input) belong to what follows, the
/// trailer: ``step(input:inputCount:output:outputCapacity:)`` hands them back. The state
/// (about 50 KiB, with the 32 KiB window) is allocated once and reset per member.
final class IsalInflater: RawInflater, WholeBufferInflater {
    /// ISA-L at the end of its input has decoded what it can: the end there is a truncation.
    static var stepsAfterInputEnd: Bool { false }

    private let state: UnsafeMutablePointer<inflate_state>
    /// ``RawInflater/seeksBlockBoundary``.
    var seeksBlockBoundary = false {
        didSet {
            if seeksBlockBoundary, !oldValue {
                skimmedInSearch = 0
                skimLimit = min(Self.longestSkim, inputTaken - lastSearchEnd)
            }
        }
    }
    /// A copy of ``state`` before a skimmed piece of a search, to go back to.
    private let saved: UnsafeMutablePointer<inflate_state>
    /// Where (in ``inputTaken``) the small pieces of a search end: the end of the skimmed piece
    /// being decoded again.
    private var smallPiecesEnd = 0
    /// The input skimmed since the current search began.
    private var skimmedInSearch = 0
    /// The most input the current search skims: ``longestSkim``, or the input taken since the
    /// search before ended when that is less (the compressed length of a span).
    private var skimLimit = 0
    /// Where (in ``inputTaken``) the last search ended.
    private var lastSearchEnd = 0
    /// ``RawInflater/blockBoundaryFound``.
    private(set) var blockBoundaryFound: (bits: Int, bytesAfter: [UInt8])?

    /// The input bytes taken since the stream started (``reset()``), boundaries' bytes handed
    /// back excluded: where the pieces of a search are cut, so that the boundaries found do not
    /// depend on how the input came in.
    private var inputTaken = 0
    /// The size of the pieces of a search, a power of 2: it starts at ``firstPieceSize`` and
    /// halves, for the rest of the input, each time a piece held a whole header.
    private var pieceSize = firstPieceSize
    /// The lookup table's ``tableMark()`` when the current piece began.
    private var markAtPieceStart: UInt64 = 0

    /// The first piece size of a search. ISA-L reads a block header only whole (keeping a
    /// partial one in `tmp_in_buffer`), so a dynamic header (RFC 1951 §3.2.7, tens of bytes)
    /// cut by the end of a piece leaves ISA-L between blocks. Measured on gzip -6 and -1 of
    /// mixed and text data: 64 bytes caught the first boundary after each span every time (128
    /// missed a quarter), at about 1 ms a search (470 calls over half a block on average).
    static let firstPieceSize = 64
    /// The smallest piece size. Each `isal_inflate` call moves ISA-L's 32 KiB of history in its
    /// own buffer (about 2 µs), so pieces of 4 bytes made a search over half a block cost
    /// 4 ms (13% of an unpack of the 256 MiB text corpus with a point every 16 MiB); 32 bytes
    /// still catch all but the headers of highly repetitive text (under 30 bytes), for which a
    /// later boundary is taken.
    static let smallestPieceSize = 32
    /// The size of the skimmed pieces of a search, a multiple of ``firstPieceSize``. A piece
    /// costs a copy of ISA-L's state (85 KiB), a comparison of its tables (21 KiB) and one
    /// `isal_inflate` call. In small pieces alone, the searches of an unpack of the text corpus
    /// with `--write-index` made about 1,000 calls each and took 130 samples of the inflating
    /// thread's 954 (`perf record -e task-clock`).
    static let skimSize = 2048
    /// The most input a search skims: past it, without a header seen, the search goes on in
    /// small pieces only. A block with the codes of the block before leaves ISA-L's tables as
    /// they were, so skimming does not see its header (as in `pack` output of the tests'
    /// repetitive sample text). Searches in small pieces alone covered 3-56 KB of the gzip -6
    /// text corpus (half a block on average).
    static let longestSkim = 64 << 10

    init() {
        state = .allocate(capacity: 1)
        saved = .allocate(capacity: 1)
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_DEFLATE)
    }

    deinit {
        state.deallocate()
        saved.deallocate()
    }

    /// Starts a new deflate stream. Wraps ISA-L's `isal_inflate_reset`.
    func reset() {
        inputTaken = 0
        smallPiecesEnd = 0
        skimmedInSearch = 0
        lastSearchEnd = 0
        isal_inflate_reset(state)
        state.pointee.crc_flag = UInt32(ISAL_DEFLATE)
    }

    /// ``WholeBufferInflater/inflateWhole(_:count:into:size:)``, after a reset. Wraps ISA-L's
    /// `isal_inflate_stateless`.
    func inflateWhole(_ input: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>,
                      size: Int) -> Bool {
        reset()
        state.pointee.next_in = UnsafeMutablePointer(mutating: input)
        state.pointee.avail_in = UInt32(count)
        state.pointee.next_out = output
        state.pointee.avail_out = UInt32(size)
        let result = isal_inflate_stateless(state)
        let unread = Int(state.pointee.avail_in) + Int(state.pointee.read_in_length) / 8
        state.pointee.next_in = nil
        state.pointee.next_out = nil
        return result == ISAL_DECOMP_OK && unread == 0 && state.pointee.avail_out == 0
    }

    /// ``RawInflater/step(input:inputCount:output:outputCapacity:)``: at the end of the
    /// deflate data, the whole bytes ISA-L's bit buffer took past it come back as `readAhead`;
    /// an invalid stream gives ISA-L's reason, and no byte of the call (`produced` 0).
    ///
    /// Why none: ISA-L's fast decoding loop (`decode_huffman_code_block_stateless`, in
    /// assembly) moves its output pointer past a match before it checks the match's distance
    /// (and its distance code), and keeps it there when it returns the error
    /// (`ISAL_INVALID_LOOKBACK`, `ISAL_INVALID_SYMBOL`): the count then takes in up to 258
    /// bytes it never wrote, whatever its own buffer or `output` held there (the previous
    /// member's bytes, the bytes before an access point). A distance that reaches before the
    /// start of the member, or before the data after a window-less start, is invalid
    /// (RFC 1951 §3.2.5, RFC 1952 §2.2); zlib gives the bytes before it and no byte of the
    /// match, and which of ISA-L's bytes are true is not known, so none is given.
    /// Wraps ISA-L's `isal_inflate`.
    func step(input: UnsafeMutablePointer<UInt8>, inputCount: Int, output: UnsafeMutablePointer<UInt8>,
              outputCapacity: Int) -> RawInflateStep {
        blockBoundaryFound = nil
        if seeksBlockBoundary {
            return stepSeekingBoundary(input: input, inputCount: inputCount, output: output, outputCapacity: outputCapacity)
        }
        return stepWhole(input: input, inputCount: inputCount, output: output, outputCapacity: outputCapacity)
    }

    /// One `isal_inflate` call over all of the input.
    private func stepWhole(input: UnsafeMutablePointer<UInt8>, inputCount: Int, output: UnsafeMutablePointer<UInt8>,
                           outputCapacity: Int) -> RawInflateStep {
        state.pointee.next_in = input
        state.pointee.avail_in = UInt32(inputCount)
        state.pointee.next_out = output
        state.pointee.avail_out = UInt32(outputCapacity)
        let code = isal_inflate(state)
        let consumed = inputCount - Int(state.pointee.avail_in)
        inputTaken += consumed
        let produced = outputCapacity - Int(state.pointee.avail_out)
        state.pointee.next_in = nil
        state.pointee.next_out = nil
        if code < 0 { return RawInflateStep(consumed: consumed, produced: 0, outcome: .invalid(Self.reason(code))) }
        if state.pointee.block_state == ISAL_BLOCK_FINISH {
            // The bits left in the bit buffer: the rest of the last byte (padding), then whole
            // bytes that follow the deflate data.
            let readAhead = heldInput(withHeader: false).bytes
            state.pointee.read_in = 0
            state.pointee.read_in_length = 0
            return RawInflateStep(consumed: consumed, produced: produced, outcome: .streamEnd(readAhead: readAhead))
        }
        return RawInflateStep(consumed: consumed, produced: produced, outcome: .progress)
    }

    /// ``RawInflater/step(input:inputCount:output:outputCapacity:)`` while a block boundary is
    /// sought: `isal_inflate` calls over pieces of the input cut at multiples of the piece size
    /// (from the stream's start) or at the end of a stored block, its length being known,
    /// until a piece ends with ISA-L between blocks. The boundary is then `read_in_length` +
    /// 8 × `tmp_in_size` bits before the end of the piece (the bits of the next header ISA-L
    /// holds); the whole bytes among them leave ISA-L's state, to be put back in front of the
    /// input (``RawInflater/blockBoundaryFound``), and ISA-L keeps only the 0...7 bits of the
    /// boundary's byte, as zlib does after `Z_BLOCK`. A piece in which ISA-L read a whole new
    /// header (its lookup table changed) halves the piece size, down to ``smallestPieceSize``.
    ///
    /// Small pieces are only needed where a header is: the input is first skimmed in
    /// ``skimSize`` pieces (cut at multiples of it), each after a copy of ISA-L's state. A
    /// skimmed piece that fails, or ends with ISA-L in a new table, between blocks or in a
    /// stored block, is decoded again from the copy in small pieces; so a search takes the
    /// boundary small pieces alone would, except before a block whose codes are those of the
    /// Huffman block before it (fixed-Huffman blocks in a row, runs of zeros, a stored block
    /// inside a skimmed piece between blocks of the same codes), which leaves the tables as
    /// they were: such a boundary is passed over, as a header shorter than the pieces is, and
    /// ``longestSkim`` bounds how far.
    private func stepSeekingBoundary(input: UnsafeMutablePointer<UInt8>, inputCount: Int,
                                     output: UnsafeMutablePointer<UInt8>, outputCapacity: Int) -> RawInflateStep {
        var consumed = 0
        var produced = 0
        while true {
            let inStoredBlock = state.pointee.block_state == ISAL_BLOCK_TYPE0
            // Only input is skimmed: a call without input (one that gives what ISA-L holds) that
            // ends between blocks would be taken back and made again without end.
            if !inStoredBlock, inputTaken >= smallPiecesEnd, skimmedInSearch < skimLimit, consumed < inputCount {
                // Skims a piece; a header in it sends it back to be decoded in small pieces.
                let start = inputTaken
                let length = min(Self.skimSize - start % Self.skimSize, inputCount - consumed)
                saved.update(from: state, count: 1)
                let piece = stepWhole(input: input + consumed, inputCount: length,
                                      output: output + produced, outputCapacity: outputCapacity - produced)
                skimmedInSearch += piece.consumed
                if case .progress = piece.outcome, state.pointee.block_state == ISAL_BLOCK_CODED, sameTables() {
                    consumed += piece.consumed
                    produced += piece.produced
                    let stalled = piece.consumed == 0 && piece.produced == 0
                    if consumed == inputCount || produced == outputCapacity || stalled {
                        return RawInflateStep(consumed: consumed, produced: produced, outcome: .progress)
                    }
                    continue
                }
                state.update(from: saved, count: 1)
                inputTaken = start
                smallPiecesEnd = start + length
                continue
            }
            let toPieceEnd = inStoredBlock ? max(1, Int(state.pointee.type0_block_len)) : pieceSize - inputTaken % pieceSize
            if !inStoredBlock, toPieceEnd == pieceSize { markAtPieceStart = tableMark() }
            let piece = stepWhole(input: input + consumed, inputCount: min(toPieceEnd, inputCount - consumed),
                                  output: output + produced, outputCapacity: outputCapacity - produced)
            consumed += piece.consumed
            switch piece.outcome {
            case .progress:
                produced += piece.produced
            case .invalid, .failed, .stalled:
                // The bytes of the earlier pieces are as sound as any call's; this piece's are not.
                return RawInflateStep(consumed: consumed, produced: produced, outcome: piece.outcome)
            case .streamEnd:
                return RawInflateStep(consumed: consumed, produced: produced + piece.produced, outcome: piece.outcome)
            }
            let pieceEnded = inStoredBlock ? piece.consumed == toPieceEnd : inputTaken % pieceSize == 0
            if pieceEnded, let boundary = takeBoundary() {
                blockBoundaryFound = boundary
                seeksBlockBoundary = false
                lastSearchEnd = inputTaken
                return RawInflateStep(consumed: consumed, produced: produced, outcome: .progress)
            }
            if pieceEnded, !inStoredBlock, pieceSize > Self.smallestPieceSize,
               state.pointee.block_state == ISAL_BLOCK_CODED, tableMark() != markAtPieceStart {
                pieceSize /= 2
            }
            if consumed == inputCount || produced == outputCapacity {
                return RawInflateStep(consumed: consumed, produced: produced, outcome: .progress)
            }
        }
    }

    /// After a piece: when ISA-L rests between blocks with all of its output given, takes the
    /// whole bytes it holds of the next header out of its state (`read_in` past the first
    /// 0...7 bits, then `tmp_in_buffer`), leaving those bits, and returns them with the count
    /// of bits; `nil` otherwise.
    private func takeBoundary() -> (bits: Int, bytesAfter: [UInt8])? {
        let held = state.pointee
        guard held.avail_out > 0, held.tmp_out_valid == held.tmp_out_processed, held.write_overflow_len == 0,
              held.copy_overflow_length == 0,
              held.block_state == ISAL_BLOCK_NEW_HDR || held.block_state == ISAL_BLOCK_HDR else { return nil }
        let (bits, bytesAfter) = heldInput(withHeader: true)
        state.pointee.read_in = held.read_in & ((1 << UInt64(bits)) - 1)
        state.pointee.read_in_length = Int32(bits)
        state.pointee.tmp_in_size = 0
        state.pointee.block_state = ISAL_BLOCK_NEW_HDR
        inputTaken -= bytesAfter.count
        return (bits, bytesAfter)
    }

    /// The input ISA-L holds and has not decoded: the 0...7 bits of its bit buffer (`read_in`)
    /// that finish a byte begun, and the whole bytes after them, least significant first; with
    /// `withHeader`, then the bytes of a block header it began (`tmp_in_buffer`).
    private func heldInput(withHeader: Bool) -> (partialBits: Int, bytes: [UInt8]) {
        let bitCount = Int(state.pointee.read_in_length)
        let partialBits = bitCount % 8
        let rest = state.pointee.read_in >> UInt64(partialBits)
        var bytes = (0..<(bitCount / 8)).map { UInt8(truncatingIfNeeded: rest >> UInt64(8 * $0)) }
        if withHeader {
            let headerCount = Int(state.pointee.tmp_in_size)
            withUnsafeBytes(of: &state.pointee.tmp_in_buffer) { bytes += $0.prefix(headerCount) }
        }
        return (partialBits, bytes)
    }

    /// Whether ISA-L's lookup tables (literal/length and distance) are byte for byte as in
    /// ``saved``: a header read since the copy rebuilt them, unless its codes were the same.
    private func sameTables() -> Bool {
        let start = MemoryLayout<inflate_state>.offset(of: \.lit_huff_code)!
        let end = MemoryLayout<inflate_state>.offset(of: \.dist_huff_code)! + MemoryLayout<inflate_huff_code_small>.size
        return memcmp(UnsafeRawPointer(state) + start, UnsafeRawPointer(saved) + start, end - start) == 0
    }

    /// A fingerprint of ISA-L's literal/length lookup table, which it rebuilds for each new
    /// Huffman block: 16 words spread over the table's first level.
    private func tableMark() -> UInt64 {
        let table = UnsafeRawPointer(state) + MemoryLayout<inflate_state>.offset(of: \.lit_huff_code)!
        var mark: UInt64 = 0
        for word in 0..<16 {
            mark = mark &* 31 &+ table.loadUnaligned(fromByteOffset: word * 1024, as: UInt64.self)
        }
        return mark
    }

    /// Starts a new deflate stream at an access point inside one: the first `bitCount` (0...7)
    /// bits of the stream are the low bits of `bits` (zlib's `inflatePrime` convention), and
    /// `window`, when given, is the plain data before the point that the stream may refer
    /// back to. Wraps ISA-L's `isal_inflate_reset` and `isal_inflate_set_dict`; ISA-L has no
    /// call to prime bits, so they go into its bit buffer (`read_in`, `read_in_length`), where
    /// its own decoding keeps the bits of a byte it has not finished.
    /// - Returns: `false` when ISA-L refuses the window.
    func start(primingBits bitCount: Int, of bits: UInt8, window: [UInt8]?) -> Bool {
        reset()
        if var window {
            let code = window.withUnsafeMutableBufferPointer {
                isal_inflate_set_dict(state, $0.baseAddress, UInt32($0.count))
            }
            guard code == ISAL_DECOMP_OK else { return false }
        }
        state.pointee.read_in = UInt64(bits) & ((1 << UInt64(bitCount)) - 1)
        state.pointee.read_in_length = Int32(bitCount)
        return true
    }

    /// Reads ISA-L's state: between blocks (a new header next, or part of one read into its
    /// `tmp_in_buffer`; after a BFINAL block ISA-L is in neither state, and `bfinal` may
    /// already be the next header's bit), holding exactly `pendingBits` bits (`read_in_length`,
    /// and the bytes of a header it began); or just into a fixed-Huffman block whose 3-bit
    /// header it read from those bits.
    func restsAtBlockBoundary(pendingBits: Int) -> Bool {
        let state = state.pointee
        switch state.block_state {
        case ISAL_BLOCK_NEW_HDR, ISAL_BLOCK_HDR:
            return Int(state.read_in_length) + 8 * Int(state.tmp_in_size) == pendingBits
        case ISAL_BLOCK_CODED:
            // A fixed-Huffman block's header is its 3 bits alone: with 3 or more bits held,
            // ISA-L has read it and is in the block, holding the bits after it.
            return pendingBits >= 3 && Int(state.read_in_length) == pendingBits - 3 && state.tmp_in_size == 0
        default:
            return false
        }
    }

    /// ``RawInflater/invalidAtEndOfInput()``: ISA-L decodes a block header only once it holds
    /// all of it (until then it keeps the header's bits, `read_in` and `tmp_in_buffer`, and asks
    /// for more), so at the end of the input a header that is already invalid, such as a
    /// code-length code that zlib rejects (RFC 1951 §3.2.7), would pass for a truncation. The
    /// bits it holds are given to zlib, which stops at the end of a block header (`Z_TREES`):
    /// zlib's reason when it finds the header invalid, and the bytes after the point where it
    /// does; `nil` otherwise (a valid or unfinished header: the end is a truncation).
    /// Wraps zlib's `inflateInit2`, `inflatePrime`, `inflate` and `inflateEnd`.
    func invalidAtEndOfInput() -> (reason: String, bytesAfter: Int)? {
        guard state.pointee.block_state == ISAL_BLOCK_HDR, let zlib = try? ZStream(inflate: ()) else { return nil }
        defer { zlib.end() }
        // The bits of `read_in`: first the rest of a byte begun, then whole bytes; then the
        // bytes of `tmp_in_buffer`.
        let (partBits, held) = heldInput(withHeader: true)
        var bytes = held
        let bits = state.pointee.read_in
        let z = zlib.pointer
        if partBits > 0, inflatePrime(z, Int32(partBits), Int32(bits & ((1 << UInt64(partBits)) - 1))) != Z_OK {
            return nil
        }
        var scratch: UInt8 = 0
        let code = bytes.withUnsafeMutableBufferPointer { input in
            withUnsafeMutablePointer(to: &scratch) { output in
                z.pointee.next_in = input.baseAddress
                z.pointee.avail_in = UInt32(input.count)
                z.pointee.next_out = output
                z.pointee.avail_out = 1
                defer {
                    z.pointee.next_in = nil
                    z.pointee.next_out = nil
                }
                return CZlib.inflate(z, Z_TREES)
            }
        }
        guard code == Z_DATA_ERROR else { return nil }
        return (ZStream.message(for: code, stream: z), Int(z.pointee.avail_in))
    }

    private static func reason(_ code: Int32) -> String {
        switch code {
        case ISAL_INVALID_BLOCK: return "invalid block"
        case ISAL_INVALID_SYMBOL: return "invalid code"
        case ISAL_INVALID_LOOKBACK: return "invalid distance too far back"
        default: return "ISA-L inflate error \(code)"
        }
    }
}

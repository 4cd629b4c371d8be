import ByteStreams
import Synchronization

/// Whole members read from the input, in order, and the room to inflate them into: allocated
/// once and reused for batch after batch, so that memory does not depend on the input. The
/// reading thread fills one and hands it to a worker, which writes only ``plain`` and
/// ``plainCount``; the reading thread reads them after collecting the worker's verdict.
/// `Sendable` is unchecked on that hand-over, ordered by ``OrderedPipeline``, which the
/// compiler cannot see.
final class MemberBatch: @unchecked Sendable {
    /// A member of the batch: where it starts in the whole input and in ``compressed``, its
    /// frame, and the ISIZE its trailer states.
    struct Member {
        var offset: Int64
        var start: Int
        var frame: BGZFFrame
        var plainSize: Int
    }

    /// The compressed bytes after which a batch is closed: 256 KiB (so that members with a
    /// small ISIZE cannot make a batch's input large).
    static let compressedLimit = 256 * 1024
    static let compressedCapacity = compressedLimit + BGZFFrame.maximumSize
    /// The room for plain bytes: the batch's limit plus one largest member.
    static let plainCapacity = BGZFInputStream.batchPlainSize + BGZFOutputStream.maximumMemberSize

    /// The members' bytes, header to trailer, one after another: ``compressedCount`` bytes.
    let compressed = UnsafeMutablePointer<UInt8>.allocate(capacity: compressedCapacity)
    private(set) var compressedCount = 0
    private(set) var members: [Member] = []
    /// The ISIZEs summed.
    private var statedPlainSize = 0
    /// The plain bytes of all members, once a worker inflated them: ``plainCount`` bytes.
    let plain = UnsafeMutablePointer<UInt8>.allocate(capacity: plainCapacity)
    var plainCount = 0

    init() {
        members.reserveCapacity(BGZFInputStream.batchMemberLimit)
    }

    deinit {
        compressed.deallocate()
        plain.deallocate()
    }

    /// Whether the batch takes no more members: 512 KiB of plain bytes, 256 KiB of compressed
    /// bytes, or 64 members.
    var isFull: Bool {
        statedPlainSize >= BGZFInputStream.batchPlainSize || compressedCount >= Self.compressedLimit
            || members.count >= BGZFInputStream.batchMemberLimit
    }

    /// The offset in the whole input just past the last member.
    var endOffset: Int64 {
        members.last.map { $0.offset + Int64($0.frame.size) } ?? 0
    }

    func removeAll() {
        compressedCount = 0
        members.removeAll(keepingCapacity: true)
        statedPlainSize = 0
        plainCount = 0
    }

    /// Copies in a whole member (`bytes`, at least its 8-byte trailer) found at `offset`; only
    /// while the batch is not full.
    func append(_ bytes: UnsafeRawBufferPointer, offset: Int64, frame: BGZFFrame) {
        precondition(!isFull && bytes.count <= BGZFFrame.maximumSize)
        UnsafeMutableRawPointer(compressed + compressedCount).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        let plainSize = Int(GzipTrailer.isize(ofMember: bytes))
        members.append(Member(offset: offset, start: compressedCount, frame: frame, plainSize: plainSize))
        compressedCount += bytes.count
        statedPlainSize += plainSize
    }
}

/// A worker's whole-buffer decoder, allocated on the worker's first batch and used only on that
/// worker's queue; ``release()`` frees it once the worker has stopped. For
/// ``GzipInputStream/Inflater/isal`` it is ISA-L's stateless inflate (``IsalInflater``), for
/// ``GzipInputStream/Inflater/zlib`` zlib's raw inflate (``ZStream``).
final class MemberInflater {
    /// The number of decoders allocated and not yet freed, across the process.
    static let liveCount = Atomic<Int>(0)

    private let kind: GzipInputStream.Inflater
    private var decoder: (any WholeBufferInflater)?

    init(inflater: GzipInputStream.Inflater) {
        kind = inflater
    }

    /// Inflates a batch's members one after another into its ``MemberBatch/plain`` and checks
    /// each: its deflate data must end exactly where its trailer starts and give ISIZE bytes (at
    /// most 64 KiB) whose CRC-32 is the trailer's.
    /// - Returns: Whether every check passed (``MemberBatch/plainCount`` is then the bytes
    ///   written); on `false` (a decoder that cannot be allocated too) the caller lets the
    ///   sequential reader find the error.
    /// Wraps ISA-L's `isal_inflate_stateless` or zlib's `inflate`, and ISA-L's `crc32_gzip_refl`.
    func inflate(_ batch: MemberBatch) -> Bool {
        if decoder == nil {
            switch kind {
            case .isal: decoder = IsalInflater()
            case .zlib: decoder = try? ZStream(inflate: ())
            }
            guard decoder != nil else { return false }
            Self.liveCount.add(1, ordering: .relaxed)
        }
        var produced = 0
        for member in batch.members {
            guard member.plainSize <= BGZFOutputStream.maximumMemberSize,
                  produced + member.plainSize <= MemberBatch.plainCapacity,
                  inflate(UnsafeRawBufferPointer(start: batch.compressed + member.start, count: member.frame.size),
                          headerSize: member.frame.headerSize, into: batch.plain + produced, size: member.plainSize)
            else { return false }
            produced += member.plainSize
        }
        batch.plainCount = produced
        return true
    }

    /// Inflates one member into `output`, which holds `size` bytes (its ISIZE); `false` when a
    /// check fails: the deflate data must end in the member's last byte before the trailer.
    private func inflate(_ member: UnsafeRawBufferPointer, headerSize: Int, into output: UnsafeMutablePointer<UInt8>,
                         size: Int) -> Bool {
        let deflateCount = member.count - headerSize - 8
        guard deflateCount > 0, let decoder else { return false }
        let deflateData = member.baseAddress!.assumingMemoryBound(to: UInt8.self) + headerSize
        guard decoder.inflateWhole(deflateData, count: deflateCount, into: output, size: size) else { return false }
        return crc32(0, UnsafeRawBufferPointer(start: output, count: size)) == GzipTrailer(ofMember: member).crc32
    }

    /// Frees the decoder; call only once the worker has no job left.
    func release() {
        guard decoder != nil else { return }
        decoder = nil
        Self.liveCount.subtract(1, ordering: .relaxed)
    }

    deinit {
        release()
    }
}

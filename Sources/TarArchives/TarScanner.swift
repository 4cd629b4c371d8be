/// The tar parser, push mode: fed the plain bytes of an archive in pieces of any size, it
/// reports each member's headers as a ``TarEntry`` (with its plain header and data offsets) and
/// then the member's data as ranges of the bytes it was fed, never holding data itself. One
/// parser serves the pull-mode ``TarReader`` and the member index built while `gzstream index`
/// decodes an archive.
///
/// What it reads: ustar (`ustar\0`, POSIX.1-1988 §10.1.1), GNU tar's format (`ustar ` with its
/// long names `L` and long links `K`, base-256 numbers, old sparse headers `S`), pre-POSIX v7
/// headers (no magic, a valid checksum), POSIX.1-2001 pax extended headers (`x` for the next
/// member, `g` for every later one; see `TarOverrides`) and GNU tar's sparse formats 0.0, 0.1
/// and 1.0. A header's checksum may be its unsigned or its signed byte sum. The archive ends at
/// its first all-zero block; input that ends after a whole member without one is accepted, as
/// GNU tar accepts it. Members of kinds that hold no data (links, directories, devices, FIFOs)
/// report size 0 whatever their header says (as Go's archive/tar and Python's tarfile read them).
/// A pax-described sparse member is reported with kind ``TarEntry/Kind/sparse`` like a GNU `S`
/// one; in both, ``TarEntry/size`` is the stored data (the 1.0 map excluded, ``TarEntry/dataOffset``
/// after it) and ``TarEntry/realSize`` the file's size.
///
/// Limits: a long name, long link, extended header or 1.0 sparse map larger than
/// ``Limits/maximumHeaderBytes`` is refused, so hostile input cannot make it allocate much.
///
/// Errors are sticky: after a throw, every later call throws the same ``TarError``.
/// A value type without references: safe to send, not to mutate from two threads at once.
public struct TarScanner: Sendable {
    /// Caps on what the parser buffers.
    public struct Limits: Sendable, Equatable {
        /// The most bytes of one long name, long link, extended header or sparse map; 1 MiB by default.
        public var maximumHeaderBytes: Int

        /// Caps of `maximumHeaderBytes` (at least 512).
        public init(maximumHeaderBytes: Int = 1 << 20) {
            self.maximumHeaderBytes = max(maximumHeaderBytes, TarFormat.blockSize)
        }
    }

    /// What a call to ``scan(_:)`` found.
    public enum Event: Equatable, Sendable {
        /// A member's headers, complete; its data (``TarEntry/size`` bytes) comes next.
        case entry(TarEntry)
        /// These indices of the bytes just fed are data of the last entry reported.
        case data(Range<Int>)
        /// The end-of-archive block; whatever follows is ignored.
        case end
    }

    private enum Phase: Sendable {
        /// Collecting a header block.
        case header
        /// Collecting the data of an `L`, `K`, `x` or `g` header (`remaining` bytes to go).
        case extended(ExtendedKind, remaining: Int)
        /// Collecting an old GNU sparse extension block.
        case sparseExtension
        /// Collecting a block of a 1.0 sparse map.
        case sparseDataMap
        /// Passing member data.
        case data(remaining: Int)
        /// Skipping the zeros after data to the next block.
        case padding(remaining: Int)
        case ended
    }

    private enum ExtendedKind: Sendable { case longName, longLink, member, global }

    private let limits: Limits
    private var phase = Phase.header
    private var block = [UInt8](repeating: 0, count: TarFormat.blockSize)
    private var blockFill = 0
    private var blockStart = 0
    private var payload: [UInt8] = []
    private var payloadPadding = 0
    private var extendedStart = 0
    private var dataPadding = 0
    /// The first header block of the member being read (its `L`/`K`/`x` headers included).
    private var memberStart: Int?
    private var longName: [UInt8]?
    private var longLink: [UInt8]?
    private var memberOverrides = TarOverrides()
    private var globalOverrides = TarOverrides()
    /// A member whose sparse extension blocks or 1.0 map are still being read.
    private var pending: TarEntry?
    private var dataMap = TarSparseDataMap()
    /// The header offset of the member whose data is passing, for a truncation error.
    private var currentMember = 0
    private var failure: TarError?

    /// The plain bytes fed and consumed so far: the offset of the next byte to feed.
    public private(set) var offset = 0

    /// A parser at the start of an archive.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Whether the last entry's data is still passing; ``dataRemaining`` says how much.
    public var isInData: Bool {
        if case .data = phase { return true }
        return false
    }

    /// The bytes of the last entry's data not yet fed; 0 outside data.
    public var dataRemaining: Int {
        if case .data(let remaining) = phase { return remaining }
        return 0
    }

    /// Whether the end-of-archive block was met.
    public var hasEnded: Bool {
        if case .ended = phase { return true }
        return false
    }

    /// Feeds bytes, stopping after the first event.
    /// - Parameter input: The next plain bytes of the archive.
    /// - Returns: How many of `input`'s bytes were consumed (`0...input.count`) and the event
    ///   they completed, or `nil` with all of them consumed when they completed none. After
    ///   ``Event/end`` all further bytes are consumed without events.
    /// - Throws: ``TarError`` for a malformed header (its offset is that header's; a first
    ///   block that is not a header is `.notTarArchive`) or a cap exceeded; sticky.
    public mutating func scan(_ input: UnsafeRawBufferPointer) throws(TarError) -> (consumed: Int, event: Event?) {
        if let failure { throw failure }
        do throws(TarError) {
            return try scanUnchecked(input)
        } catch {
            failure = error
            throw error
        }
    }

    /// Says whether the bytes fed form a whole archive, at the end of the input.
    /// - Throws: ``TarError`` `.truncated` at the offset of the member cut short;
    ///   `.notTarArchive` when 1 to 511 bytes were fed in all (none is an empty archive).
    public mutating func finish() throws(TarError) {
        if let failure { throw failure }
        let cut: Int?
        switch phase {
        case .ended: cut = nil
        case .header where blockFill == 0 && memberStart == nil: cut = nil
        case .data, .padding: cut = currentMember
        case .header where blockStart == 0 && memberStart == nil:
            // Fewer than 512 bytes in all: no tar is that short.
            failure = TarError(.notTarArchive, offset: 0)
            throw failure!
        default: cut = memberStart ?? blockStart
        }
        if let cut {
            failure = TarError(.truncated, offset: cut)
            throw failure!
        }
    }

    private mutating func scanUnchecked(_ input: UnsafeRawBufferPointer) throws(TarError) -> (consumed: Int, event: Event?) {
        var index = 0
        while index < input.count {
            let available = input.count - index
            switch phase {
            case .ended:
                offset += available
                return (input.count, nil)
            case .data(let remaining):
                let count = min(remaining, available)
                offset += count
                phase = count == remaining ? afterData() : .data(remaining: remaining - count)
                return (index + count, .data(index..<(index + count)))
            case .padding(let remaining):
                let count = min(remaining, available)
                offset += count
                index += count
                phase = count == remaining ? .header : .padding(remaining: remaining - count)
            case .extended(let kind, let remaining):
                let count = min(remaining, available)
                payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index..<(index + count)]))
                offset += count
                index += count
                if count == remaining {
                    try finishExtended(kind)
                } else {
                    phase = .extended(kind, remaining: remaining - count)
                }
            case .header, .sparseExtension, .sparseDataMap:
                if blockFill == 0 { blockStart = offset }
                let count = min(TarFormat.blockSize - blockFill, available)
                block.withUnsafeMutableBytes {
                    $0.baseAddress!.advanced(by: blockFill).copyMemory(from: input.baseAddress! + index, byteCount: count)
                }
                blockFill += count
                offset += count
                index += count
                if blockFill == TarFormat.blockSize {
                    blockFill = 0
                    if let event = try takeBlock() { return (index, event) }
                }
            }
        }
        return (index, nil)
    }

    /// The phase after a member's data: its padding, or the next header.
    private func afterData() -> Phase {
        dataPadding > 0 ? .padding(remaining: dataPadding) : .header
    }

    /// Handles a complete block of the current phase.
    private mutating func takeBlock() throws(TarError) -> Event? {
        let copy = block
        let result = copy.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            Result { () throws(TarError) -> Event? in try takeBlock(bytes) }
        }
        return try result.get()
    }

    /// ``takeBlock()`` on the block's bytes.
    private mutating func takeBlock(_ bytes: UnsafeRawBufferPointer) throws(TarError) -> Event? {
            switch phase {
            case .sparseExtension:
                return try takeSparseExtension(bytes)
            case .sparseDataMap:
                let start = memberStart ?? blockStart
                let runs = try dataMap.take(block: bytes, limit: limits.maximumHeaderBytes, at: start)
                guard var entry = pending, dataMap.consumed <= entry.size, runs != nil || dataMap.consumed < entry.size else {
                    throw TarError(.badSparseMap(detail: "the map is longer than the member's data"), offset: start)
                }
                guard let runs else { return nil }
                entry.size -= dataMap.consumed
                entry.sparseMap = runs
                return try finish(entry)
            default:
                return try takeHeader(bytes)
            }
    }

    /// A header block: the end, an extended header, or a member's header.
    private mutating func takeHeader(_ header: UnsafeRawBufferPointer) throws(TarError) -> Event? {
        if TarFormat.isZeroBlock(header) {
            if let memberStart { throw TarError(.truncated, offset: memberStart) }
            phase = .ended
            return .end
        }
        let stored = TarFormat.number(in: UnsafeRawBufferPointer(rebasing: header[TarFormat.Field.checksum]))
        let computed = TarFormat.checksum(of: header)
        guard let stored, stored == Int64(computed) || stored == Int64(TarFormat.signedChecksum(of: header)) else {
            // The very first block: the data was never a tar, rather than a damaged one.
            if blockStart == 0 { throw TarError(.notTarArchive, offset: 0) }
            throw TarError(.badChecksum(stored: stored, computed: computed), offset: blockStart)
        }
        let typeflag = header[TarFormat.Field.typeflag]
        let extendedKind: ExtendedKind? = switch typeflag {
        case UInt8(ascii: "L"): .longName
        case UInt8(ascii: "K"): .longLink
        case UInt8(ascii: "x"): .member
        case UInt8(ascii: "g"): .global
        default: nil
        }
        if memberStart == nil && extendedKind != .global { memberStart = blockStart }
        guard let extendedKind else { return try takeMemberHeader(header, typeflag: typeflag) }
        let size = try number(header, TarFormat.Field.size, "size")
        guard size <= limits.maximumHeaderBytes else {
            throw TarError(.headerTooLarge(size: Int64(size), limit: limits.maximumHeaderBytes), offset: blockStart)
        }
        payload = []
        payload.reserveCapacity(size)
        payloadPadding = TarFormat.paddedSize(size) - size
        extendedStart = blockStart
        if size == 0 {
            try finishExtended(extendedKind)
        } else {
            phase = .extended(extendedKind, remaining: size)
        }
        return nil
    }

    /// The data of an `L`, `K`, `x` or `g` header is complete: keeps what it says.
    private mutating func finishExtended(_ kind: ExtendedKind) throws(TarError) {
        switch kind {
        case .longName: longName = payload.withUnsafeBytes { TarFormat.text(in: $0) }
        case .longLink: longLink = payload.withUnsafeBytes { TarFormat.text(in: $0) }
        case .member: try memberOverrides.apply(records: payload, at: extendedStart)
        case .global:
            var global = globalOverrides
            try global.apply(records: payload, at: extendedStart)
            // Sparse keywords describe one member; a global header's are not kept.
            global.sparse = TarPaxSparse()
            globalOverrides = global
        }
        payload = []
        phase = payloadPadding > 0 ? .padding(remaining: payloadPadding) : .header
    }

    /// A numeric field as a non-negative `Int`.
    private func number(_ header: UnsafeRawBufferPointer, _ range: Range<Int>, _ name: String) throws(TarError) -> Int {
        guard let value = TarFormat.number(in: UnsafeRawBufferPointer(rebasing: header[range])),
              value >= 0, value <= Int64(Int.max) else {
            throw TarError(.badNumber(field: name), offset: blockStart)
        }
        return Int(value)
    }
}

extension TarScanner {
    /// A member's own header: its entry, or the start of its sparse extension blocks or map.
    private mutating func takeMemberHeader(_ header: UnsafeRawBufferPointer, typeflag: UInt8) throws(TarError) -> Event? {
        let start = memberStart ?? blockStart
        var entry = TarHeaderFields.applying(memberOverrides, globalOverrides, longName: longName, longLink: longLink,
                                             to: try TarHeaderFields.entry(from: header, at: blockStart))
        entry.headerOffset = start
        if TarHeaderFields.holdsNoData(entry.kind) {
            entry.size = 0
            entry.realSize = 0
        }
        if entry.kind == .sparse {
            let (runs, ended) = try oldGNUSparseRuns(in: header, start: TarHeaderFields.oldGNUSparseStart,
                                                     count: TarHeaderFields.oldGNUSparseCount, at: start)
            entry.sparseMap = runs
            if !ended, header[TarHeaderFields.oldGNUIsExtended] != 0 {
                pending = entry
                phase = .sparseExtension
                return nil
            }
            return try finish(entry)
        }
        let sparse = memberOverrides.sparse
        if sparse.isPresent {
            guard sparse.pendingOffset == nil else {
                throw TarError(.badSparseMap(detail: "GNU.sparse.offset without its numbytes"), offset: start)
            }
            entry.kind = .sparse
            if let name = sparse.name { entry.path = name }
            entry.realSize = sparse.realSize ?? entry.size
            if sparse.mapIsInData {
                pending = entry
                dataMap = TarSparseDataMap()
                phase = .sparseDataMap
                return nil
            }
            if let count = sparse.blockCount, count != sparse.regions.count {
                throw TarError(.badSparseMap(detail: "GNU.sparse.numblocks says \(count), the map has \(sparse.regions.count)"),
                               offset: start)
            }
            entry.sparseMap = sparse.regions
        }
        return try finish(entry)
    }

    /// An old GNU sparse extension block: 21 more runs, and whether another block follows.
    private mutating func takeSparseExtension(_ block: UnsafeRawBufferPointer) throws(TarError) -> Event? {
        guard var entry = pending else { preconditionFailure("a sparse extension without its member") }
        let start = entry.headerOffset
        let (runs, ended) = try oldGNUSparseRuns(in: block, start: 0, count: TarHeaderFields.extensionSparseCount, at: start)
        entry.sparseMap = (entry.sparseMap ?? []) + runs
        guard (entry.sparseMap?.count ?? 0) * 24 <= limits.maximumHeaderBytes else {
            throw TarError(.headerTooLarge(size: Int64(blockStart + TarFormat.blockSize - start), limit: limits.maximumHeaderBytes),
                           offset: start)
        }
        if !ended, block[TarHeaderFields.extensionIsExtended] != 0 {
            pending = entry
            return nil
        }
        return try finish(entry)
    }

    /// A member's headers are complete: checks its sparse map, reports it, and passes to its data.
    private mutating func finish(_ completed: TarEntry) throws(TarError) -> Event {
        var entry = completed
        // A size (base-256 or PAX) so large that its padded end passes Int.max cannot be in any
        // archive; refused here, before it is rounded up to blocks or added to the offset.
        guard entry.size <= Int.max - offset - TarFormat.blockSize else {
            throw TarError(.badNumber(field: "size"), offset: entry.headerOffset)
        }
        if let map = entry.sparseMap {
            try validateSparseMap(map, realSize: entry.realSize, storedSize: entry.size, at: entry.headerOffset)
        }
        entry.dataOffset = offset
        currentMember = entry.headerOffset
        memberStart = nil
        longName = nil
        longLink = nil
        memberOverrides = TarOverrides()
        pending = nil
        dataPadding = TarFormat.paddedSize(entry.size) - entry.size
        phase = entry.size > 0 ? .data(remaining: entry.size) : .header
        return .entry(entry)
    }
}

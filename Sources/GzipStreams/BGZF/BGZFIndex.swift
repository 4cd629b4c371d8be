import ByteStreams

/// The `.gzi` index of a BGZF file, as bgzip writes it (`bgzip -i`, `bgzip -r`): where each
/// member after the first starts, in the compressed file and in the plain data. With it a
/// reader can start decoding at any plain offset (`bgzip -b OFFSET -s LENGTH`).
public struct BGZFIndex: Equatable, Sendable {
    /// Where one member starts.
    public struct Entry: Equatable, Sendable {
        /// The member's first byte in the BGZF file, in bytes from its start.
        public var compressedOffset: UInt64
        /// The member's first plain byte, in bytes from the start of the plain data.
        public var uncompressedOffset: UInt64

        /// An entry for a member at `compressedOffset` whose data starts at plain offset
        /// `uncompressedOffset`.
        public init(compressedOffset: UInt64, uncompressedOffset: UInt64) {
            self.compressedOffset = compressedOffset
            self.uncompressedOffset = uncompressedOffset
        }
    }

    /// Every member after the first, in file order (the first starts at 0 in both, and is not
    /// listed; nor is the end-of-file member).
    public var entries: [Entry]

    /// An index of `entries`, in file order.
    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    /// The `.gzi` bytes: the number of entries, then each entry's compressed and uncompressed
    /// offsets, all unsigned 64-bit little-endian: `8 + 16 × entries.count` bytes. Without
    /// entries (at most one member) that is 8 zero bytes, also for a file with no data, for
    /// which bgzip 1.16 wrote the count 2^64 − 1 (``init(decoding:)`` reads both as no entry).
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + 16 * entries.count)
        GzipFormat.append(littleEndian: UInt64(entries.count), to: &bytes)
        for entry in entries {
            GzipFormat.append(littleEndian: entry.compressedOffset, to: &bytes)
            GzipFormat.append(littleEndian: entry.uncompressedOffset, to: &bytes)
        }
        return bytes
    }
}

extension BGZFIndex {
    /// What ``scan(_:chunkSize:)`` found in a whole BGZF file.
    public struct Scan: Equatable, Sendable {
        /// One entry per member with data after the first such member, as bgzip lists them.
        public var index: BGZFIndex
        /// The members with data (ISIZE above 0).
        public var dataMemberCount: Int
        /// All members, empty ones (the end-of-file member) included.
        public var memberCount: Int
        /// The file's size in bytes.
        public var compressedSize: Int64
        /// The plain size in bytes, the sum of the ISIZE fields.
        public var uncompressedSize: Int64
    }

    /// Builds the index of a whole BGZF file by walking its member headers (BSIZE) and reading
    /// each ISIZE from the trailer, without inflating anything (so CRC-32 and deflate data are
    /// not checked: `gzstream test` does that). Entries are what `bgzip -r` writes: the start of
    /// every member that holds data, but the first such; empty members are not listed. Its
    /// ``BGZFIndex/encoded`` is the `.gzi` bgzip writes byte for byte, but for a file with no
    /// data: the count 0, where htslib 1.16 wrote 2^64 − 1 (its count of entries minus one,
    /// unsigned), a bug fixed since, and refused by htslib releases that check the count.
    /// - Parameters:
    ///   - input: The BGZF file from its first byte; opened if not open, not closed.
    ///   - chunkSize: The size in bytes of each read, `1...ByteStream.maximumChunkSize`; default 4096.
    /// - Returns: The index and the file's sizes.
    /// - Throws: ``GzipError/emptyInput`` for no bytes; ``GzipError/notBGZF(member:offset:)``
    ///   where the bytes are not a BGZF member (a plain gzip member, zero padding, garbage);
    ///   ``GzipError/truncated(member:part:offset:)`` for a member cut short; the input's own
    ///   errors unchanged; ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for
    ///   a `chunkSize` out of range (nothing is read). Blocks while reading.
    public static func scan(_ input: ByteInputStream, chunkSize: Int = ByteStream.defaultChunkSize) throws -> Scan {
        try requireArgument(chunkSize, in: ByteStream.chunkSizes, "chunkSize", operation: "scan BGZF index")
        try input.openUnlessOpened()
        let framer = BGZFMemberFramer(inner: input, chunkSize: chunkSize, offset: 0)
        var scan = Scan(index: BGZFIndex(), dataMemberCount: 0, memberCount: 0, compressedSize: 0, uncompressedSize: 0)
        while let member = framer.next() {
            let plainSize = Int(GzipTrailer.isize(ofMember: member.bytes))
            scan.memberCount += 1
            if plainSize > 0 {
                if scan.dataMemberCount > 0 {
                    scan.index.entries.append(Entry(compressedOffset: UInt64(member.offset),
                                                    uncompressedOffset: UInt64(scan.uncompressedSize)))
                }
                scan.dataMemberCount += 1
                scan.uncompressedSize += Int64(plainSize)
            }
        }
        if let error = framer.innerError { throw error }
        scan.compressedSize = framer.offset
        if framer.isAtCleanEnd {
            if scan.memberCount == 0 { throw GzipError.emptyInput }
            return scan
        }
        // Why the framer stopped: a BGZF header cut short, or bytes that are no BGZF member.
        let rest = framer.unconsumed
        let member = scan.memberCount + 1
        let parsed = rest.withUnsafeBytes { BGZFFrame.parse($0) }
        switch parsed {
        case .member(let frame):
            throw GzipError.truncated(member: member, part: rest.count < frame.size - 8 ? .deflateData : .trailer,
                                      offset: framer.offset + Int64(rest.count))
        case .needMore:
            throw GzipError.truncated(member: member, part: .header, offset: framer.offset + Int64(rest.count))
        case .notBGZF:
            throw GzipError.notBGZF(member: member, offset: framer.offset)
        }
    }

    /// Reads a `.gzi` file as bgzip writes it (see ``encoded``); the count 2^64 − 1 with no entry
    /// after it, which htslib 1.16 wrote for a file with no data, is read as no entry, as that
    /// htslib read it.
    /// - Throws: ``GzipIndexError`` (format ``GzipIndexFile/Format/gzi``) when the size does not match the count, an
    ///   offset is smaller than the one before it, or an offset is above 2^63 − 1 (no file or
    ///   stream reaches it, and the readers count bytes in `Int64`).
    public init(decoding bytes: [UInt8]) throws(GzipIndexError) {
        func load(_ offset: Int) -> UInt64 {
            bytes.withUnsafeBytes { GzipFormat.loadUInt64($0, at: offset) }
        }
        guard bytes.count >= 8 else { throw GzipIndexError(format: .gzi, reason: "\(bytes.count) bytes, fewer than 8", offset: nil) }
        var count = load(0)
        if count == UInt64.max { count = 0 }
        guard count <= UInt64((bytes.count - 8) / 16), bytes.count == 8 + 16 * Int(count) else {
            throw GzipIndexError(format: .gzi, reason: "\(bytes.count) bytes for \(count) entries", offset: nil)
        }
        var entries: [Entry] = []
        entries.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            let entry = Entry(compressedOffset: load(8 + 16 * index), uncompressedOffset: load(16 + 16 * index))
            guard entry.compressedOffset <= UInt64(Int64.max), entry.uncompressedOffset <= UInt64(Int64.max) else {
                throw GzipIndexError(format: .gzi, reason: "entry \(index + 1) has an offset above 2^63 - 1", offset: nil)
            }
            if let last = entries.last,
               entry.compressedOffset <= last.compressedOffset || entry.uncompressedOffset < last.uncompressedOffset {
                throw GzipIndexError(format: .gzi, reason: "entry \(index + 1) goes backwards", offset: nil)
            }
            entries.append(entry)
        }
        self.init(entries: entries)
    }

    /// The member to start decoding at for plain byte `plainOffset`: the last entry whose
    /// uncompressed offset is at most `plainOffset` (an empty member listed there is skipped
    /// by the decode), or the file's start, and how many entries come before it.
    /// - Parameter plainOffset: An offset in bytes in the plain data.
    /// - Returns: The entry, and its position among the entries plus one (the number of listed
    ///   member starts before it, the file's start counted).
    public func start(containing plainOffset: UInt64) -> (entry: Entry, membersBefore: Int) {
        var low = 0
        var high = entries.count
        // The first entry whose uncompressed offset is above plainOffset.
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].uncompressedOffset <= plainOffset { low = middle + 1 } else { high = middle }
        }
        if low == 0 { return (Entry(compressedOffset: 0, uncompressedOffset: 0), 0) }
        return (entries[low - 1], low)
    }
}

extension BGZFIndex {
    /// How many entries before a start ``checkStart(membersBefore:descriptor:path:)`` walks
    /// every member from the file's start for: 4096 (about 256 MiB of BGZF, 8192 reads of a
    /// few bytes each); past that, from the entry before the start only.
    public static let walkedEntries = 4096

    /// Checks, without inflating, that the start ``start(containing:)`` returned is where its
    /// plain offset says: the file's start (for a start among the first ``walkedEntries``
    /// entries; else the entry before it) plus the ISIZE of every member from there to it, each member found by its BSIZE (the SAMv1 BGZF framing) and
    /// its ISIZE read from its trailer (RFC 1952 §2.3.1). A `.gzi` entry whose plain offset is
    /// off (damage, or another file's index) would otherwise give bytes from the wrong place.
    /// - Parameters:
    ///   - membersBefore: The start's position as ``start(containing:)`` gives it (0 for the
    ///     file's start, which needs no check).
    ///   - descriptor: The BGZF file, read with `pread(2)` (its offset is not moved).
    ///   - path: The file's name for errors.
    /// - Throws: ``IndexedGzipError/pointMismatch(point:)`` (point `membersBefore`) when the
    ///   members do not add up or are not BGZF members; nothing when no BGZF member starts
    ///   where the entry says (the decoder started there reports it); ``ByteStreamError`` when
    ///   reading fails.
    ///   Blocks while reading: two reads per member between the two entries.
    public func checkStart(membersBefore: Int, descriptor: Int32, path: String) throws {
        guard membersBefore > 0, membersBefore <= entries.count else { return }
        let entry = entries[membersBefore - 1]
        var header = [UInt8](repeating: 0, count: BGZFInputStream.signatureLength + 2)
        // No BGZF member where the entry says one starts, or a file that ends before it: the
        // decoder started there says so (not BGZF, truncated), with the member's number.
        let found = try header.withUnsafeMutableBytes {
            try SystemCalls.read(descriptor, $0.baseAddress!, $0.count, at: Int64(entry.compressedOffset), target: path)
        }
        guard found == header.count, BGZFInputStream.startsWithBGZFMember(Array(header.prefix(BGZFInputStream.signatureLength))) else {
            return
        }
        // From the file's start when few entries come before (every member's ISIZE then vouches
        // for the entry's plain offset), else from the entry before it.
        let anchor = membersBefore <= Self.walkedEntries ? 0 : membersBefore - 1
        let previous = anchor == 0 ? Entry(compressedOffset: 0, uncompressedOffset: 0) : entries[anchor - 1]
        var offset = Int64(previous.compressedOffset)
        var plain = previous.uncompressedOffset
        let target = Int64(entry.compressedOffset)
        var trailer = [UInt8](repeating: 0, count: 4)
        while offset < target {
            // The 16 bytes BGZF's signature covers, then BSIZE: the 18-byte BGZF header.
            let read = try header.withUnsafeMutableBytes {
                try SystemCalls.read(descriptor, $0.baseAddress!, $0.count, at: offset, target: path)
            }
            guard read == header.count, BGZFInputStream.startsWithBGZFMember(Array(header.prefix(BGZFInputStream.signatureLength))) else {
                throw IndexedGzipError.pointMismatch(point: membersBefore)
            }
            // BSIZE, the member's size minus 1, is the last field of BGZF's 18-byte header.
            let size = Int64(UInt16(header[16]) | UInt16(header[17]) << 8) + 1
            let trailerRead = try trailer.withUnsafeMutableBytes {
                try SystemCalls.read(descriptor, $0.baseAddress!, 4, at: offset + size - 4, target: path)
            }
            guard trailerRead == 4 else { throw IndexedGzipError.pointMismatch(point: membersBefore) }
            plain += UInt64(trailer[0]) | UInt64(trailer[1]) << 8 | UInt64(trailer[2]) << 16 | UInt64(trailer[3]) << 24
            offset += size
        }
        guard offset == target, plain == entry.uncompressedOffset else { throw IndexedGzipError.pointMismatch(point: membersBefore) }
    }
}

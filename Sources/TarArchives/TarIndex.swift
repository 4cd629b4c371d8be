import GzipStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The member index of a tar archive (usually a `.tar.gz`): every member's ``TarEntry`` by
/// header offset, a name-sorted table to find members by path, and what binds it to the one
/// archive it describes. `gzstream index F.tar.gz` writes it beside the archive as
/// `F.tar.gz.tarix`, from the decode that builds the GZIDX; ``IndexedTarArchive`` reads members
/// through both.
///
/// The file (all numbers little-endian): the magic `GZTARIX` and a zero byte, a 4-byte
/// version (1 or 2, below), then 56 bytes of binding and counts: the archive's compressed size
/// (8 bytes), its modification time (8 bytes of seconds, 4 of nanoseconds, 4 zero), 8 bytes
/// of its data (``Binding/compressedTail``), its plain size (8), the member count (8), the
/// record bytes' size before compression (8); then one
/// gzip member holding those 56 bytes again, every member's record (`TarIndexCoding`) and
/// the name table (4 bytes a member: indices in path order). The gzip member's CRC-32 covers
/// everything but the magic and version, and the copy of the binding inside it must match the
/// one outside.
///
/// The version says what the 8 bytes of data are. Version 1: the archive's last 8 bytes (for
/// gzip, the last member's CRC-32 and ISIZE, as the GZIDX seal holds them). Version 2, written
/// only for an archive whose last 8 bytes are zeros (an empty last member, as BGZF's
/// end-of-file block; those bytes are the same in every such archive, so they bind nothing):
/// ``Binding/sampledTail(head:end:)`` of its first and last 64 KiB. A version 1 index with
/// zeros there (an older gzstream's, of a BGZF archive) is bound by size and time alone and
/// is refused (``TarIndexError/Reason/weakBinding``); every other version 1 index reads as before,
/// and older readers refuse version 2 as a version they do not read.
///
/// Reading is bounded before anything is decoded: the member count may not exceed the plain
/// size over 512 (a member takes at least one header block), the record bytes not the plain
/// size plus 64 bytes a member, the file not its records' size plus 1/8 and 1 KiB.
/// A value type; `Sendable`.
public struct TarIndex: Sendable, Equatable {
    /// What ties an index to its archive: when any of it differs from the archive's, the index
    /// describes another file (or another version of it).
    public struct Binding: Sendable, Equatable {
        /// The archive file's size in bytes.
        public var compressedSize: Int64
        /// The archive file's modification time: seconds since the epoch, nanoseconds.
        public var modificationSeconds: Int64
        public var modificationNanoseconds: Int32
        /// The archive file's last 8 bytes (fewer for a shorter file); when those are zeros
        /// (``tailIsSampled``), ``sampledTail(head:end:)`` of its first and last bytes.
        public var compressedTail: [UInt8]
        /// Whether ``compressedTail`` is a digest of samples (format version 2), not the
        /// archive's last bytes.
        public var tailIsSampled: Bool
        /// The tar stream's size in bytes (the archive's plain data). In a binding given to
        /// ``TarIndex/init(decoding:expecting:)``, a negative value means "not known": not compared.
        public var plainSize: Int64

        /// A binding of these values.
        public init(compressedSize: Int64, modificationSeconds: Int64, modificationNanoseconds: Int32,
                    compressedTail: [UInt8], tailIsSampled: Bool = false, plainSize: Int64) {
            self.compressedSize = compressedSize
            self.modificationSeconds = modificationSeconds
            self.modificationNanoseconds = modificationNanoseconds
            self.compressedTail = compressedTail
            self.tailIsSampled = tailIsSampled
            self.plainSize = plainSize
        }

        /// How many bytes at each end of the archive ``sampledTail(head:end:)`` takes: 64 KiB.
        public static let sampleLength = 64 << 10

        /// Whether an archive whose last bytes are `lastBytes` (up to 8) is bound by samples
        /// instead: they are all zeros, as in every archive ending in an empty gzip member.
        public static func needsSampledTail(lastBytes: [UInt8]) -> Bool {
            !lastBytes.isEmpty && lastBytes.allSatisfy { $0 == 0 }
        }

        /// The 8 bytes that bind an archive whose last bytes are zeros: the 64-bit FNV-1a hash
        /// (little-endian) of `head` then `end`, its first and last ``sampleLength`` bytes
        /// (the whole file in each when it is shorter). Two reads and no decoding, so a listing
        /// stays instant; within those bytes lie the first members' headers and the last
        /// compressed blocks. Not a cryptographic hash: it tells another archive, or another
        /// version of this one, of the same size and time from this one, as the size and time
        /// do; an index is trusted by its owner and mode, not by this.
        public static func sampledTail(head: [UInt8], end: [UInt8]) -> [UInt8] {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in head { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            for byte in end { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return (0..<8).map { UInt8(truncatingIfNeeded: hash >> (8 * UInt64($0))) }
        }
    }

    /// The file's first 8 bytes.
    public static let magic: [UInt8] = Array("GZTARIX".utf8) + [0]
    /// The newest format version, which this reader reads with version 1 and this writer
    /// writes for a binding by samples (``Binding/tailIsSampled``; version 1 otherwise).
    public static let version: UInt32 = 2
    /// The suffix `gzstream index` adds to an archive's name.
    public static let fileSuffix = ".tarix"
    /// The bytes before the gzip member.
    static let headerSize = 12 + 56

    /// The largest index file an archive of `plainSize` plain bytes can need, in bytes: the
    /// bound ``init(decoding:expecting:)`` checks, for a reader to check before reading a file.
    public static func maximumFileSize(plainSize: Int64) -> Int {
        let members = max(plainSize, 0) / 512
        let records = max(plainSize, 0) + 64 * members + 64
        let (total, overflow) = records.addingReportingOverflow(records / 8 + 1024 + Int64(headerSize))
        return overflow || total > Int64(Int.max) ? Int.max : Int(total)
    }

    /// What the index is bound to.
    public var binding: Binding
    /// Every member, in archive order (increasing ``TarEntry/headerOffset``).
    public let entries: [TarEntry]
    /// Indices into ``entries`` in byte order of their paths; equal paths in archive order.
    let nameOrder: [Int32]

    /// An index of `entries` (in archive order, as ``TarScanner`` reports them) bound by `binding`.
    public init(entries: [TarEntry], binding: Binding) {
        self.entries = entries
        self.binding = binding
        nameOrder = Array(0..<Int32(entries.count)).sorted {
            let order = compareBytes(entries[Int($0)].path, entries[Int($1)].path)
            return order == 0 ? $0 < $1 : order < 0
        }
    }

    init(entries: [TarEntry], binding: Binding, nameOrder: [Int32]) {
        self.entries = entries
        self.binding = binding
        self.nameOrder = nameOrder
    }

    /// The member at `path` (exact bytes); when several have it, the last in the archive, which
    /// is the one extraction leaves (POSIX: a later member replaces an earlier one).
    /// Binary search: O(log n) comparisons.
    public func entry(atPath path: [UInt8]) -> TarEntry? {
        let upper = upperBound(path)
        guard upper > 0, entries[Int(nameOrder[upper - 1])].path == path else { return nil }
        return entries[Int(nameOrder[upper - 1])]
    }

    /// Every member whose path starts with `prefix`, in path order.
    public func entries(withPathPrefix prefix: [UInt8]) -> [TarEntry] {
        var low = 0
        var high = nameOrder.count
        while low < high {
            let middle = (low + high) / 2
            if entries[Int(nameOrder[middle])].path.lexicographicallyPrecedes(prefix) { low = middle + 1 } else { high = middle }
        }
        var found: [TarEntry] = []
        while low < nameOrder.count, entries[Int(nameOrder[low])].path.starts(with: prefix) {
            found.append(entries[Int(nameOrder[low])])
            low += 1
        }
        return found
    }

    /// The first position in ``nameOrder`` whose path is greater than `path`.
    private func upperBound(_ path: [UInt8]) -> Int {
        var low = 0
        var high = nameOrder.count
        while low < high {
            let middle = (low + high) / 2
            if path.lexicographicallyPrecedes(entries[Int(nameOrder[middle])].path) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

/// The byte order of `left` and `right` (negative, 0, positive), as `memcmp` then the length:
/// the order of the name table, faster than a generic lexicographic comparison.
/// The corresponding C function is `memcmp(3)`.
func compareBytes(_ left: [UInt8], _ right: [UInt8]) -> Int {
    let common = min(left.count, right.count)
    let order = left.withUnsafeBytes { l in right.withUnsafeBytes { r in common == 0 ? 0 : memcmp(l.baseAddress!, r.baseAddress!, common) } }
    if order != 0 { return Int(order) }
    return left.count - right.count
}

/// A member index that cannot be used: not one, another version of the format, made for
/// another file, larger than its archive can need, or damaged.
public struct TarIndexError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong with it.
    public enum Reason: Equatable, Sendable {
        /// It does not start with ``TarIndex/magic``.
        case notATarIndex
        /// Its version is not one this reader reads (1 or ``TarIndex/version``).
        case unsupportedVersion(UInt32)
        /// A version 1 index of an archive whose last bytes are zeros (BGZF): bound to it by
        /// size and time alone, so it may describe another archive.
        case weakBinding
        /// Its binding differs from the archive's: `field` names what (`"size"`, `"modification time"`,
        /// `"data"`: ``TarIndex/Binding/compressedTail``, `"plain size"`).
        case boundToAnotherFile(field: String)
        /// Its declared counts or sizes exceed what an archive of its plain size can need.
        case tooLarge(detail: String)
        /// Its bytes are inconsistent; `detail` says where.
        case damaged(detail: String)
        /// The archive's header at plain offset `offset` does not say what the index's record
        /// says about `field` (`"path"`, `"size"`, `"type"`, `"data offset"`, …); `"headers"`:
        /// no member's headers start there.
        case memberMismatch(offset: Int, field: String)
    }

    /// What is wrong.
    public var reason: Reason

    /// An error of `reason`.
    public init(_ reason: Reason) { self.reason = reason }

    /// The reason in words, for "not used: …".
    public var description: String {
        switch reason {
        case .notATarIndex: "not a gzstream member index"
        case .unsupportedVersion(let version): "a member index of version \(version), which this gzstream does not read"
        case .boundToAnotherFile(let field): "made for another file (its \(field) differs)"
        case .weakBinding: "made by an older gzstream, which bound it to this archive by size and time alone "
            + "(its last 8 bytes are zeros, as in every BGZF file)"
        case .tooLarge(let detail): "larger than its archive can need (\(detail))"
        case .damaged(let detail): "damaged member index: \(detail)"
        case .memberMismatch(let offset, let field) where field == "headers":
            // Not "has another headers": what is at that byte is no member's headers at all.
            "the member index does not match the archive: no member's headers start at byte \(offset) "
                + "(rebuild it with gzstream index -f)"
        case .memberMismatch(let offset, let field):
            "the member index does not match the archive: the header at byte \(offset) has another \(field) "
                + "(rebuild it with gzstream index -f)"
        }
    }
}

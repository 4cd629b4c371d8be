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
/// version (1), then 56 bytes of binding and counts: the archive's compressed size (8 bytes),
/// its modification time (8 bytes of seconds, 4 of nanoseconds), its last 8 compressed bytes
/// (for gzip, the last member's CRC-32 and ISIZE, as the GZIDX seal holds them), its plain
/// size (8), the member count (8), the record bytes' size before compression (8); then one
/// gzip member holding those 56 bytes again, every member's record (`TarIndexCoding`) and
/// the name table (4 bytes a member: indices in path order). The gzip member's CRC-32 covers
/// everything but the magic and version, and the copy of the binding inside it must match the
/// one outside.
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
        /// The archive file's last 8 bytes (fewer for a shorter file).
        public var compressedTail: [UInt8]
        /// The tar stream's size in bytes (the archive's plain data). In a binding given to
        /// ``TarIndex/init(decoding:expecting:)``, a negative value means "not known": not compared.
        public var plainSize: Int64

        /// A binding of these values.
        public init(compressedSize: Int64, modificationSeconds: Int64, modificationNanoseconds: Int32,
                    compressedTail: [UInt8], plainSize: Int64) {
            self.compressedSize = compressedSize
            self.modificationSeconds = modificationSeconds
            self.modificationNanoseconds = modificationNanoseconds
            self.compressedTail = compressedTail
            self.plainSize = plainSize
        }
    }

    /// The file's first 8 bytes.
    public static let magic: [UInt8] = Array("GZTARIX".utf8) + [0]
    /// The format version this reader reads and this writer writes.
    public static let version: UInt32 = 1
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
        /// Its version is not ``TarIndex/version``.
        case unsupportedVersion(UInt32)
        /// Its binding differs from the archive's: `field` names what (`"size"`, `"modification time"`…).
        case boundToAnotherFile(field: String)
        /// Its declared counts or sizes exceed what an archive of its plain size can need.
        case tooLarge(detail: String)
        /// Its bytes are inconsistent; `detail` says where.
        case damaged(detail: String)
        /// The archive's header at plain offset `offset` does not say what the index's record
        /// says about `field` (`"path"`, `"size"`, `"type"`, `"data offset"`, …).
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
        case .tooLarge(let detail): "larger than its archive can need (\(detail))"
        case .damaged(let detail): "damaged member index: \(detail)"
        case .memberMismatch(let offset, let field):
            "the member index does not match the archive: the header at byte \(offset) has another \(field) "
                + "(rebuild it with gzstream index -f)"
        }
    }
}

import ByteStreams
import GzipStreams

/// A tar archive read through a member index (``TarIndex``) and a plain-range reader (for a
/// `.tar.gz`, an `IndexedGzipInputStream` over its GZIDX, or for a BGZF one an
/// `IndexedBGZFInputStream` over its `.gzi`): members found by path without reading the
/// archive, and each member's data read from its own offset, decoding only from the access
/// point (or BGZF member) before it.
///
/// An index is data from a file beside the archive, so before a record is used its member's
/// headers are read again from the archive (``verifiedEntry(_:)``) and compared with the
/// record: path, link target, type, size, sparse map and data offset must agree, or
/// ``TarIndexError/Reason/memberMismatch(offset:field:)`` is thrown. A wrong index is an error,
/// never wrong bytes. (A `g` global header's values are not re-applied in that check: a
/// record whose path came from one is reported as a mismatch, not trusted.)
///
/// Ownership: the archive keeps `plain` open and uses it for every read; its owner closes it
/// after the archive is no longer used. Reads block while data decodes. Not thread-safe: one
/// thread at a time, content streams included (they share `plain`).
public final class IndexedTarArchive {
    /// The member index.
    public let index: TarIndex
    private let plain: any PlainRangeReading
    private let limits: TarScanner.Limits
    private let pathKey: (@Sendable ([UInt8]) -> [UInt8])?

    /// An archive whose plain bytes `plain` reads and whose members `index` lists.
    /// - Parameters:
    ///   - plain: The tar stream's reader by plain offset; not closed by the archive.
    ///   - index: The member index, already bound to this archive (``TarIndex/init(decoding:expecting:)``).
    ///   - limits: The caps for re-reading headers.
    ///   - pathKey: For an index that stores paths rewritten (ratarmount's stores them
    ///     normalised: no leading `./` or `/`, no trailing `/`), the same rewriting: a header's
    ///     path and a record's then agree when their keys are equal. `nil` (gzstream's own
    ///     index): the bytes must be equal. The entry returned keeps the header's own path.
    public init(plain: any PlainRangeReading, index: TarIndex, limits: TarScanner.Limits = TarScanner.Limits(),
                pathKey: (@Sendable ([UInt8]) -> [UInt8])? = nil) {
        self.plain = plain
        self.index = index
        self.limits = limits
        self.pathKey = pathKey
    }

    /// The member at `path` (the last one when several share it), checked against the archive.
    /// - Returns: The entry, or `nil` when the index has none at `path`.
    /// - Throws: As ``verifiedEntry(_:)``.
    public func entry(atPath path: [UInt8]) throws -> TarEntry? {
        guard let entry = index.entry(atPath: path) else { return nil }
        return try verifiedEntry(entry)
    }

    /// Reads `entry`'s headers from the archive (plain bytes `headerOffset..<dataOffset`) and
    /// checks that they describe the record.
    /// - Returns: The member as its headers describe it, at the record's offsets: every field
    ///   from the archive, none from the index.
    /// - Throws: ``TarIndexError`` `.memberMismatch` when they differ or are not a member's
    ///   headers; ``TarIndexError`` `.damaged` for a record whose headers span more than the
    ///   caps allow; `plain`'s errors (a range past the end is a `PlainRangeError`).
    public func verifiedEntry(_ entry: TarEntry) throws -> TarEntry {
        let length = entry.dataOffset - entry.headerOffset
        guard length >= TarFormat.blockSize, length <= 3 * limits.maximumHeaderBytes + 64 * TarFormat.blockSize else {
            throw TarIndexError(.damaged(detail: "the record at byte \(entry.headerOffset) has \(length) bytes of headers"))
        }
        let headers = try plain.read(range: entry.headerOffset..<entry.dataOffset)
        var scanner = TarScanner(limits: limits)
        let found: TarEntry
        do {
            let (consumed, event) = try headers.withUnsafeBytes { try scanner.scan($0) }
            guard case .entry(let parsed) = event else {
                throw TarIndexError(.memberMismatch(offset: entry.headerOffset, field: "headers"))
            }
            guard consumed == headers.count else {
                throw TarIndexError(.memberMismatch(offset: entry.headerOffset, field: "data offset"))
            }
            found = parsed
        } catch is TarError {
            throw TarIndexError(.memberMismatch(offset: entry.headerOffset, field: "headers"))
        }
        let samePath = if let pathKey { pathKey(found.path) == pathKey(entry.path) } else { found.path == entry.path }
        let field: String? = if !samePath { "path" }
            else if found.kind != entry.kind { "type" }
            else if found.size != entry.size { "size" }
            else if found.linkTarget != entry.linkTarget { "link target" }
            else if found.sparseMap != entry.sparseMap || found.realSize != entry.realSize { "sparse map" }
            else { nil }
        if let field { throw TarIndexError(.memberMismatch(offset: entry.headerOffset, field: field)) }
        // The fields not compared (mode, owner, times, device numbers) are taken from the
        // headers too: an edited record must not widen a mode or change an owner.
        var checked = found
        checked.headerOffset = entry.headerOffset
        checked.dataOffset = entry.dataOffset
        return checked
    }

    /// The data of `entry` (a record of ``index``), checked first (``verifiedEntry(_:)``): a
    /// stream of exactly ``TarEntry/size`` bytes read from ``TarEntry/dataOffset``. It shares the
    /// archive's reader: use it before opening another member's. It is open; closing it does
    /// not close the archive.
    /// - Throws: As ``verifiedEntry(_:)``; `plain`'s error seeking.
    public func content(of entry: TarEntry) throws -> ByteInputStream {
        let checked = try verifiedEntry(entry)
        try plain.seek(toPlainOffset: checked.dataOffset)
        let stream = TarRangeInputStream(plain: plain, count: checked.size, memberOffset: checked.headerOffset)
        stream.open()
        return stream
    }
}

/// `count` bytes read on from where `plain` was moved to; a shorter archive is `.truncated`.
final class TarRangeInputStream: ByteInputStream {
    private let plain: any PlainRangeReading
    private var remaining: Int
    private let memberOffset: Int

    init(plain: any PlainRangeReading, count: Int, memberOffset: Int) {
        self.plain = plain
        remaining = count
        self.memberOffset = memberOffset
        super.init()
    }

    override func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        guard remaining > 0 else { return 0 }
        let count = plain.read(buffer, maxLength: min(maxLength, remaining))
        if count < 0 { throw plain.streamErrorOrFallback(operation: "read") }
        if count == 0 { throw TarError(.truncated, offset: memberOffset) }
        remaining -= count
        return count
    }
}

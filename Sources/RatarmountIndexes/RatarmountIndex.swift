import GzipStreams
import TarArchives

/// ratarmount's index of a `.tar.gz` (`F.tar.gz.index.sqlite`, an SQLite 3 database), read as
/// untrusted input into gzstream's shapes: the members as a `TarIndex` and the gzip seek
/// index as a `GzipIndex`, so that an archive ratarmount has indexed can be listed and its
/// members read without indexing it again.
///
/// What is read (ratarmountcore's `create-index-tables.sql` and `SQLiteIndex.py`, index
/// version 0.7):
/// - `files`: one row a member, `path` (the parent folder, `""` or `/dir`) and `name` (text),
///   `offsetheader` and `offset` (integers: the plain offsets of the member's first header and
///   of its data), `size`, `mtime` (real), `mode` (the file type bits and permissions),
///   `type` (the typeflag byte, as a 1-byte blob), `linkname` (text), `uid`, `gid`, `issparse`,
///   `isgenerated` (a parent folder ratarmount added, not a member: skipped) and
///   `recursiondepth` (1 for a `.tar.gz`'s members, ratarmount counting the gzip layer, 0 for
///   a `.tar`'s; one less for a parent folder it added, which ratarmount 1.3.0 does not mark
///   `isgenerated`: skipped; deeper for a member of an archive inside the archive).
/// - `metadata`: the key `tarstats`, the JSON of Python's `os.stat` of the archive when it was
///   indexed; its `st_size` must equal the archive's size. Without it the index is bound to
///   nothing; each member is still checked against its header before use (below).
/// - The gzip index, from the first table present of `gztoolindex` (rapidgzip's export, in
///   gztool's format), `gzipindexes` and `gzipindex` (indexed_gzip's export, GZIDX): column
///   `data`, the index's bytes in blobs concatenated in rowid order, read through
///   `GzipIndexFile` as gzstream's own index files are.
///
/// Every value's type and range is checked (an index of another tool's making is data, not a
/// promise): offsets multiples of 512 within what the archive's size can hold, no two members
/// at one header offset, no sparse members (ratarmount keeps no sparse map), no members of
/// nested archives. ratarmount stores paths normalised (no `./`, no leading `/`, no trailing
/// `/`): the records' paths are those, a directory's with a `/` added as `tar -t` shows it, and
/// ``pathKey`` gives `IndexedTarArchive` the same normalisation for its header re-check, which
/// compares each member's headers with its record before its data is used (a wrong index is
/// an error, never wrong bytes).
///
/// A value: immutable and `Sendable`.
public struct RatarmountIndex: Sendable {
    /// The suffix ratarmount adds to an archive's name: `F.tar.gz.index.sqlite`.
    public static let fileSuffix = ".index.sqlite"
    /// The largest database file read, 1 GiB: SQLite's own largest blob is 1 GB, and
    /// ratarmount splits its gzip index into blobs of 256 MiB.
    public static let maximumFileSize = 1 << 30

    /// The largest database an archive of `compressedSize` bytes is taken with, in bytes:
    /// 64 MiB and 4 bytes a compressed byte (ratarmount's index of a 290 MB archive of 37,645
    /// members with its default seek point spacing was 326 MB), at most ``maximumFileSize``.
    public static func maximumFileSize(compressedSize: Int64) -> Int {
        let (scaled, overflow) = max(compressedSize, 0).multipliedReportingOverflow(by: 4)
        return overflow ? maximumFileSize : Int(min(Int64(maximumFileSize), scaled + (64 << 20)))
    }

    /// The members, in archive order, bound to the archive's size.
    public let members: TarIndex
    /// The gzip seek index, or `nil` when the database holds none (ratarmount writes none for a
    /// file too small for a second seek point, or for a plain `.tar`) or one without access
    /// points (which could only say to decode from the start).
    public let gzipIndex: GzipIndex?
    /// The table the gzip index came from (`"gztoolindex"`, `"gzipindex"`...), for messages.
    public let gzipIndexTable: String?
    /// The archive size `tarstats` records, or `nil` when the database records none.
    public let recordedArchiveSize: Int64?

    /// The normalisation ratarmount applies to a member's path (`SQLiteIndex.normpath`: Python's
    /// `posixpath.normpath` of `/` + path): `.` and empty components dropped, `..` removing the
    /// one before it (never above the root), no leading or trailing `/`.
    public static let pathKey: @Sendable ([UInt8]) -> [UInt8] = { path in
        var components: [ArraySlice<UInt8>] = []
        for component in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if component.elementsEqual([UInt8(ascii: ".")]) { continue }
            if component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                _ = components.popLast()
                continue
            }
            components.append(component)
        }
        return Array(components.joined(separator: [UInt8(ascii: "/")]))
    }

    /// Reads ratarmount's index from the bytes of its database file.
    /// - Parameters:
    ///   - bytes: The whole `.index.sqlite` file, read by the caller through a descriptor it
    ///     trusts, at most ``maximumFileSize(compressedSize:)`` bytes.
    ///   - compressedSize: The archive file's size in bytes, which the index must record (when
    ///     it records one) and whose plain size bounds every offset.
    ///   - compressed: Whether the archive is compressed (a `.tar.gz`, not a `.tar`): it says
    ///     at which `recursiondepth` its members are.
    /// - Throws: ``RatarmountIndexError`` naming the table and row at fault: not an SQLite
    ///   database, not ratarmount's (no `files` table), made for a file of another size, a value
    ///   of the wrong type or out of range, two members at one offset, a member it cannot
    ///   describe (sparse, nested), or a gzip index `GzipIndexFile` refuses.
    /// Blocks while SQLite reads. Wraps SQLite's `sqlite3_deserialize` (read-only, in memory)
    /// and its queries.
    public init(databaseBytes bytes: [UInt8], compressedSize: Int64, compressed: Bool = true) throws(RatarmountIndexError) {
        try Self.checkSize(bytes.count, compressedSize: compressedSize)
        try self.init(database: SQLiteSnapshot(bytes: bytes, maximumLength: bytes.count), byteCount: bytes.count,
                      compressedSize: compressedSize, compressed: compressed)
    }

    /// Reads ratarmount's index from its database file, open as `descriptor`: its `byteCount`
    /// bytes (its size as `fstat(2)` gave it) go straight into one buffer SQLite owns, so the
    /// file is held in memory once (a 1 GiB index takes 1 GiB, not 2).
    /// - Parameters:
    ///   - descriptor: The `.index.sqlite` file, opened and checked by the caller (owner, mode,
    ///     no symbolic link), read with `pread(2)` from byte 0; not closed.
    ///   - byteCount: Its size in bytes, at most ``maximumFileSize(compressedSize:)``; a file
    ///     that has since grown is read to this size, one that shrank as it is.
    ///   - path: Its name, for read errors.
    ///   - compressedSize: As in ``init(databaseBytes:compressedSize:compressed:)``.
    ///   - compressed: As in ``init(databaseBytes:compressedSize:compressed:)``.
    /// - Throws: ``RatarmountIndexError`` as ``init(databaseBytes:compressedSize:compressed:)``
    ///   does (checked before anything is read: the size bound); `ByteStreamError` when reading
    ///   fails.
    /// Blocks while it reads and SQLite reads. Wraps `pread(2)`, SQLite's `sqlite3_malloc64`
    /// and `sqlite3_deserialize` (read-only, `SQLITE_DESERIALIZE_FREEONCLOSE`) and its queries.
    public init(databaseDescriptor descriptor: Int32, byteCount: Int, path: String, compressedSize: Int64,
                compressed: Bool = true) throws {
        try Self.checkSize(byteCount, compressedSize: compressedSize)
        let database = try SQLiteSnapshot(descriptor: descriptor, count: byteCount, path: path, maximumLength: byteCount)
        try self.init(database: database, byteCount: byteCount, compressedSize: compressedSize, compressed: compressed)
    }

    /// Refuses a database file of `count` bytes, more than an index of this archive can need.
    private static func checkSize(_ count: Int, compressedSize: Int64) throws(RatarmountIndexError) {
        guard count <= Self.maximumFileSize(compressedSize: compressedSize) else {
            throw RatarmountIndexError(reason: "\(count) bytes, more than an index of a file of \(compressedSize) bytes can need")
        }
    }

    /// The index in `database`, a file of `byteCount` bytes (the bound of its gzip index's blobs).
    private init(database: SQLiteSnapshot, byteCount: Int, compressedSize: Int64, compressed: Bool) throws(RatarmountIndexError) {
        guard try database.kind(of: "files") == "table" else {
            throw RatarmountIndexError(reason: "no table files: not an index ratarmount wrote")
        }
        recordedArchiveSize = try Self.recordedSize(database)
        if let recorded = recordedArchiveSize, recorded != compressedSize {
            throw RatarmountIndexError(reason: "made for another file: it records an archive of \(recorded) bytes, "
                + "this one has \(compressedSize)", table: "metadata")
        }
        // deflate's ratio is at most 1032:1, so no plain offset of this archive is beyond this.
        let plainBound = compressedSize.multipliedReportingOverflow(by: 1032).overflow ? Int64.max : compressedSize * 1032 + 1024
        let entries = try RatarmountRows.entries(database, plainBound: plainBound, compressed: compressed)
        // A record inside another member's data could point at a header there (a tar stored in
        // the tar) that passes the header check: regular files' data ranges may not hold one.
        var dataEnd = 0
        var holder = 0
        for entry in entries.sorted(by: { $0.headerOffset < $1.headerOffset }) {
            guard entry.headerOffset >= dataEnd else {
                throw RatarmountIndexError(reason: "the member at plain offset \(entry.headerOffset) lies inside the data "
                    + "of the member at \(holder)", table: "files")
            }
            if entry.kind == .regular, entry.endOffset > dataEnd {
                dataEnd = entry.endOffset
                holder = entry.headerOffset
            }
        }
        (gzipIndex, gzipIndexTable) = try Self.gzipIndex(database, compressedSize: compressedSize, byteBound: byteCount)
        members = TarIndex(entries: entries, binding: TarIndex.Binding(
            compressedSize: compressedSize, modificationSeconds: 0, modificationNanoseconds: 0, compressedTail: [],
            plainSize: gzipIndex.map { Int64(clamping: $0.plainSize) } ?? -1))
    }

    /// `tarstats`' `st_size`, through SQLite's `json_extract`; `nil` without a `metadata`
    /// table or a `tarstats` key.
    private static func recordedSize(_ database: SQLiteSnapshot) throws(RatarmountIndexError) -> Int64? {
        guard let kind = try database.kind(of: "metadata") else { return nil }
        guard kind == "table" else { throw RatarmountIndexError(reason: "metadata is a \(kind), not a table") }
        var size: Int64?
        var seen = false
        try database.rows("SELECT json_extract(value, '$.st_size') FROM metadata WHERE key = 'tarstats'",
                          table: "metadata") { row throws(RatarmountIndexError) in
            guard !seen else { throw row.fault("a second tarstats") }
            seen = true
            if row.isNull(0) { return }
            let value = try row.integer(0, "tarstats' st_size")
            guard value >= 0 else { throw row.fault("tarstats' st_size is \(value)") }
            size = value
        }
        return size
    }

    /// The gzip index in the first table present of `gztoolindex`, `gzipindexes`, `gzipindex`:
    /// its blobs joined in rowid order (at most `byteBound` bytes in all) and read as gztool's
    /// format or GZIDX, with no more access points than the archive can need; `nil` for none,
    /// an empty table, or an index without access points.
    private static func gzipIndex(_ database: SQLiteSnapshot, compressedSize: Int64, byteBound: Int)
        throws(RatarmountIndexError) -> (GzipIndex?, String?) {
        for table in ["gztoolindex", "gzipindexes", "gzipindex"] {
            guard let kind = try database.kind(of: table) else { continue }
            guard kind == "table" else { throw RatarmountIndexError(reason: "\(table) is a \(kind), not a table") }
            var bytes: [UInt8] = []
            try database.rows("SELECT data FROM \(table) ORDER BY rowid", table: table) { row throws(RatarmountIndexError) in
                let blob = try row.blob(0, "data")
                guard bytes.count + blob.count <= byteBound else { throw row.fault("blobs larger than the file") }
                bytes += blob
            }
            guard !bytes.isEmpty else { return (nil, nil) }
            let file: GzipIndexFile
            do {
                file = try GzipIndexFile(bytes: bytes, compressedSize: UInt64(compressedSize), formats: [.gzidx, .gztool])
            } catch {
                throw RatarmountIndexError(reason: error.description, table: table)
            }
            // Without access points an index offers no place to start decoding but the file's
            // start: taken as none, so a reader looks for another (a GZIDX beside the archive)
            // or decodes from the start without a word about an index it could not have used.
            guard case .accessPoints(let index) = file, !index.points.isEmpty else { return (nil, nil) }
            let maximum = GzipIndex.maximumPointCount(compressedSize: compressedSize)
            guard index.points.count <= maximum else {
                throw RatarmountIndexError(reason: "\(index.points.count) access points, more than the \(maximum) "
                    + "a file of \(compressedSize) bytes can need", table: table)
            }
            return (index, table)
        }
        return (nil, nil)
    }
}

/// A ratarmount index that cannot be used: the table and row at fault (when one is), and why.
public struct RatarmountIndexError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong: `"offset is text, not an integer"`.
    public var reason: String
    /// The table at fault, or `nil` for the file as a whole.
    public var table: String?
    /// The row of ``table`` at fault, from 1 in the order read (`files` by header offset), or
    /// `nil` for the table as a whole.
    public var row: Int?

    /// An error of `reason` at `row` of `table`.
    public init(reason: String, table: String? = nil, row: Int? = nil) {
        self.reason = reason
        self.table = table
        self.row = row
    }

    /// The message a user reads after "not used: ": `table files, row 3: offset is text, not an integer`.
    public var description: String {
        guard let table else { return reason }
        return "table \(table)" + (row.map { ", row \($0)" } ?? "") + ": \(reason)"
    }
}

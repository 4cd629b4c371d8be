import TarArchives

/// The rows of ratarmount's `files` table as ``TarEntry`` records, each value's type and range
/// checked (``RatarmountIndex`` says what the columns hold).
enum RatarmountRows {
    /// The longest path taken, in bytes: ratarmount declares its path columns VARCHAR(65535).
    static let maximumPathLength = 65535

    /// Every member of the `files` table, in archive order (by header offset); generated
    /// parent folders skipped.
    /// - Parameters:
    ///   - plainBound: No offset or member end may exceed it, in plain bytes.
    ///   - compressed: Whether the archive is compressed: ratarmount counts the compression as
    ///     a level, so its own members are at `recursiondepth` 1 (else 0), the parent folders
    ///     it adds for members whose folders the archive lacks one level above (0, else -1;
    ///     ratarmount 1.3.0 leaves `isgenerated` 0 on them), and members of an archive inside
    ///     the archive below.
    /// - Throws: ``RatarmountIndexError`` naming the row of `files` at fault.
    static func entries(_ database: SQLiteSnapshot, plainBound: Int64, compressed: Bool)
        throws(RatarmountIndexError) -> [TarEntry] {
        let memberDepth: Int64 = compressed ? 1 : 0
        var entries: [TarEntry] = []
        var lastHeader: Int64 = -1
        let query = """
            SELECT path, name, offsetheader, offset, size, mtime, mode, type, linkname, uid, gid,
                   issparse, isgenerated, recursiondepth
            FROM files ORDER BY offsetheader, rowid
            """
        try database.rows(query, table: "files") { row throws(RatarmountIndexError) in
            guard try flag(row, 12, "isgenerated") == false else { return }
            let depth = try row.integer(13, "recursiondepth")
            if depth == memberDepth - 1 { return }
            guard depth <= memberDepth else {
                throw row.fault("a member of an archive inside the archive (ratarmount --recursive), which gzstream does not read")
            }
            guard depth == memberDepth else { throw row.fault("recursiondepth \(depth), not \(memberDepth) or \(memberDepth - 1)") }
            guard try flag(row, 11, "issparse") == false else {
                throw row.fault("a sparse member, whose sparse map ratarmount does not keep")
            }
            let header = try row.integer(2, "offsetheader")
            let data = try row.integer(3, "offset")
            let size = try row.integer(4, "size")
            guard header >= 0, header % 512 == 0, header < plainBound else { throw row.fault("offsetheader \(header) is not a header's offset") }
            guard header != lastHeader else { throw row.fault("a second member at header offset \(header)") }
            lastHeader = header
            guard data > header, (data - header) % 512 == 0, data <= plainBound else {
                throw row.fault("offset \(data) is not a data offset after the header at \(header)")
            }
            guard size >= 0, size <= plainBound - data else { throw row.fault("size \(size) goes past what the archive can hold") }
            var path = try text(row, 0, "path", allowsEmpty: true)
            let name = try text(row, 1, "name", allowsEmpty: false)
            path = Array((path + [UInt8(ascii: "/")] + name).drop { $0 == UInt8(ascii: "/") })
            let kind = TarEntry.Kind(typeflag: try typeflag(row))
            if kind == .directory { path.append(UInt8(ascii: "/")) }
            let mode = try row.integer(6, "mode")
            guard (0...0o177777).contains(mode) else { throw row.fault("mode \(mode) is not a file mode") }
            let seconds = try row.number(5, "mtime")
            guard seconds.isFinite, abs(seconds) < 1e17 else { throw row.fault("mtime \(seconds) is not a time") }
            let link = try row.isNull(8) ? [] : text(row, 8, "linkname", allowsEmpty: true)
            let user = try row.integer(9, "uid")
            let group = try row.integer(10, "gid")
            guard (0...Int64(UInt32.max)).contains(user), (0...Int64(UInt32.max)).contains(group) else {
                throw row.fault("uid \(user) or gid \(group) is not an owner")
            }
            let whole = seconds.rounded(.down)
            entries.append(TarEntry(path: path, kind: kind, size: Int(size), mode: UInt32(mode & 0o7777),
                                    userID: Int(user), groupID: Int(group),
                                    modificationTime: TarEntry.Timestamp(seconds: Int64(whole),
                                                                         nanoseconds: Int32((seconds - whole) * 1e9)),
                                    linkTarget: link, headerOffset: Int(header), dataOffset: Int(data)))
        }
        return entries
    }

    /// A text column of at most ``maximumPathLength`` bytes without NUL.
    private static func text(_ row: SQLiteRow, _ index: Int32, _ name: String, allowsEmpty: Bool)
        throws(RatarmountIndexError) -> [UInt8] {
        guard let bytes = try row.text(index, name) else { throw row.fault("\(name) is NULL") }
        guard allowsEmpty || !bytes.isEmpty else { throw row.fault("\(name) is empty") }
        guard bytes.count <= maximumPathLength else { throw row.fault("\(name) is \(bytes.count) bytes long") }
        guard !bytes.contains(0) else { throw row.fault("\(name) holds a NUL byte") }
        return bytes
    }

    /// A boolean column: the integer 0 or 1 (Python's `bool` in SQLite), NULL as false.
    private static func flag(_ row: SQLiteRow, _ index: Int32, _ name: String) throws(RatarmountIndexError) -> Bool {
        if row.isNull(index) { return false }
        switch try row.integer(index, name) {
        case 0: return false
        case 1: return true
        case let other: throw row.fault("\(name) is \(other), not 0 or 1")
        }
    }

    /// The typeflag byte: ratarmount stores Python's `TarInfo.type`, a 1-byte blob (`b"0"`);
    /// an integer 0–9 is taken as that digit.
    private static func typeflag(_ row: SQLiteRow) throws(RatarmountIndexError) -> UInt8 {
        if !row.isNull(7), let digit = try? row.integer(7, "type") {
            guard (0...9).contains(digit) else { throw row.fault("type \(digit) is not a typeflag") }
            return UInt8(ascii: "0") + UInt8(digit)
        }
        let bytes = try row.blob(7, "type")
        guard bytes.count == 1 else { throw row.fault("type is \(bytes.count) bytes, not one typeflag") }
        return bytes[0]
    }
}

/// A member header block's own fields, before any long-name or extended header applies: the
/// ustar layout (POSIX.1-1988 §10.1.1, Table 10-1) read as ustar (`ustar\0`: `prefix/name`),
/// GNU (`ustar `: no prefix; its bytes 345… hold times and sparse runs) or v7 (no magic: only
/// name, mode, IDs, size, mtime, typeflag and linkname mean anything).
enum TarHeaderFields {
    /// Offsets of the old GNU header's sparse fields (GNU tar's `struct oldgnu_header`).
    static let oldGNUSparseStart = 386
    static let oldGNUSparseCount = 4
    static let oldGNUIsExtended = 482
    static let oldGNURealSize = 483..<495
    /// In an extension block: 21 runs from byte 0, then `isextended` at 504.
    static let extensionSparseCount = 21
    static let extensionIsExtended = 504

    /// The entry `header` describes by itself; offsets are left 0 for the parser to set.
    /// - Throws: ``TarError`` `.badNumber` at `offset` for a numeric field that is not one.
    static func entry(from header: UnsafeRawBufferPointer, at offset: Int) throws(TarError) -> TarEntry {
        func field(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: header[range]) }
        func number(_ range: Range<Int>, _ name: String, signed: Bool = false) throws(TarError) -> Int64 {
            guard let value = TarFormat.number(in: field(range)), signed || value >= 0 else {
                throw TarError(.badNumber(field: name), offset: offset)
            }
            return value
        }
        let magic = Array(field(TarFormat.Field.magic))
        let isUstar = magic == TarFormat.ustarMagic
        let isGNU = magic == TarFormat.gnuMagic
        var name = TarFormat.text(in: field(TarFormat.Field.name))
        if isUstar {
            let prefix = TarFormat.text(in: field(TarFormat.Field.prefix))
            if !prefix.isEmpty { name = prefix + [UInt8(ascii: "/")] + name }
        }
        let typeflag = header[TarFormat.Field.typeflag]
        var kind = TarEntry.Kind(typeflag: typeflag)
        // Pre-POSIX archives mark a directory by a trailing slash on a regular-file typeflag.
        if kind == .regular, name.last == UInt8(ascii: "/") { kind = .directory }
        let size = try number(TarFormat.Field.size, "size")
        guard size <= Int64(Int.max) else { throw TarError(.badNumber(field: "size"), offset: offset) }
        var entry = TarEntry(path: name, kind: kind, size: Int(size),
                             mode: UInt32(truncatingIfNeeded: try number(TarFormat.Field.mode, "mode") & 0o7777),
                             userID: Int(try number(TarFormat.Field.userID, "uid", signed: true)),
                             groupID: Int(try number(TarFormat.Field.groupID, "gid", signed: true)),
                             modificationTime: TarEntry.Timestamp(seconds: try number(TarFormat.Field.modificationTime, "mtime", signed: true)),
                             linkTarget: TarFormat.text(in: field(TarFormat.Field.linkName)))
        if isUstar || isGNU {
            entry.userName = TarFormat.text(in: field(TarFormat.Field.userName))
            entry.groupName = TarFormat.text(in: field(TarFormat.Field.groupName))
            if kind == .characterDevice || kind == .blockDevice {
                entry.deviceMajor = Int(try number(TarFormat.Field.deviceMajor, "devmajor"))
                entry.deviceMinor = Int(try number(TarFormat.Field.deviceMinor, "devminor"))
            }
        }
        if kind == .sparse {
            guard isGNU else { throw TarError(.badSparseMap(detail: "a sparse header that is not GNU's"), offset: offset) }
            let realSize = try number(oldGNURealSize, "realsize")
            guard realSize <= Int64(Int.max) else { throw TarError(.badNumber(field: "realsize"), offset: offset) }
            entry.realSize = Int(realSize)
            entry.sparseMap = []
        }
        return entry
    }

    /// The entry after the global and the member's extended headers and GNU long names:
    /// a member's `x` value first, then its `L`/`K` name, then a `g` value, then the header's.
    static func applying(_ member: TarOverrides, _ global: TarOverrides, longName: [UInt8]?, longLink: [UInt8]?,
                         to header: TarEntry) -> TarEntry {
        var entry = header
        entry.path = resolve(member.path, longName.map { .value($0) } ?? global.path, header.path)
        entry.linkTarget = resolve(member.linkTarget, longLink.map { .value($0) } ?? global.linkTarget, header.linkTarget)
        entry.size = resolve(member.size, global.size, header.size)
        entry.userID = resolve(member.userID, global.userID, header.userID)
        entry.groupID = resolve(member.groupID, global.groupID, header.groupID)
        entry.userName = resolve(member.userName, global.userName, header.userName)
        entry.groupName = resolve(member.groupName, global.groupName, header.groupName)
        entry.modificationTime = resolve(member.modificationTime, global.modificationTime, header.modificationTime)
        if entry.kind != .sparse { entry.realSize = entry.size }
        return entry
    }

    /// Whether a member of `kind` has no data after its header whatever its size field says.
    static func holdsNoData(_ kind: TarEntry.Kind) -> Bool {
        switch kind {
        case .hardLink, .symbolicLink, .characterDevice, .blockDevice, .directory, .fifo: true
        default: false
        }
    }
}

/// The header blocks of one member as ``TarWriter`` writes them: a POSIX ustar header
/// (POSIX.1-1988 §10.1.1), preceded by a POSIX.1-2001 pax extended header (typeflag `x`) when a
/// value does not fit ustar. A pure function of the entry: no I/O, thread-safe.
///
/// A PAX record is written for
/// - `path`: a path that cannot be split at a `/` into `prefix` (155 bytes) and `name` (100), or
///   that holds a byte outside ASCII;
/// - `linkpath`: a link target longer than 100 bytes or not ASCII;
/// - `size`: 8 GiB or more (the ustar field's 11 octal digits end at 8 GiB − 1);
/// - `uid`, `gid`: above 0o7777777 (2,097,151), or negative;
/// - `uname`, `gname`: longer than 32 bytes or not ASCII;
/// - `mtime`: before 1970 or after the 11 octal digits (year 2242), or with nanoseconds when
///   sub-second times are asked for;
/// - `hdrcharset=BINARY` first, when a path, link target or name is not valid UTF-8: POSIX
///   says PAX values are UTF-8; this record says they are the file system's bytes as they are
///   (what GNU tar writes, and Python's tarfile and libarchive read).
/// The ustar field of a value moved to a PAX record holds what fits (0 for a number, the first
/// bytes of a name), as Python's tarfile writes it. Device numbers that exceed their octal
/// fields are written in GNU base-256, which GNU tar and libarchive read; POSIX has no record
/// for them.
public enum TarHeaderEncoding {
    /// The header blocks for `entry` (its `path`, `kind`, `size`, `mode`, IDs, names,
    /// `modificationTime`, `linkTarget`, device numbers; its offsets and sparse fields are not
    /// read): 512 bytes, or 1024 + the PAX records padded to 512 when any value needs one.
    /// - Parameters:
    ///   - entry: The member to describe.
    ///   - storesSubsecondTimes: Whether an `mtime` with nanoseconds gets a PAX record
    ///     (`seconds.fraction`); otherwise the time is cut to whole seconds, as ustar stores it.
    /// - Throws: ``TarWriteError`` (``TarWriteError/Reason/emptyPath``,
    ///   ``TarWriteError/Reason/nulInName``, ``TarWriteError/Reason/unrepresentable(field:)``
    ///   for a sparse kind or device numbers beyond base-256).
    public static func headerBlocks(for entry: TarEntry, storesSubsecondTimes: Bool = false) throws(TarWriteError) -> [UInt8] {
        let path = entry.path
        guard !path.isEmpty else { throw TarWriteError(.emptyPath, path: path) }
        guard !path.contains(0), !entry.linkTarget.contains(0) else { throw TarWriteError(.nulInName, path: path) }
        if entry.kind == .sparse { throw TarWriteError(.unrepresentable(field: "typeflag"), path: path) }
        precondition(entry.size >= 0, "a tar member's size is not negative")

        var records: [(String, [UInt8])] = []
        let split = splitPath(path)
        if split == nil || !isASCII(path) { records.append(("path", path)) }
        let linkFits = entry.linkTarget.count <= 100 && isASCII(entry.linkTarget)
        if !linkFits { records.append(("linkpath", entry.linkTarget)) }
        let size = octalOrRecord(Int64(entry.size), digits: 11, key: "size", into: &records)
        let userID = octalOrRecord(Int64(entry.userID), digits: 7, key: "uid", into: &records)
        let groupID = octalOrRecord(Int64(entry.groupID), digits: 7, key: "gid", into: &records)
        if entry.userName.count > 32 || !isASCII(entry.userName) { records.append(("uname", entry.userName)) }
        if entry.groupName.count > 32 || !isASCII(entry.groupName) { records.append(("gname", entry.groupName)) }
        let time = entry.modificationTime
        var seconds = time.seconds
        if !(0...maximumOctal(digits: 11)).contains(seconds)
            || (storesSubsecondTimes && time.nanoseconds != 0) {
            records.append(("mtime", Array(decimalTime(time, subsecond: storesSubsecondTimes).utf8)))
            if !(0...maximumOctal(digits: 11)).contains(seconds) { seconds = 0 }
        }
        if [path, entry.linkTarget, entry.userName, entry.groupName].contains(where: { !isValidUTF8($0) }) {
            records.insert(("hdrcharset", Array("BINARY".utf8)), at: 0)
        }
        guard let deviceMajor = TarFormat.numberField(Int64(entry.deviceMajor), width: 8, allowBase256: true) else {
            throw TarWriteError(.unrepresentable(field: "devmajor"), path: path)
        }
        guard let deviceMinor = TarFormat.numberField(Int64(entry.deviceMinor), width: 8, allowBase256: true) else {
            throw TarWriteError(.unrepresentable(field: "devminor"), path: path)
        }

        var member = Block()
        member.put(split?.name ?? path.prefix(100), at: TarFormat.Field.name)
        member.put(split?.prefix ?? [], at: TarFormat.Field.prefix)
        member.putOctal(Int64(entry.mode & 0o7777), at: TarFormat.Field.mode)
        member.putOctal(userID, at: TarFormat.Field.userID)
        member.putOctal(groupID, at: TarFormat.Field.groupID)
        member.putOctal(size, at: TarFormat.Field.size)
        member.putOctal(seconds, at: TarFormat.Field.modificationTime)
        member.bytes[TarFormat.Field.typeflag] = entry.kind.typeflag
        member.put(TarFormat.ustarMagic, at: TarFormat.Field.magic)
        member.put(TarFormat.ustarVersion, at: TarFormat.Field.version)
        member.put(linkFits ? entry.linkTarget[...] : entry.linkTarget.prefix(100), at: TarFormat.Field.linkName)
        member.put(entry.userName.prefix(32), at: TarFormat.Field.userName)
        member.put(entry.groupName.prefix(32), at: TarFormat.Field.groupName)
        member.put(deviceMajor[...], at: TarFormat.Field.deviceMajor)
        member.put(deviceMinor[...], at: TarFormat.Field.deviceMinor)
        member.seal()
        guard !records.isEmpty else { return member.bytes }

        // The extended header: its records, then the member's own header.
        let body = records.flatMap { record($0.0, $0.1) }
        var extended = Block()
        extended.put(paxHeaderName(for: path).prefix(100), at: TarFormat.Field.name)
        extended.putOctal(0o644, at: TarFormat.Field.mode)
        extended.putOctal(userID, at: TarFormat.Field.userID)
        extended.putOctal(groupID, at: TarFormat.Field.groupID)
        extended.putOctal(Int64(body.count), at: TarFormat.Field.size)
        extended.putOctal(seconds, at: TarFormat.Field.modificationTime)
        extended.bytes[TarFormat.Field.typeflag] = UInt8(ascii: "x")
        extended.put(TarFormat.ustarMagic, at: TarFormat.Field.magic)
        extended.put(TarFormat.ustarVersion, at: TarFormat.Field.version)
        extended.put(entry.userName.prefix(32), at: TarFormat.Field.userName)
        extended.put(entry.groupName.prefix(32), at: TarFormat.Field.groupName)
        extended.putOctal(0, at: TarFormat.Field.deviceMajor)
        extended.putOctal(0, at: TarFormat.Field.deviceMinor)
        extended.seal()
        let padding = TarFormat.paddedSize(body.count) - body.count
        return extended.bytes + body + [UInt8](repeating: 0, count: padding) + member.bytes
    }

    /// One PAX record, `LENGTH KEY=VALUE\n`, whose decimal LENGTH counts the whole record,
    /// its own digits included (POSIX.1-2001 pax, "pax Extended Header File Format").
    public static func record(_ key: String, _ value: [UInt8]) -> [UInt8] {
        let rest = 1 + key.utf8.count + 1 + value.count + 1  // " " key "=" value "\n"
        var length = rest + String(rest).count
        // Adding the digits may cross a power of ten (98 + 2 = 100): then one digit more.
        if String(length).count > String(rest).count { length = rest + String(length).count }
        return Array("\(length) \(key)=".utf8) + value + [UInt8(ascii: "\n")]
    }

    /// The ustar `prefix` and `name` of `path`, as POSIX.1-1988 §10.1.1 joins them
    /// (`prefix + "/" + name`): the whole path as `name` when it fits 100 bytes, else split at
    /// the last `/` that leaves `prefix` at most 155 bytes and a non-empty `name` of at most 100
    /// (the split GNU tar and Python's tarfile choose); `nil` when no `/` does.
    public static func splitPath(_ path: [UInt8]) -> (prefix: ArraySlice<UInt8>, name: ArraySlice<UInt8>)? {
        if path.count <= 100 { return ([], path[...]) }
        let slash = UInt8(ascii: "/")
        var index = min(path.count - 1, 155)
        while index > 0 {
            if path[index] == slash {
                let name = path[(index + 1)...]
                // A directory's trailing `/` stays with its name; an earlier `/` leaves a
                // longer name, so the first that leaves too long a one ends the search.
                if !name.isEmpty {
                    if name.count > 100 { return nil }
                    return (path[..<index], name)
                }
            }
            index -= 1
        }
        return nil
    }

    /// The extended header's own name, as GNU tar 1.34 makes it (its template
    /// `%d/PaxHeaders/%f`): the member's directory (`.` when it has none), `/PaxHeaders/`, and
    /// its last component (a trailing `/` dropped): `./PaxHeaders/file`, `a/b/PaxHeaders/c`.
    /// Cut to 100 bytes by the caller, as GNU tar cuts it; readers ignore it.
    static func paxHeaderName(for path: [UInt8]) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        var trimmed = path[...]
        while trimmed.count > 1, trimmed.last == slash { trimmed = trimmed.dropLast() }
        guard let last = trimmed.lastIndex(of: slash) else { return Array("./PaxHeaders/".utf8) + trimmed }
        return Array(trimmed[..<last]) + Array("/PaxHeaders/".utf8) + trimmed[(last + 1)...]
    }

    /// `value` when it fits `digits` octal digits (and is not negative), else 0 with a PAX
    /// record `key` holding it in decimal.
    private static func octalOrRecord(_ value: Int64, digits: Int, key: String,
                                      into records: inout [(String, [UInt8])]) -> Int64 {
        if (0...maximumOctal(digits: digits)).contains(value) { return value }
        records.append((key, Array(String(value).utf8)))
        return 0
    }

    private static func maximumOctal(digits: Int) -> Int64 { (1 << (3 * Int64(digits))) - 1 }

    /// A time as a PAX `mtime` value: decimal seconds, and with `subsecond` a `.` and the
    /// nanoseconds without trailing zeros; a time before 1970 is negative (`-1.5`).
    static func decimalTime(_ time: TarEntry.Timestamp, subsecond: Bool) -> String {
        guard subsecond, time.nanoseconds != 0 else { return String(time.seconds) }
        func fraction(_ nanoseconds: Int32) -> String {
            var digits = String(nanoseconds)
            digits = String(repeating: "0", count: 9 - digits.count) + digits
            while digits.last == "0" { digits.removeLast() }
            return digits
        }
        if time.seconds >= 0 { return "\(time.seconds).\(fraction(time.nanoseconds))" }
        // seconds + nanoseconds/1e9 is negative: -(|seconds + 1|).(1e9 - nanoseconds).
        return "-\(-(time.seconds + 1)).\(fraction(1_000_000_000 - time.nanoseconds))"
    }

    private static func isASCII(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { $0 < 0x80 } }

    private static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// One header block being filled, NUL everywhere at first.
    private struct Block {
        var bytes = [UInt8](repeating: 0, count: TarFormat.blockSize)

        mutating func put(_ text: some Collection<UInt8>, at field: Range<Int>) {
            precondition(text.count <= field.count)
            bytes.replaceSubrange(field.lowerBound..<field.lowerBound + text.count, with: text)
        }

        /// Octal digits filling the field but its last byte, then NUL (`0000644\0`), as GNU tar
        /// and Python's tarfile write them. - Precondition: the value fits.
        mutating func putOctal(_ value: Int64, at field: Range<Int>) {
            put(TarFormat.numberField(value, width: field.count, allowBase256: false)!, at: field)
        }

        /// The checksum as six octal digits, NUL, space (POSIX.1-1988 §10.1.1; what GNU tar writes).
        mutating func seal() {
            let sum = bytes.withUnsafeBytes { TarFormat.checksum(of: $0) }
            var digits = Array(String(sum, radix: 8).utf8)
            digits.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, 6 - digits.count)), at: 0)
            put(digits + [0, UInt8(ascii: " ")], at: TarFormat.Field.checksum)
        }
    }
}

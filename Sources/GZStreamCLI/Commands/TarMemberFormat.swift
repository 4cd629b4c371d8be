import ByteStreams
import TarArchives

/// How `list --members` writes a member: its name as `tar -t` shows it, GNU tar's `tar -tv`
/// line, or a JSON object.
enum TarMemberFormat {
    /// The name's bytes for a terminal, as GNU tar's default `escape` quoting shows them in a
    /// UTF-8 locale: valid UTF-8 as is, except controls; a control character, DEL, or a byte
    /// that is not part of valid UTF-8 as `\ooo`, and `\` as `\\`.
    static func quotedName(_ name: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(name.count)
        var index = 0
        func octal(_ byte: UInt8) {
            result += [UInt8(ascii: "\\"), UInt8(ascii: "0") + (byte >> 6), UInt8(ascii: "0") + ((byte >> 3) & 7),
                       UInt8(ascii: "0") + (byte & 7)]
        }
        while index < name.count {
            let byte = name[index]
            if byte < 0x80 {
                if byte == UInt8(ascii: "\\") {
                    result += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                } else if byte < 0x20 || byte == 0x7f {
                    octal(byte)
                } else {
                    result.append(byte)
                }
                index += 1
                continue
            }
            let length = validUTF8Length(name, at: index)
            if length == 0 {
                octal(byte)
                index += 1
            } else {
                result += name[index..<(index + length)]
                index += length
            }
        }
        return result
    }

    /// The length of the valid UTF-8 sequence (2 to 4 bytes, not a C1 control) at `index`, or 0.
    private static func validUTF8Length(_ bytes: [UInt8], at index: Int) -> Int {
        let first = bytes[index]
        let length = first >= 0xf0 && first <= 0xf4 ? 4 : first >= 0xe0 ? 3 : first >= 0xc2 && first < 0xe0 ? 2 : 0
        guard length > 0, index + length <= bytes.count else { return 0 }
        let sequence = Array(bytes[index..<(index + length)])
        var iterator = sequence.makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator), iterator.next() == nil else { return 0 }
        return (0x80..<0xa0).contains(scalar.value) ? 0 : length
    }

    /// GNU tar's `tar -tv` line (its `print_header`): the type and mode as `ls -l` shows them,
    /// `owner/group` (names, or IDs when the archive has none) and the size (`major,minor` for
    /// a device; a sparse file's full size) right-aligned to `ownerSizeWidth`, which grows to
    /// the widest line yet, the local date and time `YYYY-MM-DD HH:MM`, the name, and
    /// ` -> target` for a symbolic link or ` link to target` for a hard link.
    static func long(_ entry: TarEntry, ownerSizeWidth: inout Int) -> String {
        let owner = entry.userName.isEmpty ? String(entry.userID) : String(decoding: quotedName(entry.userName), as: UTF8.self)
        let group = entry.groupName.isEmpty ? String(entry.groupID) : String(decoding: quotedName(entry.groupName), as: UTF8.self)
        let size = switch entry.kind {
        case .characterDevice, .blockDevice: "\(entry.deviceMajor),\(entry.deviceMinor)"
        default: String(entry.realSize)
        }
        let ownerGroup = owner + "/" + group
        let width = ownerGroup.utf8.count + 1 + size.utf8.count
        if width > ownerSizeWidth { ownerSizeWidth = width }
        let padding = String(repeating: " ", count: ownerSizeWidth - ownerGroup.utf8.count - size.utf8.count)
        var line = modeString(entry) + " " + ownerGroup + padding + size + " " + localDate(entry.modificationTime.seconds)
            + " " + String(decoding: quotedName(entry.path), as: UTF8.self)
        switch entry.kind {
        case .symbolicLink: line += " -> " + String(decoding: quotedName(entry.linkTarget), as: UTF8.self)
        case .hardLink: line += " link to " + String(decoding: quotedName(entry.linkTarget), as: UTF8.self)
        default: break
        }
        return line
    }

    /// `drwxr-xr-x`: the type letter GNU tar shows (`h` for a hard link, `C` contiguous, `?`
    /// for a type it does not know), then `rwx` three times with setuid, setgid and sticky as
    /// `s`/`S` and `t`/`T`.
    static func modeString(_ entry: TarEntry) -> String {
        let type: Character = switch entry.kind {
        case .regular, .sparse: entry.path.last == UInt8(ascii: "/") ? "d" : "-"
        case .hardLink: "h"
        case .symbolicLink: "l"
        case .characterDevice: "c"
        case .blockDevice: "b"
        case .directory: "d"
        case .fifo: "p"
        case .contiguous: "C"
        case .other(let flag): flag == UInt8(ascii: "D") ? "d" : "?"
        }
        let mode = entry.mode
        var text = String(type)
        for (shift, special, letter) in [(6, UInt32(0o4000), "s"), (3, UInt32(0o2000), "s"), (0, UInt32(0o1000), "t")] {
            let bits = (mode >> UInt32(shift)) & 7
            text += bits & 4 != 0 ? "r" : "-"
            text += bits & 2 != 0 ? "w" : "-"
            if mode & special != 0 {
                text += bits & 1 != 0 ? letter : letter.uppercased()
            } else {
                text += bits & 1 != 0 ? "x" : "-"
            }
        }
        return text
    }

    /// `YYYY-MM-DD HH:MM` in the local time zone (`TZ`), as GNU tar's listing shows a time.
    /// Through C's `localtime_r(3)` (``CLibrary/localTime(_:)``).
    static func localDate(_ seconds: Int64) -> String {
        guard let time = CLibrary.localTime(Int(seconds)) else { return String(seconds) }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(time.year)-\(two(time.month))-\(two(time.day)) \(two(time.hour)):\(two(time.minute))"
    }

    /// The member as a JSON object (RFC 8259): `name`, `type` (`file`, `hardlink`, `symlink`,
    /// `chardev`, `blockdev`, `directory`, `fifo`, `contiguous`, `sparse`, `other`), `size`
    /// (a sparse file's full size), `mode` (the permission bits as a number), `uid`, `gid`,
    /// `uname`, `gname`, `mtime` (seconds since 1970, with a fraction when the archive has one),
    /// `link` (a link's target, else empty), `offset` (its first header's plain offset).
    /// Names that are not UTF-8 have each invalid byte replaced by U+FFFD.
    static func json(_ entry: TarEntry) -> String {
        let type = switch entry.kind {
        case .regular: "file"
        case .hardLink: "hardlink"
        case .symbolicLink: "symlink"
        case .characterDevice: "chardev"
        case .blockDevice: "blockdev"
        case .directory: "directory"
        case .fifo: "fifo"
        case .contiguous: "contiguous"
        case .sparse: "sparse"
        case .other: "other"
        }
        var mtime = String(entry.modificationTime.seconds)
        if entry.modificationTime.nanoseconds != 0 {
            var fraction = String(entry.modificationTime.nanoseconds)
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            mtime += "." + fraction
        }
        return "{\"name\": \(jsonString(entry.pathString)), \"type\": \"\(type)\", \"size\": \(entry.realSize), "
            + "\"mode\": \(entry.mode), \"uid\": \(entry.userID), \"gid\": \(entry.groupID), "
            + "\"uname\": \(jsonString(String(decoding: entry.userName, as: UTF8.self))), "
            + "\"gname\": \(jsonString(String(decoding: entry.groupName, as: UTF8.self))), \"mtime\": \(mtime), "
            + "\"link\": \(jsonString(entry.linkTargetString)), \"offset\": \(entry.headerOffset)}"
    }
}

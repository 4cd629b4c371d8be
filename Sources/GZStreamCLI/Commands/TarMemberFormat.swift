import ByteStreams
import CWideCharacters
import TarArchives
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library's `C.UTF-8` locale, made once and never freed (`nil` where the C library has
/// none), for ``TarMemberFormat/isPrintable(_:)``. `nonisolated(unsafe)`: it is only read
/// after Swift's once-only initialization, and `iswprint_l` does not change it.
/// The corresponding C function is `newlocale(3)`.
nonisolated(unsafe) private let utf8Locale: locale_t? = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil)

/// How `list --members` writes a member: its name as `tar -t` shows it, GNU tar's `tar -tv`
/// line, or a JSON object.
enum TarMemberFormat {
    /// The name's bytes for a terminal, as GNU tar 1.34 shows them with its default quoting
    /// (gnulib's `quotearg`, `--quoting-style=escape`) in a UTF-8 locale, whatever the locale
    /// gzstream runs in: `\a`, `\b`, `\t`, `\n`, `\v`, `\f`, `\r` for those controls and
    /// `\\` for `\`; every other control byte and DEL as `\ooo` (three octal digits); a
    /// UTF-8 sequence as is when it encodes a character the C library prints (``isPrintable(_:)``),
    /// else each of its bytes as `\ooo` (C1 controls, U+2028, U+2029, unassigned code points);
    /// a byte that does not begin a valid UTF-8 sequence (overlong, surrogate, past U+10FFFF,
    /// cut short) as `\ooo`, and decoding goes on at the next byte, as `mbrtowc(3)` leaves it.
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
                switch byte {
                case 0x07: result += [UInt8(ascii: "\\"), UInt8(ascii: "a")]
                case 0x08: result += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
                case 0x09: result += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case 0x0a: result += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0b: result += [UInt8(ascii: "\\"), UInt8(ascii: "v")]
                case 0x0c: result += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
                case 0x0d: result += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case UInt8(ascii: "\\"): result += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case ..<0x20, 0x7f: octal(byte)
                default: result.append(byte)
                }
                index += 1
                continue
            }
            guard let (scalar, length) = utf8Scalar(name, at: index) else {
                octal(byte)
                index += 1
                continue
            }
            if isPrintable(scalar) {
                result += name[index..<(index + length)]
            } else {
                for byte in name[index..<(index + length)] { octal(byte) }
            }
            index += length
        }
        return result
    }

    /// The valid UTF-8 sequence of 2 to 4 bytes at `index` (RFC 3629 §3: shortest form, no
    /// surrogates, at most U+10FFFF) and its length in bytes, or `nil`.
    private static func utf8Scalar(_ bytes: [UInt8], at index: Int) -> (Unicode.Scalar, Int)? {
        let first = bytes[index]
        let length = first >= 0xf0 && first <= 0xf4 ? 4 : first >= 0xe0 && first < 0xf0 ? 3 : first >= 0xc2 && first < 0xe0 ? 2 : 0
        guard length > 0, index + length <= bytes.count else { return nil }
        var iterator = bytes[index..<(index + length)].makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator), iterator.next() == nil else { return nil }
        return (scalar, length)
    }

    /// Whether GNU tar shows `scalar` as is: the C library's `iswprint` in its `C.UTF-8`
    /// locale (glibc's table, the one tar itself consults); where that locale cannot be made,
    /// Swift's Unicode properties, with glibc's rule (not a control, line or paragraph
    /// separator, surrogate, or unassigned). Thread safety: safe from any thread.
    /// The corresponding C function is `iswprint_l(3)`.
    static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        if let locale = utf8Locale { return iswprint_l(wint_t(scalar.value), locale) != 0 }
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: return false
        default: return true
        }
    }

    /// GNU tar's `tar -tv` line (its `print_header`): the type and mode as `ls -l` shows them,
    /// `owner/group` (names, or IDs when the archive has none; names quoted as ``quotedName(_:)``
    /// quotes, where tar writes their bytes raw, controls too) and the size (`major,minor` for
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
            // Before 1970 the time is the seconds (rounded down) plus the nanoseconds: −2 s + 0.75 s is −1.25.
            let negative = entry.modificationTime.seconds < 0
            let whole = negative ? -(entry.modificationTime.seconds + 1) : entry.modificationTime.seconds
            let nanoseconds = negative ? 1_000_000_000 - Int(entry.modificationTime.nanoseconds) : Int(entry.modificationTime.nanoseconds)
            var fraction = String(nanoseconds)
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            mtime = (negative ? "-" : "") + String(whole) + "." + fraction
        }
        return "{\"name\": \(jsonString(entry.pathString)), \"type\": \"\(type)\", \"size\": \(entry.realSize), "
            + "\"mode\": \(entry.mode), \"uid\": \(entry.userID), \"gid\": \(entry.groupID), "
            + "\"uname\": \(jsonString(String(decoding: entry.userName, as: UTF8.self))), "
            + "\"gname\": \(jsonString(String(decoding: entry.groupName, as: UTF8.self))), \"mtime\": \(mtime), "
            + "\"link\": \(jsonString(entry.linkTargetString)), \"offset\": \(entry.headerOffset)}"
    }
}

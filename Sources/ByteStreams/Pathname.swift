/// A file's name as the system takes it: bytes without NUL, in no particular encoding (POSIX
/// calls it a pathname). A name that is not valid UTF-8 (`caf\351.txt`, written in ISO 8859-1)
/// still names its file, which a `String` decoded from it would not.
///
/// ``description`` is for people: valid UTF-8 as it is, each byte that is not part of valid
/// UTF-8 as a backslash and three octal digits (`caf\351.txt`).
public struct Pathname: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name's bytes, without a terminating NUL.
    public let bytes: [UInt8]

    /// A pathname of exactly `bytes`, or `nil` when they hold a NUL byte (a C string would end
    /// there).
    public init?(bytes: some Sequence<UInt8>) {
        let bytes = Array(bytes)
        if bytes.contains(0) { return nil }
        self.bytes = bytes
    }

    /// `string` in UTF-8, up to its first NUL character if it has one (where `open(2)` would
    /// stop reading it).
    public init(_ string: String) {
        bytes = Array(string.utf8.prefix { $0 != 0 })
    }

    /// The UTF-8 bytes of a string literal, as ``init(_:)``.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The bytes of a NUL-terminated C string (an `argv` entry, a directory entry's `d_name`).
    public init(cString: UnsafePointer<CChar>) {
        var bytes: [UInt8] = []
        var next = cString
        while next.pointee != 0 {
            bytes.append(UInt8(bitPattern: next.pointee))
            next += 1
        }
        self.bytes = bytes
    }

    /// Whether the name has no bytes (no file has it).
    public var isEmpty: Bool { bytes.isEmpty }

    /// Calls `body` with the name as a NUL-terminated C string, valid only during the call.
    public func withCString<Result>(_ body: (UnsafePointer<CChar>) throws -> Result) rethrows -> Result {
        try (bytes + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    /// The name for messages: valid UTF-8 as it is, any other byte as `\` and three octal
    /// digits (`caf\351.txt`). Not a path to open: use ``bytes``.
    public var description: String {
        var result = ""
        var rest = bytes[...]
        while !rest.isEmpty {
            var decoder = UTF8()
            var iterator = rest.makeIterator()
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                result.unicodeScalars.append(scalar)
                rest = rest.dropFirst(UTF8.width(scalar))
            case .error, .emptyInput:
                let octal = String(rest.first!, radix: 8)
                result += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
                rest = rest.dropFirst()
            }
        }
        return result
    }
}

// MARK: Path arithmetic

/// What a path is made of, byte for byte (UTF-8 or not): `/` is the only separator, as for the
/// kernel. Nothing here touches the file system.
extension Pathname {
    private static let slash = UInt8(ascii: "/")

    /// The path up to and with its last `/`, or empty when it has none: `a/b/c` → `a/b/`,
    /// `/x` → `/`, `x` → ``.
    package var directoryPart: Pathname {
        guard let last = bytes.lastIndex(of: Self.slash) else { return "" }
        return Pathname(bytes: bytes[...last])!
    }

    /// The part after the last `/` (all of it when there is none; empty for a path that ends
    /// in `/`): the name looked up in ``directoryPart``.
    package var lastComponent: Pathname {
        Pathname(bytes: bytes[directoryPart.bytes.count...])!
    }

    /// The last component, one trailing `/` ignored: `a/b/` → `b`, as `basename(1)` names it
    /// for a name to store or to run as.
    package var baseName: Pathname {
        let trimmed = bytes.last == Self.slash ? bytes.dropLast() : bytes[...]
        let start = trimmed.lastIndex(of: Self.slash).map { $0 + 1 } ?? trimmed.startIndex
        return Pathname(bytes: trimmed[start...])!
    }

    /// The path split for a lookup relative to a directory: the directory part (`.` when
    /// there is none, `/` for a path at the root) and the last component, trailing `/`s
    /// dropped (`/` itself is `.` in `/`), and whether there were any: a path given as `dir/`
    /// must name a directory, and a symbolic link there is followed, as a lookup by that path
    /// would.
    package var lookupParts: (directory: Pathname, name: Pathname, trailingSlash: Bool) {
        var trimmed = bytes[...]
        while trimmed.count > 1, trimmed.last == Self.slash { trimmed = trimmed.dropLast() }
        let trailingSlash = trimmed.count < bytes.count
        if trimmed.elementsEqual([Self.slash]) { return ("/", ".", true) }
        guard let last = trimmed.lastIndex(of: Self.slash) else { return (".", Pathname(bytes: trimmed)!, trailingSlash) }
        return (Pathname(bytes: trimmed[...last])!, Pathname(bytes: trimmed[(last + 1)...])!, trailingSlash)
    }

    /// `name` inside this directory: `dir` + `/` + `name` (no second `/` after `dir/`).
    package func appending(component name: Pathname) -> Pathname {
        if isEmpty || bytes.last == Self.slash { return Pathname(bytes: bytes + name.bytes)! }
        return Pathname(bytes: bytes + [Self.slash] + name.bytes)!
    }

    /// The name with `suffix`'s bytes added at the end (`x` → `x.gz`).
    package func appending(_ suffix: Pathname) -> Pathname {
        Pathname(bytes: bytes + suffix.bytes)!
    }

    /// Whether the name ends with `suffix`'s bytes, ASCII letters in any case.
    package func hasSuffixIgnoringCase(_ suffix: Pathname) -> Bool {
        let tail = suffix.bytes
        guard bytes.count >= tail.count else { return false }
        return zip(bytes.suffix(tail.count), tail).allSatisfy { Self.asciiLowercase($0) == Self.asciiLowercase($1) }
    }

    /// The name with ASCII capitals made small and every other byte unchanged (C's `tolower`
    /// in the C locale, as gzip compares suffixes).
    package var asciiLowercased: Pathname { Pathname(bytes: bytes.map(Self.asciiLowercase))! }

    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}

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

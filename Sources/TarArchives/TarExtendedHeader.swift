/// The values a POSIX.1-2001 extended header (`x` for one member, `g` for every member after it)
/// or a GNU long-name/long-link header overrides, parsed from its records.
///
/// A record is `length keyword=value\n`, `length` the decimal byte count of the whole record
/// including itself and the newline (POSIX.1-2001 pax, "pax Extended Header File Format").
/// Keywords this reader uses: `path`, `linkpath`, `size`, `uid`, `gid`, `uname`, `gname`,
/// `mtime` (seconds with an optional fraction), and GNU tar's `GNU.sparse.*`. Others (`atime`,
/// `ctime`, `comment`, `charset`, vendor keywords) are read and ignored, as POSIX allows.
/// An empty value removes the keyword's value (POSIX: "the field is deleted"): in an `x` header,
/// the member then takes the ustar header's field even over a global value.
struct TarOverrides: Sendable {
    /// An override of one field: a value, or `.cleared` (an empty record value).
    enum Setting<Value: Sendable>: Sendable {
        case value(Value)
        case cleared
    }

    var path: Setting<[UInt8]>?
    var linkTarget: Setting<[UInt8]>?
    var size: Setting<Int>?
    var userID: Setting<Int>?
    var groupID: Setting<Int>?
    var userName: Setting<[UInt8]>?
    var groupName: Setting<[UInt8]>?
    var modificationTime: Setting<TarEntry.Timestamp>?
    /// GNU tar's sparse keywords, in the order they came (`GNU.sparse.offset` and
    /// `GNU.sparse.numbytes` repeat in format 0.0, so order matters).
    var sparse = TarPaxSparse()

    /// Whether no keyword was set.
    var isEmpty: Bool {
        path == nil && linkTarget == nil && size == nil && userID == nil && groupID == nil && userName == nil
            && groupName == nil && modificationTime == nil && !sparse.isPresent
    }

    /// The records of an extended header's data, applied in order over `self`.
    /// - Parameters:
    ///   - data: The header's data (its `size` bytes, without the block padding).
    ///   - offset: The plain offset of the extended header's block, for errors.
    /// - Throws: ``TarError`` `.badExtendedHeader` for a malformed record or value, `.nulInName`
    ///   for a `path` or `linkpath` holding a NUL.
    mutating func apply(records data: [UInt8], at offset: Int) throws(TarError) {
        var position = 0
        while position < data.count {
            // Some writers pad the data with NULs after the last record.
            if data[position] == 0, data[position...].allSatisfy({ $0 == 0 }) { break }
            var cursor = position
            var length = 0
            while cursor < data.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(data[cursor]) {
                length = length * 10 + Int(data[cursor] - UInt8(ascii: "0"))
                cursor += 1
                guard length <= data.count else { throw Self.bad("a record's length exceeds the header's data", offset) }
            }
            guard cursor > position, cursor < data.count, data[cursor] == UInt8(ascii: " ") else {
                throw Self.bad("a record at byte \(position) of its data does not start with a length and a space", offset)
            }
            let end = position + length
            guard length > cursor - position + 1, end <= data.count, data[end - 1] == UInt8(ascii: "\n") else {
                throw Self.bad("the record at byte \(position) of its data does not end where its length \(length) says", offset)
            }
            let body = data[(cursor + 1)..<(end - 1)]
            guard let equals = body.firstIndex(of: UInt8(ascii: "=")), equals > body.startIndex else {
                throw Self.bad("the record at byte \(position) of its data has no keyword=value", offset)
            }
            let keyword = String(decoding: body[body.startIndex..<equals], as: UTF8.self)
            try set(keyword, to: Array(body[(equals + 1)...]), at: offset)
            position = end
        }
    }

    /// Applies one record.
    private mutating func set(_ keyword: String, to value: [UInt8], at offset: Int) throws(TarError) {
        let empty = value.isEmpty
        switch keyword {
        case "path":
            guard !value.contains(0) else { throw TarError(.nulInName, offset: offset) }
            path = empty ? .cleared : .value(value)
        case "linkpath":
            guard !value.contains(0) else { throw TarError(.nulInName, offset: offset) }
            linkTarget = empty ? .cleared : .value(value)
        case "size": size = empty ? .cleared : .value(try Self.decimal(value, keyword, offset))
        case "uid": userID = empty ? .cleared : .value(try Self.decimal(value, keyword, offset))
        case "gid": groupID = empty ? .cleared : .value(try Self.decimal(value, keyword, offset))
        case "uname": userName = empty ? .cleared : .value(value)
        case "gname": groupName = empty ? .cleared : .value(value)
        case "mtime": modificationTime = empty ? .cleared : .value(try Self.time(value, offset))
        default:
            if keyword.hasPrefix("GNU.sparse.") {
                try sparse.set(String(keyword.dropFirst("GNU.sparse.".count)), value, at: offset)
            }
        }
    }

    /// `value` as a non-negative decimal number that fits `Int`.
    static func decimal(_ value: some Collection<UInt8>, _ keyword: String, _ offset: Int) throws(TarError) -> Int {
        var result = 0
        guard !value.isEmpty else { throw bad("\(keyword) is not a decimal number", offset) }
        for byte in value {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                throw bad("\(keyword) is not a decimal number", offset)
            }
            let (times10, overflow) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow, !overflow2 else { throw bad("\(keyword) is too large", offset) }
            result = sum
        }
        return result
    }

    /// A PAX time: `[-]seconds[.fraction]`, the fraction's first nine digits kept as nanoseconds
    /// (POSIX.1-2001 pax, "mtime": "decimal representation of the time … may include a fraction").
    static func time(_ value: [UInt8], _ offset: Int) throws(TarError) -> TarEntry.Timestamp {
        var digits = value[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        let dot = digits.firstIndex(of: UInt8(ascii: "."))
        let whole = try decimal(digits[..<(dot ?? digits.endIndex)], "mtime", offset)
        var nanoseconds = 0
        if let dot {
            let fraction = digits[(dot + 1)...]
            guard fraction.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                throw bad("mtime is not a decimal number", offset)
            }
            var scale = 100_000_000
            for byte in fraction.prefix(9) {
                nanoseconds += Int(byte - UInt8(ascii: "0")) * scale
                scale /= 10
            }
        }
        guard whole <= Int(Int64.max) - 1 else { throw bad("mtime is too large", offset) }
        if !negative { return TarEntry.Timestamp(seconds: Int64(whole), nanoseconds: Int32(nanoseconds)) }
        // -1.25 is 1.25 s before the epoch: −2 s plus 0.75 s.
        if nanoseconds == 0 { return TarEntry.Timestamp(seconds: -Int64(whole)) }
        return TarEntry.Timestamp(seconds: -Int64(whole) - 1, nanoseconds: Int32(1_000_000_000 - nanoseconds))
    }

    static func bad(_ detail: String, _ offset: Int) -> TarError {
        TarError(.badExtendedHeader(detail: detail), offset: offset)
    }
}

extension TarOverrides.Setting {
    /// The value, or `fallback` when cleared.
    func resolved(_ fallback: Value) -> Value {
        switch self {
        case .value(let value): value
        case .cleared: fallback
        }
    }
}

/// A member's fields after a global and a per-member extended header: the member's setting when it
/// has one (even `.cleared`), else the global one, else the header's value.
func resolve<Value>(_ member: TarOverrides.Setting<Value>?, _ global: TarOverrides.Setting<Value>?,
                    _ header: Value) -> Value {
    if let member { return member.resolved(header) }
    if let global { return global.resolved(header) }
    return header
}

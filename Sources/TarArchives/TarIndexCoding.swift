import GzipStreams

/// The bytes of a ``TarIndex`` file (its layout is in ``TarIndex``'s documentation).
///
/// A member's record, numbers as LEB128 varints (signed ones zig-zag encoded), byte strings as
/// a varint length then the bytes: header offset less the previous member's end (signed),
/// data offset less header offset, typeflag (1 byte), size, real size, mode, uid (signed), gid
/// (signed), uname, gname, mtime seconds (signed), nanoseconds, path, link target, device major,
/// minor, then the sparse map: 0 for none, else its run count + 1 and each run's offset and length.
extension TarIndex {
    /// The file's bytes.
    /// - Throws: The gzip writer's error (none in practice: it writes to memory).
    public func encoded() throws -> [UInt8] {
        var records = TarIndexWriter()
        var previousEnd = 0
        for entry in entries {
            records.signed(entry.headerOffset - previousEnd)
            records.unsigned(entry.dataOffset - entry.headerOffset)
            records.bytes.append(entry.kind.typeflag)
            records.unsigned(entry.size)
            records.unsigned(entry.realSize)
            records.unsigned(Int(entry.mode))
            records.signed(entry.userID)
            records.signed(entry.groupID)
            records.string(entry.userName)
            records.string(entry.groupName)
            records.signed(Int(entry.modificationTime.seconds))
            records.unsigned(Int(entry.modificationTime.nanoseconds))
            records.string(entry.path)
            records.string(entry.linkTarget)
            records.unsigned(entry.deviceMajor)
            records.unsigned(entry.deviceMinor)
            if let map = entry.sparseMap {
                records.unsigned(map.count + 1)
                for run in map {
                    records.unsigned(run.offset)
                    records.unsigned(run.length)
                }
            } else {
                records.unsigned(0)
            }
            previousEnd = entry.endOffset
        }
        for index in nameOrder { records.fixed(UInt64(UInt32(index)), width: 4) }
        let fields = Self.fields(binding, count: entries.count, recordsSize: records.bytes.count)
        let payload = try (fields + records.bytes).gzipped(level: 1)
        return Self.magic + Self.little(binding.tailIsSampled ? 2 : 1, width: 4) + fields + payload
    }

    /// Reads an index file's bytes.
    /// - Parameters:
    ///   - bytes: The whole file.
    ///   - expected: The archive's binding; `nil` to take the file's (tests, tools).
    /// - Throws: ``TarIndexError``: not one, another version, bound to another file, larger
    ///   than its archive can need, damaged (the gzip member's own errors included).
    public init(decoding bytes: [UInt8], expecting expected: Binding?) throws(TarIndexError) {
        guard bytes.count >= Self.headerSize, Array(bytes[0..<8]) == Self.magic else { throw TarIndexError(.notATarIndex) }
        var header = TarIndexReader(bytes: bytes[8..<Self.headerSize])
        let version = UInt32(try header.fixed(width: 4))
        guard version == 1 || version == Self.version else { throw TarIndexError(.unsupportedVersion(version)) }
        let compressedSize = Int64(bitPattern: try header.fixed(width: 8))
        let seconds = Int64(bitPattern: try header.fixed(width: 8))
        let nanoseconds = Int32(truncatingIfNeeded: try header.fixed(width: 4))
        _ = try header.fixed(width: 4)
        let tail = Array(try header.take(8))
        let plainSize = Int64(bitPattern: try header.fixed(width: 8))
        let count = try header.fixed(width: 8)
        let recordsSize = try header.fixed(width: 8)
        let binding = Binding(compressedSize: compressedSize, modificationSeconds: seconds, modificationNanoseconds: nanoseconds,
                              compressedTail: tail, tailIsSampled: version == 2, plainSize: plainSize)
        if let expected {
            let field: String? = if expected.compressedSize != compressedSize { "size" }
                else if (expected.modificationSeconds, expected.modificationNanoseconds) != (seconds, nanoseconds) { "modification time" }
                // An older writer's index of an archive whose last bytes are zeros holds those
                // zeros: nothing of the archive's data is bound.
                else if expected.tailIsSampled && version == 1 && Binding.needsSampledTail(lastBytes: tail) {
                    throw TarIndexError(.weakBinding)
                }
                else if expected.tailIsSampled != binding.tailIsSampled || Self.paddedTail(expected.compressedTail) != tail {
                    "data"
                }
                else if expected.plainSize >= 0 && expected.plainSize != plainSize { "plain size" }
                else { nil }
            if let field { throw TarIndexError(.boundToAnotherFile(field: field)) }
        }
        guard plainSize >= 0, count <= UInt64(plainSize) / 512 else {
            throw TarIndexError(.tooLarge(detail: "\(count) members in \(plainSize) plain bytes"))
        }
        guard recordsSize <= UInt64(plainSize) + 64 * count + 64 else {
            throw TarIndexError(.tooLarge(detail: "\(recordsSize) bytes of records"))
        }
        guard UInt64(bytes.count - Self.headerSize) <= recordsSize + recordsSize / 8 + 1024 else {
            throw TarIndexError(.tooLarge(detail: "\(bytes.count) bytes"))
        }
        let payload: [UInt8]
        do {
            payload = try Array(bytes[Self.headerSize...]).gunzipped(maximumOutputSize: Int(recordsSize) + 56)
        } catch {
            throw TarIndexError(.damaged(detail: "its records do not decode (\(error))"))
        }
        guard payload.count == Int(recordsSize) + 56, Array(payload[0..<56]) == Array(bytes[12..<Self.headerSize]) else {
            throw TarIndexError(.damaged(detail: "its records do not match its header"))
        }
        let (entries, order) = try Self.decodeRecords(payload[56...], count: Int(count), plainSize: Int(plainSize))
        self.init(entries: entries, binding: binding, nameOrder: order)
    }

    /// The 56 bytes of binding and counts.
    static func fields(_ binding: Binding, count: Int, recordsSize: Int) -> [UInt8] {
        little(UInt64(bitPattern: binding.compressedSize), width: 8)
            + little(UInt64(bitPattern: binding.modificationSeconds), width: 8)
            + little(UInt64(UInt32(bitPattern: binding.modificationNanoseconds)), width: 4) + little(0, width: 4)
            + paddedTail(binding.compressedTail) + little(UInt64(bitPattern: binding.plainSize), width: 8)
            + little(UInt64(count), width: 8) + little(UInt64(recordsSize), width: 8)
    }

    /// A file's last bytes as stored: 8 of them, zeros first for a shorter file.
    static func paddedTail(_ tail: [UInt8]) -> [UInt8] {
        [UInt8](repeating: 0, count: 8 - min(tail.count, 8)) + tail.suffix(8)
    }

    static func little(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// The records and name table, each checked: offsets increasing inside the plain size, the
    /// table a permutation in path order.
    private static func decodeRecords(_ bytes: ArraySlice<UInt8>, count: Int,
                                      plainSize: Int) throws(TarIndexError) -> ([TarEntry], [Int32]) {
        var reader = TarIndexReader(bytes: bytes)
        var entries: [TarEntry] = []
        entries.reserveCapacity(count)
        var previousEnd = 0
        for _ in 0..<count {
            let headerOffset = previousEnd + (try reader.signed())
            let dataOffset = headerOffset + (try reader.unsigned())
            let kind = TarEntry.Kind(typeflag: try reader.take(1).first!)
            var entry = TarEntry(path: [], kind: kind, size: try reader.unsigned())
            entry.realSize = try reader.unsigned()
            entry.mode = UInt32(truncatingIfNeeded: try reader.unsigned())
            entry.userID = try reader.signed()
            entry.groupID = try reader.signed()
            entry.userName = try reader.string()
            entry.groupName = try reader.string()
            entry.modificationTime = TarEntry.Timestamp(seconds: Int64(try reader.signed()),
                                                        nanoseconds: Int32(truncatingIfNeeded: try reader.unsigned()))
            entry.path = try reader.string()
            entry.linkTarget = try reader.string()
            entry.deviceMajor = try reader.unsigned()
            entry.deviceMinor = try reader.unsigned()
            let runs = try reader.unsigned()
            if runs > 0 {
                guard runs - 1 <= reader.remaining else { throw TarIndexError(.damaged(detail: "a sparse map longer than the index")) }
                var map: [TarEntry.SparseRegion] = []
                for _ in 0..<(runs - 1) { map.append(TarEntry.SparseRegion(offset: try reader.unsigned(), length: try reader.unsigned())) }
                entry.sparseMap = map
            }
            entry.headerOffset = headerOffset
            entry.dataOffset = dataOffset
            guard headerOffset >= previousEnd, dataOffset >= headerOffset + 512, dataOffset % 512 == 0,
                  entry.size <= plainSize, entry.endOffset <= plainSize, entry.mode <= 0o7777 else {
                throw TarIndexError(.damaged(detail: "member \(entries.count) lies outside the archive or before the one ahead"))
            }
            previousEnd = entry.endOffset
            entries.append(entry)
        }
        var order: [Int32] = []
        order.reserveCapacity(count)
        var seen = [Bool](repeating: false, count: count)
        for position in 0..<count {
            let index = Int(try reader.fixed(width: 4))
            guard index < count, !seen[index] else { throw TarIndexError(.damaged(detail: "its name table is not a permutation")) }
            seen[index] = true
            if position > 0 {
                let previous = Int(order[position - 1])
                let (left, right) = (entries[previous].path, entries[index].path)
                let order = compareBytes(left, right)
                guard order == 0 ? previous < index : order < 0 else {
                    throw TarIndexError(.damaged(detail: "its name table is out of order"))
                }
            }
            order.append(Int32(index))
        }
        guard reader.remaining == 0 else { throw TarIndexError(.damaged(detail: "bytes after its name table")) }
        return (entries, order)
    }
}

/// Appends varints and strings.
struct TarIndexWriter {
    var bytes: [UInt8] = []

    mutating func unsigned(_ value: Int) {
        var rest = UInt64(bitPattern: Int64(value))
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func signed(_ value: Int) {
        let zigzag = (Int64(value) << 1) ^ (Int64(value) >> 63)
        unsigned(Int(bitPattern: UInt(UInt64(bitPattern: zigzag))))
    }

    mutating func string(_ value: [UInt8]) {
        unsigned(value.count)
        bytes += value
    }

    mutating func fixed(_ value: UInt64, width: Int) {
        bytes += TarIndex.little(value, width: width)
    }
}

/// Reads what ``TarIndexWriter`` writes, never past its bytes.
struct TarIndexReader {
    var bytes: ArraySlice<UInt8>
    var remaining: Int { bytes.count }

    mutating func take(_ count: Int) throws(TarIndexError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count else { throw TarIndexError(.damaged(detail: "a record runs past its end")) }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }

    mutating func fixed(width: Int) throws(TarIndexError) -> UInt64 {
        var value: UInt64 = 0
        for (shift, byte) in try take(width).enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
        return value
    }

    /// A LEB128 number: 7 bits a byte, the lowest first, the high bit set on every byte but
    /// the last; at most 64 bits.
    private mutating func variableLength() throws(TarIndexError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try take(1).first!
            guard shift < 63 || (shift == 63 && byte <= 1) else { throw TarIndexError(.damaged(detail: "a number too large")) }
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    mutating func unsigned() throws(TarIndexError) -> Int {
        let value = try variableLength()
        guard value <= UInt64(Int.max) else { throw TarIndexError(.damaged(detail: "a number too large")) }
        return Int(value)
    }

    /// A zigzag-coded signed number (0, -1, 1, -2 … as 0, 1, 2, 3 …) in LEB128.
    mutating func signed() throws(TarIndexError) -> Int {
        let value = try variableLength()
        return Int(Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1))
    }

    mutating func string() throws(TarIndexError) -> [UInt8] {
        Array(try take(try unsigned()))
    }
}

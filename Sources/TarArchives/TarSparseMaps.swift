/// GNU tar's sparse members, in its three PAX forms and its old header form (GNU tar manual,
/// "Storing Sparse Files", and its `sparse.c`):
/// - 0.0: `GNU.sparse.size`, `GNU.sparse.numblocks`, then `GNU.sparse.offset` and
///   `GNU.sparse.numbytes` repeated, one pair per run;
/// - 0.1: `GNU.sparse.size`, `GNU.sparse.numblocks`, `GNU.sparse.map` (`offset,length,…`);
/// - 1.0: `GNU.sparse.major=1`, `GNU.sparse.minor=0`, `GNU.sparse.name`, `GNU.sparse.realsize`,
///   and the map at the start of the member's data: decimal numbers each ended by `\n` (the run
///   count, then an offset and a length per run), padded with zeros to a 512-byte block;
/// - old GNU: typeflag `S`, four runs in the header (12-byte offset and length at byte 386),
///   `isextended` at 482, the real size at 483, then extension blocks of 21 runs each with
///   `isextended` at 504.
struct TarPaxSparse: Sendable {
    var major: Int?
    var minor: Int?
    var name: [UInt8]?
    var realSize: Int?
    var blockCount: Int?
    /// Runs from 0.0's repeated pairs or 0.1's map.
    var regions: [TarEntry.SparseRegion] = []
    /// A 0.0 offset still waiting for its `numbytes`.
    var pendingOffset: Int?
    var sawMap = false

    /// Whether any `GNU.sparse.*` keyword came.
    var isPresent: Bool { major != nil || realSize != nil || blockCount != nil || sawMap || !regions.isEmpty || name != nil }
    /// Whether the map is in the data (format 1.0).
    var mapIsInData: Bool { (major ?? 0) >= 1 }

    /// Applies `GNU.sparse.<key>=value`.
    mutating func set(_ key: String, _ value: [UInt8], at offset: Int) throws(TarError) {
        switch key {
        case "major": major = try TarOverrides.decimal(value, "GNU.sparse.major", offset)
        case "minor": minor = try TarOverrides.decimal(value, "GNU.sparse.minor", offset)
        case "name":
            guard !value.contains(0) else { throw TarError(.nulInName, offset: offset) }
            name = value
        case "realsize", "size": realSize = try TarOverrides.decimal(value, "GNU.sparse.\(key)", offset)
        case "numblocks": blockCount = try TarOverrides.decimal(value, "GNU.sparse.numblocks", offset)
        case "offset":
            guard pendingOffset == nil else { throw TarError(.badSparseMap(detail: "an offset without its length"), offset: offset) }
            pendingOffset = try TarOverrides.decimal(value, "GNU.sparse.offset", offset)
        case "numbytes":
            guard let start = pendingOffset else { throw TarError(.badSparseMap(detail: "a length without its offset"), offset: offset) }
            regions.append(TarEntry.SparseRegion(offset: start, length: try TarOverrides.decimal(value, "GNU.sparse.numbytes", offset)))
            pendingOffset = nil
        case "map":
            sawMap = true
            let numbers = value.isEmpty ? [] : value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            guard numbers.count % 2 == 0 else { throw TarError(.badSparseMap(detail: "GNU.sparse.map has an odd count of numbers"), offset: offset) }
            var index = 0
            while index < numbers.count {
                regions.append(TarEntry.SparseRegion(
                    offset: try TarOverrides.decimal(numbers[index], "GNU.sparse.map", offset),
                    length: try TarOverrides.decimal(numbers[index + 1], "GNU.sparse.map", offset)))
                index += 2
            }
        default: break
        }
    }
}

/// The checks every sparse map passes before its member is reported: runs in increasing order that
/// do not overlap, each inside the file's real size, their lengths adding up to the stored size.
/// - Throws: ``TarError`` `.badSparseMap` at `offset` (the member's first header).
func validateSparseMap(_ regions: [TarEntry.SparseRegion], realSize: Int, storedSize: Int,
                       at offset: Int) throws(TarError) {
    var end = 0
    var total = 0
    for (index, region) in regions.enumerated() {
        guard region.offset >= end else {
            throw TarError(.badSparseMap(detail: "run \(index) at \(region.offset) overlaps or precedes the one before"), offset: offset)
        }
        let (regionEnd, overflow) = region.offset.addingReportingOverflow(region.length)
        guard !overflow, regionEnd <= realSize else {
            throw TarError(.badSparseMap(detail: "run \(index) reaches past the file's size \(realSize)"), offset: offset)
        }
        end = regionEnd
        total += region.length
    }
    guard total == storedSize else {
        throw TarError(.badSparseMap(detail: "the runs hold \(total) bytes, the member stores \(storedSize)"), offset: offset)
    }
}

/// The old GNU header's runs: `count` runs of a 12-byte offset and a 12-byte length from byte
/// `start` of `block`; an entry whose offset field starts with NUL ends the list.
/// - Returns: The runs, and whether the list ended before `count`.
func oldGNUSparseRuns(in block: UnsafeRawBufferPointer, start: Int, count: Int,
                      at offset: Int) throws(TarError) -> (runs: [TarEntry.SparseRegion], ended: Bool) {
    var runs: [TarEntry.SparseRegion] = []
    for index in 0..<count {
        let base = start + index * 24
        if block[base] == 0 { return (runs, true) }
        guard let runOffset = TarFormat.number(in: UnsafeRawBufferPointer(rebasing: block[base..<(base + 12)])),
              let runLength = TarFormat.number(in: UnsafeRawBufferPointer(rebasing: block[(base + 12)..<(base + 24)])),
              runOffset >= 0, runLength >= 0, runOffset <= Int64(Int.max), runLength <= Int64(Int.max) else {
            throw TarError(.badNumber(field: "sparse"), offset: offset)
        }
        runs.append(TarEntry.SparseRegion(offset: Int(runOffset), length: Int(runLength)))
    }
    return (runs, false)
}

/// Parses the 1.0 map at the start of a sparse member's data, as its blocks arrive.
struct TarSparseDataMap: Sendable {
    private var numbers: [Int] = []
    private var current: Int?
    private var expected: Int?
    /// The bytes of map taken so far (whole blocks).
    private(set) var consumed = 0

    /// Reads one 512-byte block of the map.
    /// - Returns: The runs once the map is complete (the rest of the block is padding), else `nil`.
    /// - Throws: ``TarError`` `.badSparseMap` at `offset` for a malformed or oversized map.
    mutating func take(block: UnsafeRawBufferPointer, limit: Int, at offset: Int) throws(TarError) -> [TarEntry.SparseRegion]? {
        consumed += block.count
        guard consumed <= limit else {
            throw TarError(.headerTooLarge(size: Int64(consumed), limit: limit), offset: offset)
        }
        for byte in block {
            if byte == UInt8(ascii: "\n") {
                guard let value = current else { throw TarError(.badSparseMap(detail: "an empty number in the map"), offset: offset) }
                numbers.append(value)
                current = nil
                if expected == nil {
                    guard value <= limit / 2 else { throw TarError(.badSparseMap(detail: "\(value) runs"), offset: offset) }
                    expected = 1 + 2 * value
                }
                if numbers.count == expected {
                    return stride(from: 1, to: numbers.count, by: 2).map {
                        TarEntry.SparseRegion(offset: numbers[$0], length: numbers[$0 + 1])
                    }
                }
            } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                let (times10, overflow) = (current ?? 0).multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                guard !overflow, !overflow2 else { throw TarError(.badSparseMap(detail: "a number too large"), offset: offset) }
                current = sum
            } else {
                throw TarError(.badSparseMap(detail: "a byte that is not a digit or a newline in the map"), offset: offset)
            }
        }
        return nil
    }
}

// Deflate data written by hand, for inputs whose size matters more than their compression.

/// `data` as non-final stored deflate blocks (RFC 1951 §3.2.4: BFINAL 0, BTYPE 00, then LEN
/// and NLEN little-endian and the bytes), at most 65535 bytes each, starting on a byte
/// boundary and ending on one: another block may follow directly.
public func storedDeflateBlocks(_ data: [UInt8]) -> [UInt8] {
    var blocks: [UInt8] = []
    blocks.reserveCapacity(data.count + 5 * (data.count / 65535 + 1))
    var start = 0
    while start < data.count {
        let count = min(65535, data.count - start)
        blocks += [0, UInt8(count & 0xff), UInt8(count >> 8), UInt8(~count & 0xff), UInt8((~count >> 8) & 0xff)]
        blocks += data[start..<(start + count)]
        start += count
    }
    return blocks
}

/// The gzip member `member` (a 10-byte header, no optional fields) with `data` put in stored
/// blocks between its header and its deflate data, so that the same deflate data comes after
/// `data.count` plain bytes: for a fault that shows only past the first MiB of a member.
public func memberWithStoredPrefix(_ member: [UInt8], _ data: [UInt8]) -> [UInt8] {
    precondition(member.count >= 10 && member[3] == 0, "a member with a plain 10-byte header")
    return Array(member.prefix(10)) + storedDeflateBlocks(data) + member.dropFirst(10)
}

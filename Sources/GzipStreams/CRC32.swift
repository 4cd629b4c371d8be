import CLibdeflate
import CZlib

/// CRC-32 as RFC 1952 §8 defines it (ISO 3309), continued from `crc` over `bytes`.
///
/// libdeflate's, not zlib's: the same function, measured here (64 MiB in 4 KiB and 64 KiB
/// calls) at about 8 GB/s against 2.5–3.7 GB/s for zlib 1.2.13's, which matters because every
/// plain byte packed or unpacked goes through it. (ISA-L's `crc32_gzip_refl` measured 11 GB/s,
/// a few milliseconds per 256 MiB more: not worth a library of its own yet.)
/// Wraps libdeflate's `libdeflate_crc32`.
func crc32(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
    return libdeflate_crc32(crc, base, bytes.count)
}

/// The CRC-32 of two pieces joined, from the CRC-32 of each and the length in bytes of the
/// second. Wraps zlib's `crc32_combine`.
func crc32Combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
    UInt32(truncatingIfNeeded: crc32_combine(UInt(first), UInt(second), off_t(secondLength)))
}

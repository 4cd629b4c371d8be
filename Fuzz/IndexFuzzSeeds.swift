// The seeds of Fuzz/IndexFileFuzzer.swift: valid indexes of the fixed files, in every format the
// target reads (`--write-seeds DIR`), and the fixed files themselves (`--write-fixed DIR`), from
// which scripts/fuzz.sh has gztool make its own index when gztool is installed.
import ByteStreams
import CZlib
import GzipStreams
#if canImport(Glibc)
import Glibc
#endif

/// Writes the seeds into `directory` (which must exist):
/// - `gzidx-span64k.gzidx`: GzipIndexBuilder's index of the gzip file, span 64 KiB;
/// - `gzidx-dropped.gzidx`: the same with every other point after the first dropped;
/// - `gzidx-first-point.gzidx`: the first point alone;
/// - `gzidx-v0.gzidx`: the builder's points in GZIDX version 0 (a window for every point but
///   the first: the true 32 KiB before it);
/// - `bgzf.gzi`: BGZFOutputStream's .gzi of the BGZF file;
/// - `gztool-converted.gzi`: the builder's points in gztool's format (version 0).
func writeSeeds(into directory: String) {
    let index = fixtures.index
    // A seed with fewer points keeps the line table's counts of the points it keeps.
    let kept = index.points.indices.filter { $0 == 0 || $0 % 2 == 1 }
    var dropped = index
    dropped.points = kept.map { index.points[$0] }
    dropped.lineTable?.newlinesBefore = kept.compactMap { index.lineTable?.newlinesBefore[$0] }
    var first = index
    first.points = [index.points[0]]
    first.lineTable?.newlinesBefore = Array(index.lineTable?.newlinesBefore.prefix(1) ?? [])
    let seeds: [(String, [UInt8])] = [
        ("gzidx-span64k.gzidx", fixtures.gzidx),
        ("gzidx-dropped.gzidx", dropped.gzidxEncoded()),
        ("gzidx-first-point.gzidx", first.gzidxEncoded()),
        ("gzidx-v0.gzidx", gzidxVersion0(index)),
        ("bgzf.gzi", fixtures.bgzfIndex.encoded),
        ("gztool-converted.gzi", gztoolEncoded(index)),
    ]
    for (name, bytes) in seeds { writeFile(directory + "/" + name, bytes) }
    print("index-file-fuzzer: wrote \(seeds.count) seeds (\(index.points.count) points in the full GZIDX) to \(directory)")
}

/// Writes `fixed.gz` and `fixed.bgz` into `directory` (which must exist).
func writeFixedFiles(into directory: String) {
    writeFile(directory + "/fixed.gz", fixtures.gzip)
    writeFile(directory + "/fixed.bgz", fixtures.bgzf)
    print("index-file-fuzzer: wrote fixed.gz (\(fixtures.gzip.count) bytes) and fixed.bgz (\(fixtures.bgzf.count) bytes)"
        + " of \(fixtures.plain.count) plain bytes to \(directory)")
}

private func writeFile(_ path: String, _ bytes: [UInt8]) {
    let file = FileOutputStream(path: path)
    do {
        try file.openOrThrow()
        try file.writeAll(bytes)
        file.close()
        if let error = file.streamError { throw error }
    } catch {
        fputs("index-file-fuzzer: \(path): \(error)\n", stderr)
        exit(1)
    }
}

/// `index` as GZIDX version 0, indexed_gzip's first: 17-byte entries without a window flag,
/// and a window for every point but the first (the true one where the index has none).
private func gzidxVersion0(_ index: GzipIndex) -> [UInt8] {
    var bytes = GzipIndex.magic + [0, 0]
    append(index.compressedSize, 8, littleEndian: true, to: &bytes)
    append(index.plainSize, 8, littleEndian: true, to: &bytes)
    append(UInt64(index.spacing), 4, littleEndian: true, to: &bytes)
    append(UInt64(index.windowSize), 4, littleEndian: true, to: &bytes)
    append(UInt64(index.points.count), 4, littleEndian: true, to: &bytes)
    for point in index.points {
        append(point.compressedOffset, 8, littleEndian: true, to: &bytes)
        append(point.plainOffset, 8, littleEndian: true, to: &bytes)
        bytes.append(point.bitOffset)
    }
    for point in index.points.dropFirst() {
        bytes += point.window ?? fixtures.trueWindow(before: Int(point.plainOffset))
    }
    return bytes
}

/// `index` in gztool's format, version 0 (`gzipindx`; see GzipIndex(gztool:compressedSize:)):
/// big-endian, each window compressed in the zlib format.
private func gztoolEncoded(_ index: GzipIndex) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 8) + Array("gzipindx".utf8)
    append(UInt64(index.points.count), 8, littleEndian: false, to: &bytes)
    append(UInt64(index.points.count), 8, littleEndian: false, to: &bytes)
    for point in index.points {
        append(point.plainOffset, 8, littleEndian: false, to: &bytes)
        append(point.compressedOffset, 8, littleEndian: false, to: &bytes)
        append(UInt64(point.bitOffset), 4, littleEndian: false, to: &bytes)
        let packed = point.window.map(zlibCompressed) ?? []
        append(UInt64(packed.count), 4, littleEndian: false, to: &bytes)
        bytes += packed
    }
    append(index.plainSize, 8, littleEndian: false, to: &bytes)
    return bytes
}

/// `bytes` in the zlib format (RFC 1950), level 9. Wraps zlib's `compress2`.
private func zlibCompressed(_ bytes: [UInt8]) -> [UInt8] {
    var packed = [UInt8](repeating: 0, count: Int(compressBound(uLong(bytes.count))))
    var length = uLongf(packed.count)
    let code = packed.withUnsafeMutableBufferPointer { out in
        bytes.withUnsafeBufferPointer { compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), 9) }
    }
    guard code == Z_OK else { fatalError("compress2 failed: \(code)") }
    return Array(packed[0..<Int(length)])
}

private func append(_ value: UInt64, _ width: Int, littleEndian: Bool, to bytes: inout [UInt8]) {
    let order = littleEndian ? Array(0..<width) : Array((0..<width).reversed())
    bytes += order.map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
}

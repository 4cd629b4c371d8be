/// Finds chunk boundaries in a byte stream from its content, so that inserting or deleting bytes
/// moves only the boundaries near the change: what `--rsyncable` packing cuts its independent
/// deflate chunks at, so that rsync and deduplicating backups match the compressed bytes of
/// every chunk the change did not touch. FastCDC's gear hash (Xia et al., USENIX ATC 2016).
///
/// A cut comes after the byte at which the current chunk reaches a length `L` when
/// `minimumSize ≤ L` and the gear hash of the 64 bytes ending there is below a threshold, or when
/// `L == maximumSize`. The hash is `hash = (hash << 1) &+ gear[byte]` over a fixed table of 256
/// pseudo-random numbers (``gearTable``). A byte's term is shifted one place further with every
/// later byte, so 64 bytes later it has left the 64-bit hash entirely: the hash at any point is a
/// function of the last 64 bytes alone (``windowSize``), whatever came before.
///
/// The property this guarantees: whether a cut follows a byte depends only on the 64 bytes ending
/// at it and on the distance from the previous cut, never on how the input is split into calls.
/// So two streams that share a cut and the bytes after it share every later cut until their bytes
/// differ; after an edit, the two streams' cuts agree again from the first content-defined cut
/// (hash below the threshold, not forced at the maximum) that both reach at least `minimumSize`
/// after their last cut: usually the first or second cut past the edit.
///
/// FastCDC's speed trick: no cut can come before `minimumSize`, so the first
/// `minimumSize - windowSize` bytes of each chunk are skipped unread and the hash starts from
/// zero there; by `minimumSize` it has taken in a whole window, and its value is the one that
/// hashing every byte would give. So the skip changes no cut.
///
/// The cut test is `hash < threshold` rather than FastCDC's `hash & mask == 0`: with a mask of
/// the hash's top bits the two are the same test, but a threshold gives any cut probability,
/// so the mean chunk comes out at the requested average rather than at the next power of two
/// past the minimum. The top bits decide the comparison, and they depend on all 64 bytes of the
/// window (a low bit depends only on the last few bytes).
///
/// Constant data (a run of one byte value `b`) makes the hash constant once a window is full:
/// `−gear[b]` (mod 2⁶⁴), below the threshold only if `gear[b]` is within `threshold` of 2⁶⁴, which
/// no entry of the table is for the default sizes: so a long run is cut at `maximumSize`
/// intervals from the last cut before it. (With a smaller average the threshold is higher, and a
/// run of a byte whose entry is that close, if any, is cut at every `minimumSize`.)
///
/// Memory: the value itself (a few words) and the one 2 KiB table, shared by all. Thread safety:
/// a value type, used by one thread; copies are independent.
struct ContentDefinedChunker {
    /// The bytes the hash depends on: a 64-bit hash shifted once per byte.
    static let windowSize = 64

    /// The smallest chunk, in bytes, unless the caller ends one early (``reset()``).
    let minimumSize: Int
    /// The mean chunk size, in bytes, aimed at on data that is not periodic.
    let averageSize: Int
    /// The largest chunk, in bytes: a cut is forced here.
    let maximumSize: Int
    /// A cut may come where the hash is below this: `2⁶⁴ / (averageSize - minimumSize)`, so a cut
    /// past the minimum has probability `1 / (averageSize - minimumSize)` per byte.
    let threshold: UInt64

    /// The bytes of the current chunk seen so far: `0..<maximumSize`.
    private(set) var currentLength = 0
    /// The gear hash of the bytes since `minimumSize - windowSize` in the current chunk.
    private var hash: UInt64 = 0

    /// A chunker at the start of a chunk.
    ///
    /// The defaults suit the pack engine's deflate chunks of about 1 MiB: each chunk starts with
    /// an empty deflate window, so chunks much under 256 KiB cost compressed size, and a minimum
    /// of 256 KiB also lets a quarter of the bytes go unhashed; a mean of 1 MiB is the engine's
    /// plain chunk size, so `--rsyncable` output is about the plain output's size, and an edit
    /// rewrites about 1 to 2 MiB of input's compressed bytes; a maximum of 4 MiB bounds the
    /// buffer a chunk needs and the output a long run without cuts (constant data) rewrites.
    /// With these, the mean chunk on random-like data is
    /// `min + (avg − min)·(1 − e^(−(max − min)/(avg − min)))` ≈ 1019 KiB, and 0.7 % of chunks are
    /// forced at the maximum.
    /// - Parameters:
    ///   - minimumSize: The smallest chunk, in bytes, at least ``windowSize`` (64).
    ///   - averageSize: The mean chunk size wanted, in bytes, more than `minimumSize`.
    ///   - maximumSize: The largest chunk, in bytes, at least `averageSize`.
    init(minimumSize: Int = 256 << 10, averageSize: Int = 1 << 20, maximumSize: Int = 4 << 20) {
        precondition(minimumSize >= Self.windowSize && averageSize > minimumSize && maximumSize >= averageSize,
                     "chunk sizes must satisfy 64 <= minimum < average <= maximum")
        self.minimumSize = minimumSize
        self.averageSize = averageSize
        self.maximumSize = maximumSize
        threshold = UInt64.max / UInt64(averageSize - minimumSize)
    }

    /// Reads `bytes`, the next bytes of the stream, and says where the current chunk ends.
    ///
    /// A caller feeds everything after the returned count again (in the same or a later call),
    /// until `nil`:
    /// ```swift
    /// var offset = 0
    /// while let count = chunker.nextBoundary(in: UnsafeRawBufferPointer(rebasing: buffer[offset...])) {
    ///     offset += count  // a chunk ends here
    /// }
    /// ```
    /// - Parameter bytes: Any number of bytes, empty included.
    /// - Returns: How many bytes at the start of `bytes` complete the current chunk (`1...bytes.count`);
    ///   the chunker is then at the start of the next one. `nil` when all of `bytes` belongs to the
    ///   current chunk (always for an empty buffer).
    mutating func nextBoundary(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let count = bytes.count
        var index = 0
        // Skipped: no cut can come before the minimum, and the window before it is hashed below.
        let skipEnd = minimumSize - Self.windowSize
        if currentLength < skipEnd {
            index = min(count, skipEnd - currentLength)
            currentLength += index
            guard index < count else { return nil }
        }
        let cut: Int? = Self.gearTable.withUnsafeBufferPointer { table in
            var hash = self.hash
            // Hashed but not tested: lengths below the minimum.
            if currentLength < minimumSize - 1 {
                let end = min(count, index + (minimumSize - 1 - currentLength))
                let start = index
                while index < end {
                    hash = (hash << 1) &+ table[Int(base[index])]
                    index += 1
                }
                currentLength += index - start
            }
            // Hashed and tested: each byte here brings the length to minimumSize...maximumSize.
            let end = min(count, index + (maximumSize - currentLength))
            let start = index
            let threshold = self.threshold
            while index < end {
                hash = (hash << 1) &+ table[Int(base[index])]
                index += 1
                if hash < threshold { return index }
            }
            currentLength += index - start
            if currentLength == maximumSize { return index }
            self.hash = hash
            return nil
        }
        if cut != nil { reset() }
        return cut
    }

    /// Starts a new chunk at the next byte: for a chunk the caller ends for a reason of its own
    /// (a flush, the end of the input). The next cut is then at least `minimumSize` bytes later.
    mutating func reset() {
        currentLength = 0
        hash = 0
    }

    /// The gear table: 256 numbers of a SplitMix64 sequence (Steele, Lea and Flood, 2014) from a
    /// fixed seed, so the cuts, and `--rsyncable` output, are the same on every machine and in
    /// every version. Changing the seed changes every cut.
    static let gearTable: [UInt64] = {
        var state: UInt64 = 0x677A_7374_7265_616D  // "gzstream" in ASCII
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            let mixed = (state ^ (state >> 30)) &* 0xBF58_476D_1CE4_E5B9
            let mixedAgain = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixedAgain ^ (mixedAgain >> 31)
        }
    }()
}

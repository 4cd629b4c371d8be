import GzipStreams
import SecretStreams

/// The plain bytes of one disk entry, read through the streams the entry was written with:
/// the file (its payload up to the size it had when opened) → ``DecryptingInputStream`` (when
/// encrypted) → `GzipInputStream`.
///
/// ``DiskCache/inputStream(forKey:verifyingFirst:)`` hands it out open, with its first bytes
/// already decoded and the entry's binding to the key checked. What follows is checked as it is
/// read: every encrypted chunk is authenticated, and at the end the CRC-32, ISIZE and the plain
/// size (``plainSize``) are. Damage found while reading is the stream's error, a
/// ``CacheMiss/damaged(_:)``, and the entry is removed at once; like all gzip data, bytes read
/// before an error are tentative, and a reader that meets one must discard them (or ask for a
/// verified stream, which reads the entry once before handing it out). A failing read of the
/// file itself is its ``ByteStreamError``, and the entry is kept.
///
/// Memory: the gzip stream's buffers and, when encrypted, two of the chunk size (64 KiB by
/// default), whatever the entry's size. Owns and closes the file's descriptor. Reads block.
/// Not thread-safe.
public final class CacheEntryInputStream: ByteInputStream {
    /// The number of plain bytes the entry holds, from its header.
    public let plainSize: Int64
    /// The entry file's size in bytes.
    public let storedSize: Int64
    private let decoder: GzipInputStream
    private let name: EntryName
    private let file: EntryFile
    private let closesFile: Bool
    private var bindingChecked = false
    private var bytesRead: Int64 = 0
    /// Bytes decoded at lookup, given out first.
    private var lookahead: [UInt8] = []
    private var lookaheadPosition = 0

    init(file: EntryFile, header: EntryFormat.Header, name: EntryName, key: SecretStreamKey?, closesFile: Bool = true) throws {
        self.file = file
        self.closesFile = closesFile
        self.name = name
        plainSize = header.plainSize
        storedSize = file.size
        // The payload up to the file's size at open: a file growing meanwhile cannot keep us.
        let source = EntryPayloadInputStream(file: file, isEncrypted: header.isEncrypted)
        let payload: ByteInputStream = if let key { try DecryptingInputStream(wrapping: source, key: key) } else { source }
        decoder = try GzipInputStream(wrapping: payload, maximumOutputSize: Int(header.plainSize))
        super.init()
    }

    /// Reads the first bytes (up to 4096) ahead, so that the header, the first encrypted chunk
    /// and the binding to the key are checked before the stream is handed out.
    func readAhead() throws {
        try openOrThrow()
        var chunk = [UInt8](repeating: 0, count: ByteStream.defaultChunkSize)
        let count = try chunk.withUnsafeMutableBufferPointer { try decode(into: $0.baseAddress!, maxLength: $0.count) }
        lookahead = Array(chunk[0..<count])
    }

    /// Reads the whole entry, discarding the bytes, to check it before it is handed out.
    func verify() throws {
        try openOrThrow()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 64 << 10)
        defer { buffer.deallocate() }
        while try decode(into: buffer, maxLength: 64 << 10) > 0 {}
    }

    override public func openBacking() throws {
        if decoder.streamStatus == .notOpen { try decoder.openOrThrow() }
    }

    override public func closeBacking() throws {
        decoder.close()
        if closesFile { file.close() }
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        if lookaheadPosition < lookahead.count {
            let count = min(maxLength, lookahead.count - lookaheadPosition)
            lookahead.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + lookaheadPosition, count: count) }
            lookaheadPosition += count
            if lookaheadPosition == lookahead.count { lookahead = [] ; lookaheadPosition = 0 }
            return count
        }
        return try decode(into: buffer, maxLength: maxLength)
    }

    /// One read of the decoder, with damage turned into ``CacheMiss/damaged(_:)`` and the
    /// entry removed.
    private func decode(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        do {
            let count = decoder.read(buffer, maxLength: maxLength)
            if count < 0 { throw decoder.streamErrorOrFallback(operation: "read cache entry") }
            bytesRead += Int64(count)
            if !bindingChecked, decoder.header != nil {
                guard EntryFormat.isBound(decoder.header, to: name) else { throw DamageFound(damage: .boundToAnotherKey) }
                bindingChecked = true
            }
            if count == 0 && (bytesRead != plainSize || decoder.memberCount != 1) {
                throw DamageFound(damage: .sizeMismatch(stored: plainSize, decoded: bytesRead))
            }
            return count
        } catch let found as DamageFound {
            throw removeEntry(found.damage)
        } catch let error as SecretStreamError {
            throw removeEntry(.decryption(error))
        } catch let error as GzipError {
            if case .outputLimitExceeded = error { throw removeEntry(.sizeMismatch(stored: plainSize, decoded: bytesRead + 1)) }
            throw removeEntry(.gzip(error))
        }
    }

    private func removeEntry(_ damage: CacheMiss.Damage) -> CacheMiss {
        file.removeIfUnchanged()
        return .damaged(damage)
    }
}


import ByteStreams

/// An index of a gzip file, as one of the index files gzstream reads and writes: bgzip's
/// `.gzi` (``BGZFIndex``: where each BGZF member starts) or access points with their windows
/// (``GzipIndex``: indexed_gzip's GZIDX, or gztool's format, read into the same shape).
///
/// A value: immutable and `Sendable`, safe to share between threads.
public enum GzipIndexFile: Equatable, Sendable {
    /// bgzip's `.gzi` of a BGZF file (htslib's bgzf.c): the start of each member after the first.
    case gzi(BGZFIndex)
    /// Access points (zlib's zran.c): read from GZIDX or gztool's format, written as GZIDX.
    case accessPoints(GzipIndex)

    /// The three formats, by the name a message gives them.
    public enum Format: String, Equatable, Sendable {
        /// bgzip's `.gzi`: a count and pairs of offsets, no magic.
        case gzi = ".gzi"
        /// indexed_gzip's GZIDX: it starts with `GZIDX`.
        case gzidx = "GZIDX"
        /// gztool's `.gzi`: 8 zero bytes, then `gzipindx` or `gzipindX`.
        case gztool = "gztool"
    }

    /// The bytes of the index's file as gzstream writes it: for ``gzi(_:)`` bgzip's `.gzi`
    /// (``BGZFIndex/encoded``), for ``accessPoints(_:)`` GZIDX (``GzipIndex/gzidxEncoded()``).
    public func encoded() -> [UInt8] {
        switch self {
        case .gzi(let index): index.encoded
        case .accessPoints(let index): index.gzidxEncoded()
        }
    }
}

/// An index file that cannot be read, in any of the formats ``GzipIndexFile`` reads: the one
/// error shape of gzstream's index readers, beside ``GzipError`` (the gzip data) and
/// ``ByteStreamError`` (reading). Each reader checks its format more strictly than the tool
/// that writes it (see ``GzipIndex/init(gzidx:)``, ``GzipIndex/init(gztool:compressedSize:)``,
/// ``BGZFIndex/init(decoding:)``); whether the index fits a particular gzip file is found
/// while decoding through it (``IndexedGzipError``).
public struct GzipIndexError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The format the file was read as.
    public var format: GzipIndexFile.Format
    /// What is wrong, for a message: `"version 2 (known: 0 and 1)"`.
    public var reason: String
    /// The byte offset in the index file where the fault was found; `nil` for a `.gzi`, whose
    /// faults are its size (which does not match its count) or an entry the reason names.
    public var offset: Int?

    /// A fault `reason` at byte `offset` of an index in `format`.
    public init(format: GzipIndexFile.Format, reason: String, offset: Int?) {
        self.format = format
        self.reason = reason
        self.offset = offset
    }

    /// The message a user reads: `not a valid GZIDX index: version 2 (known: 0 and 1) (at byte 5)`.
    public var description: String {
        "not a valid \(format.rawValue) index: \(reason)" + (offset.map { " (at byte \($0))" } ?? "")
    }
}

extension GzipIndexFile {
    /// How many bytes at the start of a file ``format(ofLeadingBytes:)`` looks at: 16.
    public static let leadingByteCount = 16

    /// The format a file that starts with `bytes` is in, by its magic: GZIDX when it starts
    /// with `GZIDX` (indexed_gzip's `zran_export_index`), gztool's when its first 16 bytes are
    /// 8 zero bytes and `gzipind` and one more byte (`x`, or `X` with line numbers: gztool's
    /// README, "Index file format"), else bgzip's `.gzi`, which has no magic.
    /// - Parameter bytes: The file's first ``leadingByteCount`` bytes (fewer for a shorter file).
    public static func format(ofLeadingBytes bytes: some Collection<UInt8>) -> Format {
        if bytes.starts(with: "GZIDX".utf8) { return .gzidx }
        if bytes.count >= leadingByteCount, bytes.prefix(8).allSatisfy({ $0 == 0 }),
           bytes.dropFirst(8).prefix(7).elementsEqual("gzipind".utf8) {
            return .gztool
        }
        return .gzi
    }

    /// The format of the index file open on `descriptor` (``format(ofLeadingBytes:)``), read
    /// from its first 16 bytes without moving its file offset. The caller keeps owning
    /// `descriptor`. Blocks while reading.
    /// - Throws: ``ByteStreamError`` when reading fails, naming `path`.
    /// The corresponding C function is `pread(2)`.
    public static func format(ofFile descriptor: Int32, path: String) throws -> Format {
        format(ofLeadingBytes: try GzipIndex.readBytes(descriptor, count: leadingByteCount, at: 0, path: path))
    }

    /// Reads an index file whole, in whichever format its bytes say (``format(ofLeadingBytes:)``):
    /// GZIDX as ``GzipIndex/init(gzidx:)``, gztool's as ``GzipIndex/init(gztool:compressedSize:)``
    /// (both ``accessPoints(_:)``), `.gzi` as ``BGZFIndex/init(decoding:)``.
    /// - Parameters:
    ///   - bytes: The whole index file.
    ///   - compressedSize: The size in bytes of the gzip file it indexes (gztool's lacks it).
    ///   - formats: The formats taken. A file without magic is a `.gzi` only when `formats`
    ///     holds ``Format/gzi``; else it is read as GZIDX, whose reader refuses it (too short,
    ///     or bad magic). A GZIDX or gztool file not in `formats` is refused, at byte 0.
    /// - Throws: ``GzipIndexError``, naming the format and the byte where the fault is.
    public init(bytes: [UInt8], compressedSize: UInt64, formats: Set<Format> = [.gzi, .gzidx, .gztool])
        throws(GzipIndexError) {
        switch try Self.taken(Self.format(ofLeadingBytes: bytes.prefix(Self.leadingByteCount)), formats) {
        case .gzidx: self = .accessPoints(try GzipIndex(gzidx: bytes))
        case .gztool: self = .accessPoints(try GzipIndex(gztool: bytes, compressedSize: compressedSize))
        case .gzi: self = .gzi(try BGZFIndex(decoding: bytes))
        }
    }

    /// Reads the index file open on `descriptor`, in whichever format its bytes say, as
    /// ``init(bytes:compressedSize:formats:)``; a GZIDX file as
    /// ``GzipIndex/init(gzidxFile:path:maximumPoints:)`` does, its windows left in the file and
    /// checked when read. The caller keeps owning `descriptor`; the index keeps a duplicate of
    /// it for a GZIDX file's windows. Blocks while reading.
    /// - Parameters:
    ///   - descriptor: An open index file, read with `pread(2)` (its file offset is not used).
    ///   - path: The file's name for error messages.
    ///   - compressedSize: The size in bytes of the gzip file it indexes.
    ///   - maximumPoints: The most points a GZIDX header may claim (see
    ///     ``GzipIndex/maximumPointCount(compressedSize:)``). gztool's and `.gzi` files are
    ///     read whole: give a file of a size you have bounded (gztool's points are also bounded
    ///     by ``GzipIndex/maximumPoints``).
    ///   - formats: The formats taken, as for ``init(bytes:compressedSize:formats:)``.
    /// - Throws: ``GzipIndexError`` for a file that is not a valid index; ``ByteStreamError``
    ///   when reading fails.
    /// The corresponding C functions are `fstat(2)` and `pread(2)`.
    public init(descriptor: Int32, path: String, compressedSize: Int64, maximumPoints: Int = .max,
                formats: Set<Format> = [.gzi, .gzidx, .gztool]) throws {
        let format = try Self.taken(try Self.format(ofFile: descriptor, path: path), formats)
        if format == .gzidx {
            self = .accessPoints(try GzipIndex(gzidxFile: descriptor, path: path, maximumPoints: maximumPoints))
            return
        }
        let size = Int(try SystemCalls.status(of: descriptor, target: path).st_size)
        let bytes = try GzipIndex.readBytes(descriptor, count: size, at: 0, path: path)
        try self.init(bytes: bytes, compressedSize: UInt64(max(0, compressedSize)), formats: [format])
    }

    /// The format to read a file in `format` as: itself if `formats` takes it; a file without
    /// magic as GZIDX when `.gzi` is not taken, so that GZIDX's reader says what is wrong (too
    /// short, or bad magic) as it would have alone.
    /// - Throws: ``GzipIndexError`` at byte 0 for a format not taken.
    private static func taken(_ format: Format, _ formats: Set<Format>) throws(GzipIndexError) -> Format {
        if formats.contains(format) { return format }
        if format == .gzi && formats.contains(.gzidx) { return .gzidx }
        throw GzipIndexError(format: format, reason: "a \(format.rawValue) index is not taken here", offset: 0)
    }
}

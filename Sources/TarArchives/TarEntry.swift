/// One member of a tar archive as its headers describe it: the ustar header (POSIX.1-1988
/// §10.1.1, "ustar Interchange Format"), with what GNU long-name/long-link headers (`L`, `K`)
/// and POSIX.1-2001 extended headers (`x`, `g`) in front of it override.
///
/// Names and link targets are bytes, as tar stores them: POSIX leaves their encoding to the
/// archive's writer (PAX records are UTF-8, ustar fields whatever the writer's file system used).
/// ``pathString`` and ``linkTargetString`` decode them as UTF-8, replacing what is not.
///
/// Offsets are plain byte offsets in the tar stream (the uncompressed bytes of a `.tar.gz`),
/// from 0: ``headerOffset`` is the first 512-byte block that belongs to this member (its first
/// extended or long-name header, if any), ``dataOffset`` the first byte of its data. Sizes are
/// byte counts.
public struct TarEntry: Equatable, Hashable, Sendable {
    /// The type of a member: ustar's typeflag (POSIX.1-1988 §10.1.1, Table 10-2).
    public enum Kind: Equatable, Hashable, Sendable {
        /// `0` (or the historical NUL): a regular file; its data follows the header.
        case regular
        /// `1`: a hard link to an earlier member, named by ``TarEntry/linkTarget``.
        case hardLink
        /// `2`: a symbolic link whose target is ``TarEntry/linkTarget``.
        case symbolicLink
        /// `3`: a character device (``TarEntry/deviceMajor``, ``TarEntry/deviceMinor``).
        case characterDevice
        /// `4`: a block device.
        case blockDevice
        /// `5`: a directory.
        case directory
        /// `6`: a FIFO.
        case fifo
        /// `7`: a contiguous file, read as a regular file (as GNU tar does).
        case contiguous
        /// GNU `S`: a sparse regular file; ``TarEntry/sparseMap`` says where its data goes.
        case sparse
        /// Any other typeflag; its data (``TarEntry/size`` bytes) is skipped.
        case other(UInt8)

        /// The typeflag byte this kind is written as.
        public var typeflag: UInt8 {
            switch self {
            case .regular: UInt8(ascii: "0")
            case .hardLink: UInt8(ascii: "1")
            case .symbolicLink: UInt8(ascii: "2")
            case .characterDevice: UInt8(ascii: "3")
            case .blockDevice: UInt8(ascii: "4")
            case .directory: UInt8(ascii: "5")
            case .fifo: UInt8(ascii: "6")
            case .contiguous: UInt8(ascii: "7")
            case .sparse: UInt8(ascii: "S")
            case .other(let byte): byte
            }
        }

        /// The kind of typeflag `byte`; NUL is a regular file (pre-POSIX tar).
        public init(typeflag byte: UInt8) {
            switch byte {
            case 0, UInt8(ascii: "0"): self = .regular
            case UInt8(ascii: "1"): self = .hardLink
            case UInt8(ascii: "2"): self = .symbolicLink
            case UInt8(ascii: "3"): self = .characterDevice
            case UInt8(ascii: "4"): self = .blockDevice
            case UInt8(ascii: "5"): self = .directory
            case UInt8(ascii: "6"): self = .fifo
            case UInt8(ascii: "7"): self = .contiguous
            case UInt8(ascii: "S"): self = .sparse
            default: self = .other(byte)
            }
        }

        /// Whether the member's data is file content (regular, contiguous, sparse).
        public var holdsFileContent: Bool {
            switch self {
            case .regular, .contiguous, .sparse: true
            default: false
            }
        }
    }

    /// One run of a sparse file's data: `length` bytes that belong at `offset` of the file; the
    /// rest of the file (up to ``TarEntry/realSize``) is a hole of zero bytes.
    public struct SparseRegion: Equatable, Hashable, Sendable {
        /// Where the run starts in the file, in bytes.
        public var offset: Int
        /// How many bytes it holds.
        public var length: Int

        /// A run of `length` bytes at `offset`.
        public init(offset: Int, length: Int) {
            self.offset = offset
            self.length = length
        }
    }

    /// A time as tar stores it: whole seconds since 1970-01-01 UTC (ustar's octal `mtime`),
    /// with the nanoseconds a PAX `mtime` record may add.
    public struct Timestamp: Equatable, Hashable, Comparable, Sendable {
        /// Seconds since 1970-01-01 00:00:00 UTC; negative before it.
        public var seconds: Int64
        /// Nanoseconds past ``seconds``, `0..<1_000_000_000`.
        public var nanoseconds: Int32

        /// A time of `seconds` and `nanoseconds` since 1970-01-01 UTC.
        public init(seconds: Int64, nanoseconds: Int32 = 0) {
            self.seconds = seconds
            self.nanoseconds = nanoseconds
        }

        public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
            (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
        }
    }

    /// The member's path as stored (PAX `path`, else a GNU long name, else ustar's `prefix/name`).
    public var path: [UInt8]
    /// The member's type.
    public var kind: Kind
    /// The bytes of data that follow the header in the archive (PAX `size` overrides ustar's);
    /// for a sparse member, the stored runs only.
    public var size: Int
    /// The file mode's permission bits, including setuid, setgid and sticky (`0o7777`).
    public var mode: UInt32
    /// The owner's and group's numeric IDs (PAX `uid`/`gid` override ustar's).
    public var userID: Int
    public var groupID: Int
    /// The owner's and group's names (ustar `uname`/`gname`, PAX `uname`/`gname`); may be empty.
    public var userName: [UInt8]
    public var groupName: [UInt8]
    /// The modification time (PAX `mtime` overrides ustar's).
    public var modificationTime: Timestamp
    /// A link's target (PAX `linkpath`, GNU long link, else ustar's `linkname`); empty otherwise.
    public var linkTarget: [UInt8]
    /// A device's major and minor numbers; 0 for other kinds.
    public var deviceMajor: Int
    public var deviceMinor: Int
    /// The offset of the member's first header block in the plain tar stream.
    public var headerOffset: Int
    /// The offset of the member's first data byte in the plain tar stream.
    public var dataOffset: Int
    /// A sparse member's map (GNU `S` headers, or PAX `GNU.sparse.*`); `nil` for others.
    public var sparseMap: [SparseRegion]?
    /// A sparse member's size as a file (holes included); ``size`` for others.
    public var realSize: Int

    /// A member of kind `kind` at `path`; every other field as given or zero.
    public init(path: [UInt8], kind: Kind, size: Int = 0, mode: UInt32 = 0o644, userID: Int = 0,
                groupID: Int = 0, userName: [UInt8] = [], groupName: [UInt8] = [],
                modificationTime: Timestamp = Timestamp(seconds: 0), linkTarget: [UInt8] = [],
                deviceMajor: Int = 0, deviceMinor: Int = 0, headerOffset: Int = 0, dataOffset: Int = 0,
                sparseMap: [SparseRegion]? = nil, realSize: Int? = nil) {
        self.path = path
        self.kind = kind
        self.size = size
        self.mode = mode
        self.userID = userID
        self.groupID = groupID
        self.userName = userName
        self.groupName = groupName
        self.modificationTime = modificationTime
        self.linkTarget = linkTarget
        self.deviceMajor = deviceMajor
        self.deviceMinor = deviceMinor
        self.headerOffset = headerOffset
        self.dataOffset = dataOffset
        self.sparseMap = sparseMap
        self.realSize = realSize ?? size
    }

    /// ``path`` decoded as UTF-8, each invalid sequence replaced by U+FFFD.
    public var pathString: String { String(decoding: path, as: UTF8.self) }
    /// ``linkTarget`` decoded as UTF-8, each invalid sequence replaced by U+FFFD.
    public var linkTargetString: String { String(decoding: linkTarget, as: UTF8.self) }
    /// The offset just past the member's data padded to a 512-byte block: where the next
    /// member's headers start.
    public var endOffset: Int { dataOffset + TarFormat.paddedSize(size) }
}

import GzipStreams
import SecretStreams

/// Where a hit was found.
public enum CacheTier: Sendable, Equatable {
    /// The process's ``MemoryCache``.
    case memory
    /// The ``DiskCache``'s directory.
    case disk
}

/// The result of a lookup: the value, or why there was none.
public enum CacheLookup<Value> {
    /// Found: the value, and the tier it came from.
    case hit(Value, tier: CacheTier)
    /// Not found, and why (for logs).
    case miss(CacheMiss)

    /// The value of a hit; `nil` on a miss.
    public var value: Value? {
        if case .hit(let value, _) = self { return value }
        return nil
    }

    /// The tier of a hit; `nil` on a miss.
    public var tier: CacheTier? {
        if case .hit(_, let tier) = self { return tier }
        return nil
    }

    /// The reason for a miss; `nil` on a hit.
    public var miss: CacheMiss? {
        if case .miss(let miss) = self { return miss }
        return nil
    }
}

extension CacheLookup: Sendable where Value: Sendable {}

/// Why a lookup found nothing. A damaged or expired entry has been removed by the time this is
/// reported. Also thrown by a ``CacheEntryInputStream`` that finds damage after its first bytes.
public enum CacheMiss: Error, Sendable, Equatable, CustomStringConvertible {
    /// No entry under that key (in memory or, for the disk tier, no file).
    case notFound
    /// The entry's last use is older than the cache's maximum age; `age` in whole seconds.
    case expired(age: Int64)
    /// The entry's file is not a valid entry for this key and cache; it has been removed.
    case damaged(Damage)

    /// What is wrong with a damaged entry. Offsets are byte offsets in the entry's file.
    public enum Damage: Sendable, Equatable, CustomStringConvertible {
        /// The file does not start with `GZSC`.
        case notCacheEntry
        /// A format version this code does not read.
        case unsupportedVersion(UInt8)
        /// A header field holds a value no writer stores.
        case invalidHeader(offset: Int64)
        /// The file ends inside its 16-byte header.
        case truncated(offset: Int64)
        /// The entry is encrypted and the cache has no key (`true`), or the other way round.
        case encryptionMismatch(entryIsEncrypted: Bool)
        /// Decryption failed: a wrong key, changed, cut or reordered bytes (offsets in the
        /// encrypted payload, which starts at byte 70, after the header and its seal).
        case decryption(SecretStreamError)
        /// The gzip member is invalid: CRC-32 or ISIZE mismatch, invalid deflate data, cut
        /// (offsets in the member).
        case gzip(GzipError)
        /// The member is bound to another key: the file was moved or copied under this name.
        case boundToAnotherKey
        /// The header's plain size differs from the bytes the member holds.
        case sizeMismatch(stored: Int64, decoded: Int64)
        /// Encrypted: the header's seal does not authenticate it (a changed plain size or
        /// flag, a header or seal from another entry, a wrong key, or a version 1 entry's bytes).
        case headerNotAuthenticated
        /// The file belongs to another user (`owner`, a uid), who could have written anything
        /// in it: never read as data. Removed like other damage: the name is in a directory
        /// only the effective user may write, so removing it takes nothing from anyone else.
        case foreignOwner(UInt32)

        /// What was wrong, in words, for logs.
        public var description: String {
            switch self {
            case .notCacheEntry: "not a gzstream cache entry"
            case .unsupportedVersion(let version): "unsupported entry format version \(version)"
            case .invalidHeader(let offset): "invalid entry header at byte \(offset)"
            case .truncated(let offset): "entry header cut at byte \(offset)"
            case .encryptionMismatch(let encrypted):
                encrypted ? "entry is encrypted and no key was given" : "entry is not encrypted and a key was given"
            case .decryption(let error): "decryption failed: \(error)"
            case .gzip(let error): "gzip data invalid: \(error)"
            case .boundToAnotherKey: "entry belongs to another key"
            case .sizeMismatch(let stored, let decoded): "plain size \(stored) in the header, \(decoded) bytes in the member"
            case .headerNotAuthenticated: "entry header not authenticated (changed, or written with another key)"
            case .foreignOwner(let owner): "entry file owned by uid \(owner), not by this user"
            }
        }
    }

    /// The reason in words, for logs.
    public var description: String {
        switch self {
        case .notFound: "not found"
        case .expired(let age): "expired (last used \(age) s ago)"
        case .damaged(let damage): "damaged entry removed: \(damage)"
        }
    }
}

/// One disk entry, as ``DiskCache/entries()`` lists it.
public struct CacheEntryInfo: Sendable, Equatable {
    /// The file name: the key's 32-byte hash in 64 lowercase hexadecimal digits.
    public var name: String
    /// The file's size in bytes (header, gzip member, encryption).
    public var storedSize: Int64
    /// The plain size in bytes from the entry's header; `nil` when the header is unreadable,
    /// when the file belongs to another user, and, in a cache with a key, when the header is
    /// not authenticated (its seal fails, or the entry is not encrypted). Without a key the
    /// header is not authenticated: the size is what the file says, checked only by a lookup
    /// that reads the entry whole.
    public var plainSize: Int64?
    /// The last store or hit (the file's modification time), in seconds since 1970 UTC.
    public var lastUse: Double
    /// Whether the payload is encrypted; `nil` when ``plainSize`` is.
    public var isEncrypted: Bool?
}

/// What ``DiskCache/prune()`` removed.
public struct PruneResult: Sendable, Equatable {
    /// Entries removed because they were older than the age limit.
    public var expiredCount = 0
    /// Entries removed, least recently used first, to get under the size limit.
    public var evictedCount = 0
    /// Temporary files left by writers that stopped, more than an hour old.
    public var abandonedTemporaryCount = 0
    /// The bytes freed.
    public var removedBytes: Int64 = 0
    /// The files the limits said to remove that could not be removed (a directory that may
    /// not be written, a file that may not be changed), in the order tried: when there are
    /// any, the limits may be unmet (``remainingBytes``, ``remainingExpiredCount``).
    public var failures: [CacheRemovalFailure] = []
    /// The bytes of the entry files left, those that could not be removed included: more than
    /// ``DiskCache/maximumSize`` only when some could not be.
    public var remainingBytes: Int64 = 0
    /// The entries left that are older than ``DiskCache/maximumAge``: they could not be removed.
    public var remainingExpiredCount = 0
}

/// A file that ``DiskCache/prune()``, or the size limit after a store, could not remove.
public struct CacheRemovalFailure: Sendable, Equatable, CustomStringConvertible {
    /// The file's path: the cache directory, `/`, its name.
    public var path: String
    /// Why, in the system's words (`Permission denied`).
    public var reason: String
    /// The failing call's `errno`, when a system call failed.
    public var errno: Int32?

    /// The failure to remove the file at `path`, for `reason`, with the call's `errno` if any.
    public init(path: String, reason: String, errno: Int32? = nil) {
        self.path = path
        self.reason = reason
        self.errno = errno
    }

    init(path: String, error: any Error) {
        let failure = error as? ByteStreamError
        self.init(path: path, reason: failure?.reason ?? "\(error)", errno: failure?.errno)
    }

    /// `PATH: REASON`.
    public var description: String { path + ": " + reason }
}

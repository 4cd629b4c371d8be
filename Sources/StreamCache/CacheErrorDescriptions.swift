// FoundationEssentials declares LocalizedError without loading ICU, which keeps the process small.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ByteStreams

// Each error's `errorDescription` is its `description` (English, not localized), so that
// Foundation's `localizedDescription` prints the message instead of "The operation could not be
// completed"; its `debugDescription` shows the case and the raw fields.

extension CacheDirectoryError: LocalizedError, CustomDebugStringConvertible {
    /// ``description``: the directory's path and why it is refused.
    public var errorDescription: String? { description }

    /// The fields: `StreamCache.CacheDirectoryError(path: "/tmp/c", reason: …)`.
    public var debugDescription: String { reflectedDescription(of: self) }
}

extension CacheMiss: LocalizedError, CustomDebugStringConvertible {
    /// ``description``: `"damaged entry removed: entry header cut at byte 9"`.
    public var errorDescription: String? { description }

    /// The case and its fields: `StreamCache.CacheMiss.expired(age: 90)`.
    public var debugDescription: String {
        if case .notFound = self { return "StreamCache.CacheMiss.notFound" }
        return reflectedDescription(of: self)
    }
}

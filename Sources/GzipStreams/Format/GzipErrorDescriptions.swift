// FoundationEssentials declares LocalizedError without loading ICU, which keeps the process small.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ByteStreams

// Each error's `errorDescription` is its `description` (English, not localized), so that
// Foundation's `localizedDescription` prints the message instead of "The operation could not be
// completed"; its `debugDescription` shows the case and the raw fields, which `description`
// would otherwise also give to `String(reflecting:)` and `debugPrint`.

extension GzipError: LocalizedError, CustomDebugStringConvertible {
    /// ``description``: `"CRC-32 mismatch in member 2 at byte 1234 (stored …, computed …)"`.
    public var errorDescription: String? { description }

    /// The case and its fields: `GzipStreams.GzipError.notGzip(offset: 0)`.
    public var debugDescription: String {
        if case .emptyInput = self { return "GzipStreams.GzipError.emptyInput" }
        return reflectedDescription(of: self)
    }
}

extension IndexedGzipError: LocalizedError, CustomDebugStringConvertible {
    /// ``description``: what in the index does not fit the file, and where.
    public var errorDescription: String? { description }

    /// The case and its fields: `GzipStreams.IndexedGzipError.pointMismatch(point: 3)`.
    public var debugDescription: String {
        if case .notRegularFile = self { return "GzipStreams.IndexedGzipError.notRegularFile" }
        return reflectedDescription(of: self)
    }
}

extension GzipIndexError: LocalizedError, CustomDebugStringConvertible {
    /// ``description``: `"not a valid GZIDX index: … (at byte 35)"`.
    public var errorDescription: String? { description }

    /// The fields: `GzipStreams.GzipIndexError(format: GzipStreams.GzipIndexFile.Format.gzidx, reason: "…", offset: Optional(5))`.
    public var debugDescription: String { reflectedDescription(of: self) }
}

// FoundationEssentials declares LocalizedError without loading ICU, which keeps the process small.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ByteStreams

extension SecretStreamError: LocalizedError, CustomDebugStringConvertible {
    /// ``description`` (English, not localized), so that Foundation's `localizedDescription`
    /// prints it: `"authentication failed for chunk 2 at byte 65614 (wrong key, …)"`.
    public var errorDescription: String? { description }

    /// The case and its fields, which `description` would otherwise also give to
    /// `String(reflecting:)`: `SecretStreams.SecretStreamError.trailingData(offset: 70)`.
    public var debugDescription: String { reflectedDescription(of: self) }
}

import ByteStreams
import Foundation

extension FoundationStreamError: LocalizedError, CustomDebugStringConvertible {
    /// ``description`` (English, not localized), so that `localizedDescription` prints it:
    /// `"read: No such file or directory"`.
    public var errorDescription: String? { description }

    /// The fields, the Foundation error unchanged:
    /// `ByteStreamsFoundation.FoundationStreamError(operation: "read", underlying: Optional(…))`.
    public var debugDescription: String { reflectedDescription(of: self) }
}

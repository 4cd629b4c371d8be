// FoundationEssentials declares LocalizedError without loading ICU, which keeps the process small;
// Foundation, which a caller imports for `localizedDescription`, re-exports the same protocol.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ByteStreamError: LocalizedError, CustomDebugStringConvertible {
    /// The message a user reads, ``description``, so that Foundation's `localizedDescription`
    /// gives it (`"open notes.txt: No such file or directory"`) instead of "The operation
    /// could not be completed". The text is English; it is not localized.
    public var errorDescription: String? { description }

    /// The fields as a programmer reads them: `ByteStreams.ByteStreamError(code:
    /// ByteStreams.ByteStreamError.Code.system(errno: 2), operation: "open", target:
    /// Optional("notes.txt"))`.
    public var debugDescription: String { reflectedDescription(of: self) }
}

/// A value's type, case and stored fields, as the standard library prints a value that has no
/// description of its own: `GzipStreams.GzipError.notGzip(offset: 0)`,
/// `ByteStreams.ByteStreamError(code: …, operation: "open", target: nil)`; each field through
/// `String(reflecting:)`, so a nested error shows its own fields. An enum case without a
/// payload has no name a mirror can give: it is shown as the type and the description in
/// parentheses (the errors that have such cases name them themselves).
///
/// For the `debugDescription` of the public errors, whose `description` is the message a user
/// reads and would otherwise also be what `String(reflecting:)` and `debugPrint` show.
package func reflectedDescription(of value: Any) -> String {
    let mirror = Mirror(reflecting: value)
    let typeName = String(reflecting: type(of: value))
    switch mirror.displayStyle {
    case .enum:
        guard let payload = mirror.children.first, let name = payload.label else {
            return "\(typeName)(\(value))"
        }
        let fields = Mirror(reflecting: payload.value)
        if fields.displayStyle == .tuple {
            return "\(typeName).\(name)(\(describeFields(fields)))"
        }
        return "\(typeName).\(name)(\(String(reflecting: payload.value)))"
    default:
        return "\(typeName)(\(describeFields(mirror)))"
    }
}

/// `label: value, …`, leaving out the positional labels (`.0`) of unlabelled tuple elements.
private func describeFields(_ mirror: Mirror) -> String {
    mirror.children.map { child in
        let value = String(reflecting: child.value)
        guard let label = child.label, !label.hasPrefix(".") else { return value }
        return "\(label): \(value)"
    }.joined(separator: ", ")
}

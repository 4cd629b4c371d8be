import ByteStreams
import Foundation

/// A Foundation stream's failure, as the ``FoundationInputStream`` or ``FoundationOutputStream``
/// over it reports it in `streamError` and throws it from the conveniences.
///
/// The Foundation error is kept unchanged in ``underlying`` (an `NSError`: for files
/// `NSPOSIXErrorDomain` with `errno` as its code). When the Foundation stream is a
/// ``BridgedInputStream`` or ``BridgedOutputStream``, the error of the stream it bridges is
/// reported instead, so a stream that goes through both adapters keeps its own error.
public struct FoundationStreamError: Error, CustomStringConvertible {
    /// `"open"`, `"read"`, `"write"` or `"close"`.
    public var operation: String
    /// The Foundation stream's `streamError`, unchanged; `nil` when it failed without one.
    public var underlying: (any Error)?

    /// The failure of `operation` with the Foundation stream's `underlying` error.
    public init(operation: String, underlying: (any Error)?) {
        self.operation = operation
        self.underlying = underlying
    }

    /// The `errno` of an error in `NSPOSIXErrorDomain`, `nil` otherwise.
    public var errno: Int32? {
        guard let error = underlying.map({ $0 as NSError }), error.domain == NSPOSIXErrorDomain else { return nil }
        return Int32(exactly: error.code)
    }

    /// The message a user reads: the operation and `strerror`'s text, or the Foundation
    /// error's description, domain and code.
    public var description: String {
        let reason: String
        if let errno {
            reason = String(cString: strerror(errno))
        } else if let underlying {
            let error = underlying as NSError
            reason = "\(error.localizedDescription) (\(error.domain) \(error.code))"
        } else {
            reason = "the Foundation stream failed without an error"
        }
        return "\(operation): \(reason)"
    }
}

/// The key under which a bridged stream's `NSError` keeps our original error (also given as
/// `NSUnderlyingErrorKey`).
let originalErrorKey = "ByteStreamsFoundation.originalError"

/// Our error as Foundation code expects a stream's error: an `NSError` in `NSPOSIXErrorDomain`
/// with `errno` as its code for a system failure (as Foundation's own file streams report), or
/// in the domain Swift gives the error's type (`"GzipStreams.GzipError"`) otherwise; the
/// description is ours, and the original error is kept in `userInfo` under
/// `NSUnderlyingErrorKey`. A ``FoundationStreamError`` gives back its Foundation error.
func foundationError(from error: any Error) -> NSError {
    if let wrapped = error as? FoundationStreamError, let underlying = wrapped.underlying {
        return underlying as NSError
    }
    let userInfo: [String: Any] = [
        NSLocalizedDescriptionKey: String(describing: error),
        NSUnderlyingErrorKey: error,
        originalErrorKey: error,
    ]
    if let errno = (error as? ByteStreamError)?.errno {
        return NSError(domain: NSPOSIXErrorDomain, code: Int(errno), userInfo: userInfo)
    }
    let bridged = error as NSError
    return NSError(domain: bridged.domain, code: bridged.code, userInfo: userInfo)
}

/// A Foundation stream's error as ours: the original error of a bridged stream, or a
/// ``FoundationStreamError`` keeping the Foundation error.
func byteStreamError(from error: (any Error)?, operation: String) -> any Error {
    if let error, let original = (error as NSError).userInfo[originalErrorKey] as? any Error {
        return original
    }
    return FoundationStreamError(operation: operation, underlying: error)
}

extension ByteStream.Status {
    /// The same state as Foundation's `Stream.Status`.
    var foundationStatus: Stream.Status {
        switch self {
        case .notOpen: .notOpen
        case .opening: .opening
        case .open: .open
        case .reading: .reading
        case .writing: .writing
        case .atEnd: .atEnd
        case .closed: .closed
        case .error: .error
        }
    }
}

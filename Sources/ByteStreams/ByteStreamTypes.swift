// The value types of ByteStream (its status, events and property keys), apart from the class.
extension ByteStream {
    /// The NSStream states (`NSStreamStatus`).
    public enum Status: Sendable, Equatable, CustomStringConvertible {
        /// Made, not opened yet; ``ByteStream/open()`` has not been called.
        case notOpen
        /// Inside ``ByteStream/open()``, while the backing opens.
        case opening
        /// Open: reads and writes may be made.
        case open
        /// Inside a read.
        case reading
        /// Inside a write.
        case writing
        /// An input stream that has returned its last byte: reads return `0`.
        case atEnd
        /// Closed by ``ByteStream/close()``; the backing is released.
        case closed
        /// Failed; ``ByteStream/streamError`` holds the first error, and reads and writes
        /// return `-1`.
        case error

        /// The status in words, for messages: "not open", "at end", ….
        public var description: String {
            switch self {
            case .notOpen: "not open"
            case .opening: "opening"
            case .open: "open"
            case .reading: "reading"
            case .writing: "writing"
            case .atEnd: "at end"
            case .closed: "closed"
            case .error: "error"
            }
        }
    }

    /// The events a stream posts to its delegate (`NSStreamEvent`).
    public struct Event: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The bits of the set, one per event.
        public let rawValue: UInt
        /// The events whose bits are set in `rawValue`.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// The stream has opened.
        public static let openCompleted = Event(rawValue: 1 << 0)
        /// An input stream has bytes to read: read in the handler; it comes again while there
        /// is more.
        public static let hasBytesAvailable = Event(rawValue: 1 << 1)
        /// An output stream can take bytes; it comes again after each write that leaves more
        /// room.
        public static let hasSpaceAvailable = Event(rawValue: 1 << 2)
        /// The stream failed; its ``ByteStream/streamError`` says why.
        public static let errorOccurred = Event(rawValue: 1 << 3)
        /// An input stream reached its end; posted once.
        public static let endEncountered = Event(rawValue: 1 << 4)

        /// The events in words, for logs: "has bytes available, end encountered".
        public var description: String {
            var names: [String] = []
            if contains(.openCompleted) { names.append("open completed") }
            if contains(.hasBytesAvailable) { names.append("has bytes available") }
            if contains(.hasSpaceAvailable) { names.append("has space available") }
            if contains(.errorOccurred) { names.append("error occurred") }
            if contains(.endEncountered) { names.append("end encountered") }
            return names.joined(separator: ", ")
        }
    }

    /// Keys for ``property(forKey:)`` and ``setProperty(_:forKey:)`` (`NSStream.PropertyKey`).
    public struct PropertyKey: RawRepresentable, Hashable, Sendable {
        /// The key's name.
        public let rawValue: String
        /// A key by name; the streams answer only the two keys below.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The bytes a growing ``MemoryOutputStream`` holds, as `Data`
        /// (`NSStreamDataWrittenToMemoryStreamKey`). Read-only.
        public static let dataWrittenToMemoryStream = PropertyKey(rawValue: "dataWrittenToMemoryStream")
        /// The current offset in bytes of a file stream, as `Int64`
        /// (`NSStreamFileCurrentOffsetKey`). Setting it seeks; it is `nil` for pipes and terminals.
        public static let fileCurrentOffset = PropertyKey(rawValue: "fileCurrentOffset")
    }
}

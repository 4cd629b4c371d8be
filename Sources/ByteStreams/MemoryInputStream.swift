// FoundationEssentials gives Data and Date without loading ICU, which keeps the process small.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads bytes held in memory (Cocoa's `InputStream(data:)`).
///
/// What it costs: a `Data` or a `[UInt8]` is kept, not copied (it shares the caller's buffer,
/// and a later change to the caller's value copies the caller's side, as for any value type);
/// another sequence is copied once into an array. Inputs of at most 64 bytes are copied into
/// storage the stream owns. Each read copies only the bytes it returns.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset`` is not supported. Never blocks.
public final class MemoryInputStream: ByteInputStream {
    /// What keeps the bytes alive. `start` points into it: the heap buffer of an array or a
    /// `Data` does not move while this stream holds the value unchanged. A small `Data` may live
    /// inline, in the value itself, so small inputs are copied into `owned` instead.
    private enum Storage {
        case data(Data)
        case array([UInt8])
        case owned(UnsafeMutableRawBufferPointer)
    }

    /// Inputs this small are copied: less than any `Data` keeps inline.
    private static let copiedSize = 64

    private let storage: Storage
    private let start: UnsafeMutablePointer<UInt8>
    private var position = 0

    /// A stream over `bytes`, kept without a copy (see the type's note on what it costs).
    public convenience init(bytes: [UInt8]) {
        self.init(storing: bytes.count <= Self.copiedSize ? Self.copy(bytes) : .array(bytes), count: bytes.count)
    }

    /// A stream over `data`, kept without a copy (see the type's note on what it costs).
    public convenience init(data: Data) {
        self.init(storing: data.count <= Self.copiedSize ? Self.copy(data) : .data(data), count: data.count)
    }

    /// A stream over the bytes of `bytes`: a `Data` or an array is kept as by
    /// ``init(data:)`` and ``init(bytes:)-(_)``; another sequence is copied into an array.
    public convenience init<Bytes: Sequence>(bytes: Bytes) where Bytes.Element == UInt8 {
        if let data = bytes as? Data {
            self.init(data: data)
        } else {
            self.init(bytes: Array(bytes))
        }
    }

    private init(storing storage: Storage, count: Int) {
        self.storage = storage
        self.count = count
        switch storage {
        case .data(let data):
            start = data.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
                .assumingMemoryBound(to: UInt8.self)
        case .array(let array):
            start = array.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
                .assumingMemoryBound(to: UInt8.self)
        case .owned(let buffer):
            start = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        }
        super.init()
    }

    /// A copy of `bytes` in an allocation of at least one byte, so `start` is never `nil`.
    private static func copy(_ bytes: some Sequence<UInt8>) -> Storage {
        let array = Array(bytes)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(array.count, 1), alignment: 1)
        array.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return .owned(buffer)
    }

    /// The number of bytes the stream holds in all.
    public let count: Int

    /// The number of bytes not yet read.
    public var remainingCount: Int { count - position }

    deinit {
        if case .owned(let buffer) = storage { buffer.deallocate() }
    }

    override public var hasBytesAvailable: Bool {
        streamStatus == .open && position < count
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let length = min(maxLength, count - position)
        if length > 0 {
            buffer.update(from: start + position, count: length)
            position += length
        }
        return length
    }

    /// Lends the unread bytes, in place (no copy). They stay valid as long as the stream exists;
    /// the stream's position does not move.
    override public func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                   length: UnsafeMutablePointer<Int>) -> Bool {
        guard streamStatus == .open || streamStatus == .atEnd else { return false }
        buffer.pointee = start + position
        length.pointee = count - position
        return true
    }
}

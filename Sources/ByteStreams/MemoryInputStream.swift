// FoundationEssentials gives Data and Date without loading ICU, which keeps the process small.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads bytes held in memory (Cocoa's `InputStream(data:)`). The bytes are copied once at
/// creation into storage the stream owns, so ``getBuffer(_:length:)`` can lend them.
///
/// Property ``ByteStream/PropertyKey/fileCurrentOffset`` is not supported. Never blocks.
public final class MemoryInputStream: ByteInputStream, @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer
    private var position = 0

    /// A stream over a copy of `bytes`.
    public init<Bytes: Sequence>(bytes: Bytes) where Bytes.Element == UInt8 {
        let array = Array(bytes)
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(array.count, 1), alignment: 1)
        array.withUnsafeBytes { storage.copyMemory(from: $0) }
        self.storage = storage
        count = array.count
        super.init()
    }

    /// A stream over a copy of `data`.
    public convenience init(data: Data) {
        self.init(bytes: data)
    }

    /// The number of bytes the stream holds in all.
    public let count: Int

    /// The number of bytes not yet read.
    public var remainingCount: Int { count - position }

    deinit { storage.deallocate() }

    override public var hasBytesAvailable: Bool {
        streamStatus == .open && position < count
    }

    override public func readBytes(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        let length = min(maxLength, count - position)
        if length > 0 {
            UnsafeMutableRawPointer(buffer).copyMemory(from: storage.baseAddress! + position, byteCount: length)
            position += length
        }
        return length
    }

    /// Lends the unread bytes. They stay valid as long as the stream exists; the stream's
    /// position does not move.
    override public func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                   length: UnsafeMutablePointer<Int>) -> Bool {
        guard streamStatus == .open || streamStatus == .atEnd else { return false }
        buffer.pointee = storage.baseAddress!.assumingMemoryBound(to: UInt8.self) + position
        length.pointee = count - position
        return true
    }
}

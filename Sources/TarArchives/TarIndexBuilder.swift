/// Collects a member index from plain bytes as they pass by, in pieces of any size: what
/// `gzstream index` feeds it from the decode that builds the GZIDX, so one decode makes both.
///
/// It first decides whether the data is a tar at all: the first 512 bytes must be a header
/// with a valid checksum (ustar's unsigned sum or the historical signed one) that is not all
/// zeros; otherwise it takes nothing more (``finish()`` returns ``Outcome/notTar``). Then a
/// ``TarScanner`` reads every header, skipping data without copying it; memory grows with the
/// members (one ``TarEntry`` each), not with the data.
///
/// A value type; not for two threads at once.
public struct TarIndexBuilder: Sendable {
    /// What the bytes fed were.
    public enum Outcome: Sendable, Equatable {
        /// A whole tar archive: its members in order.
        case archive([TarEntry])
        /// Not a tar: the first block is not a header.
        case notTar
        /// A tar that is malformed or cut short at some point: the error (no index of it).
        case damaged(TarError)
    }

    private var scanner: TarScanner
    private var firstBlock: [UInt8] = []
    private var decided = false
    private var isTar = false
    private var entries: [TarEntry] = []
    private var failure: TarError?

    /// A builder at the start of the plain data.
    public init(limits: TarScanner.Limits = TarScanner.Limits()) {
        scanner = TarScanner(limits: limits)
    }

    /// Whether more bytes can change the outcome: `false` once the data is known not to be a
    /// tar (its first 512 bytes are not a header), once the archive failed, and after its
    /// end-of-archive block. A decoder may then stop feeding it.
    public var wantsMoreData: Bool {
        failure == nil && !(decided && !isTar) && !scanner.hasEnded
    }

    /// Takes the next plain bytes.
    public mutating func take(_ bytes: UnsafeRawBufferPointer) {
        guard wantsMoreData, bytes.count > 0 else { return }
        if !decided {
            let wanted = TarFormat.blockSize - firstBlock.count
            firstBlock += bytes.prefix(wanted)
            guard firstBlock.count == TarFormat.blockSize else { return }
            decided = true
            isTar = firstBlock.withUnsafeBytes { Self.isHeader($0) }
            guard isTar else { return }
            let block = firstBlock
            block.withUnsafeBytes { feed($0) }
            if bytes.count > wanted { feed(UnsafeRawBufferPointer(rebasing: bytes[wanted...])) }
            return
        }
        feed(bytes)
    }

    /// What the bytes fed so far were, at the end of the data.
    public mutating func finish() -> Outcome {
        if let failure { return .damaged(failure) }
        guard decided, isTar else { return .notTar }
        do throws(TarError) {
            try scanner.finish()
        } catch {
            return .damaged(error)
        }
        return .archive(entries)
    }

    private mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        var position = 0
        while position < bytes.count, failure == nil {
            do throws(TarError) {
                let (consumed, event) = try scanner.scan(UnsafeRawBufferPointer(rebasing: bytes[position...]))
                position += consumed
                if case .entry(let entry) = event { entries.append(entry) }
                if case .end = event { return }
            } catch {
                failure = error
            }
        }
    }

    /// Whether `block` is a tar header: not all zeros, with a valid checksum.
    public static func isHeader(_ block: UnsafeRawBufferPointer) -> Bool {
        guard block.count == TarFormat.blockSize, !TarFormat.isZeroBlock(block),
              let stored = TarFormat.number(in: UnsafeRawBufferPointer(rebasing: block[TarFormat.Field.checksum])) else {
            return false
        }
        return stored == Int64(TarFormat.checksum(of: block)) || stored == Int64(TarFormat.signedChecksum(of: block))
    }
}

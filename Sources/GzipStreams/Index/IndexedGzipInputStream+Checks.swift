import ByteStreams

// What IndexedGzipInputStream checks of its index and file before and around a decode: that
// the index can be used at all, where the first member's deflate data starts, and (for a seek)
// that a span ends where the index says the next point is, decoded alone with its bytes dropped.

extension IndexedGzipInputStream {
    /// Refuses what the decoders cannot take: an index without access points (a seek starts
    /// at one), more points than the file can need (``GzipIndex/maximumPointCount(compressedSize:)``), windows other than 32 KiB (deflate's, RFC 1951 §2: a larger one would only
    /// cost memory), and offsets beyond what a file offset holds.
    static func checkUsable(_ index: GzipIndex, fileSize: Int64) throws {
        guard !index.points.isEmpty else { throw IndexedGzipError.unusable("it has no access points") }
        let pointLimit = GzipIndex.maximumPointCount(compressedSize: fileSize)
        guard index.points.count <= pointLimit else {
            throw IndexedGzipError.unusable("\(index.points.count) access points, more than the \(pointLimit) a file of \(fileSize) bytes can need")
        }
        guard index.windowSize == GzipIndex.defaultWindowSize else {
            throw IndexedGzipError.unusable("window size \(index.windowSize), not 32768")
        }
        let limit = UInt64(Int64.max / 2)
        guard index.plainSize <= limit, index.points.allSatisfy({ $0.plainOffset <= limit }) else {
            throw IndexedGzipError.unusable("a plain offset beyond 2^62")
        }
    }

    /// The first member's header and the offset just past it, read with `pread(2)`.
    func readFirstHeader() throws -> (GzipHeader, Int64) {
        var parser = GzipHeaderParser(member: 1, offset: 0, maximumFieldLength: GzipInputStream.maximumHeaderFieldLength)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var offset: Int64 = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes {
                try SystemCalls.read(file.fileDescriptor, $0.baseAddress!, $0.count, at: offset, target: file.displayName)
            }
            guard count > 0 else { throw GzipError.truncated(member: 1, part: .header, offset: offset) }
            for byte in buffer[0..<count] {
                offset += 1
                if try parser.consume(byte) { return (parser.header, offset) }
            }
        }
    }

    /// Decodes span `span` alone, dropping its bytes, and throws unless it ends where the
    /// index says the next point is: the check of a seek's first span when it is too long
    /// to hold, and (`mustReachNext`) of the point a seek starts from, by the span before it.
    func checkSpan(_ span: Int, mustReachNext: Bool = false) throws {
        let probe = SpanJobs(spans: span..<(span + 1), decoders: decoders, chunkLimit: 4, chunkCapacity: Self.chunkCapacity)
        defer { probe.cancelAndJoin() }
        while true {
            switch probe.nextItem() {
            case .bytes(_, _, _, let release, _):
                if let release { probe.chunks.give(release) }
            case .memberEnd, .written, .spanTail:
                continue
            case .spanEnd:
                return
            case .stop(.mismatch(let error)):
                throw error
            case .stop(.failed(let error as GzipError)):
                throw IndexedGzipError.undecodable(point: span, error: error)
            case .stop(.failed(let error)), .stop(.writeFailed(let error)):
                throw error
            case .stop(.boundary):
                // What follows a member is not a header: the data ends there. A span that must
                // reach the next point has not.
                if span + 1 < index.points.count && mustReachNext { throw IndexedGzipError.pointMismatch(point: span + 1) }
                return
            }
        }
    }
}

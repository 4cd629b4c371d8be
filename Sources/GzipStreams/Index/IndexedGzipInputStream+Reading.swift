import ByteStreams

// The reading side of IndexedGzipInputStream: the items the span workers hand over, taken in
// span order, checked (member trailers, span ends, windows) and lent to the caller.

extension IndexedGzipInputStream {
    /// The next plain bytes of the parallel path, in place (valid until the next call): at
    /// most `maxLength`, empty at the end; `nil` once the sequential reader has taken over.
    func lendPlainBytes(maxLength: Int) throws -> UnsafeRawBufferPointer? {
        while fallback == nil || held?.checked == true {
            if let hold = held, hold.checked {
                // The checked first span's bytes, then the rest as the workers give them.
                let left = hold.bytes.count - hold.position
                if left > 0 && maxLength > 0 {
                    let count = try limitedCount(min(maxLength, left))
                    held!.position += count
                    plainOffset += Int64(count)
                    returnedCount += Int64(count)
                    return held!.bytes.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[(hold.position)..<(hold.position + count)]) }
                }
                if left > 0 { return UnsafeRawBufferPointer(start: nil, count: 0) }
                held = nil
                continue
            }
            if var taken = current {
                let left = taken.count - taken.position
                if left > 0 {
                    if skip > 0 {
                        let dropped = Int(min(skip, Int64(left)))
                        skip -= Int64(dropped)
                        taken.position += dropped
                        current = taken
                        continue
                    }
                    if let hold = held, !hold.checked, hold.span == span {
                        // Kept, not returned, until the span is checked.
                        var count = left
                        if let rangeEnd {
                            count = Int(max(0, min(Int64(count), rangeEnd - plainOffset - Int64(hold.bytes.count))))
                        }
                        held!.bytes.append(contentsOf: UnsafeRawBufferPointer(start: taken.chunk + taken.position, count: count))
                        taken.position = taken.count
                        current = taken
                        continue
                    }
                    var count = min(maxLength, left)
                    if let rangeEnd { count = Int(min(Int64(count), rangeEnd - plainOffset)) }
                    if count > 0 {
                        count = try limitedCount(count)
                        let bytes = UnsafeRawBufferPointer(start: taken.chunk + taken.position, count: count)
                        taken.position += count
                        current = taken
                        plainOffset += Int64(count)
                        returnedCount += Int64(count)
                        return bytes
                    }
                }
                if let release = taken.release { taken.pool.give(release) }
                current = nil
            }
            if ended {
                if skip > 0 { throw IndexedGzipError.offsetPastEnd(offset: plainOffset, size: chunkPlainEnd) }
                if held != nil { held!.checked = true; continue }
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            if run == nil, let pendingRun { launch(pendingRun) }
            guard let run else { throw ByteStreamError(.notOpen, operation: "read") }
            try take(run.nextItem(), from: run)
        }
        return nil
    }

    /// Keeps the last window-size plain bytes taken from the workers (reading from the start).
    func keepTail(_ bytes: UnsafeRawBufferPointer) {
        let size = Int(GzipIndex.defaultWindowSize)
        if bytes.count >= size {
            tail.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.suffix(size))) }
        } else if bytes.count > 0 {
            tail.removeFirst(bytes.count)
            tail.append(contentsOf: bytes)
        }
    }

    /// `count`, cut to the output limit; throws when no byte is left under it.
    func limitedCount(_ count: Int) throws -> Int {
        guard let limit = maximumOutputSize.map(Int64.init), returnedCount + Int64(count) > limit else { return count }
        let left = Int(limit - returnedCount)
        if left == 0 { throw GzipError.outputLimitExceeded(limit: limit, offset: compressedPosition) }
        return left
    }

    /// Acts on the next item of the current span.
    func take(_ item: SpanItem, from run: SpanJobs) throws {
        switch item {
        case .bytes(let chunk, let count, let crc, let release, let position):
            // Where an error from these bytes (the output limit) says the input was.
            compressedPosition = max(compressedPosition, position)
            memberCRC = crc32Combine(memberCRC, crc, secondLength: UInt64(count))
            chunkPlainEnd += Int64(count)
            keepTail(UnsafeRawBufferPointer(start: chunk, count: count))
            current = (chunk, count, 0, release, run.chunks)
        case .written(let count, let crc, let position):
            compressedPosition = max(compressedPosition, position)
            memberCRC = crc32Combine(memberCRC, crc, secondLength: UInt64(count))
            chunkPlainEnd += Int64(count)
            writtenPending += count
        case .spanTail(let bytes):
            bytes.withUnsafeBytes { keepTail($0) }
        case .memberEnd(let stored, let trailerOffset, let next):
            if let start = memberStart {
                let computed = GzipTrailer(crc32: memberCRC, plainSize: chunkPlainEnd - start.plain)
                if computed != stored {
                    try failed(.mismatch(.pointMismatch(point: span)), trailerCheck: (stored, computed, trailerOffset))
                    return
                }
            }
            membersRead += 1
            memberStart = (next, chunkPlainEnd)
            memberCRC = 0
            compressedPosition = next
        case .spanEnd(let windowExact):
            if held?.span == span { held!.checked = true }
            span += 1
            self.run?.finishSpan()
            compressedPosition = span < index.points.count ? Int64(index.points[span].compressedOffset) : fileSize
            if span == run.end {
                ended = true
                stopRun()
            } else if windowExact {
                // The worker decoded the next point's window byte for byte from the history
                // the reader holds: nothing to read again.
            } else if fromStart, let window = try index.window(ofPoint: span), !window.elementsEqual(tail) {
                // Reading from the start, every byte before the point is known: a window that
                // differs would give the next span's bytes from the wrong history, so none of
                // them is given; the sequential reader goes on from the member's start.
                try failed(.mismatch(.windowDiffers(point: span)), trailerCheck: nil)
            } else if !fromStart, let window = try index.window(ofPoint: span), !window.elementsEqual(tail) {
                // After a seek: the worker found the window fits the data only where it is not
                // zero (a sparse window, or a zeroed one). The next span's bytes, decoded from
                // it, are not given: it is decoded again from the data decoded before it.
                guard tailKnown else { throw IndexedGzipError.windowDiffers(point: span) }
                restart(at: span, window: tail)
            }
        case .stop(let reason):
            try failed(reason, trailerCheck: nil)
        }
    }
}

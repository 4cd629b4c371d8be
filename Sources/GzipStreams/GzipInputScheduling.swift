import ByteStreams

/// A scheduled `GzipInputStream` follows its inner stream: it schedules the inner stream on its
/// own scheduler, decodes ahead one chunk when the inner stream has bytes, and says "has bytes
/// available" only once it has plain bytes to give.
extension GzipInputStream: FollowsInnerReadiness {
    package func startFollowingInnerStream() {
        guard innerEvents == nil, let scheduler else { return }
        if lookahead == nil { lookahead = .allocate(capacity: chunkSize) }
        innerEvents = InnerStreamEvents(inner: inner, scheduler: scheduler) { [weak self] event in
            if event != .openCompleted { self?.decodeAhead() }
        }
        // Bytes already in the input buffer need no event from the inner stream.
        schedulePump()
    }

    package func stopFollowingInnerStream() {
        innerEvents?.detach()
        innerEvents = nil
        checkpoint = nil
    }

    package func rearmAfterTransfer(wouldBlock: Bool) {
        if lookaheadStart < lookaheadEnd {
            post(.hasBytesAvailable)
        } else if !wouldBlock {
            // More may decode from the input already read; after a read that found nothing,
            // the inner stream's next event comes when it has more.
            schedulePump()
        }
    }

    private func schedulePump() {
        scheduler?.perform { [target = ScheduledStream(weak: self)] in target.stream?.decodeAhead() }
    }

    /// On the scheduler: decodes one chunk into the lookahead when it is empty, then posts
    /// "has bytes available", or the end (status `.atEnd`), or the error; posts nothing when the
    /// inner stream has nothing yet (its next event calls this again).
    private func decodeAhead() {
        guard innerEvents != nil, streamStatus == .open, lookaheadStart == lookaheadEnd, let lookahead else { return }
        do {
            let count = try decode(into: lookahead, maxLength: chunkSize)
            lookaheadStart = 0
            lookaheadEnd = count
            if count > 0 {
                post(.hasBytesAvailable)
            } else {
                setStatus(.atEnd)
                post(.endEncountered)
            }
        } catch is WouldBlock {
            // The inner stream's read re-armed it.
        } catch {
            fail(error)
        }
    }
}

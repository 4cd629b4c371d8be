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
        input.transcript = nil
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

// A parsing step (a header, a trailer, what follows a member) that a scheduled inner stream
// cuts short is undone and run again when more comes: its state back, and the bytes it
// consumed given back to the input.
extension GzipInputStream {
    /// What a parsing step changes before it can fail for want of input: restored, and the input
    /// it consumed (``GzipMemberInput/transcript``) given back, when the inner stream has nothing yet.
    struct Checkpoint {
        var state: State
        var member: Member
        var position: Int64
    }

    /// Starts a step: a parsing step of a stream that follows a scheduled inner stream keeps
    /// what it needs to be undone; any other step needs none.
    func beginStep() {
        guard innerEvents != nil, state == .streamStart || state == .betweenMembers || state == .trailer else {
            checkpoint = nil
            input.transcript = nil
            return
        }
        checkpoint = Checkpoint(state: state, member: member, position: input.position)
        input.transcript = Array(UnsafeBufferPointer(start: input.buffer + input.start, count: input.end - input.start))
    }

    /// Undoes a parsing step that ran out of input: its state back, and the bytes it consumed
    /// put in front of the input, to be parsed again when more has come. The bytes kept are
    /// those of one header, trailer or gap between members.
    func rollBack() {
        guard let checkpoint else { return }
        self.checkpoint = nil
        state = checkpoint.state
        member = checkpoint.member
        input.giveBack(input.transcript ?? [], from: checkpoint.position)
        input.transcript = nil
    }
}

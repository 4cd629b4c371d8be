import ByteStreams
import ByteStreamsFoundation
import Dispatch
import Foundation
import Testing
import TestSupport

/// Each test runs a run loop on its own `Thread`, asleep in `run(mode:before:)` with an hour's
/// deadline, so only a wake-up makes it deliver anything; every stream call is made on that
/// thread (`loop.sync`), where the delegate is called too.
@Suite("Run-loop scheduling: schedule(in:forMode:) and remove(from:forMode:)", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct RunLoopSchedulingTests {
    @Test("Blocks queued from another thread wake the sleeping loop and run in order on its thread")
    func wakesAndOrders() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        let scheduler = RunLoopScheduler(runLoop: loop.runLoop, mode: .default)
        let order = Locked<[Int]>([])
        let onLoopThread = Locked(true)
        let done = DispatchSemaphore(value: 0)
        let loopThread = loop.thread
        for index in 0..<200 {
            scheduler.perform {
                order.update { $0.append(index) }
                if ObjectIdentifier(Thread.current) != loopThread { onLoopThread.value = false }
                if index == 199 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + waitLimit) == .success, "the loop woke up and ran the blocks")
        #expect(order.value == Array(0..<200))
        #expect(onLoopThread.value)
        // A batch of deliveries is a source firing: run(mode:before:) returned (before its
        // hour was up) after it, before the next block ran.
        loop.sync {}
        #expect(loop.returns >= 1)
    }

    @Test("A delegate that reads in its handler drives a MemoryInputStream to its end")
    func memoryInput() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        let content = Array("0123456789".utf8)
        let input = MemoryInputStream(bytes: content)
        let delegate = RecordingDelegate(readLength: 3)
        loop.scheduleAndOpen(input, delegate: delegate)
        #expect(delegate.waitUntilEnded())
        loop.sync {}
        #expect(delegate.bytesRead == content)
        // Open, readiness, then one "has bytes" after each read of 3, 3, 3 and 1 bytes; the
        // read that returns 0 ends the stream.
        #expect(delegate.events == [.openCompleted] + Array(repeating: .hasBytesAvailable, count: 5) + [.endEncountered])
        #expect(delegate.threads.allSatisfy { $0 == loop.thread })
        #expect(loop.sync { input.streamStatus } == .atEnd)
        withExtendedLifetime(delegate) {}
    }

    @Test("A delegate that reads in its handler drives a FileInputStream to its end")
    func fileInput() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        let content = randomBytes(count: 10_000, seed: 3)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("RunLoopSchedulingTests-\(UUID().uuidString)")
        try Data(content).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let input = FileInputStream(path: url.path)
        expectFourReadsOnLoop(input, loop: loop, content: content)
        #expect(input.scheduler == nil, "close() drops the scheduler")
    }

    @Test("A delegate that writes in its handler fills a fixed MemoryOutputStream, then hears the end")
    func fixedOutput() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 6)
        defer { buffer.deallocate() }
        let output = MemoryOutputStream(buffer: buffer, capacity: 6)
        let delegate = RecordingDelegate(writeLength: 4, source: Array(1...10))
        loop.scheduleAndOpen(output, delegate: delegate)
        #expect(delegate.waitUntilEnded())
        loop.sync {}
        #expect(delegate.events == [.openCompleted, .hasSpaceAvailable, .hasSpaceAvailable, .endEncountered])
        #expect(loop.sync { output.data } == Data(Array(1...6)))
        withExtendedLifetime(delegate) {}
    }

    @Test("A failed open posts errorOccurred on the run loop")
    func errorEvent() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        let input = FileInputStream(path: "/nonexistent-\(UUID().uuidString)")
        let delegate = RecordingDelegate()
        loop.scheduleAndOpen(input, delegate: delegate)
        #expect(delegate.waitUntilEnded())
        loop.sync {}
        #expect(delegate.events == [.errorOccurred])
        withExtendedLifetime(delegate) {}
    }

    @Test("remove(from:forMode:) stops the events; another run loop or mode is not removed")
    func removeStopsEvents() throws {
        let loop = RunLoopThread()
        let other = RunLoopThread()
        defer { #expect(loop.stop()); #expect(other.stop()) }
        let input = MemoryInputStream(bytes: [1, 2, 3])
        let delegate = RecordingDelegate()
        nonisolated(unsafe) let otherLoop = other.runLoop
        loop.scheduleAndOpen(input, delegate: delegate)
        loop.sync {}
        #expect(delegate.events == [.openCompleted, .hasBytesAvailable])

        // Cocoa: removing from where the stream is not scheduled does nothing.
        let kept = loop.sync {
            input.remove(from: otherLoop, forMode: .default)
            input.remove(from: RunLoop.current, forMode: RunLoop.Mode("other"))
            return input.scheduler != nil
        }
        #expect(kept == true)

        let removed = loop.sync {
            input.remove(from: RunLoop.current, forMode: .default)
            var byte: UInt8 = 0
            while input.read(&byte, maxLength: 1) > 0 {}
            return input.scheduler == nil
        }
        #expect(removed == true)
        loop.sync {}
        #expect(delegate.events == [.openCompleted, .hasBytesAvailable], "nothing after the removal")
        #expect(loop.sync { input.streamStatus } == .atEnd)
        withExtendedLifetime(delegate) {}
    }

    @Test("A stream scheduled in two modes hears in each; removing one mode keeps the other")
    func twoModes() throws {
        let custom = RunLoop.Mode("RunLoopSchedulingTests.custom")
        let loop = RunLoopThread(mode: custom)
        defer { #expect(loop.stop()) }
        let input = MemoryInputStream(bytes: Array(0..<5))
        let delegate = RecordingDelegate(readLength: 2)
        let modes = loop.sync {
            input.delegate = delegate
            input.schedule(in: RunLoop.current, forMode: .default)
            input.schedule(in: RunLoop.current, forMode: custom)
            input.remove(from: RunLoop.current, forMode: .default)
            input.open()
            return (input.scheduler as? RunLoopScheduler)?.modes
        }
        #expect(modes == [custom])
        // The loop runs only in the custom mode: the events arrive there.
        #expect(delegate.waitUntilEnded())
        loop.sync {}
        #expect(delegate.bytesRead == Array(0..<5))
        #expect(delegate.events == [.openCompleted] + Array(repeating: .hasBytesAvailable, count: 4) + [.endEncountered])
        withExtendedLifetime(delegate) {}
    }

    @Test("A stream keeps the mode alive while scheduled; once it is closed its source leaves and the mode is empty")
    func sourceLeavesAfterClose() throws {
        // A bare thread, no helper source: `run(mode:before:)` returns false once nothing is
        // left in the mode. At most 100 runs of at most 0.1 s each.
        let mode = RunLoop.Mode("RunLoopSchedulingTests.leave")
        let outcome = Locked<(events: [ByteStream.Event], emptied: Bool)>(([], false))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let input = MemoryInputStream(bytes: [1, 2])
            let delegate = ClosingDelegate()
            input.delegate = delegate
            input.schedule(in: RunLoop.current, forMode: mode)
            input.open()
            var emptied = false
            for _ in 0..<100 where !emptied {
                emptied = !RunLoop.current.run(mode: mode, before: Date(timeIntervalSinceNow: 0.1))
            }
            outcome.value = (delegate.events, emptied && input.streamStatus == .closed)
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + waitLimit) == .success)
        #expect(outcome.value.events == [.openCompleted] + Array(repeating: .hasBytesAvailable, count: 3) + [.endEncountered])
        #expect(outcome.value.emptied, "the closed stream's source left the mode")
    }

    @Test("Scheduling on a run loop replaces a dispatch queue; on a queue replaces the run loop")
    func replacesQueue() throws {
        let loop = RunLoopThread()
        defer { #expect(loop.stop()) }
        let queue = DispatchQueue(label: "RunLoopSchedulingTests.queue")
        let input = MemoryInputStream(bytes: [1])
        let kinds = loop.sync {
            input.schedule(on: queue)
            input.schedule(in: RunLoop.current, forMode: .default)
            let first = input.scheduler is RunLoopScheduler
            input.schedule(on: queue)
            input.remove(from: RunLoop.current, forMode: .default)  // not scheduled there: no effect
            return (first, input.scheduler is DispatchQueueScheduler)
        }
        #expect(kinds?.0 == true)
        #expect(kinds?.1 == true)
    }
}

/// Reads one byte per "has bytes available" and closes the stream at its end; used on the
/// run loop's own thread only.
private final class ClosingDelegate: ByteStreamDelegate {
    private(set) var events: [ByteStream.Event] = []

    func stream(_ stream: ByteStream, handle event: ByteStream.Event) {
        events.append(event)
        if event == .hasBytesAvailable, let input = stream as? ByteInputStream {
            var byte: UInt8 = 0
            _ = input.read(&byte, maxLength: 1)
        }
        if event == .endEncountered { stream.close() }
    }
}

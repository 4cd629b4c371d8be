import ByteStreams
import Dispatch
import Foundation
import Testing
import TestSupport

/// Every stream call below runs on the stream's serial queue (inside `queue.sync`), where the
/// delegate is called too, so the stream is used from one queue at a time as documented.
/// `queue.sync {}` then waits for every event posted before it.
@Suite("Delegate events on a dispatch queue", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct DelegateTests {
    private func makeQueue() -> DispatchQueue {
        DispatchQueue(label: "ByteStreamsTests.delegate.\(UUID().uuidString)")
    }

    @Test("A delegate that reads in its handler drives a MemoryInputStream to its end")
    func delegateDrivesInput() throws {
        let queue = makeQueue()
        let content = Array("0123456789".utf8)
        let input = MemoryInputStream(bytes: content)
        let recorder = EventRecorder(readLength: 3)
        queue.sync {
            input.delegate = recorder
            input.schedule(on: queue)
            input.open()
        }
        #expect(recorder.waitUntilFinished(), "endEncountered within the time limit")
        queue.sync {}
        expectSameBytes(recorder.bytesRead, content)
        // open, readiness, then one "has bytes" after each of the reads of 3, 3, 3 and 1 bytes;
        // the next read returns 0 and ends the stream.
        #expect(recorder.events == [.openCompleted] + Array(repeating: .hasBytesAvailable, count: 5) + [.endEncountered])
        #expect(queue.sync { input.streamStatus } == .atEnd)
        withExtendedLifetime(recorder) {}
    }

    @Test("A delegate that reads in its handler drives a FileInputStream to its end")
    func delegateDrivesFile() throws {
        try withTemporaryDirectory { directory throws in
            let queue = makeQueue()
            let content = randomBytes(count: 10_000, seed: 23)
            let input = FileInputStream(path: try makeFile("data", in: directory, bytes: content))
            let recorder = EventRecorder(readLength: 4096)
            queue.sync {
                input.delegate = recorder
                input.schedule(on: queue)
                input.open()
            }
            #expect(recorder.waitUntilFinished())
            queue.sync { input.close() }
            expectSameBytes(recorder.bytesRead, content)
            #expect(recorder.events.first == .openCompleted)
            #expect(recorder.events.last == .endEncountered)
            withExtendedLifetime(recorder) {}
        }
    }

    @Test("Scheduling an open stream tells it at once that it has bytes")
    func scheduleAfterOpen() throws {
        let queue = makeQueue()
        let input = MemoryInputStream(bytes: [1, 2])
        let recorder = EventRecorder()
        queue.sync {
            input.delegate = recorder
            input.open()
            input.schedule(on: queue)
        }
        queue.sync {}
        #expect(recorder.events == [.hasBytesAvailable], "no openCompleted: the stream was not scheduled then")
        queue.sync { _ = readAllByChunks(input, maxLength: 10) }
        #expect(recorder.waitUntilFinished())
        queue.sync {}
        // The read of 2 bytes posted "has bytes available", but the next read met the end before
        // delivery, so only the end is delivered.
        #expect(recorder.events == [.hasBytesAvailable, .endEncountered])
        withExtendedLifetime(recorder) {}
    }

    @Test("An unscheduled stream sends no events, even with a delegate")
    func noEventsWhenUnscheduled() throws {
        let recorder = EventRecorder()
        let input = MemoryInputStream(bytes: [1, 2, 3])
        input.delegate = recorder
        input.open()
        _ = readAllByChunks(input, maxLength: 1)
        input.close()

        let output = MemoryOutputStream()
        output.delegate = recorder
        output.open()
        _ = writeOnce(output, [1])
        output.close()

        let missing = FileInputStream(path: "/nonexistent-\(UUID().uuidString)")
        missing.delegate = recorder
        missing.open()

        #expect(!recorder.waitUntilFinished(timeoutMilliseconds: 200))
        #expect(recorder.events.isEmpty)
        withExtendedLifetime(recorder) {}
    }

    @Test("removeFromSchedule stops the events")
    func removeFromSchedule() throws {
        let queue = makeQueue()
        let input = MemoryInputStream(bytes: [1, 2, 3])
        let recorder = EventRecorder()
        queue.sync {
            input.delegate = recorder
            input.schedule(on: queue)
            input.open()
        }
        queue.sync {}
        #expect(recorder.events == [.openCompleted, .hasBytesAvailable])
        queue.sync {
            input.removeFromSchedule()
            _ = readAllByChunks(input, maxLength: 1)
            input.close()
        }
        queue.sync {}
        #expect(recorder.events == [.openCompleted, .hasBytesAvailable])
        #expect(queue.sync { input.streamStatus } == .closed)
        withExtendedLifetime(recorder) {}
    }

    @Test("Closing drops every event still pending, 'open completed' included: nothing is delivered after close")
    func closeDropsReadiness() throws {
        let queue = makeQueue()
        let input = MemoryInputStream(bytes: [1])
        let recorder = EventRecorder()
        queue.sync {
            input.delegate = recorder
            input.schedule(on: queue)
            input.open()
            input.close()
        }
        queue.sync {}
        #expect(recorder.events == [])
        withExtendedLifetime(recorder) {}
    }

    @Test("A failed open posts errorOccurred")
    func errorEvent() throws {
        let queue = makeQueue()
        let input = FileInputStream(path: "/nonexistent-\(UUID().uuidString)")
        let recorder = EventRecorder()
        queue.sync {
            input.delegate = recorder
            input.schedule(on: queue)
            input.open()
        }
        #expect(recorder.waitUntilFinished())
        queue.sync {}
        #expect(recorder.events == [.errorOccurred])
        withExtendedLifetime(recorder) {}
    }

    @Test("A read error posts errorOccurred once; later failures post nothing")
    func readErrorEvent() throws {
        let queue = makeQueue()
        let input = ProbeInputStream(bytes: [1])
        let recorder = EventRecorder()
        queue.sync {
            input.delegate = recorder
            input.schedule(on: queue)
            input.open()
            input.readError = ByteStreamError(.system(errno: 5), operation: "read")
            _ = readOnce(input, maxLength: 1)
            _ = readOnce(input, maxLength: 1)
        }
        #expect(recorder.waitUntilFinished())
        queue.sync {}
        // The readiness event posted by open is dropped: the stream failed before delivery.
        #expect(recorder.events == [.openCompleted, .errorOccurred])
        withExtendedLifetime(recorder) {}
    }

    @Test("A delegate that writes in its handler fills a fixed MemoryOutputStream, then hears the end")
    func delegateDrivesOutput() throws {
        let queue = makeQueue()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 6)
        defer { buffer.deallocate() }
        let output = MemoryOutputStream(buffer: buffer, capacity: 6)
        let source: [UInt8] = Array(1...10)
        let recorder = EventRecorder(writeLength: 4, source: source)
        queue.sync {
            output.delegate = recorder
            output.schedule(on: queue)
            output.open()
        }
        #expect(recorder.waitUntilFinished())
        queue.sync {}
        // open, readiness; writing 4 leaves space; writing 2 of the next 4 fills the buffer.
        #expect(recorder.events == [.openCompleted, .hasSpaceAvailable, .hasSpaceAvailable, .endEncountered])
        #expect(queue.sync { output.data } == Data(Array(1...6)))
        #expect(queue.sync { output.streamStatus } == .atEnd)
        withExtendedLifetime(recorder) {}
    }

    @Test("The delegate is held weakly")
    func weakDelegate() {
        let input = MemoryInputStream(bytes: [])
        do {
            let recorder = EventRecorder()
            input.delegate = recorder
            #expect(input.delegate != nil)
        }
        #expect(input.delegate == nil)
    }
}

@Suite("Delegate events across rescheduling and close", .onDedicatedThreads, .timeLimit(.minutes(1)))
struct RescheduleEventTests {
    @Test("Rescheduled right after open, every event comes on the new queue, in Cocoa's order")
    func rescheduleAfterOpen() throws {
        let first = DispatchQueue(label: "RescheduleEventTests.first")
        let second = DispatchQueue(label: "RescheduleEventTests.second")
        let content = Array("0123456789".utf8)
        let input = MemoryInputStream(bytes: content)
        let recorder = QueueRecorder(queue: second, readLength: 4)
        first.sync {
            input.delegate = recorder
            input.schedule(on: first)
            input.open()
            second.sync { input.schedule(on: second) }
        }
        #expect(recorder.ended.wait(timeout: .now() + 10) == .success)
        second.sync {}
        #expect(recorder.events == [.openCompleted] + Array(repeating: .hasBytesAvailable, count: 4) + [.endEncountered])
        #expect(recorder.bytesRead == content)
        #expect(recorder.allOnQueue)
        withExtendedLifetime(recorder) {}
    }

    @Test("Read to its end and closed in one handler: the 'end encountered' that read posted is never delivered")
    func nothingAfterCloseInHandler() throws {
        let queue = DispatchQueue(label: "RescheduleEventTests.close")
        let input = MemoryInputStream(bytes: [1, 2, 3])
        let recorder = QueueRecorder(queue: queue, readLength: 1, drainsAndCloses: true)
        queue.sync {
            input.delegate = recorder
            input.schedule(on: queue)
            input.open()
        }
        #expect(recorder.ended.wait(timeout: .now() + 10) == .success)
        queue.sync {}
        queue.sync {}
        #expect(recorder.events == [.openCompleted, .hasBytesAvailable])
        #expect(recorder.bytesRead == [1, 2, 3])
        withExtendedLifetime(recorder) {}
    }
}

/// Records events and whether each came on `queue`; reads `readLength` bytes on each "has
/// bytes available" (or, with `drainsAndCloses`, reads to the end at once and closes).
private final class QueueRecorder: ByteStreamDelegate, @unchecked Sendable {
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()
    private let readLength: Int
    private let drainsAndCloses: Bool
    let ended = DispatchSemaphore(value: 0)
    private(set) var events: [ByteStream.Event] = []
    private(set) var bytesRead: [UInt8] = []
    private(set) var allOnQueue = true

    init(queue: DispatchQueue, readLength: Int, drainsAndCloses: Bool = false) {
        self.queue = queue
        self.readLength = readLength
        self.drainsAndCloses = drainsAndCloses
        queue.setSpecific(key: key, value: true)
    }

    func stream(_ stream: ByteStream, handle event: ByteStream.Event) {
        if DispatchQueue.getSpecific(key: key) != true { allOnQueue = false }
        events.append(event)
        if event == .hasBytesAvailable, let input = stream as? ByteInputStream {
            var buffer = [UInt8](repeating: 0, count: readLength)
            for _ in 0..<(drainsAndCloses ? 1000 : 1) {
                let count = input.read(&buffer, maxLength: readLength)
                guard count > 0 else { break }
                bytesRead += buffer[0..<count]
            }
            if drainsAndCloses {
                input.close()
                ended.signal()
            }
        }
        if event == .endEncountered { ended.signal() }
    }
}

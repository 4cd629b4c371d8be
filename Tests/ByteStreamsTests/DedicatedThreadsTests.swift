import Foundation
import Testing
import TestSupport

// TestSupport's `.onDedicatedThreads`: what every blocking suite relies on to stay off Swift
// concurrency's cooperative pool.

/// Whether this runs on one of the dedicated threads (`Thread.current` cannot be asked from
/// async code).
private func onDedicatedThread() -> Bool {
    DedicatedThreadExecutor.isCurrentThreadDedicated
}

@Suite("TestSupport: .onDedicatedThreads runs tests off the cooperative pool", .onDedicatedThreads)
struct DedicatedThreadsTests {
    @Test("A synchronous test's body runs on a dedicated thread")
    func synchronousBody() {
        #expect(onDedicatedThread())
    }

    @Test("An async test runs on a dedicated thread, again after it suspends, and so do its child tasks")
    func asyncBody() async throws {
        #expect(onDedicatedThread())
        try await Task.sleep(for: .milliseconds(10))
        #expect(onDedicatedThread())
        let children = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 { group.addTask { onDedicatedThread() } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(children == [true, true, true, true])
    }
}

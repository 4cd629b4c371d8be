import Foundation
import Testing

// Tests that block a thread for long (big files, child processes, waitpid, sleeping, socket
// and semaphore waits) run on threads of their own, never on Swift concurrency's cooperative
// pool. That pool has one thread per core: on a 2-core machine two blocking tests hold all of
// it, and every other suite's async tests wait, past their time limits, however idle the
// machine is. Blocking on a dedicated thread costs the other suites nothing but CPU.

/// A task executor that runs each job on a thread outside the cooperative pool: an idle one if
/// there is one, else a new one, so jobs that block waiting for each other can never deadlock
/// for lack of threads. A thread idle for 10 seconds ends.
///
/// How many threads run at once is bounded by how many tests run at once (`make test` sets
/// Swift Testing's parallelization width), not here: a test queued here would spend its time
/// limit waiting.
///
/// Thread safety: `enqueue` may be called from any thread.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor every ``Trait/onDedicatedThreads`` test runs on.
    public static let shared = DedicatedThreadExecutor()

    /// The name of its threads, and the key in each one's `threadDictionary` that marks it.
    public static let threadName = "gzstream-tests-dedicated"

    /// Whether the calling thread is one of this executor's: how a test tells where it runs.
    public static var isCurrentThreadDedicated: Bool {
        Thread.current.threadDictionary[threadName] as? Bool == true
    }

    private let condition = NSCondition()
    /// Jobs not yet taken by a thread, oldest first.
    private var jobs: [UnownedJob] = []
    /// Threads waiting in ``work()`` for a job.
    private var idleThreads = 0

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // Each idle thread takes one job; start a thread for any job beyond them.
        let needsThread = jobs.count > idleThreads
        if !needsThread { condition.signal() }
        condition.unlock()
        if needsThread {
            let thread = Thread { [self] in
                Thread.current.threadDictionary[Self.threadName] = true
                work()
            }
            thread.name = Self.threadName
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// A thread's loop: run jobs until none comes for 10 seconds.
    private func work() {
        condition.lock()
        while true {
            while jobs.isEmpty {
                idleThreads += 1
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: 10))
                idleThreads -= 1
                if !signalled && jobs.isEmpty {
                    condition.unlock()
                    return
                }
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.lock()
        }
    }
}

/// Runs a test, or every test of a suite, with ``DedicatedThreadExecutor`` as its task
/// executor: a synchronous test's whole body, and an async test's code between suspensions,
/// run off the cooperative pool. Child tasks (task groups, `async let`) inherit it;
/// `Task.detached` does not.
public struct DedicatedThreadsTrait: TestTrait, SuiteTrait, TestScoping {
    /// Itself, as Swift Testing's own scoping traits declare it.
    public typealias TestScopeProvider = DedicatedThreadsTrait

    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(DedicatedThreadExecutor.shared) {
            try await function()
        }
    }
}

extension Trait where Self == DedicatedThreadsTrait {
    /// The test (or the suite's tests) blocks threads: run it off the cooperative pool.
    public static var onDedicatedThreads: Self { DedicatedThreadsTrait() }
}

/// Runs `body` on a thread of its own and waits for it without holding one of Swift
/// concurrency's threads: for a blocking stretch inside a test that otherwise runs on the pool.
public func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Swift.Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

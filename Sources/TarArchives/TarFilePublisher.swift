import Dispatch
import Synchronization
import ByteStreams

/// The last steps of a regular file the extractor wrote: owner, mode and time set through its
/// descriptor, the descriptor closed, the temporary name renamed onto the member's name; run
/// inline, or on a second thread (one serial queue, at most `depth` files waiting) so that the
/// next member's content is written meanwhile.
///
/// Ownership: each ``Job``'s file descriptor is the publisher's from ``finish(_:)`` or
/// ``submit(_:)`` on (closed there, on success and on error); the directory descriptor stays
/// the extractor's, which keeps it open until the job is collected. Blocking: ``submit(_:)``
/// waits while `depth` jobs are unfinished; ``drain()`` waits for all. Thread safety: one
/// extracting thread calls ``submit(_:)``, ``collect()`` and ``drain()``; the jobs run on the
/// publisher's queue.
final class TarFilePublisher: Sendable {
    /// One finished file waiting to be published, with everything decided on the extracting
    /// thread beforehand.
    struct Job: Sendable {
        var descriptor: Int32
        var temporaryName: Pathname
        var name: Pathname
        var directory: Int32
        /// The file created (device and inode), to check the temporary name before removing it.
        var created: FileInfo
        var entry: TarEntry
        var key: [UInt8]
        var owner: (owner: UInt32, group: UInt32)?
        var permissions: UInt32
        var modificationTime: FileInfo.Timestamp
        /// Whether this extraction made the name before (a duplicate member): replaced without
        /// a check.
        var replacesOwnName: Bool
        /// Whether a name that was there before may be replaced (`overwritesExisting`).
        var overwritesExisting: Bool
        var shown: String
    }

    /// A job run, and its error (`nil`: published).
    struct Finished: Sendable {
        var job: Job
        var error: (any Error)?
    }

    private let queue = DispatchQueue(label: "TarFilePublisher")
    private let waiting: DispatchSemaphore
    private let finished = Mutex<[Finished]>([])

    /// A publisher running at most `depth` jobs ahead of the extracting thread.
    init(depth: Int) {
        waiting = DispatchSemaphore(value: depth)
    }

    /// Hands `job` to the queue; waits first while `depth` jobs are unfinished.
    func submit(_ job: Job) {
        waiting.wait()
        queue.async { [self] in
            var error: (any Error)?
            do { try Self.finish(job) } catch let failure { error = failure }
            finished.withLock { $0.append(Finished(job: job, error: error)) }
            waiting.signal()
        }
    }

    /// The jobs finished since the last call, in the order submitted; does not wait.
    func collect() -> [Finished] {
        finished.withLock { list in
            defer { list = [] }
            return list
        }
    }

    /// Waits for every job submitted, then returns those not collected yet.
    func drain() -> [Finished] {
        queue.sync {}
        return collect()
    }

    /// Sets the file's owner (first: `chown` clears set-user-ID), mode and time, closes it and
    /// renames it onto its name: over a name this extraction made, else with
    /// `RENAME_NOREPLACE` first and over what is found only when `overwritesExisting`. On any
    /// error the descriptor is closed and the temporary name removed while it is still the file
    /// created (another user who can write the directory may have put something else there).
    /// - Throws: ``ExtractionError/Reason/exists``, or `ByteStreamError` of the calls.
    static func finish(_ job: Job) throws {
        var isOpen = true
        do {
            if let ids = job.owner {
                try SystemCalls.changeOwner(of: job.descriptor, owner: ids.owner, group: ids.group, target: job.shown)
            }
            try SystemCalls.changeMode(of: job.descriptor, to: .init(job.permissions), target: job.shown)
            try SystemCalls.setTimes(of: job.descriptor, access: nil, modification: job.modificationTime, target: job.shown)
            isOpen = false
            try SystemCalls.close(job.descriptor, target: job.shown)
            if !job.replacesOwnName {
                let published = try SystemCalls.renameWithoutReplacing(job.temporaryName, in: job.directory, to: job.name,
                                                                       in: job.directory, target: job.shown)
                if published == true { return }
                let taken = try published == false
                    || SystemCalls.info(of: job.name, in: job.directory, target: job.shown) != nil
                if taken && !job.overwritesExisting { throw ExtractionError(.exists, job.entry) }
            }
            try SystemCalls.rename(job.temporaryName, in: job.directory, to: job.name, in: job.directory, target: job.shown)
        } catch {
            if isOpen { try? SystemCalls.close(job.descriptor, target: job.shown) }
            if let found = try? SystemCalls.info(of: job.temporaryName, in: job.directory), found.isSameFile(as: job.created) {
                _ = try? SystemCalls.unlink(job.temporaryName, in: job.directory)
            }
            throw error
        }
    }
}

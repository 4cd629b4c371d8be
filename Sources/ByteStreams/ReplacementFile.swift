#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written under a temporary name beside the path it is meant for, and renamed onto
/// that path only once it is complete: until ``publish()`` the path keeps what it held (or
/// stays absent), and a file abandoned is removed. For library helpers that must never leave
/// half a file under its final name.
///
/// A name is looked up once: the directory that holds the path is opened once (symbolic links
/// on the way followed, as a lookup by the path would), the temporary file is created relative
/// to that descriptor with `O_CREAT | O_EXCL | O_NOFOLLOW` (mode 0666 less the umask, as
/// ``FileOutputStream`` creates a file), renamed onto the final name relative to it (a symbolic
/// link there is replaced, not followed), and removed relative to it only while its name still
/// refers to the file created (device and inode), so that another user who can write the
/// directory cannot have another file removed.
///
/// Ownership: the directory descriptor belongs to this object; the file's descriptor belongs to
/// the stream ``makeStream()`` returns. Thread safety: none; one thread uses it.
/// The corresponding C functions are `openat(2)`, `fstat(2)`, `renameat(2)` and `unlinkat(2)`.
package final class ReplacementFile {
    /// The path the file is meant for, as given (for messages).
    package let path: Pathname
    private let directory: Int32
    private let finalName: Pathname
    /// The temporary name in the directory: `.gzstream-` and six random letters or digits.
    package let temporaryName: Pathname
    private var descriptor: Int32
    /// What the file created was (device and inode), to recognise it by its name later.
    private let created: FileInfo?
    /// Set once the file was renamed into place or removed: nothing is left to clean up.
    private var settled = false

    /// Creates the temporary file beside `path`.
    /// - Throws: ``ByteStreamError`` naming `path`: `EISDIR` for a path that ends in `/`,
    ///   `ENOENT` for an empty one, else the error of opening the directory or creating the file.
    package init(for path: Pathname) throws {
        self.path = path
        let (directoryPath, name, trailingSlash) = path.lookupParts
        guard !path.isEmpty, !trailingSlash else {
            throw ByteStreamError(.system(errno: path.isEmpty ? ENOENT : EISDIR), operation: "create",
                                  target: path.description)
        }
        finalName = name
        directory = try SystemCalls.open(directoryPath, in: SystemCalls.currentDirectory,
                                         flags: SystemCalls.lookupDirectoryFlags, target: path.description)
        do {
            (descriptor, temporaryName) = try SystemCalls.createUniqueFile(in: directory, mode: 0o666, target: path.description)
        } catch {
            try? SystemCalls.close(directory, target: path.description)
            throw error
        }
        // A descriptor just opened cannot fail fstat; were it to, the name would only never
        // be removed.
        self.created = try? SystemCalls.info(of: descriptor, target: path.description)
    }

    deinit {
        discard()
        if descriptor >= 0 { try? SystemCalls.close(descriptor, target: path.description) }
        try? SystemCalls.close(directory, target: path.description)
    }

    /// A stream that writes the temporary file and owns its descriptor (closed by the stream's
    /// ``ByteStream/close()``, whose `close(2)` error it reports); errors name ``path``. Call once.
    package func makeStream() -> FileOutputStream {
        precondition(descriptor >= 0, "makeStream() called twice")
        let stream = FileOutputStream(fileDescriptor: descriptor, closesDescriptor: true, displayName: path.description)
        descriptor = -1
        return stream
    }

    /// Renames the file onto the final name, replacing what is there (a file, or a symbolic
    /// link itself). Call after the stream closed without error.
    /// - Throws: ``ByteStreamError`` (`ENOENT`) when the temporary name no longer refers to the
    ///   file created (another user replaced or removed it), or `renameat(2)`'s error (the final
    ///   name is a directory: `EISDIR`); the file is removed then.
    package func publish() throws {
        precondition(!settled, "publish() after publish() or discard()")
        guard isStillNamed() else {
            settled = true
            throw ByteStreamError(.system(errno: ENOENT), operation: "rename", target: path.description)
        }
        do {
            try SystemCalls.rename(temporaryName, in: directory, to: finalName, in: directory, target: path.description)
        } catch {
            discard()
            throw error
        }
        settled = true
    }

    /// Removes the file unless it was published, and only while its name refers to the file
    /// created. Safe to call more than once.
    package func discard() {
        guard !settled else { return }
        settled = true
        if isStillNamed() { _ = try? SystemCalls.unlink(temporaryName, in: directory) }
    }

    /// Whether the temporary name is still the file created (a link there is not followed).
    private func isStillNamed() -> Bool {
        guard let created, let info = try? SystemCalls.info(of: temporaryName, in: directory, followsLinks: false) else {
            return false
        }
        return info.isSameFile(as: created)
    }
}

extension SystemCalls {
    /// Creates a new file named `.gzstream-` and six random letters or digits in `directory`,
    /// open for writing, never following a link and never opening an existing file: another
    /// name is drawn when one exists (at most 100 times). The name has a fixed length, so that
    /// a final name of up to `NAME_MAX` bytes still fits beside it.
    /// - Parameters:
    ///   - directory: The directory's descriptor (or ``currentDirectory``).
    ///   - mode: The new file's permission bits, less the umask.
    ///   - target: The name errors give; default the temporary name.
    /// - Returns: The descriptor (owned by the caller) and the name.
    /// - Throws: ``ByteStreamError`` with `openat`'s `errno`.
    /// The corresponding C function is `openat(2)` with `O_CREAT | O_EXCL | O_NOFOLLOW`.
    package static func createUniqueFile(in directory: Int32, mode: mode_t,
                                         target: String? = nil) throws -> (descriptor: Int32, name: Pathname) {
        var generator = SystemRandomNumberGenerator()
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var attempts = 0
        while true {
            // Six letters from one random draw (62^6 < 2^36): one getrandom(2) per name.
            var bits = generator.next() as UInt64
            let suffix = (0..<6).map { _ in
                defer { bits /= UInt64(letters.count) }
                return letters[Int(bits % UInt64(letters.count))]
            }
            let name = Pathname(bytes: Array(".gzstream-".utf8) + suffix)!
            do {
                let flags = OpenFlag.writeOnly | OpenFlag.create | OpenFlag.exclusive | OpenFlag.noFollow
                return (try open(name, in: directory, flags: flags, mode: mode, target: target), name)
            } catch {
                guard (error as? ByteStreamError)?.errno == Errno.fileExists, attempts < 100 else { throw error }
                attempts += 1
            }
        }
    }
}

import ByteStreams

// Gzip files by path: initialisers that open the file themselves, and scoped helpers that
// always close what they open and never leave a half-written file under its final name.

extension GzipInputStream {
    /// A stream that inflates the gzip file at `path`, which it opens read-only on
    /// ``ByteStream/open()`` (following symbolic links, as ``FileInputStream`` does) and closes
    /// on ``ByteStream/close()``; the other parameters are those of
    /// ``init(wrapping:chunkSize:trailingGarbage:maximumOutputSize:inflater:closesInnerStream:indexRecorder:trailerChecks:)``.
    /// A missing or unreadable file puts the stream in `.error` when it opens, with a
    /// ``ByteStreamError`` carrying `errno` (``ByteStream/openOrThrow()`` throws it).
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   `chunkSize` or `maximumOutputSize` out of range; nothing is opened then.
    public convenience init(path: Pathname, chunkSize: Int = ByteStream.defaultChunkSize,
                            trailingGarbage: TrailingGarbagePolicy = .fail, maximumOutputSize: Int? = nil,
                            inflater: Inflater = .isal) throws(ByteStreamError) {
        try self.init(wrapping: FileInputStream(path: path), chunkSize: chunkSize, trailingGarbage: trailingGarbage,
                      maximumOutputSize: maximumOutputSize, inflater: inflater)
    }

    /// A stream that inflates the gzip file at `path` (its UTF-8 bytes); see
    /// ``init(path:chunkSize:trailingGarbage:maximumOutputSize:inflater:)-(Pathname,_,_,_,_)``.
    public convenience init(path: String, chunkSize: Int = ByteStream.defaultChunkSize,
                            trailingGarbage: TrailingGarbagePolicy = .fail, maximumOutputSize: Int? = nil,
                            inflater: Inflater = .isal) throws(ByteStreamError) {
        try self.init(path: Pathname(path), chunkSize: chunkSize, trailingGarbage: trailingGarbage,
                      maximumOutputSize: maximumOutputSize, inflater: inflater)
    }

    /// Opens the gzip file at `path`, calls `body` with the open stream, and closes it, however
    /// `body` ends.
    ///
    /// - Parameters:
    ///   - path: The gzip file, opened read-only (symbolic links followed).
    ///   - body: Reads the stream; it must not keep the stream after it returns.
    /// - Returns: What `body` returns.
    /// - Throws: The error of opening the file (a ``ByteStreamError`` with `errno`); what `body`
    ///   throws (the stream is closed first); else, at the close, the stream's first error:
    ///   a read that failed (returned `-1`) is thrown here even if `body` ignored it, so a
    ///   damaged file cannot pass for a short one (a ``GzipError`` names what and at which byte).
    ///
    /// Blocks while the file opens and while `body` runs. The stream is used on the calling
    /// thread only.
    public static func withFile<Result>(at path: Pathname, _ body: (GzipInputStream) throws -> Result) throws -> Result {
        let stream = try GzipInputStream(path: path)
        try stream.openOrThrow()
        return try stream.closeAfter(Swift.Result { try body(stream) })
    }

    /// ``withFile(at:_:)-(Pathname,_)`` for a path given as a `String` (its UTF-8 bytes).
    public static func withFile<Result>(at path: String, _ body: (GzipInputStream) throws -> Result) throws -> Result {
        try withFile(at: Pathname(path), body)
    }

    /// ``withFile(at:_:)-(Pathname,_)`` with an asynchronous `body`, for
    /// `for try await` over the stream's chunks or lines. `body` runs in the caller's isolation
    /// (`isolation`), so the stream never crosses to another task. Blocking reads block the
    /// task's thread, as iterating the stream does elsewhere.
    public static func withFile<Result>(at path: Pathname, isolation: isolated (any Actor)? = #isolation,
                                        _ body: (GzipInputStream) async throws -> Result) async throws -> Result {
        let stream = try GzipInputStream(path: path)
        try stream.openOrThrow()
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body(stream))
        } catch {
            outcome = .failure(error)
        }
        return try stream.closeAfter(outcome)
    }

    /// Closes the stream after a body's `outcome`: its error first, else the stream's.
    private func closeAfter<Result>(_ outcome: Swift.Result<Result, any Error>) throws -> Result {
        close()
        let value = try outcome.get()
        try throwIfFailed()
        return value
    }

    /// The asynchronous ``withFile(at:_:)-(Pathname,_)`` for a path given as a `String`.
    public static func withFile<Result>(at path: String, isolation: isolated (any Actor)? = #isolation,
                                        _ body: (GzipInputStream) async throws -> Result) async throws -> Result {
        try await withFile(at: Pathname(path), body)
    }
}

extension GzipOutputStream {
    /// A stream that deflates into the file at `path`, which ``ByteStream/open()`` creates or
    /// truncates (mode 0666 less the umask; a symbolic link is followed), exactly as
    /// ``FileOutputStream/init(path:append:)-(Pathname,_)`` does, and ``ByteStream/close()``
    /// closes after the trailer. The other parameters are those of
    /// ``init(wrapping:level:header:chunkSize:threads:blockSize:engine:rsyncable:buildsIndex:closesInnerStream:)``.
    ///
    /// Until the stream closes without error the file is not a complete gzip file, and an
    /// existing file's old contents are gone from the open on: for a file that is either whole
    /// or not replaced at all, use ``withFile(at:level:header:threads:_:)-(Pathname,_,_,_,_)``.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` naming the
    ///   first value out of range; nothing is opened then.
    public convenience init(path: Pathname, level: Int = GzipOutputStream.defaultLevel,
                            header: GzipHeader = GzipHeader(), chunkSize: Int = ByteStream.defaultChunkSize,
                            threads: Int = 1, blockSize: Int? = nil, engine: DeflateEngine? = nil,
                            rsyncable: Bool = false, buildsIndex: Bool = false) throws(ByteStreamError) {
        try self.init(wrapping: FileOutputStream(path: path), level: level, header: header, chunkSize: chunkSize,
                      threads: threads, blockSize: blockSize, engine: engine, rsyncable: rsyncable,
                      buildsIndex: buildsIndex)
    }

    /// A stream that deflates into the file at `path` (its UTF-8 bytes); see
    /// ``init(path:level:header:chunkSize:threads:blockSize:engine:rsyncable:buildsIndex:)-(Pathname,_,_,_,_,_,_,_,_)``.
    public convenience init(path: String, level: Int = GzipOutputStream.defaultLevel,
                            header: GzipHeader = GzipHeader(), chunkSize: Int = ByteStream.defaultChunkSize,
                            threads: Int = 1, blockSize: Int? = nil, engine: DeflateEngine? = nil,
                            rsyncable: Bool = false, buildsIndex: Bool = false) throws(ByteStreamError) {
        try self.init(path: Pathname(path), level: level, header: header, chunkSize: chunkSize, threads: threads,
                      blockSize: blockSize, engine: engine, rsyncable: rsyncable, buildsIndex: buildsIndex)
    }

    /// Writes the gzip file at `path` through `body`: either the whole member (header, data,
    /// trailer) is there when this returns, or nothing changed at `path`.
    ///
    /// The member goes to a new file beside `path` (`.gzstream-` and six random characters,
    /// created with `O_CREAT | O_EXCL | O_NOFOLLOW` in the directory opened once, mode 0666
    /// less the umask); once `body` has returned and the stream has closed without error (the
    /// trailer written, the file's `close(2)` clean), the file is renamed onto `path`
    /// (`renameat(2)`), replacing a file there, or a symbolic link itself (not what it points
    /// to); the replaced file's permissions and other names (hard links) are not carried over.
    /// When `body` throws, the member is abandoned (no trailer) and the file removed; so it is
    /// when closing or renaming fails, and when `body` abandons the stream itself
    /// (``abandon()``, for input that failed) and returns. A process killed while `body` runs
    /// leaves the `.gzstream-` file behind.
    ///
    /// - Parameters:
    ///   - path: Where the gzip file goes; its directory must exist and be writable.
    ///   - level: Compression level, `0...12` (10 to 12 deflate in chunks with libdeflate, as
    ///     the stream's initializer says); default 6.
    ///   - header: The member's header fields; default: no name, MTIME 0, OS 3 (Unix).
    ///   - threads: Deflating threads, `1...256`; default 1 (see
    ///     ``init(wrapping:level:header:chunkSize:threads:blockSize:engine:rsyncable:buildsIndex:closesInnerStream:)``).
    ///   - body: Writes the plain bytes; it must not keep or close the stream. If it abandons
    ///     it, nothing is written and this throws.
    /// - Returns: What `body` returns.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` for a
    ///   value out of range, or (named `body`) when `body` abandoned the stream; a ``ByteStreamError`` with `errno` when the directory cannot be
    ///   opened or the file created (`EISDIR` for a path ending in `/`); what `body` throws;
    ///   the error of finishing the member or closing the file (a full disk); `renameat(2)`'s
    ///   error (`EISDIR` when `path` is a directory).
    ///
    /// Blocks while `body` runs and while the trailer is written. The stream is used on the
    /// calling thread only. The corresponding C functions are `openat(2)`, `renameat(2)` and
    /// `unlinkat(2)`.
    public static func withFile<Result>(at path: Pathname, level: Int = GzipOutputStream.defaultLevel,
                                        header: GzipHeader = GzipHeader(), threads: Int = 1,
                                        _ body: (GzipOutputStream) throws -> Result) throws -> Result {
        try withReplacementFile(at: path, makeStream: { file throws(ByteStreamError) in
            try GzipOutputStream(wrapping: file, level: level, header: header, threads: threads)
        }, body)
    }

    /// ``withFile(at:level:header:threads:_:)-(Pathname,_,_,_,_)`` with the stream that
    /// `makeStream` makes over the temporary file (a test puts a failing stream between).
    static func withReplacementFile<Result>(at path: Pathname,
                                            makeStream: (FileOutputStream) throws(ByteStreamError) -> GzipOutputStream,
                                            _ body: (GzipOutputStream) throws -> Result) throws -> Result {
        let (file, stream) = try startFile(at: path, makeStream: makeStream)
        return try finishFile(file, stream, outcome: Swift.Result { try body(stream) })
    }

    /// ``withFile(at:level:header:threads:_:)-(Pathname,_,_,_,_)`` for a path given as a
    /// `String` (its UTF-8 bytes).
    public static func withFile<Result>(at path: String, level: Int = GzipOutputStream.defaultLevel,
                                        header: GzipHeader = GzipHeader(), threads: Int = 1,
                                        _ body: (GzipOutputStream) throws -> Result) throws -> Result {
        try withFile(at: Pathname(path), level: level, header: header, threads: threads, body)
    }

    /// ``withFile(at:level:header:threads:_:)-(Pathname,_,_,_,_)`` with an asynchronous `body`.
    /// `body` runs in the caller's isolation (`isolation`), so the stream never crosses to
    /// another task; its writes block the task's thread.
    public static func withFile<Result>(at path: Pathname, level: Int = GzipOutputStream.defaultLevel,
                                        header: GzipHeader = GzipHeader(), threads: Int = 1,
                                        isolation: isolated (any Actor)? = #isolation,
                                        _ body: (GzipOutputStream) async throws -> Result) async throws -> Result {
        let (file, stream) = try startFile(at: path, makeStream: { file throws(ByteStreamError) in
            try GzipOutputStream(wrapping: file, level: level, header: header, threads: threads)
        })
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body(stream))
        } catch {
            outcome = .failure(error)
        }
        return try finishFile(file, stream, outcome: outcome)
    }

    /// The asynchronous ``withFile(at:level:header:threads:_:)-(Pathname,_,_,_,_)`` for a
    /// path given as a `String`.
    public static func withFile<Result>(at path: String, level: Int = GzipOutputStream.defaultLevel,
                                        header: GzipHeader = GzipHeader(), threads: Int = 1,
                                        isolation: isolated (any Actor)? = #isolation,
                                        _ body: (GzipOutputStream) async throws -> Result) async throws -> Result {
        try await withFile(at: Pathname(path), level: level, header: header, threads: threads, body)
    }

    /// The temporary file beside `path` and an open stream into it (header written). A
    /// failure removes the file (it is released).
    private static func startFile(at path: Pathname,
                                  makeStream: (FileOutputStream) throws(ByteStreamError) -> GzipOutputStream)
        throws -> (ReplacementFile, GzipOutputStream) {
        let file = try ReplacementFile(for: path)
        let stream = try makeStream(file.makeStream())
        do {
            try stream.openOrThrow()
        } catch {
            stream.close()
            file.discard()
            throw error
        }
        return (file, stream)
    }

    /// After the body: when it threw, abandons `stream` (no trailer), removes `file` and
    /// throws its error; else closes `stream` (the trailer, then the file's `close(2)`) and
    /// renames `file` into place, any failure removing the file and being thrown.
    private static func finishFile<Result>(_ file: ReplacementFile, _ stream: GzipOutputStream,
                                           outcome: Swift.Result<Result, any Error>) throws -> Result {
        do {
            let value = try outcome.get()
            try stream.closeOrThrow()
            // A body that abandoned the stream returned normally, but its member has no
            // trailer: the file is not published (the old one stays).
            if stream.abandoned {
                throw ByteStreamError(.invalidArgument(name: "body", message: "abandoned the stream, so nothing was written"),
                                      operation: "write gzip file")
            }
            try file.publish()
            return value
        } catch {
            stream.abandon()
            file.discard()
            throw error
        }
    }

    // MARK: A stream dropped open

    /// In debug builds, called by `deinit`: a stream dropped while open (its header written,
    /// no trailer) left output that is not a gzip file, and nothing reported it. One line to
    /// standard error says so; nothing else changes (an assertion would stop programs and
    /// tests that drop a stream on purpose after a failure elsewhere).
    func warnIfDroppedOpen() {
        guard streamStatus == .open || streamStatus == .writing else { return }
        let message = "GzipStreams: warning: a GzipOutputStream was deinitialized without close() after "
            + "\(uncompressedByteCount) plain bytes: its output has no trailer and is not a valid gzip file "
            + "(call closeOrThrow(), or use GzipOutputStream.withFile(at:))\n"
        droppedOutputWarningSink.withLock { $0 }(message)
    }
}

/// Where ``GzipOutputStream/warnIfDroppedOpen()`` writes: standard error; a test puts a
/// collector here.
package let droppedOutputWarningSink = QueueGuarded<@Sendable (String) -> Void>({ message in
    // One write(2) of the line: short enough that the pipe or terminal takes it whole.
    let bytes = Array(message.utf8)
    _ = try? SystemCalls.write(SystemCalls.standardErrorDescriptor, bytes, bytes.count, target: "standard error")
}, label: "gzstream.dropped-output-warning")

extension BGZFInputStream {
    /// A stream that inflates the BGZF (or any gzip) file at `path`, which it opens read-only on
    /// ``ByteStream/open()`` (following symbolic links) and closes on ``ByteStream/close()``;
    /// the other parameters are those of
    /// ``init(wrapping:threads:chunkSize:trailingGarbage:maximumOutputSize:start:inflater:closesInnerStream:)``.
    /// For reads from an offset through the file's `.gzi`, see ``IndexedBGZFInputStream``.
    /// - Throws: ``ByteStreamError/Code-swift.enum/invalidArgument(name:message:)`` naming the
    ///   first value out of range; nothing is opened then.
    public convenience init(path: Pathname, threads: Int = BGZFInputStream.defaultThreadCount,
                            chunkSize: Int = ByteStream.defaultChunkSize,
                            trailingGarbage: GzipInputStream.TrailingGarbagePolicy = .fail,
                            maximumOutputSize: Int? = nil, inflater: GzipInputStream.Inflater = .isal) throws(ByteStreamError) {
        try self.init(wrapping: FileInputStream(path: path), threads: threads, chunkSize: chunkSize,
                      trailingGarbage: trailingGarbage, maximumOutputSize: maximumOutputSize, inflater: inflater)
    }
}

extension IndexedGzipInputStream {
    /// A stream over the gzip file at `path` and its GZIDX index, read now from `indexPath`
    /// (default: `path` with `.gzidx` added, where `gzstream index` puts it; the index's
    /// windows stay in its file and are read when needed, through a descriptor the index
    /// keeps). The gzip file itself is opened by ``ByteStream/open()``. Both are opened
    /// read-only, symbolic links followed. The other parameters are those of
    /// ``init(wrapping:index:threads:inflater:chunkSize:trailingGarbage:maximumOutputSize:closesInnerStream:)``.
    /// gztool's index format is not read here (``GzipIndex/init(gztool:compressedSize:)`` reads it).
    /// - Throws: The error of opening the index (a ``ByteStreamError`` with `errno`),
    ///   ``GzipIndexError`` for a file that is not a valid GZIDX index, or an argument out of
    ///   range. Blocks while the index's header and point table are read.
    public convenience init(path: Pathname, indexPath: Pathname? = nil, threads: Int = BGZFInputStream.defaultThreadCount,
                            inflater: GzipInputStream.Inflater = .isal) throws {
        let indexPath = indexPath ?? path.appending(".gzidx")
        let indexFile = FileInputStream(path: indexPath)
        try indexFile.openOrThrow()
        defer { indexFile.close() }
        let index = try GzipIndex(gzidxFile: indexFile.fileDescriptor, path: indexPath.description)
        try self.init(wrapping: FileInputStream(path: path), index: index, threads: threads, inflater: inflater)
    }

    /// A stream over the gzip file at `path` (its UTF-8 bytes) and its GZIDX index; see
    /// ``init(path:indexPath:threads:inflater:)-(Pathname,_,_,_)``.
    public convenience init(path: String, indexPath: String? = nil, threads: Int = BGZFInputStream.defaultThreadCount,
                            inflater: GzipInputStream.Inflater = .isal) throws {
        try self.init(path: Pathname(path), indexPath: indexPath.map { Pathname($0) }, threads: threads, inflater: inflater)
    }
}

import ByteStreams
import GzipStreams
import TarArchives
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `gzstream list --members F.tar.gz [PATTERN...]`: the members of a tar archive (gzip-compressed
// or not), one name a line as `tar -t` prints them, with -v in GNU tar's `tar -tv` form, or with
// --json one array of objects. From the member index beside the archive when there is one it
// may trust (TarIndexing.swift), else from one pass over the archive, with a hint to index it.

extension Command {
    /// Lists the members of the archive `common.files[0]` that the other operands choose (all
    /// without them).
    /// - Returns: `.success`; `.error` when the archive cannot be read or is damaged (said in one
    ///   line, after the members before the damage), or a pattern chose nothing (said per pattern).
    func listTarMembers(_ list: ListOptions) -> ExitStatus {
        let operand = common.files[0]
        let patterns = common.files.dropFirst().map(TarMemberPattern.init)
        let output = TarListingOutput(environment.standardOutput, json: list.json, verbose: common.verbose)
        var status = ExitStatus.success
        do {
            let opened = try openOperand(operand)
            currentInput = opened
            defer {
                currentInput = nil
                opened.close()
            }
            if opened.info.isDirectory {
                throw Reported(status: reportError(operand.description, "is a directory, not a tar archive"))
            }
            if let index = trustedMemberIndex()?.members {
                for entry in index.entries where patterns.isEmpty || patterns.contains(where: { $0.matches(entry.path) }) {
                    output.add(entry)
                    for pattern in patterns where pattern.matches(entry.path) { pattern.found = true }
                }
            } else {
                let file = try opened.stream()
                defer { file.close() }
                let start = try PeekingInputStream(peeking: file, length: 10)
                let plain: ByteInputStream = start.peekedBytes.isGzip
                    ? try GzipInputStream(wrapping: start, chunkSize: 64 << 10, maximumOutputSize: list.decode.maximumOutputSize,
                                          inflater: inflaterChoice, closesInnerStream: false)
                    : start
                defer { plain.close() }
                let reader = TarReader(plain)
                // The first header is read before the hint: data that is not a tar is one line.
                var pending = try reader.next()
                // Only gzip data has indexes: a plain tar gets no hint.
                if opened.info.isRegularFile && options.gzip == nil && start.peekedBytes.isGzip {
                    diagnostics.warning(operand.description, "no member index: read whole; `\(indexCommand(for: operand))` "
                        + "makes listing it instant")
                }
                while let member = try pending ?? reader.next() {
                    pending = nil
                    let entry = member.entry
                    guard patterns.isEmpty || patterns.contains(where: { $0.matches(entry.path) }) else { continue }
                    output.add(entry)
                    for pattern in patterns where pattern.matches(entry.path) { pattern.found = true }
                    if output.writeError != nil { break }
                }
                if output.writeError == nil, let gzip = plain as? GzipInputStream {
                    status = max(status, try readToGzipEnd(gzip, archiveName: operand.description))
                }
            }
        } catch let reported as Reported {
            status = reported.status
        } catch {
            status = reportError(operand.description, describe(error))
        }
        output.finish()
        if let error = output.writeError {
            if isSystemError(error, Errno.brokenPipe) {
                closedPipe = "standard output"
            } else {
                diagnostics.error("standard output", describe(error))
            }
            return .error
        }
        if status == .success {
            for pattern in patterns where !pattern.found {
                diagnostics.error(operand.description, "\(Pathname(bytes: pattern.bytes)?.description ?? ""): not found in the archive")
                status = .error
            }
        }
        return status
    }
}

/// A member pattern given after the archive, matched as GNU tar matches member names (its
/// default `--anchored --wildcards-match-slash --recursion`): with `*`, `?` or `[`, a shell
/// pattern matched by `fnmatch(3)` without `FNM_PATHNAME` (a `*` also matches `/`) against the
/// whole path or against a leading part of it that ends before a `/` (`d?r` chooses `dir/` and
/// `dir/x`); otherwise a path that chooses itself and, as a directory, everything under it
/// (`dir` and `dir/` choose `dir/` and `dir/x`). Trailing `/` are removed from the pattern and
/// from the member's path before matching, as tar does: `dir/*` chooses what `dir/` holds, not
/// `dir/` itself.
final class TarMemberPattern {
    let bytes: [UInt8]
    private let isGlob: Bool
    /// The pattern without its trailing `/` (one is kept when it is nothing else), NUL-terminated.
    private let cPattern: [CChar]
    /// Whether it chose a member.
    var found = false

    init(_ pathname: Pathname) {
        bytes = pathname.bytes
        isGlob = bytes.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[") }
        cPattern = Self.withoutTrailingSlashes(bytes).map { CChar(bitPattern: $0) } + [0]
    }

    /// Whether the member `path` is chosen. The corresponding C function is `fnmatch(3)`.
    func matches(_ path: [UInt8]) -> Bool {
        let path = Self.withoutTrailingSlashes(path)
        if isGlob {
            // The whole path, then each leading part that ends before a `/` (GNU's
            // FNM_LEADING_DIR, spelled out: not every C library has it).
            var cPath = path.map { CChar(bitPattern: $0) } + [0]
            if fnmatch(cPattern, cPath, 0) == 0 { return true }
            for index in path.indices.reversed() where index > 0 && path[index] == UInt8(ascii: "/") {
                cPath[index] = 0
                if fnmatch(cPattern, cPath, 0) == 0 { return true }
            }
            return false
        }
        let directory = Self.withoutTrailingSlashes(bytes)
        if path == directory { return true }
        return path.count > directory.count && path.starts(with: directory) && path[directory.count] == UInt8(ascii: "/")
    }

    /// `path` without its trailing `/`, but `/` itself kept.
    private static func withoutTrailingSlashes(_ path: [UInt8]) -> [UInt8] {
        var path = path
        while path.count > 1, path.last == UInt8(ascii: "/") { path.removeLast() }
        return path
    }
}

/// Standard output for a member listing, gathered in 64 KiB before each write (tens of thousands
/// of short lines), until the first failure, which is kept.
final class TarListingOutput {
    private let stream: ByteOutputStream
    private let json: Bool
    private let verbose: Bool
    private var buffer: [UInt8] = []
    private var count = 0
    /// GNU tar's width of `owner/group size`, which grows to the widest seen (its `ugswidth`).
    private var ownerSizeWidth = 19
    private(set) var writeError: (any Error)?

    init(_ stream: ByteOutputStream, json: Bool, verbose: Bool) {
        self.stream = stream
        self.json = json
        self.verbose = verbose
        buffer.reserveCapacity(80 << 10)
        if json { buffer += Array("[".utf8) }
    }

    /// Adds one member's line or object.
    func add(_ entry: TarEntry) {
        if json {
            buffer += Array(((count == 0 ? "\n" : ",\n") + TarMemberFormat.json(entry)).utf8)
        } else if verbose {
            buffer += Array(TarMemberFormat.long(entry, ownerSizeWidth: &ownerSizeWidth).utf8)
            buffer.append(UInt8(ascii: "\n"))
        } else {
            buffer += TarMemberFormat.quotedName(entry.path)
            buffer.append(UInt8(ascii: "\n"))
        }
        count += 1
        if buffer.count >= 64 << 10 { flush() }
    }

    /// Ends the JSON array, and writes what is left.
    func finish() {
        if json { buffer += Array((count == 0 ? "]\n" : "\n]\n").utf8) }
        flush()
    }

    private func flush() {
        guard writeError == nil, !buffer.isEmpty else {
            buffer.removeAll(keepingCapacity: true)
            return
        }
        do {
            try stream.writeAll(buffer)
        } catch {
            writeError = error
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

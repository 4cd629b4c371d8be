import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which inputs are taken, and the names outputs get.
extension Command {
    func inputInfo(_ path: Pathname) throws -> FileInfo {
        func refuse(_ problem: String) -> Reported {
            Reported(status: reportError(path.description, problem), problem: problem)
        }
        guard let info = FileInfo(path: path) else { throw refuse(String(cString: strerror(errno))) }
        if info.isDirectory { throw refuse("is a directory") }
        // test and list write nothing, so a FIFO, a device or /dev/fd/N is read as with -c.
        let writesNothing = options.mode == .test || options.mode == .list
        if !info.isRegularFile && !options.force && !options.toStandardOutput && !writesNothing {
            throw refuse("not a regular file (use -f or -c to read it)")
        }
        return info
    }

    func refuseTerminal(readingStandardInput: Bool) throws {
        guard !options.force else { return }
        switch options.mode {
        case .pack where environment.outputIsTerminal && options.outputPath == nil:
            throw Reported(status: reportError("standard output",
                                               "compressed data not written to a terminal (use -f to force)"))
        case .unpack, .test, .list:
            guard readingStandardInput && environment.inputIsTerminal else { break }
            throw Reported(status: reportError("standard input",
                                               "compressed data not read from a terminal (use -f to force)"))
        default:
            break
        }
    }

    /// `x` → `x.gz` for pack (`x.gz` → `x.gz.gz` with `-f`, as gzip and pigz); `x.gz` → `x` and
    /// `x.tgz` → `x.tar` for unpack. `nil` (after a warning) when the name does not fit.
    func defaultOutputPath(for input: Pathname) -> Pathname? {
        guard let problem = unfitName(input) else {
            guard options.mode == .unpack, let (suffix, replacement) = unpackSuffix(of: input) else {
                return input.appending(".gz")
            }
            return Pathname(bytes: input.bytes.dropLast(suffix.utf8.count))!.appending(replacement)
        }
        diagnostics.warning(input.description, problem)
        return nil
    }

    /// Why `path` gets no default output name, or `nil` when it gets one: pack does not pack a
    /// `.gz` or `.tgz` again without `-f`; unpack (and `-r` for test and list) takes only GNU
    /// gzip's suffixes.
    func unfitName(_ path: Pathname) -> String? {
        switch options.mode {
        case .pack:
            guard !options.force else { return nil }
            return [".gz", ".tgz"].first { path.hasSuffixIgnoringCase($0) }.map { "already has \($0) suffix -- unchanged" }
        case .unpack, .test, .list:
            return unpackSuffix(of: path) == nil ? "unknown suffix -- ignored" : nil
        case .index:
            return nil
        }
    }

    /// The suffix unpack removes from `path` and what replaces it: GNU gzip's, in any case.
    private func unpackSuffix(of path: Pathname) -> (suffix: String, replacement: String)? {
        let name = baseName(path)
        return [(".gz", ""), (".tgz", ".tar"), (".taz", ".tar"), ("-gz", ""), (".z", ""), ("-z", ""), ("_z", "")]
            .first { name.hasSuffixIgnoringCase($0.0) && name.bytes.count > $0.0.utf8.count }
    }
}

private let slash = UInt8(ascii: "/")

/// The last component of `path` (after its last `/`, one trailing `/` ignored), as bytes.
func baseName(_ path: Pathname) -> Pathname {
    let trimmed = path.bytes.last == slash ? path.bytes.dropLast() : path.bytes[...]
    let start = trimmed.lastIndex(of: slash).map { $0 + 1 } ?? trimmed.startIndex
    return Pathname(bytes: trimmed[start...])!
}

/// `path` up to and with its last `/`, or empty when it has none.
func directory(of path: Pathname) -> Pathname {
    guard let last = path.bytes.lastIndex(of: slash) else { return "" }
    return Pathname(bytes: path.bytes[...last])!
}

/// The last path component of a stored FNAME, byte for byte (UTF-8 or not), or `nil` when it
/// is empty, `.`, `..` or longer than a file name can be (a header must not write outside the
/// output's directory).
func safeFileName(_ stored: [UInt8]) -> Pathname? {
    guard let name = Pathname(bytes: stored).map(baseName), !name.isEmpty, name != ".", name != "..",
          name.bytes.count <= Int(NAME_MAX) else { return nil }
    return name
}

extension Pathname {
    /// `name` inside this directory: `dir` + `/` + `name` (no second `/` after `dir/`).
    func appending(component name: Pathname) -> Pathname {
        if isEmpty || bytes.last == slash { return Pathname(bytes: bytes + name.bytes)! }
        return Pathname(bytes: bytes + [slash] + name.bytes)!
    }

    /// The name with `suffix`'s UTF-8 bytes added at the end (`x` → `x.gz`).
    func appending(_ suffix: String) -> Pathname {
        Pathname(bytes: bytes + Array(suffix.utf8))!
    }

    /// Whether the name ends with `suffix` (ASCII), ASCII letters in any case.
    func hasSuffixIgnoringCase(_ suffix: String) -> Bool {
        let tail = Array(suffix.utf8)
        guard bytes.count >= tail.count else { return false }
        return zip(bytes.suffix(tail.count), tail).allSatisfy { asciiLowercase($0) == asciiLowercase($1) }
    }
}

private func asciiLowercase(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
}

/// The mode of a new file: 0666 less the process's umask.
func defaultPermissions() -> mode_t {
    let mask = umask(0)
    umask(mask)
    return 0o666 & ~mask
}

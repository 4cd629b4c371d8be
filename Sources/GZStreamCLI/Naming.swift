import ByteStreams
import GzipStreams
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which inputs are taken, and the names outputs get.
extension Command {
    func inputInfo(_ path: String) throws -> FileInfo {
        func refuse(_ problem: String) -> Reported {
            Reported(status: reportError(path, problem), problem: problem)
        }
        guard let info = FileInfo(path: path) else { throw refuse(String(cString: strerror(errno))) }
        if info.isDirectory { throw refuse("is a directory") }
        if !info.isRegularFile && !options.force && !options.toStandardOutput {
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

    /// `x` → `x.gz` (or `-S`'s suffix) for pack; `x.gz` → `x` and `x.tgz` → `x.tar` for unpack
    /// (see ``knownSuffix(of:custom:)``).
    /// - Throws: ``Reported`` when the name does not fit, after saying so: a warning for an
    ///   unknown suffix (unpack) or a name that has one already (pack); in gzip mode the latter
    ///   is only a note, as gzip's, and `-f` packs such a file anyway (`x.gz` → `x.gz.gz`).
    func defaultOutputPath(for input: String) throws -> String {
        switch options.mode {
        case .pack:
            if options.gzipMode {
                if !options.force, let suffix = knownSuffix(of: input, custom: options.suffix) {
                    diagnostics.warning(input, "already has \(suffix) suffix -- unchanged")
                    throw Reported(status: .success)
                }
            } else {
                for suffix in [".gz", ".tgz"] + (options.suffix.map { [$0] } ?? [])
                where asciiLowercased(input).hasSuffix(asciiLowercased(suffix)) {
                    diagnostics.warning(input, "already has \(suffix) suffix -- unchanged")
                    throw Reported(status: .warning)
                }
            }
            return input + options.packSuffix
        case .unpack:
            guard let name = unpackedName(of: input, customSuffix: options.suffix) else {
                diagnostics.warning(input, "unknown suffix -- ignored")
                throw Reported(status: .warning)
            }
            return name
        case .test, .list, .index:
            preconditionFailure("test, list and index write no file named after the input")
        }
    }
}

/// GNU gzip's suffixes of compressed files, besides `-S`'s.
private let builtInSuffixes = [".gz", ".z", ".taz", ".tgz", "-gz", "-z", "_z"]

/// The suffix of a compressed file that `name` ends with, found as GNU gzip finds it (its
/// `get_suffix`): `custom` (`-S`) first, or last when it ends one of the built-in suffixes
/// (`-S z`), and `.gz`, `.z`, `.taz`, `.tgz`, `-gz`, `-z`, `_z`; in any ASCII case; only when
/// something other than a `/` comes before it.
/// - Returns: The suffix as `name` spells it (its last bytes), or `nil`.
func knownSuffix(of name: String, custom: String?) -> String? {
    var candidates = builtInSuffixes
    if let custom {
        let lowered = asciiLowercased(custom)
        if builtInSuffixes.contains(where: {
            $0.utf8.count > lowered.utf8.count && $0.utf8.suffix(lowered.utf8.count).elementsEqual(lowered.utf8)
        }) {
            candidates.append(lowered)
        } else {
            candidates.insert(lowered, at: 0)
        }
    }
    let bytes = Array(name.utf8)
    let lowered = Array(asciiLowercased(name).utf8)
    for candidate in candidates {
        let suffix = Array(candidate.utf8)
        guard bytes.count > suffix.count, bytes[bytes.count - suffix.count - 1] != UInt8(ascii: "/"),
              lowered.suffix(suffix.count).elementsEqual(suffix) else { continue }
        return String(decoding: bytes.suffix(suffix.count), as: UTF8.self)
    }
    return nil
}

/// The name `input` unpacks to: less its ``knownSuffix(of:custom:)``, `.tgz` and `.taz`
/// becoming `.tar`; `nil` when it has none.
func unpackedName(of input: String, customSuffix: String?) -> String? {
    guard let suffix = knownSuffix(of: input, custom: customSuffix) else { return nil }
    let stem = String(decoding: input.utf8.dropLast(suffix.utf8.count), as: UTF8.self)
    let lowered = asciiLowercased(suffix)
    return stem + (lowered == ".tgz" || lowered == ".taz" ? ".tar" : "")
}

/// `text` with ASCII capitals made small and every other byte unchanged (C's `tolower` in the
/// C locale, as gzip compares suffixes).
func asciiLowercased(_ text: String) -> String {
    String(decoding: text.utf8.map { (0x41...0x5a).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
}

func baseName(_ path: String) -> String {
    let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
    return trimmed.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? trimmed
}

func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[...slash])
}

/// The last path component of a stored FNAME, or `nil` when it is empty, `.`, `..` or longer
/// than a file name can be (a header must not write outside the output's directory).
func safeFileName(_ stored: [UInt8]) -> String? {
    let text = String(decoding: stored, as: UTF8.self)
    let name = baseName(text)
    guard !name.isEmpty, name != ".", name != "..", !name.contains("\0"),
          name.utf8.count <= Int(NAME_MAX) else { return nil }
    return name
}

/// The mode of a new file: 0666 less the process's umask.
func defaultPermissions() -> mode_t {
    let mask = umask(0)
    umask(mask)
    return 0o666 & ~mask
}

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

    /// `x` → `x.gz` for pack; `x.gz` → `x` and `x.tgz` → `x.tar` for unpack. `nil` (after a
    /// warning) when the name does not fit.
    func defaultOutputPath(for input: String) -> String? {
        switch options.mode {
        case .pack:
            for suffix in [".gz", ".tgz"] where input.lowercased().hasSuffix(suffix) {
                diagnostics.warning(input, "already has \(suffix) suffix -- unchanged")
                return nil
            }
            return input + ".gz"
        case .unpack:
            // GNU gzip's suffixes, in any case.
            let name = baseName(input).lowercased()
            for (suffix, replacement) in [(".gz", ""), (".tgz", ".tar"), (".taz", ".tar"), ("-gz", ""), (".z", ""),
                                          ("-z", ""), ("_z", "")]
            where name.hasSuffix(suffix) && name.count > suffix.count {
                return String(input.dropLast(suffix.count)) + replacement
            }
            diagnostics.warning(input, "unknown suffix -- ignored")
            return nil
        case .test, .list, .index:
            return nil
        }
    }
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

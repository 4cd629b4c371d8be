import ByteStreams

// A mistyped command word (`gzstream tset report.txt`) would otherwise be read as gzip's
// command line: the word a file that does not exist, and every other FILE compressed and
// removed. Such a word is refused before anything is touched.

/// The words that name a command when they come first.
let commandWords = ["pack", "unpack", "test", "list", "index", "send", "receive", "cache", "help"]

/// Words other archivers and compressors use for a command (zstd's and xz's `--compress`, tar's
/// `--create` and `--extract`, 7-Zip's and Python's `compress`), with gzstream's command for
/// each: typed as the first word, each would otherwise be read as a file to pack, and every
/// file after it packed and removed.
let commandSynonyms = ["compress": "pack", "create": "pack", "decompress": "unpack", "uncompress": "unpack",
                       "extract": "unpack", "verify": "test"]

/// The suffixes GNU gzip 1.12 tries after a NAME that is not there when decompressing,
/// testing or listing (`get_istat`), after `-S`'s: `.gz`, `.z`, `-z`, `.Z`.
let gzipTriedSuffixes = [".gz", ".z", "-z", ".Z"]

/// The most edits (insertions, deletions, substitutions, swaps of two neighbours) that make a
/// word a mistyped command rather than a file name.
let mistypedCommandDistance = 2

/// Refuses `first`, the first argument of gzip's command line under gzstream's own name, when
/// it could only be a mistyped command: not an option, no `/` in it (`./pack` names a file),
/// nothing of that name exists (not even a dangling link), nor of that name with a suffix
/// `-d`, `-t` and `-l` try after it (`gzstream lst -d` decompresses `lst.gz`; options may
/// follow operands), and it is another tool's word for a command (``commandSynonyms``) or a
/// command word is at most ``mistypedCommandDistance`` edits away.
/// - Throws: ``UsageError`` "unknown command 'tset' (did you mean 'test'?)", naming the
///   synonym's command or the nearest command (the first in ``commandWords`` among equals).
func refuseMistypedCommand(_ first: [UInt8]) throws(UsageError) {
    guard let word = String(validating: first, as: UTF8.self), !word.isEmpty, !word.hasPrefix("-"),
          !word.contains("/"), let name = Pathname(bytes: first), FileInfo(path: name, followsLinks: false) == nil
    else { return }
    for suffix in gzipTriedSuffixes {
        if let suffixed = Pathname(bytes: first + Array(suffix.utf8)), FileInfo(path: suffixed, followsLinks: false) != nil {
            return
        }
    }
    if let command = commandSynonyms[word] {
        throw UsageError(message: "unknown command '\(word)' (did you mean '\(command)'?)")
    }
    let letters = Array(word.unicodeScalars)
    var nearest: (word: String, distance: Int)?
    for command in commandWords {
        let distance = editDistance(letters, Array(command.unicodeScalars))
        if distance <= mistypedCommandDistance, distance < nearest?.distance ?? .max {
            nearest = (command, distance)
        }
    }
    guard let nearest else { return }
    throw UsageError(message: "unknown command '\(word)' (did you mean '\(nearest.word)'?)")
}

/// The optimal string alignment distance between `a` and `b`: the fewest insertions,
/// deletions, substitutions and swaps of two neighbouring letters that turn one into the other
/// (`tset` is one swap from `test`), each letter edited once.
func editDistance<Letter: Equatable>(_ a: [Letter], _ b: [Letter]) -> Int {
    if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
    // Three rows of the table: the row two above (for swaps), the previous one and this one.
    var beforePrevious = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let substitution = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + substitution)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                current[j] = min(current[j], beforePrevious[j - 2] + 1)
            }
        }
        (beforePrevious, previous, current) = (previous, current, beforePrevious)
    }
    return previous[b.count]
}

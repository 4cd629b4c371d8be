// The GZIP environment variable, read in gzip mode as GNU gzip 1.12 reads it: words separated
// by spaces and tabs, options only, read before the command line (whose options then win).
// Only the options that tune the output are taken: a variable set for one program must not
// change what another run does (decompress, write to standard output, remove nothing). The
// grammar is gzip's own, not gzstream's: `-0`, `-p` or `--threads` there are gzip's errors.

/// gzip 1.12's options that GZIP may hold, as the command-line arguments they stand for.
private let tuningShortOptions: Set<Character> = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "n", "N", "q", "v"]
private let tuningLongOptions: [String: String] = [
    "fast": "--fast", "best": "--best", "no-name": "--no-name", "name": "--name", "quiet": "--quiet",
    "silent": "--quiet", "verbose": "--verbose", "rsyncable": "--rsyncable",
]
/// gzip 1.12's other options: GZIP holding one of these is refused as "option not valid",
/// anything else as getopt refuses an unknown option. `-b` and `-S` take a value.
private let otherShortOptions: Set<Character> = ["a", "b", "c", "d", "f", "h", "H", "k", "l", "L", "m", "M", "r", "S", "t", "V", "Z"]
private let otherLongOptions: Set<String> = [
    "ascii", "to-stdout", "stdout", "decompress", "uncompress", "force", "help", "keep", "list", "license",
    "synchronous", "recursive", "suffix", "test", "version", "lzw", "bits",
]

/// Reads the GZIP environment variable as gzip 1.12 does.
/// - Parameter variable: The variable's bytes.
/// - Returns: The options it holds as command-line arguments (`-9`, `--rsyncable`), to be read
///   before the command line's; and whether gzip's deprecation warning is due (it holds a word,
///   and its last `-q` or `-v` is not `-q`).
/// - Throws: ``UsageError`` in gzip's words: "-c: option not valid in GZIP environment
///   variable" (also `--`), "foo: non-option in GZIP environment variable", or getopt's
///   "invalid option -- 'x'" / "unrecognized option '--x'" /
///   "option '--fast' doesn't allow an argument". The first option that fails is named, then
///   the first word that is no option (getopt reads every option before it looks at the
///   words it passed over).
func gzipVariableArguments(_ variable: [UInt8]) throws(UsageError) -> (arguments: [[UInt8]], warns: Bool) {
    let words = variable.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        .map { String(decoding: $0, as: UTF8.self) }
    var arguments: [String] = []
    var quiet = false
    var firstWord: String?
    var previousWasWord = false
    func notValid(_ option: String) -> UsageError {
        UsageError(message: "\(option): option not valid in GZIP environment variable")
    }
    scan: for word in words {
        if word == "--" {
            // getopt takes a `--` that follows a word it passed over as the end of the
            // options; gzip itself refuses one met where it looks for the next option.
            if previousWasWord { break scan }
            throw notValid("--")
        }
        guard word.hasPrefix("-"), word != "-" else {
            if firstWord == nil { firstWord = word }
            previousWasWord = true
            continue
        }
        previousWasWord = false
        if word.hasPrefix("--") {
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            if let argument = tuningLongOptions[name] {
                if body.count > name.count { throw UsageError(message: "option '--\(name)' doesn't allow an argument") }
                arguments.append(argument)
                if argument == "--quiet" { quiet = true } else if argument == "--verbose" { quiet = false }
            } else if otherLongOptions.contains(name) {
                throw notValid("--" + name)
            } else {
                throw UsageError(message: "unrecognized option '\(word)'")
            }
            continue
        }
        for letter in word.dropFirst() {
            if tuningShortOptions.contains(letter) {
                arguments.append("-" + String(letter))
                if letter == "q" { quiet = true } else if letter == "v" { quiet = false }
            } else if otherShortOptions.contains(letter) {
                throw notValid("-" + String(letter))
            } else {
                throw UsageError(message: "invalid option -- '\(letter)'")
            }
        }
    }
    if let firstWord { throw UsageError(message: "\(firstWord): non-option in GZIP environment variable") }
    return (arguments.map { Array($0.utf8) }, !words.isEmpty && !quiet)
}

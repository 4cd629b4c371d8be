import ByteStreams
import GzipStreams
import TarArchives

// The values options take, each range defined once: what a command line may say, and the
// message a mistake prints. Each parser throws ``UsageError`` pointing to `--help`; the cache
// points its errors to its own help with ``UsageError/pointing(to:)``.

// MARK: Ranges

// The compression levels `-0` ... `-9` and `--level` take, and the thread counts `-p` takes,
// are the streams' own: GzipStreams' `compressionLevels` and `threadCounts`.

/// The longest `-S` suffix: GNU gzip's 30 bytes.
let maximumSuffixLength = 30

/// The largest `--chunk-size`: 64 MiB, less than the streams' own limit
/// (`ByteStream.maximumChunkSize`): each stream holds one buffer of this size, so a larger one
/// buys no speed and only risks memory.
let largestChunkSizeOption = 64 << 20

/// `-b`'s range in bytes: 32 KiB (one deflate window) to 64 MiB.
let blockSizes = (32 << 10)...(64 << 20)

/// The longest `--max-age`: about 10,000 years, far past any use and well inside the
/// library's `Duration` and `Double` arithmetic.
let maximumCacheAgeSeconds: Int64 = 3_650_000 * 86400

/// The longest `--timeout`: a year, far past any wait a user means, and well inside `Duration`.
let maximumTimeoutSeconds = 365.0 * 24 * 3600

// MARK: Parsers

/// A file name's bytes. An argument from `main` holds no NUL; one passed to
/// ``runCommand(arguments:programName:environment:)`` might.
func pathname(_ bytes: some Collection<UInt8>) throws(UsageError) -> Pathname {
    guard let name = Pathname(bytes: bytes) else { throw UsageError(message: "a file name cannot hold a NUL byte") }
    return name
}

/// `-0` ... `-12`: the level a short flag and the digits after it in its group name (`-11`
/// is level 11, as pigz reads it), or `nil` when `letter` is no digit.
/// - Throws: ``UsageError`` for a number outside ``extendedCompressionLevels``.
func compressionLevel(flag letter: Character, in scanner: inout ArgumentScanner) throws(UsageError) -> Int? {
    guard letter.isASCII, letter.isWholeNumber else { return nil }
    return try parseLevel(String(letter) + scanner.digitsAfterFlag())
}

/// `--level N`: one of ``extendedCompressionLevels`` (above 9: libdeflate's levels, for pack's
/// chunks engine and BGZF).
func parseLevel(_ text: String) throws(UsageError) -> Int {
    guard let level = Int(text), extendedCompressionLevels.contains(level) else {
        throw UsageError(message: "compression level must be \(extendedCompressionLevels.lowerBound) to "
            + "\(extendedCompressionLevels.upperBound), not '\(text)'")
    }
    return level
}

/// `--engine NAME`: one of ``DeflateEngine``'s names.
func parseEngine(_ text: String) throws(UsageError) -> DeflateEngine {
    guard let engine = DeflateEngine(rawValue: text) else {
        throw UsageError(message: "--engine takes "
            + DeflateEngine.allCases.map { "'\($0.rawValue)'" }.joined(separator: " or ") + ", not '\(text)'")
    }
    return engine
}

/// `-p N`: one of ``threadCounts``.
func parseThreads(_ text: String) throws(UsageError) -> Int {
    guard let count = Int(text), threadCounts.contains(count) else {
        throw UsageError(message: "thread count must be \(threadCounts.lowerBound) to \(threadCounts.upperBound), not '\(text)'")
    }
    return count
}

/// `-S`'s suffix: its bytes, UTF-8 or not (a name's last bytes), 1 to 30 of them, no NUL and
/// no `/`, refused in GNU gzip's words and, as gzip, without a pointer to `--help`: a suffix
/// with a `/` would send the output into another directory (gzip refuses it since 1.13), an
/// empty one would make the output the input's own name.
func parseSuffix(_ bytes: ArraySlice<UInt8>) throws(UsageError) -> Pathname {
    guard let suffix = Pathname(bytes: bytes) else { throw UsageError(message: "a suffix cannot hold a NUL byte") }
    if suffix.bytes.contains(UInt8(ascii: "/")) {
        throw UsageError(message: "suffix contains '/'", helpCommand: nil)
    }
    guard !suffix.isEmpty, suffix.bytes.count <= maximumSuffixLength else {
        throw UsageError(message: "invalid suffix '\(suffix)'", helpCommand: nil)
    }
    return suffix
}

/// `-b N` counts KiB as pigz's does (`-b 128` is 128 KiB), and takes every size
/// (SizeGrammar.swift): `1M`, `0x8000`, `32768B`. One of ``blockSizes``.
/// - Parameter option: The option as given: `-b`, `--block-size` or `--blocksize`.
func parseBlockSize(_ text: String, option: String = "-b") throws(UsageError) -> Int {
    switch readSize(text, numberAlone: 1 << 10) {
    case .bytes(let bytes, _) where blockSizes.contains(bytes): return bytes
    case .malformed: throw sizeFormsError(text, option: option, numberAlone: "KiB (128, as pigz's -b)")
    case .bytes, .tooLarge:
        throw UsageError(message: "block size must be 32K to 64M (a number alone counts KiB), not '\(text)'")
    }
}

/// `--chunk-size SIZE`: 1 byte to ``largestChunkSizeOption``.
func parseChunkSize(_ text: String) throws(UsageError) -> Int {
    try parseSize(text, option: "--chunk-size", range: 1...largestChunkSizeOption)
}

/// A byte count, written as every size is (SizeGrammar.swift): `4096`, `0x1000`, `64K`,
/// `1.5G`, `700MB`.
/// - Parameters:
///   - option: The option as messages name it.
///   - range: The byte counts accepted.
func parseSize(_ text: String, option: String, range: ClosedRange<Int>) throws(UsageError) -> Int {
    switch readSize(text) {
    case .bytes(let bytes, _) where range.contains(bytes): return bytes
    case .malformed: throw sizeFormsError(text, option: option)
    case .bytes, .tooLarge:
        throw UsageError(message: "\(option) must be \(range.lowerBound) to \(range.upperBound) bytes, not '\(text)'")
    }
}

/// A byte count from 0 up (`--max-output`, `--offset`, `--length`, `--max-size`), as
/// ``parseSize(_:option:range:)`` reads it.
func parseByteCount(_ text: String, option: String) throws(UsageError) -> Int64 {
    Int64(try parseSize(text, option: option, range: 0...Int.max))
}

/// `--max-age AGE`: whole seconds, more than 0, with an optional unit: `90`, `90s`, `15m`,
/// `12h`, `7d`; at most ``maximumCacheAgeSeconds``.
func parseAge(_ text: String) throws(UsageError) -> Int64 {
    var digits = Substring(text)
    var multiplier: Int64 = 1
    switch digits.last {
    case "s": multiplier = 1
    case "m": multiplier = 60
    case "h": multiplier = 3600
    case "d": multiplier = 86400
    default: break
    }
    if digits.last.map({ "smhd".contains($0) }) == true { digits = digits.dropLast() }
    guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int64(digits) else {
        throw UsageError(message: "--max-age takes seconds (s, m, h, d suffixes), not '\(text)'")
    }
    let (seconds, overflow) = number.multipliedReportingOverflow(by: multiplier)
    guard seconds > 0 || overflow else { throw UsageError(message: "--max-age must be more than 0, not '\(text)'") }
    guard !overflow, seconds <= maximumCacheAgeSeconds else {
        throw UsageError(message: "--max-age must be at most \(maximumCacheAgeSeconds / 86400)d, not '\(text)'")
    }
    return seconds
}

/// `--timeout SECONDS`: more than 0, fractions allowed (`0.5`), at most ``maximumTimeoutSeconds``.
func parseTimeout(_ text: String) throws(UsageError) -> Duration {
    guard let seconds = Double(text), seconds > 0, seconds <= maximumTimeoutSeconds else {
        throw UsageError(message: "--timeout takes seconds, more than 0 (such as 30 or 0.5), not '\(text)'")
    }
    return .seconds(seconds)
}

/// `--deadline DURATION` as given: its length, and its text for messages.
struct DeadlineOption: Equatable {
    var duration: Duration
    var text: String
}

/// `--deadline DURATION`: seconds, fractions allowed, with an optional unit `s`, `m` or `h`
/// (`90`, `0.5`, `15m`, `2h`); more than 0, at most ``maximumTimeoutSeconds``.
func parseDeadline(_ text: String) throws(UsageError) -> DeadlineOption {
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
    var number = Substring(text)
    var scale = 1.0
    if let last = number.last, let unit = units[last] {
        scale = unit
        number = number.dropLast()
    }
    guard number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(number),
          value > 0, value * scale <= maximumTimeoutSeconds
    else {
        throw UsageError(message: "--deadline takes a duration, more than 0 (such as 90, 0.5, 15m or 2h), not '\(text)'")
    }
    return DeadlineOption(duration: .seconds(value * scale), text: text)
}

/// `pack --tar --owner=NAME[:ID]` (and `--group`), as GNU tar reads them: `NAME:ID` stores
/// both as given; a number alone is the ID (its name looked up when the archive is written,
/// unless `--numeric-owner`); a name alone is looked up in the system's user (group) database
/// for its ID, and one that is not there is refused.
/// - Parameter option: `--owner` or `--group`.
func parseTarIdentity(_ text: String, option: String) throws(UsageError) -> DirectoryArchiver.Identity {
    let isOwner = option == "--owner"
    let kind = isOwner ? "user" : "group"
    let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    func id(_ digits: Substring) throws(UsageError) -> Int {
        guard let value = Int(digits), value >= 0, value <= Int(UInt32.max) else {
            throw UsageError(message: "\(option) takes NAME, ID or NAME:ID (an ID from 0 to \(UInt32.max)), not '\(text)'")
        }
        return value
    }
    if parts.count == 2 {
        guard !parts[0].isEmpty else { throw UsageError(message: "\(option) takes NAME, ID or NAME:ID, not '\(text)'") }
        return DirectoryArchiver.Identity(name: Array(parts[0].utf8), id: try id(parts[1]))
    }
    if !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) { return DirectoryArchiver.Identity(id: try id(text[...])) }
    guard !text.isEmpty else { throw UsageError(message: "\(option) takes NAME, ID or NAME:ID, not an empty value") }
    let found = isOwner ? OwnerNames.userID(named: text) : OwnerNames.groupID(named: text)
    guard let found else {
        throw UsageError(message: "\(option): no \(kind) named '\(text)' on this system (give \(text):ID)")
    }
    return DirectoryArchiver.Identity(name: Array(text.utf8), id: Int(found))
}

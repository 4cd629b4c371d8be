import ByteStreams

/// Reads a command line's arguments one option or operand at a time, as GNU gzip reads them:
/// short flags may be grouped (`-cf9`), long options take `--name VALUE` or `--name=VALUE`,
/// `--` ends the options, and `-` alone is an operand (standard input).
///
/// Each argument is the bytes the system passed. Operands and values are handed back as those
/// bytes (a file name or `-S`'s suffix keeps them all, UTF-8 or not); option names are read as
/// UTF-8. Both `gzstream`'s own parser (``parseCommandLine(_:programName:gzipVariable:warn:)``) and the cache's
/// (``parseCacheCommandLine(_:)``) read through one scanner, so that both accept the same
/// spellings. Not thread-safe: a value type used by one parse.
struct ArgumentScanner {
    /// One thing met on the command line.
    enum Argument {
        /// A file, a key, a subcommand's word: the argument's bytes.
        case operand([UInt8])
        /// `--name` or `--name=VALUE`: the name, without the dashes and the value.
        case long(String)
        /// One letter of a group of short flags (`-cf9` gives `c`, `f`, `9`).
        case short(Character)
    }

    private var rest: ArraySlice<[UInt8]>
    /// After `--`: every argument is an operand.
    private var onlyOperands = false
    /// The group of short flags being read (its bytes and its text), and the letters not read yet.
    private var group: (raw: [UInt8], text: String) = ([], "")
    private var letters: Substring = ""
    /// The `=VALUE` of the long option just returned, if it had one.
    private var inlineValue: ArraySlice<UInt8>?
    /// Whether the argument just returned was a long option (its value is then `=VALUE` or the
    /// next argument, never the rest of a group).
    private var lastWasLong = false
    /// The help every error of this scanner points to (``UsageError/helpCommand``).
    let helpCommand: String

    init(_ arguments: some Sequence<[UInt8]>, helpCommand: String = "--help") {
        rest = Array(arguments)[...]
        self.helpCommand = helpCommand
    }

    /// The next option letter, long option or operand; `nil` once every argument is read.
    mutating func next() -> Argument? {
        lastWasLong = false
        inlineValue = nil
        if let letter = letters.popFirst() { return .short(letter) }
        guard let raw = rest.popFirst() else { return nil }
        // Classified by its text, character by character: `-` followed by a combining mark is
        // one character, not a dash, and names a file.
        let text = String(decoding: raw, as: UTF8.self)
        if onlyOperands || text == "-" || !text.hasPrefix("-") { return .operand(raw) }
        if text == "--" {
            onlyOperands = true
            return next()
        }
        if text.hasPrefix("--") {
            let body = raw.dropFirst(2)
            let name = body.prefix { $0 != UInt8(ascii: "=") }
            inlineValue = body.count > name.count ? body[(name.endIndex + 1)...] : nil
            lastWasLong = true
            return .long(String(decoding: name, as: UTF8.self))
        }
        group = (raw, text)
        letters = group.text.dropFirst()
        return next()
    }

    /// The ASCII digits that follow the short flag just returned in its group, taken from the
    /// group: `-11` is one option, level 11, as pigz reads it.
    mutating func digitsAfterFlag() -> String {
        let digits = letters.prefix { $0.isASCII && $0.isWholeNumber }
        letters = letters.dropFirst(digits.count)
        return String(digits)
    }

    /// Whether the long option just returned was given `=VALUE`.
    var hasInlineValue: Bool { inlineValue != nil }

    /// The value of the option just returned, as bytes: a long option's `=VALUE`, else the rest
    /// of a group of short flags (`-p4`, `-ofile`), else the next argument.
    /// - Parameter name: The option as messages name it (`-p`, `--level`).
    /// - Throws: ``UsageError`` in getopt's words ("option requires an argument -- 'p'",
    ///   "option '--level' requires an argument") when there is none.
    mutating func value(for name: String) throws(UsageError) -> ArraySlice<UInt8> {
        if lastWasLong, let inlineValue {
            self.inlineValue = nil
            return inlineValue
        }
        if !lastWasLong, !letters.isEmpty {
            // The letters before this one are ASCII (any other is an unknown option), so the
            // bytes after it start at the same offset as the letters left.
            let offset = group.text.utf8.count - letters.utf8.count
            letters = ""
            return group.raw[offset...]
        }
        guard let next = rest.popFirst() else {
            throw error(name.hasPrefix("--") ? "option '\(name)' requires an argument"
                                             : "option requires an argument -- '\(name.dropFirst())'")
        }
        return next[...]
    }

    /// The value of the option just returned, read as UTF-8 text (see ``value(for:)``).
    mutating func text(for name: String) throws(UsageError) -> String {
        String(decoding: try value(for: name), as: UTF8.self)
    }

    /// Refuses `=VALUE` after the long flag `--name` just returned.
    func refuseValue(_ name: String) throws(UsageError) {
        if inlineValue != nil { throw error("option '--\(name)' doesn't allow an argument") }
    }

    /// The short option `letter` just returned, which the command does not take, in getopt's
    /// words as GNU gzip and coreutils print them: "invalid option -- 'x'".
    func invalidOption(_ letter: Character) -> UsageError {
        error("invalid option -- '\(letter)'")
    }

    /// The long option `--name` just returned, which the command does not take, in getopt's
    /// words: "unrecognized option '--name'", with its `=VALUE` as given.
    func unrecognizedOption(_ name: String) -> UsageError {
        let value = inlineValue.map { "=" + String(decoding: $0, as: UTF8.self) } ?? ""
        return error("unrecognized option '--\(name)\(value)'")
    }

    /// A usage error that points to this scanner's help.
    func error(_ message: String) -> UsageError {
        UsageError(message: message, helpCommand: helpCommand)
    }
}

import Foundation
import Testing
import TestSupport

// The manual page, man/gzstream.1: it documents exactly the options the help shows, and the
// formatters render it without a warning.

extension Tool {
    /// mandoc's formatter and checker (`mandoc -T lint`).
    static let mandoc = Tool(name: "mandoc", debianPackage: "mandoc")
    /// GNU roff, which `man` runs on Debian.
    static let groff = Tool(name: "groff", debianPackage: "groff-base")
}

/// The manual page in the package.
let manPagePath = PackageLocations.root.appendingPathComponent("man/gzstream.1").path

/// The options that the option lists of a `--help` text name: each entry's head, the options at
/// the start of a line indented less than the descriptions are (`  -f, --force`, `      --index
/// PATH`, `  -0 ... -9`), not the options that the descriptions mention.
func helpOptions(in text: String) -> Set<String> {
    var found = Set<String>()
    for line in text.split(separator: "\n") {
        let indent = line.prefix { $0 == " " }.count
        guard indent > 0, indent < 8 else { continue }
        let words = line.split(separator: " ")
        var index = 0
        while index < words.count, words[index].hasPrefix("-"), words[index].count > 1 {
            var option = words[index]
            let listContinues = option.hasSuffix(",")
            if listContinues { option = option.dropLast() }
            found.insert(String(option))
            index += 1
            if listContinues { continue }
            if index < words.count, words[index] == "..." {
                index += 1
            } else if index < words.count, words[index].allSatisfy({ $0.isUppercase }) {
                // The value's placeholder (N, PATH): the head goes on only after a comma.
                guard words[index].hasSuffix(",") else { break }
                index += 1
            } else {
                break
            }
        }
    }
    return found
}

/// The options that the manual's option lists document: every `Fl` of every `.It Fl` line, as
/// the option is typed (`Fl \-decompress` is `--decompress`; `Fl 0 No ... Fl 9`, `-0` and `-9`).
func manPageOptions(in text: String) -> Set<String> {
    var found = Set<String>()
    for line in text.split(separator: "\n") where line.hasPrefix(".It Fl ") {
        let words = line.split(separator: " ")
        for (index, word) in words.enumerated() where word == "Fl" && index + 1 < words.count {
            found.insert("-" + words[index + 1].filter { $0 != "\\" })
        }
    }
    return found
}

@Suite("the manual page", .onDedicatedThreads)
struct ManPageTests {
    /// Every help the binary prints: the program's, gzip mode's, the cache's, and each command's.
    func helpTexts() throws -> [String] {
        try withScratch { scratch in
            var texts: [String] = []
            let commands = ["pack", "unpack", "test", "list", "index", "send", "receive", "cache"]
            for arguments in [["--help"], ["help", "gzip"]] + commands.map({ [$0, "--help"] }) {
                let result = try gzstream(arguments, in: scratch)
                #expect(result.status == 0 && result.err == "", "\(arguments): \(result)")
                texts.append(result.out)
            }
            return texts
        }
    }

    @Test("the help parser reads an entry's options, not those its description names")
    func helpParser() {
        let text = """
        Options:
          -f, --force           overwrite outputs; with
                                --engine zlib, per block
          -0 ... -9             compression level; also --level N
              --fast, --best    the same as -1 and -9
              --timeout SECONDS send, receive: give up
          -o, --output PATH     write to PATH (- is standard output)
        Usage: gzstream -x
        """
        #expect(helpOptions(in: text) == ["-f", "--force", "-0", "-9", "--fast", "--best", "--timeout", "-o", "--output"])
    }

    @Test("the manual parser reads the options of .It Fl lines only")
    func manPageParser() {
        let text = """
        .It Fl d , Fl \\-decompress , Fl \\-uncompress
        .It Fl 0 No ... Fl 12 , Fl \\-level Ar n
        .It Cm index Oo Fl f Oc
        See
        .Fl \\-rm .
        """
        #expect(manPageOptions(in: text) == ["-d", "--decompress", "--uncompress", "-0", "-12", "--level"])
    }

    @Test("every option in --help and cache --help is in the manual, and every option the manual documents is in the help")
    func optionsMatchHelp() throws {
        let manual = try String(contentsOfFile: manPagePath, encoding: .utf8)
        let documented = manPageOptions(in: manual)
        var shown = Set<String>()
        for text in try helpTexts() { shown.formUnion(helpOptions(in: text)) }
        #expect(shown.count > 40, "the help parser found too few options: \(shown.sorted())")
        #expect(shown.subtracting(documented).sorted() == [], "in the help, not in man/gzstream.1")
        #expect(documented.subtracting(shown).sorted() == [], "in man/gzstream.1, not in the help")
    }

    @Test("mandoc -T lint finds nothing to say", .requires(.mandoc))
    func mandocLint() throws {
        let mandoc = try #require(Tool.mandoc.path)
        try withScratch { scratch in
            let result = try run(mandoc, ["-T", "lint", manPagePath], in: scratch)
            // Whether a page that .Xr names is installed, and in mandoc.db, is this machine's
            // state, not the page's.
            let messages = result.errLines.filter {
                !$0.contains("referenced manual not found") && !$0.contains("mandoc.db")
            }
            #expect(result.status == 0 && result.out == "" && messages == [], "\(result)")
        }
    }

    @Test("groff -ww -mandoc renders it without a warning", .requires(.groff))
    func groffWarnings() throws {
        let groff = try #require(Tool.groff.path)
        try withScratch { scratch in
            let result = try run(groff, ["-ww", "-mandoc", "-Tutf8", "-z", manPagePath], in: scratch)
            #expect(result.status == 0 && result.out == "" && result.err == "", "\(result)")
        }
    }
}

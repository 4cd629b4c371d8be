import Foundation
import Testing
import TestSupport

// The shell completions in completions/: bash's run as bash runs it on a Tab, zsh's checked for
// syntax.

extension Tool {
    static let bash = Tool(name: "bash", debianPackage: "bash")
    static let zsh = Tool(name: "zsh", debianPackage: "zsh")
}

@Suite("shell completion", .onDedicatedThreads)
struct CompletionTests {
    static let bashScript = PackageLocations.root.appendingPathComponent("completions/gzstream.bash").path
    static let zshScript = PackageLocations.root.appendingPathComponent("completions/_gzstream").path

    /// What bash offers for the command line `words`, the last one being completed, in the
    /// directory `work/` of `scratch`: the script's function run as `complete -F` runs it, its
    /// `COMPREPLY` sorted.
    func candidates(_ words: [String], in scratch: Scratch) throws -> [String] {
        let bash = try #require(Tool.bash.path)
        let script = """
        source "$1" || exit 1
        shift
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        _gzstream
        ((${#COMPREPLY[@]})) && printf '%s\\n' "${COMPREPLY[@]}"
        exit 0
        """
        let result = try run(bash, ["--norc", "--noprofile", "-c", script, "bash", Self.bashScript] + words, in: scratch)
        #expect(result.status == 0 && result.err == "", "\(words): \(result)")
        return result.out.split(separator: "\n").map(String.init).sorted()
    }

    @Test("bash: sourcing the script registers _gzstream for gzstream", .requires(.bash))
    func bashRegisters() throws {
        let bash = try #require(Tool.bash.path)
        try withScratch { scratch in
            let result = try run(bash, ["--norc", "--noprofile", "-c", "source \"$1\" && complete -p gzstream",
                                        "bash", Self.bashScript], in: scratch)
            #expect(result.status == 0 && result.out == "complete -F _gzstream gzstream\n" && result.err == "", "\(result)")
        }
    }

    @Test("bash: commands, options after a command, and the values of --level, --engine and cache's commands",
          .requires(.bash))
    func bashWords() throws {
        // Every `try` is inside #expect, which closure type inference does not see.
        try withScratch { (scratch: Scratch) throws in
            #expect(try candidates(["gzstream", "un"], in: scratch) == ["unpack"])
            #expect(try candidates(["gzstream", "re"], in: scratch) == ["receive"])
            #expect(try candidates(["gzstream", "unpack", "--st"], in: scratch) == ["--stdout", "--strict"])
            #expect(try candidates(["gzstream", "unpack", "--no-"], in: scratch) == ["--no-name", "--no-progress", "--no-same-owner"])
            #expect(try candidates(["gzstream", "unpack", "--sa"], in: scratch) == ["--same-owner"])
            #expect(try candidates(["gzstream", "pack", "--r"], in: scratch) == ["--recursive", "--rm", "--rsyncable"])
            #expect(try candidates(["gzstream", "list", "--"], in: scratch)
                    == ["--force", "--help", "--json", "--license", "--max-output", "--members", "--quiet", "--recursive",
                        "--suffix", "--verbose", "--version"])
            #expect(try candidates(["gzstream", "--de"], in: scratch) == ["--decompress"])
            #expect(try candidates(["gzstream", "pack", "--level", ""], in: scratch)
                    == ["0", "1", "10", "11", "12", "2", "3", "4", "5", "6", "7", "8", "9"])
            #expect(try candidates(["gzstream", "pack", "--level", "=", "1"], in: scratch) == ["1", "10", "11", "12"])
            #expect(try candidates(["gzstream", "pack", "--engine", ""], in: scratch) == ["chunks", "zlib"])
            #expect(try candidates(["gzstream", "cache", "p"], in: scratch) == ["prune", "put"])
            #expect(try candidates(["gzstream", "cache", "--dir", "d", "get", "--"], in: scratch)
                    == ["--dir", "--force", "--help", "--json", "--key-file", "--level", "--max-age", "--max-size",
                        "--output", "--quiet", "--threads", "--verbose"])
            #expect(try candidates(["gzstream", "help", "in"], in: scratch) == ["index"])
            #expect(try candidates(["gzstream", "pack", "-b", ""], in: scratch) == [])
        }
    }

    @Test("bash: unpack, test, list, -d and zcat offer directories and compressed files only; pack offers all",
          .requires(.bash))
    func bashFiles() throws {
        try withScratch { scratch in
            for name in ["a.gz", "b.txt", "c.TGZ", "d.bgz", "e.z", "f.gz.gzidx", "g-gz", "h.tar", "x *.gz"] {
                try scratch.write(name, "")
            }
            try FileManager.default.createDirectory(atPath: scratch.path("logs"), withIntermediateDirectories: false)
            // A blank or a pattern character in a name is taken as it is.
            let compressed = ["a.gz", "c.TGZ", "d.bgz", "e.z", "g-gz", "logs", "x *.gz"]
            let all = ["a.gz", "b.txt", "c.TGZ", "d.bgz", "e.z", "f.gz.gzidx", "g-gz", "h.tar", "logs", "x *.gz"]
            for words in [["gzstream", "unpack", ""], ["gzstream", "test", "-v", ""], ["gzstream", "list", "a.gz", ""],
                          ["gzstream", "-dc", ""], ["gzstream", "--test", ""], ["zcat", ""]] {
                #expect(try candidates(words, in: scratch) == compressed, "\(words)")
            }
            #expect(try candidates(["gzstream", "pack", ""], in: scratch) == all)
            #expect(try candidates(["gzstream", "-k", ""], in: scratch) == all)
            #expect(try candidates(["gzstream", "unpack", "-S", ".gzidx", ""], in: scratch) == (compressed + ["f.gz.gzidx"]).sorted())
            #expect(try candidates(["gzstream", "unpack", "-o", ""], in: scratch) == all)
            #expect(try candidates(["gzstream", "unpack", "c"], in: scratch) == ["c.TGZ"])
            #expect(try candidates(["gzstream", "h"], in: scratch) == ["h.tar", "help"])
            #expect(try candidates(["gzstream", "send", "host:1", ""], in: scratch) == all)
            #expect(try candidates(["gzstream", "receive", "1", ""], in: scratch) == [])
        }
    }

    @Test("zsh: the completion function parses, and compinit finds it for gzstream", .requires(.zsh))
    func zshFunction() throws {
        let zsh = try #require(Tool.zsh.path)
        try withScratch { scratch in
            let parsed = try run(zsh, ["-n", Self.zshScript], in: scratch)
            #expect(parsed.status == 0 && parsed.out == "" && parsed.err == "", "\(parsed)")
            let directory = (Self.zshScript as NSString).deletingLastPathComponent
            let script = "fpath=(\"$1\" $fpath); autoload -U compinit; compinit -u -d \"$2\"; print -r -- $_comps[gzstream]"
            let found = try run(zsh, ["-f", "-c", script, "zsh", directory, scratch.ioPath("zcompdump")], in: scratch)
            #expect(found.status == 0 && found.out == "_gzstream\n" && found.err == "", "\(found)")
        }
    }
}

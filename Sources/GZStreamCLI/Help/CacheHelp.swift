// The cache's help, and each cache action's (`gzstream cache get --help`), built from the
// entries they share so that an option reads the same in each.

let cacheHelpText = """
Usage: gzstream cache put KEY [FILE]     store FILE (- or none: stdin) under KEY
       gzstream cache get KEY [-o FILE]  write KEY's bytes to stdout, or to FILE
       gzstream cache list [--json]      each entry, least recently used first
       gzstream cache remove KEY [-f]    remove KEY's entry
       gzstream cache clear              remove every entry
       gzstream cache prune              apply --max-size and --max-age now

A cache of byte streams on disk: one file per entry in the cache directory,
named by a hash of its KEY (any UTF-8 text), gzip-compressed and, with
--key-file, encrypted. An entry appears whole or not at all, so processes may
share a directory; the last put of a KEY wins. A put whose input fails stores
nothing and keeps the old entry. get checks the whole entry before it writes a
byte to standard output (to -o FILE it writes a temporary file beside FILE and
renames it into place at the end); a damaged entry is removed and is a miss.

Options:
\(cacheDirectoryEntries)
\(cacheMaximumSizeEntry)
\(cacheMaximumAgeEntry)
  -0 ... -12            put: compression level (default 6); also --level N
  -p, --threads N       put: deflating threads (default: the processors
                        available)
  -o, --output FILE     get: write FILE instead of standard output (- is
                        standard output)
  -f, --force           get: replace an existing FILE; remove: no error when
                        there is no entry
      --json            list: JSON instead of a table
\(cacheQuietEntry)
  -v, --verbose         put, get: a line with the sizes; remove, clear, prune:
                        what was removed
  -h, --help            show this help (with an action: that action's)

A miss says why on standard error (gzstream: cache: KEY: not found, expired, or
damaged entry removed: ...); -q keeps a script's test for a hit quiet: gzstream
cache get -q KEY -o FILE.

\(cacheExitStatusLines)
"""

let cacheDirectoryEntries = """
      --dir DIR         the cache directory (default: $XDG_CACHE_HOME/gzstream,
                        or $HOME/.cache/gzstream); made, mode 0700, by a put;
                        refused unless yours and writable by no one else (and
                        not a symbolic link)
      --key-file FILE   encrypt and authenticate entries with the key in FILE
                        (32 raw bytes); give the same key to every command on
                        that cache
"""

let cacheMaximumSizeEntry = """
      --max-size SIZE   the most bytes of entry files: after each put and by
                        prune, least recently used entries are removed until the
                        rest fit (bytes, or with a unit: 2G, 1.5GiB, 500MB)
"""

let cacheMaximumAgeEntry = """
      --max-age AGE     an entry unused for longer is a miss for get and is
                        removed by prune (seconds; s, m, h, d suffixes)
"""

let cacheQuietEntry = """
  -q, --quiet           say nothing of a miss that is not found or expired
                        (damage is said)
"""

let cacheExitStatusLines = """
Exit status: 0 success (get: a hit); 1 a miss (get, remove) or an error; 2 a put
whose entry alone is larger than --max-size (stored, then removed at once).

"""

extension CacheOptions.Action {
    /// This action's help: its usage and the options it takes.
    var helpText: String {
        let (usage, about, options): (String, String, String)
        switch self {
        case .put:
            usage = "put [OPTIONS] KEY [FILE]"
            about = """
            Store FILE (- or none: standard input) under KEY, replacing its entry once the
            new one is whole; a put whose input fails stores nothing and keeps the old one.
            """
            options = """
            \(cacheDirectoryEntries)
            \(cacheMaximumSizeEntry)
              -0 ... -12            compression level (default 6); also --level N
              -p, --threads N       deflating threads (default: the processors available)
              -v, --verbose         a line with the sizes
            """
        case .get:
            usage = "get [OPTIONS] KEY [-o FILE]"
            about = """
            Check KEY's whole entry, then write its bytes to standard output, or to FILE
            (through a temporary file beside it, renamed into place at the end). A damaged
            entry is removed and is a miss: exit 1, and a line on standard error.
            """
            options = """
            \(cacheDirectoryEntries)
            \(cacheMaximumAgeEntry)
              -o, --output FILE     write FILE instead of standard output (- is standard
                                    output)
              -f, --force           replace an existing FILE
            \(cacheQuietEntry)
              -v, --verbose         a line with the sizes
            """
        case .list:
            usage = "list [OPTIONS]"
            about = "One row per entry, least recently used first."
            options = """
            \(cacheDirectoryEntries)
                  --json            JSON instead of a table
            """
        case .remove:
            usage = "remove [OPTIONS] KEY"
            about = "Remove KEY's entry; a missing entry is a miss (exit 1) unless -f."
            options = """
            \(cacheDirectoryEntries)
              -f, --force           no error when there is no entry
              -v, --verbose         what was removed
            """
        case .clear, .prune:
            usage = "\(self) [OPTIONS]"
            about = self == .clear ? "Remove every entry."
                : "Remove what --max-size and --max-age leave out, now."
            options = """
            \(cacheDirectoryEntries)
            \(self == .prune ? cacheMaximumSizeEntry + "\n" + cacheMaximumAgeEntry + "\n" : "")\
              -v, --verbose         what was removed
            """
        }
        return """
        Usage: gzstream cache \(usage)

        \(about)

        Options:
        \(options)
          -h, --help            show this help

        \(cacheExitStatusLines)
        """
    }
}

/// gzip mode's help (`gzip --help` through a link named gzip, `gzstream help gzip`): GNU
/// gzip's options in gzip's order, then the options gzstream adds to them.
let gzipHelpText = """
Usage: gzstream [OPTION]... [FILE]...
Compress or uncompress FILEs, as GNU gzip (by default, compress FILES in-place).
Called as gunzip it decompresses (gzip -d), as zcat or gzcat it writes standard
output (gzip -dc). With no FILE, or when FILE is -, read standard input.

Options:
  -c, --stdout          write on standard output, keep the input files
  -d, --decompress      decompress (also --uncompress)
  -f, --force           overwrite existing outputs; read or write compressed
                        data on a terminal; follow symbolic links; take files
                        with other links; compress x.gz to x.gz.gz; with -dc,
                        copy input that is not gzip unchanged (zcat -f)
  -h, --help            show this help
  -k, --keep            keep the input files (also kept with -c or -o)
  -l, --list            gzip's table, a row per file (-v adds CRC-32 and date)
  -L, --license         show the licence
  -n, --no-name         do not store or restore the name and time (MTIME 0)
  -N, --name            store or restore the original name and time
  -q, --quiet           no warnings
  -r, --recursive       walk the directories named: each regular file in them
  -S, --suffix SUF      use SUF instead of .gz
      --synchronous     fsync each output file and its directory before the
                        input is removed (safer if the system crashes, slower)
  -t, --test            check each compressed file's integrity
  -v, --verbose         one line per file on standard error: sizes, space saved
  -V, --version         show the version and the libraries' versions
  -0 ... -9             compression level: -1 fastest, -9 best, -0 stored
                        (default 6); also -10 ... -12: smaller than -9, slower
      --fast, --best    the same as -1 and -9
      --rsyncable       chunk boundaries chosen from the content (as gzip's)

gzstream's own options (see gzstream help pack and gzstream help unpack):
  -o, --output PATH     write to PATH (one input; - is standard output)
      --level N         compression level 0 to 12
  -p, --threads N       deflate, or inflate BGZF or indexed input, on N threads
  -b, --block-size N    KiB of input per chunk, as pigz (default 1024), or SIZE
      --engine NAME     chunks (default) or zlib
      --bgzf            write BGZF (blocked gzip, as bgzip)
      --index           also write an index beside the output
\(chunkSizeEntry)
\(maximumOutputEntry)
      --strict          decompress with zlib, failing on what zlib rejects

The GZIP environment variable may hold options that tune the output (-1 ... -9,
--fast, --best, -n, -N, -q, -v, --rsyncable), read before the command line, with
gzip's warning that it is deprecated; any other option there is refused.

\(sizeLines)
\(exitStatusLines)
"""

let toolVersion = "0.1.0"

/// What `-L` and `--license` print, in the shape of GNU gzip's `-L`.
let licenseText = """
gzstream \(toolVersion)
This is free software: you may redistribute copies of it under the terms of
the Apache License, Version 2.0 <https://www.apache.org/licenses/LICENSE-2.0>.
There is NO WARRANTY, to the extent permitted by law.

"""

let helpText = """
gzstream \(toolVersion): streaming gzip (RFC 1952) in constant memory.

Usage: gzstream [OPTIONS] [FILE ...]          as GNU gzip: compress each FILE to FILE.gz and
                                              remove it; -d decompress, -t test, -l list
       gzstream pack [OPTIONS] [FILE ...]     compress each FILE to FILE.gz
       gzstream unpack [OPTIONS] [FILE ...]   decompress each FILE.gz (or .tgz) to FILE (.tar)
       gzstream test [OPTIONS] [FILE ...]     decode and check every member; write nothing
       gzstream list [--json] [FILE ...]      one row per member: offset, header, sizes, CRC-32
       gzstream index [-f] FILE.gz ...        write FILE.gz.gzidx, indexed_gzip's index, or for
                                              a BGZF file FILE.gz.gzi, bgzip's
       gzstream send HOST:PORT [FILE]         pack FILE onto a TCP connection to HOST:PORT
       gzstream receive [HOST:]PORT [-o FILE] take one TCP connection and unpack it
       gzstream cache COMMAND [ARGS]          a cache of streams on disk: put, get, list,
                                              remove, clear, prune (gzstream cache --help)

With no FILE, or when FILE is -, read standard input and write standard output.
The commands keep their inputs unless --rm is given. Without a command (and when called
as gzip, as gunzip, i.e. gzip -d, or as zcat or gzcat, i.e. gzip -dc), gzstream runs as
gzip: inputs are removed once their output is in place, unless -k, -c or -o. A file named
like a command (pack, unpack, test, list, index, send, receive, cache, help) is given as
./pack or after --; a first word that names no file and is a letter or two from a command
(tset) is refused. An existing output is never replaced without -f.

Options:
  -d, --decompress      as gzip: decompress (also --uncompress), as unpack
  -t, --test            as gzip: test, as the test command
  -l, --list            as gzip: gzip's table, a row per file (-v adds CRC-32 and date)
  -c, --stdout          write to standard output, keep the input files
  -o, --output PATH     write to PATH (one input; - is standard output); when PATH is a
                        directory, write each output in it under its default name
  -f, --force           overwrite existing outputs; read or write compressed data on a
                        terminal; follow symbolic links; read a FIFO or device into -o
                        FILE (file mode never takes one); take files with other links; pack x.gz to x.gz.gz; unpack -c:
                        copy input that is not gzip unchanged (zcat -f)
  -r, --recursive       walk the directories named: each regular file in them in place
                        (symbolic links not followed); without -r a directory is skipped
  -S, --suffix SUF      pack writes FILE+SUF instead of FILE.gz; unpack also takes SUF
  -0 ... -9             compression level: -1 fastest, -9 best, -0 stored (default 6);
                        pack also -10 ... -12: smaller than -9, slower
      --fast, --best    the same as -1 and -9
      --level N         compression level 0 to 12 (0 stores without compressing)
      --chunk-size N    bytes per read and per write, at most (default 4096, up to 64M;
                        K, M suffixes: KiB, MiB); unpack writes 128K unless it is given
  -p, --threads N       pack: deflate on N threads; unpack, test: inflate BGZF input, or
                        a file with an index, on N threads (default: every core available)
  -b, --block-size N    pack: N KiB of input per parallel chunk (default 1024; with
                        --engine zlib, per block: default 128; K, M suffixes);
                        the output depends on the level and block size, not on -p
      --max-output N    unpack, test, list: stop with an error past N decompressed bytes
                        (K, M, G, T suffixes: KiB, MiB, GiB, TiB)
      --strict          unpack: decode with zlib, failing on deflate data it rejects that
                        ISA-L accepts (test and list always do: what they pass, zlib reads)
      --json            list: JSON instead of a table
      --offset N        unpack with -c or -o: write the plain bytes from offset N of FILE.gz
                        on, through its index (FILE.gz.gzi, FILE.gz.gzidx); K, M, G, T suffixes
      --length N        with --offset: at most N bytes (default: to the end)
      --engine NAME     pack: chunks (default: libdeflate or ISA-L, about twice zlib's
                        speed) or zlib (pigz's design, zlib's deflate; levels 0 to 9)
      --bgzf            pack: BGZF (blocked gzip, as bgzip): members of at most 64 KiB
                        deflated by libdeflate on -p N threads (default: all cores);
                        no name or time is stored
      --index PATH      unpack, test: read FILE through the GZIDX (or gztool) index at PATH,
                        not FILE.gzidx beside it (with one, spans decode on -p threads)
      --index           pack: also write an index beside the output file: OUTPUT.gzidx
                        (indexed_gzip's GZIDX, a point at each chunk), or with --bgzf
                        OUTPUT.gzi (bgzip's); an existing one is replaced only with -f
      --span SIZE       index: a GZIDX point every SIZE plain bytes (default 16M; a number
                        alone counts KiB; K, M, G suffixes); a 32 KiB window each
      --rsyncable       pack: chunk boundaries chosen from the content, so that rsync
                        and backups find what an edit did not change (as gzip's)
  -N, --name            pack: store the file name and modification time (the default);
                        unpack: restore them from the header
  -n, --no-name         pack: store neither (MTIME 0); unpack: do not restore them (the default)
      --synchronous     fsync each output file and its directory once it is in place,
                        before the input is removed (safer if the system crashes; slower)
      --rm              remove each input after it was processed without error
  -k, --keep            keep the inputs (the commands' default)
  -q, --quiet           no warnings, and no progress unless --progress is given
  -v, --verbose         one line per file on standard error: sizes and space saved
      --progress        pack, unpack, test: show progress on standard error (bytes in and
                        out, rate, percent and time left), also when it is not a terminal
      --no-progress     do not; by default it is shown when standard error is a terminal,
                        once a job has run for a second (not when the output goes there
                        too, nor in gzip mode)
      --timeout SECONDS send, receive: give up (exit 1, "timed out") when connecting, waiting
                        for the connection, or any read or write on it takes that long
      --deadline TIME   send, receive: give up (exit 1) when the whole transfer, from
                        connecting or accepting to the acknowledgement, takes longer
                        (seconds, fractions allowed, or with s, m, h: 90, 0.5, 15m, 2h)
      --key-file FILE   send, receive: encrypt and authenticate with the 32 raw bytes in FILE
                        (the cache's format); give both sides the same key
  -h, --help            show this help
  -V, --version         show the version
  -L, --license         show the licence

send packs as pack does (-0 ... -12, -p, -b, --engine, --rsyncable, --bgzf, -n) and half-closes the connection at the
end; it then waits for receive's acknowledgement, sent once receive has read, checked and
written everything: exit 0 means that. A receiver that is not gzstream (nc -l) sends none, so
send then exits 1 ("no acknowledgement"), whether or not the data arrived.
HOST is a name, an IPv4 address or a bracketed IPv6 address ([::1]:8734).
receive listens on HOST (default 127.0.0.1: this machine only), takes one connection and unpacks
it to standard output, or to -o FILE with unpack's rules (-f, --max-output; no FILE is left when
it fails). Port 0 takes any free port; receive says where it listens on standard error
("gzstream: listening on 127.0.0.1:PORT") when the port is 0, or with -v. When receive fails
it resets the connection, so that a send still waiting fails too. Without --key-file, whoever
connects first supplies the data (receive warns when HOST is not loopback): give --max-output.
With --key-file, receive sends a fresh challenge the data key depends on, and authenticates each
64 KiB chunk before unpacking it: a wrong key, a replayed session or a cut leaves no -o FILE
(standard output gets only authenticated data, and a cut exits 1).

In gzip mode the GZIP environment variable may hold options that tune the output (-1 ... -9,
--fast, --best, -n, -N, -q, -v, --rsyncable), read before the command line, with gzip's
warning that it is deprecated; any other option there is refused. The commands ignore it.

Exit status: 0 success, 1 error, 2 warning (for example trailing garbage after the last member,
which is ignored once the data before it has been written).

"""

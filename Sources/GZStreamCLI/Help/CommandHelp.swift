// Each command's help: its usage and the options it takes, built from the entries that
// several helps share (HelpText.swift), so that an option reads the same in each.

let packHelpText = """
Usage: gzstream pack [OPTIONS] [FILE ...]
       gzstream pack --tar [OPTIONS] FILE ...

Compress each FILE to FILE.gz, keeping FILE unless --rm is given. With no FILE,
or when FILE is -, read standard input and write standard output. An existing
output is never replaced without -f. With --tar, write one tar archive of them
all instead.

Options:
\(stdoutOutputEntries)
  -f, --force           overwrite existing outputs; write compressed data to a
                        terminal; follow symbolic links; take files with other
                        links; pack x.gz to x.gz.gz
\(recursiveEntry)
  -S, --suffix SUF      write FILE+SUF instead of FILE.gz
\(levelEntries)
\(packEngineEntries)
      --index           also write an index beside the output file: OUTPUT.gzidx
                        (indexed_gzip's GZIDX, a point at each chunk), or with
                        --bgzf OUTPUT.gzi (bgzip's); with --tar also the member
                        index OUTPUT.tarix; replaced only with -f
      --tar             archive the FILEs and directories (with all under them)
                        as one tar (ustar, pax headers where needed) into
                        FILE.tar.gz beside the one FILE, -o ARCHIVE or -c
      --mtime TIME      with --tar: store this modification time for each
                        member: @SECONDS, YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM]
                        (local time without a zone), or the time of ./FILE
      --owner NAME[:ID] with --tar: store this owner for each member (NAME
                        alone: its ID on this system; a number alone: the ID)
      --group NAME[:ID] with --tar: store this group, as --owner
      --numeric-owner   with --tar: store owner and group IDs without names
\(chunkSizeEntry)
  -N, --name            store the file name and modification time (the default)
  -n, --no-name         store neither (MTIME 0)
\(keepOrRemoveEntries)
\(quietVerboseEntries)
\(progressEntries)
\(helpEntry)

\(sizeLines)
pack --tar stores regular files, directories, symbolic links, hard links (a
later name of a file as a link to the first), devices and FIFOs (headers), in
bytewise order of names, with leading / removed; permissions, owner, group and
the modification time in whole seconds. It does not store sockets (skipped with
a warning), access or change times, extended attributes, ACLs or holes (sparse
files are stored whole). The gzip header holds no name or time. A file that
cannot be read is reported and left out, the rest archived (exit status 1); a
file that changed while read is a warning (2).
"""

let unpackHelpText = """
Usage: gzstream unpack [OPTIONS] [FILE ...]
       gzstream unpack [-C DIR] [-f] ARCHIVE.tar.gz MEMBER ...
       gzstream unpack -c ARCHIVE.tar.gz MEMBER
       gzstream unpack --extract [-C DIR] [-f] ARCHIVE.tar.gz

Decompress each FILE.gz (or .tgz) to FILE (.tar), keeping FILE.gz unless --rm is
given. With no FILE, or when FILE is -, read standard input and write standard
output. An existing output is never replaced without -f.

With MEMBER names after a tar archive (.tar.gz or .tgz), extract those members
(a directory's name takes all it holds) into -C DIR or the current directory,
or with -c write one member's content to standard output; --extract extracts
every member. Names with "..", links that lead out of DIR (unless
--links-outside) and links on the way to a member are refused; devices and
FIFOs are skipped with a warning; an existing file is kept without -f.

Options:
\(stdoutOutputEntries)
  -f, --force           overwrite existing outputs; read compressed data from a
                        terminal; follow symbolic links; read a FIFO or device
                        into -o FILE; take files with other links; with -c, copy
                        input that is not gzip unchanged (zcat -f)
\(recursiveEntry)
  -S, --suffix SUF      also take FILE+SUF, and write FILE
  -C, --directory DIR   extract tar members into DIR (default: the current
                        directory), which must exist; a symbolic link to it is
                        followed when it is yours or root's
      --extract         extract every member of the tar archive FILE
      --links-outside   make symbolic links whose targets leave DIR (absolute,
                        or climbing out with ..) as stored, instead of refusing
      --same-owner      as root, give what is extracted the owner and group IDs
                        stored (not the names); an error when not root
      --no-same-owner   what is extracted belongs to the user running gzstream,
                        root too (the default)
  -p, --threads N       inflate BGZF input, or a file with an index, on N
                        threads (default: every core available)
\(maximumOutputEntry)
      --strict          decode with zlib, failing on deflate data it rejects
                        that ISA-L accepts
      --index PATH      read FILE through the index at PATH (GZIDX, gztool's, or
                        a BGZF file's .gzi), not the one beside it (spans
                        decode on -p threads)
      --write-index     also write FILE.gzidx beside each FILE from this decode
                        (not BGZF: index writes its .gzi)
      --offset SIZE     with -c or -o: write the plain bytes from offset SIZE
                        of FILE.gz on, through its index (FILE.gz.gzi,
                        FILE.gz.gzidx)
      --length SIZE     write at most SIZE bytes from --offset (default 0) on
      --whole-lines     with --offset or --length: write the lines that start in
                        the range, whole (a split's lines, as Hadoop reads them)
      --lines N[:M]     with -c or -o: write lines N to M (from 1; default: to
                        the end), as sed -n 'N,Mp', through the line count in
                        FILE.gzidx, else counted from the start
\(chunkSizeEntry)
  -N, --name            restore the name and modification time from the header
  -n, --no-name         do not restore them (the default)
\(keepOrRemoveEntries)
  -q, --quiet           no warnings, and no progress unless --progress is given
  -v, --verbose         one line per file on standard error: sizes, space saved;
                        for tar members, each name once extracted, on standard
                        output (with -c, standard error), as tar -xv
\(progressEntries)
\(helpEntry)

\(sizeLines)
"""

let testHelpText = """
Usage: gzstream test [OPTIONS] [FILE ...]

Decode each FILE (- or none: standard input) and check every member's CRC-32 and
length; write nothing. What test passes, zlib reads.

Options:
  -f, --force           with --write-index, replace an existing index; read
                        compressed data from a terminal; follow symbolic links
\(recursiveEntry)
  -p, --threads N       inflate BGZF input, or a file with an index, on N
                        threads (default: every core available)
\(maximumOutputEntry)
      --index PATH      read FILE through the index at PATH (GZIDX, gztool's, or
                        a BGZF file's .gzi)
      --write-index     also write FILE.gzidx beside each FILE from this decode
                        (not BGZF: index writes its .gzi)
\(quietVerboseEntries)
\(progressEntries)
\(helpEntry)

\(sizeLines)
"""

let listHelpText = """
Usage: gzstream list [OPTIONS] [FILE ...]
       gzstream list --members [-v] [--json] ARCHIVE [MEMBER ...]

One row per member of each FILE (- or none: standard input): its offset, header,
sizes and CRC-32, checked as test checks them. With --members, the members of
the tar archive ARCHIVE (.tar.gz or .tar), one name a line as tar -t prints
them: through its member index (written by gzstream index) when there is one,
else in one pass over the archive. A MEMBER is a name (a directory chooses what
is under it) or a pattern with *, ? or [...].

Options:
      --members         list the members of the tar archive ARCHIVE
  -v, --verbose         with --members: tar -tv's long lines
      --json            JSON instead of a table
\(recursiveEntry)
\(maximumOutputEntry)
\(helpEntry)

\(sizeLines)
"""

let indexHelpText = """
Usage: gzstream index [OPTIONS] FILE.gz ...

Write FILE.gz.gzidx beside each FILE.gz: indexed_gzip's GZIDX index, through
which unpack --offset and unpack -p read. For a BGZF file, write FILE.gz.gzi
(bgzip's). When FILE.gz holds a tar archive, one decode also writes its member
index, FILE.gz.tarix, through which list --members and unpack of members read.

Options:
  -o, --output PATH     write the index to PATH, not beside FILE.gz (one FILE)
  -f, --force           replace an existing index; follow a symbolic link FILE
      --span SIZE       a GZIDX point every SIZE plain bytes (at least 32K); a
                        32 KiB window each. Default: every 16M and 3200K of
                        FILE.gz apart at least, an index within 1% of FILE.gz.
                        A number alone still counts KiB, with a warning:
                        write 64K, not 64
      --strict          build a GZIDX index with zlib (test's verdict; a point
                        at the first deflate block boundary after each span)
      --plan SIZE       write no index: print splits of about SIZE plain bytes
                        at the access points of FILE.gz's index (OFFSET LENGTH)
      --json            with --plan: one JSON object per FILE
      --no-tar          write no member index of a tar archive
\(helpEntry)

\(sizeLines)
"""

let sendHelpText = """
Usage: gzstream send [OPTIONS] HOST:PORT [FILE]

Pack FILE (- or none: standard input) onto a TCP connection to HOST:PORT, as
pack does, and half-close it at the end; then wait for receive's
acknowledgement, sent once receive has read, checked and written everything:
exit 0 means that. A receiver that is not gzstream (nc -l) sends none, so send
then exits 1 ("no acknowledgement"), whether or not the data arrived. HOST is a
name, an IPv4 address or a bracketed IPv6 address ([::1]:8734).

Options:
\(levelEntries)
\(packEngineEntries)
  -n, --no-name         store no name and no time (MTIME 0)
\(networkEntries)
\(quietVerboseEntries)
\(helpEntry)

\(sizeLines)
"""

let receiveHelpText = """
Usage: gzstream receive [OPTIONS] [HOST:]PORT

Listen on HOST (default 127.0.0.1: this machine only), take one connection and
unpack it to standard output, or to -o FILE with unpack's rules (no FILE is left
when it fails). Port 0 takes any free port; receive says where it listens on
standard error when the port is 0, or with -v. When receive fails it resets the
connection, so that a send still waiting fails too. Without --key-file, whoever
connects first supplies the data: give --max-output. With --key-file, receive
sends a fresh challenge the data key depends on, and authenticates each 64 KiB
chunk before unpacking it: a wrong key, a replayed session or a cut leaves no -o
FILE (standard output gets only authenticated data, and a cut exits 1).

Options:
  -o, --output PATH     write to PATH (- is standard output)
  -f, --force           replace an existing -o FILE
\(maximumOutputEntry)
\(networkEntries)
\(quietVerboseEntries)
\(helpEntry)

\(sizeLines)
"""

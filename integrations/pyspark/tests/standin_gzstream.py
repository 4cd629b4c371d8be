#!/usr/bin/env python3
"""A stand-in for the two gzstream options the data source needs, until the CLI has them.

``index --plan SIZE --json F`` and ``unpack -c --offset N [--length M] --whole-lines [--index I]
F``, as the contract says, decoding F whole with Python's gzip; any other command goes to the
real gzstream named by $GZSTREAM_REAL. An index older than its file counts as stale.
"""
import gzip, json, os, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hadoop_lines import whole_lines

def stream_whole_lines(real, path, offset, length):
    """The lines starting in [offset, offset + length), decoded by the real gzstream.

    Decodes from offset - 1 (through the index when there is one), to see whether a line
    begins at offset; the first line begins after the first newline at or past offset - 1
    (or at 0), and the last ends at the first newline at or past end - 1.
    """
    end = None if length is None else offset + length
    begin = max(offset - 1, 0)
    if os.path.exists(path + ".gzidx"):
        command = [real, "unpack", "-c", "--offset", str(begin), path]
        position = begin
    else:
        command = [real, "unpack", "-c", path]
        position = 0
    child = subprocess.Popen(command, stdout=subprocess.PIPE)
    out = sys.stdout.buffer
    start = 0 if offset == 0 else None  # absolute position of the first line, once known
    while True:
        chunk = child.stdout.read(1 << 20)
        if not chunk:
            break
        chunk_end = position + len(chunk)
        if start is None:
            low = max(offset - 1 - position, 0)
            if low < len(chunk):
                newline = chunk.find(b"\n", low)
                if newline >= 0:
                    start = position + newline + 1
        if start is not None and end is not None and start >= end:
            break  # no line starts in the split
        if start is not None and max(start, position) < chunk_end:
            low = max(start - position, 0)
            stop = None
            if end is not None:
                newline = chunk.find(b"\n", max(end - 1 - position, low))
                if newline >= 0 and position + newline >= end - 1:
                    stop = newline + 1
            out.write(chunk[low:stop] if stop is not None else chunk[low:])
            if stop is not None:
                break
        position = chunk_end
    child.kill()
    child.wait()
    return 0

def main(argv):
    real = os.environ.get("GZSTREAM_REAL", "gzstream")
    if argv[:2] == ["index", "--plan"]:
        size, path = int(argv[2]), argv[-1]
        index = path + ".gzidx"
        if not os.path.exists(index):
            message = f"{path}: no index ({index}); one split for the whole file"
            print(f"gzstream: {message}", file=sys.stderr)
            print(json.dumps({"file": path, "compressedSize": os.path.getsize(path), "index": None,
                              "plainSize": None, "splits": [{"offset": 0, "length": None}], "warning": message}))
            return 0
        import struct
        recorded = struct.unpack_from("<Q", open(index, "rb").read(15), 7)[0]
        if recorded != os.path.getsize(path):
            print(f"gzstream: {path}: the index {index} is stale (the file changed after it was made)", file=sys.stderr)
            return 1
        plain = struct.unpack_from("<Q", open(index, "rb").read(23), 15)[0]
        size = max(32768, size // 32768 * 32768)  # splits start at access points, as gzstream's do
        splits = [{"offset": o, "length": min(size, plain - o)} for o in range(0, plain, size)] or [{"offset": 0, "length": 0}]
        print(json.dumps({"file": path, "compressedSize": os.path.getsize(path), "index": index,
                          "plainSize": plain, "splits": splits, "warning": None}))
        return 0
    if argv[:1] == ["help"]:
        print("--whole-lines --plan")
        return 0
    if argv[:1] == ["unpack"] and "--whole-lines" in argv:
        offset = int(argv[argv.index("--offset") + 1])
        length = int(argv[argv.index("--length") + 1]) if "--length" in argv else None
        return stream_whole_lines(real, argv[-1], offset, length)
    os.execvp(real, [real] + argv)

sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""A stand-in for the two gzstream options the data source needs, until the CLI has them.

``index --plan SIZE --json F`` and ``unpack -c --offset N [--length M] --whole-lines [--index I]
F``, as the contract says, decoding F whole with Python's gzip; any other command goes to the
real gzstream named by $GZSTREAM_REAL. An index older than its file counts as stale.
"""
import gzip, json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hadoop_lines import whole_lines

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
        plain = len(gzip.open(path).read())
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
        data = gzip.open(argv[-1]).read()
        sys.stdout.buffer.write(whole_lines(data, offset, length))
        return 0
    os.execvp(real, [real] + argv)

sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Compares two extracted trees entry by entry: type, permission bits, mtime (ns), size, SHA-256 of
content, symbolic link target, hard-link groups. Prints each difference and a count; exit 1 when any.

Usage: scripts/tar-tree-diff.py TREE-A TREE-B   (e.g. gzstream unpack --extract's and tar -xzf's)
Owners are not compared (gzstream applies none unless asked; GNU tar as root restores them)."""
import os, sys, stat, hashlib
def walk(root):
    out = {}
    inodes = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n); rel = os.path.relpath(p, root)
            st = os.lstat(p)
            rec = {"type": stat.S_IFMT(st.st_mode), "mode": oct(stat.S_IMODE(st.st_mode)), "mtime_ns": st.st_mtime_ns,
                   "size": st.st_size if stat.S_ISREG(st.st_mode) else None}
            if stat.S_ISLNK(st.st_mode): rec["link"] = os.readlink(p)
            if stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(p, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""): h.update(chunk)
                rec["sha"] = h.hexdigest()
                if st.st_nlink > 1: inodes.setdefault((st.st_dev, st.st_ino), []).append(rel)
            out[rel] = rec
    groups = {}
    for names in inodes.values():
        key = tuple(sorted(names))
        for n in names: groups[n] = key
    for rel, rec in out.items(): rec["links"] = groups.get(rel)
    return out
a, b = walk(sys.argv[1]), walk(sys.argv[2])
diffs = 0
for rel in sorted(set(a) | set(b)):
    if rel not in a or rel not in b:
        print("only in", sys.argv[1] if rel in a else sys.argv[2], rel); diffs += 1; continue
    for k in a[rel]:
        if a[rel][k] != b[rel][k]:
            print(f"{rel}: {k}: {a[rel][k]!r} vs {b[rel][k]!r}"); diffs += 1
print(f"{len(a)} vs {len(b)} entries, {diffs} differences")
sys.exit(1 if diffs else 0)

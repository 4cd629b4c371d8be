"""Shared fixtures: the gzstream binary under test, seeded inputs, gzip files with their indexes.

The binary is $GZSTREAM (``make test-spark`` sets it to the checkout's build). Every input is
made here from a fixed seed, in a temporary folder; nothing large is committed.
"""

from __future__ import annotations

import gzip
import os
import random
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def gzstream() -> str:
    """The gzstream executable the tests run; it must have ``--whole-lines`` and ``--plan``."""
    binary = shutil.which(os.environ.get("GZSTREAM", "gzstream"))
    if binary is None:
        pytest.fail("no gzstream: set GZSTREAM to the binary to test (make test-spark does)")
    unpack_help = subprocess.run([binary, "help", "unpack"], capture_output=True, text=True).stdout
    index_help = subprocess.run([binary, "help", "index"], capture_output=True, text=True).stdout
    if "--whole-lines" not in unpack_help or "--plan" not in index_help:
        pytest.fail(f"{binary} has no unpack --whole-lines or index --plan: build the checkout first")
    return binary


def log_lines(byte_count: int, seed: int) -> bytes:
    """Deterministic web-server-like log lines, about ``byte_count`` bytes, each ending in \\n.

    - Parameters: byte_count: the size wanted, in bytes (the result stops at the first whole
      line at or past it). seed: the generator's seed; the same seed gives the same bytes.
    """
    generator = random.Random(seed)
    methods = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
    statuses = [200, 200, 200, 200, 304, 404, 500]
    paths = [f"/api/v{version}/{noun}" for version in (1, 2) for noun in
             ("users", "orders", "items", "search", "health", "login", "cart")]
    lines = []
    size = 0
    second = 1_700_000_000
    while size < byte_count:
        second += generator.randrange(3)
        line = (f"10.{generator.randrange(256)}.{generator.randrange(256)}.{generator.randrange(256)} "
                f"[{second}] \"{generator.choice(methods)} {generator.choice(paths)}"
                f"?id={generator.randrange(1 << 30)} HTTP/1.1\" {generator.choice(statuses)} "
                f"{generator.randrange(100_000)} {generator.randrange(5000)}ms\n")
        lines.append(line)
        size += len(line)
    return "".join(lines).encode()


def write_gzip(path, data: bytes) -> str:
    """Writes ``data`` as one gzip member (level 6) at ``path``; returns the path as a string."""
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as file:
        file.write(data)
    return str(path)


def make_index(gzstream: str, path: str, span: str = "32K") -> str:
    """Runs ``gzstream index --span SPAN PATH``; returns the index's path (PATH.gzidx)."""
    subprocess.run([gzstream, "index", "-f", "--span", span, path], check=True)
    return path + ".gzidx"

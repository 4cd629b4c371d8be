"""Shared fixtures: the gzstream binary under test, seeded inputs, gzip files with their indexes,
the edge files, and one local Spark session that has both data sources.

The binary is $GZSTREAM (``make test-spark`` sets it to the checkout's build); the JVM source's
jar is $GZSTREAM_SPARK_JAR (``make test-spark`` builds it; without it the JVM source's tests are
skipped, saying so). Every input is made here from a fixed seed, in a temporary folder; nothing
large is committed.
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

#: The two data sources, which the Spark tests run alike: the Python one (integrations/pyspark)
#: and the JVM one (integrations/spark-jvm).
PYTHON_FORMAT = "gzidx"
JVM_FORMAT = "gzidx-jvm"


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


def _long_line_file() -> bytes:
    """Short lines around one 150 KB line, so that one line spans several splits and points."""
    generator = random.Random(7)
    short = b"".join(b"s%d\n" % number for number in range(2000))
    long = bytes(generator.choice(b"abcdefgh ") for _ in range(150_000)) + b"\n"
    return short + long + short


def _ragged_file(with_final_newline: bool) -> bytes:
    """Lines of 0 to 300 bytes (many empty), seeded; with or without a final newline."""
    generator = random.Random(11)
    lines = [b"x" * generator.choice([0, 0, 1, 2, 79, 80, 81, 300]) for _ in range(1500)]
    text = b"\n".join(lines)
    return text + b"\n" if with_final_newline else text + b"tail"


#: Files chosen for the line rule's corners, by name.
EDGE_FILES = {
    "empty": b"",
    "one-newline": b"\n",
    "one-byte-no-newline": b"x",
    "empty-lines": b"\n\n\na\n\n\nbb\n\n",
    "no-final-newline": b"first\nsecond\nthird",
    "crlf-lines": b"one\r\ntwo\r\n\r\n\rthree\r\nlast\r",
    "ragged-final-newline": _ragged_file(True),
    "ragged-no-final-newline": _ragged_file(False),
    "long-line": _long_line_file(),
    "log-lines": log_lines(200_000, seed=3),
}


@pytest.fixture(scope="session")
def edge_files(gzstream, tmp_path_factory):
    """Each edge file gzipped twice, in one folder: ``indexed`` (32 KiB span) and ``plain``.

    - Returns: {name: (plain bytes, {"indexed": path, "plain": path})}.
    """
    folder = tmp_path_factory.mktemp("edge")
    files = {}
    for name, data in EDGE_FILES.items():
        indexed = write_gzip(folder / f"{name}.indexed.gz", data)
        make_index(gzstream, indexed)
        plain = write_gzip(folder / f"{name}.plain.gz", data)
        files[name] = (data, {"indexed": indexed, "plain": plain})
    return files


@pytest.fixture(scope="session")
def spark_jar():
    """The JVM source's jar, or None when $GZSTREAM_SPARK_JAR does not name one."""
    jar = os.environ.get("GZSTREAM_SPARK_JAR")
    if not jar:
        return None
    if not os.path.isfile(jar):
        pytest.fail(f"GZSTREAM_SPARK_JAR names no file: {jar}")
    return jar


@pytest.fixture(scope="session")
def spark(gzstream, spark_jar):
    """One local[2] session for every Spark test (its start, about 10 s, is most of their time),
    with the Python source registered and the JVM source's jar on its class path."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    import gzstream_spark

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["GZSTREAM"] = gzstream  # what executors (local Python workers, this JVM) resolve
    builder = (SparkSession.builder.master("local[2]").appName("gzstream-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2"))
    if spark_jar:
        builder = builder.config("spark.jars", spark_jar)
    session = builder.getOrCreate()
    gzstream_spark.register(session)
    yield session
    session.stop()


@pytest.fixture(params=[PYTHON_FORMAT, JVM_FORMAT])
def source(request, spark_jar) -> str:
    """The format name of each data source in turn; the JVM one is skipped without its jar."""
    if request.param == JVM_FORMAT and not spark_jar:
        pytest.skip("the JVM source is not built: GZSTREAM_SPARK_JAR is not set (make test-spark sets it)")
    return request.param

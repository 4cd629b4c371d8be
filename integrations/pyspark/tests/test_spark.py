"""The ``gzidx`` data source in a local Spark (local[2]): results, partitions, planning errors.

One session for the module; its start (about 10 s) is most of the time these tests take.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zlib

import pytest

from conftest import log_lines, make_index, write_gzip
import gzstream_spark
from gzstream_spark import cli

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import SparkSession, functions as F  # noqa: E402

BIG_FILE_SIZE = 64 << 20


@pytest.fixture(scope="module")
def spark(gzstream):
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["GZSTREAM"] = gzstream  # what executors (here: local Python workers) resolve
    session = (SparkSession.builder.master("local[2]").appName("gzstream-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .getOrCreate())
    gzstream_spark.register(session)
    yield session
    session.stop()


def _line_checksum(data: bytes) -> tuple:
    """(line count, sum of each line's CRC-32), the line's \\n left out: Spark's sum(crc32(value))."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return len(lines), sum(zlib.crc32(line) for line in lines)


def _spark_checksum(frame) -> tuple:
    row = frame.agg(F.count("*").alias("lines"),
                    F.sum(F.crc32(F.col("value").cast("binary"))).alias("crc")).collect()[0]
    return row["lines"], row["crc"] or 0


def test_a_64_mib_log_file_through_local_2(spark, gzstream, tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    data = log_lines(BIG_FILE_SIZE, seed=64)
    path = str(folder / "access.log.gz")
    # gzip -6 as most .gz files in the wild were made, then indexed afterwards.
    with open(path, "wb") as output:
        subprocess.run(["gzip", "-6", "-n", "-c"], input=data, stdout=output, check=True)
    make_index(gzstream, path, span="4M")
    zcat_lines = int(subprocess.run(f"gzip -dc '{path}' | wc -l", shell=True, capture_output=True,
                                    check=True, text=True).stdout)

    frame = spark.read.format("gzidx").option("splitSize", "16m").load(path)
    assert frame.schema.simpleString() == "struct<value:string>"
    assert frame.rdd.getNumPartitions() >= 4
    lines, crc = _spark_checksum(frame)
    assert lines == zcat_lines
    assert (lines, crc) == _line_checksum(data)


def test_a_glob_gives_splits_per_file_and_every_line_in_order(spark, gzstream, tmp_path):
    datas = [log_lines(300_000, seed=seed) for seed in (1, 2, 3)]
    for number, data in enumerate(datas):
        make_index(gzstream, write_gzip(tmp_path / f"part-{number}.gz", data))
    frame = spark.read.format("gzidx").option("splitSize", "64k").load(str(tmp_path / "*.gz"))
    expected = [line.decode() for data in datas for line in data.split(b"\n")[:-1]]
    plans = [cli.plan_file(gzstream, str(tmp_path / f"part-{number}.gz"), 64 << 10) for number in range(3)]
    assert frame.rdd.getNumPartitions() == sum(len(plan.splits) for plan in plans) > 3
    assert [row.value for row in frame.collect()] == expected


def test_a_file_without_index_is_one_partition_with_a_warning(spark, gzstream, tmp_path):
    data = log_lines(100_000, seed=5) + b"no final newline"
    path = write_gzip(tmp_path / "plain.gz", data)
    frame = spark.read.format("gzidx").option("splitSize", "16k").load(path)
    assert frame.rdd.getNumPartitions() == 1
    assert _spark_checksum(frame) == _line_checksum(data)
    # The warning itself, from the reader Spark builds on the driver.
    reader = gzstream_spark.source.GzipIndexReader({"path": path, "splitSize": "16k", "gzstream": gzstream})
    with pytest.warns(gzstream_spark.GzipIndexWarning):
        assert len(reader.partitions()) == 1


def _planning_error(spark, path: str) -> str:
    """The text of the error Spark raises while planning a read of ``path`` (no task runs)."""
    frame = spark.read.format("gzidx").option("splitSize", "16k").load(path)
    with pytest.raises(Exception) as raised:
        frame.rdd.getNumPartitions()  # plans the scan; runs no task
    return str(raised.value)


def _cli_plan_error(gzstream: str, path: str) -> str:
    done = subprocess.run([gzstream, "index", "--plan", "16384", "--json", path], capture_output=True, text=True)
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_stale_index_is_refused_at_planning(spark, gzstream, tmp_path):
    path = write_gzip(tmp_path / "rewritten.gz", log_lines(100_000, seed=8))
    make_index(gzstream, path)
    write_gzip(tmp_path / "rewritten.gz", log_lines(120_000, seed=9))  # rewritten after indexing
    message = _cli_plan_error(gzstream, path)
    assert message in _planning_error(spark, path)


def test_a_foreign_index_is_refused_at_planning(spark, gzstream, tmp_path):
    other = write_gzip(tmp_path / "other.gz", log_lines(100_000, seed=10))
    make_index(gzstream, other)
    path = write_gzip(tmp_path / "mine.gz", log_lines(100_000, seed=11))
    shutil.copyfile(other + ".gzidx", path + ".gzidx")
    message = _cli_plan_error(gzstream, path)
    assert message in _planning_error(spark, path)


def test_options_are_checked_on_the_driver(spark, tmp_path):
    with pytest.raises(Exception, match="no file matches"):
        spark.read.format("gzidx").load(str(tmp_path / "missing-*.gz")).rdd.getNumPartitions()
    path = write_gzip(tmp_path / "a.gz", b"a\n")
    with pytest.raises(Exception, match="splitSize"):
        spark.read.format("gzidx").option("splitSize", "lots").load(path).rdd.getNumPartitions()


def test_registration_is_automatic_and_register_is_harmless_twice(spark):
    # Installed with pip, the package's pyspark_gzidx module registered gzidx before the
    # fixture's register() call; calling it again changes nothing.
    gzstream_spark.register(spark)
    gzstream_spark.register(spark)
    assert spark.read.format("gzidx").schema is not None

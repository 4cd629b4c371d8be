"""Both data sources in a local Spark (local[2]): results, partitions, planning and task errors.

Every test that applies to both runs once per source (the ``source`` fixture: ``gzidx``, the
Python one, and ``gzidx-jvm``, the JVM one); one session serves them all (conftest.py).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
import zlib

import pytest

from conftest import JVM_FORMAT, PYTHON_FORMAT, log_lines, make_index, write_gzip
import gzstream_spark
from gzstream_spark import cli
from hadoop_lines import whole_lines

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import functions as F  # noqa: E402

BIG_FILE_SIZE = 64 << 20


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


def _lines(data: bytes) -> list:
    """The rows a source gives for ``data``: its lines as text, without their \\n."""
    lines = data.decode().split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


@pytest.fixture(scope="module")
def big_file(gzstream, tmp_path_factory):
    """64 MiB of log lines made by gzip -6 (as most .gz files in the wild), indexed afterwards.

    - Returns: (path, plain bytes, the line count ``gzip -dc | wc -l`` gives).
    """
    folder = tmp_path_factory.mktemp("big")
    data = log_lines(BIG_FILE_SIZE, seed=64)
    path = str(folder / "access.log.gz")
    with open(path, "wb") as output:
        subprocess.run(["gzip", "-6", "-n", "-c"], input=data, stdout=output, check=True)
    make_index(gzstream, path, span="4M")
    zcat_lines = int(subprocess.run(f"gzip -dc '{path}' | wc -l", shell=True, capture_output=True,
                                    check=True, text=True).stdout)
    return path, data, zcat_lines


def test_a_64_mib_log_file_through_local_2(spark, source, big_file):
    path, data, zcat_lines = big_file
    frame = spark.read.format(source).option("splitSize", "16m").load(path)
    assert frame.schema.simpleString() == "struct<value:string>"
    assert frame.rdd.getNumPartitions() >= 4
    lines, crc = _spark_checksum(frame)
    assert lines == zcat_lines
    assert (lines, crc) == _line_checksum(data)


@pytest.mark.parametrize("split_size", [1, 1 << 30])
def test_every_edge_file_split_by_split_matches_the_oracle(spark, source, gzstream, edge_files, split_size):
    # Every edge file, indexed and not, read through one glob: each partition's rows must be
    # the oracle's lines of its split, partitions going file by file in name order. A split
    # size of 1 cuts at every access point (32 KiB apart), 1 GiB not at all; the sizes in
    # between are the CLI's tests' (test_whole_lines.py), which run without Spark.
    data_by_path = {path: data for data, paths in edge_files.values() for path in paths.values()}
    folder = os.path.dirname(next(iter(data_by_path)))
    expected = []
    for path in sorted(data_by_path):
        data = data_by_path[path]
        for split in cli.plan_file(gzstream, path, split_size).splits:
            expected.append((os.path.basename(path), split.offset, _lines(whole_lines(data, split.offset, split.length))))
    frame = spark.read.format(source).option("splitSize", str(split_size)).load(os.path.join(folder, "*.gz"))
    assert frame.rdd.getNumPartitions() == len(expected)
    rows = [[] for _ in expected]
    for row in frame.select(F.spark_partition_id().alias("partition"), "value").collect():
        rows[row["partition"]].append(row["value"])
    for (name, offset, lines), got in zip(expected, rows):
        assert got == lines, (name, offset, split_size)


def test_a_glob_gives_splits_per_file_and_every_line_in_order(spark, source, gzstream, tmp_path):
    datas = [log_lines(300_000, seed=seed) for seed in (1, 2, 3)]
    for number, data in enumerate(datas):
        make_index(gzstream, write_gzip(tmp_path / f"part-{number}.gz", data))
    frame = spark.read.format(source).option("splitSize", "64k").load(str(tmp_path / "*.gz"))
    expected = [line.decode() for data in datas for line in data.split(b"\n")[:-1]]
    plans = [cli.plan_file(gzstream, str(tmp_path / f"part-{number}.gz"), 64 << 10) for number in range(3)]
    assert frame.rdd.getNumPartitions() == sum(len(plan.splits) for plan in plans) > 3
    assert [row.value for row in frame.collect()] == expected


def test_a_file_without_index_is_one_partition(spark, source, tmp_path):
    data = log_lines(100_000, seed=5) + b"no final newline"
    path = write_gzip(tmp_path / "plain.gz", data)
    frame = spark.read.format(source).option("splitSize", "16k").load(path)
    assert frame.rdd.getNumPartitions() == 1
    assert _spark_checksum(frame) == _line_checksum(data)


def test_the_python_source_warns_of_a_file_without_index(gzstream, tmp_path):
    # The warning itself, from the reader Spark builds on the driver (the JVM source logs it
    # at WARN, which Spark's log shows).
    path = write_gzip(tmp_path / "plain.gz", b"a\nb\n")
    reader = gzstream_spark.source.GzipIndexReader({"path": path, "splitSize": "16k", "gzstream": gzstream})
    with pytest.warns(gzstream_spark.GzipIndexWarning):
        assert len(reader.partitions()) == 1


def _planning_error(spark, source: str, path: str) -> str:
    """The text of the error Spark raises while planning a read of ``path`` (no task runs)."""
    frame = spark.read.format(source).option("splitSize", "16k").load(path)
    with pytest.raises(Exception) as raised:
        frame.rdd.getNumPartitions()  # plans the scan; runs no task
    return str(raised.value)


def _cli_plan_error(gzstream: str, path: str) -> str:
    done = subprocess.run([gzstream, "index", "--plan", "16384", "--json", path], capture_output=True, text=True)
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_stale_index_is_refused_at_planning(spark, source, gzstream, tmp_path):
    path = write_gzip(tmp_path / "rewritten.gz", log_lines(100_000, seed=8))
    make_index(gzstream, path)
    write_gzip(tmp_path / "rewritten.gz", log_lines(120_000, seed=9))  # rewritten after indexing
    message = _cli_plan_error(gzstream, path)
    assert message in _planning_error(spark, source, path)


def test_a_foreign_index_is_refused_at_planning(spark, source, gzstream, tmp_path):
    other = write_gzip(tmp_path / "other.gz", log_lines(100_000, seed=10))
    make_index(gzstream, other)
    path = write_gzip(tmp_path / "mine.gz", log_lines(100_000, seed=11))
    shutil.copyfile(other + ".gzidx", path + ".gzidx")
    message = _cli_plan_error(gzstream, path)
    assert message in _planning_error(spark, source, path)


def test_options_are_checked_on_the_driver(spark, source, tmp_path):
    with pytest.raises(Exception, match="no file matches"):
        spark.read.format(source).load(str(tmp_path / "missing-*.gz")).rdd.getNumPartitions()
    path = write_gzip(tmp_path / "a.gz", b"a\n")
    with pytest.raises(Exception, match="splitSize"):
        spark.read.format(source).option("splitSize", "lots").load(path).rdd.getNumPartitions()
    for threads in ("0", "257", "lots"):
        with pytest.raises(Exception, match="threads takes a whole number from 1 to 256"):
            spark.read.format(source).option("threads", threads).load(path).rdd.getNumPartitions()


def test_a_corrupt_span_fails_its_task_with_gzstreams_message(spark, source, gzstream, tmp_path):
    # Bytes overwritten in the middle of the deflate data after indexing, the file's times
    # kept (as a disk's decay keeps them): the plan's checks (times, size, tail, first access
    # point) pass, and the task that decodes that span must fail with gzstream's own line
    # rather than give rows.
    path = write_gzip(tmp_path / "damaged.gz", log_lines(1 << 20, seed=12))
    make_index(gzstream, path, span="64K")
    before = os.stat(path)
    with open(path, "r+b") as file:
        file.seek(before.st_size // 2)
        file.write(b"\xff" * 64)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    plan = cli.plan_file(gzstream, path, 128 << 10)
    messages = []
    for split in plan.splits:
        done = subprocess.run(cli.split_arguments(gzstream, split), capture_output=True, text=True, errors="replace")
        if done.returncode != 0:
            messages.append(done.stderr.strip())
    assert len(messages) >= 1 and len(messages) < len(plan.splits)
    frame = spark.read.format(source).option("splitSize", "128k").load(path)
    with pytest.raises(Exception) as raised:
        _spark_checksum(frame)
    assert any(message in str(raised.value) for message in messages), str(raised.value)[:2000]


def _recording_gzstream(folder, gzstream: str):
    """A script that appends its arguments to a log, one run a line, and then becomes gzstream
    (exec); returns (the script, the log)."""
    log = folder / "runs"
    wrapper = folder / "gzstream-recording"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{gzstream}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper, log


def test_each_tasks_gzstream_decodes_on_the_tasks_cores_or_the_threads_option(spark, source, gzstream, tmp_path):
    # The session is local[2] with spark.task.cpus unset (1): each task gets one core, so each
    # task's gzstream gets -p 1, not every core of the machine; the threads option overrides.
    assert spark.sparkContext.getConf().get("spark.task.cpus", "1") == "1"
    data = log_lines(300_000, seed=13)
    path = write_gzip(tmp_path / "threads.gz", data)
    make_index(gzstream, path)
    wrapper, log = _recording_gzstream(tmp_path, gzstream)
    for threads, expected in ((None, "1"), ("3", "3")):
        log.write_text("")
        frame = spark.read.format(source).option("splitSize", "64k").option("gzstream", str(wrapper))
        if threads is not None:
            frame = frame.option("threads", threads)
        frame = frame.load(path)
        assert _spark_checksum(frame) == _line_checksum(data)
        unpacks = [line.split() for line in log.read_text().splitlines() if line.split()[0] == "unpack"]
        assert len(unpacks) == frame.rdd.getNumPartitions() > 1
        for arguments in unpacks:
            assert arguments[:3] == ["unpack", "-c", "-p"] and arguments[3] == expected, arguments


def test_the_jvm_source_kills_and_reaps_gzstream_when_a_limit_is_met(spark, spark_jar, gzstream, big_file, tmp_path):
    if not spark_jar:
        pytest.skip("the JVM source is not built: GZSTREAM_SPARK_JAR is not set (make test-spark sets it)")
    # gzstream through a script that notes each process id and then becomes gzstream (exec).
    pids = tmp_path / "pids"
    wrapper = tmp_path / "gzstream-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$$ $1" >> "{pids}"\nexec "{gzstream}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    path, data, _ = big_file
    frame = spark.read.format(JVM_FORMAT).option("splitSize", "1g").option("gzstream", str(wrapper)).load(path)
    rows = frame.limit(5).collect()
    assert [row.value for row in rows] == [line.decode() for line in data.split(b"\n", 5)[:5]]
    unpacks = [int(line.split()[0]) for line in pids.read_text().splitlines() if line.split()[1] == "unpack"]
    # One split of 64 MiB of lines: gzstream cannot have written it all into the pipe, so it was
    # still running when the task met its limit; the task's close must have ended and reaped it.
    assert len(unpacks) == 1
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{unpacks[0]}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{unpacks[0]}"), "gzstream still runs (or is an unreaped zombie)"


def test_both_sources_side_by_side_and_registration_is_harmless_twice(spark, spark_jar, tmp_path):
    # Installed with pip, the package's pyspark_gzidx module registered gzidx before the
    # fixture's register() call; calling it again changes nothing. The JVM source's own name
    # leaves gzidx to the Python source, so both read in one session.
    gzstream_spark.register(spark)
    gzstream_spark.register(spark)
    path = write_gzip(tmp_path / "both.gz", b"one\ntwo\n")
    formats = [PYTHON_FORMAT] + ([JVM_FORMAT] if spark_jar else [])
    for name in formats:
        assert [row.value for row in spark.read.format(name).load(path).collect()] == ["one", "two"]

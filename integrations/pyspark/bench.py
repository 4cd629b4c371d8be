#!/usr/bin/env python3
"""Measures the gzidx data source against spark.read.text on one big gzip file (not a test).

Makes SIZE bytes of seeded log lines (1 GiB by default) as one gzip member (gzip -6), indexes
it with ``gzstream index``, and in one warm local Spark session times, as medians of RUNS
interleaved rounds:

- count and checksum (sum of CRC-32s) of every line: gzidx (Arrow batches), gzidx with
  rowFormat=tuples (one Python tuple per line), spark.read.text (one task for the whole .gz);
- a regex parse (status code, latency) and a group-by over it, gzidx vs spark.read.text;
- gzidx's count and checksum in local[1] against local[2] (a second session, started after).

Every result is checked equal across the ways. Usage:

    GZSTREAM=.build/release/gzstream .build/spark-venv/bin/python3 integrations/pyspark/bench.py \\
        [--size 1g] [--runs 5] [--split-size 128m] [--workdir DIR]

The input is kept in WORKDIR (default ``$TMPDIR/gzstream-spark-bench``) and reused when its
size matches. Prints a Markdown table to stdout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tests"))
sys.path.insert(0, os.path.join(HERE, "src"))

from conftest import log_lines  # noqa: E402  (the tests' seeded generator)
import gzstream_spark  # noqa: E402
from gzstream_spark.cli import parse_size, resolve_binary  # noqa: E402

LOG_PATTERN = r'" (\d{3}) \d+ (\d+)ms$'


def make_input(workdir: str, size: int, gzstream: str) -> str:
    """The indexed .gz of ``size`` plain bytes in ``workdir``, made unless already there."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, f"access-{size}.log.gz")
    if os.path.exists(path) and os.path.exists(path + ".gzidx"):
        return path
    with open(path + ".tmp", "wb") as output:
        compressor = subprocess.Popen(["gzip", "-6", "-n", "-c"], stdin=subprocess.PIPE, stdout=output)
        piece = 64 << 20
        for number in range(0, size, piece):
            compressor.stdin.write(log_lines(min(piece, size - number), seed=number))
        compressor.stdin.close()
        if compressor.wait() != 0:
            raise SystemExit("gzip failed")
    os.replace(path + ".tmp", path)
    subprocess.run([gzstream, "index", "-f", path], check=True)
    return path


def session(master: str):
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master(master).appName(f"gzstream-spark-bench-{master}")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.driver.memory", "2g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    gzstream_spark.register(spark)
    return spark


def checksum(frame):
    from pyspark.sql import functions as F
    row = frame.agg(F.count("*"), F.sum(F.crc32(F.col("value").cast("binary")))).collect()[0]
    return tuple(row)


def parse_and_group(frame):
    from pyspark.sql import functions as F
    parsed = frame.select(F.regexp_extract("value", LOG_PATTERN, 1).alias("status"),
                          F.regexp_extract("value", LOG_PATTERN, 2).cast("int").alias("ms"))
    rows = parsed.groupBy("status").agg(F.count("*").alias("n"), F.avg("ms").alias("ms")).collect()
    return sorted((row["status"], row["n"], round(row["ms"], 6)) for row in rows)


def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def measure(spark, cases, runs):
    """{name: (median seconds, result)} over ``runs`` interleaved rounds after one warm-up each."""
    times = {name: [] for name in cases}
    results = {}
    for name, function in cases.items():
        results[name] = function(spark)  # warm-up: JIT, Python workers, page cache
    for _ in range(runs):
        for name, function in cases.items():
            seconds, result = timed(lambda: function(spark))
            if result != results[name]:
                raise SystemExit(f"{name}: result changed between runs")
            times[name].append(seconds)
    return {name: (statistics.median(times[name]), results[name]) for name in cases}


def main():
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--size", default="1g")
    arguments.add_argument("--runs", type=int, default=5)
    arguments.add_argument("--split-size", default="128m")
    arguments.add_argument("--workdir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "gzstream-spark-bench"))
    options = arguments.parse_args()
    gzstream = resolve_binary(None)
    os.environ["GZSTREAM"] = gzstream
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    size = parse_size(options.size)
    path = make_input(options.workdir, size, gzstream)

    def gzidx(spark, row_format="arrow"):
        return (spark.read.format("gzidx").option("splitSize", options.split_size)
                .option("rowFormat", row_format).load(path))

    cases = {
        "count+checksum, gzidx (Arrow batches)": lambda spark: checksum(gzidx(spark)),
        "count+checksum, gzidx (tuples)": lambda spark: checksum(gzidx(spark, "tuples")),
        "count+checksum, spark.read.text": lambda spark: checksum(spark.read.text(path)),
        "regex parse + group-by, gzidx": lambda spark: parse_and_group(gzidx(spark)),
        "regex parse + group-by, spark.read.text": lambda spark: parse_and_group(spark.read.text(path)),
    }
    spark = session("local[2]")
    splits = gzidx(spark).rdd.getNumPartitions()
    two = measure(spark, cases, options.runs)
    spark.stop()
    spark = session("local[1]")
    one = measure(spark, {"count+checksum, gzidx (Arrow batches)": cases["count+checksum, gzidx (Arrow batches)"]},
                  options.runs)
    spark.stop()

    for first, second in [(0, 1), (0, 2), (3, 4)]:
        names = list(two)
        if two[names[first]][1] != two[names[second]][1]:
            raise SystemExit(f"results differ: {names[first]} and {names[second]}")
    print(f"{size} plain bytes ({os.path.getsize(path)} compressed), {splits} gzidx splits of "
          f"{options.split_size}; medians of {options.runs} interleaved runs, warm session\n")
    print("| query | local[2] s | MiB/s |")
    print("|---|---:|---:|")
    for name, (seconds, _) in two.items():
        print(f"| {name} | {seconds:.2f} | {size / seconds / 2**20:.0f} |")
    seconds = one["count+checksum, gzidx (Arrow batches)"][0]
    print(f"| count+checksum, gzidx (Arrow batches), local[1] | {seconds:.2f} | {size / seconds / 2**20:.0f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Measures the gzidx data sources against spark.read.text on one big gzip file (not a test).

Makes SIZE bytes of seeded log lines (1 GiB by default) as one gzip member (gzip -6), indexes
it with ``gzstream index``, and in one warm local Spark session times, as medians of RUNS
interleaved rounds:

- count and checksum (sum of CRC-32s) of every line: the Python source ``gzidx`` (Arrow
  batches, and rowFormat=tuples, one Python tuple per line), the JVM source ``gzidx-jvm``, and
  spark.read.text (one task for the whole .gz);
- a regex parse (status code, latency) and a group-by over it, each source vs spark.read.text;
- each source's count and checksum in local[1] against local[2] (a second session, after).

Beside each time: the CPU seconds the Spark JVM spent and those of the child processes it
reaped (gzstream, for the JVM source), medians; and the peak resident memory of the JVM
(VmHWM, reset before each run) and of its child processes together (Python workers, gzstream;
sampled every 0.2 s), maxima over the runs. Every result is checked equal across the ways.
Usage:

    GZSTREAM=.build/release/gzstream .build/spark-venv/bin/python3 integrations/pyspark/bench.py \\
        [--size 1g] [--runs 5] [--split-size 128m] [--sources python,jvm] [--jar JAR] [--workdir DIR]

The JVM source needs its jar (``make spark-jar``; by default .build/spark-jvm/gzstream-spark.jar
of this checkout, or $GZSTREAM_SPARK_JAR). The input is kept in WORKDIR (default
``$TMPDIR/gzstream-spark-bench``) and reused when its size matches. Prints a Markdown table.
"""

import argparse
import os
import statistics
import subprocess
import sys
import threading
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


def session(master: str, jar):
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master(master).appName(f"gzstream-spark-bench-{master}")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "2g"))
    if jar:
        builder = builder.config("spark.jars", jar)
    spark = builder.getOrCreate()
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


_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat_fields(pid: int) -> list:
    """/proc/PID/stat's fields after the command name (field 3, the state, is [0])."""
    with open(f"/proc/{pid}/stat") as file:
        return file.read().rsplit(")", 1)[1].split()


class ProcessMeter:
    """CPU time and peak memory of the Spark JVM and of its child processes (Linux /proc)."""

    def __init__(self, pid: int):
        self.pid = pid
        self._peak_children = 0
        self._sampling = False
        self._sampler = None

    @staticmethod
    def of(spark):
        """The meter of the session's JVM, or None when it cannot be found."""
        try:
            pid = spark.sparkContext._gateway.proc.pid
            with open(f"/proc/{pid}/comm") as file:
                if file.read().strip() != "java":
                    return None
            return ProcessMeter(pid)
        except (AttributeError, OSError):
            return None

    def cpu(self) -> tuple:
        """(the JVM's CPU seconds, its reaped children's CPU seconds), user + system."""
        fields = _stat_fields(self.pid)
        own = int(fields[11]) + int(fields[12])
        children = int(fields[13]) + int(fields[14])
        return own / _TICKS, children / _TICKS

    def _descendants_rss(self) -> int:
        parents = {}
        rss = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    fields = _stat_fields(int(name))
                    with open(f"/proc/{name}/comm") as file:
                        command = file.read().strip()
                except OSError:
                    continue
                parents[int(name)] = int(fields[1])
                # A child the JVM is starting (posix_spawn) shares the JVM's memory until it
                # runs its program, and reports the JVM's whole RSS as its own meanwhile.
                if command != "java":
                    rss[int(name)] = int(fields[21]) * _PAGE
        total = 0
        for pid in rss:
            ancestor = parents.get(pid)
            while ancestor and ancestor != self.pid:
                ancestor = parents.get(ancestor)
            if ancestor == self.pid:
                total += rss[pid]
        return total

    def _sample(self):
        while self._sampling:
            self._peak_children = max(self._peak_children, self._descendants_rss())
            time.sleep(0.2)

    def start(self):
        """Resets the JVM's peak RSS (clear_refs 5) and starts sampling the children's."""
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as file:
                file.write("5")
        except OSError:
            pass
        self._peak_children = 0
        self._sampling = True
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def stop(self) -> tuple:
        """(the JVM's peak RSS, the children's sampled peak RSS together), bytes, since start."""
        self._sampling = False
        self._sampler.join()
        with open(f"/proc/{self.pid}/status") as file:
            peak = next(int(line.split()[1]) * 1024 for line in file if line.startswith("VmHWM:"))
        return peak, self._peak_children


def measure(spark, cases, runs):
    """{name: row} over ``runs`` interleaved rounds after one warm-up each; a row has the median
    seconds, the result, median CPU seconds (JVM, children) and peak RSS (JVM, children)."""
    meter = ProcessMeter.of(spark)
    samples = {name: [] for name in cases}
    results = {}
    for name, function in cases.items():
        results[name] = function(spark)  # warm-up: JIT, Python workers, page cache
    for _ in range(runs):
        for name, function in cases.items():
            if meter:
                meter.start()
                cpu_before = meter.cpu()
            start = time.perf_counter()
            result = function(spark)
            seconds = time.perf_counter() - start
            if meter:
                cpu_after = meter.cpu()
                peaks = meter.stop()
                usage = (cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1]) + peaks
            else:
                usage = (float("nan"),) * 4
            if result != results[name]:
                raise SystemExit(f"{name}: result changed between runs")
            samples[name].append((seconds,) + usage)
    rows = {}
    for name in cases:
        column = list(zip(*samples[name]))
        rows[name] = {"seconds": statistics.median(column[0]), "result": results[name],
                      "jvm_cpu": statistics.median(column[1]), "child_cpu": statistics.median(column[2]),
                      "jvm_peak": max(column[3]), "child_peak": max(column[4])}
    return rows


def default_jar():
    jar = os.environ.get("GZSTREAM_SPARK_JAR")
    if jar:
        return jar
    candidate = os.path.join(HERE, "..", "..", ".build", "spark-jvm", "gzstream-spark.jar")
    return os.path.abspath(candidate) if os.path.exists(candidate) else None


def main():
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--size", default="1g")
    arguments.add_argument("--runs", type=int, default=5)
    arguments.add_argument("--split-size", default="128m")
    arguments.add_argument("--sources", default="python,jvm",
                           help="which data sources beside spark.read.text: python, jvm or both")
    arguments.add_argument("--queries", default="count,regex",
                           help="count (count and checksum), regex (parse and group-by), or both")
    arguments.add_argument("--jar", default=default_jar())
    arguments.add_argument("--workdir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "gzstream-spark-bench"))
    options = arguments.parse_args()
    sources = [name.strip() for name in options.sources.split(",") if name.strip()]
    if "jvm" in sources and not options.jar:
        raise SystemExit("the JVM source needs its jar: make spark-jar, or --jar PATH")
    gzstream = resolve_binary(None)
    os.environ["GZSTREAM"] = gzstream
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    size = parse_size(options.size)
    path = make_input(options.workdir, size, gzstream)

    def reader(spark, name, **more):
        frame = spark.read.format(name).option("splitSize", options.split_size)
        for key, value in more.items():
            frame = frame.option(key, value)
        return frame.load(path)

    formats = {"python": "gzidx", "jvm": "gzidx-jvm"}
    checksums = {}
    parses = {}
    for source in sources:
        name = formats[source]
        checksums[f"count+checksum, {name}"] = lambda spark, name=name: checksum(reader(spark, name))
        if source == "python":
            checksums["count+checksum, gzidx (tuples)"] = lambda spark: checksum(reader(spark, "gzidx", rowFormat="tuples"))
        parses[f"regex parse + group-by, {name}"] = lambda spark, name=name: parse_and_group(reader(spark, name))
    checksums["count+checksum, spark.read.text"] = lambda spark: checksum(spark.read.text(path))
    parses["regex parse + group-by, spark.read.text"] = lambda spark: parse_and_group(spark.read.text(path))
    queries = options.queries.split(",")
    if "regex" not in queries:
        parses = {}
    cases = {**checksums, **parses}
    one_core = {name: function for name, function in checksums.items()
                if "tuples" not in name and "spark.read.text" not in name}

    load = os.getloadavg()
    jar = options.jar if "jvm" in sources else None
    spark = session("local[2]", jar)
    splits = reader(spark, formats[sources[0]]).rdd.getNumPartitions() if sources else 1
    two = measure(spark, cases, options.runs)
    spark.stop()
    spark = session("local[1]", jar)
    one = measure(spark, one_core, options.runs)
    spark.stop()
    load_after = os.getloadavg()

    for group in (checksums, parses):
        results = {name: two[name]["result"] for name in group}
        if len(set(map(repr, results.values()))) > 1:
            raise SystemExit(f"results differ: {results}")
    lines, crc_sum = two["count+checksum, spark.read.text"]["result"]
    zcat = subprocess.run(f"gzip -dc '{path}' | wc -l", shell=True, capture_output=True, text=True, check=True)
    if int(zcat.stdout) != lines:
        raise SystemExit(f"the sources counted {lines} lines, gzip -dc | wc -l {zcat.stdout.strip()}")
    print(f"{size} plain bytes ({os.path.getsize(path)} compressed), {splits} splits of "
          f"{options.split_size}; medians of {options.runs} interleaved runs, warm session; "
          f"load average {load[0]:.1f} before, {load_after[0]:.1f} after; {os.cpu_count()} cores; "
          f"every way counted {lines} lines (as gzip -dc | wc -l), CRC-32 sum {crc_sum}\n")
    print("| query | master | s | MiB/s | CPU s, JVM | CPU s, reaped children | peak RSS JVM, MiB | peak RSS children, MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    mib = 2 ** 20
    for master, rows in (("local[2]", two), ("local[1]", one)):
        for name, row in rows.items():
            print(f"| {name} | {master} | {row['seconds']:.2f} | {size / row['seconds'] / mib:.0f} | "
                  f"{row['jvm_cpu']:.1f} | {row['child_cpu']:.1f} | {row['jvm_peak'] / mib:.0f} | "
                  f"{row['child_peak'] / mib:.0f} |")
    text = two["count+checksum, spark.read.text"]["seconds"]
    print()
    for source in sources:
        name = formats[source]
        count = two[f"count+checksum, {name}"]["seconds"]
        speedup = one[f"count+checksum, {name}"]["seconds"] / count
        parse = ""
        if parses:
            ratio = two[f"regex parse + group-by, {name}"]["seconds"] / two["regex parse + group-by, spark.read.text"]["seconds"]
            parse = f", regex + group-by {ratio:.2f}x"
        print(f"- {name}: count+checksum {count / text:.2f}x spark.read.text{parse}, "
              f"local[1] -> local[2] {speedup:.2f}x faster")


if __name__ == "__main__":
    main()

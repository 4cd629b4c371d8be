"""The ``gzidx`` data source: text lines of gzip files, each file split through its GZIDX index.

``spark.read.format("gzidx").option("splitSize", "128m").load("logs/*.gz")`` gives the
``DataFrame[value: string]`` that ``spark.read.text`` gives, one row per line, but a file with an
index beside it (``gzstream index F.gz`` writes ``F.gz.gzidx``) is read by one task per split
instead of one task for the whole file.

Where each part runs:

- ``reader()`` and ``partitions()``: on the driver, while Spark plans the query. The path is
  expanded here, and ``gzstream index --plan`` is run once per file; a stale or foreign index
  fails the query here, before any task starts.
- ``read()``: on an executor, one call per split; it runs ``gzstream unpack --whole-lines`` on
  the task's cores and turns its stdout into Arrow batches (see :mod:`gzstream_spark.lines`).

Options:

- ``path`` (what ``load`` is given): a file, a glob (``logs/*.gz``) or a directory (its ``*.gz``
  files); ``file:`` URLs are accepted. Every machine must see the files at this path.
- ``splitSize``: plain (uncompressed) bytes per task, about; ``128m`` by default (see
  :func:`gzstream_spark.cli.parse_size`).
- ``gzstream``: the executable, resolved on each machine; by default ``$GZSTREAM`` there, else
  ``gzstream`` on its PATH.
- ``threads``: the threads each task's gzstream decodes on, 1 to 256; by default the cores Spark
  gives a task (``spark.task.cpus``, 1 unless set), as Spark runs one task per that many cores
  (see :func:`gzstream_spark.cli.task_threads`).
- ``rowFormat``: ``arrow`` (the default) or ``tuples``, one Python tuple per line; the latter is
  slower and exists only so that bench.py can show by how much.
"""

from __future__ import annotations

import glob
import os
import warnings

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from . import cli
from .lines import lines_batch, lines_tuples

FORMAT_NAME = "gzidx"
DEFAULT_SPLIT_SIZE = "128m"
_INDEX_SUFFIX = ".gzidx"


class GzipIndexWarning(UserWarning):
    """A file is read whole by one task (it has no index); the text is gzstream's."""


def expand_path(path: str) -> list:
    """The files a ``load`` path names, absolute and sorted.

    - Parameters: path: a file, a glob or a directory, with or without a ``file:`` scheme.
    - Returns: regular files; index files (``*.gzidx``) a glob happens to match are left out.
    - Raises: FileNotFoundError when nothing matches; ValueError for a scheme other than
      ``file:`` (gzstream reads local or mounted paths only).
    """
    local = path
    if local.startswith("file://"):
        local = local[len("file://"):]
    elif local.startswith("file:"):
        local = local[len("file:"):]
    elif "://" in local:
        raise ValueError(f"gzidx reads local or shared (mounted) paths only, not {path!r}")
    if os.path.isdir(local):
        local = os.path.join(local, "*.gz")
    files = sorted(os.path.abspath(name) for name in glob.glob(local)
                   if os.path.isfile(name) and not name.endswith(_INDEX_SUFFIX))
    if not files:
        raise FileNotFoundError(f"gzidx: no file matches {path!r}")
    return files


class GzipSplitPartition(InputPartition):
    """One task's input: a :class:`gzstream_spark.cli.Split`, pickled to the executor."""

    def __init__(self, split: cli.Split):
        super().__init__(split)
        self.split = split


class GzipIndexReader(DataSourceReader):
    """Plans splits on the driver and reads one split per task; see the module's description."""

    def __init__(self, options):
        path = options.get("path")
        if not path:
            raise ValueError("gzidx needs a path: spark.read.format('gzidx').load('logs/*.gz')")
        self.files = expand_path(path)
        self.split_size = cli.parse_size(options.get("splitSize", DEFAULT_SPLIT_SIZE))
        self.gzstream = options.get("gzstream")
        threads = options.get("threads")
        self.threads = None if threads is None else cli.parse_threads(threads)
        self.row_format = options.get("rowFormat", "arrow").lower()
        if self.row_format not in ("arrow", "tuples"):
            raise ValueError(f"rowFormat is arrow or tuples, not {self.row_format!r}")

    def partitions(self):
        """Runs ``gzstream index --plan`` for each file, on the driver.

        - Returns: one partition per split, file by file in name order, splits in file order.
        - Raises: cli.GzstreamError with gzstream's message (stale or foreign index, unreadable
          file), which fails the query before any task runs.
        """
        binary = cli.resolve_binary(self.gzstream)
        partitions = []
        for path in self.files:
            plan = cli.plan_file(binary, path, self.split_size)
            if plan.warning:
                warnings.warn(f"gzidx: {plan.warning}", GzipIndexWarning, stacklevel=2)
            partitions += [GzipSplitPartition(split) for split in plan.splits]
        return partitions

    def read(self, partition):
        """The lines of one split, as Arrow record batches (or tuples, for rowFormat=tuples).

        Runs on an executor. Raises cli.GzstreamError with gzstream's message if the split
        cannot be read (corrupt data, a file or index changed since planning).
        """
        binary = cli.resolve_binary(self.gzstream)
        threads = cli.task_threads(self.threads)
        for chunk in cli.read_split(binary, partition.split, threads=threads):
            if self.row_format == "tuples":
                yield from lines_tuples(chunk)
            else:
                yield lines_batch(chunk)


class GzipIndexDataSource(DataSource):
    """The ``gzidx`` format: ``DataFrame[value: string]``, one row per line of each file."""

    @classmethod
    def name(cls):
        return FORMAT_NAME

    def schema(self):
        return "value string"

    def reader(self, schema):
        return GzipIndexReader(self.options)

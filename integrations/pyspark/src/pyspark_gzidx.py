"""Spark 4.0's automatic registration hook for the ``gzidx`` format.

When a session first looks up a format it does not know, Spark imports every installed
top-level module whose name starts with ``pyspark_`` and registers its ``DefaultSource``. This
module is that hook; it needs the package installed (pip) in the Python the driver runs.
"""

from gzstream_spark.source import GzipIndexDataSource as DefaultSource

__all__ = ["DefaultSource"]

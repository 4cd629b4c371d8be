"""gzstream_spark: split one big gzip file across Spark tasks through its gzstream index.

Spark 4.0 finds a Python data source in one of two ways, and this package serves both:

- Explicitly, in the session that reads: ``gzstream_spark.register(spark)`` (which calls
  ``spark.dataSource.register``). This always works, also when the package reaches the
  executors as a zip through ``--py-files`` or ``spark.addPyFile``.
- Automatically, once the package is installed with pip in the Python the driver runs: Spark
  4.0 imports every top-level module whose name starts with ``pyspark_`` and registers its
  ``DefaultSource`` when the session starts; the module ``pyspark_gzidx`` beside this package
  is that hook.

Then: ``spark.read.format("gzidx").option("splitSize", "128m").load("logs/*.gz")``.
"""

from .cli import GzstreamError, parse_size
from .source import FORMAT_NAME, GzipIndexDataSource, GzipIndexWarning

__all__ = ["FORMAT_NAME", "GzipIndexDataSource", "GzipIndexWarning", "GzstreamError", "parse_size",
           "register"]


def register(spark) -> None:
    """Registers the ``gzidx`` format in ``spark``, a SparkSession (Spark 4.0 or later).

    Does nothing more when ``gzidx`` is already there: Spark 4.0 refuses to register a name
    twice, and with the package installed its automatic registration (``pyspark_gzidx``) has
    usually run first.
    """
    try:
        spark.dataSource.register(GzipIndexDataSource)
    except Exception as error:  # pyspark's AnalysisException, whose import path varies
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(error):
            raise

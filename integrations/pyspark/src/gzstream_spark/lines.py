"""Whole-line chunks of bytes as Spark rows: Arrow record batches, or (for comparison) tuples.

A chunk is cut into lines with numpy in a few passes over whole buffers, so no Python code runs
per line: the ``\\n`` bytes are found and dropped, and the positions they were at become the
offsets of an Arrow string column. Spark takes the batch as it is (Spark 4's Python data
sources accept ``pyarrow.RecordBatch`` from ``read``).

The text is not decoded: like ``spark.read.text``, bytes that are not UTF-8 reach Spark as they
are. A line keeps a ``\\r`` before its ``\\n`` (the separator is ``\\n`` alone, as gzstream's
``--whole-lines`` has it; ``spark.read.text`` also strips ``\\r``).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa

#: The schema every batch has, the same as ``spark.read.text``'s.
VALUE_SCHEMA = pa.schema([pa.field("value", pa.string())])

_NEWLINE = 10


def lines_batch(chunk) -> pa.RecordBatch:
    """One chunk of whole lines as a record batch of one string column, ``value``.

    - Parameters: chunk: a bytes-like object of whole lines, each ending in ``\\n`` except
      perhaps the last (a final line without a newline is a line); under 2 GiB (the offsets
      are 32-bit, as Spark's string columns are). Read here, not kept.
    - Returns: a batch of as many rows as the chunk has lines (0 for an empty chunk), the
      newlines removed.
    """
    data = np.frombuffer(chunk, dtype=np.uint8)
    newlines = np.flatnonzero(data == _NEWLINE)
    newline_count = len(newlines)
    ends_in_newline = newline_count > 0 and newlines[-1] == len(data) - 1
    line_count = newline_count if ends_in_newline or len(data) == 0 else newline_count + 1
    text = data[data != _NEWLINE] if newline_count else data.copy()
    # Line k ends where its newline was, less the k newlines before it that are gone.
    offsets = np.empty(line_count + 1, dtype=np.int32)
    offsets[0] = 0
    offsets[1:newline_count + 1] = newlines - np.arange(newline_count)
    if line_count > newline_count:
        offsets[-1] = len(text)
    values = pa.Array.from_buffers(pa.string(), line_count,
                                   [None, pa.py_buffer(offsets), pa.py_buffer(text)])
    return pa.RecordBatch.from_arrays([values], schema=VALUE_SCHEMA)


def lines_tuples(chunk) -> Iterator[tuple]:
    """The same lines as one-field tuples, the Python Data Source API's plainest rows.

    Kept only to measure against :func:`lines_batch` (bench.py); undecodable bytes become
    U+FFFD here, as a Python str must be text.
    """
    lines = bytes(chunk).split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    for line in lines:
        yield (line.decode("utf-8", "replace"),)

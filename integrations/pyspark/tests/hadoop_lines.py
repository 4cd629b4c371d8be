"""A plain-Python oracle of the line rule splits are read by, gzstream's ``--whole-lines``.

The rule, Hadoop LineRecordReader's in spirit: a split [offset, offset + length) of the plain
bytes yields the lines that START in it. A split that does not begin at 0 skips the partial
line it begins inside (a line beginning exactly at the offset is whole, and is kept); the last
line that starts in the split is finished past its end. The separator is ``\\n`` alone and is
kept with its line; a final line without ``\\n`` is a line; the empty file has no lines.

(Hadoop's own reader differs by one byte at a boundary: it always skips the first line of a
split that does not begin at 0 and reads a line starting exactly at its end, so a line starting
exactly on a boundary goes to the split before. Either way every line is read exactly once.)

Written for clarity over speed: the test inputs are small.
"""

import re


def line_starts(data: bytes) -> list:
    """Where each line of ``data`` begins, in bytes from 0; empty for empty data."""
    if not data:
        return []
    after_newlines = [match.end() for match in re.finditer(b"\n", data)]
    return [0] + [start for start in after_newlines if start < len(data)]


def whole_lines(data: bytes, offset: int, length=None) -> bytes:
    """The lines that start in [offset, offset + length), each with its ``\\n`` if it has one.

    - Parameters: offset: plain bytes from 0, at least 0. length: bytes, or None for to the end.
    - Returns: those lines, concatenated as they are in ``data``.
    """
    end = len(data) if length is None else offset + length
    starts = [start for start in line_starts(data) if offset <= start < end]
    if not starts:
        return b""
    newline = data.find(b"\n", starts[-1])
    finish = len(data) if newline < 0 else newline + 1
    return data[starts[0]:finish]

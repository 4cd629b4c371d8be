"""The gzstream command line, as the data source runs it: planning on the driver, reading on executors.

Two commands are used, and nothing else of gzstream:

- ``gzstream index --plan SIZE --json FILE.gz`` on the driver: the splits of one file, each
  starting at an access point of its index, about SIZE plain bytes each. The CLI checks the index
  against the file (stale, foreign, or writable by another user) and fails with one line on
  stderr; that line becomes a :class:`GzstreamError` here, raised while Spark plans the query.
- ``gzstream unpack -c -p T --offset N [--length M] --whole-lines [--index PATH] FILE.gz`` on
  an executor: the lines that start in plain bytes [N, N+M) (Hadoop's LineRecordReader rule), so
  that the splits of one plan, read one after the other, give every line of the file once,
  decoded on T threads (the task's cores; see :func:`task_threads`).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Iterator, Optional

#: Bytes read from the child's stdout before the whole lines in them are handed on: large enough
#: that the per-chunk work (one numpy pass, one Arrow batch) is amortised over tens of thousands
#: of lines, small enough that a task's memory stays a few MiB.
READ_CHUNK_SIZE = 4 << 20

#: Linux's default pipe holds 64 KiB; a larger pipe lets gzstream run ahead of Python by more.
_PIPE_SIZE = 1 << 20
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)

_SIZE_SUFFIXES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

#: The thread counts ``gzstream unpack -p`` accepts.
MIN_THREADS = 1
MAX_THREADS = 256


class GzstreamError(RuntimeError):
    """gzstream failed, or could not be run; the message is gzstream's own line on stderr."""


def parse_size(text: str) -> int:
    """Reads a byte count as gzstream's CLI does: digits with an optional binary suffix.

    - Parameters: text: ``"4096"`` (bytes), ``"64k"``, ``"128m"``, ``"1g"``, ``"1t"`` (KiB, MiB,
      GiB, TiB; either case).
    - Returns: the count in bytes, at least 1.
    - Raises: ValueError naming the text when it is not such a size, or is 0.
    """
    match = re.fullmatch(r"\s*(\d+)\s*([kKmMgGtT]?)\s*", str(text))
    if not match:
        raise ValueError(f"splitSize takes a size in bytes such as 128m, 1g or 1048576, not {text!r}")
    size = int(match.group(1)) * _SIZE_SUFFIXES[match.group(2).lower()]
    if size < 1:
        raise ValueError(f"splitSize must be at least 1 byte, not {text!r}")
    return size


def parse_threads(text: str) -> int:
    """Reads the ``threads`` option: how many threads each task's gzstream decodes on.

    - Parameters: text: a whole number, ``"1"`` to ``"256"`` (the range ``gzstream unpack -p``
      takes).
    - Returns: the number.
    - Raises: ValueError naming the text when it is not such a number.
    """
    match = re.fullmatch(r"\s*(\d+)\s*", str(text))
    if not match or not MIN_THREADS <= int(match.group(1)) <= MAX_THREADS:
        raise ValueError(f"threads takes a whole number from {MIN_THREADS} to {MAX_THREADS}, not {text!r}")
    return int(match.group(1))


def task_threads(option: Optional[int]) -> Optional[int]:
    """The threads one task's gzstream decodes on: ``option`` when set, else the task's cores.

    Spark gives each task ``spark.task.cpus`` cores (1 by default) and runs as many tasks at
    once as an executor has cores for; a gzstream left to its own default would decode on
    every core of the machine in each of them (16 task slots, 16 x 16 threads).

    - Parameters: option: the parsed ``threads`` option, or None.
    - Returns: ``option``; else ``TaskContext.get().cpus()`` (at most 256) when called in a
      Spark task; else None (outside a task: gzstream's own default, every core).
    """
    if option is not None:
        return option
    try:
        from pyspark import TaskContext
    except ImportError:
        return None
    context = TaskContext.get()
    if context is None:
        return None
    return max(MIN_THREADS, min(MAX_THREADS, context.cpus()))


def resolve_binary(option: Optional[str]) -> str:
    """The gzstream to run: the ``gzstream`` option, else ``$GZSTREAM``, else ``gzstream`` on PATH.

    Resolved where it runs (driver or executor), as each machine's PATH and environment differ.

    - Raises: GzstreamError when none of them names an executable file.
    """
    candidate = option or os.environ.get("GZSTREAM") or "gzstream"
    found = shutil.which(candidate)
    if found is None:
        raise GzstreamError(
            f"gzstream not found: {candidate!r} is not an executable (set the data source's "
            "'gzstream' option or $GZSTREAM, or put gzstream on PATH on every executor)")
    return found


@dataclass(frozen=True)
class Split:
    """One task's share of one file: the lines starting in plain bytes [offset, offset + length).

    ``length`` None means to the end of the file. ``index`` is the index the plan was made from,
    passed to unpack so that every task reads through the very index the driver checked.
    """

    file: str
    offset: int
    length: Optional[int]
    index: Optional[str]


@dataclass(frozen=True)
class FilePlan:
    """What ``gzstream index --plan`` says of one file: its splits, and a warning (or None)."""

    file: str
    plain_size: Optional[int]
    splits: list
    warning: Optional[str]


def _run_for_text(arguments: list) -> str:
    """Runs a gzstream command to its end; returns stdout, or raises with its stderr line."""
    try:
        done = subprocess.run(arguments, capture_output=True, check=False)
    except OSError as error:
        raise GzstreamError(f"could not run {arguments[0]}: {error}") from error
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
        raise GzstreamError(message)
    return done.stdout.decode("utf-8")


def plan_file(binary: str, path: str, split_size: int) -> FilePlan:
    """Splits one file through ``gzstream index --plan SIZE --json``; nothing is written to disk.

    - Parameters: binary: the gzstream executable. path: the .gz file, passed as given.
      split_size: plain bytes per split, about (splits start at the index's access points).
    - Returns: the plan; a file without a usable index has one split (offset 0, length None)
      and a warning.
    - Raises: GzstreamError with gzstream's message when the index is stale, foreign or unsafe,
      the file unreadable, or the output is not the JSON object the contract describes.
    """
    output = _run_for_text([binary, "index", "--plan", str(split_size), "--json", path])
    try:
        plan = json.loads(output)
        splits = [Split(path, int(split["offset"]),
                        None if split["length"] is None else int(split["length"]), plan["index"])
                  for split in plan["splits"]]
    except (ValueError, KeyError, TypeError) as error:
        raise GzstreamError(f"{path}: gzstream index --plan printed no plan Spark can use ({error})") from error
    return FilePlan(path, plan.get("plainSize"), splits, plan.get("warning"))


def split_arguments(binary: str, split: Split, threads: Optional[int] = None) -> list:
    """The unpack command line that writes one split's whole lines to stdout.

    - Parameters: threads: ``-p``, the threads gzstream decodes the split's spans on; None
      leaves it out (gzstream's default: every core).
    """
    arguments = [binary, "unpack", "-c"]
    if threads is not None:
        arguments += ["-p", str(threads)]
    arguments += ["--offset", str(split.offset)]
    if split.length is not None:
        arguments += ["--length", str(split.length)]
    arguments.append("--whole-lines")
    if split.index is not None:
        arguments += ["--index", split.index]
    # "--" ends the options, so that a file named "-x.gz" is a file.
    return arguments + ["--", split.file]


def read_split(binary: str, split: Split, chunk_size: int = READ_CHUNK_SIZE,
               threads: Optional[int] = None) -> Iterator[memoryview]:
    """Runs unpack for one split and yields its output in chunks that hold whole lines only.

    - Parameters: chunk_size: bytes gathered before a chunk is cut at its last ``\\n``; a line
      longer than that grows the buffer until the line fits. threads: ``-p``, as
      :func:`split_arguments` takes it.
    - Returns: an iterator of views; each view is valid only until the next one is asked for
      (the buffer is reused), so the caller copies what it keeps. Every chunk but the last ends
      in ``\\n``; the last may lack it (a final line without a newline).
    - Raises: GzstreamError with gzstream's stderr line when it exits non-zero (checked at the
      end, after the output; a corrupt span is found by gzstream before it writes that span).

    The child is killed if the caller stops early (Spark's ``limit``), and always waited for.
    """
    with tempfile.TemporaryFile() as errors:
        # stderr to a file, not a pipe: a pipe nobody reads could fill and stall gzstream.
        try:
            child = subprocess.Popen(split_arguments(binary, split, threads), stdout=subprocess.PIPE,
                                     stderr=errors, bufsize=0)
        except OSError as error:
            raise GzstreamError(f"could not run {binary}: {error}") from error
        try:
            try:
                fcntl.fcntl(child.stdout.fileno(), _F_SETPIPE_SZ, _PIPE_SIZE)
            except OSError:
                pass  # a smaller pipe only costs more wake-ups
            yield from whole_line_chunks(child.stdout.readinto, chunk_size)
            status = child.wait()
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
            child.stdout.close()
        if status != 0:
            errors.seek(0)
            message = errors.read().decode("utf-8", "replace").strip() or f"exit status {status}"
            raise GzstreamError(message)


def whole_line_chunks(readinto, chunk_size: int) -> Iterator[memoryview]:
    """Cuts a byte stream into chunks of whole lines, reusing one buffer.

    - Parameters: readinto: fills a writable view, returns the count (0 at the end), as
      ``io.RawIOBase.readinto``. chunk_size: the buffer's first size in bytes, at least 1.
    - Returns: views into the buffer, as :func:`read_split` describes.
    """
    buffer = bytearray(chunk_size)
    filled = 0
    while True:
        count = readinto(memoryview(buffer)[filled:])
        if not count:
            break
        filled += count
        if filled < len(buffer):
            continue
        last_newline = buffer.rfind(b"\n", 0, filled)
        if last_newline < 0:
            # One line longer than the buffer: a new buffer twice the size, so that no view or
            # numpy array still holding the old one stops the growth.
            bigger = bytearray(2 * len(buffer))
            bigger[:filled] = buffer
            buffer = bigger
            continue
        yield memoryview(buffer)[:last_newline + 1]
        carried = filled - (last_newline + 1)
        buffer[:carried] = buffer[last_newline + 1:filled]
        filled = carried
    if filled:
        yield memoryview(buffer)[:filled]

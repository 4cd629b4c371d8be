"""gzstream's ``unpack --whole-lines`` and ``index --plan`` against the line rule's oracle.

No Spark here: these check the CLI contract the data source stands on, on edge files chosen for
the rule's corners, through an index of several access points and without one.
"""

from __future__ import annotations

import subprocess

import pytest

from conftest import EDGE_FILES
from gzstream_spark import cli
from hadoop_lines import line_starts, whole_lines


SPLIT_COUNTS = [1, 2, 3, 8]


def _unpack_whole_lines(gzstream: str, path: str, offset: int, length) -> bytes:
    arguments = cli.split_arguments(gzstream, cli.Split(path, offset, length, None))
    done = subprocess.run(arguments, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def _even_splits(size: int, count: int) -> list:
    """``count`` consecutive (offset, length) pairs covering [0, size), boundaries anywhere."""
    bounds = [size * part // count for part in range(count + 1)]
    return [(bounds[part], bounds[part + 1] - bounds[part]) for part in range(count)]


def test_oracle_on_a_hand_checked_file():
    data = b"ab\ncd\n\nef"
    assert line_starts(data) == [0, 3, 6, 7]
    assert whole_lines(data, 0, 1) == b"ab\n"        # the first split keeps the line at 0
    assert whole_lines(data, 1, 2) == b""            # starts inside "ab", and no line starts in [1, 3)
    assert whole_lines(data, 1, 3) == b"cd\n"        # finished past the split's end
    assert whole_lines(data, 3, 1) == b"cd\n"        # a line starting exactly at the offset is kept
    assert whole_lines(data, 4, 5) == b"\nef"        # the empty line, and the last without newline
    assert whole_lines(data, 9, None) == b""
    assert whole_lines(b"", 0, None) == b""


@pytest.mark.parametrize("layout", ["indexed", "plain"])
@pytest.mark.parametrize("name", list(EDGE_FILES))
def test_whole_lines_match_the_oracle(gzstream, edge_files, name, layout):
    data, paths = edge_files[name]
    for count in SPLIT_COUNTS:
        if count > 1 and len(data) < count:
            continue
        for offset, length in _even_splits(len(data), count):
            got = _unpack_whole_lines(gzstream, paths[layout], offset, length)
            assert got == whole_lines(data, offset, length), (name, layout, count, offset, length)


@pytest.mark.parametrize("name", ["empty-lines", "no-final-newline"])
def test_every_one_byte_split(gzstream, edge_files, name):
    data, paths = edge_files[name]
    outputs = [_unpack_whole_lines(gzstream, paths["indexed"], offset, 1) for offset in range(len(data))]
    assert outputs == [whole_lines(data, offset, 1) for offset in range(len(data))]
    assert b"".join(outputs) == data


# threads: None is gzstream's default (every core), 1 what the sources pass a task of one core.
@pytest.mark.parametrize("threads", [None, 1])
@pytest.mark.parametrize("split_size", [1, 40_000, 100_000, 1 << 30])
@pytest.mark.parametrize("name", list(EDGE_FILES))
def test_a_plans_splits_concatenate_to_the_file(gzstream, edge_files, name, split_size, threads):
    data, paths = edge_files[name]
    plan = cli.plan_file(gzstream, paths["indexed"], split_size)
    assert plan.warning is None
    if plan.plain_size is None:
        # An index that does not know the plain size (GZIDX records 0 for unknown, so an empty
        # file's says nothing) is planned as one split to the end.
        assert [(split.offset, split.length) for split in plan.splits] == [(0, None)]
    else:
        assert plan.plain_size == len(data)
        offsets = [split.offset for split in plan.splits]
        assert offsets == sorted(offsets) and (not offsets or offsets[0] == 0)
        for split, following in zip(plan.splits, plan.splits[1:]):
            assert split.offset + split.length == following.offset
        assert sum(split.length for split in plan.splits) == len(data)
    joined = b"".join(bytes(chunk) for split in plan.splits
                      for chunk in cli.read_split(gzstream, split, chunk_size=4096, threads=threads))
    assert joined == data


def test_a_file_without_index_is_one_split_with_a_warning(gzstream, edge_files):
    data, paths = edge_files["log-lines"]
    plan = cli.plan_file(gzstream, paths["plain"], 40_000)
    assert plan.warning
    assert plan.splits == [cli.Split(paths["plain"], 0, None, None)]
    assert b"".join(bytes(chunk) for chunk in cli.read_split(gzstream, plan.splits[0])) == data


def test_whole_line_chunks_cut_at_newlines_and_grow_for_a_long_line():
    import io
    data = b"a\n" + b"L" * 10_000 + b"\nbb\nlast"
    chunks = [bytes(chunk) for chunk in cli.whole_line_chunks(io.BytesIO(data).readinto, 16)]
    assert b"".join(chunks) == data
    assert all(chunk.endswith(b"\n") for chunk in chunks[:-1])


def test_split_arguments_give_p_only_when_threads_are_given():
    split = cli.Split("/data/-x.gz", 1024, 4096, "/data/-x.gz.gzidx")
    tail = ["--offset", "1024", "--length", "4096", "--whole-lines", "--index", "/data/-x.gz.gzidx", "--", "/data/-x.gz"]
    assert cli.split_arguments("gz", split, threads=3) == ["gz", "unpack", "-c", "-p", "3"] + tail
    assert cli.split_arguments("gz", split) == ["gz", "unpack", "-c"] + tail
    assert cli.split_arguments("gz", cli.Split("f.gz", 0, None, None), threads=1) == \
        ["gz", "unpack", "-c", "-p", "1", "--offset", "0", "--whole-lines", "--", "f.gz"]


def test_threads_option_and_its_default_outside_a_task():
    assert [cli.parse_threads(text) for text in ("1", " 16 ", "256")] == [1, 16, 256]
    for text in ("0", "257", "-1", "2.5", "lots", ""):
        with pytest.raises(ValueError, match="threads takes a whole number from 1 to 256"):
            cli.parse_threads(text)
    # The option wins; without it, outside a Spark task there are no task cores to follow.
    assert cli.task_threads(4) == 4
    assert cli.task_threads(None) is None

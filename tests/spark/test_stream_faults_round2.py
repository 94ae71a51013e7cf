"""Bad input and faults, second round (issue #38): what a user meets, through the CLI.

A file still being written into a stream's source, a CSV header with a doubled quote,
a checkpoint whose files are damaged or that another stream uses, and the summary's
partition count on every engine. Each test runs `trendagg` as a user does (in this
process with the session's Spark, or as a subprocess where another process matters)
and checks the exit code, the message and that nothing is lost. Marked `spark`.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

# a Spark wall of text a message must not show
_WALL = ("Traceback", "\tat ", "An error occurred while calling", "JSONDecodeError", "py4j")

_QUERIES = (
    "q: RETURN driver, COUNT(*) PATTERN SEQ(A, B+) WHERE [driver] GROUP-BY driver WITHIN 10 s"
)


def _cli(*argv: str) -> tuple[int, str, str]:
    """``trendagg ARGV`` in this process (its Spark is the test session): code, out, err."""
    from trendagg.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _events(start: float, drivers: int = 3, n: int = 30) -> list[dict[str, Any]]:
    """A, B, B, ... per driver, one event a second from ``start``."""
    return [
        {"type": "A" if i % 5 == 0 else "B", "time": start + i, "driver": i % drivers}
        for i in range(n)
    ]


def _jsonl(path: Path, events: list[dict[str, Any]], stamp: int) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    os.utime(path, (stamp, stamp))  # (the order Spark reads the files in)


def _results(out: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for f in sorted((out / "results").glob("part-*.jsonl"))
        for line in f.read_text().splitlines()
    ]


def _canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def _stream_args(queries: Path, source: Path, checkpoint: Path, out: Path) -> list[str]:
    return ["stream", str(queries), str(source), "--once"] + [
        "--checkpoint",
        str(checkpoint),
        "--output",
        str(out),
    ]


def _short_stream(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A checkpoint made by a short real stream (two files), and a third file in the
    source since, so that a resumed stream runs a micro-batch (and reads its state)."""
    queries = tmp_path / "q.tq"
    queries.write_text(_QUERIES)
    source = tmp_path / "in"
    source.mkdir()
    _jsonl(source / "a.jsonl", _events(0), 1_700_000_000)
    _jsonl(source / "b.jsonl", _events(20), 1_700_000_001)
    checkpoint = tmp_path / "ckpt"
    argv = _stream_args(queries, source, checkpoint, tmp_path / "out")
    code, _, err = _cli(*argv, "--max-files-per-trigger", "1")
    assert code == 0, err
    _jsonl(source / "c.jsonl", _events(40), 1_700_000_002)
    return queries, source, checkpoint


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _state_files(checkpoint: Path) -> list[Path]:
    """The state store's files of the engine's state (RocksDB's changelogs, snapshots)."""
    return [
        p
        for p in (checkpoint / "state").rglob("*")
        if p.is_file()
        and not p.name.startswith(".")
        and "_metadata" not in p.parts
        and p.suffix in (".changelog", ".zip")
    ]


def _environment() -> dict[str, str]:
    """This process's environment, so that a subprocess imports the same trendagg."""
    import trendagg

    src = str(Path(trendagg.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=src + (os.pathsep + path if path else ""))


def _partitions(err: str) -> int | None:
    """The summary's partitions (None: it says none)."""
    found = re.findall(r"([\d,]+) partitions", err)
    return int(found[0].replace(",", "")) if found else None


def test_the_summary_counts_the_same_partitions_on_every_engine(spark: Any, tmp_path: Path) -> None:
    """Item 15: the summary's partitions are the distinct partition keys of the events
    each query group reads, the same number on the local, reference and Spark engines."""
    from trendagg.generate import rideshare

    queries = tmp_path / "q.tq"
    queries.write_text(
        "trips: RETURN district, COUNT(*) PATTERN SEQ(Request, Travel+) WHERE [driver] "
        "GROUP-BY district WITHIN 5 s\n"
        "legs: RETURN COUNT(*) PATTERN Travel+ WITHIN 5 s\n"
    )
    records = list(rideshare(400, seed=3))
    events = tmp_path / "rides.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in records))
    # trips: one key per (district, driver) of its types; legs: no key attribute, one
    keys = {
        (e["district"], e["driver"])
        for e in records
        if e["type"] in ("Request", "Travel")
        and e.get("district") is not None
        and e.get("driver") is not None
    }
    assert len(keys) > 10
    counts = {}
    for engine in ("local", "reference", "spark"):
        code, _, err = _cli("run", str(queries), str(events), "--engine", engine)
        assert code == 0, (engine, err)
        counts[engine] = _partitions(err)
    assert counts == dict.fromkeys(counts, len(keys) + 1)

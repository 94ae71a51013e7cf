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
import shutil
import signal
import subprocess
import sys
import time
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


def test_a_file_cut_short_in_a_stream_source_is_named_and_counted(
    spark: Any, tmp_path: Path
) -> None:
    """Item 2: a JSON Lines file cut mid-line gets a warning naming it as unfinished, on
    stderr and in the stream's counters; names starting with '.' or '_' are not read."""
    queries = tmp_path / "q.tq"
    queries.write_text(_QUERIES)
    source = tmp_path / "in"
    source.mkdir()
    whole, rest = _events(0), _events(100)
    _jsonl(source / "a.jsonl", whole, 1_700_000_000)
    text = "".join(json.dumps(e) + "\n" for e in rest)
    cut = source / "b.jsonl"
    cut.write_text(text[: len(text) // 2 + 7])  # (mid-line: a writer still at work)
    os.utime(cut, (1_700_000_001, 1_700_000_001))
    hidden = [{"type": t, "time": 3.5, "driver": 9} for t in "AB"]  # driver 9: only here
    _jsonl(source / ".c.jsonl", hidden, 1_700_000_002)
    _jsonl(source / "_d.jsonl", hidden, 1_700_000_003)
    _jsonl(source / "e.jsonl", [{"type": "Flush", "time": 10_000}], 1_700_000_004)
    out = tmp_path / "out"
    code, _, err = _cli(*_stream_args(queries, source, tmp_path / "ckpt", out))
    assert code == 0, err
    (warning,) = [line for line in err.splitlines() if "unfinished" in line and "warning" in line]
    assert str(cut) in warning and "looked unfinished" in warning
    assert "no line end" in warning and "move them into the source folder whole" in warning
    (stopped,) = [line for line in err.splitlines() if "stopped;" in line]
    assert "1 unfinished file" in stopped and "1 rejected" in stopped
    rows = _results(out)
    assert rows and {r["group"]["driver"] for r in rows} <= {0, 1, 2}  # not 9: hidden files
    # what the stream read equals the local engine over the same lines (the cut one rejected)
    every = tmp_path / "all.jsonl"
    every.write_text((source / "a.jsonl").read_text() + cut.read_text() + "\n")
    code, local, err = _cli("run", str(queries), str(every), "--engine", "local")
    assert code == 0, err
    assert _canon(rows) == _canon(_lines(local))
    # completed later, the file is not read again: the resumed stream says so
    cut.write_text(text)
    _jsonl(source / "f.jsonl", [{"type": "Flush", "time": 20_000}], 1_700_000_005)
    code, _, err = _cli(*_stream_args(queries, source, tmp_path / "ckpt", out))
    assert code == 0, err
    assert f"{cut} looked unfinished" in err and "changed after the stream listed it" in err
    assert _canon(_results(out)) == _canon(rows)  # (its rest never read)


def test_a_csv_header_and_cells_with_doubled_quotes_read_alike_on_every_engine(
    spark: Any, tmp_path: Path
) -> None:
    """Item 5: `"we""ird"` as a column name, and cells with doubled quotes, read by Spark
    (batch and stream) as the local engine reads them; a CSV row cut short in a stream's
    source is named as unfinished."""
    queries = tmp_path / "q.tq"
    queries.write_text(
        "q: RETURN g, COUNT(*), SUM(A.v) PATTERN A+ WHERE [g] GROUP-BY g WITHIN 10 s"
    )
    header = 'type,time,g,"we""ird",v\n'
    rows = 'A,1,"x""y",w,1\nA,2,"x""y",w,2\nA,3,"c\\""d",w,3\nA,4,"c\\""d",w,4\nA,5,p,"a""b",5\n'
    events = tmp_path / "e.csv"
    events.write_text(header + rows)
    outs = {}
    for engine in ("local", "spark"):
        code, out, err = _cli("run", str(queries), str(events), "--engine", engine)
        assert code == 0, (engine, err)
        outs[engine] = _canon(_lines(out))
    assert outs["spark"] == outs["local"]
    groups = {json.loads(line)["group"]["g"] for line in outs["local"]}
    assert groups == {'x"y', 'c\\"d', "p"}

    source = tmp_path / "in"
    source.mkdir()
    (source / "a.csv").write_text(header + rows)
    os.utime(source / "a.csv", (1_700_000_000, 1_700_000_000))
    (source / "b.csv").write_text(header + 'A,50,"x""y",w,6\nA,51,"x""y",w,7\nA,52,"x')
    os.utime(source / "b.csv", (1_700_000_001, 1_700_000_001))
    out = tmp_path / "out"
    code, _, err = _cli(*_stream_args(queries, source, tmp_path / "ckpt", out))
    assert code == 0, err
    assert f"{source / 'b.csv'} looked unfinished" in err and "1 unfinished file" in err
    streamed = _canon([r for r in _results(out) if r["window_start"] < 50])
    assert streamed == outs["local"]


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


def test_damaged_checkpoints_are_refused_with_what_to_do(spark: Any, tmp_path: Path) -> None:
    """Items 7 and 10: each damage of a checkpoint made by a real stream (its guard file
    cut or gone, Spark's metadata, a source log, the state store) is refused with exit 2,
    naming the checkpoint, saying it is damaged and what to do, without Spark's stack;
    the undamaged checkpoint resumes."""
    queries, source, checkpoint = _short_stream(tmp_path)
    other = tmp_path / "other.tq"
    other.write_text(_QUERIES.replace("10 s", "20 s"))

    def guard_cut(c: Path) -> None:
        _truncate(c / "trendagg.json")

    def guard_gone(c: Path) -> None:
        (c / "trendagg.json").unlink()

    def metadata_cut(c: Path) -> None:
        _truncate(c / "metadata")

    def source_log_cut(c: Path) -> None:
        _truncate(c / "sources" / "0" / "0")

    def state_cut(c: Path) -> None:
        found = _state_files(c)
        assert found, sorted(str(p) for p in (c / "state").rglob("*"))
        for path in found:
            _truncate(path)

    damages = {
        "guard_cut": (guard_cut, queries, "trendagg.json"),
        "guard_gone": (guard_gone, other, "trendagg.json"),
        "metadata_cut": (metadata_cut, queries, "metadata"),
        "source_log_cut": (source_log_cut, queries, "sources"),
        "state_cut": (state_cut, queries, "state"),
    }
    for name, (damage, workload, named) in damages.items():
        copy = tmp_path / f"ckpt-{name}"
        shutil.copytree(checkpoint, copy)
        damage(copy)
        code, _, err = _cli(*_stream_args(workload, source, copy, tmp_path / f"out-{name}"))
        assert code == 2, (name, err)
        assert f"the checkpoint {copy} is damaged" in err and named in err, (name, err)
        assert "fresh --checkpoint" in err and "another --output" in err, (name, err)
        assert not [w for w in _WALL if w in err], (name, err)
    # the undamaged checkpoint goes on: the third file's windows, and the ones it closes
    code, _, err = _cli(*_stream_args(queries, source, checkpoint, tmp_path / "out"))
    assert code == 0, err
    assert {r["window_start"] for r in _results(tmp_path / "out")} >= {0, 10, 20, 30}


def _environment() -> dict[str, str]:
    """This process's environment, so that a subprocess imports the same trendagg."""
    import trendagg

    src = str(Path(trendagg.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=src + (os.pathsep + path if path else ""))


def test_a_second_stream_on_a_checkpoint_in_use_is_refused(spark: Any, tmp_path: Path) -> None:
    """Item 11: while a stream runs (another process) on a checkpoint, a second one on it
    is refused (exit 2) naming the folder; once the first is killed, its lock is stale
    and blocks nothing: a stream on the checkpoint goes on and writes every window."""
    queries = tmp_path / "q.tq"
    queries.write_text(_QUERIES)
    source = tmp_path / "in"
    source.mkdir()
    _jsonl(source / "a.jsonl", _events(0), 1_700_000_000)
    checkpoint = tmp_path / "ckpt"
    argv = ["stream", str(queries), str(source), "--checkpoint", str(checkpoint)]
    argv += ["--output", str(tmp_path / "out1"), "--quiet", "--master", "local[1]"]
    argv += ["--trigger", "1 second", "--timeout", "300"]
    first = subprocess.Popen(
        [sys.executable, "-c", "import sys; from trendagg.cli import main; sys.exit(main())"]
        + argv,
        env=_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the JVM and workers die with it
    )
    try:
        deadline = time.monotonic() + 180
        while not (checkpoint / "commits" / "0").exists():  # (a micro-batch done: running)
            assert first.poll() is None, first.stderr.read() if first.stderr else ""
            assert time.monotonic() < deadline, "the first stream did not start"
            time.sleep(0.2)
        started = time.monotonic()
        code, _, err = _cli(*_stream_args(queries, source, checkpoint, tmp_path / "out2"))
        assert code == 2, err
        assert f"the checkpoint {checkpoint} is in use by another stream" in err
        assert f"process {first.pid}" in err and "another --checkpoint" in err
        assert time.monotonic() - started < 30  # refused at once, not after idling
        assert not (tmp_path / "out2").exists()
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=60)
    _jsonl(source / "b.jsonl", [{"type": "Flush", "time": 10_000}], 1_700_000_001)
    code, _, err = _cli(*_stream_args(queries, source, checkpoint, tmp_path / "out1"))
    assert code == 0, err
    starts = {r["window_start"] for r in _results(tmp_path / "out1")}
    assert starts == {0, 10, 20}


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

"""Fault injection: `trendagg stream` killed with SIGKILL and restarted from its checkpoint.

The stream runs as a subprocess (the CLI, with Spark's JVM and Python workers in
its own process group) over a directory of event files, one file per
micro-batch. It is killed, process group and all, at points drawn with a fixed
seed: a random moment after a micro-batch starts, or while the sink writes a
result file (the subprocess holds each written file a moment before it renames
it into place, so the kill lands between the two). Each time it is restarted
from its checkpoint; the results of the last, unkilled run must equal the
batch run (`trendagg run --engine local`) on the same events, line for line:
nothing lost, nothing written twice. Marked `spark`; the long variant `slow`.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_stream import FLUSH

pytestmark = pytest.mark.spark

# The CLI, with the sink's atomic write held open: the file is written, then renamed
# into place only after a pause, and the sink pauses again after the rename (before
# Spark commits the micro-batch), so that a kill can land in either place.
_CLI = """
import os, sys, time
from trendagg.spark import stream

atomic = stream._Sink._atomic
pause = float(os.environ["TRENDAGG_TEST_WRITE_PAUSE"])

def slow_atomic(path, write):
    def held(tmp):
        write(tmp)
        time.sleep(pause)
    atomic(path, held)
    time.sleep(pause)

stream._Sink._atomic = staticmethod(slow_atomic)
from trendagg.cli import main
sys.exit(main(sys.argv[1:]))
"""

# the demo workload with windows of seconds, so that every micro-batch closes some
_WINDOWS = {"WITHIN 10 min SLIDE 5 min": "WITHIN 20 s SLIDE 10 s", "WITHIN 10 min": "WITHIN 15 s"}


def _workload() -> str:
    from importlib.resources import files

    text = files("trendagg.examples").joinpath("rideshare.tq").read_text()
    for old, new in _WINDOWS.items():
        assert old in text
        text = text.replace(old, new)
    return text


def _environment() -> dict[str, str]:
    """This process's environment, so the subprocesses import the same trendagg."""
    import trendagg

    src = str(Path(trendagg.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH", "")
    return dict(
        os.environ,
        PYTHONPATH=src + (os.pathsep + path if path else ""),
        TRENDAGG_TEST_WRITE_PAUSE="0.4",
    )


# a Travel leg whose speed is no number: read by all three query groups, rejected once
_BAD = {"type": "Travel", "driver": 1, "rider": 1, "district": 1, "speed": "fast"}


def _setup(root: Path, files: int, per_file: int) -> tuple[Path, Path, list[str], list[Any]]:
    """Queries, a directory of event files (then one far event that closes every window),
    and the batch run's result lines and rejected records."""
    from trendagg.generate import rideshare

    queries = root / "q.tq"
    queries.write_text(_workload())
    records: list[dict[str, Any]] = list(rideshare(files * per_file, seed=5))
    at = per_file // 2
    records.insert(at, {**_BAD, "time": records[at]["time"], "duration": 30})
    source = root / "in"
    source.mkdir()
    chunks = [records[i : i + per_file] for i in range(0, len(records), per_file)]
    for i, chunk in enumerate([*chunks, [FLUSH]]):
        path = source / f"events-{i:03d}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in chunk))
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # the order Spark reads them
    every = root / "all.jsonl"
    every.write_text("".join(json.dumps(e) + "\n" for e in records))
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from trendagg.cli import main; sys.exit(main())"]
        + ["run", str(queries), str(every), "--engine", "local"]
        + ["--rejects", str(root / "rejects.jsonl")],
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rejected = [json.loads(line)["record"] for line in (root / "rejects.jsonl").open()]
    return queries, source, done.stdout.splitlines(), rejected


def _stream(root: Path, queries: Path, source: Path) -> subprocess.Popen[str]:
    argv = ["stream", str(queries), str(source), "--once", "--quiet", "--max-files-per-trigger"]
    argv += ["1", "--checkpoint", str(root / "ckpt"), "--output", str(root / "out")]
    argv += ["--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=3"]
    return subprocess.Popen(
        [sys.executable, "-c", _CLI, *argv],
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the JVM and workers die with it
    )


def _batches_started(root: Path) -> int:
    offsets = root / "ckpt" / "offsets"
    return sum(p.name.isdigit() for p in offsets.iterdir()) if offsets.is_dir() else 0


def _writing(root: Path, since: float) -> bool:
    """A result, late or reject file written since ``since`` but not yet renamed into place."""
    for tmp in (root / "out").glob("*/.part-*.tmp"):
        try:
            if tmp.stat().st_mtime >= since:
                return True
        except FileNotFoundError:  # renamed meanwhile
            pass
    return False


def _written(root: Path, since: float) -> bool:
    """A result file renamed into place since ``since`` by a micro-batch not yet committed."""
    commits = root / "ckpt" / "commits"
    done = {p.name for p in commits.iterdir()} if commits.is_dir() else set()
    for part in (root / "out" / "results").glob("part-*.jsonl"):
        try:
            if part.stat().st_mtime >= since and str(int(part.name[5:13])) not in done:
                return True
        except FileNotFoundError:
            pass
    return False


def _kill_when(proc: subprocess.Popen[str], ready: Any, deadline: float) -> str:
    """SIGKILL the stream's process group once ``ready()``; what happened."""
    while not ready():
        if proc.poll() is not None:
            return f"ended by itself ({proc.returncode}) before the kill"
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    return "killed"


def _run_with_kills(root: Path, kills: list[str], seed: int, files: int) -> list[str]:
    """Kill the stream at ``kills`` ('batch': a random moment after a new micro-batch
    starts; 'write': while the sink writes a file; 'written': once a result file is in
    place, before Spark commits its micro-batch), restart it after each, then let it
    finish; the result lines it wrote. The source: ``files`` files of 400 events, then
    one far event."""
    rng = random.Random(seed)
    queries, source, expected, rejected = _setup(root, files, 400)
    assert len(expected) > 10 and [r["speed"] for r in rejected] == ["fast"]
    happened = []
    for kind in kills:
        before, since = _batches_started(root), time.time()
        proc = _stream(root, queries, source)
        if kind == "batch":
            delay = rng.uniform(0.0, 2.0)
            started: list[float] = []

            def ready(before: int = before, delay: float = delay, t: list[float] = started) -> bool:
                if not t and _batches_started(root) > before:
                    t.append(time.monotonic())
                return bool(t) and time.monotonic() - t[0] >= delay

        else:
            check = _writing if kind == "write" else _written

            def ready(since: float = since, check: Any = check) -> bool:
                return bool(check(root, since))

        happened.append(_kill_when(proc, ready, time.monotonic() + 180))
    assert happened == ["killed"] * len(kills)  # every kill hit a running stream
    proc = _stream(root, queries, source)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    written = [
        line
        for f in sorted((root / "out" / "results").glob("part-*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    assert sorted(written) == sorted(expected)  # nothing lost, nothing twice
    assert not list((root / "out").glob("late/*"))
    # the bad row, once (not once per query group, nor per run of its micro-batch)
    assert [
        json.loads(line)["record"]
        for f in sorted((root / "out" / "rejects").glob("part-*.jsonl"))
        for line in f.read_text().splitlines()
    ] == rejected
    # a file a kill left half-done was written again by the micro-batch run again
    assert not list((root / "out").glob("*/.part-*.tmp"))
    return written


def test_a_stream_killed_twice_and_restarted_writes_what_the_batch_run_writes(
    tmp_path: Path,
) -> None:
    _run_with_kills(tmp_path, ["write", "written"], seed=13, files=2)


@pytest.mark.slow
def test_a_stream_killed_at_random_points_and_restarted_writes_what_the_batch_run_writes(
    tmp_path: Path,
) -> None:
    kinds = random.Random(7).choices(["batch", "write", "written"], k=5)
    _run_with_kills(tmp_path, ["batch", *kinds], seed=7, files=6)

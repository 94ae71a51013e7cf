"""Outputs never destroy inputs; a closed pipe or a full disk ends a run with one line
(issue #13, items 4-6)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trendagg.cli import main

QUERY = "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000 s\n"
EVENTS = "type,time\nA,1\nB,2\nB,3\n"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "q.tq").write_text(QUERY)
    (tmp_path / "e.csv").write_text(EVENTS)
    return tmp_path / "q.tq", tmp_path / "e.csv"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["-o", "{events}"], "-o {events} is the events file {events}"),
        (["-o", "{queries}"], "-o {queries} is the queries file {queries}"),
        (["--rejects", "{events}"], "--rejects {events} is the events file"),
        (["--rejects", "{dir}/x.jsonl", "-o", "{dir}/x.jsonl"], "--rejects {dir}/x.jsonl is -o"),
        (["-o", "{dir}/./e.csv"], "is the events file"),  # the same file by another name
    ],
)
@pytest.mark.parametrize("engine", ["local", "python"])
def test_an_output_that_would_overwrite_an_input_is_refused_before_any_work(
    files: tuple[Path, Path], options: list[str], message: str, engine: str
) -> None:
    queries, events = files
    fill = {"events": str(events), "queries": str(queries), "dir": str(events.parent)}
    argv = [o.format(**fill) for o in options]
    code, out, err = cli("run", str(queries), str(events), "--engine", engine, *argv)
    assert code == 2 and out == ""
    assert message.format(**fill) in err and "choose another path" in err
    assert events.read_text() == EVENTS and queries.read_text() == QUERY  # untouched
    assert not (events.parent / "x.jsonl").exists()


def test_an_output_inside_an_input_folder_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "events"
    folder.mkdir()
    pq.write_table(pa.table({"type": ["A", "B"], "time": [1, 2]}), folder / "part.parquet")
    (tmp_path / "q.tq").write_text(QUERY)
    out_path = folder / "results.parquet"
    code, _, err = cli("run", str(tmp_path / "q.tq"), str(folder), "-o", str(out_path))
    assert code == 2 and "is inside the events file" in err and not out_path.exists()


def test_an_output_in_a_missing_folder_is_refused_before_any_work(
    files: tuple[Path, Path],
) -> None:
    queries, events = files
    code, _, err = cli("run", str(queries), str(events), "-o", "/nonexistent/dir/out.csv")
    assert code == 2 and "folder /nonexistent/dir does not exist" in err


def test_the_outputs_that_are_fine_still_work(files: tuple[Path, Path], tmp_path: Path) -> None:
    queries, events = files
    code, _, err = cli(
        "run",
        str(queries),
        str(events),
        "--engine",
        "local",
        "-o",
        str(tmp_path / "out.jsonl"),
        "--rejects",
        str(tmp_path / "bad.jsonl"),
    )
    assert code == 0, err
    assert '"COUNT(*)": 3' in (tmp_path / "out.jsonl").read_text()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_disk_is_one_line_and_exit_1(files: tuple[Path, Path]) -> None:
    queries, events = files
    code, _, err = cli("run", str(queries), str(events), "--engine", "local", "-o", "/dev/full")
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        "trendagg: cannot write results /dev/full: No space left on device"
    )
    code, _, err = cli(
        "run", str(queries), str(events), "--engine", "python", "--rejects", "/dev/full"
    )
    assert code == 0  # no row was rejected: nothing to write


def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    trendagg = f"{sys.executable} -m trendagg.cli"
    return subprocess.run(
        ["bash", "-c", command.replace("trendagg", trendagg)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def test_a_closed_pipe_ends_the_run_quietly(tmp_path: Path) -> None:
    done = _shell("set -o pipefail; trendagg generate rideshare -n 200000 | head -1", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('{"type": "Request"') and len(done.stdout.splitlines()) == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    (tmp_path / "q.tq").write_text(
        "RETURN COUNT(*) PATTERN SEQ(Request R, Travel T+) WITHIN 10 min"
    )
    _shell("trendagg generate rideshare -n 20000 -o r.csv", tmp_path)
    done = _shell(
        "set -o pipefail; trendagg run q.tq r.csv --engine python --quiet | head -1", tmp_path
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_standard_output_on_a_full_disk(files: tuple[Path, Path]) -> None:
    queries, events = files
    done = _shell(f"trendagg run {queries} {events} --engine python > /dev/full", files[0].parent)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "trendagg: cannot write results to standard output: No space left on device"
    )
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_a_stream_output_or_checkpoint_in_its_source_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    source = tmp_path / "in"
    source.mkdir()
    (tmp_path / "q.tq").write_text(QUERY)
    base = ["stream", str(tmp_path / "q.tq"), str(source)]
    code, _, err = cli(*base, "--output", str(source / "out"), "--checkpoint", str(tmp_path / "c"))
    assert code == 2 and "--output" in err and "is inside the source" in err
    code, _, err = cli(*base, "--output", str(tmp_path / "o"), "--checkpoint", str(tmp_path / "o"))
    assert code == 2 and "--checkpoint" in err and "is --output" in err

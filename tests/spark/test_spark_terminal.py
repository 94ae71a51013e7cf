"""What `trendagg run --engine spark` leaves on the terminal (issue #39): its own lines
only (what Spark's Python workers print goes to a log file, the JVM's notice of the
incubator module it loads and the streaming runner's messages are dropped), and on
Ctrl-C one line and status 130, the JVM and its workers gone with it. Each test runs the
CLI in a process of its own, with a JVM of its own (about 20 s each here)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trendagg import generate

pytestmark = pytest.mark.spark

QUERIES = Path(__file__).resolve().parents[2] / "src" / "trendagg" / "examples" / "rideshare.tq"


@pytest.fixture(autouse=True)
def _needs_spark() -> None:
    pytest.importorskip("pyspark", reason="PySpark is not installed")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime: the Spark engine needs Java 17+")


def _cli(*argv: str, **env: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "trendagg.cli", *argv]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env}
    environment.pop("TRENDAGG_WORKER_LOG", None)
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    )


def _rides(path: Path, n: int) -> Path:
    generate.write_stream(
        generate.rideshare(n, seed=7), str(path), columns=generate.RIDESHARE_COLUMNS
    )
    return path


def test_a_spark_run_prints_its_lines_only(tmp_path: Path) -> None:
    """NUMBA_DEBUG_CACHE=1 makes numba print a line per kernel it loads, in the Spark
    workers too: those went to the terminal between trendagg's lines (with the JVM's
    'WARNING: Using incubator modules: jdk.incubator.vector'). Now the results go to
    stdout as the local engine writes them, stderr holds the summary and one line naming
    the workers' log, and the log holds what they printed."""
    from trendagg.cli import main

    events = _rides(tmp_path / "rides.csv", 3000)
    run = _cli("run", str(QUERIES), str(events), "--format", "csv", NUMBA_DEBUG_CACHE="1")
    out, err = run.communicate(timeout=300)
    local = tmp_path / "local.csv"
    assert (
        main(["run", str(QUERIES), str(events), "--engine", "local", "-q", "-o", str(local)]) == 0
    )
    lines = err.splitlines()
    assert run.returncode == 0, err
    assert out == local.read_text()
    assert len(lines) == 2, err
    assert lines[0].startswith("trendagg: read 3,000 events (0 rejected) from ")
    said, _, log = lines[1].partition("; see ")
    assert said.startswith("trendagg: Spark's Python workers printed "), err
    printed = Path(log).read_text().splitlines()
    Path(log).unlink()
    assert said == f"trendagg: Spark's Python workers printed {len(printed):,} lines"
    assert printed and all(line.startswith("[cache] ") for line in printed), printed[:3]


def test_a_stream_prints_its_lines_only(tmp_path: Path) -> None:
    """Every stream start made PySpark's TransformWithStateInPandas runner print five
    messages (each with an empty line) between trendagg's lines."""
    source = tmp_path / "incoming"
    source.mkdir()
    _rides(source / "a.csv", 2000)
    run = _cli(
        "stream", str(QUERIES), str(source), "--once", "--checkpoint", str(tmp_path / "c"),
        "--output", str(tmp_path / "out"),
    )  # fmt: skip
    out, err = run.communicate(timeout=300)
    assert (run.returncode, out) == (0, ""), err
    lines = err.splitlines()
    assert lines[0].startswith("trendagg: streaming 3 queries over ") and len(lines) >= 3, err
    assert all(line.startswith("trendagg: ") for line in lines), err
    assert lines[-1].startswith("trendagg: stopped; "), err


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux: /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc")
def test_ctrl_c_during_a_spark_job_exits_130_and_stops_spark(tmp_path: Path) -> None:
    """SIGINT once Spark's Python workers run the job (their daemon is up): PySpark
    cancels the job, which reached the user as 'Spark failed: SPARK_JOB_CANCELLED'."""
    events = _rides(tmp_path / "rides.csv", 300_000)
    run = _cli("run", str(QUERIES), str(events), "-o", str(tmp_path / "out.jsonl"))
    deadline = time.monotonic() + 240
    spark: list[int] = []
    while run.poll() is None and time.monotonic() < deadline:
        spark = _descendants(run.pid)
        if any("spark.daemon " in _cmdline(p) for p in spark):  # (PySpark's, or ours)
            break
        time.sleep(0.05)
    assert run.poll() is None, "the run ended before its job was seen running"
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=120)
    assert (run.returncode, err, out) == (130, "trendagg: interrupted\n", "")
    deadline = time.monotonic() + 60
    while any(map(_alive, spark)) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [(p, _cmdline(p)[:80]) for p in spark if _alive(p)]
    assert not left, f"Spark's processes outlived the interrupted run: {left}"

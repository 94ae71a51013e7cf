"""Ctrl-C anywhere in the CLI: one line, ``trendagg: interrupted``, exit status 130, no
traceback; a Spark job that PySpark cancelled for it, and a stream stopped by it, too
(issue #39). Without a JVM: the Spark failure and the stream are stand-ins."""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from trendagg import generate
from trendagg.cli import INTERRUPTED, main
from trendagg.spark import session

QUERIES = Path(__file__).resolve().parents[2] / "src" / "trendagg" / "examples" / "rideshare.tq"


@pytest.fixture(autouse=True)
def _jvm_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C silences the JVM's stderr for the rest of the process (quiet_jvm): here,
    for the test only."""
    monkeypatch.setattr(session, "_QUIET", threading.Event())
    monkeypatch.setattr(session, "_BAR_SHOWN", threading.Event())


def _opened(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (Linux: its /proc/PID/fd links)."""
    folder = Path(f"/proc/{pid}/fd")
    try:
        return any(os.readlink(folder / fd) == str(path) for fd in os.listdir(folder))
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc to see the run start")
def test_ctrl_c_during_a_local_run_exits_130_with_one_line(tmp_path: Path) -> None:
    events = tmp_path / "rides.csv"
    generate.write_stream(
        generate.rideshare(300_000, seed=7), str(events), columns=generate.RIDESHARE_COLUMNS
    )
    command = [sys.executable, "-m", "trendagg.cli", "run", str(QUERIES), str(events)]
    command += ["--engine", "local", "-o", str(tmp_path / "out.jsonl")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while not _opened(run.pid, events) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)  # (the run reads the file: the CLI's main is running)
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert (run.returncode, err.decode(), out.decode()) == (
        INTERRUPTED,
        "trendagg: interrupted\n",
        "",
    )
    assert INTERRUPTED == 130


@pytest.fixture
def interrupts(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh record of Ctrl-C, and this process's SIGINT handler and root log filters
    as they were, afterwards."""
    monkeypatch.setattr(session, "_INTERRUPTED", threading.Event())
    handler = signal.getsignal(signal.SIGINT)
    filters = list(logging.getLogger().filters)
    yield session
    signal.signal(signal.SIGINT, handler)
    logging.getLogger().filters[:] = filters


def _cancelled() -> Exception:
    """What PySpark raises for a job that its Ctrl-C handler cancelled."""
    from pyspark.errors import PySparkException

    return PySparkException(
        "[SPARK_JOB_CANCELLED] Job 0 cancelled as part of cancellation of all jobs SQLSTATE: XXKDA"
    )


def _spark_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ctrl_c: bool
) -> tuple[int, str, str]:
    """``trendagg run --engine spark`` whose Spark job is cancelled, after Ctrl-C or not."""
    pytest.importorskip("pyspark")
    (tmp_path / "q.tq").write_text("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s\n")
    (tmp_path / "e.csv").write_text("type,time\nA,1\nB,2\n")

    def job(*args: Any) -> Any:
        session.record_interrupts()  # (as spark_session does, around PySpark's handler)
        if ctrl_c:
            with suppress(KeyboardInterrupt):  # (caught on the way, as py4j and PySpark may)
                signal.raise_signal(signal.SIGINT)
        raise _cancelled()

    monkeypatch.setattr("trendagg.cli._run_spark", job)
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(tmp_path / "q.tq"), str(tmp_path / "e.csv")], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_a_spark_job_cancelled_by_ctrl_c_is_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interrupts: Any
) -> None:
    assert _spark_run(tmp_path, monkeypatch, ctrl_c=True) == (130, "", "trendagg: interrupted\n")
    assert interrupts.interrupted()


def test_a_spark_job_cancelled_without_ctrl_c_is_a_spark_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interrupts: Any
) -> None:
    code, out, err = _spark_run(tmp_path, monkeypatch, ctrl_c=False)
    assert (code, out) == (1, "")
    assert err.startswith("trendagg: Spark failed: [SPARK_JOB_CANCELLED]"), err
    assert not interrupts.interrupted()


def test_py4j_logs_of_calls_cut_by_ctrl_c_are_dropped(interrupts: Any) -> None:
    """py4j logs each call Ctrl-C cut short on the root logger, with a traceback: after
    Ctrl-C only (before, they may say what went wrong)."""
    interrupts.record_interrupts()
    py4j = os.path.join(os.sep, "lib", "py4j", "java_gateway.py")

    def record(pathname: str) -> logging.LogRecord:
        return logging.LogRecord("root", logging.ERROR, pathname, 1, "while sending", None, None)

    root = logging.getLogger()
    assert root.filter(record(py4j))
    with suppress(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    assert not root.filter(record(py4j))
    assert root.filter(record(os.path.join(os.sep, "lib", "numba", "core.py")))


class _Stream:
    """A running StreamingQuery stand-in that Ctrl-C reaches while the CLI waits on it."""

    def __init__(self) -> None:
        self.isActive = True
        self.lastProgress = None
        self.stopped = 0

    def awaitTermination(self, seconds: float) -> None:  # noqa: N802 (Spark's name)
        raise KeyboardInterrupt

    def stop(self) -> None:
        self.stopped += 1
        self.isActive = False

    def exception(self) -> None:
        return None


def test_a_stream_stopped_by_ctrl_c_stops_cleanly_then_says_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trendagg.spark.stream import StreamStats

    pytest.importorskip("pyspark")
    (tmp_path / "q.tq").write_text("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s\n")
    (tmp_path / "in").mkdir()
    query = _Stream()
    monkeypatch.setattr("trendagg.cli._spark", lambda args: None)
    monkeypatch.setattr(
        "trendagg.spark.stream.stream_trends", lambda *a, **k: (query, StreamStats())
    )
    out, err = io.StringIO(), io.StringIO()
    argv = ["stream", str(tmp_path / "q.tq"), str(tmp_path / "in"), "--source-format", "json"]
    argv += ["--checkpoint", str(tmp_path / "ckpt"), "--output", str(tmp_path / "out")]
    code = main(argv, out=out, err=err)
    lines = err.getvalue().splitlines()
    assert (code, query.stopped, out.getvalue()) == (130, 1, "")
    assert lines[-2].startswith("trendagg: stopped; ") and lines[-1] == "trendagg: interrupted"

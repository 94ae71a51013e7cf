"""How Spark's output reaches the terminal, without a JVM: the JVM's standard error passed
on without Java's incubator notice, Spark's progress bar as it comes; the workers' log
files of ended runs cleaned up when empty, kept when they hold something (issue #39)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from trendagg.spark import session


@pytest.fixture(autouse=True)
def _jvm_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JVM's stderr as it is before any Ctrl-C (quiet_jvm sets it for the process)."""
    monkeypatch.setattr(session, "_QUIET", threading.Event())
    monkeypatch.setattr(session, "_BAR_SHOWN", threading.Event())


def _forwarded(*chunks: bytes) -> bytes:
    """What ``session._forward`` passes on of the JVM's stderr written in these chunks."""
    jvm_read, jvm_write = os.pipe()
    out_read, out_write = os.pipe()
    with os.fdopen(jvm_read, "rb", buffering=0) as pipe:
        thread = threading.Thread(target=session._forward, args=(pipe, out_write))
        thread.start()
        for chunk in chunks:
            os.write(jvm_write, chunk)
        os.close(jvm_write)
        thread.join(timeout=10)
    os.close(out_write)
    with os.fdopen(out_read, "rb") as out:
        return out.read()


def test_the_jvm_s_incubator_notice_is_dropped_and_the_rest_passed_on() -> None:
    notice = b"WARNING: Using incubator modules: jdk.incubator.vector\n"
    bar = b"\r[Stage 0:>          (0 + 1) / 1]\r"
    log = b"25/12/02 10:00:00 ERROR Executor: a failure\n"
    assert _forwarded(notice, bar, log) == bar + log
    # a line in pieces, the notice among other lines, a last line without its end
    assert _forwarded(b"WARNING: Using incub", b"ator modules: x\nstart ", b"end\ntail") == (
        b"start end\ntail"
    )
    assert _forwarded(b"WARNING: something else\n") == b"WARNING: something else\n"


def test_the_streaming_runner_s_prints_are_dropped() -> None:
    """PySpark's TransformWithStateInPandas runner (a Python worker without the daemon)
    prints five messages, each with an empty line after it, as every stream starts."""
    said = (
        b"Starting Streaming TransformWithStateInPandas Python worker.\n\n"
        b"Streaming TransformWithStateInPandas Python worker finish init stage of Python "
        b"runner. Received UDF from JVM: <bound method ...>\n\n"
    )
    assert _forwarded(said[:30], said[30:], b"\nkept\n") == b"\nkept\n"


def test_after_ctrl_c_nothing_of_the_jvm_s_reaches_the_terminal(
    capfd: pytest.CaptureFixture[str],
) -> None:
    bar = b"\r[Stage 2:=====>        (1 + 1) / 2]\r"
    assert _forwarded(bar) == bar
    assert session._BAR_SHOWN.is_set()
    session.quiet_jvm()
    cleared = capfd.readouterr().err
    assert cleared.startswith("\r ") and cleared.endswith(" \r") and not cleared.strip()
    stack = b'Exception in thread "stream execution thread" java.lang.StackOverflowError\n'
    assert _forwarded(stack, bar) == b""


def test_empty_worker_logs_of_ended_runs_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("TRENDAGG_WORKER_LOG", raising=False)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], stdout=-1)
    gone = int(ended.stdout)
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    folder = tmp_path / f"trendagg-{uid}"
    folder.mkdir()
    (folder / f"spark-workers-{gone}.log").write_text("")
    (folder / f"spark-workers-{gone + 1_000_000_000}.log").write_text("a worker's line\n")
    (folder / f"spark-workers-{os.getppid()}.log").write_text("")  # (a run still running)
    mine = session.worker_log()
    assert mine == str(folder / f"spark-workers-{os.getpid()}.log")
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"spark-workers-{gone + 1_000_000_000}.log", f"spark-workers-{os.getppid()}.log"]
    )


def test_a_worker_log_is_named_at_exit_when_workers_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "workers.log"
    log.write_text("[cache] index loaded\n[cache] data loaded\n")
    session._worker_log_said(str(log))
    assert (
        capsys.readouterr().err == f"trendagg: Spark's Python workers printed 2 lines; see {log}\n"
    )
    log.write_text("")
    session._worker_log_said(str(log))
    assert (capsys.readouterr().err, log.exists()) == ("", False)

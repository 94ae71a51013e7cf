"""Getting a SparkSession, with clear errors when PySpark or Java is missing."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from trendagg.errors import ExecutionError
from trendagg.extras import require

# Ctrl-C received while a SparkSession of this process ran (see record_interrupts)
_INTERRUPTED = threading.Event()


def require_pyspark() -> Any:
    """Import pyspark or say in one line how to install it (:mod:`trendagg.extras`)."""
    return require("pyspark", "the Spark engine", "or run with --engine local")


def require_java() -> None:
    """Spark runs on a JVM: find one or say what to install."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java") is None:
        raise ExecutionError(
            "the Spark engine needs a Java runtime (17 or newer) and found none: install one "
            "(for example 'apt-get install openjdk-17-jre-headless') or set JAVA_HOME, "
            "or run with --engine local"
        )


def _log_level() -> str:
    level = os.environ.get("TRENDAGG_SPARK_LOG", "fatal").strip().lower()
    known = ("off", "fatal", "error", "warn", "info", "debug", "trace", "all")
    if level not in known:
        raise ExecutionError(
            f"TRENDAGG_SPARK_LOG is '{level}'; set it to one of {', '.join(known)}"
        )
    return level


def spark_session(master: str | None = None, conf: Sequence[tuple[str, str]] = ()) -> Any:
    """The active SparkSession, or a new one (embedded ``local[*]`` by default, UI off).

    A new embedded one keeps the terminal for trendagg's lines: its Python workers
    write what they print to a log file (:func:`worker_log`, see
    :mod:`trendagg.spark.daemon`; ``spark.python.daemon.module=pyspark.daemon`` in
    ``conf`` keeps them on the terminal), the JVM's notice of the incubator module
    Spark loads is dropped from its output, and Ctrl-C while the JVM starts takes
    effect once it is up (so that it stops with this process, not an orphan)."""
    require_pyspark()
    require_java()
    from pyspark.sql import SparkSession

    from trendagg.spark.package import cluster_conf

    # Python workers must run this interpreter, so they import the same trendagg and pyarrow
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    url = master or os.environ.get("TRENDAGG_SPARK_MASTER", "local[*]")
    from importlib.resources import files

    log4j = files("trendagg.spark") / "conf" / "log4j2.properties"
    defaults = {
        "spark.app.name": "trendagg",
        "spark.master": url,
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Spark's log: fatal only unless TRENDAGG_SPARK_LOG says (error, warn, info, ...);
        # a stage progress bar only on a terminal
        "spark.driver.extraJavaOptions": (
            f"-Dlog4j2.configurationFile=file:{log4j} -Dtrendagg.logLevel={_log_level()}"
        ),
        "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() else "false",
    }
    if url.startswith("local"):  # (the workers' output: see trendagg.spark.daemon)
        defaults["spark.python.daemon.module"] = "trendagg.spark.daemon"
    given = cluster_conf(url, dict(conf))  # (a cluster's executors get this trendagg)
    settings = {**defaults, **given}
    _launch(settings)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    record_interrupts()
    return session


def worker_log() -> str:
    """The file Spark's Python workers of an embedded master write their output to:
    ``$TRENDAGG_WORKER_LOG``, else one per driver process in the temporary folder
    (removed at exit when nothing was written to it)."""
    import tempfile

    from trendagg.spark.daemon import WORKER_LOG

    given = os.environ.get(WORKER_LOG)
    if given:
        return given
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    folder = os.path.join(tempfile.gettempdir(), f"trendagg-{uid}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    # the empty logs of ended runs go (a worker that starts as its driver exits makes one)
    for name in os.listdir(folder):
        pid = name.removeprefix("spark-workers-").removesuffix(".log")
        path = os.path.join(folder, name)
        with suppress(OSError):
            if pid.isdigit() and not _running(int(pid)) and os.path.getsize(path) == 0:
                os.remove(path)
    return os.path.join(folder, f"spark-workers-{os.getpid()}.log")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # (another user's: running)
    return True


def _launch(settings: dict[str, str]) -> None:
    """Start Spark's JVM and a SparkContext with ``settings``, unless a JVM runs already
    (then the builder finds it). What PySpark would do, but for three things: Ctrl-C
    while the JVM starts is held until its gateway is up (raised then: interrupted
    earlier, PySpark leaves a JVM behind that never stops); the JVM's standard error
    passes through :func:`_forward`; the workers' log is named in the environment the
    JVM passes on to the workers (:func:`worker_log`)."""
    import subprocess

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    from trendagg.spark.daemon import WORKER_LOG

    if getattr(SparkContext, "_gateway", None) is not None:
        return
    if settings.get("spark.python.daemon.module") == "trendagg.spark.daemon":
        log = worker_log()
        if not os.environ.get(WORKER_LOG):
            os.environ[WORKER_LOG] = log
            import atexit

            atexit.register(_worker_log_said, log)
    conf = SparkConf()
    for key, value in settings.items():
        conf.set(key, value)
    with _holding_interrupts():
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    process = getattr(gateway, "proc", None)
    if process is not None and process.stderr is not None:
        threading.Thread(
            target=_forward, args=(process.stderr,), name="trendagg-jvm-stderr", daemon=True
        ).start()
    SparkContext(conf=conf, gateway=gateway)  # (the active context: the builder takes it)
    record_interrupts()  # (around PySpark's handler, which the context just installed)


# What the JVM prints that says nothing to a trendagg user: Java's notice at start that
# Spark loads an incubator module (its launcher always adds jdk.incubator.vector), and
# what PySpark's streaming TransformWithStateInPandas runner prints as it starts (a Python
# worker Spark starts without the daemon, whose output the JVM copies to its stderr: five
# messages, each followed by an empty line)
_JVM_NOISE = (
    b"WARNING: Using incubator modules:",
    b"Starting Streaming TransformWithStateInPandas Python worker",
    b"Streaming TransformWithStateInPandas Python worker ",
)
# Set once the user interrupted (see quiet_jvm): nothing of the JVM's reaches the terminal
_QUIET = threading.Event()
_BAR_SHOWN = threading.Event()  # the last thing passed on was a progress bar's update


def quiet_jvm() -> None:
    """Pass nothing more of the JVM's stderr on (after Ctrl-C: what Spark prints while it
    stops, a stream thread's stack, says nothing the user does not know); a progress bar
    left drawn is cleared."""
    if not _QUIET.is_set():
        _QUIET.set()
        if _BAR_SHOWN.is_set():
            _write(2, b"\r" + b" " * shutil.get_terminal_size().columns + b"\r")


def _forward(pipe: Any, target: int = 2) -> None:
    """Copy the JVM's standard error to ``target`` as it comes (each update of Spark's
    progress bar too, which ends in a carriage return), without the lines that start
    with one of :data:`_JVM_NOISE` (nor an empty line right after one), and nothing once
    :func:`quiet_jvm` was called; until the JVM closes it."""
    held = b""
    fd = pipe.fileno()
    after = False  # (the last line was noise)
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        held += chunk
        end = max(held.rfind(b"\n"), held.rfind(b"\r")) + 1
        ready, held = held[:end], held[end:]
        shown = []
        for line in ready.splitlines(keepends=True):
            noise = line.startswith(_JVM_NOISE)
            if not (noise or (after and line in (b"\n", b"\r\n"))):
                shown.append(line)
            after = noise
        if shown and not _QUIET.is_set():
            _write(target, b"".join(shown))
            (_BAR_SHOWN.set if shown[-1].endswith(b"\r") else _BAR_SHOWN.clear)()
    if not _QUIET.is_set():
        _write(target, held)


def _write(fd: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(fd, data) :]
        except OSError:
            return


def _worker_log_said(path: str) -> None:
    """At exit: the workers' log removed when empty, else named on stderr (once)."""
    try:
        with open(path, "rb") as handle:
            lines = sum(1 for _ in handle)
    except OSError:
        return
    if not lines:
        with suppress(OSError):
            os.remove(path)
        return
    said = "line" if lines == 1 else "lines"
    print(f"trendagg: Spark's Python workers printed {lines:,} {said}; see {path}", file=sys.stderr)


@contextmanager
def _holding_interrupts() -> Iterator[None]:
    """Ctrl-C held while the block runs (in the main thread), recorded
    (:func:`interrupted`) and raised as KeyboardInterrupt when it ends."""
    import signal

    got = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():

        def hold(signum: int, frame: Any) -> None:
            got.set()
            _INTERRUPTED.set()

        previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if got.is_set():
        raise KeyboardInterrupt


def record_interrupts() -> None:
    """Record Ctrl-C (SIGINT) in :func:`interrupted`, before the handler in place runs.

    PySpark's handler (installed when a SparkContext starts) cancels the running jobs and
    raises KeyboardInterrupt, which py4j or PySpark may catch on the way: what reaches
    the caller is then a Spark failure, ``SPARK_JOB_CANCELLED``. The record tells that
    failure from one Spark had on its own (:func:`cancelled_by_interrupt`), and keeps
    py4j's log of the calls the interrupt cut off the terminal (:func:`_after_interrupt`).
    In the main thread only (Python runs signal handlers there); installed once."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGINT)
    if getattr(previous, "records_interrupts", False):
        return

    def handler(signum: int, frame: Any) -> None:
        _INTERRUPTED.set()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    handler.records_interrupts = True  # type: ignore[attr-defined]
    signal.signal(signal.SIGINT, handler)
    import logging

    logging.getLogger().addFilter(_after_interrupt)


def _after_interrupt(record: Any) -> bool:
    """A filter of the root logger: py4j logs there, with a traceback, each call to the JVM
    that Ctrl-C cut short (``KeyboardInterrupt while sending command``); after Ctrl-C
    those say nothing the user does not know."""
    return not (_INTERRUPTED.is_set() and f"{os.sep}py4j{os.sep}" in record.pathname)


def interrupted() -> bool:
    """Whether Ctrl-C was received since :func:`record_interrupts` (this process)."""
    return _INTERRUPTED.is_set()


def cancelled_by_interrupt(exc: BaseException) -> bool:
    """A Spark failure that follows Ctrl-C (its jobs cancelled, ``SPARK_JOB_CANCELLED``, or
    the connection to the JVM cut while a call waited): the user's interrupt, not Spark's
    failure."""
    return interrupted() and (is_spark_failure(exc) or _py4j_error(exc))


def _py4j_error(exc: BaseException) -> bool:
    try:
        from py4j.protocol import Py4JError
    except ImportError:
        return False
    return isinstance(exc, Py4JError)


def failure_text(exc: BaseException) -> str:
    """A failure's whole text (Spark's: the JVM's message and stacks)."""
    return str(getattr(exc, "_desc", None) or getattr(exc, "desc", None) or exc)


def worker_error(exc: BaseException) -> Exception | None:
    """Our own error raised inside a Spark Python worker, as raised there (same class and
    message, so the CLI gives the local engine's message and exit code), or None."""
    import re

    from trendagg import errors

    found = re.findall(r"trendagg\.errors\.(\w+): (.+)", failure_text(exc))
    if not found:
        return None
    name, message = found[-1]
    kind = getattr(errors, name, None)
    if not (isinstance(kind, type) and issubclass(kind, errors.TrendAggError)):
        return None
    return kind(message.strip())


def spark_failure(exc: BaseException) -> str:
    """What a Spark failure says to a user, without the JVM and Python stacks.

    Our own errors raised inside Spark's Python workers come first (their
    message is meant for the user); else the last exception line of a Python
    worker's traceback; else the deepest Java cause with its lines of detail
    (a CSV header that does not match names both headers); else the first line.
    """
    import re

    text = failure_text(exc)
    ours = re.findall(r"trendagg\.errors\.\w+: (.+)", text)
    if ours:
        return ours[-1].strip()
    worker = "exception was thrown from the Python worker"
    if worker in text:  # the worker's traceback: its last exception line is the cause
        tail = text[text.index(worker) :].split("\n\tat ")[0]  # up to the Java stack
        raised = re.findall(
            r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\w*)(: .*)?$", tail, re.M
        )
        if raised:
            kind, detail = raised[-1]
            return f"{kind}{detail} (in a Spark Python worker)"
    causes = list(re.finditer(r"Caused by: ([\w.$]+): (.*)", text))
    if causes:
        last = causes[-1]
        detail = [last.group(2).strip()]
        for line in text[last.end() :].splitlines()[1:]:
            if line.startswith("\tat ") or line.startswith("\t...") or not line.strip():
                break
            detail.append(line.strip())
        return "\n  ".join(detail)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else exc.__class__.__name__


def is_spark_failure(exc: BaseException) -> bool:
    """A failure reported by Spark (the JVM or its Python workers), not by trendagg."""
    try:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException
    except ImportError:
        return False
    return isinstance(exc, (Py4JJavaError, PySparkException))

"""Getting a SparkSession, with clear errors when PySpark or Java is missing."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from typing import Any

from trendagg.errors import ExecutionError


def require_pyspark() -> Any:
    """Import pyspark or say how to install it."""
    try:
        import pyspark
    except ImportError:
        raise ExecutionError(
            "the Spark engine needs PySpark: pip install 'trendagg[spark]' "
            "(or run with --engine local)"
        ) from None
    return pyspark


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
    """The active SparkSession, or a new one (embedded ``local[*]`` by default, UI off)."""
    require_pyspark()
    require_java()
    from pyspark.sql import SparkSession

    from trendagg.spark.package import cluster_conf

    # Python workers must run this interpreter, so they import the same trendagg and pyarrow
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    url = master or os.environ.get("TRENDAGG_SPARK_MASTER", "local[*]")
    builder = SparkSession.builder.appName("trendagg").master(url)
    from importlib.resources import files

    log4j = files("trendagg.spark") / "conf" / "log4j2.properties"
    defaults = {
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
    given = cluster_conf(url, dict(conf))  # (a cluster's executors get this trendagg)
    for key, value in {**defaults, **given}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


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

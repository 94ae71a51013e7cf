"""PySpark's daemon, with what its Python workers print kept off the user's terminal.

Under an embedded (``local``) master, Spark's Python workers are children of the
JVM, which copies their standard output and error to its own, the terminal that
runs ``trendagg``: a warning raised in a worker, numba's messages
(``NUMBA_DEBUG_CACHE=1``), any ``print`` came out between trendagg's lines.
:func:`trendagg.spark.session.spark_session` names this module Spark's daemon
(``spark.python.daemon.module``) for such masters: it runs PySpark's own daemon,
and each worker it forks writes its standard output and error to the file
:data:`WORKER_LOG` names (the driver picks it, see
:func:`trendagg.spark.session.worker_log`), appended. The daemon itself keeps its
standard output, which tells the JVM its port. On a cluster the workers' output
goes to the executors' logs, as Spark keeps it; nothing changes there.
"""

from __future__ import annotations

import os
from contextlib import suppress
from typing import Any

#: the environment variable that names the workers' log file
WORKER_LOG = "TRENDAGG_WORKER_LOG"


def _to_log(path: str) -> None:
    """Point this process's standard output and error (the descriptors, so that what C
    code prints goes there too) at the end of ``path``."""
    import sys

    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        return  # (a log that cannot be opened: the output goes where it went)
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def main() -> None:
    """Run PySpark's daemon; each worker it forks writes its output to the log."""
    import pyspark.daemon as daemon

    path = os.environ.get(WORKER_LOG)
    run = daemon.worker

    def worker(*args: Any, **kwargs: Any) -> Any:
        if path:
            _to_log(path)
        return run(*args, **kwargs)

    daemon.worker = worker  # (the daemon's loop calls it by this name, after each fork)
    daemon.manager()


if __name__ == "__main__":
    main()

"""A Spark standalone cluster on this machine, started from the installed PySpark.

The cluster test and ``make bench-spark`` run trendagg's jobs on one: a master and
workers (``spark-class org.apache.spark.deploy.master.Master`` and
``org.apache.spark.deploy.worker.Worker``), each on free ports, stopped when the
``with`` block ends, also on failure. The executors are separate JVMs with Python
workers of their own, as on separate machines; what reaches them is what the job
ships (see :mod:`trendagg.spark.package`). On real machines the same daemons are
started by Spark's scripts (``sbin/start-master.sh``, ``sbin/start-worker.sh``).

    with standalone_cluster(Path("/tmp/cluster")) as url:  # spark://127.0.0.1:PORT
        subprocess.run(["trendagg", "run", "--master", url, "q.tq", "events.csv"])
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def standalone_cluster(
    folder: Path,
    *,
    workers: int = 2,
    cores: int = 1,
    memory: str = "1g",
    timeout: float = 120.0,
) -> Iterator[str]:
    """Start a master and ``workers`` workers of ``cores`` cores and ``memory`` each;
    yield the master's URL once every worker has registered. Logs and the workers'
    folders go under ``folder``. Raises RuntimeError, with the daemons' last log lines,
    when the workers are not alive within ``timeout`` seconds."""
    import pyspark

    home = os.path.dirname(pyspark.__file__)
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPARK_HOME": home, "SPARK_LOG_DIR": str(folder / "logs")}
    port, web = free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = os.path.join(home, "bin", "spark-class")
    commands = [["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(web)]]  # fmt: skip
    for i in range(workers):
        commands.append(
            ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--cores", str(cores), "--memory", memory, "--webui-port", str(free_port()),
             "--work-dir", str(folder / f"work{i}"), url]
        )  # fmt: skip
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i, command in enumerate(commands):
            with (folder / f"daemon{i}.log").open("w") as log:
                procs.append(
                    subprocess.Popen([spark_class, *command], env=env, stdout=log, stderr=log)
                )
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{web}/json/", timeout=2) as r:
                    state = json.load(r)
                if sum(w["state"] == "ALIVE" for w in state["workers"]) == workers:
                    break
            except (OSError, ValueError):
                # not up yet; a master whose web UI is still starting answers /json/ with
                # its HTML page (seen once in CI), which is not JSON either
                pass
            if time.monotonic() > deadline:
                logs = "\n".join(p.read_text()[-2000:] for p in folder.glob("daemon*.log"))
                raise RuntimeError(f"the cluster did not start within {timeout:g} s:\n{logs}")
            time.sleep(0.5)
        yield url
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


__all__ = ["free_port", "standalone_cluster"]

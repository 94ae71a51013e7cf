"""A Spark standalone cluster (a master and two one-core workers, started from the
installed PySpark) runs `trendagg run --master` and `aggregate_trends` with the rows of
the local engine; the executors import the trendagg shipped with the job (an archive
of the package and its compiled kernels), not this machine's installation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trendagg.spark.package import ALIAS


@pytest.fixture
def cluster(spark: Any, tmp_path: Path) -> Iterator[str]:
    """The master's URL; the master and the workers are stopped at the end, also on failure."""
    from trendagg.spark.standalone import standalone_cluster

    with standalone_cluster(tmp_path / "cluster") as url:
        yield url


QUERIES = (
    "a: RETURN COUNT(*), SUM(T.duration) PATTERN SEQ(Request R, Travel T+) "
    "WHERE [driver] WITHIN 10 min SLIDE 5 min;\n"
    "b: RETURN district, COUNT(*) PATTERN SEQ(Travel T+, Dropoff D) WHERE [driver, district] "
    "GROUP-BY district WITHIN 10 min;\n"
)

SCRIPT = """
import json, sys
from trendagg.spark import aggregate_trends, spark_session
spark = spark_session(sys.argv[1])
df = spark.read.csv(sys.argv[2], header=True, inferSchema=True)
rows = [r.asDict() for r in aggregate_trends(df, open(sys.argv[3]).read(), partitions=3).collect()]
def where(batches):
    import pyarrow as pa, trendagg
    for _ in batches:
        pass
    yield pa.RecordBatch.from_pydict({"file": [trendagg.__file__]})
files = [r["file"] for r in spark.range(2).repartition(2).mapInArrow(where, "file string").collect()]
print(json.dumps({"rows": rows, "files": files}, default=str))
spark.stop()
"""


def test_a_standalone_cluster_gives_the_local_engine_s_rows(cluster: str, tmp_path: Path) -> None:
    from trendagg import run
    from trendagg.generate import RIDESHARE_COLUMNS, rideshare, write_stream

    events = tmp_path / "rides.csv"
    write_stream(rideshare(4000, seed=5), str(events), columns=RIDESHARE_COLUMNS)
    queries = tmp_path / "q.tq"
    queries.write_text(QUERIES)
    trendagg = str(Path(sys.executable).parent / "trendagg")
    outputs = {}
    for flags in (["--engine", "local"], ["--master", cluster]):
        done = subprocess.run(
            [trendagg, "run", str(queries), str(events), "-q", *flags],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        outputs[flags[0]] = done.stdout
    assert outputs["--master"] == outputs["--engine"]
    assert outputs["--engine"].count("\n") > 5

    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), cluster, str(events), str(queries)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # the executors import the trendagg of the job's archive, unpacked in their folders
    assert len(report["files"]) == 2
    assert all(f"{os.sep}{ALIAS}{os.sep}trendagg{os.sep}" in f for f in report["files"])
    local = run(QUERIES, events)
    expected = sorted(
        (r.query, r.window_start, r.window_end, json.dumps({**r.group, **r.values}, default=str))
        for r in local
    )
    got = sorted(
        (
            r.pop("query"),
            int(r.pop("window_start")),
            int(r.pop("window_end")),
            json.dumps({k: v for k, v in r.items() if v is not None}, default=str),
        )
        for r in report["rows"]
    )
    assert got == expected

"""Window bounds of timestamp input on Spark (issue #39). Through the CLI both engines
write the same bounds (epoch seconds, the contract's times: docs/semantics.md) in the
same text and types, for ISO text in CSV and JSON Lines and for Parquet timestamps. A
Spark DataFrame whose time column is a timestamp (or a date, or a timestamp_ntz) gets
its window bounds back as moments of that type, as Spark's own ``window`` gives them;
numbers stay numbers."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import Any

import pytest

from trendagg.cli import main

pytestmark = pytest.mark.spark

QUERIES = (
    "q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 10 s SLIDE 5 s;\n"
    "fine: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 250 ms;\n"
)
MOMENTS = ["2024-01-01T00:00:01.100", "2024-01-01T00:00:01.200", "2024-01-01T00:00:03",
           "2024-01-01T00:00:04.900", "2024-01-01T00:00:06"]  # fmt: skip
TYPES = ["A", "B", "A", "B", "B"]


def _files(tmp_path: Path) -> list[Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = list(zip(TYPES, MOMENTS, range(1, 6), strict=True))
    csv = tmp_path / "iso.csv"
    csv.write_text("type,time,x\n" + "".join(f"{t},{m},{x}\n" for t, m, x in rows))
    jsonl = tmp_path / "iso.jsonl"
    jsonl.write_text("".join(f'{{"type": "{t}", "time": "{m}Z", "x": {x}}}\n' for t, m, x in rows))
    parquet = tmp_path / "times.parquet"
    times = pa.array([dt.datetime.fromisoformat(m) for m in MOMENTS], pa.timestamp("us"))
    pq.write_table(pa.table({"type": TYPES, "time": times, "x": list(range(1, 6))}), parquet)
    return [csv, jsonl, parquet]


def _run(queries: Path, events: Path, engine: str, *extra: str) -> str:
    out = io.StringIO()
    code = main(["run", str(queries), str(events), "--engine", engine, "-q", *extra], out=out)
    assert code == 0
    return out.getvalue()


def test_timestamp_input_gives_the_local_engine_s_rows_through_the_cli(
    spark: Any, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    queries = tmp_path / "q.tq"
    queries.write_text(QUERIES)
    for events in _files(tmp_path):
        local = _run(queries, events, "local", "--format", "csv")
        assert _run(queries, events, "spark", "--format", "csv") == local, events.name
        assert local.splitlines()[1].split(",")[1:3] == ["1704067195", "1704067205"], local
        tables = {}
        for engine in ("local", "spark"):
            out = tmp_path / f"{events.stem}-{engine}.parquet"
            _run(queries, events, engine, "-o", str(out))
            tables[engine] = pq.read_table(out)
        assert tables["spark"].schema == tables["local"].schema
        assert tables["spark"].to_pylist() == tables["local"].to_pylist()


def test_a_dataframe_s_timestamp_times_give_timestamp_window_bounds(spark: Any) -> None:
    from pyspark.sql import functions as F

    from trendagg import run
    from trendagg.spark import aggregate_trends

    records = [
        {"type": t, "time": m + "Z", "x": x}
        for t, m, x in zip(TYPES, MOMENTS, range(1, 6), strict=True)
    ]
    local = run(QUERIES, records)
    df = spark.createDataFrame(
        [(t, dt.datetime.fromisoformat(m), x) for t, m, x in zip(TYPES, MOMENTS, range(1, 6), strict=True)],
        "type string, time timestamp_ntz, x bigint",
    )  # fmt: skip
    epoch = dt.datetime(1970, 1, 1)
    for time_type in ("timestamp_ntz", "timestamp"):  # (cast in the session's zone, UTC)
        frame = df.withColumn("time", F.col("time").cast(time_type))
        result = aggregate_trends(frame, QUERIES)
        types = {f.name: f.dataType.typeName() for f in result.schema.fields}
        assert (types["window_start"], types["window_end"]) == (time_type, time_type)
        rows = result.collect()
        assert [r["query"] for r in rows] == [r.query for r in local]
        for row, want in zip(rows, local, strict=True):
            bounds = (row["window_start"], row["window_end"])
            if time_type == "timestamp":  # (PySpark gives an instant in this machine's zone)
                seconds = [b.timestamp() for b in bounds]
            else:  # (a wall-clock time; the engine reads it as UTC)
                seconds = [(b - epoch).total_seconds() for b in bounds]
            assert seconds == [want.window_start, want.window_end]
    numbers = df.withColumn("time", F.unix_timestamp(F.col("time").cast("timestamp")))
    result = aggregate_trends(numbers, QUERIES.split(";")[0])
    types = {f.name: f.dataType.typeName() for f in result.schema.fields}
    assert (types["window_start"], types["window_end"]) == ("long", "long")

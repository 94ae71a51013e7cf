"""The one orchestration: a file streamed in chunks equals the file read whole.

``run_file`` feeds a Runner chunk by chunk; a file it cannot stream (events
out of time order across chunks, an aggregated attribute whose kind changes
between chunks) is read again whole. Either way the rows, the rejected rows
and the counts equal those of the whole file, on every engine.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from helpers import canon
from trendagg.generate import rideshare, write_stream
from trendagg.io import write_rejects
from trendagg.io.options import ReadOptions
from trendagg.language import parse
from trendagg.plan.compile import compile_workload
from trendagg.session import run_events, run_file

WORKLOAD = """
q1: RETURN driver, COUNT(*), SUM(T.duration), MAX(T.speed)
    PATTERN SEQ(Request R, Travel T+, Dropoff D) WHERE [driver] GROUP BY driver WITHIN 10 min SLIDE 5 min;
q2: RETURN COUNT(*), AVG(T.speed) PATTERN SEQ(Accept A, Travel T+) WHERE [driver] AND T.speed > 20
    WITHIN 10 min;
q3: RETURN district, COUNT(*) PATTERN SEQ(Request R, NOT Cancel C, Pickup P)
    WHERE [driver] GROUP BY district WITHIN 5 min;
"""


@pytest.fixture(scope="module")
def plans() -> list[object]:
    return compile_workload(parse(WORKLOAD))  # type: ignore[return-value]


def _csv(tmp_path: Path, records: list[dict[str, object]], name: str = "ev.csv") -> Path:
    path = tmp_path / name
    write_stream(records, str(path))
    return path


def _whole(plans: list[object], path: Path, engine: str = "local") -> object:
    return run_file(plans, path, ReadOptions(), engine=engine, chunk_rows=10**9)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["local", "reference"])
def test_a_file_streamed_in_chunks_equals_the_file_read_whole(
    tmp_path: Path, plans: list[object], engine: str
) -> None:
    records = list(rideshare(3_000, seed=5, drivers=12))
    records[100]["speed"] = "fast"  # a rejected row: its number survives the chunks
    path = _csv(tmp_path, records)
    whole = _whole(plans, path, engine)
    chunked = run_file(plans, path, ReadOptions(), engine=engine, chunk_rows=97)  # type: ignore[arg-type]
    assert chunked.chunks > 20  # it did stream
    assert canon(chunked.rows) == canon(whole.rows)  # type: ignore[attr-defined]
    assert len(chunked.rows) > 10
    assert chunked.events == whole.events == 2_999  # type: ignore[attr-defined]
    assert [(r.row, r.reason) for r in chunked.rejected] == [
        (r.row, r.reason)
        for r in whole.rejected  # type: ignore[attr-defined]
    ]
    assert [r.row for r in chunked.rejected] == [101]  # the 101st row (the header aside)
    write_rejects(chunked.rejected, str(tmp_path / "rejects.jsonl"))


def test_a_file_out_of_time_order_is_read_again_whole(tmp_path: Path, plans: list[object]) -> None:
    records = list(rideshare(2_000, seed=9, drivers=10))
    random.Random(3).shuffle(records)
    path = _csv(tmp_path, records)
    result = run_file(plans, path, ReadOptions(), chunk_rows=100)  # type: ignore[arg-type]
    assert result.chunks == 0  # read whole after the first chunk out of order
    expected = run_events(plans, sorted(records, key=lambda r: r["time"]))  # type: ignore[arg-type, return-value]
    assert canon(result.rows) == canon(expected.rows) and len(result.rows) > 5


def _streamed_as_reference(
    tmp_path: Path, plans: list[Any], records: list[dict[str, object]]
) -> Any:
    """``records`` (type, time, v) as a CSV file streamed by run_file in chunks of four
    rows: its rows are those of the Python engine over the records; the result."""
    path = tmp_path / "ev.csv"
    path.write_text(
        "type,time,v\n" + "".join(f"{r['type']},{r['time']},{r.get('v', '')}\n" for r in records)
    )
    result = run_file(plans, path, ReadOptions(), chunk_rows=4)
    assert result.chunks > 0
    expected = run_events(plans, records, engine="reference")
    assert canon(result.rows) == canon(expected.rows)
    return result


def test_an_attribute_whose_kind_changes_between_chunks_still_streams(
    tmp_path: Path,
) -> None:
    """Integers in the first chunks, a decimal later: the compiled engine lays its
    program out again (hidden registers keep each output's kind) and the file streams,
    with the rows of a whole-file read on the Python engine."""
    plans = compile_workload(parse("RETURN SUM(B.v) PATTERN SEQ(A, B+) WITHIN 100 s"))
    records: list[dict[str, object]] = [{"type": "A", "time": 0}]
    records += [{"type": "B", "time": 1 + i, "v": 1} for i in range(8)]
    records += [{"type": "B", "time": 9, "v": 0.5}]
    result = _streamed_as_reference(tmp_path, plans, records)
    assert isinstance(result.rows[0].values["SUM(B.v)"], float)


def test_min_max_beyond_2_53_after_the_first_chunk_streams(tmp_path: Path) -> None:
    """The compiled engine's extremes are float64, which hold 2**60 + 1 as 2**60: an
    integer beyond 2**53 after the first chunk switches the attribute to ranks, and the
    file streams (no second read) with the exact rows of the Python engine."""
    plans = compile_workload(
        parse("RETURN MAX(B.v), MIN(B.v), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 100 s")
    )
    records: list[dict[str, object]] = [{"type": "A", "time": 0}]
    records += [{"type": "B", "time": 1 + i, "v": 1} for i in range(8)]
    records += [{"type": "B", "time": 9, "v": 2**60 + 1}, {"type": "B", "time": 10, "v": 2**60}]
    result = _streamed_as_reference(tmp_path, plans, records)
    assert result.rows[0].values["MAX(B.v)"] == 2**60 + 1


def test_the_api_the_cli_and_the_session_agree(tmp_path: Path, plans: list[object]) -> None:
    import trendagg
    from trendagg.cli import main

    records = list(rideshare(1_500, seed=2, drivers=8))
    path = _csv(tmp_path, records)
    api = trendagg.run(WORKLOAD, str(path))
    assert canon(api) == canon(_whole(plans, path).rows)  # type: ignore[attr-defined]
    assert canon(api) == canon(trendagg.run(WORKLOAD, records))
    queries = tmp_path / "q.tq"
    queries.write_text(WORKLOAD)
    out = tmp_path / "out.jsonl"
    assert main(["run", str(queries), str(path), "--engine", "local", "-q", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == len(api)

"""Times exact to the nanosecond (issue #38, item 3).

A float second holds about 0.24 us near 2026: ``...01.123456700Z`` and
``...01.123456800Z`` were one time, and so never adjacent in a trend, and a time
exactly on a window's millisecond bound could fall into the window before it. Times
with decimal fractions are now int64 ticks of a millisecond, microsecond or
nanosecond (``EventBatch.per_second``), on every reader and engine."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trendagg.cli import main
from trendagg.io import from_records, read_events

PAIR = "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 1 s\n"
BASE = 1764633601  # 2025-12-02T00:00:01Z


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _count(tmp_path: Path, query: str, events: Path, *extra: str) -> dict[str, object]:
    (tmp_path / "q.tq").write_text(query)
    code, out, err = cli("run", str(tmp_path / "q.tq"), str(events), *extra)
    assert code == 0, err
    return {
        (row["query"], row["window_start"]): row["values"]
        for row in map(json.loads, out.splitlines())
    }  # type: ignore[misc]


ENGINES = [
    ("--engine", "local", "--strategy", "hamlet"),
    ("--engine", "local", "--strategy", "greta"),
    ("--engine", "reference", "--strategy", "twostep"),
    ("--engine", "reference", "--strategy", "hamlet"),
]


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: "-".join(e[1::2]))
def test_iso_times_100_ns_apart_are_two_times(tmp_path: Path, engine: tuple[str, ...]) -> None:
    events = tmp_path / "e.csv"
    events.write_text(
        "type,time\nA,2025-12-02T00:00:01.123456700Z\nB,2025-12-02T00:00:01.123456800Z\n"
        "B,2025-12-02T00:00:01.1234567Z\n"  # equal to the A: never adjacent to it
    )
    rows = _count(tmp_path, PAIR, events, *engine)
    assert list(rows.values()) == [{"COUNT(*)": 1}]


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: "-".join(e[1::2]))
def test_parquet_nanosecond_timestamps_are_ordered_as_written(
    tmp_path: Path, engine: tuple[str, ...]
) -> None:
    nanos = BASE * 10**9 + 123_456_700
    table = pa.table(
        {
            "type": ["B", "A", "B", "B"],  # written out of order: B first is 100 ns after A
            "time": pa.array([nanos + 100, nanos, nanos + 1, nanos - 1], pa.timestamp("ns")),
        }
    )
    pq.write_table(table, tmp_path / "e.parquet")
    rows = _count(tmp_path, PAIR, tmp_path / "e.parquet", *engine)
    assert list(rows.values()) == [{"COUNT(*)": 2}]  # a then b+100 ns, a then b+1 ns


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: "-".join(e[1::2]))
def test_a_time_on_a_millisecond_bound_is_in_the_window_it_starts(
    tmp_path: Path, engine: tuple[str, ...]
) -> None:
    """Window k of SLIDE 1 ms starts at k ms: an event at exactly 0.123 s (not the
    float 0.1229999...) is in the window that starts there and not in the one before."""
    events = tmp_path / "e.csv"
    stamps = [f"2025-12-02T00:00:01.{ms:03d}Z" for ms in range(100, 130)]
    lines = [f"{'A' if i % 2 == 0 else 'B'},{t}" for i, t in enumerate(stamps)]
    events.write_text("type,time\n" + "\n".join(lines) + "\n")
    query = "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 2 ms SLIDE 1 ms\n"
    rows = _count(tmp_path, query, events, *engine)
    # each window [k, k+2) ms holds one A and one B, in that order, where k is even
    starts = sorted(start for _, start in rows)  # type: ignore[type-var]
    assert starts == [BASE + Fraction(ms, 1000) for ms in range(100, 129, 2)] or starts == [
        float(BASE + Fraction(ms, 1000)) for ms in range(100, 129, 2)
    ]
    assert all(values == {"COUNT(*)": 1} for values in rows.values())


def test_times_keep_nine_decimals_from_every_reader(tmp_path: Path) -> None:
    stamp = "2025-12-02T00:00:01.123456789Z"
    exact = BASE + Fraction(123456789, 10**9)
    (tmp_path / "e.csv").write_text(f"type,time\nA,{stamp}\n")
    (tmp_path / "e.jsonl").write_text(json.dumps({"type": "A", "time": stamp}) + "\n")
    table = pa.table({"type": ["A"], "time": pa.array([exact * 10**9], pa.timestamp("ns"))})
    pq.write_table(table, tmp_path / "e.parquet")
    for name in ("e.csv", "e.jsonl", "e.parquet"):
        batch = read_events(str(tmp_path / name)).events
        assert batch.time_values() == [exact], name
        assert batch.per_second == 10**9 and batch.times.tolist() == [exact * 10**9]
    assert from_records([{"type": "A", "time": stamp}]).events.time_values() == [exact]


def test_a_numeric_time_beside_nanosecond_timestamps_keeps_both_exact(tmp_path: Path) -> None:
    """Numbers with a fraction are floats; beside timestamps with nine decimals no one
    array holds both: the batch keeps the exact times beside the floats, and the
    engines read those."""
    (tmp_path / "e.csv").write_text(
        "type,time\nA,2025-12-02T00:00:01.1234567Z\nB,2025-12-02T00:00:01.1234568Z\nB,0.5\n"
    )
    batch = read_events(str(tmp_path / "e.csv")).events
    assert batch.exact_times == [
        BASE + Fraction(1234567, 10**7),
        BASE + Fraction(1234568, 10**7),
        0.5,
    ]
    for engine in ENGINES:
        rows = _count(tmp_path, PAIR, tmp_path / "e.csv", *engine)
        assert list(rows.values()) == [{"COUNT(*)": 1}], engine


@pytest.mark.spark
def test_spark_keeps_the_nanoseconds_of_text_and_parquet(spark: object, tmp_path: Path) -> None:
    """Spark's own timestamps hold microseconds: the Parquet ones travel as longs and
    the workers read every time as the local readers do."""
    csv = tmp_path / "e.csv"
    csv.write_text(
        "type,time\nA,2025-12-02T00:00:01.123456700Z\nB,2025-12-02T00:00:01.123456800Z\n"
    )
    nanos = BASE * 10**9 + 123_456_700
    table = pa.table(
        {
            "type": ["B", "A", "B"],
            "time": pa.array([nanos + 100, nanos, nanos - 1], pa.timestamp("ns")),
        }
    )
    pq.write_table(table, tmp_path / "e.parquet")
    for events in (csv, tmp_path / "e.parquet"):
        rows = _count(tmp_path, PAIR, events, "--engine", "spark")
        assert list(rows.values()) == [{"COUNT(*)": 1}], events.name


def test_a_stream_keeps_the_nanoseconds_and_its_watermark_never_passes_them(
    tmp_path: Path,
) -> None:
    """Through the stream's router, state and watermark (stream_mock, no JVM): the
    nanoseconds order the events, and a watermark made from the latest time stays at
    or below it (the event at that very time is not late)."""
    from stream_mock import run_stream

    stamp = "2025-12-02T00:00:01.1234567{}Z"
    chunks = [
        [{"type": "A", "time": stamp.format("00")}],
        [{"type": "B", "time": stamp.format("01")}, {"type": "B", "time": stamp.format("00")}],
        [{"type": "B", "time": "2025-12-02T00:00:01.1234566Z"}],  # after the watermark (ms)
        [{"type": "A", "time": "2025-12-02T00:00:03Z"}],
        [{"type": "B", "time": stamp.format("02")}],  # before the watermark (3 s): late
    ]
    got, stats = run_stream(PAIR, chunks, 0, tmp_path)
    assert [r.values for r in got] == [{"COUNT(*)": 1}]
    assert stats.late == 1


def test_chunks_of_floats_and_timestamps_gather_to_the_exact_times() -> None:
    """A file read in chunks: numbers with fractions in one, timestamps with fractions
    (ticks) in another; gathered, each time keeps its value (a Fraction stays exact)."""
    from trendagg.io.gather import concat

    stamp = "2025-12-02T00:00:01.25Z"
    floats = from_records([{"type": "A", "time": 0.5}, {"type": "A", "time": 1}]).events
    ticks = from_records([{"type": "B", "time": stamp}]).events
    exact = [0.5, 1, BASE + Fraction(1, 4)]
    for parts, expected in (([floats, ticks], exact), ([ticks, floats], exact[2:] + exact[:2])):
        gathered = concat(parts)
        assert gathered.time_values() == expected
        assert [type(t) for t in gathered.time_values()] == [type(t) for t in expected]
    whole = from_records([{"type": "B", "time": "2025-12-02T00:00:01Z"}]).events
    assert concat([floats, whole]).exact_times is None  # whole seconds beside floats: a mask

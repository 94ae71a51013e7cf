"""DataFrames in and out: ``trendagg.run`` over pandas, polars and pyarrow tables gives
the rows of a CSV of the same events; ``Results.to_arrow()`` and ``to_pandas()`` give
those rows in the writers' layout, exact (issue #39, item 6)."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import trendagg
from trendagg.io import Results, write_results
from trendagg.io.values import parse_cell

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

QUERIES = """
groups: RETURN g, COUNT(*) AS n, SUM(B.v) AS total, MIN(B.s) AS first_word
    PATTERN SEQ(A, B+) WHERE [g] GROUP-BY g WITHIN 2 s SLIDE 500 ms;
words: RETURN COUNT(*), MAX(B.v) PATTERN SEQ(A, B+) WHERE B.s != 'skip' WITHIN 1500 ms;
"""
T0 = 1_709_287_200  # 2024-03-01T10:00:00Z
# (type, offset from T0 in seconds, g, v, s): times with fractions of a second
EVENTS = [
    ("A", Fraction(0), 1, 10, "x"),
    ("B", Fraction(1, 4), 1, 2, "y"),
    ("A", Fraction(3, 10), 2, 7, "skip"),
    ("B", Fraction(3, 4), 2, 5, "w"),
    ("B", Fraction(1), 1, 1, "skip"),
    ("B", Fraction(1249, 1000), 2, 4, "z"),
    ("A", Fraction(2), 1, 3, "x"),
    ("B", Fraction(2125, 1000), 1, 8, "v"),
    ("B", Fraction(27, 10), 1, 6, "u"),
]


def _iso(offset: Fraction) -> str:
    """The ISO-8601 text of T0 + offset, to the millisecond, in UTC."""
    millis = offset * 1000
    assert millis.denominator == 1
    stamp = datetime.fromtimestamp(T0 + int(millis) // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{int(millis) % 1000:03d}Z"


def _numbers(offset: Fraction) -> float:
    return float(offset) + 100  # 100.25, 100.3...: floats as written in the CSV


def _csv(tmp_path: Path, time: Any) -> Path:
    path = tmp_path / "events.csv"
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["type", "time", "g", "v", "s"])
        for kind, offset, g, v, s in EVENTS:
            writer.writerow([kind, time(offset), g, v, s])
    return path


def _columns(time: Any) -> dict[str, list[Any]]:
    return {
        "type": [e[0] for e in EVENTS],
        "time": [time(e[1]) for e in EVENTS],
        "g": [e[2] for e in EVENTS],
        "v": [e[3] for e in EVENTS],
        "s": [e[4] for e in EVENTS],
    }


def _stamp(offset: Fraction) -> datetime:
    return datetime.fromtimestamp(T0, UTC).replace(tzinfo=None) + pd.Timedelta(
        microseconds=int(offset * 10**6)
    )


def test_pandas_polars_and_arrow_tables_give_the_rows_of_a_csv_of_numeric_times(
    tmp_path: Path,
) -> None:
    expected = trendagg.run(QUERIES, _csv(tmp_path, _numbers))
    assert {row.query for row in expected} == {"groups", "words"}
    assert any(row.values["n"] == 3 for row in expected if row.query == "groups")
    columns = _columns(_numbers)
    frames = {
        "pandas": pd.DataFrame(columns),
        "polars": pl.DataFrame(columns),
        "polars lazy": pl.DataFrame(columns).lazy(),
        "arrow": pa.table(columns),
    }
    for name, frame in frames.items():
        assert trendagg.run(QUERIES, frame) == expected, name
        assert trendagg.run(QUERIES, frame).to_arrow() == expected.to_arrow(), name


@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
@pytest.mark.parametrize("zone", [None, "UTC", "Asia/Kolkata"])
def test_timestamp_columns_of_any_unit_and_zone_give_the_rows_of_a_csv_of_iso_times(
    tmp_path: Path, unit: str, zone: str | None
) -> None:
    expected = trendagg.run(QUERIES, _csv(tmp_path, _iso))
    assert len(expected) > 5
    assert expected[0].window_start == T0 - Fraction(3, 2)  # windows of the exact times
    columns = _columns(_stamp)
    naive = pl.DataFrame(columns).with_columns(pl.col("time").cast(pl.Datetime(unit)))
    frame = (
        naive
        if zone is None
        else naive.with_columns(
            pl.col("time").dt.replace_time_zone("UTC").dt.convert_time_zone(zone)
        )
    )
    table = frame.to_arrow()
    assert table.schema.field("time").type == pa.timestamp(unit, zone)
    pandas = pd.DataFrame(columns)
    pandas["time"] = pandas["time"].astype(f"datetime64[{unit}]")
    if zone is not None:
        pandas["time"] = pandas["time"].dt.tz_localize("UTC").dt.tz_convert(zone)
    for name, events in {"polars": frame, "arrow": table, "pandas": pandas}.items():
        rows = trendagg.run(QUERIES, events)
        assert rows == expected, name
        bounds = rows.to_arrow().column("window_start")
        assert bounds.type == pa.timestamp("ms", zone), name
        first = rows.to_pandas()["window_start"][0]
        assert str(first.tz) == str(zone) and first.timestamp() == T0 - 1.5, name


def test_a_polars_nanosecond_column_is_exact_to_the_nanosecond() -> None:
    """A at T-50 ns and B at T+50 ns fall on either side of the window bound T, A2 at
    T+100 ns comes after B1: one trend in [T, T+1 s), none before. Times rounded to the
    microsecond (or float seconds, 240 ns apart here) put them at one time."""
    bound = T0 * 10**9
    frame = pl.DataFrame(
        {
            "type": ["A", "B", "A", "B"],
            "time": [bound - 50, bound + 50, bound + 100, bound + 150],
        }
    ).with_columns(pl.col("time").cast(pl.Datetime("ns")))
    query = "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 s"
    rows = trendagg.run(query, frame)
    assert [(r.window_start, r.values) for r in rows] == [(T0, {"COUNT(*)": 1})]
    table = rows.to_arrow()
    assert table.column("window_start").type == pa.timestamp("s")
    assert table.column("window_start").cast(pa.int64()).to_pylist() == [T0]
    assert rows.to_pandas()["window_end"].tolist() == [pd.Timestamp(T0 + 1, unit="s")]


def test_window_bounds_of_a_tenth_of_a_second_are_exact_timestamps() -> None:
    """Float bounds near 2024 miss 0.1 s steps by ~100 ns; the timestamps do not."""
    frame = pl.DataFrame(
        {"type": ["A", "B"], "time": [T0 * 10**9 + 10**8, T0 * 10**9 + 2 * 10**8]}
    ).with_columns(pl.col("time").cast(pl.Datetime("ns", "UTC")))
    rows = trendagg.run("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 300 ms SLIDE 100 ms", frame)
    table = rows.to_arrow()
    assert table.column("window_start").type == pa.timestamp("ms", "UTC")
    starts = table.column("window_start").cast(pa.int64()).to_pylist()
    assert starts == [T0 * 1000, T0 * 1000 + 100]
    assert Fraction(rows[1].window_start) != T0 + Fraction(1, 10)  # (the float is not)
    assert table.column("window_end").cast(pa.int64()).to_pylist() == [s + 300 for s in starts]


def _csv_rows(rows: Results) -> list[list[str]]:
    out = io.StringIO()
    write_results(rows, fmt="csv", stream=out)
    return list(csv.reader(io.StringIO(out.getvalue())))


def _cells(texts: list[str]) -> list[object]:
    """A CSV row's cells as the values they write (an empty cell: None)."""
    return [parse_cell(text) for text in texts]


def _values(line: Any) -> list[object]:
    """A table row's values, numpy scalars as Python ones and NaN and NA as None."""
    values = [value.item() if hasattr(value, "item") else value for value in line]
    missing = [value is None or value is pd.NA or value != value for value in values]
    return [None if gone else value for value, gone in zip(values, missing, strict=True)]


def test_to_arrow_and_to_pandas_round_trip_to_the_csv_writers_rows(tmp_path: Path) -> None:
    rows = trendagg.run(QUERIES, pd.DataFrame(_columns(_numbers)))
    assert rows.stamps is not None and not rows.stamps.dated
    expected = _csv_rows(rows)
    table = rows.to_arrow()
    assert table.column_names == expected[0]
    assert table.schema.field("window_start").type == pa.float64()  # 98.5, 99, 99.5...
    assert table.schema.field("n").type == pa.int64()
    pq.write_table(table, tmp_path / "r.parquet")
    back = pq.read_table(tmp_path / "r.parquet")
    assert back.equals(table)
    assert [_values(line.values()) for line in back.to_pylist()] == list(map(_cells, expected[1:]))
    # the Parquet writer writes this table, the same types
    write_results(rows, tmp_path / "w.parquet")
    assert pq.read_table(tmp_path / "w.parquet").equals(table)
    frame = rows.to_pandas()
    assert list(frame.columns) == expected[0]
    assert [_values(line) for line in frame.itertuples(index=False)] == list(
        map(_cells, expected[1:])
    )
    # words: no g nor first_word, their cells missing (Int64, not float64)
    assert str(frame["n"].dtype) == "Int64"


def test_timestamp_bounds_round_trip_to_the_csv_writers_seconds(tmp_path: Path) -> None:
    rows = trendagg.run(QUERIES, _csv(tmp_path, _iso))
    expected = _csv_rows(rows)
    table = rows.to_arrow()
    assert table.schema.field("window_start").type == pa.timestamp("ms")  # naive: UTC
    pq.write_table(table, tmp_path / "r.parquet")
    back = pq.read_table(tmp_path / "r.parquet")
    assert back.equals(table)
    frame = rows.to_pandas()
    epoch = pd.Timestamp(0)
    for line, got in zip(expected[1:], frame.itertuples(index=False), strict=True):
        seconds = [Fraction((stamp - epoch).value, 10**9) for stamp in got[1:3]]
        assert seconds == [Fraction(line[1]), Fraction(line[2])]
        assert _values(got[3:]) == _cells(line[3:])


def test_a_count_beyond_int64_and_beyond_38_digits_survives_exactly() -> None:
    def events(length: int) -> list[dict[str, object]]:
        run = [{"type": "A", "time": 0, "g": "short"}, {"type": "B", "time": 1, "g": "short"}]
        run += [{"type": "A", "time": 0, "g": "long"}]
        return run + [{"type": "B", "time": t, "g": "long"} for t in range(1, length + 1)]

    query = "RETURN g, COUNT(*) PATTERN SEQ(A, B+) WHERE [g] GROUP-BY g WITHIN 1000 s"
    rows = trendagg.run(query, pl.DataFrame(events(70)))
    assert {r.group["g"]: r.values["COUNT(*)"] for r in rows} == {"short": 1, "long": 2**70 - 1}
    table = rows.to_arrow()
    assert table.schema.field("COUNT(*)").type == pa.decimal128(38, 0)
    counts = dict(
        zip(table.column("g").to_pylist(), table.column("COUNT(*)").to_pylist(), strict=True)
    )
    assert counts == {"short": Decimal(1), "long": Decimal(2**70 - 1)}
    frame = rows.to_pandas()
    assert frame["COUNT(*)"].dtype == object
    assert dict(zip(frame["g"], frame["COUNT(*)"], strict=True)) == {"short": 1, "long": 2**70 - 1}
    assert all(type(count) is int for count in frame["COUNT(*)"])
    # 2**130 - 1 has 40 digits: text in Arrow (as in Parquet), a Python int in pandas
    rows = trendagg.run(query, pd.DataFrame(events(130)))
    table = rows.to_arrow()
    assert table.schema.field("COUNT(*)").type == pa.string()
    counts = dict(
        zip(table.column("g").to_pylist(), table.column("COUNT(*)").to_pylist(), strict=True)
    )
    assert counts == {"short": "1", "long": str(2**130 - 1)}
    frame = rows.to_pandas()
    assert dict(zip(frame["g"], frame["COUNT(*)"], strict=True)) == {"short": 1, "long": 2**130 - 1}


def test_results_of_no_rows_have_the_fixed_columns() -> None:
    rows = trendagg.run(
        "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 1 s", pl.DataFrame({"type": ["A"], "time": [1]})
    )
    assert rows == []
    table = rows.to_arrow()
    assert table.column_names == ["query", "window_start", "window_end"]
    assert table.num_rows == 0 and table.schema.field("window_start").type == pa.int64()
    assert list(rows.to_pandas().columns) == table.column_names


@pytest.mark.parametrize(
    "events",
    [
        pytest.param(lambda: pd.Series([1, 2]), id="pandas Series"),
        pytest.param(lambda: pl.Series("time", [1, 2]), id="polars Series"),
        pytest.param(lambda: pa.table({"time": [1]}).to_batches()[0], id="arrow RecordBatch"),
        pytest.param(lambda: 5, id="a number"),
    ],
)
def test_an_unsupported_object_names_the_accepted_types(events: Any) -> None:
    given = events()
    with pytest.raises(trendagg.ArgumentError) as caught:
        trendagg.run("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 1 s", given)
    message = str(caught.value)
    for accepted in ("a path", "pandas DataFrame", "polars DataFrame", "pyarrow Table"):
        assert accepted in message
    assert message.endswith(
        f"it is {type(given).__module__}.{type(given).__qualname__}".replace("builtins.", "")
    )


def test_to_pandas_without_pandas_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = trendagg.run(
        "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s",
        [{"type": "A", "time": 1}, {"type": "B", "time": 2}],
    )
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(
        trendagg.InputError,
        match=r"needs pandas, which is not installed: pip install pandas; or use to_arrow",
    ):
        rows.to_pandas()
    assert rows.to_arrow().num_rows == 1


def test_a_run_and_to_arrow_do_not_import_polars() -> None:
    """(pandas: pyarrow's ``pa.array`` of a list imports it where it is installed.)"""
    code = (
        "import sys, trendagg\n"
        "rows = trendagg.run('RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s', "
        "[{'type': 'A', 'time': 1}, {'type': 'B', 'time': 2}])\n"
        "assert rows.to_arrow().num_rows == 1\n"
        "print('polars' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "False"


def test_window_bounds_are_timestamps_where_every_time_was_one(tmp_path: Path) -> None:
    from trendagg.io import read_events
    from trendagg.io.batch import Stamps
    from trendagg.io.options import ReadOptions
    from trendagg.plan.compile import compile_workload
    from trendagg.session import run_file

    iso = _csv(tmp_path, _iso)
    plans = compile_workload(trendagg.parse(QUERIES))
    chunked = run_file(plans, iso, ReadOptions(), chunk_rows=2)
    assert chunked.chunks > 3 and chunked.stamps == Stamps(True)
    assert read_events(iso).stamps == Stamps(True)
    # one time written as a number among ISO-8601 texts: the bounds stay numbers
    lines = iso.read_text().splitlines()
    lines[-1] = lines[-1].replace(_iso(EVENTS[-1][1]), str(T0 + 3))
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("\n".join(lines) + "\n")
    bounds = trendagg.run(QUERIES, mixed).to_arrow().schema.field("window_start")
    assert bounds.type == pa.float64()  # (seconds: 1709287198.5...)
    assert run_file(plans, mixed, ReadOptions(), chunk_rows=2).stamps == Stamps(False)
    # JSON Lines of ISO texts, records of datetimes, a Parquet file in a zone
    jsonl = tmp_path / "events.jsonl"
    frame = pl.DataFrame(_columns(_iso))
    frame.write_ndjson(jsonl)
    stamped = pl.DataFrame(_columns(_stamp))
    records = stamped.to_dicts()
    assert isinstance(records[0]["time"], datetime)
    zoned = tmp_path / "events.parquet"
    stamped.with_columns(pl.col("time").dt.replace_time_zone("America/Lima")).write_parquet(zoned)
    kinds = {
        name: trendagg.run(QUERIES, events).to_arrow().schema.field("window_end").type
        for name, events in {"jsonl": jsonl, "records": records, "parquet": zoned}.items()
    }
    assert kinds == {
        "jsonl": pa.timestamp("ms"),
        "records": pa.timestamp("ms"),
        "parquet": pa.timestamp("ms", "America/Lima"),
    }


def test_stamps_join_dated_only_where_both_are_in_their_zone_if_shared() -> None:
    from trendagg.io.batch import Stamps

    assert Stamps(True, "UTC").join(None) == Stamps(True, "UTC")
    assert Stamps(True, "Asia/Kolkata").join(Stamps(True, "Asia/Kolkata")).zone == "Asia/Kolkata"
    assert Stamps(True, "Asia/Kolkata").join(Stamps(True)) == Stamps(True, "UTC")
    assert not Stamps(True).join(Stamps(False)).dated


def test_pandas_nanosecond_timestamps_read_as_records_stay_exact() -> None:
    """A column of numbers and words sends a pandas frame through its records; their
    Timestamps keep the nanosecond (as floats, T-50 ns and T+50 ns were one time)."""
    bound = T0 * 10**9
    frame = pd.DataFrame(
        {
            "type": ["A", "B", "A", "B"],
            "time": pd.to_datetime([bound - 50, bound + 50, bound + 100, bound + 150]),
            "p": [5, "n/a", 1.5, None],  # (no Arrow type holds it)
        }
    )
    with pytest.raises(pa.ArrowException):
        pa.Table.from_pandas(frame)
    rows = trendagg.run("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 s", frame)
    assert [(r.window_start, r.values) for r in rows] == [(T0, {"COUNT(*)": 1})]
    assert rows.to_arrow().schema.field("window_start").type == pa.timestamp("s")

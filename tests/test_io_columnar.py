"""Columnar readers: the same events and rejected rows as read_events, as arrays.

Every input here is read three ways -- ``read_events`` (the reference),
``read_columnar`` and ``iter_columnar`` in small chunks -- and the results
must agree value by value, int vs float vs text vs missing included.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import math
import random
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trendagg.errors import InputError
from trendagg.io import EventBatch, RejectedRow, read_events
from trendagg.io import columnar_assemble as ca
from trendagg.io import columnar_readers as cr
from trendagg.io.columnar import Column, ColumnarBatch, times_of
from trendagg.io.columnar_assemble import PY_WHITESPACE
from trendagg.io.columnar_readers import iter_columnar, read_columnar
from trendagg.io.readers import _text_column
from trendagg.io.values import int_text, time_value

FEB8_0930 = 1360315800  # 2013-02-08T09:30:00Z


# ----------------------------------------------------------------------------- helpers


def typed(values: list[object]) -> list[tuple[str, object]]:
    """Values with their kinds, so that 1 and 1.0 differ (and nan is not compared)."""
    return [(type(value).__name__, value) for value in values]


def assert_same_events(got: EventBatch, expected: EventBatch, *, source: bool = True) -> None:
    assert got.types == expected.types
    assert typed(list(got.times)) == typed(list(expected.times))
    assert list(got.columns) == list(expected.columns)
    for name, values in expected.columns.items():
        assert typed(got.columns[name]) == typed(values), name
    assert got.rows == expected.rows
    if source:
        assert got.source == expected.source


def rejects(rows: list[RejectedRow]) -> list[tuple[str, int, str, str]]:
    """Rejected rows, comparable when a record holds nan."""
    return [(r.source, r.row, r.reason, repr(r.record)) for r in rows]


def check_arrays(batch: ColumnarBatch) -> None:
    """The array contract of ColumnarBatch."""
    n = len(batch)
    assert batch.types.dtype == np.int32 and batch.types.shape == (n,)
    assert batch.times.dtype in (np.int64, np.float64) and batch.times.shape == (n,)
    assert batch.rows is not None and batch.rows.dtype == np.int64
    if n:
        assert batch.types.min() >= 0 and batch.types.max() < len(batch.type_names)
    for column in batch.columns.values():
        assert column.valid.dtype == np.bool_ and len(column.valid) == n
        if column.kind == "int":
            assert column.values.dtype == np.int64
        elif column.kind == "float":
            assert column.values.dtype == np.float64
        elif column.kind == "text":
            assert column.values.dtype == np.int32 and column.dictionary is not None
            codes = column.values[column.valid]
            assert codes.size == 0 or codes.max() < len(column.dictionary)
        else:
            assert column.kind == "mixed" and len(column.values) == n


def joined(chunks: list[Any]) -> EventBatch:
    """The events of chunks one after the other (a column a chunk lacks is missing)."""
    parts = [chunk.events.to_events() for chunk in chunks]
    names: dict[str, None] = {}
    for part in parts:
        names.update(dict.fromkeys(part.columns))
    columns: dict[str, list[object]] = {name: [] for name in names}
    for part in parts:
        for name, values in columns.items():
            values.extend(part.columns.get(name) or [None] * len(part))
    return EventBatch(
        [t for p in parts for t in p.types],
        [t for p in parts for t in p.times],
        columns,
        [r for p in parts for r in p.rows],
        parts[0].source if parts else "",
    )


def same(path: Path, *, chunks: tuple[int, ...] = (1, 2, 3), **options: Any) -> Any:
    """Read ``path`` with read_events, read_columnar and iter_columnar; all must agree."""
    names = options.pop("names", None)
    expected = read_events(path, columns=names, **options)
    got = read_columnar(path, names=names, **options)
    check_arrays(got.events)
    assert_same_events(got.events.to_events(), expected.events)
    assert rejects(got.rejected) == rejects(expected.rejected)
    with mock.patch.object(cr, "_GATHER_ROWS", 2):  # gathered from chunks of 2 rows
        gathered = read_columnar(path, names=names, **options)
    check_arrays(gathered.events)
    assert_same_events(gathered.events.to_events(), expected.events)
    assert rejects(gathered.rejected) == rejects(expected.rejected)
    folder = path.is_dir()
    streamed = not folder and ".jsonl" not in path.suffixes  # JSON Lines: read whole, then cut
    for chunk_rows in (*chunks, 10**6):
        pieces = list(iter_columnar(path, names=names, chunk_rows=chunk_rows, **options))
        assert pieces, "at least one chunk"
        for piece in pieces:
            check_arrays(piece.events)
            assert len(piece.events) <= chunk_rows
            if streamed:  # a chunk holds chunk_rows source rows
                assert len(piece.events) + len(piece.rejected) <= chunk_rows
        assert_same_events(joined(pieces), expected.events, source=not folder)
        assert rejects([r for piece in pieces for r in piece.rejected]) == rejects(
            expected.rejected
        )
    return got


def csv_file(tmp_path: Path, text: str, name: str = "events.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def parquet_file(tmp_path: Path, table: pa.Table, name: str = "events.parquet", **kw: Any) -> Path:
    path = tmp_path / name
    pq.write_table(table, path, **kw)
    return path


# ----------------------------------------------------------------------------- CSV inputs

CSV_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "basic": ("type,time,price,name\nA,1,10,x\nB,2,2.5,y\n", {}),
    "missing values": ("type,time,a,b\nA,1,,7\n", {}),
    "custom columns": ("kind,ts,type\nA,5,t\n", {"type_col": "kind", "time_col": "ts"}),
    "blank types": ("type,time\nA,1\n,2\n   ,3\nB,4\n", {}),
    "types stay text": ("type,time\n007,1\n12,2\n", {}),
    "numeric times keep kind": (
        "type,time\nA,5\nA,1.5\nA,1e3\nA,-3\nA,123456789012345678901234\n",
        {},
    ),
    "int and float times": ("type,time\nA,5\nA,1.5\nA,-3\n", {}),
    "bad times": ("type,time\nA,yesterday\nA,\nA,nan\nA,inf\nA,2013-02-30\nA,1\n", {}),
    "mixed column": (
        'type,time,v\nA,1,10\nA,2,abc\nA,3,2.5\nA,4,\nA,5,"  7 "\nA,6, hi there \n',
        {},
    ),
    "integer literals": ("type,time,v\nA,1,+5\nA,2,007\nA,3,-12\nA,4,0\n", {}),
    "floats": ("type,time,v\nA,1,1.5\nA,2,2e3\nA,3,.5\n", {}),
    "plain floats": ("type,time,v\nA,1,1.5\nA,2,-2.25\nA,3,.5\nA,4,\nA,5,7.\nA,6,-.5\n", {}),
    "non-finite texts": (
        "type,time,v\nA,1,1.5\nA,2,nan\nA,3,inf\nA,4,1e999\nA,5,-Infinity\n",
        {},
    ),
    "huge ints": (
        f"type,time,h,m\nA,1,{2**200},{int_text(10**5000 + 7)}\nA,2,-{2**200},3\n"
        "A,3,9223372036854775808,x\n",
        {},
    ),
    "int64 limits": (
        "type,time,v\n"
        + "".join(
            f"A,{i},{v}\n"
            for i, v in enumerate([2**63 - 1, -(2**63), 2**63, 10**18, -(10**18) + 1])
        ),
        {},
    ),
    "eighteen and nineteen digits": (
        "type,time,v\nA,1,999999999999999999\nA,2,-99999999999999999\nA,3,1000000000000000000\n",
        {},
    ),
    "quoted commas and newlines": (
        'type,time,note\nA,1,"a, b"\nA,2,"two\nlines"\nA,3,"say ""hi"""\n',
        {},
    ),
    "irregular rows": ("type,time,a,b\nA,1,x,y\nB,2,x,y,z,w\nC,3\n\nD,4,q,r\n", {}),
    "row numbers": ("type,time\nA,1\nA,bad\nA,3\nA,also bad\n", {}),
    "header only": ("type,time,x\n", {}),
    "raw records": ("type,time,x\nA, soon , 12 \n", {}),
    "numeric requirement": (
        "type,time,price,qty\nB,1,n/a,1\nA,2,n/a,1\nB,3,,1\nB,4,12.5,1\nB,5,3,x\nB,6,true,2\n",
        {"numeric": {"B": {"price"}}},
    ),
    "numeric on two attributes": (
        "type,time,a,b\nB,1,x,y\nB,2,1,y\nB,3,x,2\nC,4,x,y\n",
        {"numeric": {"B": ["b", "a"], "C": ["type", "time"]}},
    ),
    "many ISO times and a bad one": (
        "type,time\n"
        + "".join(f"A,2013-02-08T09:30:{i:02d}.5+01:00\n" for i in range(50))
        + "A,2013-02-30T00:00:00\n",
        {},
    ),
    "ISO shapes": (
        "type,time\nA,2013-02-08\nA,2013-02-08 09:30:00\nA,2013-02-08T09:30:00Z\n"
        "A,2013-02-08T09:30:00.250Z\nA,2013-02-08T09:30:00+02:00\nA,2013-02-08T09:30:00.5-01:30\n"
        "A,2013-02-08T09:30:00.000\nA,1970-01-01T00:00:00.123456789Z\nA,1969-12-31T23:59:59.5Z\n"
        "A,0000-01-01\nA,20130208T093000\nA,2013-02-08T09:30:00,5\nA,2013-02-08T24:00\n"
        "A,9999-12-31T23:59:59.999999\nA,0001-01-01T00:00:00.5\n",
        {},
    ),
    "ISO times with blanks around": (
        "type,time\nA, 2013-02-08T09:30:00Z \nA,\t2013-02-08\n",
        {},
    ),
    "ISO and numbers in one column": ("type,time\nA,2013-02-08\nA,5\nA,2.5\nA,\n", {}),
    "event type": (
        "date,open,close,volume,Name\n2013-02-08,45.07,45.08,1824755,A\n"
        "2013-02-11,,44.6,2915405,A\n",
        {"event_type": "Stock", "time_col": "date"},
    ),
    "event type with type column": (
        "type,time,x\nA,1,2\n,2,3\n   ,3,4\n007,4,5\n",
        {"event_type": "E"},
    ),
    "event type irregular": ("type,time,x\nA,1,2\n,2\nB,3,4,5\n007,4,5\n", {"event_type": "E"}),
    "event type bad times": (
        "date,v\n2013-02-08,1\nsoon,2\n,3\n",
        {"event_type": "S", "time_col": "date"},
    ),
    "event type names the time column": ("type,x\n5,1\n", {"event_type": "E", "time_col": "type"}),
    "event type numeric": (
        "time,close\n1,12.5\n2,n/a\n3,\n",
        {"event_type": "Stock", "numeric": {"Stock": {"close"}}},
    ),
    "unicode and odd whitespace": (
        "type,time,v,w\n\u00a0A\u2003,1,\u00a012\u3000,\x1c\n B ,2,\u00a0x,caf\u00e9\n"
        "C,3,\u200b5,\u0085\n",
        {},
    ),
    "signs and exponents": (
        "type,time,v,w\nA,1,+1.5,1E5\nA,2,-0,-1e-5\nA,3,+0,.5e1\nA,4,-,e\nA,5,1-2,5.\n",
        {},
    ),
    "dates as text attribute": ("type,time,day\nA,1,2013-02-08\nA,2,2013-02-09\nA,3,\n", {}),
    "long int times": ("type,time\nA,12345678901234567890\nA,1\n", {}),
    "huge and fractional times": ("type,time\nA,123456789012345678\nA,1.5\n", {}),
    "times beyond 2**53 and fractions": ("type,time\nA,9007199254740993\nA,0.5\n", {}),
    "cr line ends": ("type,time,x\r\nA,1,2\r\nB,2,\r\n", {}),
    "lone cr in a cell": ("type,time,x\nA,1,a\rb\n", {}),
    "only empty cells": ("type,time,x,y\nA,1,,\nA,2,,\n", {}),
    "all rows rejected": ("type,time,x\n,1,2\nA,,3\n", {}),
    "numbers of every kind and text": (
        "type,time,v\nA,1,1\nA,2,2.5\nA,3,x\nA,4,99999999999999999999\nA,5,1e999\n",
        {},
    ),
}


@pytest.mark.parametrize("case", list(CSV_CASES))
def test_csv_equals_read_events(tmp_path: Path, case: str) -> None:
    text, options = CSV_CASES[case]
    same(csv_file(tmp_path, text), **options)


def test_csv_values_are_arrays_of_the_right_kind(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "type,time,n,f,s,e\nA,1,10,2.5,x,\nB,2,-3,,y,\nA,3,,0.25,,\nC,4,7,1.0,x,\n",
    )
    events = same(path).events
    assert events.type_names == ["A", "B", "C"]
    assert events.types.tolist() == [0, 1, 0, 2]
    assert events.times.dtype == np.int64 and events.times.tolist() == [1, 2, 3, 4]
    n, f, s = events.columns["n"], events.columns["f"], events.columns["s"]
    assert (n.kind, n.values.tolist(), n.valid.tolist()) == (
        "int",
        [10, -3, 0, 7],
        [True, True, False, True],
    )
    assert (f.kind, f.valid.tolist()) == ("float", [True, False, True, True])
    assert f.values[f.valid].tolist() == [2.5, 0.25, 1.0]
    assert (s.kind, s.dictionary, s.valid.tolist()) == (
        "text",
        ["x", "y"],
        [True, True, False, True],
    )
    assert s.values[s.valid].tolist() == [0, 1, 0]
    assert events.columns["e"].valid.tolist() == [False] * 4


def test_rejected_rows_leave_no_trace_in_the_arrays(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,s\nA,1,keep\nGone,x,lost\nB,2,keep\n")
    result = same(path)
    assert result.events.type_names == ["A", "B"]  # 'Gone' only named a rejected row
    assert result.events.columns["s"].dictionary == ["keep"]
    assert result.events.rows.tolist() == [1, 3]
    (rejected,) = result.rejected
    assert rejected.row == 2 and rejected.record == {"type": "Gone", "time": "x", "s": "lost"}


def test_iso_times_with_and_without_fractions_keep_their_kinds(tmp_path: Path) -> None:
    lines = [f"A,2013-02-08T09:30:{i % 60:02d}.{i % 4 * 25:02d}Z" for i in range(40)]
    path = csv_file(tmp_path, "type,time\n" + "\n".join(lines) + "\n")
    events = same(path).events
    assert events.times.dtype == np.float64
    assert events.time_ints is not None
    assert events.time_ints.tolist() == [i % 4 == 0 for i in range(40)]
    assert events.to_events().times[:2] == [FEB8_0930, FEB8_0930 + 1.25]
    assert type(events.to_events().times[0]) is int


def test_gzip_csv(tmp_path: Path) -> None:
    path = tmp_path / "events.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("type,time,x\nA,1,2\nB,oops,3\nC,3,4,5\nD,4,5\n")
    result = same(path)
    assert [r.row for r in result.rejected] == [2, 3]
    disguised = tmp_path / "plain.csv"
    disguised.write_bytes(gzip.compress(b"type,time\nA,1\n"))
    assert same(disguised).events.type_names == ["A"]


def test_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_bytes("\ufefftype,time,x\r\nA,1,2\r\n".encode())
    assert same(path).events.columns["x"].values.tolist() == [2]


def test_headerless_csv_with_names(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "A,1,5\nB,2,x\nA,3,7,extra\nA,4\n")
    result = same(path, names=["type", "time", "v"])
    assert result.events.rows.tolist() == [1, 2, 4]
    clean = csv_file(tmp_path, "A,1,5\nB,2,6\n", "clean.csv")
    assert same(clean, names=["type", "time", "v"]).events.columns["v"].kind == "int"


def test_names_are_checked_as_read_events_checks_them(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "A,1\n")
    for names, message in (
        (["t", "t"], "'t' appears twice"),
        (["type", ""], "give a name for every column"),
        (["type", "ts"], r"time column 'time' not found .* columns are \[type, ts\]"),
    ):
        with pytest.raises(InputError, match=message):
            read_columnar(path, names=names)
        with pytest.raises(InputError, match=message):
            iter_columnar(path, names=names)
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text('{"type": "A", "time": 1}\n')
    with pytest.raises(InputError, match="CSV files without a header row"):
        read_columnar(jsonl, names=["type", "time"])


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("", {}),
        ("kind,time,x\nA,1,2\n", {}),
        ("type,ts,x\nA,1,2\n", {}),
        ("type,time,x,x\nA,1,2,3\n", {}),
        ("type,time\nA,1\n", {"time_col": "type"}),
        ("type,time\nA,1\n", {"event_type": "  "}),
        ('type,time,x\nA,1,"two\nlines"\nA,2,"oops\nB,3,y\nC,4,z\n', {}),
        ('type,time,x\nA,1,"a\nb",extra\nA,2,"oops\nB,3,y\n', {}),
    ],
)
def test_csv_input_errors_are_read_events_errors(
    tmp_path: Path, text: str, options: dict[str, Any]
) -> None:
    path = csv_file(tmp_path, text)
    with pytest.raises(InputError) as expected:
        read_events(path, **options)
    with pytest.raises(InputError) as got:
        read_columnar(path, **options)
    assert str(got.value) == str(expected.value)
    with pytest.raises(InputError) as streamed:
        list(iter_columnar(path, chunk_rows=1, **options))
    assert str(streamed.value) == str(expected.value)


def test_file_and_format_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_columnar(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="only Parquet datasets"):
        read_columnar(tmp_path, fmt="csv")
    path = csv_file(tmp_path, "type,time\nA,1\n", "events.txt")
    with pytest.raises(InputError, match="cannot tell the format"):
        read_columnar(path)
    assert same(path, fmt="csv").events.type_names == ["A"]
    with pytest.raises(InputError, match="chunk_rows must be at least 1"):
        iter_columnar(path, fmt="csv", chunk_rows=0)


def test_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_bytes(b"type,time,x\nA,1,caf\xe9\n")
    with pytest.raises(InputError, match="is not UTF-8 text.*iconv"):
        read_columnar(path)
    with pytest.raises(InputError, match="is not UTF-8 text.*iconv"):
        list(iter_columnar(path))


def test_jsonl_goes_through_read_events(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(
        '{"type": "A", "time": 1, "n": 3, "b": true}\n{"time": 2}\n[1]\n'
        '{"type": "B", "time": 2.5, "h": 12345678901234567890123}\n'
        '{"type": "C", "time": "2013-02-08T09:30:00Z", "n": 1.5}\n'
    )
    result = same(path)
    assert [r.row for r in result.rejected] == [2, 3]
    assert result.events.to_events().times == [1, 2.5, FEB8_0930]


# ----------------------------------------------------------------------------- fast path


def test_clean_files_never_take_the_slow_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain columns, ISO times, rejects and numeric checks: no Python value per cell."""
    lines = ["type,time,driver,price,note,day"]
    for i in range(300):
        kind = "Travel" if i % 3 else "Pay"
        price = "" if i % 7 == 0 else f"{i % 50}.{i % 10}5"
        note = "" if i % 5 == 0 else f"n{i % 4}"
        lines.append(f"{kind},2013-02-08T09:{i // 60:02d}:{i % 60:02d}Z,{i - 150},{price},{note},x")
    lines.append("Travel,later,1,2.5,a,x")
    lines.append(",2013-02-08,1,2.5,a,x")
    path = csv_file(tmp_path, "\n".join(lines) + "\n")
    expected = read_events(path, numeric={"Pay": ["note"]})

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("slow path taken")

    for name in ("read_events", "_text_table_slow", "_python_csv_chunks", "column_of", "assemble"):
        monkeypatch.setattr(cr, name, refuse)
    for name in ("_text_column", "column_of", "arrow_values"):
        monkeypatch.setattr(ca, name, refuse)
    monkeypatch.setattr(ColumnarBatch, "from_events", refuse)
    parsed: list[object] = []
    time_value = ca.time_value

    def python_time(value: object) -> object:
        parsed.append(value)
        return time_value(value)

    monkeypatch.setattr(ca, "time_value", python_time)
    for chunks in (
        [read_columnar(path, numeric={"Pay": ["note"]})],
        list(iter_columnar(path, numeric={"Pay": ["note"]}, chunk_rows=64)),
    ):
        assert_same_events(joined(chunks), expected.events)
        assert [r for c in chunks for r in c.rejected] == expected.rejected
    result = read_columnar(path, numeric={"Pay": ["note"]})
    kinds = {name: column.kind for name, column in result.events.columns.items()}
    assert kinds == {"driver": "int", "price": "float", "note": "text", "day": "text"}
    assert len(result.rejected) == 2 + sum(1 for i in range(300) if i % 3 == 0 and i % 5)
    assert set(parsed) == {"later"}  # every ISO time was parsed by pyarrow


def test_plain_number_bytes_agree_with_the_regular_expressions() -> None:
    """_plain_numbers only says 'int' or 'float' for columns _text_column casts whole."""
    samples = [
        ["1", "-2", "", "007"],
        ["1.5", "-.5", "5.", ""],
        ["1", "1.5"],
        ["-", "1"],
        ["1-", "2"],
        ["--1"],
        ["1.2.3"],
        ["."],
        ["-."],
        ["1234567890123456789"],
        [" 1"],
        ["1e5"],
        ["+1"],
        [""],
    ]
    for cells in samples:
        column = pa.chunked_array([pa.array(cells, pa.string())])
        quick = ca._plain_numbers(column)
        expected = _text_column(column)
        if quick is None:
            continue
        got = Column(*quick).python_values()
        assert typed(got) == typed(expected), cells
    assert ca._plain_numbers(pa.chunked_array([pa.array(["1", "-2"])])) is not None
    assert ca._plain_numbers(pa.chunked_array([pa.array(["1.5", "-2.0"])])) is not None
    assert ca._plain_numbers(pa.chunked_array([pa.array(["1", "2.0"])])) is None
    # across chunks: empty cells, then decimals; integers, then decimals; only empty cells
    quick = ca._plain_numbers(pa.chunked_array([pa.array(["", ""]), pa.array(["1.5", ""])]))
    assert quick is not None and quick[0] == "float" and quick[1].tolist()[2] == 1.5
    assert ca._plain_numbers(pa.chunked_array([pa.array(["1"]), pa.array(["1.5"])])) is None
    quick = ca._plain_numbers(pa.chunked_array([pa.array([""]), pa.array(["", "-7"])]))
    assert quick is not None and quick[0] == "int" and quick[1].tolist() == [0, 0, -7]


NUMERIC_TEXT = st.text(alphabet="0123456789-+.eE x\u00a0", max_size=7)
CELLS = st.one_of(
    NUMERIC_TEXT,
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", " ", "nan", "inf", "1e999", "007", "+3", ".5", "5.", "abc", "x y"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(CELLS, max_size=6), min_size=1, max_size=4), st.integers(0, 3))
def test_text_columns_equal_text_column_rules(pieces: list[list[str]], cut: int) -> None:
    """Column by column (several chunks, sliced ones too), the classification of
    read_columnar gives the values of readers._text_column."""
    column = pa.chunked_array([pa.array(p, pa.string()) for p in pieces], pa.string())
    if cut and len(column) > cut:
        column = column.slice(cut)
    expected = _text_column(column)
    got = ca._finish(ca._text_attribute(column), None).python_values()
    assert typed(got) == typed(expected)


# ----------------------------------------------------------------------------- hypothesis files

TYPES = st.sampled_from(["A", "B", " B ", "", "  ", "007", "Travel"])
TIMES = st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.floats(min_value=-1e9, max_value=1e9).map(repr),
    st.sampled_from(
        [
            "",
            " ",
            "soon",
            "nan",
            "2013-02-08",
            "2013-02-08T09:30:00Z",
            "2013-02-08T09:30:00.250+01:00",
            "2013-02-30",
            " 17 ",
            "1e3",
        ]
    ),
)
VALUES = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
    st.sampled_from(
        ["", " ", "x", "n/a", "1e999", "2**70", str(2**70), " 5 ", "a,b", 'q"q', "l\nm"]
    ),
)


@st.composite
def csv_texts(draw: st.DrawFn) -> tuple[list[list[str]], dict[str, Any]]:
    plain = draw(st.booleans())  # columns of one clean kind, to exercise the fast paths
    n = draw(st.integers(min_value=0, max_value=12))
    rows = []
    for _ in range(n):
        if plain:
            row = [
                draw(st.sampled_from(["A", "B"])),
                draw(st.integers(0, 100).map(str)),
                draw(st.sampled_from(["", "-3", "12"])),
                draw(st.sampled_from(["", "1.5", "-0.25"])),
            ]
        else:
            row = [draw(TYPES), draw(TIMES), draw(VALUES), draw(VALUES)]
        if draw(st.integers(0, 9)) == 0:
            row = row[: draw(st.integers(1, 3))] if draw(st.booleans()) else [*row, "extra"]
        rows.append(row)
    options: dict[str, Any] = {}
    if draw(st.booleans()):
        options["numeric"] = {draw(st.sampled_from(["A", "B", "E"])): ["a"]}
    if draw(st.integers(0, 3)) == 0:
        options["event_type"] = "E"
    return rows, options


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(csv_texts(), st.booleans())
def test_generated_csv_equals_read_events(
    tmp_path: Path, generated: tuple[list[list[str]], dict[str, Any]], gzipped: bool
) -> None:
    rows, options = generated
    path = tmp_path / ("gen.csv.gz" if gzipped else "gen.csv")
    opener: Any = gzip.open if gzipped else open
    with opener(path, "wt", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["type", "time", "a", "b"])
        writer.writerows(rows)
    same(path, chunks=(1, 4), **options)


# ----------------------------------------------------------------------------- Parquet


def test_parquet_value_types(tmp_path: Path) -> None:
    utc = dt.UTC
    table = pa.table(
        {
            "type": pa.array(["A", "B", "A"]).dictionary_encode(),
            "time": pa.array(
                [
                    dt.datetime(2013, 2, 8, 9, 30, tzinfo=utc),
                    dt.datetime(2013, 2, 8, 9, 30, 0, 250000, tzinfo=utc),
                    dt.datetime(2013, 2, 8),
                ],
                pa.timestamp("ns", tz="UTC"),
            ),
            "i": pa.array([1, None, -(2**63)], pa.int64()),
            "i8": pa.array([1, 2, None], pa.int8()),
            "u": pa.array([1, 2**64 - 1, None], pa.uint64()),
            "f": pa.array([1.5, math.nan, math.inf], pa.float32()),
            "g": pa.array([1.5, None, -0.0], pa.float64()),
            "s": pa.array(["x", None, ""]),
            "ls": pa.array([" y ", "z", None], pa.large_string()),
            "b": pa.array([True, False, None]),
            "d": pa.array([Decimal("12.00"), Decimal("0.25"), None], pa.decimal128(10, 2)),
            "day": pa.array([dt.date(2013, 2, 8), None, dt.date(1970, 1, 2)], pa.date32()),
            "day64": pa.array([dt.date(2013, 2, 8), None, dt.date(1960, 1, 2)], pa.date64()),
            "naive": pa.array(
                [dt.datetime(1970, 1, 1, 0, 0, 1, 500000), None, None], pa.timestamp("ms")
            ),
            "whole": pa.array(
                [dt.datetime(2000, 1, 1), None, dt.datetime(1900, 1, 1)], pa.timestamp("us")
            ),
            "ns": pa.array([1_700_000_000_123_456_789, -1, None], pa.timestamp("ns")),
            "span": pa.array([dt.timedelta(seconds=90), dt.timedelta(milliseconds=5), None]),
            "nothing": pa.nulls(3),
            "nested": pa.array([[1, 2], None, []]),
            "blob": pa.array([b"ab", None, b"\xff"]),
        }
    )
    events = same(parquet_file(tmp_path, table)).events
    kinds = {name: column.kind for name, column in events.columns.items()}
    assert kinds["i"] == "int" and kinds["s"] == "text" and kinds["b"] == "text"
    assert kinds["day"] == "int" and kinds["whole"] == "int" and kinds["ns"] == "float"
    assert events.to_events().times == [FEB8_0930, FEB8_0930 + 0.25, 1360281600]


@pytest.mark.parametrize(
    "time",
    [
        pa.array(["1", " 2013-02-08 ", None, "", "soon", "2.5", "nan"]),
        pa.array(["5", "6", "7", "8", "9", "10", "11"]).dictionary_encode(),
        pa.array([1, None, 3, 4, 5, 6, 2**40], pa.int64()),
        pa.array([1, None, 3, 4, 5, 6, 7], pa.int8()),
        pa.array([1.5, math.nan, None, math.inf, -math.inf, 2.0, 3.25]),
        pa.array([0, 1, None, 3, 4, 5, 2**64 - 1], pa.uint64()),
        pa.array([1000, 1500, None, 3000, 4001, 5000, 6000], pa.timestamp("ms", tz="UTC")),
        pa.array([1, 2, None, 4, 5, 6, 7], pa.duration("s")),
        pa.array([True, False, None, True, True, True, True]),
        pa.array([Decimal(1), Decimal("1.5"), None] + [Decimal(2)] * 4, pa.decimal128(5, 1)),
        pa.array([dt.date(2013, 2, 8)] * 6 + [None], pa.date32()),
        pa.array(["12345678901234567890123"] * 7),
    ],
)
def test_parquet_time_columns(tmp_path: Path, time: pa.Array) -> None:
    table = pa.table(
        {
            "type": pa.array(["A", None, " ", "B", "7", "C", "D"]),
            "time": time,
            "x": pa.array([1, 2, 3, 4, 5, 6, 7]),
        }
    )
    same(parquet_file(tmp_path, table, row_group_size=3), numeric={"B": ["x"]})


@pytest.mark.parametrize(
    "types",
    [
        pa.array([1, 2, None, 1]),
        pa.array([True, False, None, True]),
        pa.array(["A", " A ", "", None]).dictionary_encode(),
        pa.array([1.5, 2.0, None, math.nan]),
        pa.array(["A", "B", "A", "B"], pa.large_string()),
    ],
)
def test_parquet_type_columns(tmp_path: Path, types: pa.Array) -> None:
    table = pa.table({"type": types, "time": [1, 2, 3, 4], "v": ["1", "x", None, "2"]})
    same(parquet_file(tmp_path, table), numeric={"1": ["v"], "A": ["v"], "true": ["v"]})
    same(parquet_file(tmp_path, table, "e.parquet"), event_type="E")


def test_parquet_rejects_and_records(tmp_path: Path) -> None:
    path = parquet_file(
        tmp_path,
        pa.table(
            {
                "type": ["A", None, "B", "B"],
                "time": ["1", "2", "never", "4"],
                "at": pa.array([dt.datetime(2013, 2, 8)] * 4, pa.timestamp("s")),
                "v": [1.5, 2.5, 3.5, None],
                "s": ["x", "y", "z", "w"],
            }
        ),
    )
    result = same(path, numeric={"B": ["s"]})
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "no event type in column 'type'"),
        (3, "time 'never' is neither a number nor an ISO-8601 timestamp"),
        (4, "attribute 's' is 'w', not a number (the queries read it numerically)"),
    ]
    assert result.rejected[0].record["at"] == dt.datetime(2013, 2, 8)


def test_parquet_chunks_follow_row_groups_and_row_numbers(tmp_path: Path) -> None:
    n = 1000
    table = pa.table(
        {
            "type": pa.array([f"T{i % 3}" for i in range(n)]),
            "time": pa.array(range(n), pa.int64()),
            "v": pa.array([None if i % 10 == 0 else i * 0.5 for i in range(n)]),
        }
    )
    path = parquet_file(tmp_path, table, row_group_size=128)
    same(path, chunks=(1, 97, 300))
    chunks = list(iter_columnar(path, chunk_rows=300))
    assert [len(c.events) for c in chunks] == [300, 300, 300, 100]
    assert chunks[-1].events.rows.tolist() == list(range(901, 1001))


def test_parquet_folder_is_one_dataset(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    (folder / "region=north").mkdir(parents=True)
    (folder / "region=south").mkdir()
    pq.write_table(
        pa.table({"type": ["A", "B"], "time": [1, 2]}), folder / "region=north" / "p.parquet"
    )
    pq.write_table(
        pa.table({"type": ["C", "D", "E"], "time": [3.5, None, 4.0], "extra": [2**40, 1, 2]}),
        folder / "region=south" / "p.parquet",
    )
    (folder / "_SUCCESS").write_text("")
    result = same(folder)
    assert result.events.source == str(folder)
    assert result.events.to_events().times == [1, 2, 3.5, 4.0]
    (rejected,) = result.rejected
    assert rejected.source == str(folder / "region=south" / "p.parquet")
    events = same(folder, event_type="Stock").events
    assert events.type_names == ["Stock"]


def test_parquet_errors_are_read_events_errors(tmp_path: Path) -> None:
    corrupt = tmp_path / "bad.parquet"
    corrupt.write_bytes(b"PAR1 this is not really parquet")
    missing = parquet_file(tmp_path, pa.table({"type": ["A"], "when": [1]}), "m.parquet")
    (tmp_path / "empty").mkdir()
    for path in (corrupt, missing, tmp_path / "empty"):
        with pytest.raises(InputError) as expected:
            read_events(path)
        with pytest.raises(InputError) as got:
            read_columnar(path)
        assert str(got.value) == str(expected.value)
        with pytest.raises(InputError) as streamed:
            list(iter_columnar(path))
        assert str(streamed.value) == str(expected.value)


def test_empty_parquet(tmp_path: Path) -> None:
    table = pa.table({"type": pa.array([], pa.string()), "time": pa.array([], pa.int64())})
    result = same(parquet_file(tmp_path, table))
    assert len(result.events) == 0


# ----------------------------------------------------------------------------- chunks and pieces


def test_csv_chunks_continue_row_numbers_and_switch_readers(tmp_path: Path) -> None:
    lines = [f"T{i % 3},{i},{i * 2}" for i in range(1, 101)]
    lines[70] = "T1,71,142,extra"  # pyarrow stops here: the rest goes row by row
    lines[80] = "T1,later,1"
    path = csv_file(tmp_path, "type,time,v\n" + "\n".join(lines) + "\n")
    result = same(path, chunks=(1, 7, 30))
    assert [r.row for r in result.rejected] == [71, 81]
    chunks = list(iter_columnar(path, chunk_rows=30))
    assert [c.events.rows[0] for c in chunks] == [1, 31, 61, 91]
    assert chunks[0].events.columns["v"].kind == "int"  # read by pyarrow


def test_iter_reads_a_header_only_file_as_one_empty_chunk(tmp_path: Path) -> None:
    (chunk,) = list(iter_columnar(csv_file(tmp_path, "type,time,x\n")))
    assert len(chunk.events) == 0 and chunk.rejected == []


def test_whitespace_is_what_python_strips() -> None:
    """The fast path strips cells with PY_WHITESPACE and classifies them after pyarrow's
    trim, as read_events does; both must be Python's whitespace."""
    spaces = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert set(PY_WHITESPACE) == spaces
    candidates = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    trimmed = pc.utf8_trim_whitespace(pa.array(candidates))
    arrow_spaces = {c for c, t in zip(candidates, trimmed.to_pylist(), strict=True) if not t}
    assert arrow_spaces == spaces


def test_times_of_round_trips_every_kind() -> None:
    for times in ([1, 2], [1.5, 2.0], [1, 2.5], [2**60, 0.5], [2**70, 1], [], [-(2**63)]):
        values, whole, exact = times_of(times)
        batch = ColumnarBatch(
            np.zeros(len(times), np.int32), ["A"], values, time_ints=whole, exact_times=exact
        )
        assert typed(batch.to_events().times) == typed(times)
        back = ColumnarBatch.from_events(batch.to_events())
        assert typed(back.to_events().times) == typed(times)
        picked = batch.take(np.arange(len(times))[::-1])
        assert typed(picked.time_values()) == typed(times[::-1])
    assert times_of([1, 2])[0].dtype == np.int64
    assert times_of([1, 2.5])[2] is None  # small ints beside floats: the mask suffices


def test_pyarrow_iso_times_are_python_iso_times() -> None:
    """Times pyarrow parses are taken cell by cell (read_events decides per column):
    that is the same only if pyarrow never takes a text Python refuses or reads
    otherwise. Plain shapes with every field near or past its range."""
    rng = random.Random(5)
    texts = set()
    for _ in range(20000):
        year = rng.choice(["0001", "1969", "1970", "2012", "2013", "2100", "9999", "0000"])
        text = f"{year}-{rng.choice(['00', '01', '02', '04', '12', '13'])}-"
        text += rng.choice(["00", "01", "28", "29", "30", "31", "32"])
        if rng.random() < 0.8:
            text += rng.choice(["T", " "]) + rng.choice(["00", "09", "23", "24", "25"])
            text += ":" + rng.choice(["00", "30", "59", "60"])
            if rng.random() < 0.7:
                text += ":" + rng.choice(["00", "59", "60", "61"])
                if rng.random() < 0.5:
                    text += "." + str(rng.randrange(10 ** rng.randint(1, 6)))
            if rng.random() < 0.6:
                text += rng.choice(["Z", "-00:00", "+05:30", "+0530", "+23:59", "+24:00", "+05:60"])
        texts.add(text)
    ordered = sorted(texts)
    micros, parsed = ca._iso_micros(pa.array(ordered))
    assert 500 < parsed.sum() < len(ordered)
    for text, value, ok in zip(ordered, micros.tolist(), parsed.tolist(), strict=True):
        if ok:
            seconds = value // 10**6 if value % 10**6 == 0 else value / 10**6
            assert typed([time_value(text)]) == typed([seconds]), text


def test_read_columnar_restarts_when_pyarrow_stops_after_a_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An irregular row in a later chunk: read_events reads the whole file row by row,
    so read_columnar starts again with it (iter_columnar goes on from that chunk)."""
    rows = [f"A,{i},{i}" for i in range(1, 41)] + ["A,41,41,extra", "A,42"]
    path = csv_file(tmp_path, "type,time,x\n" + "\n".join(rows) + "\n")
    monkeypatch.setattr(cr, "_BLOCK_BYTES", 64)  # pyarrow meets the long row late
    monkeypatch.setattr(cr, "_GATHER_ROWS", 4)
    slow: list[object] = []
    original = cr._slow

    def spy(plan: Any) -> Any:
        slow.append(plan)
        return original(plan)

    monkeypatch.setattr(cr, "_slow", spy)
    result = same(path, chunks=(4,))
    assert len(slow) == 2  # read_columnar, twice in same(); never iter_columnar
    assert result.events.rows.tolist() == [*range(1, 41), 42]
    assert [r.row for r in result.rejected] == [41]
    chunks = list(iter_columnar(path, chunk_rows=4))
    assert chunks[0].events.columns["x"].kind == "int"  # read by pyarrow
    assert chunks[-1].events.rows.tolist() == [42]


def test_gather_grows_past_its_capacity(tmp_path: Path) -> None:
    text = "type,time,a,b\n" + "".join(f"T{i % 4},{i},{i},{i / 2}\n" for i in range(50))
    path = csv_file(tmp_path, text)
    gather = cr._Gather(1)
    for chunk in iter_columnar(path, chunk_rows=7):
        gather.add(chunk)
    assert gather.capacity >= 50
    got = gather.result(str(path))
    check_arrays(got.events)
    assert_same_events(got.events.to_events(), read_events(path).events)


def test_parquet_files_of_different_kinds(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    folder.mkdir()
    pq.write_table(
        pa.table({"type": ["A"], "time": [2**43 - 1], "v": [1], "s": ["x"], "w": [1.5]}),
        folder / "a.parquet",
    )
    pq.write_table(
        pa.table({"type": ["B"], "time": [0.5], "v": [2.5], "s": pa.array([3]), "u": [True]}),
        folder / "b.parquet",
    )
    events = same(folder).events
    assert events.times.tolist() == [2**43 - 1, 0.5]  # the largest time in range, exact
    assert {name: column.kind for name, column in events.columns.items()} == {
        "v": "mixed",
        "s": "mixed",
        "w": "float",
        "u": "text",
    }


def test_attributes_keep_only_the_named_columns_and_full_rejected_records(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.csv"
    path.write_text(
        "type,time,driver,rider,speed,note\n"
        "A,1,7,3,10.5,x\n"
        "B,never,8,4,11,y\n"  # rejected: its record keeps every cell
        "B,3,9,5,fast,z\n"  # rejected: speed is read as a number
        "A,4,,6,12,w\n"
    )
    keep = {"driver"}
    numeric = {"B": ["speed"]}
    full = read_events(path, numeric=numeric)
    expected = EventBatch(
        types=full.events.types,
        times=full.events.times,
        columns={k: v for k, v in full.events.columns.items() if k in keep | {"speed"}},
        rows=full.events.rows,
        source=full.events.source,
    )
    whole = read_columnar(path, numeric=numeric, attributes=keep)
    assert sorted(whole.events.columns) == ["driver", "speed"]  # numeric ones are kept
    assert_same_events(whole.events.to_events(), expected)
    assert rejects(whole.rejected) == rejects(full.rejected)
    assert [r.record for r in whole.rejected] == [r.record for r in full.rejected]
    assert whole.rejected[0].record["note"] == "y"
    chunks = list(iter_columnar(path, numeric=numeric, attributes=keep, chunk_rows=1))
    assert all(sorted(c.events.columns) == ["driver", "speed"] for c in chunks)
    assert [r for c in chunks for r in c.rejected] == whole.rejected


def test_attributes_apply_on_every_path(tmp_path: Path) -> None:
    """The slow paths (JSON Lines, a CSV pyarrow cannot read, Parquet) keep the same columns."""
    rows = [{"type": "A", "time": 1, "g": 1, "x": 2}, {"type": "A", "time": 2, "g": 1, "x": 3}]
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text(
        "".join(f'{{"type": "A", "time": {r["time"]}, "g": 1, "x": 2}}\n' for r in rows)
    )
    ragged = tmp_path / "r.csv"
    ragged.write_text("type,time,g,x\nA,1,1,2\nA,2,1,3,extra\n")
    parquet = parquet_file(tmp_path, pa.table({"type": ["A"], "time": [1], "g": [1], "x": [2]}))
    for path in (jsonl, ragged, parquet):
        assert list(read_columnar(path, attributes=["g"]).events.columns) == ["g"], path
        assert all(
            list(c.events.columns) == ["g"] for c in iter_columnar(path, attributes=["g"])
        ), path

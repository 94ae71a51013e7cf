"""Readers: every rule of the IO contract, each with a case a wrong reader fails.

Besides the cases with their expected values, the readers are checked against a
naive reader written here, row by row and cell by cell with the value model of
:mod:`trendagg.io.values` (``parse_cell``, ``time_value``, ``type_text``): the
readers classify cells on their bytes, cast columns with pyarrow and parse ISO
times in bulk, and must give the same values (int vs float vs text vs missing)
and the same rejected rows with the same reasons, read whole or in chunks of any
size (:func:`same`).
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import io
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
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
from trendagg.io import (
    EventBatch,
    RejectedRow,
    assemble,
    batch,
    from_records,
    read_events,
    readers,
    text,
)
from trendagg.io import csv as csv_reader
from trendagg.io.assemble import arrow_values, assemble_table
from trendagg.io.batch import times_of
from trendagg.io.gather import Gather
from trendagg.io.jsonl import parse_json_line
from trendagg.io.options import ReadOptions
from trendagg.io.readers import iter_events
from trendagg.io.values import (
    exact_int,
    int_text,
    json_text,
    normalize_value,
    parse_cell,
    shown,
    time_value,
    type_text,
)

FEB8 = 1360281600  # 2013-02-08T00:00:00Z
FEB8_0930 = 1360315800  # 2013-02-08T09:30:00Z


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def csv_file(tmp_path: Path, text: str, name: str = "events.csv") -> Path:
    return write(tmp_path / name, text)


def jsonl_file(tmp_path: Path, lines: list[str], name: str = "events.jsonl") -> Path:
    return write(tmp_path / name, "\n".join(lines) + "\n")


def parquet_file(tmp_path: Path, table: pa.Table, name: str = "events.parquet", **kw: Any) -> Path:
    path = tmp_path / name
    pq.write_table(table, path, **kw)
    return path


@dataclass
class Lists:
    """Events as Python lists: what the naive readers make, to compare a batch with."""

    types: list[str]
    times: list[Any]
    columns: dict[str, list[object]]
    rows: list[int]
    source: str = ""

    def __len__(self) -> int:
        return len(self.types)

    def attrs(self, i: int) -> dict[str, object]:
        return {name: values[i] for name, values in self.columns.items() if values[i] is not None}


def lists(events: EventBatch) -> Lists:
    """The events of a batch as lists (types, times and values of the value model)."""
    assert events.rows is not None
    columns = {name: column.python_values() for name, column in events.columns.items()}
    return Lists(
        events.type_values(), events.time_values(), columns, events.rows.tolist(), events.source
    )


@dataclass
class Listed:
    """A ReadResult with its events as lists."""

    events: Lists
    rejected: list[RejectedRow]


def read_listed(path: Any, **options: Any) -> Listed:
    result = read_events(path, **options)
    return Listed(lists(result.events), result.rejected)


def records_listed(records: Any, **options: Any) -> Listed:
    result = from_records(records, **options)
    return Listed(lists(result.events), result.rejected)


def only_event_values(result: Listed, column: str) -> list[object]:
    return result.events.columns[column]


# ----------------------------------------------------------------------------- the naive reader

Row = tuple[int, dict[str, object], Callable[[], dict[str, object]]]  # number, values, record


def naive(
    rows: list[Row], names: list[str], source: str, options: ReadOptions
) -> tuple[Lists, list[RejectedRow]]:
    """The events of rows of values (the type as text or any value), one rule at a time."""
    if rows:
        options.check_columns(names, source)
    readers: dict[str, set[str]] = {}
    for kind, attributes in (options.numeric or {}).items():
        for name in attributes:
            readers.setdefault(name, set()).add(kind)
    attributes = [name for name in names if name not in options.needed()]
    events = Lists([], [], {name: [] for name in attributes}, [], source)
    rejected = []
    for number, values, record in rows:
        kind = options.event_type
        if kind is None:
            value = values.get(options.type_col)
            kind = value if isinstance(value, str) and value.strip() else type_text(value)
        reason, time = None, values.get(options.time_col)
        if kind is None:
            reason = f"no event type in column '{options.type_col}'"
        elif time is None or (isinstance(time, str) and not time.strip()):
            reason = f"no time in column '{options.time_col}'"
        else:
            try:
                time = time_value(time)
            except ValueError as error:
                reason = str(error)
        for name, kinds in readers.items():
            value = values.get(name) if name in attributes else None
            if not reason and kind in kinds and type(value) not in (int, float, type(None)):
                reason = f"attribute '{name}' is '{shown(value)}', not a number (the queries read it numerically)"
        if reason:
            rejected.append(RejectedRow(source, number, reason, record()))
            continue
        events.types.append(kind)
        events.times.append(time)  # type: ignore[arg-type]
        events.rows.append(number)
        for name in attributes:
            events.columns[name].append(values.get(name))
    return events, rejected


def naive_csv(path: Path, options: ReadOptions) -> tuple[Lists, list[RejectedRow]]:
    """A CSV file by Python's csv module, each cell by ``parse_cell``."""
    rows: list[Row] = []
    long: list[RejectedRow] = []
    opener: Any = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:
        lines = csv.reader(handle)
        names = (
            [n.strip() for n in options.columns] if options.columns else next(r for r in lines if r)
        )
        number = 0
        for cells in lines:
            if not cells:
                continue
            number += 1
            record = dict(zip(names, cells, strict=False))
            if len(cells) > len(names):
                reason = f"row has {len(cells)} cells but the header has {len(names)} columns; quote cells that contain commas"
                long.append(
                    RejectedRow(
                        str(path), number, reason, {**record, "_extra": cells[len(names) :]}
                    )
                )
                continue
            values = {name: parse_cell(cell) for name, cell in record.items()}
            if options.event_type is None and options.type_col in record:
                values[options.type_col] = record[options.type_col].strip() or None
            rows.append((number, values, lambda record=record: record))
    events, rejected = naive(rows, names, str(path), options)
    return events, sorted(long + rejected, key=lambda r: r.row)


def naive_jsonl(path: Path, options: ReadOptions) -> tuple[Lists, list[RejectedRow]]:
    """A JSON Lines file line by line, each value by ``normalize_value``."""
    rows: list[Row] = []
    rejected = []
    names: dict[str, None] = {}
    first = True
    data = path.read_bytes()
    data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    for number, line in enumerate(io.BytesIO(data.removeprefix(b"\xef\xbb\xbf")), 1):
        try:
            line_text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            reason = f"line is not UTF-8 text (byte 0x{line[error.start]:02x} at column {error.start + 1})"
            raw = line.decode("utf-8", "backslashreplace").rstrip("\r\n")
            rejected.append(RejectedRow(str(path), number, reason, {"_text": raw}))
            continue
        if not line_text.strip(" \t\r\n"):
            continue
        if first and line_text.strip(" \t\r\n").startswith("["):
            raise InputError(f"{path} starts with '[': it looks like one JSON array")
        first = False
        try:
            value = parse_json_line(line_text)
        except ValueError as error:
            rejected.append(
                RejectedRow(str(path), number, str(error), {"_text": line_text.rstrip("\r\n")})
            )
            continue
        if not isinstance(value, dict):
            kinds = {type(None): "null", bool: "a boolean", str: "a string", int: "a number",
                     float: "a number", list: "an array"}  # fmt: skip
            reason = f"line is {kinds[type(value)]}, not an object"
            text_ = json_text(value, compact=True, ensure_ascii=False)
            rejected.append(RejectedRow(str(path), number, reason, {"_text": text_}))
            continue
        names.update(dict.fromkeys(value))
        values = {key: normalize_value(item) for key, item in value.items()}
        rows.append((number, values, lambda value=value: value))
    events, found = naive(rows, list(names), str(path), options)
    return events, sorted(rejected + found, key=lambda r: r.row)


def naive_parquet(path: Path, options: ReadOptions) -> tuple[Lists, list[RejectedRow]]:
    """A Parquet file by pyarrow's whole-table reader, each column by ``arrow_values``."""
    table = pq.read_table(path)
    columns = {name: arrow_values(table.column(name)) for name in table.column_names}
    if options.time_col in columns:  # a time keeps its fraction of a second exactly
        columns[options.time_col] = exact_times(table.column(options.time_col))
    rows: list[Row] = [
        (i + 1, {name: values[i] for name, values in columns.items()},
         lambda i=i: table.slice(i, 1).to_pylist()[0])
        for i in range(table.num_rows)
    ]  # fmt: skip
    return naive(rows, table.column_names, str(path), options)


def exact_times(column: pa.ChunkedArray) -> list[object]:
    """A time column's values: timestamps and durations as exact seconds (a Fraction
    where they have a fraction of a second), other types as ``arrow_values``."""
    kind = column.type
    if not (pa.types.is_timestamp(kind) or pa.types.is_duration(kind)):
        return arrow_values(column)
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[kind.unit]
    counts = column.cast(pa.int64()).to_pylist()
    return [
        None if c is None else c // per_second if c % per_second == 0 else Fraction(c, per_second)
        for c in counts
    ]


def typed(values: list[object]) -> list[tuple[str, object]]:
    """Values with their kinds, so that 1 and 1.0 differ (and nan is not compared)."""
    return [(type(value).__name__, value) for value in values]


def assert_same_events(
    got: EventBatch | Lists, expected: EventBatch | Lists, *, source: bool = True
) -> None:
    got = lists(got) if isinstance(got, EventBatch) else got
    expected = lists(expected) if isinstance(expected, EventBatch) else expected
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


def check_arrays(batch: EventBatch) -> None:
    """The array contract of EventBatch."""
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


def joined(chunks: list[Any]) -> Lists:
    """The events of chunks one after the other (a column a chunk lacks is missing)."""
    parts = [lists(chunk.events) for chunk in chunks]
    names: dict[str, None] = {}
    for part in parts:
        names.update(dict.fromkeys(part.columns))
    columns: dict[str, list[object]] = {name: [] for name in names}
    for part in parts:
        for name, values in columns.items():
            values.extend(part.columns.get(name) or [None] * len(part))
    return Lists(
        [t for p in parts for t in p.types],
        [t for p in parts for t in p.times],
        columns,
        [r for p in parts for r in p.rows],
        parts[0].source if parts else "",
    )


NAIVE = {".csv": naive_csv, ".jsonl": naive_jsonl, ".parquet": naive_parquet}


def same(path: Path, *, chunks: tuple[int, ...] = (1, 2, 3), **options: Any) -> Any:
    """Read ``path`` whole, gathered from chunks of 2 rows and in chunks: all the same,
    and (a file of a known extension) what the naive reader reads."""
    names = options.pop("names", None)
    expected = read_events(path, columns=names, **options)
    suffix = next((s for s in path.suffixes if s in NAIVE), None)
    if suffix is not None and not path.is_dir():
        plain = ReadOptions(columns=None if names is None else tuple(names), **options)
        events, rejected = NAIVE[suffix](path, plain)
        assert_same_events(expected.events, events)
        assert rejects(expected.rejected) == rejects(rejected)
    with mock.patch.object(readers, "_GATHER_ROWS", 2):  # gathered from chunks of 2 rows
        gathered = read_events(path, columns=names, **options)
    check_arrays(expected.events)
    check_arrays(gathered.events)
    assert_same_events(gathered.events, expected.events)
    assert rejects(gathered.rejected) == rejects(expected.rejected)
    for chunk_rows in (*chunks, 10**6):
        pieces = list(iter_events(path, columns=names, chunk_rows=chunk_rows, **options))
        assert pieces, "at least one chunk"
        for piece in pieces:
            check_arrays(piece.events)
            assert len(piece.events) + len(piece.rejected) <= chunk_rows
        assert_same_events(joined(pieces), expected.events, source=not path.is_dir())
        assert rejects([r for piece in pieces for r in piece.rejected]) == rejects(
            expected.rejected
        )
    return expected


# ----------------------------------------------------------------------------- CSV inputs, against the naive reader

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
        "A,2013-02-08T09:30:00.000\nA,1970-01-01T00:00:00.123456Z\nA,1969-12-31T23:59:59.5Z\n"
        "A,0000-01-01\nA,20130208T093000\nA,2013-02-08T09:30:00,5\nA,2013-02-08T24:00\n"
        "A,9999-12-31T23:59:59.999999\nA,0001-01-01T00:00:00.5\n",
        {},
    ),
    "ISO nanoseconds": (
        "type,time\nA,2013-02-08T09:30:00.123456789Z\nA,2013-02-08T09:30:00.123456790Z\n"
        "A,2013-02-08 09:30:00.1234567+01:00\nA,2013-02-08T09:30:00,123456789\nA,5\n",
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
def test_csv_cases_equal_the_naive_reader(tmp_path: Path, case: str) -> None:
    text_, options = CSV_CASES[case]
    same(csv_file(tmp_path, text_), **options)


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
    assert events.times.dtype == np.int64 and events.per_second == 1000  # milliseconds
    assert lists(events).times[:2] == [FEB8_0930, FEB8_0930 + Fraction(5, 4)]
    assert [type(t) for t in lists(events).times[:2]] == [int, Fraction]


def test_gzip_csv(tmp_path: Path) -> None:
    path = tmp_path / "events.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("type,time,x\nA,1,2\nB,oops,3\nC,3,4,5\nD,4,5\n")
    result = same(path)
    assert [r.row for r in result.rejected] == [2, 3]
    disguised = tmp_path / "plain.csv"
    disguised.write_bytes(gzip.compress(b"type,time\nA,1\n"))
    assert same(disguised).events.type_names == ["A"]


def test_headerless_csv_with_names(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "A,1,5\nB,2,x\nA,3,7,extra\nA,4\n")
    result = same(path, names=["type", "time", "v"])
    assert result.events.rows.tolist() == [1, 2, 4]
    clean = csv_file(tmp_path, "A,1,5\nB,2,6\n", "clean.csv")
    assert same(clean, names=["type", "time", "v"]).events.columns["v"].kind == "int"


def test_input_errors_are_raised_by_every_reader(tmp_path: Path) -> None:
    """The whole readers raise at once, the chunked one too (arguments and header) or
    when it meets the error in the file; always with one message."""
    path = csv_file(tmp_path, "A,1\n")
    for names, message in (
        (["t", "t"], "'t' appears twice"),
        (["type", ""], "give a name for every column"),
        (["type", "ts"], r"time column 'time' not found .* columns are \[type, ts\]"),
    ):
        with pytest.raises(InputError, match=message):
            read_events(path, columns=names)
        with pytest.raises(InputError, match=message):
            iter_events(path, columns=names)
    with pytest.raises(InputError, match="chunk_rows must be at least 1"):
        iter_events(path, chunk_rows=0)
    for text_, message in (
        ('type,time,x\nA,1,"two\nlines"\nA,2,"oops\nB,3,y\nC,4,z\n', "line 4 is never closed"),
        ('type,time,x\nA,1,"a\nb",extra\nA,2,"oops\nB,3,y\n', "never closed"),
        ("type,time,x\nA,1,caf\xe9\n", None),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_bytes(text_.encode("latin-1") if message is None else text_.encode())
        message = message or "is not UTF-8 text.*iconv"
        with pytest.raises(InputError, match=message):
            read_events(bad)
        with pytest.raises(InputError, match=message):
            list(iter_events(bad, chunk_rows=1))


def test_jsonl_equals_the_naive_reader(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(
        '{"type": "A", "time": 1, "n": 3, "b": true}\n{"time": 2}\n[1]\n'
        '{"type": "B", "time": 2.5, "h": 12345678901234567890123}\n'
        '{"type": "C", "time": "2013-02-08T09:30:00Z", "n": 1.5}\n'
    )
    result = same(path)
    assert [r.row for r in result.rejected] == [2, 3]
    assert lists(result.events).times == [1, 2.5, FEB8_0930]


def test_jsonl_chunks_without_the_type_key_wait_for_one_that_has_it(tmp_path: Path) -> None:
    """Chunk by chunk, a key is a column when any line of the file has it: the lines
    before the first with a type are rejected one by one; a file without is refused."""
    lines = ['{"time": 1, "x": 1}', '{"time": 2}', '{"type": "A", "time": 3}', '{"time": 4}']
    path = jsonl_file(tmp_path, lines)
    result = same(path)
    assert [(r.row, r.reason) for r in result.rejected] == [
        (row, "no event type in column 'type'") for row in (1, 2, 4)
    ]
    assert [len(c.rejected) for c in iter_events(path, chunk_rows=1)] == [1, 1, 0, 1]
    none = jsonl_file(tmp_path, ['{"time": 1, "x": 1}', "[2]", '{"time": 3, "y": 2}'], "n.jsonl")
    for chunk_rows in (1, 2, 10):
        with pytest.raises(InputError, match=r"type column 'type' not found .*\[time, x, y\]"):
            list(iter_events(none, chunk_rows=chunk_rows))


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
    expected, rejected = naive_csv(path, ReadOptions(numeric={"Pay": ["note"]}))

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("slow path taken")

    monkeypatch.setattr(csv_reader, "python_csv_chunks", refuse)
    for name in ("column_of", "arrow_values", "assemble_columns"):
        monkeypatch.setattr(assemble, name, refuse)
    monkeypatch.setattr(text, "text_values", refuse)
    monkeypatch.setattr(EventBatch, "of", refuse)
    parsed: list[object] = []
    monkeypatch.setattr(assemble, "time_value", lambda v: parsed.append(v) or time_value(v))
    for chunks in (
        [read_events(path, numeric={"Pay": ["note"]})],
        list(iter_events(path, numeric={"Pay": ["note"]}, chunk_rows=64)),
    ):
        assert_same_events(joined(chunks), expected)
        assert [r for c in chunks for r in c.rejected] == rejected
    result = read_events(path, numeric={"Pay": ["note"]})
    kinds = {name: column.kind for name, column in result.events.columns.items()}
    assert kinds == {"driver": "int", "price": "float", "note": "text", "day": "text"}
    assert len(result.rejected) == 2 + sum(1 for i in range(300) if i % 3 == 0 and i % 5)
    assert set(parsed) == {"later"}  # every ISO time was parsed by pyarrow


def test_plain_number_bytes_agree_with_the_cell_rules() -> None:
    """plain_numbers says 'int' or 'float' only for columns whose every cell parse_cell
    reads as such (or as missing)."""
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
    for cells_ in samples:
        column = pa.chunked_array([pa.array(cells_, pa.string())])
        quick = text.plain_numbers(column)
        if quick is not None:
            got = batch.Column(*quick).python_values()
            assert typed(got) == typed([parse_cell(c) for c in cells_]), cells_
    assert text.plain_numbers(pa.chunked_array([pa.array(["1", "-2"])])) is not None
    assert text.plain_numbers(pa.chunked_array([pa.array(["1.5", "-2.0"])])) is not None
    assert text.plain_numbers(pa.chunked_array([pa.array(["1", "2.0"])])) is None
    # across chunks: empty cells, then decimals; integers, then decimals; only empty cells
    quick = text.plain_numbers(pa.chunked_array([pa.array(["", ""]), pa.array(["1.5", ""])]))
    assert quick is not None and quick[0] == "float" and quick[1].tolist()[2] == 1.5
    assert text.plain_numbers(pa.chunked_array([pa.array(["1"]), pa.array(["1.5"])])) is None
    quick = text.plain_numbers(pa.chunked_array([pa.array([""]), pa.array(["", "-7"])]))
    assert quick is not None and quick[0] == "int" and quick[1].tolist() == [0, 0, -7]


NUMERIC_TEXT = st.text(alphabet="0123456789-+.eE x\u00a0", max_size=7)
CELLS = st.one_of(
    NUMERIC_TEXT,
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", " ", "nan", "inf", "1e999", "007", "+3", ".5", "5.", "abc", "x y"]),
    st.sampled_from(["2013-02-08", " 2013-02-08T09:30:00.5Z ", "2013-02-30", "0000-01-01"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(CELLS, max_size=6), min_size=1, max_size=4), st.integers(0, 3))
def test_naive_and_fast_cell_rules_agree(pieces: list[list[str]], cut: int) -> None:
    """A column of generated cells, in several chunks (sliced ones too), as the type,
    the time and an attribute read numerically of a CSV table: the vectorised rules
    give the values and the rejected rows that values.py gives cell by cell."""
    column = pa.chunked_array([pa.array(p, pa.string()) for p in pieces], pa.string())
    if cut and len(column) > cut:
        column = column.slice(cut)
    cells_ = column.to_pylist()
    assert typed(text.text_values(column)) == typed([parse_cell(c) for c in cells_])
    n = len(cells_)
    as_type = pa.table({"type": column, "time": pa.array(["1"] * n, pa.string()), "v": column})
    as_time = pa.table({"type": pa.array(["A"] * n, pa.string()), "time": column, "v": column})
    options = ReadOptions(numeric={"A": ["v"]})
    for table in (as_type, as_time):
        got = assemble_table(table, options, source="s", csv=True)
        rows: list[Row] = []
        for i, record in enumerate(table.to_pylist()):
            values = {name: parse_cell(cell) for name, cell in record.items()}
            values["type"] = record["type"].strip() or None
            rows.append((i + 1, values, lambda record=record: record))
        events, rejected = naive(rows, ["type", "time", "v"], "s", options)
        assert_same_events(lists(got.events), events)
        assert rejects(got.rejected) == rejects(rejected)


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
            "12345678901234567890",
            "1e999",
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
def test_generated_csv_equals_the_naive_reader(
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


JSON_VALUES = st.one_of(
    st.sampled_from(
        [
            "1",
            "-2",
            "1.5",
            "1e400",
            "NaN",
            "true",
            "null",
            '" 5 "',
            '""',
            "[1]",
            '{"k": 1}',
            str(2**70),
            '"2013-02-08"',
            '"soon"',
            '"7"',
        ]
    ),  # fmt: skip
    st.integers(-(10**6), 10**6).map(str),
)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        st.one_of(
            st.dictionaries(st.sampled_from(["type", "time", "a", "b"]), JSON_VALUES),
            st.sampled_from(["[1]", "", "{bad", '"x"', "  "]),
        ),
        max_size=12,
    ),
    st.sampled_from([{}, {"numeric": {"A": ["a"]}}, {"event_type": "E"}]),
)
def test_generated_jsonl_equals_the_naive_reader(
    tmp_path: Path, lines: list[Any], options: dict[str, Any]
) -> None:
    texts = [
        line
        if isinstance(line, str)
        else "{" + ", ".join(f'"{k}": {v}' for k, v in line.items()) + "}"
        for line in lines
    ]
    path = write(tmp_path / "gen.jsonl", "\n".join(texts) + "\n")
    try:
        read_listed(path, **options)
    except InputError:
        with pytest.raises(InputError):
            naive_jsonl(path, ReadOptions(**options))
        return
    same(path, chunks=(1, 4), **options)


# ----------------------------------------------------------------------------- Parquet


def test_parquet_value_kinds(tmp_path: Path) -> None:
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
    assert lists(events).times == [FEB8_0930, FEB8_0930 + Fraction(1, 4), 1360281600]


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
    chunks = list(iter_events(path, chunk_rows=300))
    assert [len(c.events) for c in chunks] == [300, 300, 300, 100]
    assert chunks[-1].events.rows.tolist() == list(range(901, 1001))


def test_parquet_dataset_chunks(tmp_path: Path) -> None:
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
    assert lists(result.events).times == [1, 2, 3.5, 4.0]
    (rejected,) = result.rejected
    assert rejected.source == str(folder / "region=south" / "p.parquet")
    events = same(folder, event_type="Stock").events
    assert events.type_names == ["Stock"]


def test_parquet_errors_are_raised_by_every_reader(tmp_path: Path) -> None:
    corrupt = tmp_path / "bad.parquet"
    corrupt.write_bytes(b"PAR1 this is not really parquet")
    missing = parquet_file(tmp_path, pa.table({"type": ["A"], "when": [1]}), "m.parquet")
    (tmp_path / "empty").mkdir()
    twice = parquet_file(
        tmp_path,
        pa.table([pa.array(["A"]), pa.array([1]), pa.array([2])], ["type", "time", "time"]),
        "d.parquet",
    )
    for path, message in (
        (corrupt, f"cannot read {corrupt} as Parquet"),
        (missing, "time column 'time' not found"),
        (tmp_path / "empty", "holds no Parquet files"),
        (twice, rf"columns \['time'\] appear twice in {twice}; rename them"),
    ):
        with pytest.raises(InputError, match=message):
            read_events(path)
        with pytest.raises(InputError, match=message):
            list(iter_events(path))


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
    chunks = list(iter_events(path, chunk_rows=30))
    assert [c.events.rows[0] for c in chunks] == [1, 31, 61, 91]
    assert chunks[0].events.columns["v"].kind == "int"  # read by pyarrow


def test_iter_reads_a_header_only_file_as_one_empty_chunk(tmp_path: Path) -> None:
    (chunk,) = list(iter_events(csv_file(tmp_path, "type,time,x\n")))
    assert len(chunk.events) == 0 and chunk.rejected == []


def test_whitespace_is_what_python_strips() -> None:
    """The fast path strips cells with PY_WHITESPACE and classifies them after pyarrow's
    trim, as parse_cell does with str.strip(); both must be Python's whitespace."""
    spaces = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert set(text.PY_WHITESPACE) == spaces
    candidates = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    trimmed = pc.utf8_trim_whitespace(pa.array(candidates))
    arrow_spaces = {c for c, t in zip(candidates, trimmed.to_pylist(), strict=True) if not t}
    assert arrow_spaces == spaces


def test_times_of_round_trips_every_kind() -> None:
    nano, third = Fraction(1700000001123456789, 10**9), Fraction(1, 3)
    for times in (
        [1, 2],
        [1.5, 2.0],
        [1, 2.5],
        [2**60, 0.5],
        [2**70, 1],
        [],
        [-(2**63)],
        [nano, nano + Fraction(1, 10**9), 7],  # nanosecond ticks
        [Fraction(3, 2), 1],  # millisecond ticks
        [third, 1],  # no ticks: floats, and the exact times beside them
    ):
        values, whole, exact, per_second = times_of(times)
        batch = EventBatch(
            np.zeros(len(times), np.int32),
            ["A"],
            values,
            time_ints=whole,
            exact_times=exact,
            per_second=per_second,
        )
        assert typed(lists(batch).times) == typed(times)
        back = EventBatch.of(["A"] * len(times), lists(batch).times)
        assert typed(lists(back).times) == typed(times)
        picked = batch.take(np.arange(len(times))[::-1])
        assert typed(picked.time_values()) == typed(times[::-1])
    assert times_of([1, 2])[0].dtype == np.int64
    assert times_of([1, 2.5])[2] is None  # small ints beside floats: the mask suffices
    assert times_of([nano, 7])[3] == 10**9 and times_of([Fraction(3, 2), 1])[3] == 10**3
    assert times_of([third, 1])[2] == [third, 1]  # no ticks: the exact times beside floats


def test_pyarrow_iso_times_are_python_iso_times(tmp_path: Path) -> None:
    """pyarrow parses the plain shapes cell by cell: the times equal Python's only if it
    never takes a text Python refuses or reads otherwise. Plain shapes with every field
    near or past its range."""
    rng = random.Random(5)
    texts = set()
    for _ in range(20000):
        year = rng.choice(["0001", "1969", "1970", "2012", "2013", "2100", "9999", "0000"])
        text_ = f"{year}-{rng.choice(['00', '01', '02', '04', '12', '13'])}-"
        text_ += rng.choice(["00", "01", "28", "29", "30", "31", "32"])
        if rng.random() < 0.8:
            text_ += rng.choice(["T", " "]) + rng.choice(["00", "09", "23", "24", "25"])
            text_ += ":" + rng.choice(["00", "30", "59", "60"])
            if rng.random() < 0.7:
                text_ += ":" + rng.choice(["00", "59", "60", "61"])
                if rng.random() < 0.5:
                    text_ += "." + str(rng.randrange(10 ** rng.randint(1, 6)))
            if rng.random() < 0.6:
                text_ += rng.choice(
                    ["Z", "-00:00", "+05:30", "+0530", "+23:59", "+24:00", "+05:60"]
                )
        texts.add(text_)
    ordered = sorted(texts)
    path = csv_file(tmp_path, "type,time\n" + "".join(f"A,{t}\n" for t in ordered))
    parsed: list[object] = []
    with mock.patch.object(
        assemble, "time_value", side_effect=lambda v: parsed.append(v) or time_value(v)
    ):
        result = read_listed(path)
    assert 500 < len(ordered) - len(parsed) < len(ordered)  # most by pyarrow, not all
    times = iter(result.events.times)
    reasons = iter(result.rejected)
    for text_ in ordered:
        try:
            expected = time_value(text_)
        except ValueError as error:
            assert next(reasons).reason == str(error)
        else:
            assert typed([next(times)]) == typed([expected]), text_


def test_python_csv_goes_on_where_pyarrow_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An irregular row in a later chunk: read_events, like iter_events, keeps the
    chunks pyarrow read and goes on from there with Python's csv (no second read)."""
    rows = [f"A,{i},{i}" for i in range(1, 41)] + ["A,41,41,extra", "A,42"]
    path = csv_file(tmp_path, "type,time,x\n" + "\n".join(rows) + "\n")
    monkeypatch.setattr(csv_reader, "_BLOCK_BYTES", 64)  # pyarrow meets the long row late
    monkeypatch.setattr(readers, "_GATHER_ROWS", 4)
    skipped: list[int] = []
    original = csv_reader.python_csv_chunks

    def spy(*args: Any, **kwargs: Any) -> Any:
        skipped.append(kwargs.get("skip", 0))
        return original(*args, **kwargs)

    monkeypatch.setattr(csv_reader, "python_csv_chunks", spy)
    result = same(path, chunks=(4,))
    assert result.events.rows.tolist() == [*range(1, 41), 42]
    assert [r.row for r in result.rejected] == [41]
    skipped.clear()
    read_events(path)
    (skip,) = skipped
    assert 0 < skip <= 40 and skip % 4 == 0  # the rows of pyarrow's chunks, not read again
    chunks = list(iter_events(path, chunk_rows=4))
    assert chunks[0].events.columns["x"].kind == "int"  # read by pyarrow
    assert chunks[-1].events.rows.tolist() == [42]


def test_python_csv_reads_cells_as_pyarrow_does(tmp_path: Path) -> None:
    """A file with a row longer than its header is read by Python's csv, whose rows follow
    the cell rules of pyarrow's chunks: the same events and rejected rows as without it."""
    rng = random.Random(3)
    cells = ["", " ", "7", " 8 ", "+3", "-0.5", "1e999", "99999999999999999999", "nan", "x y"]
    times = [*cells, "2013-02-08T09:30:00Z", "2013-02-08 09:30", "soon", "12.25"]
    lines = ["type,time,a,b"] + [
        ",".join([rng.choice(["A", "B", " B ", ""]), rng.choice(times), *rng.sample(cells, 2)])
        for _ in range(300)
    ]
    plain = csv_file(tmp_path, "\n".join([*lines, "A,5,,"]) + "\n", "plain.csv")
    irregular = csv_file(tmp_path, "\n".join([*lines, "A,5", "A,1,2,3,x"]) + "\n", "long.csv")
    expected = read_listed(plain, numeric={"B": ["a"]})
    got = read_listed(irregular, numeric={"B": ["a"]})
    assert_same_events(got.events, expected.events, source=False)  # (a short row: missing)
    *rest, extra = got.rejected
    assert extra.row == 302 and extra.record["_extra"] == ["x"]
    assert [(r.row, r.reason, r.record) for r in rest] == [
        (r.row, r.reason, r.record) for r in expected.rejected
    ]
    assert 50 < len(rest) < 250 and len(got.events) > 50  # (rows of both kinds)


def test_gather_grows_past_its_capacity(tmp_path: Path) -> None:
    text_ = "type,time,a,b\n" + "".join(f"T{i % 4},{i},{i},{i / 2}\n" for i in range(50))
    path = csv_file(tmp_path, text_)
    gather = Gather(1)
    for chunk in iter_events(path, chunk_rows=7):
        gather.add(chunk)
    assert gather.capacity >= 50
    got = gather.result(str(path))
    check_arrays(got.events)
    assert_same_events(lists(got.events), read_listed(path).events)


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
    full = read_listed(path, numeric=numeric)
    expected = Lists(
        types=full.events.types,
        times=full.events.times,
        columns={k: v for k, v in full.events.columns.items() if k in keep | {"speed"}},
        rows=full.events.rows,
        source=full.events.source,
    )
    whole = read_events(path, numeric=numeric, attributes=keep)
    assert sorted(whole.events.columns) == ["driver", "speed"]  # numeric ones are kept
    assert_same_events(lists(whole.events), expected)
    assert rejects(whole.rejected) == rejects(full.rejected)
    assert [r.record for r in whole.rejected] == [r.record for r in full.rejected]
    assert whole.rejected[0].record["note"] == "y"
    chunks = list(iter_events(path, numeric=numeric, attributes=keep, chunk_rows=1))
    assert all(sorted(c.events.columns) == ["driver", "speed"] for c in chunks)
    assert [r for c in chunks for r in c.rejected] == whole.rejected


def test_attributes_apply_on_every_path(tmp_path: Path) -> None:
    """JSON Lines, a CSV file pyarrow cannot read, Parquet: the same columns kept."""
    rows = [{"type": "A", "time": 1, "g": 1, "x": 2}, {"type": "A", "time": 2, "g": 1, "x": 3}]
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text(
        "".join(f'{{"type": "A", "time": {r["time"]}, "g": 1, "x": 2}}\n' for r in rows)
    )
    ragged = tmp_path / "r.csv"
    ragged.write_text("type,time,g,x\nA,1,1,2\nA,2,1,3,extra\n")
    parquet = parquet_file(tmp_path, pa.table({"type": ["A"], "time": [1], "g": [1], "x": [2]}))
    for path in (jsonl, ragged, parquet):
        assert list(read_events(path, attributes=["g"]).events.columns) == ["g"], path
        assert all(list(c.events.columns) == ["g"] for c in iter_events(path, attributes=["g"])), (
            path
        )


# ----------------------------------------------------------------------------- basics


def test_csv_basic_columns_rows_and_types(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,price,name\nA,1,10,x\nB,2,2.5,y\n")
    result = read_listed(path)
    events = result.events
    assert result.rejected == []
    assert events.types == ["A", "B"]
    assert events.times == [1, 2]
    assert [type(t) for t in events.times] == [int, int]
    assert events.columns == {"price": [10, 2.5], "name": ["x", "y"]}
    assert "type" not in events.columns and "time" not in events.columns
    assert events.rows == [1, 2]
    assert events.source == str(path)
    assert len(events) == 2


def test_attrs_leave_out_missing_values(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,a,b\nA,1,,7\n")
    events = read_listed(path).events
    assert events.columns == {"a": [None], "b": [7]}
    assert events.attrs(0) == {"b": 7}


def test_custom_type_and_time_columns(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "kind,ts,type\nA,5,t\n")
    events = read_listed(path, type_col="kind", time_col="ts").events
    assert events.types == ["A"] and events.times == [5]
    assert events.columns == {"type": ["t"]}


def test_event_batch_checks_lengths() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        EventBatch.of(["A"], [1, 2], {}, [1])
    with pytest.raises(ValueError, match="differ in length"):
        EventBatch.of(["A", "B"], [1, 2], {"x": [1]})
    batch = EventBatch.of(["A", "B", "A"], [1, 2.5, 3], {"x": [1, None, "w"]})
    assert batch.rows is not None and batch.rows.tolist() == [1, 2, 3]
    assert batch.type_names == ["A", "B"] and batch.types.tolist() == [0, 1, 0]
    assert batch.records() == [("A", 1, {"x": 1}), ("B", 2.5, {}), ("A", 3, {"x": "w"})]


def test_records_of_named_columns_only() -> None:
    batch = EventBatch.of(["A", "B"], [1, 2], {"x": [1, None], "y": ["u", "v"], "z": [3, 4]})
    assert batch.records({"x", "y"}) == [("A", 1, {"x": 1, "y": "u"}), ("B", 2, {"y": "v"})]
    assert batch.records(()) == [("A", 1, {}), ("B", 2, {})]
    assert list(batch.iter_records({"z"})) == [("A", 1, {"z": 3}), ("B", 2, {"z": 4})]


# ----------------------------------------------------------------------------- missing columns


def test_missing_type_column_message(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "kind,time,x\nA,1,2\n")
    with pytest.raises(InputError) as info:
        read_listed(path)
    assert str(info.value) == (
        f"type column 'type' not found in {path}; columns are [kind, time, x]; "
        "pass --type-col, or pass --event-type NAME if every row has the same type"
    )


def test_missing_type_column_message_in_every_format(tmp_path: Path) -> None:
    parquet = tmp_path / "events.parquet"
    pq.write_table(pa.table({"time": [1]}), parquet)
    jsonl = jsonl_file(tmp_path, ['{"time": 1}'])
    hint = "pass --type-col, or pass --event-type NAME if every row has the same type"
    for path in (parquet, jsonl):
        with pytest.raises(InputError, match="type column 'type' not found") as info:
            read_listed(path)
        assert str(info.value).endswith(hint)
    with pytest.raises(InputError, match="type column 'type' not found") as info:
        records_listed([{"time": 1}])
    assert str(info.value).endswith(hint)


def test_missing_time_column_message(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,ts,x\nA,1,2\n")
    with pytest.raises(InputError) as info:
        read_listed(path)
    message = str(info.value)
    assert (
        f"time column 'time' not found in {path}; columns are [type, ts, x]; pass --time-col"
        in message
    )


def test_missing_time_column_jsonl_lists_union_of_keys(tmp_path: Path) -> None:
    path = jsonl_file(tmp_path, ['{"type": "A", "ts": 1}', '{"type": "B", "ts": 2, "x": 1}'])
    with pytest.raises(InputError, match=r"columns are \[type, ts, x\]; pass --time-col"):
        read_listed(path)


def test_missing_time_column_parquet(tmp_path: Path) -> None:
    path = tmp_path / "events.parquet"
    pq.write_table(pa.table({"type": ["A"], "when": [1]}), path)
    with pytest.raises(InputError, match=r"time column 'time' not found.*\[type, when\]"):
        read_listed(path)


def test_same_type_and_time_column_is_an_error(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time\nA,1\n")
    with pytest.raises(InputError, match="both 'type'"):
        read_listed(path, time_col="type")


def test_ValueError_is_caught_by_callers_who_do_not_know_trendagg(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        read_listed(csv_file(tmp_path, "a,b\n1,2\n"))


# ----------------------------------------------------------------------------- types


def test_missing_or_empty_type_is_rejected(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time\nA,1\n,2\n   ,3\nB,4\n")
    result = read_listed(path)
    assert result.events.types == ["A", "B"]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "no event type in column 'type'"),
        (3, "no event type in column 'type'"),
    ]
    assert result.rejected[1].record == {"type": "   ", "time": "3"}


def test_type_is_always_text(tmp_path: Path) -> None:
    csv_path = csv_file(tmp_path, "type,time\n007,1\n12,2\n")
    assert read_listed(csv_path).events.types == ["007", "12"]
    json_path = jsonl_file(tmp_path, ['{"type": 7, "time": 1}', '{"type": true, "time": 1}'])
    assert read_listed(json_path).events.types == ["7", "true"]


def test_jsonl_missing_type_key_is_rejected(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path, ['{"type": "A", "time": 1}', '{"time": 2}', '{"type": null, "time": 3}']
    )
    result = read_listed(path)
    assert result.events.types == ["A"]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "no event type in column 'type'"),
        (3, "no event type in column 'type'"),
    ]


# ----------------------------------------------------------------------------- times


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2013-02-08", FEB8),
        ("2013-02-08 09:30:00", FEB8_0930),
        ("2013-02-08T09:30:00", FEB8_0930),
        ("2013-02-08T09:30:00Z", FEB8_0930),
        ("2013-02-08T09:30:00.250Z", FEB8_0930 + Fraction(1, 4)),
        ("2013-02-08T09:30:00+02:00", FEB8_0930 - 7200),
        ("2013-02-08T09:30:00.5-01:30", FEB8_0930 + 5400 + Fraction(1, 2)),
        ("2013-02-08T09:30:00.000", FEB8_0930),
        ("1970-01-01T00:00:00.123456789Z", Fraction(123456789, 10**9)),
        ("1969-12-31T23:59:59.5Z", Fraction(-1, 2)),
        ("2013-02-08T09:30:00.123456789012Z", FEB8_0930 + 0.123456789012),  # past ns: a float
    ],
)
def test_iso_times_become_epoch_seconds(tmp_path: Path, text: str, expected: object) -> None:
    path = csv_file(tmp_path, f"type,time\nA,{text}\n")
    result = read_listed(path)
    assert result.rejected == []
    (value,) = result.events.times
    assert value == expected
    assert type(value) is type(expected)


def test_numeric_times_keep_their_kind(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "type,time\nA,5\nA,1.5\nA,1e3\nA,-3\nA,8796093022207\nA,123456789012345678901234\n",
    )
    read = read_listed(path)
    times = read.events.times
    assert times == [5, 1.5, 1000.0, -3, 2**43 - 1]
    assert [type(t) for t in times] == [int, float, float, int, int]
    # from 2**43 s a time is out of range (trendagg.limits), not an event
    assert [(r.row, r.reason) for r in read.rejected] == [
        (
            6,
            "time '123456789012345678901234' is out of range (times are seconds below 2**43 in magnitude)",
        )
    ]


def test_jsonl_times_numbers_strings_and_numeric_text(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"type": "A", "time": 5}',
            '{"type": "A", "time": 2.5}',
            '{"type": "A", "time": "2013-02-08T09:30:00Z"}',
            '{"type": "A", "time": "17"}',
        ],
    )
    times = read_listed(path).events.times
    assert times == [5, 2.5, FEB8_0930, 17]
    assert [type(t) for t in times] == [int, float, int, int]


def test_bad_times_are_rejected_with_reasons(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time\nA,yesterday\nA,\nA,nan\nA,inf\nA,2013-02-30\nA,1\n")
    result = read_listed(path)
    assert result.events.times == [1]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (1, "time 'yesterday' is neither a number nor an ISO-8601 timestamp"),
        (2, "no time in column 'time'"),
        (3, "time 'nan' is not a finite number"),
        (4, "time 'inf' is not a finite number"),
        (
            5,
            "time '2013-02-30' is neither a number nor an ISO-8601 timestamp "
            "(day is out of range for month)",
        ),
    ]


def test_jsonl_nonfinite_and_missing_times_are_rejected(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"type": "A", "time": NaN}',
            '{"type": "A", "time": 1e400}',
            '{"type": "A", "time": null}',
            '{"type": "A"}',
            '{"type": "A", "time": true}',
            '{"type": "A", "time": 3}',
        ],
    )
    result = read_listed(path)
    assert result.events.times == [3]
    reasons = [r.reason for r in result.rejected]
    assert reasons[0] == "time 'nan' is not a finite number"
    assert reasons[1] == "time 'inf' is not a finite number"
    assert reasons[2] == reasons[3] == "no time in column 'time'"
    assert reasons[4] == "time 'true' is neither a number nor an ISO-8601 timestamp"


# ----------------------------------------------------------------------------- CSV values


def test_csv_mixed_column_numbers_and_strings(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path, 'type,time,v\nA,1,10\nA,2,abc\nA,3,2.5\nA,4,\nA,5,"  7 "\nA,6, hi there \n'
    )
    values = only_event_values(read_listed(path), "v")
    assert values == [10, "abc", 2.5, None, 7, "hi there"]
    assert [type(v) for v in values] == [int, str, float, type(None), int, str]


def test_csv_integer_literals(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,v\nA,1,+5\nA,2,007\nA,3,-12\nA,4,0\n")
    values = only_event_values(read_listed(path), "v")
    assert values == [5, 7, -12, 0]
    assert all(type(v) is int for v in values)


def test_csv_float_column_and_nonfinite_texts_stay_strings(tmp_path: Path) -> None:
    floats = csv_file(tmp_path, "type,time,v\nA,1,1.5\nA,2,2e3\nA,3,.5\n", "f.csv")
    assert only_event_values(read_listed(floats), "v") == [1.5, 2000.0, 0.5]
    odd = csv_file(tmp_path, "type,time,v\nA,1,1.5\nA,2,nan\nA,3,inf\nA,4,1e999\nA,5,-Infinity\n")
    assert only_event_values(read_listed(odd), "v") == [1.5, "nan", "inf", "1e999", "-Infinity"]


def test_csv_huge_ints_are_exact(tmp_path: Path) -> None:
    huge = 2**200
    beyond_str_limit = 10**5000 + 7  # more digits than int() accepts by default
    path = csv_file(
        tmp_path,
        f"type,time,h,m\nA,1,{huge},{int_text(beyond_str_limit)}\nA,2,-{huge},3\nA,3,9223372036854775808,x\n",
    )
    events = read_listed(path).events
    assert events.columns["h"] == [huge, -huge, 2**63]
    assert events.columns["m"] == [beyond_str_limit, 3, "x"]


def test_csv_all_int_column_near_int64_limits(tmp_path: Path) -> None:
    values = [2**63 - 1, -(2**63), 2**63, 10**18, -(10**18) + 1]
    text = "".join(f"A,{i},{v}\n" for i, v in enumerate(values))
    path = csv_file(tmp_path, "type,time,v\n" + text)
    assert only_event_values(read_listed(path), "v") == values


def test_csv_quoted_cells_with_commas_and_newlines(tmp_path: Path) -> None:
    path = csv_file(tmp_path, 'type,time,note\nA,1,"a, b"\nA,2,"two\nlines"\nA,3,"say ""hi"""\n')
    assert only_event_values(read_listed(path), "note") == ["a, b", "two\nlines", 'say "hi"']


def test_csv_extra_cells_rejected_fewer_cells_missing(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,a,b\nA,1,x,y\nB,2,x,y,z,w\nC,3\n\nD,4,q,r\n")
    result = read_listed(path)
    events = result.events
    assert events.types == ["A", "C", "D"]
    assert events.rows == [1, 3, 4]
    assert events.columns == {"a": ["x", None, "q"], "b": ["y", None, "r"]}
    (rejected,) = result.rejected
    assert rejected.row == 2
    assert rejected.reason == (
        "row has 6 cells but the header has 4 columns; quote cells that contain commas"
    )
    assert rejected.record == {"type": "B", "time": "2", "a": "x", "b": "y", "_extra": ["z", "w"]}


def test_csv_row_numbers_count_data_rows(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time\nA,1\nA,bad\nA,3\nA,also bad\n")
    result = read_listed(path)
    assert result.events.rows == [1, 3]
    assert [r.row for r in result.rejected] == [2, 4]


def test_csv_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_bytes("\ufefftype,time,x\r\nA,1,2\r\n".encode())
    events = read_listed(path).events
    assert events.types == ["A"] and events.columns == {"x": [2]}


def test_csv_header_only_is_empty_but_checked(tmp_path: Path) -> None:
    assert len(read_listed(csv_file(tmp_path, "type,time,x\n")).events) == 0
    with pytest.raises(InputError, match="--time-col"):
        read_listed(csv_file(tmp_path, "type,x\n", "other.csv"))


def test_empty_csv_is_an_input_error(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "")
    with pytest.raises(InputError, match=r"is empty; a CSV event file needs a header row") as info:
        read_listed(path)
    assert str(path) in str(info.value)


def test_duplicate_csv_header_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="column 'x' appears twice"):
        read_listed(csv_file(tmp_path, "type,time,x,x\nA,1,2,3\n"))


def test_csv_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_bytes(b"type,time,x\nA,1,caf\xe9\n")
    with pytest.raises(InputError, match="is not UTF-8 text.*iconv"):
        read_listed(path)


def test_rejected_csv_record_keeps_raw_text(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,x\nA, soon , 12 \n")
    (rejected,) = read_listed(path).rejected
    assert rejected.record == {"type": "A", "time": " soon ", "x": " 12 "}
    assert rejected.source == str(path)


cells = st.one_of(
    st.integers(min_value=-(2**130), max_value=2**130).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet=" ab1.e+-,\"'\n", max_size=6),
    st.sampled_from(["", " ", "nan", "inf", "1e999", "007", "+3", ".5", "5.", "1_000"]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(cells, cells), min_size=1, max_size=12))
def test_csv_vectorised_conversion_equals_cell_rules(
    tmp_path: Path, table: list[tuple[str, str]]
) -> None:
    """The vectorised reader and parse_cell agree on every cell; nothing is lost."""
    path = tmp_path / "prop.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["type", "time", "a", "b"])
        for i, (a, b) in enumerate(table):
            writer.writerow(["T", i, a, b])
    fast = read_listed(path)
    assert fast.rejected == []
    assert len(fast.events) == len(table)
    for column, index in (("a", 0), ("b", 1)):
        expected = [parse_cell(row[index]) for row in table]
        got = fast.events.columns[column]
        assert got == expected
        assert [type(v) for v in got] == [type(v) for v in expected]


# ----------------------------------------------------------------------------- numeric requirement


def test_numeric_attributes_reject_text_for_the_listed_types(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "type,time,price,qty\nB,1,n/a,1\nA,2,n/a,1\nB,3,,1\nB,4,12.5,1\nB,5,3,x\nB,6,true,2\n",
    )
    result = read_listed(path, numeric={"B": {"price"}})
    assert result.events.types == ["A", "B", "B", "B"]
    assert result.events.columns["price"] == ["n/a", None, 12.5, 3]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (1, "attribute 'price' is 'n/a', not a number (the queries read it numerically)"),
        (6, "attribute 'price' is 'true', not a number (the queries read it numerically)"),
    ]


def test_numeric_requirement_in_jsonl_rejects_booleans_and_nested(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"type": "B", "time": 1, "price": true}',
            '{"type": "B", "time": 2, "price": [1]}',
            '{"type": "B", "time": 3, "price": 4}',
            '{"type": "B", "time": 4}',
        ],
    )
    result = read_listed(path, numeric={"B": ["price"]})
    assert result.events.times == [3, 4]
    assert [r.reason for r in result.rejected] == [
        "attribute 'price' is 'true', not a number (the queries read it numerically)",
        "attribute 'price' is '[1]', not a number (the queries read it numerically)",
    ]


# ----------------------------------------------------------------------------- JSON Lines


def test_jsonl_values(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"type": "A", "time": 1, "n": 3, "f": 1.5, "s": " x ", "b": true, '
            '"o": {"k": [1, 2]}, "z": null}',
            '{"type": "A", "time": 2, "b": false, "extra": "e"}',
        ],
    )
    events = read_listed(path).events
    assert events.columns == {
        "n": [3, None],
        "f": [1.5, None],
        "s": [" x ", None],
        "b": ["true", "false"],
        "o": ['{"k":[1,2]}', None],
        "z": [None, None],
        "extra": [None, "e"],
    }


def test_jsonl_huge_ints_are_exact(tmp_path: Path) -> None:
    huge = 2**300
    beyond_str_limit = -(10**6000) - 1
    path = jsonl_file(
        tmp_path,
        [
            json.dumps({"type": "A", "time": 1, "h": huge}),
            '{"type": "A", "time": 2, "h": ' + int_text(beyond_str_limit) + "}",
        ],
    )
    assert read_listed(path).events.columns["h"] == [huge, beyond_str_limit]


def test_jsonl_invalid_lines_and_blank_lines_keep_line_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path / "events.jsonl",
        '{"type": "A", "time": 1}\n\n   \n  {"type": "A", "time": 2,}\n[1, 2]\n"text"\n'
        '{"type": "A", "time": 7}\n',
    )
    result = read_listed(path)
    assert result.events.rows == [1, 7]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (4, "invalid JSON at column 27: Expecting property name enclosed in double quotes"),
        (5, "line is an array, not an object"),
        (6, "line is a string, not an object"),
    ]
    assert result.rejected[0].record == {"_text": '  {"type": "A", "time": 2,}'}


def test_jsonl_not_utf8_line_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"type": "A", "time": 1}\n{"type": "caf\xe9", "time": 2}\n')
    result = read_listed(path)
    assert result.events.types == ["A"]
    (rejected,) = result.rejected
    assert rejected.row == 2 and rejected.reason.startswith("line is not UTF-8 text")


def test_json_array_file_is_an_input_error(tmp_path: Path) -> None:
    path = write(tmp_path / "events.json", '[\n{"type": "A", "time": 1}\n]\n')
    with pytest.raises(InputError, match=r"one JSON array, not JSON Lines.*jq -c"):
        read_listed(path)


def test_empty_jsonl_gives_no_events(tmp_path: Path) -> None:
    result = read_listed(write(tmp_path / "e.ndjson", "\n\n"))
    assert len(result.events) == 0 and result.rejected == []


# ----------------------------------------------------------------------------- gzip, formats, files


def test_gzipped_csv_and_jsonl(tmp_path: Path) -> None:
    csv_gz = tmp_path / "events.csv.gz"
    with gzip.open(csv_gz, "wt", encoding="utf-8") as handle:
        handle.write("type,time,x\nA,1,2\nB,oops,3\nC,3,4,5\n")
    result = read_listed(csv_gz)
    assert result.events.types == ["A"]
    assert [r.row for r in result.rejected] == [2, 3]
    jsonl_gz = tmp_path / "events.jsonl.gz"
    with gzip.open(jsonl_gz, "wt", encoding="utf-8") as handle:
        handle.write('{"type": "A", "time": 1, "x": 12345678901234567890123}\n{bad\n')
    result = read_listed(jsonl_gz)
    assert result.events.columns == {"x": [12345678901234567890123]}
    assert result.rejected[0].row == 2


def test_gzip_detected_from_content(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_bytes(gzip.compress(b"type,time\nA,1\n"))
    assert read_listed(path).events.types == ["A"]


@pytest.mark.parametrize(
    ("name", "fmt"), [("e.ndjson", None), ("e.json", None), ("e.txt", "jsonl"), ("e.JSONL", None)]
)
def test_format_from_extension_or_argument(tmp_path: Path, name: str, fmt: str | None) -> None:
    path = write(tmp_path / name, '{"type": "A", "time": 1}\n')
    assert read_listed(path, fmt=fmt).events.types == ["A"]


def test_unknown_extension_and_format(tmp_path: Path) -> None:
    path = write(tmp_path / "events.txt", "type,time\nA,1\n")
    with pytest.raises(InputError, match=r"cannot tell the format of .*events\.txt.*fmt="):
        read_listed(path)
    assert read_listed(path, fmt="csv").events.types == ["A"]
    with pytest.raises(InputError, match="unknown event format 'xls'"):
        read_listed(path, fmt="xls")


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "nope.csv"
    with pytest.raises(InputError, match=r"nope\.csv' does not exist; check the path"):
        read_listed(path)


def test_folder_with_text_format_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="only Parquet datasets"):
        read_listed(tmp_path, fmt="csv")


# ----------------------------------------------------------------------------- Parquet


def test_parquet_value_types(tmp_path: Path) -> None:
    path = tmp_path / "events.parquet"
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
            "f": pa.array([1.5, math.nan, math.inf], pa.float32()),
            "s": pa.array(["x", None, ""]),
            "b": pa.array([True, False, None]),
            "d": pa.array([Decimal("12.00"), Decimal("0.25"), None], pa.decimal128(10, 2)),
            "day": pa.array([dt.date(2013, 2, 8), None, dt.date(1970, 1, 2)], pa.date32()),
            "naive": pa.array(
                [dt.datetime(1970, 1, 1, 0, 0, 1, 500000), None, None], pa.timestamp("ms")
            ),
            "nothing": pa.nulls(3),
        }
    )
    pq.write_table(table, path)
    events = read_listed(path).events
    assert events.types == ["A", "B", "A"]
    assert events.times == [FEB8_0930, FEB8_0930 + Fraction(1, 4), FEB8]
    assert [type(t) for t in events.times] == [int, Fraction, int]
    assert events.columns == {
        "i": [1, None, -(2**63)],
        "f": [1.5, "nan", "inf"],
        "s": ["x", None, ""],
        "b": ["true", "false", None],
        "d": [12, 0.25, None],
        "day": [FEB8, None, 86400],
        "naive": [1.5, None, None],
        "nothing": [None, None, None],
    }
    assert type(events.columns["d"][0]) is int


def test_parquet_rejects_rows_with_its_row_numbers(tmp_path: Path) -> None:
    path = tmp_path / "events.parquet"
    pq.write_table(pa.table({"type": ["A", None, "B"], "time": ["1", "2", "never"]}), path)
    result = read_listed(path)
    assert result.events.times == [1]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "no event type in column 'type'"),
        (3, "time 'never' is neither a number nor an ISO-8601 timestamp"),
    ]
    assert result.rejected[1].record == {"type": "B", "time": "never"}


def test_corrupt_parquet_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "events.parquet"
    path.write_bytes(b"PAR1 this is not really parquet")
    with pytest.raises(InputError) as info:
        read_listed(path)
    message = str(info.value)
    assert f"cannot read {path} as Parquet" in message
    assert "check that it is an intact Parquet file" in message


def test_parquet_folder_is_one_dataset(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    (folder / "region=north").mkdir(parents=True)
    (folder / "region=south").mkdir()
    first = folder / "region=north" / "part-0.parquet"
    second = folder / "region=south" / "part-0.parquet"
    pq.write_table(pa.table({"type": ["A", "B"], "time": [1, 2]}), first)
    pq.write_table(pa.table({"type": ["C", "D"], "time": [3, None], "extra": [2**40, 1]}), second)
    (folder / "_SUCCESS").write_text("")
    result = read_listed(folder)
    events = result.events
    assert events.types == ["A", "B", "C"]
    assert events.times == [1, 2, 3]
    assert events.rows == [1, 2, 1]
    assert events.columns == {"region": ["north", "north", "south"], "extra": [None, None, 2**40]}
    assert events.source == str(folder)
    (rejected,) = result.rejected
    assert (rejected.source, rejected.row, rejected.reason) == (
        str(second),
        2,
        "no time in column 'time'",
    )


def test_empty_parquet_folder_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no Parquet files"):
        read_listed(tmp_path / "empty")


# ----------------------------------------------------------------------------- records


def test_from_records_follows_json_rules() -> None:
    records = [
        {"type": "A", "time": dt.datetime(2013, 2, 8, 9, 30), "ok": True, "n": 2**100},
        {"type": "A", "time": "2013-02-08", "price": "n/a"},
        {"type": "B", "time": 1.5, "price": Decimal("2.50")},
        ["not", "a", "mapping"],
    ]
    result = records_listed(records, numeric={"A": {"price"}})  # type: ignore[arg-type]
    events = result.events
    assert events.types == ["A", "B"]
    assert events.times == [FEB8_0930, 1.5]
    assert events.rows == [1, 3]
    assert events.columns == {"ok": ["true", None], "n": [2**100, None], "price": [None, 2.5]}
    assert [(r.source, r.row, r.reason) for r in result.rejected] == [
        (
            "<records>",
            2,
            "attribute 'price' is 'n/a', not a number (the queries read it numerically)",
        ),
        ("<records>", 4, "record is an array, not an object"),
    ]


def test_rejected_row_is_frozen() -> None:
    row = RejectedRow("s", 1, "r", {})
    with pytest.raises(AttributeError):
        row.row = 2  # type: ignore[misc]


def test_exact_int_and_int_text_any_size() -> None:
    for value in (0, -1, 2**63, 10**4299, 10**4300, -(7**20000), 10**12345 + 1):
        text = int_text(value)
        assert exact_int(text) == value
        assert text.lstrip("-").isdigit() and not text.lstrip("-").startswith("0") or value == 0
    assert int_text(10**5000) == "1" + "0" * 5000


# ----------------------------------------------------------------------------- vectorised times


def iso_text(moment: dt.datetime, shape: int, zone: str) -> str:
    text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    clock = [
        "",
        f"T{moment.hour:02d}:{moment.minute:02d}",
        f" {moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}",
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{moment.microsecond:06d}",
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}",
    ][shape]
    return text + clock + (zone if clock else "")


iso_shapes = st.builds(
    iso_text,
    st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    st.integers(min_value=0, max_value=4),
    st.sampled_from(["", "Z", "+02:00", "-01:30", "+0530", "-00:00"]),
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(iso_shapes, min_size=1, max_size=20))
def test_vectorised_iso_times_equal_python_parsing(tmp_path: Path, texts: list[str]) -> None:
    """Every plain ISO shape is parsed by pyarrow, to what time_value makes of it."""
    path = csv_file(tmp_path, "type,time\n" + "".join(f"A,{t}\n" for t in texts))
    with mock.patch.object(assemble, "time_value", side_effect=AssertionError("slow path")):
        times = read_listed(path).events.times
    expected = [time_value(text) for text in texts]
    assert typed(times) == typed(expected)


def test_iso_shapes_pyarrow_cannot_match_are_parsed_by_python(tmp_path: Path) -> None:
    texts = ["2013-02-08T09:30:00.1234567891Z", "0000-01-01", "2013-02-30", "soon"]
    path = csv_file(tmp_path, "type,time\n" + "".join(f"A,{t}\n" for t in texts))
    parsed: list[object] = []
    with mock.patch.object(
        assemble, "time_value", side_effect=lambda v: parsed.append(v) or time_value(v)
    ):
        result = read_listed(path)
    assert parsed == texts  # beyond nanoseconds, year 0 (pyarrow takes it), bad dates
    assert result.events.times == [FEB8_0930 + 0.1234567891]
    assert [r.reason.split(" (")[0] for r in result.rejected] == [
        "time '0000-01-01' is neither a number nor an ISO-8601 timestamp",
        "time '2013-02-30' is neither a number nor an ISO-8601 timestamp",
        "time 'soon' is neither a number nor an ISO-8601 timestamp",
    ]


def test_many_iso_times_with_one_bad_one(tmp_path: Path) -> None:
    lines = [f"A,2013-02-08T09:30:{i:02d}.5+01:00" for i in range(50)] + ["A,2013-02-30T00:00:00"]
    path = csv_file(tmp_path, "type,time\n" + "\n".join(lines) + "\n")
    result = read_listed(path)
    assert result.events.times == [FEB8_0930 - 3600 + i + 0.5 for i in range(50)]
    (rejected,) = result.rejected
    assert rejected.row == 51 and "(day is out of range for month)" in rejected.reason


def test_unclosed_quote_is_an_input_error_not_one_giant_cell(tmp_path: Path) -> None:
    path = csv_file(tmp_path, 'type,time,x\nA,1,"two\nlines"\nA,2,"oops\nB,3,y\nC,4,z\n')
    with pytest.raises(InputError, match=r"quoted cell that starts on line 4 is never closed"):
        read_listed(path)
    extra = csv_file(tmp_path, 'type,time,x\nA,1,"a\nb",extra\nA,2,"oops\nB,3,y\n', "e.csv")
    with pytest.raises(InputError, match="never closed"):
        read_listed(extra)  # the row-by-row reader checks too


# ----------------------------------------------------------------------------- one type for every row


def test_csv_event_type_without_type_column(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "date,open,close,volume,Name\n2013-02-08,45.07,45.08,1824755,A\n"
        "2013-02-11,,44.6,2915405,A\n",
    )
    result = read_listed(path, event_type="Stock", time_col="date")
    events = result.events
    assert result.rejected == []
    assert events.types == ["Stock", "Stock"]
    assert events.times == [FEB8, FEB8 + 3 * 86400]
    assert events.columns == {
        "open": [45.07, None],
        "close": [45.08, 44.6],
        "volume": [1824755, 2915405],
        "Name": ["A", "A"],
    }


def test_csv_event_type_makes_the_type_column_an_attribute(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,x\nA,1,2\n,2,3\n   ,3,4\n007,4,5\n")
    result = read_listed(path, event_type="E")
    assert result.rejected == []  # blank 'type' cells are missing values, not missing types
    assert result.events.types == ["E"] * 4
    assert result.events.columns == {"type": ["A", None, None, 7], "x": [2, 3, 4, 5]}
    assert result.events.rows == [1, 2, 3, 4]


def test_csv_event_type_on_the_row_by_row_reader(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,x\nA,1,2\n,2\nB,3,4,5\n007,4,5\n")
    result = read_listed(path, event_type="E")
    assert result.events.types == ["E"] * 3
    assert result.events.columns == {"type": ["A", None, 7], "x": [2, None, 5]}
    (rejected,) = result.rejected
    assert rejected.row == 3 and rejected.reason.startswith("row has 4 cells")


def test_csv_event_type_still_rejects_bad_times_and_needs_the_time_column(
    tmp_path: Path,
) -> None:
    path = csv_file(tmp_path, "date,v\n2013-02-08,1\nsoon,2\n,3\n")
    result = read_listed(path, event_type="Stock", time_col="date")
    assert result.events.times == [FEB8]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "time 'soon' is neither a number nor an ISO-8601 timestamp"),
        (3, "no time in column 'date'"),
    ]
    assert result.rejected[0].record == {"date": "soon", "v": "2"}
    with pytest.raises(InputError) as info:
        read_listed(path, event_type="Stock")
    assert str(info.value) == (
        f"time column 'time' not found in {path}; columns are [date, v]; pass --time-col"
    )


def test_event_type_ignores_type_col_even_when_it_names_the_time_column(
    tmp_path: Path,
) -> None:
    path = csv_file(tmp_path, "type,x\n5,1\n")
    result = read_listed(path, event_type="E", time_col="type")
    assert result.events.types == ["E"] and result.events.times == [5]
    assert result.events.columns == {"x": [1]}


def test_event_type_with_numeric_requirement(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "time,close\n1,12.5\n2,n/a\n3,\n")
    result = read_listed(path, event_type="Stock", numeric={"Stock": {"close"}})
    assert result.events.times == [1, 3]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "attribute 'close' is 'n/a', not a number (the queries read it numerically)")
    ]
    other = read_listed(path, event_type="Stock", numeric={"Other": {"close"}})
    assert other.rejected == [] and other.events.columns["close"] == [12.5, "n/a", None]


def test_jsonl_event_type_with_and_without_type_key(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"time": 1, "v": 2}',
            '{"type": null, "time": 2}',
            '{"type": 7, "time": 3, "v": "x"}',
            '{"type": "A", "time": 4}',
            "[1]",
        ],
    )
    result = read_listed(path, event_type="E")
    events = result.events
    assert events.types == ["E"] * 4
    assert events.times == [1, 2, 3, 4]
    assert events.columns == {"v": [2, None, "x", None], "type": [None, None, 7, "A"]}
    assert [(r.row, r.reason) for r in result.rejected] == [(5, "line is an array, not an object")]
    without = jsonl_file(tmp_path, ['{"t": 1}', '{"t": "2013-02-08"}'], "no_type.jsonl")
    events = read_listed(without, event_type="E", time_col="t").events
    assert events.types == ["E", "E"] and events.times == [1, FEB8]
    assert events.columns == {}


def test_parquet_event_type_with_and_without_type_column(tmp_path: Path) -> None:
    without = tmp_path / "prices.parquet"
    pq.write_table(
        pa.table(
            {
                "date": pa.array([dt.date(2013, 2, 8), dt.date(2013, 2, 11)], pa.date32()),
                "close": [45.08, 44.6],
                "Name": ["A", "A"],
            }
        ),
        without,
    )
    result = read_listed(without, event_type="Stock", time_col="date")
    assert result.rejected == []
    assert result.events.types == ["Stock", "Stock"]
    assert result.events.times == [FEB8, FEB8 + 3 * 86400]
    assert result.events.columns == {"close": [45.08, 44.6], "Name": ["A", "A"]}
    with_type = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"type": ["A", None], "time": [1, 2], "x": [True, False]}), with_type)
    result = read_listed(with_type, event_type="E")
    assert result.rejected == []
    assert result.events.types == ["E", "E"]
    assert result.events.columns == {"type": ["A", None], "x": ["true", "false"]}


def test_parquet_folder_event_type(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    (folder / "Name=A").mkdir(parents=True)
    (folder / "Name=B").mkdir()
    pq.write_table(pa.table({"time": [1, 2], "close": [1.5, 2.5]}), folder / "Name=A" / "p.parquet")
    pq.write_table(pa.table({"time": [3], "close": [3.5]}), folder / "Name=B" / "p.parquet")
    events = read_listed(folder, event_type="Stock").events
    assert events.types == ["Stock"] * 3
    assert events.columns == {"close": [1.5, 2.5, 3.5], "Name": ["A", "A", "B"]}


def test_from_records_event_type_with_and_without_type_key() -> None:
    records: list[object] = [
        {"time": "2013-02-08", "close": 45.08, "Name": "A"},
        {"type": None, "time": 2, "Name": "B"},
        {"type": "T", "time": 3},
        ["not", "a", "mapping"],
    ]
    result = records_listed(records, event_type="Stock")  # type: ignore[arg-type]
    events = result.events
    assert events.types == ["Stock"] * 3
    assert events.times == [FEB8, 2, 3]
    assert events.columns == {
        "close": [45.08, None, None],
        "Name": ["A", "B", None],
        "type": [None, None, "T"],
    }
    assert [(r.row, r.reason) for r in result.rejected] == [
        (4, "record is an array, not an object")
    ]
    only_times = records_listed([{"ts": 1}], event_type="Tick", time_col="ts")
    assert only_times.events.types == ["Tick"] and only_times.events.columns == {}


def test_event_type_applies_to_empty_inputs(tmp_path: Path) -> None:
    assert len(read_listed(csv_file(tmp_path, "time,x\n"), event_type="E").events) == 0
    assert len(records_listed([], event_type="E").events) == 0


@pytest.mark.parametrize("blank", ["", "   "])
def test_empty_event_type_is_an_input_error(tmp_path: Path, blank: str) -> None:
    path = csv_file(tmp_path, "type,time\nA,1\n")
    expected = (
        f"the event type given for every row must be a non-empty name, not {blank!r}; "
        "pass one such as --event-type Stock, or leave it out to read types from a column"
    )
    with pytest.raises(InputError) as info:
        read_listed(path, event_type=blank)
    assert str(info.value) == expected
    with pytest.raises(InputError) as info:
        read_listed(tmp_path / "absent.csv", event_type=blank)  # checked before the file
    assert str(info.value) == expected
    with pytest.raises(InputError) as info:
        records_listed([{"type": "A", "time": 1}], event_type=blank)
    assert str(info.value) == expected


def test_csv_without_header_takes_the_given_column_names(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "A,1,5\nB,2,x\nA,3,7,extra\nA,4\n")
    result = read_listed(path, columns=["type", "time", "v"])
    events = result.events
    # the first line is data; the long row is rejected, the short one has v missing
    assert events.types == ["A", "B", "A"] and events.times == [1, 2, 4]
    assert events.columns["v"] == [5, "x", None]
    (bad,) = result.rejected
    assert bad.row == 3 and "4 cells but the header has 3 columns" in bad.reason
    assert bad.record == {"type": "A", "time": "3", "v": "7", "_extra": ["extra"]}


def test_given_column_names_are_checked(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "A,1\n")
    with pytest.raises(InputError, match="'t' appears twice"):
        read_listed(path, columns=["t", "t"])
    with pytest.raises(InputError, match="give a name for every column"):
        read_listed(path, columns=["type", ""])
    with pytest.raises(
        InputError, match=r"time column 'time' not found .* columns are \[type, ts\]"
    ):
        read_listed(path, columns=["type", "ts"])
    with pytest.raises(InputError, match="CSV files without a header row"):
        read_listed(jsonl_file(tmp_path, ['{"type": "A", "time": 1}']), columns=["type", "time"])


@pytest.mark.parametrize("whole", [True, False])
def test_a_parquet_timestamp_beyond_pythons_dates_is_a_rejected_row(
    tmp_path: Path, whole: bool
) -> None:
    """A timestamp past year 9999 (pyarrow holds it, datetime cannot) rejects its row, and
    the rejected record shows the time as epoch seconds instead of failing the read."""
    micros = pa.array([10**6, 2 * 10**6, 9 * 10**18], pa.int64()).cast(pa.timestamp("us"))
    path = tmp_path / "far.parquet"
    pq.write_table(pa.table({"type": ["A", "B", "B"], "time": micros, "v": [1, 2, 3]}), path)
    read = read_listed(path) if whole else read_events(path)
    assert len(read.events) == 2
    [bad] = read.rejected
    assert bad.row == 3 and "out of range" in bad.reason
    assert bad.record == {"type": "B", "time": 9 * 10**12, "v": 3}

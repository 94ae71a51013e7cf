"""Writers, rejects and the terminal table: exact layouts and exact numbers."""

from __future__ import annotations

import csv
import gzip
import io
import json
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trendagg.errors import InputError
from trendagg.io import (
    RejectedRow,
    ResultRow,
    format_table,
    read_events,
    summarize_rejects,
    write_rejects,
    write_results,
)
from trendagg.io.values import int_text

EXAMPLE = ResultRow("q1", 0, 600, {"district": 3}, {"COUNT(*)": 12, "SUM(T.duration)": 480})


def jsonl_text(rows: list[ResultRow]) -> str:
    out = io.StringIO()
    write_results(rows, stream=out)
    return out.getvalue()


# ----------------------------------------------------------------------------- JSON Lines


def test_jsonl_exact_layout() -> None:
    assert jsonl_text([EXAMPLE]) == (
        '{"query": "q1", "window_start": 0, "window_end": 600, "group": {"district": 3}, '
        '"values": {"COUNT(*)": 12, "SUM(T.duration)": 480}}\n'
    )


def test_jsonl_big_ints_decimals_none_and_floats() -> None:
    row = ResultRow(
        "q",
        1.5,
        2**70,
        {},
        {
            "c": 2**300,
            "d": Decimal("12.50"),
            "e": Decimal("1E+3"),
            "n": None,
            "f": 0.1,
            "g": -2.5e-300,
        },
    )
    assert jsonl_text([row]) == (
        '{"query": "q", "window_start": 1.5, "window_end": 1180591620717411303424, "group": {}, '
        f'"values": {{"c": {2**300}, "d": 12.50, "e": 1E+3, "n": null, "f": 0.1, "g": -2.5e-300}}}}\n'
    )
    parsed = json.loads(jsonl_text([row]))
    assert parsed["values"]["c"] == 2**300


def test_jsonl_ints_beyond_the_str_limit() -> None:
    huge = 3**20000  # about 9543 digits, over CPython's default limit of 4300
    line = jsonl_text([ResultRow("q", 0, 1, {"g": "x"}, {"COUNT(*)": huge})])
    digits = line.split('"COUNT(*)": ')[1].rstrip("}\n")
    assert digits == int_text(huge)
    assert len(digits) == 9543


def test_jsonl_nonfinite_floats_are_strings_not_invalid_json() -> None:
    line = jsonl_text([ResultRow("q", 0, 1, {}, {"a": float("inf"), "b": float("nan")})])
    assert line.endswith('"values": {"a": "inf", "b": "nan"}}\n')
    json.loads(line)


def test_stdout_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert write_results([EXAMPLE, EXAMPLE]) == 2
    assert capsys.readouterr().out == jsonl_text([EXAMPLE]) * 2


# ----------------------------------------------------------------------------- CSV

ROWS = [
    ResultRow("q1", 0, 600, {"district": 3}, {"COUNT(*)": 12}),
    ResultRow(
        "q1", 600, 1200, {"district": 4, "hour": "9"}, {"COUNT(*)": 2**200, "AVG(T.x)": None}
    ),
    ResultRow("q2", 0, 60, {}, {"MAX(A.v)": 1.25, "COUNT(*)": 1}),
]


def test_csv_columns_are_unions_in_first_appearance_order() -> None:
    out = io.StringIO()
    assert write_results(ROWS, fmt="csv", stream=out) == 3
    assert out.getvalue() == (
        "query,window_start,window_end,district,hour,COUNT(*),AVG(T.x),MAX(A.v)\n"
        "q1,0,600,3,,12,,\n"
        f"q1,600,1200,4,9,{2**200},,\n"
        "q2,0,60,,,1,,1.25\n"
    )


def test_csv_name_clashes_are_prefixed() -> None:
    out = io.StringIO()
    write_results([ResultRow("q", 0, 1, {"query": "g"}, {"query": 1})], fmt="csv", stream=out)
    assert (
        out.getvalue().splitlines()[0] == "query,window_start,window_end,group.query,values.query"
    )


def test_format_follows_the_extension(tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    write_results(ROWS, path)
    assert path.read_text().startswith("query,window_start,window_end,district")
    gz = tmp_path / "out.jsonl.gz"
    write_results([EXAMPLE], gz)
    assert gzip.decompress(gz.read_bytes()).decode() == jsonl_text([EXAMPLE])


def test_unknown_result_format_and_parquet_to_stdout() -> None:
    with pytest.raises(InputError, match="unknown result format 'xml'"):
        write_results([EXAMPLE], fmt="xml", stream=io.StringIO())
    with pytest.raises(InputError, match="Parquet results need a file"):
        write_results([EXAMPLE], fmt="parquet")


def test_output_folder_must_exist(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist; create it first"):
        write_results([EXAMPLE], tmp_path / "missing" / "out.jsonl")


# ----------------------------------------------------------------------------- Parquet


def test_parquet_round_trip_keeps_huge_ints_exact(tmp_path: Path) -> None:
    path = tmp_path / "out.parquet"
    rows = [
        ResultRow("q", 0, 600, {"g": 1}, {"small": 5, "mid": 2**100, "big": 2**200, "avg": 2.5}),
        ResultRow("q", 600, 1200, {"g": "x"}, {"small": -7, "mid": 3, "big": 1, "avg": None}),
    ]
    assert write_results(rows, path) == 2
    table = pq.read_table(path)
    schema = table.schema
    assert schema.field("small").type == pa.int64()
    assert schema.field("mid").type == pa.decimal128(38, 0)
    assert schema.field("big").type == pa.string()
    assert schema.field("avg").type == pa.float64()
    assert schema.field("g").type == pa.string()  # mixed int and text
    assert schema.field("window_start").type == pa.int64()
    columns = table.to_pydict()
    assert [int(v) for v in columns["mid"]] == [2**100, 3]
    assert columns["big"] == [str(2**200), "1"]
    assert columns["small"] == [5, -7]
    assert columns["g"] == ["1", "x"]
    assert columns["avg"] == [2.5, None]


def test_parquet_decimal_float_and_overflow_columns(tmp_path: Path) -> None:
    path = tmp_path / "out.parquet"
    rows = [
        ResultRow(
            "q", 0, 1, {}, {"dec": Decimal("1.25"), "f": 1, "huge_dec": Decimal("1E+50"), "b": True}
        ),
        ResultRow("q", 0, 1, {}, {"dec": 2, "f": 0.5, "huge_dec": Decimal("1.5"), "b": False}),
        ResultRow("q", 0, 1, {}, {"dec": None, "f": 2**60 + 1, "huge_dec": None, "b": None}),
    ]
    write_results(rows, path, fmt="parquet")
    table = pq.read_table(path)
    assert table.schema.field("dec").type == pa.decimal128(38, 2)
    assert table.column("dec").to_pylist() == [Decimal("1.25"), Decimal("2.00"), None]
    # 2**60 + 1 is not a float: the column is kept as exact text
    assert table.schema.field("f").type == pa.string()
    assert table.column("f").to_pylist() == ["1", "0.5", str(2**60 + 1)]
    assert table.schema.field("huge_dec").type == pa.string()
    assert table.column("huge_dec").to_pylist() == ["1E+50", "1.5", None]
    assert table.column("b").to_pylist() == [True, False, None]


def test_parquet_decimals_of_29_to_38_digits_are_exact(tmp_path: Path) -> None:
    """decimal128(38, s) holds 38 digits: an integer of 30 digits beside a decimal, and a
    decimal of 37 digits, are written exactly (beyond the default context's 28 digits)."""
    path = tmp_path / "out.parquet"
    long = Decimal("123456789012345678901234567890123.4567")  # 37 digits, scale 4
    rows = [
        ResultRow("q", 0, 1, {}, {"mix": 10**30, "long": long}),
        ResultRow("q", 0, 1, {}, {"mix": Decimal("0.5"), "long": Decimal("1")}),
    ]
    write_results(rows, path, fmt="parquet")
    table = pq.read_table(path)
    assert table.schema.field("mix").type == pa.decimal128(38, 1)
    assert table.column("mix").to_pylist() == [Decimal(10**30).scaleb(0), Decimal("0.5")]
    assert table.schema.field("long").type == pa.decimal128(38, 4)
    assert table.column("long").to_pylist() == [long, Decimal("1.0000")]


def test_parquet_absent_values_are_nulls_of_the_column_type(tmp_path: Path) -> None:
    path = tmp_path / "out.parquet"
    rows = [ResultRow("q", 0, 1, {}, {"a": 1}), ResultRow("q", 0, 1, {}, {"b": 2**100})]
    write_results(rows, path)
    table = pq.read_table(path)
    assert table.schema.field("a").type == pa.int64()
    assert table.column("a").to_pylist() == [1, None]
    assert table.schema.field("b").type == pa.decimal128(38, 0)


def test_parquet_int64_edges_stay_int64(tmp_path: Path) -> None:
    path = tmp_path / "out.parquet"
    write_results(
        [ResultRow("q", 0, 1, {}, {"c": 2**63 - 1}), ResultRow("q", 0, 1, {}, {"c": -(2**63)})],
        path,
    )
    assert pq.read_table(path).schema.field("c").type == pa.int64()
    write_results([ResultRow("q", 0, 1, {}, {"c": 2**63})], path)
    table = pq.read_table(path)
    assert table.schema.field("c").type == pa.decimal128(38, 0)
    assert int(table.column("c")[0].as_py()) == 2**63
    write_results([ResultRow("q", 0, 1, {}, {"c": 10**38})], path)
    assert pq.read_table(path).column("c").to_pylist() == [str(10**38)]


# ----------------------------------------------------------------------------- table


def test_format_table_aligns_and_abbreviates() -> None:
    text = format_table(ROWS)
    lines = text.splitlines()
    assert lines[0].split() == [
        "query",
        "window",
        "district",
        "hour",
        "COUNT(*)",
        "AVG(T.x)",
        "MAX(A.v)",
    ]
    assert set(lines[1]) <= {"-", " "}
    assert lines[2].startswith("q1     [0, 600)")
    assert "[600, 1200)" in lines[3]
    assert "160693804425...301376 (61 digits)" in lines[3]
    # AVG of nothing shows null; a value the row does not have shows blank
    assert lines[3].count("null") == 1 and lines[3].endswith("null")
    assert "null" not in lines[2] and lines[4].endswith("1.25")
    assert len({len(line) for line in lines[:2]}) == 1
    # numbers right-aligned: the COUNT(*) column ends at the same place on every row
    end = lines[0].index("COUNT(*)") + len("COUNT(*)")
    assert lines[2][end - 2 : end] == "12"
    assert lines[4][end - 1 : end] == "1"


def test_format_table_limits_rows() -> None:
    text = format_table(ROWS, max_rows=1)
    assert text.splitlines()[-1] == "... 2 more rows (3 in all)"
    assert len(text.splitlines()) == 4
    assert format_table([]) == "(no results)"


# ----------------------------------------------------------------------------- rejects

REJECTED = [
    RejectedRow("e.csv", 2, "no time in column 'time'", {"type": "A", "time": ""}),
    RejectedRow("e.csv", 5, "no time in column 'time'", {"type": "B", "time": "", "x": "1"}),
    RejectedRow("e.jsonl", 3, "invalid JSON at column 2: oops", {"_text": "{x", "n": 2**100}),
]


def test_write_rejects_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "rejects.jsonl"
    assert write_rejects(REJECTED, path) == 3
    lines = path.read_text().splitlines()
    assert lines[0] == (
        '{"source": "e.csv", "row": 2, "reason": "no time in column \'time\'", '
        '"record": {"type": "A", "time": ""}}'
    )
    assert json.loads(lines[2])["record"] == {"_text": "{x", "n": 2**100}


def test_write_rejects_csv(tmp_path: Path) -> None:
    path = tmp_path / "rejects.csv"
    write_rejects(REJECTED, path)
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        ["_source", "_row", "_reason", "type", "time", "x", "_text", "n"],
        ["e.csv", "2", "no time in column 'time'", "A", "", "", "", ""],
        ["e.csv", "5", "no time in column 'time'", "B", "", "1", "", ""],
        ["e.jsonl", "3", "invalid JSON at column 2: oops", "", "", "", "{x", str(2**100)],
    ]


def test_rejects_from_a_real_read_round_trip(tmp_path: Path) -> None:
    events = tmp_path / "events.csv"
    events.write_text("type,time,a,b\nA,1,x,y\nB,2,x,y,z\nC,never,1,2\n")
    result = read_events(events)
    out = tmp_path / "rejects.jsonl"
    write_rejects(result.rejected, out)
    entries = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["row"], e["record"]) for e in entries] == [
        (2, {"type": "B", "time": "2", "a": "x", "b": "y", "_extra": ["z"]}),
        (3, {"type": "C", "time": "never", "a": "1", "b": "2"}),
    ]


def test_summarize_rejects() -> None:
    assert summarize_rejects([]) == "no rows rejected"
    assert summarize_rejects(REJECTED) == (
        "3 rows rejected: 2 x no time in column 'time' (first: e.csv row 2), "
        "1 x invalid JSON at column 2: oops (first: e.jsonl row 3)"
    )
    assert summarize_rejects(REJECTED[:1]).startswith("1 row rejected: 1 x no time")
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    many = [RejectedRow("f", i, f"reason {word}", {}) for i, word in enumerate(words)]
    assert summarize_rejects(many).endswith("3 more for 3 other reasons")
    # reasons that differ only in the values they quote or count are one kind
    times = [RejectedRow("f", i, f"time 'noon{i}' is not a time", {}) for i in range(1, 711)]
    cells = [RejectedRow("f", 711, "row has 5 cells but the header has 3 columns", {})]
    assert summarize_rejects(times + cells) == (
        "711 rows rejected: 710 x time 'noon1' is not a time (first: f row 1), "
        "1 x row has 5 cells but the header has 3 columns (first: f row 711)"
    )


def test_importing_the_io_package_does_not_import_pyarrow() -> None:
    import subprocess
    import sys

    code = "import sys, trendagg.io; print('pyarrow' in sys.modules)"
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": src},
    )
    assert done.stdout.strip() == "False"

"""Bad input and faults, second round (issue #38): one rule for every reader and engine,
messages of a readable size, and API misuse answered in words."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_bad_input import cli

from trendagg.io.batch import EventBatch
from trendagg.io.jsonl import parse_json_line

PRICES = "RETURN MIN(B.p), MAX(B.p) PATTERN SEQ(A, B+) WITHIN 100 s\n"
ROWS = [
    {"type": "A", "time": 1},
    {"type": "B", "time": 2, "p": 5},
    {"type": "B", "time": 3, "p": "n/a"},
    {"type": "B", "time": 4, "p": 2.5},
]


def _event_files(tmp_path: Path) -> dict[str, Path]:
    """ROWS as CSV and as JSON Lines."""
    csv = tmp_path / "e.csv"
    csv.write_text("type,time,p\nA,1,\nB,2,5\nB,3,n/a\nB,4,2.5\n")
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return {"csv": csv, "jsonl": jsonl}


def _rejects(path: Path) -> list[Any]:
    """The entries of a rejects file (JSON Lines; integers of any size)."""
    return [parse_json_line(line) for line in path.read_text().splitlines()]


def _values(tmp_path: Path, query: str, events: Path, *flags: str) -> tuple[int, Any, str]:
    (tmp_path / "q.tq").write_text(query)
    code, out, err = cli("run", str(tmp_path / "q.tq"), str(events), *flags)
    return code, [json.loads(line)["values"] for line in out.splitlines()], err


# ----------------------------------------------------------------------------- item 4


@pytest.mark.parametrize("engine", ["local", "python"])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_min_max_over_a_word_among_numbers_is_one_answer(
    tmp_path: Path, engine: str, fmt: str
) -> None:
    """Numbers rank before words: from a file, from records and from an EventBatch."""
    import trendagg

    expected = {"MIN(B.p)": 2.5, "MAX(B.p)": "n/a"}
    code, values, err = _values(tmp_path, PRICES, _event_files(tmp_path)[fmt], "--engine", engine)
    assert code == 0 and "(0 rejected)" in err, err
    assert values == [expected]
    assert [r.values for r in trendagg.run(PRICES, ROWS)] == [expected]
    batch = EventBatch.of(
        [r["type"] for r in ROWS], [r["time"] for r in ROWS], {"p": [r.get("p") for r in ROWS]}
    )
    assert [r.values for r in trendagg.run(PRICES, batch)] == [expected]


def test_a_sum_over_a_word_still_rejects_its_row_and_max_keeps_the_others(
    tmp_path: Path,
) -> None:
    """SUM and AVG read numbers: the word's row is rejected (and written out), and MAX,
    which ranks words after numbers, sees the other rows of that attribute only."""
    rejects = tmp_path / "bad.jsonl"
    for aggregate in ("SUM", "AVG"):
        query = f"RETURN {aggregate}(B.p), MAX(B.p), MIN(B.q) PATTERN SEQ(A, B+) WITHIN 100 s\n"
        events = tmp_path / "e.csv"
        events.write_text("type,time,p,q\nA,1,,\nB,2,5,x\nB,3,n/a,y\nB,4,2.5,z\n")
        code, values, err = _values(
            tmp_path, query, events, "--engine", "local", "--rejects", str(rejects)
        )
        assert code == 0 and "1 row rejected" in err
        assert values[0]["MAX(B.p)"] == 5 and values[0]["MIN(B.q)"] == "x"
        [entry] = _rejects(rejects)
        assert entry["row"] == 3 and "attribute 'p' is 'n/a', not a number" in entry["reason"]


@pytest.mark.spark
def test_spark_ranks_a_word_among_numbers_as_the_local_engine(spark: Any, tmp_path: Path) -> None:
    expected = [{"MIN(B.p)": 2.5, "MAX(B.p)": "n/a"}]
    for events in _event_files(tmp_path).values():
        code, values, err = _values(tmp_path, PRICES, events, "--engine", "spark")
        assert code == 0 and "(0 rejected)" in err, err
        assert values == expected


# ----------------------------------------------------------------------------- items 14, 16


@pytest.mark.parametrize("digits", [4000, 5000, 6000])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_time_of_thousands_of_digits_is_out_of_range_in_a_short_reason(
    tmp_path: Path, digits: int, fmt: str
) -> None:
    huge = "7" * digits
    events = tmp_path / f"e.{fmt}"
    if fmt == "csv":
        events.write_text(f"type,time\nA,1\nB,{huge}\nB,3\n")
    else:
        events.write_text(
            f'{{"type":"A","time":1}}\n{{"type":"B","time":{huge}}}\n{{"type":"B","time":3}}\n'
        )
    rejects = tmp_path / "bad.jsonl"
    code, values, err = _values(
        tmp_path, PRICES.replace("MIN(B.p), MAX(B.p)", "COUNT(*)"), events,
        "--engine", "local", "--rejects", str(rejects),
    )  # fmt: skip
    assert code == 0 and values == [{"COUNT(*)": 1}]
    [entry] = _rejects(rejects)
    assert entry["row"] == 2
    assert entry["reason"] == (
        f"time '{'7' * 40}... ({digits:,} characters)' is out of range "
        "(times are seconds below 2**43 in magnitude)"
    )
    assert "set_int_max_str_digits" not in err and len(err) < 1000


def test_messages_quote_a_long_input_text_shortened(tmp_path: Path) -> None:
    """A 1 MB attribute name in a query, a 1 MB column name, a 6,000-digit cell: each
    message quotes the first 40 characters and the length."""
    name = "a" * 2**20
    (tmp_path / "e.csv").write_text("type,time,x\nA,1,1\nB,2,1\n")
    code, _, err = _values(
        tmp_path, f"RETURN SUM(B.{name}) PATTERN SEQ(A, B+) WITHIN 100 s\n",
        tmp_path / "e.csv", "--engine", "local",
    )  # fmt: skip
    assert code == 0
    assert f"reads attribute '{'a' * 40}... (1,048,576 characters)', which no input row" in err
    assert len(err) < 1000
    (tmp_path / "wide.csv").write_text(f"type,{name}\nA,1\n")
    code, _, err = _values(tmp_path, PRICES, tmp_path / "wide.csv", "--engine", "local")
    assert code == 2 and f"columns are [type, {'a' * 40}... (1,048,576 characters)]" in err
    assert len(err) < 1000
    number = "9" * 6000
    (tmp_path / "n.csv").write_text(f"type,time,p\nA,1,\nB,2,{number}x\nB,3,1\n")
    code, _, err = _values(
        tmp_path, "RETURN SUM(B.p) PATTERN SEQ(A, B+) WITHIN 100 s\n", tmp_path / "n.csv",
        "--engine", "local",
    )  # fmt: skip
    assert code == 0 and f"attribute 'p' is '{'9' * 40}... (6,001 characters)'" in err
    assert len(err) < 1000


# ----------------------------------------------------------------------------- item 6


def _big_cell(tmp_path: Path, engine: str, irregular: bool) -> None:
    cell = "y" * (5 << 20)
    extra = "B,4,z,surplus\n" if irregular else ""
    events = tmp_path / "e.csv"
    events.write_text("type,time,s\nA,1,a\n" + "B,2,b\n" * 3 + f'B,3,"{cell}"\n' + extra)
    query = "RETURN COUNT(*), MAX(B.s) AS top PATTERN SEQ(A, B+) WITHIN 100 s\n"
    code, values, err = _values(tmp_path, query, events, "--engine", engine)
    assert code == 0, err[:500]
    assert len(values) == 1 and values[0]["COUNT(*)"] == 7  # (one B of time 2 per trend)
    assert values[0]["top"] == cell
    assert ("1 row rejected" in err) == irregular


@pytest.mark.parametrize("irregular", [False, True])
def test_a_csv_cell_of_5_mb_is_read(tmp_path: Path, irregular: bool) -> None:
    """pyarrow reads a row within one block (a larger one once a row straddles two);
    Python's csv, which reads files whose rows do not all fit the header, takes any
    cell length too."""
    _big_cell(tmp_path, "local", irregular)


@pytest.mark.spark
def test_spark_reads_a_csv_cell_of_5_mb_as_the_local_engine(spark: Any, tmp_path: Path) -> None:
    for irregular in (False, True):
        _big_cell(tmp_path, "spark", irregular)


# ----------------------------------------------------------------------------- item 12

DUPLICATES = [
    '{"type": "A", "time": 1}',
    '{"type": "B", "time": 2, "type": "A"}',  # the last key would win: an A
    '{"type" : "B", "time" : 3, "x" : 1, "x" : 2}',  # blanks before the colons
    '{"type": "B", "time": 4, "v": {"k": 1, "k": 2}}',  # in a nested object
    '{"type":"B","time":5,"s":"a\\":b"}',  # '":' inside a string: an event
    '{"type":"B","time":6}',
]


def _run_duplicates(tmp_path: Path, engine: str) -> None:
    """DUPLICATES run on ``engine``: the three lines that name a key twice are rejected,
    counted, and written with --rejects as they were."""
    events = tmp_path / "e.jsonl"
    events.write_text("\n".join(DUPLICATES) + "\n")
    rejects = tmp_path / "bad.jsonl"
    query = PRICES.replace("MIN(B.p), MAX(B.p)", "COUNT(*)")
    code, values, err = _values(
        tmp_path, query, events, "--engine", engine, "--rejects", str(rejects)
    )
    assert code == 0 and values == [{"COUNT(*)": 3}], err  # a1 with b5, b6: 3 trends
    assert "3 rows rejected" in err
    entries = _rejects(rejects)
    assert [(e["row"], e["reason"].split(";")[0]) for e in entries] == [
        (2, "key 'type' appears twice in one object"),
        (3, "key 'x' appears twice in one object"),
        (4, "key 'k' appears twice in one object"),
    ]
    assert [e["record"]["_text"] for e in entries] == DUPLICATES[1:4]


@pytest.mark.parametrize("engine", ["local", "python"])
def test_a_json_line_naming_a_key_twice_is_rejected(tmp_path: Path, engine: str) -> None:
    _run_duplicates(tmp_path, engine)


@pytest.mark.spark
def test_spark_rejects_a_json_line_naming_a_key_twice(spark: Any, tmp_path: Path) -> None:
    _run_duplicates(tmp_path, "spark")


# ----------------------------------------------------------------------------- item 9

EVENTS_ACCEPTED = "events must be a path (CSV, JSON Lines, Parquet), an EventBatch, a pandas"


@pytest.mark.parametrize(
    ("queries", "events", "message"),
    [
        (None, ROWS, "queries must be query text (a str) or a Workload (from trendagg.parse"),
        (b"RETURN", ROWS, "queries must be query text (a str) or a Workload"),
        (PRICES, None, EVENTS_ACCEPTED),
        (PRICES, 5, EVENTS_ACCEPTED),
        (PRICES, ROWS[0], EVENTS_ACCEPTED),
    ],
)
def test_api_misuse_names_the_argument_and_what_it_takes(
    queries: Any, events: Any, message: str
) -> None:
    import trendagg

    with pytest.raises(trendagg.ArgumentError, match=re.escape(message)) as caught:
        trendagg.run(queries, events)
    assert isinstance(caught.value, TypeError)
    wrong = queries if message.startswith("queries") else events
    given = "None" if wrong is None else type(wrong).__name__
    assert str(caught.value).endswith(f"; it is {given}")


def test_a_pandas_frame_or_an_arrow_table_runs_as_its_records() -> None:
    import pyarrow as pa

    import trendagg

    pd = pytest.importorskip("pandas")
    query = (
        "RETURN COUNT(*), SUM(B.v), AVG(B.v), MIN(B.s), MAX(B.w) PATTERN SEQ(A, B+) "
        "WHERE [g] GROUP-BY g WITHIN 100 s"
    )
    rows = [
        {"type": "A", "time": 1, "v": 1, "s": "x", "w": 0.5, "g": "k"},
        {"type": "B", "time": 2, "v": 2, "s": "y", "w": 2.5, "g": "k"},
        {"type": "B", "time": 3, "v": 3, "s": "z", "w": 1.5, "g": "k"},
        {"type": "A", "time": 4, "v": 4, "s": "z", "w": 9.5, "g": "m"},
        {"type": "B", "time": 5, "v": 5, "s": "a", "w": 3.5, "g": "m"},
    ]
    expected = trendagg.run(query, rows)
    assert expected and expected[0].values["COUNT(*)"] == 3
    frame = pd.DataFrame(rows, index=[10, 20, 30, 40, 50])
    assert trendagg.run(query, frame) == expected
    assert trendagg.run(query, pa.Table.from_pylist(rows)) == expected
    # numbers and words in one column (no Arrow type holds both), pandas' NaN missing
    mixed = [{"type": "A", "time": 1}, {"type": "B", "time": 2, "p": 5}]
    mixed += [{"type": "B", "time": 3, "p": "n/a"}]
    assert trendagg.run(PRICES, pd.DataFrame(mixed)) == trendagg.run(PRICES, mixed)


def test_the_spark_api_names_a_frame_that_is_no_spark_frame() -> None:
    pytest.importorskip("pyspark")
    pd = pytest.importorskip("pandas")
    from trendagg.errors import ArgumentError
    from trendagg.spark import aggregate_trends

    with pytest.raises(ArgumentError, match=r"df must be a Spark DataFrame .* it is pandas\."):
        aggregate_trends(pd.DataFrame(ROWS), PRICES)


@pytest.mark.spark
def test_the_spark_api_names_a_workload_that_is_no_query(spark: Any) -> None:
    from trendagg.errors import ArgumentError
    from trendagg.spark import aggregate_trends

    df = spark.createDataFrame([("A", 1)], "type string, time long")
    with pytest.raises(ArgumentError, match=r"workload must be query text .*; it is None"):
        aggregate_trends(df, None)


# ----------------------------------------------------------------------------- item 8


def _chain(terms: int, *, wrapped: int = 0) -> str:
    """A query whose local and NEXT conditions are chains of ``terms`` ``+ 1`` (the local
    one inside ``wrapped`` levels of parenthesised ORs)."""
    local = "A.x" + " + 1" * terms + " > 1"
    for _ in range(wrapped):
        local = f"({local} OR A.x < 0)"
    edge = "B.x" + " + 0" * terms + " <= NEXT(B).x"
    return f"RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE {local} AND {edge} WITHIN 10 s\n"


def test_a_flat_chain_of_500_terms_is_refused_and_one_at_the_limit_runs(tmp_path: Path) -> None:
    """500 terms: refused (exit 2) at the first operator beyond the limit, by check and
    run. MAX_ARITHMETIC operations, in local and NEXT conditions, inside MAX_NESTING - 1
    parenthesised ORs: the parser, printer, validation, plan, both engines and the
    compiled kernels' expressions all take them."""
    from trendagg.language import parse, to_text
    from trendagg.language.parser import MAX_ARITHMETIC, MAX_NESTING

    (tmp_path / "e.csv").write_text("type,time,x\nA,1,5\nB,2,1\nB,3,2\nB,4,2\n")
    (tmp_path / "long.tq").write_text(_chain(500))
    for argv in (["check"], ["run", str(tmp_path / "e.csv"), "--engine", "local"]):
        code, out, err = cli(argv[0], str(tmp_path / "long.tq"), *argv[1:])
        assert code == 2 and out == "", err[-2000:]
        assert f"nests more than {MAX_ARITHMETIC} operations" in err
        # the (MAX_ARITHMETIC + 1)-th '+' of the first chain
        first = len("RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x ") + 1
        assert f"Line 1, Col {first + 4 * MAX_ARITHMETIC}." in err
        assert "Traceback" not in err and "RecursionError" not in err
    text = _chain(MAX_ARITHMETIC, wrapped=MAX_NESTING - 1)
    assert parse(to_text(parse(text))) == parse(text)
    (tmp_path / "q.tq").write_text(text)
    for argv in (
        ["check"],
        ["explain"],
        ["run", "--engine", "local"],
        ["run", "--engine", "python"],
    ):
        extra = [str(tmp_path / "e.csv")] if argv[0] == "run" else []
        code, out, err = cli(argv[0], str(tmp_path / "q.tq"), *extra, *argv[1:])
        assert code == 0, (argv, err[-2000:])
        if argv[0] == "run":  # a1 and the rising runs of b2 b3 b4 (x 1, 2, 2): 7 trends
            assert json.loads(out)["values"] == {"COUNT(*)": 7}


# ----------------------------------------------------------------------------- item 13

WRITTEN_LINES = [
    '{"type": "A", "time": 1}',
    '{"type":"B","time":"","x":NaN,"p":2.50}',
    '{"type": "B", "time": 3, "p": "n/a", "q": 1e309, "r": -Infinity}',
    '{"type": "B", "time": 4, "p": 1}',
]


def _written_inputs(tmp_path: Path) -> dict[str, Path]:
    """JSON Lines, CSV and Parquet inputs whose rejected rows hold values that no parsed
    value keeps as written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = {"jsonl": tmp_path / "e.jsonl", "csv": tmp_path / "e.csv"}
    paths["jsonl"].write_text("\n".join(WRITTEN_LINES) + "\n")
    paths["csv"].write_text("type,time,p\nA,1,\nB,,5\nB,3,x\nB,4,1\n")
    paths["parquet"] = tmp_path / "e.parquet"
    pq.write_table(
        pa.table(
            {
                "type": ["A", "B", "B"],
                "time": pa.array([1, None, 3], pa.int64()),
                "p": [None, 1.5, float("nan")],
                "blob": pa.array([b"a", b"ab", b"\xff"], pa.binary()),
            }
        ),
        paths["parquet"],
    )
    return paths


WRITTEN_JSON = {
    "jsonl": [(2, WRITTEN_LINES[1]), (3, WRITTEN_LINES[2])],
    "csv": [
        (2, '{"type": "B", "time": "", "p": "5"}'),
        (3, '{"type": "B", "time": "3", "p": "x"}'),
    ],
    "parquet": [
        (2, '{"type": "B", "time": null, "p": 1.5, "blob": "ab"}'),
        (3, '{"type": "B", "time": 3, "p": NaN, "blob": "\\\\xff"}'),
    ],
}
WRITTEN_CSV = {
    "jsonl": ["2,no,B,,NaN,2.50,,", "3,attribute,B,3,,n/a,1e309,-Infinity"],
    "csv": ["2,no,B,,5", "3,attribute,B,3,x"],
    "parquet": ["2,no,B,,1.5,ab", "3,attribute,B,3,NaN,\\xff"],
}


def _written_rejects(tmp_path: Path, events: Path, *flags: str) -> tuple[list[Any], list[str]]:
    """(row, record text) of each line of the JSON Lines rejects, and each row of the CSV
    rejects as text: row, the reason's first word, the record's cells."""
    import csv

    query = "RETURN SUM(B.p) PATTERN SEQ(A, B+) WITHIN 100 s\n"
    for name in ("bad.jsonl", "bad.csv"):
        code, _, err = _values(tmp_path, query, events, *flags, "--rejects", str(tmp_path / name))
        assert code == 0, err
    records = []
    for line in (tmp_path / "bad.jsonl").read_text().splitlines():
        fixed, record = line.split(', "record": ', 1)
        records.append((json.loads(fixed + "}")["row"], record[:-1]))
    table = list(csv.reader((tmp_path / "bad.csv").read_text().splitlines()))[1:]
    rows = [",".join([row, reason.split()[0], *cells]) for _, row, reason, *cells in table]
    return records, rows


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])  # (CSV cells are texts: see Spark's)
def test_rejected_records_hold_the_input_as_written(tmp_path: Path, fmt: str) -> None:
    records, rows = _written_rejects(tmp_path, _written_inputs(tmp_path)[fmt], "--engine", "local")
    assert records == WRITTEN_JSON[fmt]
    assert rows == WRITTEN_CSV[fmt]


@pytest.mark.spark
def test_spark_writes_rejected_records_as_the_local_engine(spark: Any, tmp_path: Path) -> None:
    for fmt, events in _written_inputs(tmp_path).items():
        local = _written_rejects(tmp_path, events, "--engine", "local")
        assert _written_rejects(tmp_path, events, "--engine", "spark") == local, fmt

"""The Spark batch pipeline equals the local engine (marked `spark`: needs PySpark and Java)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from helpers import run_text
from trendagg.language import ast, to_text
from workloads import shared_cases

pytestmark = pytest.mark.spark

SCHEMA = "type string, time long, x long, y long, g long, h string, v long"


def frame(spark: Any, events: list[dict[str, object]]) -> Any:
    cols = ["type", "time", "x", "y", "g", "h", "v"]
    return spark.createDataFrame([tuple(e.get(c) for c in cols) for e in events], SCHEMA)


def spark_rows(df: Any) -> list[tuple[object, ...]]:
    out = []
    for r in df.collect():
        d = r.asDict()
        q, ws, we = d.pop("query"), d.pop("window_start"), d.pop("window_end")
        out.append((q, ws, we, repr(sorted((k, v) for k, v in d.items() if v is not None))))
    return sorted(out)


def local_rows(rows: list[Any]) -> list[tuple[object, ...]]:
    out = []
    for r in rows:
        cells = [*r.group.items(), *((k, v) for k, v in r.values.items() if v is not None)]
        out.append((r.query, r.window_start, r.window_end, repr(sorted(cells))))
    return sorted(out)


@settings(max_examples=12, deadline=None)
@given(shared_cases(max_queries=4, max_events=14))
def test_spark_batch_equals_local_engine(
    spark: Any, case: tuple[list[ast.Query], list[dict[str, object]]]
) -> None:
    from trendagg.spark import aggregate_trends

    queries, events = case
    text = to_text(ast.Workload(tuple(queries)))
    expected = local_rows(run_text(text, events, "greta"))
    assert spark_rows(aggregate_trends(frame(spark, events), text, partitions=3)) == expected


def test_partial_groups_from_several_spark_partitions_are_combined(spark: Any) -> None:
    from trendagg.spark import aggregate_trends

    # [g] partitions the trends, GROUP-BY h groups them across partitions
    text = "RETURN h, COUNT(*), MIN(A.x), AVG(A.x) PATTERN A+ WHERE [g] GROUP-BY h WITHIN 100 s"
    events = [{"type": "A", "time": t, "x": t, "g": t % 5, "h": "p"} for t in range(20)]
    got = aggregate_trends(frame(spark, events), text, partitions=3).collect()
    assert [(r["h"], r["COUNT(*)"], r["MIN(A.x)"], r["AVG(A.x)"]) for r in got] == [
        (h, c, m, a) for h, c, m, a in [("p", 5 * 15, 0, 9.5)]
    ]


def test_integers_beyond_64_bits_survive_exactly(spark: Any) -> None:
    from trendagg.spark import aggregate_trends

    events = [{"type": "A", "time": 0}] + [{"type": "B", "time": i, "v": 1} for i in range(1, 301)]
    events += [{"type": "C", "time": 0}] + [{"type": "D", "time": i} for i in range(1, 101)]
    text = """
    big: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 1000 s;
    mid: RETURN COUNT(*) AS n PATTERN SEQ(C, D+) WITHIN 1000 s;
    """
    df = aggregate_trends(frame(spark, events), text)
    types = dict(df.dtypes)
    assert types["COUNT(*)"] == "string" and types["n"] == "decimal(38,0)"
    rows = {r["query"]: r for r in df.collect()}
    assert int(rows["big"]["COUNT(*)"]) == 2**300 - 1
    assert int(rows["big"]["SUM(B.v)"]) == 300 * 2**299
    assert int(rows["mid"]["n"]) == 2**100 - 1


def test_rejected_rows_are_counted_once_with_reasons(spark: Any) -> None:
    from trendagg.spark import trend_aggregation

    df = spark.createDataFrame(
        [("A", 1, "5"), ("A", None, "6"), (None, 3, "7"), ("A", 4, "n/a")],
        "type string, time long, v string",
    )
    text = """
    s: RETURN SUM(A.v) PATTERN A+ WITHIN 100 s;
    c: RETURN COUNT(*) PATTERN A+ WHERE [v] WITHIN 100 s;
    """
    results, rejects = trend_aggregation(df, text)
    reasons = sorted(r["reason"] for r in rejects.collect())
    assert reasons == [
        "attribute 'v' is '5', not a number (the queries read it numerically)",
        "attribute 'v' is 'n/a', not a number (the queries read it numerically)",
        "no event type in column 'type'",
        "no time in column 'time'",
    ]
    assert results.count() == 0


def test_a_missing_time_column_is_a_clear_error(spark: Any) -> None:
    from trendagg.errors import InputError
    from trendagg.spark import aggregate_trends

    df = spark.createDataFrame([("A", 1)], "type string, ts long")
    with pytest.raises(
        InputError, match=r"column 'time' not found; columns are \[type, ts\]; pass --time-col"
    ):
        aggregate_trends(df, "RETURN COUNT(*) PATTERN A+ WITHIN 1 min")


def test_spark_equals_local_on_real_sp500slice_csv(
    spark: Any, shared_data: Path, tmp_path: Path
) -> None:
    from helpers import SP500, slice_csv
    from trendagg import run
    from trendagg.spark import aggregate_trends

    path = slice_csv(
        shared_data / SP500, {"Name": {"AAPL", "IBM", "XOM", "MSFT"}}, 4 * 80, tmp_path / "s.csv"
    )
    query = (
        "RETURN Name, COUNT(*), MIN(S.close), AVG(S.close) PATTERN Stock S+ "
        "WHERE [Name] AND S.close > NEXT(S).close GROUP-BY Name WITHIN 14 days SLIDE 7 days"
    )
    df = spark.read.csv(str(path), header=True, inferSchema=True)
    got = spark_rows(aggregate_trends(df, query, event_type="Stock", time_col="date"))
    expected = local_rows(run(query, path, event_type="Stock", time_col="date"))
    assert got == expected and len(got) > 20


def test_cli_spark_engine_writes_what_the_local_engine_writes(spark: Any, tmp_path: Path) -> None:
    import io

    from trendagg.cli import main

    queries = tmp_path / "q.tq"
    queries.write_text(
        "n43: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 100 s;\n"
        "n13: RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+ WITHIN 100 s;\n"
        "s: RETURN g, COUNT(*), SUM(A.v) PATTERN A+ GROUP-BY g WITHIN 5 s SLIDE 2 s;\n"
    )
    events = tmp_path / "e.csv"
    lines = ["type,time,v,g"]
    for i, tok in enumerate(["a1", "b2", "c2", "a3", "e3", "a4", "c5", "d6", "b7", "a8", "b9"]):
        lines.append(f"{tok[0].upper()},{tok[1:]},{i},{i % 2}")
    lines += ["A,yesterday,1,0", "A,5,n/a,1"]  # a bad time; a non-number that SUM(A.v) reads
    events.write_text("\n".join(lines) + "\n")
    outputs = {}
    for engine in ("local", "spark"):
        out, err = io.StringIO(), io.StringIO()
        engine_flag = ["--engine", "local"] if engine == "local" else []  # Spark is the default
        code = main(["run", str(queries), str(events), *engine_flag], out, err)
        assert code == 0, err.getvalue()
        outputs[engine] = (out.getvalue(), err.getvalue())
    assert outputs["spark"][0] == outputs["local"][0]
    assert '"values": {"COUNT(*)": 43}' in outputs["spark"][0]
    for engine in ("local", "spark"):
        assert "2 rows rejected" in outputs[engine][1], outputs[engine][1]
        assert "not a number" in outputs[engine][1] and "ISO-8601" in outputs[engine][1]


def test_cli_spark_engine_reads_json_lines_as_the_local_engine_does(
    spark: Any, tmp_path: Path
) -> None:
    """Each line is parsed by the engine (not by Spark's schema inference): a number stays a
    number beside strings, integers beyond 64 bits stay exact, 1 and 1.0 are one partition."""
    import io

    from trendagg.cli import main

    queries = tmp_path / "q.tq"
    queries.write_text(
        "s: RETURN g, COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WHERE [g] GROUP-BY g WITHIN 100 s;\n"
    )
    events = tmp_path / "e.jsonl"
    events.write_text(
        '{"type": "A", "time": 1, "g": 1}\n'
        '{"type": "B", "time": 2, "g": 1.0, "v": 5}\n'
        "\n"
        '{"type": "B", "time": 3, "g": 1, "v": 123456789012345678901234567890}\n'
        '{"type": "B", "time": 4, "g": 1, "v": "six"}\n'
        '{"type": "B", "time": 5, "g": "1", "v": 7}\n'
        "{not json\n"
        "[1, 2]\n"
    )
    outputs = {}
    for engine in ("local", "spark"):
        out, err = io.StringIO(), io.StringIO()
        code = main(["run", str(queries), str(events), "--engine", engine], out, err)
        assert code == 0, err.getvalue()
        outputs[engine] = (out.getvalue(), err.getvalue())
    assert outputs["spark"][0] == outputs["local"][0]
    # A then B2, B3 (g 1 and 1.0 agree): 3 trends, each B in 2; B5 has g "1", a string: not in them
    assert '"COUNT(*)": 3, "SUM(B.v)": 246913578024691357802469135790' in outputs["spark"][0]
    for engine in ("local", "spark"):
        err = outputs[engine][1]
        assert "3 rows rejected" in err, err
        assert "'six', not a number" in err and "invalid JSON" in err and "an array" in err


def test_a_time_spark_cannot_order_is_rejected_not_lost(spark: Any) -> None:
    from trendagg.spark import trend_aggregation

    df = spark.createDataFrame(
        [("A", "1"), ("A", "2013-W01-2"), ("A", "3")], "type string, time string"
    )
    results, rejects = trend_aggregation(df, "RETURN COUNT(*) PATTERN A+ WITHIN 1 min")
    assert [r["COUNT(*)"] for r in results.collect()] == [3]  # A1, A3, A1 A3
    (reject,) = rejects.collect()
    assert "Spark cannot order by" in reject["reason"]
    assert '"2013-W01-2"' in reject["record"]


@pytest.mark.parametrize("header", [True, False])
def test_cli_spark_engine_rejects_long_csv_rows_as_the_local_engine_does(
    spark: Any, tmp_path: Path, header: bool
) -> None:
    """Spark drops a CSV row's cells beyond the header; trendagg keeps the row's text and
    rejects it with the CSV reader's reason. A short row keeps its absent cells missing."""
    import io
    import json

    from trendagg.cli import main

    queries = tmp_path / "q.tq"
    queries.write_text("s: RETURN COUNT(*), SUM(A.v) PATTERN A+ WITHIN 100 s;\n")
    events = tmp_path / "e.csv"
    rows = ["A,1,5", "A,2,6,oops", '"A",3,"7"', "A,4", "A,5,8"]
    events.write_text(("type,time,v\n" if header else "") + "\n".join(rows) + "\n")
    extra = [] if header else ["--columns", "type,time,v"]
    outputs = {}
    for engine in ("local", "spark"):
        out, err = io.StringIO(), io.StringIO()
        rejects = tmp_path / f"rejects-{engine}.jsonl"
        args = ["run", str(queries), str(events), "--engine", engine, "--rejects", str(rejects)]
        code = main([*args, *extra], out, err)
        assert code == 0, err.getvalue()
        outputs[engine] = out.getvalue()
        (bad,) = [json.loads(x) for x in rejects.read_text().splitlines()]
        assert bad["reason"].startswith("row has 4 cells but the header has 3 columns")
        assert bad["record"] == {"type": "A", "time": "2", "v": "6", "_extra": ["oops"]}
    assert outputs["spark"] == outputs["local"]
    # A1, A3, A4, A5 (A4 has no v: it is not bound to A, whose SUM reads v): 2^3 - 1 trends
    assert '"values": {"COUNT(*)": 7, "SUM(A.v)": 80}' in outputs["spark"]

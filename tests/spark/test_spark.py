"""The Spark batch pipeline equals the local engine (marked `spark`: needs PySpark and Java)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from helpers import run_text
from trendagg.language import ast, to_text
from workloads import gloria_cases, seq_cases, shared_cases

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


@settings(max_examples=6, deadline=None)
@given(seq_cases(max_queries=5, max_events=16))
def test_spark_batch_runs_sharon_as_the_local_engine(
    spark: Any, case: tuple[list[ast.Query], list[dict[str, object]]]
) -> None:
    """Each bucket's engine plans SHARON from its own first events: the plans may differ,
    the rows never do."""
    _planned_per_bucket(spark, case, "sharon")


def _planned_per_bucket(spark: Any, case: Any, strategy: str) -> None:
    """Spark batch (three buckets, each planning from its own first events) equals the
    local engine's GRETA."""
    from trendagg.spark import aggregate_trends

    queries, events = case
    text = to_text(ast.Workload(tuple(queries)))
    expected = local_rows(run_text(text, events, "greta"))
    got = aggregate_trends(frame(spark, events), text, strategy=strategy, partitions=3)
    assert spark_rows(got) == expected


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
    from pyspark.sql import functions as F

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
    result = aggregate_trends(df, query, event_type="Stock", time_col="date")
    # a date column: window bounds as Spark's window gives them, moments (to compare here
    # with the local engine's epoch seconds)
    assert result.schema["window_start"].dataType.typeName() == "timestamp"
    seconds = {c: F.unix_timestamp(c) for c in ("window_start", "window_end")}
    got = spark_rows(result.withColumns(seconds))
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


def test_cli_partitions_split_the_events_into_that_many_buckets(spark: Any, tmp_path: Path) -> None:
    """``--partitions`` sets the buckets (engines) of a Spark run: the rows stay the local
    engine's, one engine or five; the option is refused without Spark or below 1."""
    import io

    from trendagg.cli import main

    queries = tmp_path / "q.tq"
    queries.write_text(
        "s: RETURN COUNT(*), SUM(A.v) PATTERN SEQ(B, A+) WHERE [g] WITHIN 5 s SLIDE 2 s;\n"
        "h: RETURN g, COUNT(*) PATTERN A+ WHERE [g] GROUP-BY g WITHIN 4 s;\n"
    )
    events = tmp_path / "e.csv"
    rows = [f"{'AB'[i % 3 == 0]},{i // 2},{i},{i % 7}" for i in range(60)]
    events.write_text("type,time,v,g\n" + "\n".join(rows) + "\n")
    outputs = {}
    tracker = spark.sparkContext.statusTracker()
    engines = {}
    for flags in (["--engine", "local"], ["--partitions", "1"], ["--partitions", "5"]):
        out, err = io.StringIO(), io.StringIO()
        assert main(["run", str(queries), str(events), *flags], out, err) == 0, err.getvalue()
        outputs[flags[-1]] = out.getvalue()
        if flags[0] == "--partitions":  # the tasks of the last stage: one per bucket
            jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup()]
            info = tracker.getStageInfo(max(s for job in jobs if job for s in job.stageIds))
            engines[flags[-1]] = info.numTasks if info is not None else None
    assert outputs["1"] == outputs["local"] and outputs["5"] == outputs["local"]
    assert engines == {"1": 1, "5": 5}
    assert outputs["local"].count("\n") > 20
    for flags, why in (
        (["--engine", "local", "--partitions", "2"], "--partitions is for the Spark engine"),
        (["--partitions", "0"], "give a number of at least 1"),
    ):
        out, err = io.StringIO(), io.StringIO()
        assert main(["run", str(queries), str(events), *flags], out, err) == 2
        assert why in err.getvalue(), err.getvalue()


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


def test_a_time_only_the_engine_orders_is_an_event_as_in_the_local_engine(spark: Any) -> None:
    """The engine orders the events (Spark only moves them): a time Spark's SQL cannot
    read, an ISO week date, is an event on Spark as it is in the local engine."""
    from trendagg import run
    from trendagg.spark import trend_aggregation

    records = [("A", "1"), ("A", "2013-W01-2"), ("A", "3")]
    df = spark.createDataFrame(records, "type string, time string")
    query = "RETURN COUNT(*) PATTERN A+ WITHIN 1 min"
    results, rejects = trend_aggregation(df, query)
    assert rejects.count() == 0
    local = run(query, [{"type": t, "time": x} for t, x in records])
    assert spark_rows(results) == local_rows(local)
    assert sorted(r["COUNT(*)"] for r in results.collect()) == [1, 3]  # A1, A3, A1 A3; A2013


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


def test_each_rejected_row_is_reported_once_whichever_groups_read_it(spark: Any) -> None:
    """One pass reports the rejects: a row two query groups read is reported once,
    identical bad rows stay as many as they are, and the rows no group reads (a type no
    query uses, no type) are still checked; results and rejects are the local engine's."""
    from trendagg import run
    from trendagg.spark import trend_aggregation

    rows = [
        ("A", "1", "1", 1),
        ("B", "1e300", "1", 5),  # both groups read it: rejected once
        ("B", "1e300", "1", 5),  # the same row again: rejected again, once
        ("B", "1e300", None, 6),  # no g: only q1's group reads it
        ("Z", "4", "1", 0),  # a type no query uses: read, fine, not fed
        ("Z", "yesterday", "1", 1),  # a type no query uses, no time: rejected
        ("B", "2013-W01-2", "1", 5),  # a time only the engine reads: an event
        (None, "5", "1", 1),  # no type
        ("B", "6", "1", 7),
    ]
    df = spark.createDataFrame(rows, "type string, time string, g string, v long")
    text = (
        "q1: RETURN SUM(B.v) PATTERN SEQ(A, B+) WITHIN 10 s;\n"
        "q2: RETURN COUNT(*) PATTERN B+ WHERE [g] WITHIN 10 s"
    )
    results, rejects = trend_aggregation(df, text, partitions=3)
    bad = rejects.collect()
    assert len({r["row_id"] for r in bad}) == len(bad)  # no row twice
    records = [(json.loads(r["record"]), r["reason"]) for r in bad]
    assert sorted(record["v"] for record, _ in records) == [1, 1, 5, 5, 6]
    far = [reason for record, reason in records if record["time"] == "1e300"]
    assert len(far) == 3 and all("out of range" in reason for reason in far)
    reasons = " | ".join(reason for _, reason in records)
    assert "no event type" in reasons and "yesterday" in reasons
    names = ["type", "time", "g", "v"]
    kept = [rows[i] for i in (0, 4, 6, 8)]  # (the local reader rejects the same five)
    local = run(
        text, [{k: v for k, v in zip(names, r, strict=True) if v is not None} for r in kept]
    )
    assert spark_rows(results) == local_rows(local)
    got = sorted((r["query"], r["SUM(B.v)"], r["COUNT(*)"]) for r in results.collect())
    assert got == [("q1", 7, None), ("q2", None, 1), ("q2", None, 1)]  # B at 6; B at 2013 too


def test_rows_no_query_group_reads_are_checked_when_no_group_reads_any(spark: Any) -> None:
    from trendagg.spark import trend_aggregation

    df = spark.createDataFrame([("A", "1"), ("A", "soon"), ("A", "3")], "type string, time string")
    # --event-type C: the type column is an attribute, and no query reads C
    results, rejects = trend_aggregation(
        df, "RETURN COUNT(*) PATTERN B+ WITHIN 10 s", event_type="C"
    )
    (bad,) = rejects.collect()
    assert "soon" in bad["reason"] and json.loads(bad["record"])["time"] == "soon"
    assert results.count() == 0


TYPED = """
big: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 1000 s;
mid: RETURN COUNT(*) AS n PATTERN SEQ(C, D+) WITHIN 1000 s;
t: RETURN h, COUNT(*) AS k, AVG(E.v) PATTERN E+ WHERE [h] GROUP-BY h WITHIN 1000 s;
"""


def _typed_events() -> list[dict[str, object]]:
    events: list[dict[str, object]] = [{"type": "A", "time": 0}]
    events += [{"type": "B", "time": i, "v": 1} for i in range(1, 301)]  # 2**300 - 1 trends
    events += [{"type": "C", "time": 0}] + [{"type": "D", "time": i} for i in range(1, 101)]
    events += [{"type": "E", "time": i, "h": "x" if i % 2 else "y", "v": i} for i in range(6)]
    return events


def test_batch_types_result_columns_as_the_parquet_writer_does(spark: Any, tmp_path: Path) -> None:
    """A count past 38 digits is text, one past int64 decimal(38,0), a small one bigint,
    an average double, a group key of words text: on Spark as the local writer types them."""
    import pyarrow.parquet as pq

    from trendagg import run
    from trendagg.io.writers import write_results
    from trendagg.spark import aggregate_trends

    events = _typed_events()
    write_results(run(TYPED, events), tmp_path / "local.parquet", "parquet")
    local = pq.read_table(tmp_path / "local.parquet")
    df = aggregate_trends(frame(spark, events), TYPED, partitions=3)
    arrow = {"bigint": "int64", "double": "double", "string": "string"}
    got = {name: arrow.get(kind, kind) for name, kind in df.dtypes}
    expected = {
        f.name: str(f.type).replace("decimal128", "decimal").replace(", ", ",")
        for f in local.schema
    }
    assert got == expected
    assert got["COUNT(*)"] == "string" and got["n"] == "decimal(38,0)" and got["k"] == "int64"
    assert got["h"] == "string" and got["AVG(E.v)"] == "double"
    spark_values = sorted(
        (r["query"], str(r["h"]), str(r["COUNT(*)"]), str(r["n"]), str(r["k"]))
        for r in df.collect()
    )
    local_values = sorted(
        (r["query"], str(r["h"]), str(r["COUNT(*)"]), str(r["n"]), str(r["k"]))
        for r in local.to_pylist()
    )
    assert spark_values == local_values


def test_batch_and_stream_type_result_columns_by_one_rule(spark: Any, tmp_path: Path) -> None:
    """A stream fixes its types before its values come (a count can grow past any bound:
    text); the batch types by the values. Both ask the writers' rule, so a count past 38
    digits and a group key of words are text in both, an average double in both, and a
    count past int64 holds the same digits (decimal(38,0) in batch, text in the stream)."""
    import pyarrow.parquet as pq

    from stream_mock import run_stream
    from trendagg.spark import aggregate_trends

    events = _typed_events()
    run_stream(TYPED, [events, [{"type": "Flush", "time": 10**6}]], 0, tmp_path, fmt="parquet")
    stream = pq.read_table(tmp_path / "results")
    stream_types = {f.name: str(f.type) for f in stream.schema}
    df = aggregate_trends(frame(spark, events), TYPED, partitions=3)
    batch_types = dict(df.dtypes)
    for name in ("COUNT(*)", "SUM(B.v)", "h"):
        assert batch_types[name] == stream_types[name] == "string", name
    assert batch_types["AVG(E.v)"] == stream_types["AVG(E.v)"] == "double"
    assert batch_types["n"] == "decimal(38,0)" and stream_types["n"] == "string"

    def cells(rows: list[Any]) -> list[tuple[str, ...]]:
        names = ("query", "h", "COUNT(*)", "SUM(B.v)", "n", "AVG(E.v)")
        return sorted(tuple("" if r[c] is None else str(r[c]) for c in names) for r in rows)

    assert cells(df.collect()) == cells(stream.to_pylist())
    assert str(2**300 - 1) in {r["COUNT(*)"] for r in stream.to_pylist()}


def test_cli_spark_routes_padded_csv_types_and_keys_as_the_local_reader_reads_them(
    spark: Any, tmp_path: Path
) -> None:
    """The CSV reader strips a type and a text cell: " A" is the type A and "x " the key
    x. Spark routes by the stripped texts, so those rows reach their group's workers and
    one group is not split over two Spark partitions (two rows for one key)."""
    import io

    from trendagg.cli import main

    queries = tmp_path / "q.tq"
    queries.write_text("s: RETURN g, COUNT(*) PATTERN A+ WHERE [g] GROUP-BY g WITHIN 100 s;\n")
    events = tmp_path / "e.csv"
    rows = ["A,1,x", " A,2, x", "A ,3,x ", "\tA,4,y", "A,5,y", "  ,6,y"]
    events.write_text("type,time,g\n" + "\n".join(rows) + "\n")
    outputs = {}
    for engine in ("local", "spark"):
        out, err = io.StringIO(), io.StringIO()
        code = main(["run", str(queries), str(events), "--engine", engine], out, err)
        assert code == 0, err.getvalue()
        outputs[engine] = (out.getvalue(), err.getvalue().strip().splitlines()[-1].split(";")[0])
    assert outputs["spark"] == outputs["local"]
    # x: A1, A2, A3 (7 trends); y: A4, A5 (3 trends); the blank type is rejected
    assert '"g": "x"}, "values": {"COUNT(*)": 7}' in outputs["spark"][0]
    assert '"COUNT(*)": 3' in outputs["spark"][0] and "1 rejected" in outputs["spark"][1]


@settings(max_examples=4, deadline=None)
@given(gloria_cases(max_queries=4))
def test_spark_batch_runs_gloria_as_the_local_engine(
    spark: Any, case: tuple[list[ast.Query], list[dict[str, object]]]
) -> None:
    """Each bucket's engine plans GLORIA from its own first events: the plans may differ,
    the rows never do."""
    _planned_per_bucket(spark, case, "gloria")

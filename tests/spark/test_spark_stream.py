"""Structured Streaming on Spark equals the local engine and the batch pipeline (marked `spark`).

Each test runs real streaming queries (``availableNow``, one file per micro-batch)
over a directory of event files, with the RocksDB state store and a checkpoint.
The processor's logic is tested at length without Spark in test_stream.py.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from test_stream import FLUSH, _arrivals, _expected_late, _readers

from helpers import canon, run_queries
from trendagg.language import ast, parse, to_text
from workloads import shared_cases

pytestmark = pytest.mark.spark


def write_files(directory: Path, chunks: list[list[dict[str, Any]]], fmt: str = "jsonl") -> None:
    """One file per chunk, with increasing modification times (the order Spark reads them in)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    start = len(list(directory.iterdir()))
    names = sorted({k for chunk in chunks for e in chunk for k in e})  # CSV: one header
    for i, chunk in enumerate(chunks, start):
        path = directory / f"events-{i:04d}.{fmt}"
        if fmt == "jsonl":
            path.write_text("".join(json.dumps(e) + "\n" for e in chunk))
        else:
            table = pa.table({n: [e.get(n) for e in chunk] for n in names})
            if fmt == "csv":
                pacsv.write_csv(table, path)
            else:
                pq.write_table(table, path)
        stamp = 1_700_000_000 + i
        os.utime(path, (stamp, stamp))


def run_dir(
    spark: Any,
    text: str,
    source: Path,
    out: Path,
    checkpoint: Path,
    *,
    lateness: float = 0,
    strategy: str = "hamlet",
    schema: Any = None,
    **columns: Any,
) -> tuple[list[Any], Any]:
    """Run a stream over what is in ``source`` now, one file per micro-batch, then stop."""
    from trendagg.spark.stream import read_results, read_stream, start_stream, trend_stream

    df, csv_cells = read_stream(spark, str(source), max_files_per_trigger=1, schema=schema)
    partial, plans = trend_stream(
        df, text, lateness=lateness, strategy=strategy, csv_cells=csv_cells, **columns
    )
    query, stats = start_stream(
        partial, plans, output=str(out), checkpoint=str(checkpoint), available_now=True
    )
    query.awaitTermination()
    assert query.exception() is None, query.exception()
    return read_results(str(out)), stats


def keys(rows: list[Any]) -> list[tuple[object, ...]]:
    return [(r.query, r.window_start, repr(sorted(r.group.items()))) for r in rows]


def rideshare_chunks(n: int, pieces: int) -> tuple[str, list[dict[str, Any]], list[list[Any]]]:
    from importlib.resources import files

    from trendagg.generate import rideshare

    text = files("trendagg.examples").joinpath("rideshare.tq").read_text()
    records = list(rideshare(n, seed=11))
    size = -(-n // pieces)
    return text, records, [records[i : i + size] for i in range(0, n, size)]


# jsonl in `make test`; csv and parquet (about 35 s each) with `make test-slow`: the
# CSV and Parquet streams are read in `make test` too (rejected long rows, huge counts)
@pytest.mark.parametrize(
    "fmt",
    [
        "jsonl",
        pytest.param("csv", marks=pytest.mark.slow),
        pytest.param("parquet", marks=pytest.mark.slow),
    ],
)
def test_file_stream_equals_batch_and_local_engine(spark: Any, tmp_path: Path, fmt: str) -> None:
    import trendagg
    from trendagg.spark.batch import _run, read_frame

    text, records, chunks = rideshare_chunks(3000, 3)
    write_files(tmp_path / "in", [*chunks, [FLUSH]], fmt)
    got, stats = run_dir(spark, text, tmp_path / "in", tmp_path / "out", tmp_path / "ckpt")

    expected = trendagg.run(text, records)
    assert len(expected) > 20
    assert canon(got) == canon(expected)
    assert len(set(keys(got))) == len(got)  # every window written once
    assert stats.late == 0 and stats.rejected == 0 and stats.batches >= 4

    write_files(tmp_path / "batch", chunks, fmt)
    batch_dir = tmp_path / "batch"
    df = (
        read_frame(spark, str(batch_dir))[0]
        if fmt == "parquet"
        else spark.read.csv(str(batch_dir), header=True)
        if fmt == "csv"
        else spark.read.json(str(batch_dir))
    )
    results = _run(df, text, csv_cells=fmt == "csv")
    assert canon(results.collect_rows()) == canon(got)


@settings(max_examples=3, deadline=None)
@given(_arrivals(shared_cases(max_queries=3, max_events=14)))
def test_file_stream_equals_local_engine_on_generated_workloads(spark: Any, case: Any) -> None:
    import tempfile

    queries, chunks, lateness, _ = case
    text = to_text(ast.Workload(tuple(queries)))
    chunks = [c for c in chunks if c] + [[FLUSH]]
    late = _expected_late(chunks, lateness)
    events = list(itertools.chain(*chunks))
    kept = [e for e, x in zip(events, late, strict=True) if not x and e is not FLUSH]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_files(root / "in", chunks)
        schema = "type string, time long, x long, y long, g long, h string"
        got, stats = run_dir(
            spark, text, root / "in", root / "out", root / "ckpt", lateness=lateness, schema=schema
        )
        late_read = [
            json.loads(line)
            for f in sorted((root / "out" / "late").glob("*.jsonl"))
            for line in f.read_text().splitlines()
        ]
    assert canon(got) == canon(run_queries(queries, kept, "greta"))
    want = sorted(
        (json.dumps(e, sort_keys=True), _readers(queries, e))
        for e, x in zip(events, late, strict=True)
        if x and _readers(queries, e)
    )
    assert (
        sorted((json.dumps(r["record"], sort_keys=True), r["queries"]) for r in late_read) == want
    )


def test_a_sharon_stream_equals_the_local_engine(spark: Any, tmp_path: Path) -> None:
    """--strategy sharon in a stream: each key's Runner plans from its first events and
    is kept, plan and START groups, in the state store between micro-batches."""
    text = (
        "q1: RETURN COUNT(*), SUM(C.x) PATTERN SEQ(A, B, C, D) WHERE [g] WITHIN 10 s SLIDE 5 s;\n"
        "q2: RETURN COUNT(*), SUM(C.x) PATTERN SEQ(E, B, C, D) WHERE [g] WITHIN 10 s SLIDE 5 s;\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] WITHIN 10 s SLIDE 5 s;"
    )
    kinds = "AEACEDBCDCD"  # (B rare: SHARON shares (B, C, D) by q1 and q2, see explain)
    events = [
        {"type": kinds[i % len(kinds)], "time": i // 2, "x": i % 7, "g": i // 7 % 2}
        for i in range(90)
    ]
    chunks = [events[:30], events[30:60], events[60:], [FLUSH]]
    write_files(tmp_path / "in", chunks)
    schema = "type string, time long, x long, g long"
    got, stats = run_dir(
        spark, text, tmp_path / "in", tmp_path / "out", tmp_path / "ckpt", strategy="sharon",
        schema=schema,
    )  # fmt: skip
    expected = run_queries(list(parse(text).queries), events, "greta")
    assert {r.query for r in expected} == {"q1", "q2", "q3"}
    assert canon(got) == canon(expected)


def test_a_gloria_stream_equals_the_local_engine(spark: Any, tmp_path: Path) -> None:
    """--strategy gloria in a stream: each key's Runner plans from its first events (here
    the four queries share SEQ(A, B)+ and its exit, with snapshots of A, as the local
    engine's plan does: long bursts of B after one A) and keeps snapshots and
    coefficients in the state store."""
    from trendagg.engine.runner import Runner
    from trendagg.io import from_records
    from trendagg.plan.compile import compile_workload

    text = "\n".join(
        f"q{i}: RETURN COUNT(*), SUM(B.x) PATTERN SEQ({p}, SEQ(A, B)+, X) WHERE [g] "
        "WITHIN 10 s SLIDE 5 s;"
        for i, p in enumerate("CDEF", 1)
    )
    kinds = "CDEFA" + "B" * 23 + "X"
    events = [
        {"type": kinds[i % len(kinds)], "time": i // 4, "x": i % 7, "g": i // 29 % 2}
        for i in range(232)
    ]
    local = Runner(compile_workload(parse(text)), "gloria")
    local.feed(from_records(events).events)
    assert local.sharing is not None and any(q.label == "A" for q in local.sharing.qsets)
    chunks = [events[:80], events[80:160], events[160:], [FLUSH]]
    write_files(tmp_path / "in", chunks)
    got, _ = run_dir(
        spark, text, tmp_path / "in", tmp_path / "out", tmp_path / "ckpt", strategy="gloria",
        schema="type string, time long, x long, g long",
    )  # fmt: skip
    expected = run_queries(list(parse(text).queries), events, "greta")
    assert {r.query for r in expected} == {"q1", "q2", "q3", "q4"}
    assert canon(got) == canon(expected)


def test_a_restarted_stream_loses_nothing_and_duplicates_nothing(
    spark: Any, tmp_path: Path
) -> None:
    import trendagg

    text, records, chunks = rideshare_chunks(6000, 3)  # 600 events a minute: 10 minutes
    source, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_files(source, chunks[:2])
    first, _ = run_dir(spark, text, source, out, ckpt)
    assert first  # windows that end by the watermark (400 s) are written in the first run
    write_files(source, [chunks[2], [FLUSH]])
    got, stats = run_dir(spark, text, source, out, ckpt)
    assert stats.batches >= 2  # the second run read only the new files
    assert canon(got) == canon(trendagg.run(text, records))
    assert len(set(keys(got))) == len(got)

    # a micro-batch that ran but was not committed (a crash before the commit) runs again
    # from the checkpoint and writes the same files again: nothing twice
    before = {p.name: p.read_bytes() for p in (out / "results").iterdir()}
    last = max(int(p.name) for p in (ckpt / "commits").iterdir() if p.name.isdigit())
    for name in (str(last), f".{last}.crc"):
        (ckpt / "commits" / name).unlink(missing_ok=True)
    again, _ = run_dir(spark, text, source, out, ckpt)
    assert {p.name: p.read_bytes() for p in (out / "results").iterdir()} == before
    assert canon(again) == canon(got)


def test_late_events_are_counted_and_written_beyond_the_lateness(
    spark: Any, tmp_path: Path
) -> None:
    text = "q: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WHERE [g] WITHIN 30 s"
    chunks = [
        [{"type": "A", "time": 1, "g": 1, "v": 0}, {"type": "B", "time": 2, "g": 1, "v": 1}],
        [{"type": "B", "time": 20, "g": 1, "v": 10}],  # watermark after this batch: 20 - 5
        [
            {"type": "B", "time": 16, "g": 1, "v": 100},  # out of order, within the lateness
            {"type": "B", "time": 10, "g": 1, "v": 1000},  # before the watermark 15: late
            {"type": "B", "time": 12, "g": 2, "v": 1000},  # late too (another key)
        ],
        [FLUSH],
    ]
    write_files(tmp_path / "in", chunks)
    got, stats = run_dir(
        spark, text, tmp_path / "in", tmp_path / "out", tmp_path / "ckpt", lateness=5
    )
    # trends of A then B's at 2, 16, 20: 7, with 4 occurrences of each B
    assert [(r.window_start, r.values) for r in got] == [(0, {"COUNT(*)": 7, "SUM(B.v)": 444})]
    assert stats.late == 2
    late = [
        json.loads(line)
        for f in (tmp_path / "out" / "late").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert sorted(e["record"]["time"] for e in late) == [10, 12]
    assert all("before the watermark 15" in e["reason"] and e["queries"] == ["q"] for e in late)


def test_rejected_rows_of_a_stream_are_written_with_reasons(spark: Any, tmp_path: Path) -> None:
    # two query groups (q2 partitions by v): a B row reaches a key of each, and is
    # rejected (and counted) once
    text = (
        "q: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 30 s;\n"
        "q2: RETURN COUNT(*) PATTERN B+ WHERE [v] WITHIN 30 s"
    )
    source = tmp_path / "in"
    source.mkdir()
    (source / "a.jsonl").write_text(
        '{"type": "A", "time": 1}\n'
        '{"type": "B", "time": 2, "v": 5}\n'
        '{"type": "B", "time": "noon", "v": 6}\n'
        '{"type": "B", "time": 3, "v": "six"}\n'
        "{not json\n"
        '{"type": "B", "time": 1e20, "v": 7}\n'  # beyond a watermark: rejected, no failure
        '{"type": "Z", "time": 100}\n'
    )
    got, stats = run_dir(spark, text, source, tmp_path / "out", tmp_path / "ckpt")
    assert sorted((r.query, r.values) for r in got) == [
        ("q", {"COUNT(*)": 1, "SUM(B.v)": 5}),
        ("q2", {"COUNT(*)": 1}),
    ]
    rejected = [
        json.loads(line)
        for f in (tmp_path / "out" / "rejects").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    reasons = sorted(r["reason"] for r in rejected)
    assert stats.rejected == 4 and len(reasons) == 4
    assert any("'six', not a number" in r for r in reasons)
    assert any("time '1e+20' is out of range" in r for r in reasons)
    assert any("noon" in r for r in reasons)


def test_cli_stream_once_writes_what_run_writes(spark: Any, tmp_path: Path) -> None:
    import io

    from trendagg.cli import main

    text, records, chunks = rideshare_chunks(2000, 2)
    queries = tmp_path / "q.tq"
    queries.write_text(text)
    write_files(tmp_path / "in", [*chunks, [FLUSH]])
    all_events = tmp_path / "all.jsonl"
    all_events.write_text("".join(json.dumps(e) + "\n" for e in records))

    def cli(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(argv), out, err)
        return code, out.getvalue(), err.getvalue()

    code, _, err = cli(
        "stream",
        str(queries),
        str(tmp_path / "in"),
        "--checkpoint",
        str(tmp_path / "ckpt"),
        "--output",
        str(tmp_path / "out"),
        "--once",
        "--lateness",
        "30 s",
    )
    assert code == 0, err
    assert "stopped;" in err and "0 late, 0 rejected" in err
    code, out, err = cli("run", str(queries), str(all_events), "--engine", "local")
    assert code == 0, err
    written = sorted(
        line
        for f in (tmp_path / "out" / "results").glob("*.jsonl")
        for line in f.read_text().splitlines()
    )
    assert written == sorted(out.splitlines()) and len(written) > 10


def test_cli_stream_explains_a_bad_source(spark: Any, tmp_path: Path) -> None:
    import io

    from trendagg.cli import main

    queries = tmp_path / "q.tq"
    queries.write_text("RETURN COUNT(*) PATTERN A+ WITHIN 1 min")
    err = io.StringIO()
    code = main(
        ["stream", str(queries), str(tmp_path / "nowhere"), "--checkpoint", "c", "--output", "o"],
        io.StringIO(),
        err,
    )
    assert code == 2
    assert "does not exist" in err.getvalue() and "socket://" in err.getvalue()


def test_rate_source_gives_trends(spark: Any, tmp_path: Path) -> None:
    """The demo source: the rate source as rides; one second of events, then a far watermark."""
    from trendagg.spark.stream import read_results, read_stream, start_stream, trend_stream

    text = "t: RETURN COUNT(*) PATTERN SEQ(Request, Travel+, Dropoff) WHERE [driver] WITHIN 1 s"
    df, _ = read_stream(spark, "rate://", rows_per_second=2000)
    partial, plans = trend_stream(df, text)
    query, stats = start_stream(
        partial,
        plans,
        output=str(tmp_path / "out"),
        checkpoint=str(tmp_path / "c"),
        trigger="1 second",
    )
    try:
        query.awaitTermination(12)
    finally:
        query.stop()
    assert query.exception() is None
    rows = read_results(str(tmp_path / "out"))
    assert rows and all(r.values["COUNT(*)"] >= 1 for r in rows)
    assert stats.events > 0 and stats.late == 0


def test_a_csv_stream_rejects_long_rows_and_refuses_another_header(
    spark: Any, tmp_path: Path
) -> None:
    from trendagg.spark.stream import read_results

    text = "q: RETURN COUNT(*), SUM(A.v) PATTERN A+ WITHIN 30 s"
    source = tmp_path / "in"
    source.mkdir()
    (source / "a.csv").write_text("type,time,v\nA,1,5\nA,2,6,oops\nA,3\nA,4,7\nZ,100,0\n")
    got, stats = run_dir(spark, text, source, tmp_path / "out", tmp_path / "ckpt")
    # A1 and A4 (A3 has no v): 3 trends, each A in 2
    assert [r.values for r in got] == [{"COUNT(*)": 3, "SUM(A.v)": 24}]
    (bad,) = [
        json.loads(line)
        for f in (tmp_path / "out" / "rejects").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert bad["reason"].startswith("row has 4 cells but the header has 3 columns")
    assert bad["record"] == {"type": "A", "time": "2", "v": "6", "_extra": ["oops"]}

    # a file whose header names other columns stops the stream with Spark's reason
    (source / "b.csv").write_text("kind,time,v\nA,200,1\n")
    os.utime(source / "b.csv", (1_800_000_000, 1_800_000_000))
    from trendagg.spark.stream import read_stream, start_stream, trend_stream

    df, csv_cells = read_stream(spark, str(source))
    partial, plans = trend_stream(df, text, csv_cells=csv_cells)
    query, _ = start_stream(
        partial,
        plans,
        output=str(tmp_path / "out"),
        checkpoint=str(tmp_path / "ckpt"),
        available_now=True,
    )
    with pytest.raises(Exception, match="(?i)header"):
        query.awaitTermination()
    assert len(read_results(str(tmp_path / "out"))) == 1


def test_cli_says_why_a_stream_failed(spark: Any, tmp_path: Path) -> None:
    import io

    from trendagg.cli import main

    queries = tmp_path / "q.tq"
    queries.write_text("RETURN COUNT(*) PATTERN A+ WITHIN 30 s")
    source = tmp_path / "in"
    source.mkdir()
    (source / "a.csv").write_text("type,time\nA,1\n")
    (source / "b.csv").write_text("kind,time\nA,2\n")
    err = io.StringIO()
    argv = ["stream", str(queries), str(source), "--once", "--quiet"]
    argv += ["--checkpoint", str(tmp_path / "c"), "--output", str(tmp_path / "o")]
    assert main(argv, io.StringIO(), err) == 1  # a failure while running, not refused input
    text = err.getvalue()
    assert "the stream failed: CSV header does not conform to the schema." in text
    assert "Header: kind, time" in text and "b.csv" in text
    assert "Traceback" not in text and "\tat " not in text


def test_a_checkpoint_is_not_resumed_with_other_queries(spark: Any, tmp_path: Path) -> None:
    from trendagg.errors import InputError
    from trendagg.spark.stream import stream_trends

    source = tmp_path / "in"
    write_files(source, [[{"type": "A", "time": 1}, {"type": "A", "time": 50}]])
    options = {"output": str(tmp_path / "out"), "checkpoint": str(tmp_path / "c")}
    query, _ = stream_trends(
        str(source),
        "q: RETURN COUNT(*) PATTERN A+ WITHIN 10 s",
        spark=spark,
        available_now=True,
        **options,
    )
    query.awaitTermination()
    with pytest.raises(InputError, match="other queries, buckets: resume it with the same"):
        stream_trends(
            str(source),
            "q: RETURN COUNT(*) PATTERN A+ WITHIN 20 s",
            spark=spark,
            available_now=True,
            buckets=3,
            **options,
        )


def test_cli_parquet_stream_reads_as_one_table_with_exact_huge_counts(
    spark: Any, tmp_path: Path
) -> None:
    import io

    import pyarrow.parquet as pq

    from trendagg.cli import main

    queries = tmp_path / "q.tq"
    queries.write_text("q: RETURN g, COUNT(*) PATTERN A+ WHERE [g] GROUP-BY g WITHIN 10 s")
    small = [{"type": "A", "time": 1, "g": 1}, {"type": "A", "time": 2, "g": 1}]
    huge = [{"type": "A", "time": 10 + i / 10, "g": "x"} for i in range(70)]  # 2**70 - 1
    write_files(tmp_path / "in", [small, huge, [FLUSH]])
    err = io.StringIO()
    argv = ["stream", str(queries), str(tmp_path / "in"), "--once", "--format", "parquet"]
    argv += ["--max-files-per-trigger", "1", "--checkpoint", str(tmp_path / "c")]
    assert main([*argv, "--output", str(tmp_path / "o")], io.StringIO(), err) == 0, err.getvalue()
    assert len(list((tmp_path / "o" / "results").glob("part-*.parquet"))) == 2
    table = pq.read_table(tmp_path / "o" / "results")
    assert sorted(table.select(["window_start", "g", "COUNT(*)"]).to_pylist(), key=str) == [
        {"window_start": 0, "g": "1", "COUNT(*)": "3"},
        {"window_start": 10, "g": "x", "COUNT(*)": str(2**70 - 1)},
    ]

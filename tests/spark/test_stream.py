"""The streaming pipeline's keyed processor, without Spark: stream == local engine.

The processor (``trendagg.spark.stream._TrendProcessor``) is driven by
``stream_mock.run_stream`` with the calls Spark makes; the Spark end-to-end
tests are in test_spark_stream.py. Events arrive out of order in random
micro-batches; the expected rows are the local engine's over the events that
are not late, where an event is late when its time is before the watermark of
the micro-batch it arrives in (the latest time of earlier batches minus the
allowed lateness), computed here independently of the processor.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import canon, run_queries
from trendagg.language import ast, to_text
from workloads import cases, gloria_cases, shared_cases

pytest.importorskip("pandas", reason="the streaming processor exchanges pandas frames")

from stream_mock import run_stream  # noqa: E402

FLUSH = {"type": "Flush", "time": 10**6}  # a type no query reads: only moves the watermark


def _expected_late(chunks: list[list[dict[str, Any]]], lateness: float) -> list[bool]:
    late = []
    latest = None
    for chunk in chunks:
        w = None if latest is None or latest - lateness <= 0 else latest - lateness
        late.extend(w is not None and float(e["time"]) < w for e in chunk)
        if chunk:
            top = max(float(e["time"]) for e in chunk)
            latest = top if latest is None else max(latest, top)
    return late


@st.composite
def _arrivals(draw: st.DrawFn, case_strategy: Any) -> Any:
    queries, events = draw(case_strategy)
    cuts = sorted(draw(st.lists(st.integers(0, len(events)), max_size=4)))
    bounds = [0, *cuts, len(events)]
    chunks = [events[a:b] for a, b in itertools.pairwise(bounds)]
    lateness = draw(st.sampled_from([0, 1, 3, 100]))
    restart = draw(st.none() | st.integers(0, len(chunks)))
    return queries, chunks, lateness, restart


def _check(
    queries: list[ast.Query],
    chunks: Any,
    lateness: float,
    restart: Any,
    tmp: Path,
    strategies: tuple[str, ...] = ("hamlet", "greta"),
) -> None:
    text = to_text(ast.Workload(tuple(queries)))
    chunks = [*chunks, [FLUSH]]
    late = _expected_late(chunks, lateness)
    events = [e for e in itertools.chain(*chunks)]
    kept = [e for e, x in zip(events, late, strict=True) if not x and e is not FLUSH]
    expected = run_queries(queries, kept, "greta")
    for strategy in strategies:
        out = tmp / strategy
        got, stats = run_stream(
            text, chunks, lateness, out, strategy=strategy, restart_after=restart
        )
        assert canon(got) == canon(expected), strategy
        late_read = [
            json.loads(line)
            for f in sorted((out / "late").glob("*.jsonl"))
            for line in f.read_text().splitlines()
        ]
        # every late event that a query would have read (its type, its partition key) is
        # written once, naming the queries that missed it
        want = sorted(
            (json.dumps(e, sort_keys=True), _readers(queries, e))
            for e, x in zip(events, late, strict=True)
            if x and _readers(queries, e)
        )
        assert (
            sorted((json.dumps(r["record"], sort_keys=True), r["queries"]) for r in late_read)
            == want
        )
        assert stats.late == len(want)


def _readers(queries: list[ast.Query], event: dict[str, Any]) -> list[str]:
    """The queries that would read this event: one of their types, and every partition
    attribute that applies to all their variables present (SEMANTICS.md, Partitions)."""
    names = []
    for q in queries:
        attrs = [a for c in q.where if isinstance(c, ast.Equivalence) for a in c.attrs]
        unqualified = [a.name for a in (*attrs, *q.group_by) if a.var is None]
        if event.get("type") in _types(q) and all(event.get(k) is not None for k in unqualified):
            names.append(q.name)
    return names


def _types(q: ast.Query) -> list[str]:
    from workloads import pattern_types

    return pattern_types(q.pattern)


_SETTINGS = settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@_SETTINGS
@given(_arrivals(cases(n_queries=2, max_events=14, max_depth=1)))
def test_stream_equals_local_engine_on_the_events_in_time(tmp_path: Path, case: Any) -> None:
    import shutil

    shutil.rmtree(tmp_path, ignore_errors=True)
    _check(*case, tmp_path)


@_SETTINGS
@given(_arrivals(shared_cases(max_queries=4, max_events=16)))
def test_stream_equals_local_engine_when_queries_share(tmp_path: Path, case: Any) -> None:
    import shutil

    shutil.rmtree(tmp_path, ignore_errors=True)
    _check(*case, tmp_path)


@settings(_SETTINGS, max_examples=100)
@given(_arrivals(gloria_cases(max_queries=4)))
def test_a_gloria_stream_equals_the_local_engine(tmp_path: Path, case: Any) -> None:
    """--strategy gloria in a stream: each key's Runner plans from its first events, and
    its snapshots and coefficients are kept in the state between micro-batches."""
    import shutil

    shutil.rmtree(tmp_path, ignore_errors=True)
    _check(*case, tmp_path, strategies=("gloria",))


def test_rideshare_stream_in_chunks_with_a_restart(tmp_path: Path) -> None:
    from importlib.resources import files

    import trendagg
    from trendagg.generate import rideshare

    text = files("trendagg.examples").joinpath("rideshare.tq").read_text()
    recs = list(itertools.islice(rideshare(3000, seed=3), 3000))
    chunks = [recs[:1000], recs[1000:2000], recs[2000:], [FLUSH]]
    got, stats = run_stream(text, chunks, 30, tmp_path, restart_after=2)
    expected = trendagg.run(text, recs)
    assert len(expected) > 10
    assert canon(got) == canon(expected)
    assert stats.late == 0 and stats.rejected == 0
    used = {"Request", "Travel", "Dropoff", "Pickup", "Cancel"}
    assert stats.events == sum(r["type"] in used for r in recs)


def test_windows_are_written_once_the_watermark_passes_them(tmp_path: Path) -> None:
    text = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s"
    chunks = [
        [{"type": "A", "time": 1}, {"type": "B", "time": 2}],
        [{"type": "B", "time": 12}],  # watermark 2 - 0: window [0, 10) still open
        [{"type": "B", "time": 3}],  # late (before 12): counted, not used
        [{"type": "B", "time": 25}],
    ]
    got, stats = run_stream(text, chunks, 0, tmp_path)
    files_written = sorted(p.name for p in (tmp_path / "results").iterdir())
    # window [0, 10) closes in the batch whose watermark (12) passed its end: batch 2
    assert files_written == ["part-00000002.jsonl"]
    assert [(r.window_start, r.values) for r in got] == [(0, {"COUNT(*)": 1})]
    assert stats.late == 1
    late = json.loads((tmp_path / "late" / "part-00000002.jsonl").read_text())
    assert late["record"] == {"type": "B", "time": 3} and "watermark 12" in late["reason"]


def test_events_are_fed_in_their_micro_batch_and_rows_wait_for_the_watermark(
    tmp_path: Path,
) -> None:
    """An event before the latest time of its micro-batch minus the lateness cannot be
    followed by an earlier one that counts (that one would be late), so it is fed at once
    instead of waiting in the state for the next watermark; the windows it closes are
    written all the same in the micro-batch whose watermark passes them, so that every
    key's partial rows of a window come together (here the group spans the keys of two
    drivers, and one key closes a window a micro-batch before the other)."""
    from trendagg.engine.state import StateCodec
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload

    text = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [d] WITHIN 10 s"
    per_driver = [("A", 1), ("B", 3), ("B", 5), ("A", 11), ("B", 12)]
    chunks = [
        [{"type": k, "time": t, "d": d} for k, t in per_driver for d in (1, 2)],
        [{"type": "B", "time": 25, "d": 1}],  # watermark 12 - 2: writes [0, 10)
    ]  # (then an empty micro-batch, watermark 25 - 2: writes [10, 20))
    codec = StateCodec(compile_workload(parse(text)))
    seen: dict[int, list[tuple[list[Any], list[Any]]]] = {}

    def look(b: int, store: dict[Any, Any]) -> None:
        for v in sorted(store.values(), key=lambda v: bytes(v.value[0]) if v.exists() else b""):
            if v.exists():
                state = codec.loads(bytes(v.value[0]))
                held = [r.window_start for r in state.held]
                seen.setdefault(b, []).append((state.pending.time_values(), held))

    got, _ = run_stream(text, chunks, 2, tmp_path, after_batch=look)
    # no watermark yet: each driver's key fed up to 12 - 2 (less a ms); only 11 and 12 wait
    assert sorted(seen[0]) == [([11, 12], []), ([11, 12], [])]
    # watermark 10: driver 1's key fed up to 25 - 2 and closed [10, 20), held for the
    # watermark; driver 2's (no input, its timer at 10) fed up to 10
    assert sorted(seen[1]) == [([11, 12], []), ([25], [10])]
    files_written = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert files_written == ["part-00000001.jsonl", "part-00000002.jsonl"]
    assert [(r.window_start, r.values) for r in got] == [
        (0, {"COUNT(*)": 6}),
        (10, {"COUNT(*)": 2}),
    ]


def test_rejected_rows_are_written_with_reasons(tmp_path: Path) -> None:
    text = "q: RETURN SUM(B.v) PATTERN SEQ(A, B+) WITHIN 10 s"
    chunks = [
        [{"type": "A", "time": 1}, {"type": "B", "time": 2, "v": "lots"}],
        [{"type": "Z", "time": 50}],
    ]
    got, stats = run_stream(text, chunks, 0, tmp_path)
    assert got == []
    assert stats.rejected == 1
    rejected = json.loads((tmp_path / "rejects" / "part-00000000.jsonl").read_text())
    assert rejected["record"] == {"type": "B", "time": 2, "v": "lots"}
    assert "v" in rejected["reason"]


def test_a_row_rejected_by_two_query_groups_is_counted_and_written_once(tmp_path: Path) -> None:
    # q1 and q2 partition differently (two query groups): a B row reaches a key of each
    text = (
        "q1: RETURN SUM(B.v) PATTERN SEQ(A, B+) WITHIN 10 s;\n"
        "q2: RETURN COUNT(*) PATTERN B+ WHERE [g] WITHIN 10 s"
    )
    bad = {"type": "B", "time": 2, "g": 1, "v": "lots"}
    chunks = [
        [{"type": "A", "time": 1, "g": 1}, bad, dict(bad), {**bad, "v": "many"}],
        [{"type": "Z", "time": 50}],
    ]
    got, stats = run_stream(text, chunks, 0, tmp_path)
    assert got == []
    rejected = [
        json.loads(line)
        for f in sorted((tmp_path / "rejects").glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    # two identical bad rows stay two; none is written once per query group
    assert stats.rejected == 3
    assert sorted(r["record"]["v"] for r in rejected) == ["lots", "lots", "many"]
    assert all("v" in r["reason"] for r in rejected)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_stream_table_results_keep_their_columns_and_types_across_micro_batches(
    tmp_path: Path, fmt: str
) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    text = (
        "q: RETURN g, COUNT(*), SUM(A.v), MIN(A.v), AVG(A.v) PATTERN A+ WHERE [g] "
        "GROUP-BY g WITHIN 10 s;\n"
        "r: RETURN COUNT(*) AS n PATTERN SEQ(A, B) WITHIN 10 s"
    )
    small = [{"type": "A", "time": 1, "g": 1, "v": 2}, {"type": "A", "time": 2, "g": 1, "v": 3}]
    # 70 A's in the next window: 2**70 - 1 trends, past int64 (and a group key of text)
    huge = [{"type": "A", "time": 10 + i / 10, "g": "x", "v": 2**40} for i in range(70)]
    chunks = [small, [{"type": "B", "time": 5}], huge, [FLUSH]]
    run_stream(text, chunks, 0, tmp_path, fmt=fmt)
    parts = sorted((tmp_path / "results").glob(f"part-*.{fmt}"))
    assert len(parts) >= 2  # the small and the huge window in different files
    if fmt == "parquet":
        table = pq.read_table(tmp_path / "results")
    else:  # every file has the same header: one table
        strings = ["g", "COUNT(*)", "SUM(A.v)", "MIN(A.v)", "n"]
        as_text = dict.fromkeys(strings, pa.string())
        opts = pacsv.ConvertOptions(column_types=as_text, strings_can_be_null=True)
        table = pa.concat_tables([pacsv.read_csv(p, convert_options=opts) for p in parts])
    rows = sorted(table.to_pylist(), key=lambda r: (r["query"], r["window_start"]))
    assert [(r["query"], r["window_start"], r["g"]) for r in rows] == [
        ("q", 0, "1"),
        ("q", 10, "x"),
        ("r", 0, None),
    ]
    assert [r["COUNT(*)"] for r in rows[:2]] == ["3", str(2**70 - 1)]
    assert rows[1]["SUM(A.v)"] == str(70 * 2**69 * 2**40)  # each A in 2**69 trends
    assert rows[1]["MIN(A.v)"] == str(2**40) and rows[1]["AVG(A.v)"] == float(2**40)
    assert rows[0]["AVG(A.v)"] == 2.5 and rows[2]["n"] == "2"
    if fmt == "parquet":
        types = {f.name: str(f.type) for f in table.schema}
        assert types["COUNT(*)"] == "string" and types["window_start"] == "int64"
        assert types["AVG(A.v)"] == "double" and types["n"] == "string"


def test_a_window_bound_beyond_int64_stops_a_parquet_stream_with_a_message(
    tmp_path: Path,
) -> None:
    from trendagg.errors import ExecutionError
    from trendagg.io.results import ResultRow
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload
    from trendagg.spark.stream_results import stream_columns, write_table

    plans = compile_workload(parse("q: RETURN COUNT(*) PATTERN A+ WITHIN 10 s"))
    far = ResultRow("q", 10**20, 10**20 + 10, {}, {"COUNT(*)": 1})
    with pytest.raises(ExecutionError, match="window_start 100000000000000000000 of query q"):
        write_table([far], stream_columns(plans), str(tmp_path / "a.parquet"), "parquet")
    # a window of 250 ms: bounds are doubles, whatever their size
    plans = compile_workload(parse("q: RETURN COUNT(*) PATTERN A+ WITHIN 250 ms"))
    write_table([far], stream_columns(plans), str(tmp_path / "b.parquet"), "parquet")


def test_waiting_events_of_an_older_checkpoint_are_read_as_arrays() -> None:
    """A checkpoint written before the waiting events were arrays kept them as (time, type,
    attributes) tuples: a resumed stream reads them as the same events."""
    from stream_mock import _Handle
    from trendagg.engine.state import dumps
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload
    from trendagg.spark.records import Reading
    from trendagg.spark.stream import _Key, _TrendProcessor

    text = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s"
    plans = compile_workload(parse(text))
    old = _Key()
    old.pending = [(3, "B", {"v": 1}), (1, "A", {}), (2, "B", {"v": 2.5})]
    processor = _TrendProcessor(text, "hamlet", Reading(), 0)
    processor.init(_Handle({}, {}, (0, "0")))
    processor.state.update((dumps(old, plans),))
    events = processor._load().pending
    assert events.type_values() == ["B", "A", "B"] and events.time_values() == [3, 1, 2]
    assert events.columns["v"].python_values() == [1, None, 2.5]


def test_a_checkpoint_of_the_earlier_routing_is_refused_and_its_buckets_are_kept(
    tmp_path: Path,
) -> None:
    """A checkpoint whose keys were made otherwise (Spark's hash of the JSON fields before
    ROUTING 2; keys numbered 0, 1, ... before 3) holds state under other keys: it is
    refused with what to do. A checkpoint of this routing keeps its buckets and
    partitions, whatever the default."""
    from trendagg.errors import InputError
    from trendagg.spark.stream import ROUTING, check_checkpoint, checkpoint_settings

    settings = {"queries": "q", "type_col": "type", "time_col": "time", "event_type": None}
    old = tmp_path / "old"
    old.mkdir()
    (old / "trendagg.json").write_text(json.dumps({**settings, "buckets": 64}))
    with pytest.raises(InputError, match="written by an earlier trendagg.*another --checkpoint"):
        check_checkpoint(str(old), {**settings, "buckets": 64, "routing": ROUTING})
    (old / "trendagg.json").write_text(json.dumps({**settings, "buckets": 2, "routing": 2}))
    with pytest.raises(InputError, match="written by an earlier trendagg"):
        check_checkpoint(str(old), {**settings, "buckets": 2, "partitions": 2, "routing": ROUTING})
    new = tmp_path / "new"
    assert checkpoint_settings(str(new)) == {}
    check_checkpoint(str(new), {**settings, "buckets": 5, "partitions": 4, "routing": ROUTING})
    assert checkpoint_settings(str(new))["buckets"] == 5
    assert checkpoint_settings(str(new))["partitions"] == 4
    check_checkpoint(str(new), {**settings, "buckets": 5, "partitions": 4, "routing": ROUTING})
    with pytest.raises(InputError, match="other buckets: resume it with the same"):
        check_checkpoint(str(new), {**settings, "buckets": 8, "partitions": 4, "routing": ROUTING})
    with pytest.raises(InputError, match="other partitions: resume it with the same"):
        check_checkpoint(str(new), {**settings, "buckets": 5, "partitions": 3, "routing": ROUTING})

"""The Runner: events fed in chunks equal one batch, for every strategy."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import canon
from trendagg.engine import Runner, run_strategy
from trendagg.errors import ExecutionError
from trendagg.io import from_records
from trendagg.language import ast, parse
from trendagg.plan.compile import compile_query, compile_workload
from workloads import cases, shared_cases


def _chunks(events: list[dict[str, object]], cuts: list[int]) -> list[list[dict[str, object]]]:
    ordered = sorted(events, key=lambda e: e["time"])  # type: ignore[arg-type, return-value]
    bounds = sorted({c % (len(ordered) + 1) for c in cuts})
    pieces, start = [], 0
    for b in bounds + [len(ordered)]:
        pieces.append(ordered[start:b])
        start = b
    return pieces


@given(
    shared_cases(max_queries=5, max_events=14),
    st.lists(st.integers(0, 40), max_size=6),
    st.sampled_from(["hamlet", "hamlet-static", "greta", "twostep"]),
)
def test_chunked_feeding_equals_one_batch(
    case: tuple[list[ast.Query], list[dict[str, object]]], cuts: list[int], strategy: str
) -> None:
    queries, events = case
    plans = [compile_query(q) for q in queries]
    expected = run_strategy(plans, from_records(events).events, strategy, trend_limit=500_000)
    runner = Runner(plans, strategy, trend_limit=500_000)
    rows = []
    for piece in _chunks(events, cuts):
        rows.extend(runner.feed(from_records(piece).events))
    rows.extend(runner.finish())
    assert canon(rows) == canon(expected)


@given(
    st.one_of(cases(n_queries=2, max_events=14), shared_cases(max_queries=4, max_events=14)),
    st.lists(st.integers(0, 40), max_size=6),
    st.booleans(),
    st.sampled_from(["hamlet", "hamlet-static", "greta"]),
)
def test_saved_and_restored_state_continues_exactly(
    case: tuple[list[ast.Query], list[dict[str, object]]],
    cuts: list[int],
    advance: bool,
    strategy: str,
) -> None:
    """A stream keeps each key's Runner as bytes between micro-batches (and across restarts):
    restoring it and going on equals never having stopped, also after advance() promises."""
    from trendagg.engine.state import dumps, loads

    queries, events = case
    plans = [compile_query(q) for q in queries]
    expected = run_strategy(plans, from_records(events).events, strategy)
    runner = Runner(plans, strategy)
    rows = []
    pieces = _chunks(events, cuts)
    for i, piece in enumerate(pieces):
        rows.extend(runner.feed(from_records(piece).events))
        later = [e["time"] for p in pieces[i + 1 :] for e in p]
        if advance and later:
            rows.extend(runner.advance(min(later)))  # a watermark: nothing earlier will come
        fresh = [compile_query(q) for q in queries]  # what a restarted worker compiles
        runner = loads(dumps(runner, plans), fresh)
        plans = fresh
    rows.extend(runner.finish())
    assert canon(rows) == canon(expected)


def test_rows_come_out_as_windows_close() -> None:
    plans = compile_workload(parse("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s"))
    runner = Runner(plans, "greta")
    first = runner.feed(from_records([{"type": "A", "time": 1}, {"type": "B", "time": 2}]).events)
    assert first == []  # window [0, 10) is still open
    second = runner.feed(from_records([{"type": "B", "time": 10}]).events)
    assert [(r.window_start, r.values["COUNT(*)"]) for r in second] == [(0, 1)]
    assert runner.finish() == []  # the window [10, 20) has a B but no trend


def test_events_out_of_time_order_are_refused() -> None:
    plans = compile_workload(parse("RETURN COUNT(*) PATTERN A+ WITHIN 10 s"))
    runner = Runner(plans, "hamlet")
    runner.feed(from_records([{"type": "A", "time": 5}]).events)
    with pytest.raises(ExecutionError, match="arrived after time 5"):
        runner.feed(from_records([{"type": "A", "time": 4}]).events)


@pytest.mark.parametrize("strategy", ["hamlet", "greta"])
def test_a_restored_runner_keeps_partition_wildcards(strategy: str) -> None:
    """E has no variable that B.h applies to: it joins every group. After a restore it must
    still negate B in the windows it lies in (the wildcard survives pickling as itself)."""
    from trendagg.engine.state import dumps, loads

    text = "RETURN B.h, COUNT(*) PATTERN SEQ(NOT E, B) GROUP-BY B.h WITHIN 9 s SLIDE 3 s"
    plans = compile_workload(parse(text))
    runner = Runner(plans, strategy)
    rows = runner.feed(from_records([{"type": "E", "time": 4, "h": "q"}]).events)
    rows += runner.advance(8)
    runner = loads(dumps(runner, plans), compile_workload(parse(text)))
    rows += runner.feed(from_records([{"type": "B", "time": 8, "h": "q"}]).events)
    rows += runner.finish()
    # windows [0, 9) and [3, 12) hold E before B; only [6, 15) has a trend
    assert [(r.window_start, r.values["COUNT(*)"]) for r in rows] == [(6, 1)]


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (b"trendagg.engine.runner", b"trendagg.engine.runnex"),  # a module moved
        (b"Runner", b"Rummer"),  # a class renamed
    ],
)
def test_a_state_of_another_version_is_refused_with_what_to_do(written: bytes, read: bytes) -> None:
    """A stream's checkpoint kept across an upgrade holds classes the new version may have
    moved: its state is refused with the way out, not a bare AttributeError from a worker."""
    from trendagg.engine.state import dumps, loads
    from trendagg.errors import InputError

    plans = compile_workload(parse("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s;"))
    runner = Runner(plans, "hamlet")
    runner.feed(from_records([{"type": "A", "time": 1}, {"type": "B", "time": 2}]).events)
    data = dumps(runner, plans)
    assert written in data
    assert canon(loads(data, plans).finish()) == canon(runner.finish())  # (as written: read)
    with pytest.raises(InputError, match=r"written by another one.*start a new stream"):
        loads(data.replace(written, read, 1), plans)

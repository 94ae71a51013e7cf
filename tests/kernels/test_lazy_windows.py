"""Lazy windows (:mod:`trendagg.kernels.lower.lazy`): a window spec with many windows per
event keeps its registers by the start of the trends (X = G Y per partition), so that an
event costs the same for any number of windows. Every case here runs with every allowed
spec lazy (``LAZY_MIN_WINDOWS`` 1) against twostep, the Python engine, or the window
slots of the same kernel."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_kernels import STRATEGIES, _run, fed_in_cuts, merging_workloads, workloads

from helpers import canon
from trendagg.engine import Runner
from trendagg.generate import rideshare
from trendagg.kernels.lower import lazy as klazy
from trendagg.kernels.lower.lazy import lazy_window_specs
from trendagg.kernels.lower.program import lower
from trendagg.kernels.runtime import arrays
from trendagg.kernels.runtime import executor as kexec
from trendagg.language import parse
from trendagg.optimizer.plan import sharing_plan
from trendagg.plan.compile import compile_workload


def _lazy_flags(text: str, least: int = klazy.LAZY_MIN_WINDOWS) -> list[int]:
    plans = compile_workload(parse(text))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(klazy, "LAZY_MIN_WINDOWS", least)
        low = lower(plans, sharing_plan(plans, "hamlet"))
    return low.program.q_lazy[: len(plans)].tolist()  # type: ignore[no-any-return]


def test_a_spec_is_lazy_when_every_query_of_it_allows_it() -> None:
    many = f"WITHIN {klazy.LAZY_MIN_WINDOWS} s SLIDE 1 s"
    assert _lazy_flags(f"q1: RETURN COUNT(*) PATTERN SEQ(A, B+) {many};") == [1]
    fewer = f"WITHIN {klazy.LAZY_MIN_WINDOWS - 1} s SLIDE 1 s"
    assert _lazy_flags(f"q1: RETURN COUNT(*) PATTERN SEQ(A, B+) {fewer};") == [0]
    assert _lazy_flags("q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s SLIDE 5 s;", 1) == [1]
    for text in (
        f"q1: RETURN MIN(B.x) PATTERN SEQ(A, B+) {many};",  # an extreme
        f"q1: RETURN COUNT(*) PATTERN SEQ(A, NOT C, B+) {many};",  # a NOT
        f"q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x < NEXT(B).x {many};",  # NEXT
        f"q1: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ {many};",  # a cycle through two states
        f"q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [B.g] {many};",  # qualified
    ):
        assert _lazy_flags(text) == [0], text
    # one query that does not allow it keeps its spec's others on window slots too
    two = f"q1: RETURN COUNT(*) PATTERN SEQ(A, B+) {many};\nq2: RETURN MAX(B.x) PATTERN B+ {many};"
    assert _lazy_flags(two) == [0, 0]
    other = f"q3: RETURN COUNT(*) PATTERN B+ {fewer};"
    assert _lazy_flags(two.split("\n")[0] + "\n" + other) == [1, 0]


def test_explain_names_the_lazy_specs() -> None:
    plans = compile_workload(
        parse(
            "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 86400 s SLIDE 1 s;\n"
            "q2: RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 10 s SLIDE 5 s;"
        )
    )
    low = lower(plans, sharing_plan(plans, "hamlet"))
    assert lazy_window_specs(low) == ["WITHIN 86400 s SLIDE 1 s (q1)"]


def _lazy_equal_twostep(text: str, records: list[dict[str, object]]) -> None:
    expected = canon(_run(text, records, "twostep"))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(klazy, "LAZY_MIN_WINDOWS", 1)
        for strategy in STRATEGIES:
            assert canon(_run(text, records, strategy)) == expected, strategy
        m.setattr(kexec, "CHUNK", 3)  # the state carried across kernel calls
        assert canon(_run(text, records, "hamlet")) == expected
        m.setattr(arrays, "LAZY_POOL", 2)  # a full queue: replayed with a larger one
        assert canon(_run(text, records, "greta")) == expected


@settings(max_examples=150, deadline=None)
@given(workloads())
def test_lazy_windows_equal_twostep(case: tuple[str, list[dict[str, object]]]) -> None:
    _lazy_equal_twostep(*case)


@settings(max_examples=60, deadline=None)
@given(merging_workloads())
def test_lazy_windows_of_merged_states_equal_twostep(
    case: tuple[str, list[dict[str, object]]],
) -> None:
    _lazy_equal_twostep(*case)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), cuts=st.lists(st.integers(0, 16), max_size=4))
def test_lazy_windows_fed_in_cuts_equal_one_batch(data: st.DataObject, cuts: list[int]) -> None:
    text, records = data.draw(workloads())
    records = sorted(records, key=lambda r: r["time"])  # type: ignore[arg-type, return-value]
    plans = compile_workload(parse(text))
    expected = canon(_run(text, records, "twostep"))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(klazy, "LAZY_MIN_WINDOWS", 1)
        assert canon(fed_in_cuts(Runner(plans, "hamlet"), records, cuts)) == expected


def test_a_day_sliding_by_the_minute_equals_window_slots() -> None:
    """1,440 windows per event over generated rides: the lazy spec's rows equal the
    window slots' (the kernel's other layout, tested against twostep above), with
    groups, a predicate, sums, counts and a pattern of one Kleene variable."""
    records = list(rideshare(3000, drivers=40, seed=3))  # (in time order)
    window = "WITHIN 1 day SLIDE 1 min"
    text = (
        f"q1: RETURN COUNT(*), SUM(T.duration) PATTERN SEQ(Request R, Travel T+, Dropoff D) "
        f"WHERE [driver] {window};\n"
        f"q2: RETURN rider, COUNT(*), COUNT(T) PATTERN SEQ(Request R, Travel T+) "
        f"WHERE [driver] AND T.speed > 20 GROUP-BY rider {window};\n"
        f"q3: RETURN COUNT(*) PATTERN Travel T+ WHERE [driver] {window};"
    )
    assert _lazy_flags(text) == [1, 1, 1]
    lazy = canon(_run(text, records, "hamlet"))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(klazy, "LAZY_MIN_WINDOWS", 10**9)
        assert _lazy_flags(text, 10**9) == [0, 0, 0]
        assert canon(_run(text, records, "hamlet")) == lazy
    assert len(lazy) > 1440  # (rows of every window of the day the rides fall into)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_two_to_the_300_is_exact_in_lazy_windows(strategy: str) -> None:
    """300 travel legs in 100 windows: the lanes grow (a replay) and every window's
    count is 2**300 - 1."""
    records: list[dict[str, object]] = [{"type": "A", "time": 0}]
    records += [{"type": "B", "time": i + 1, "v": (i * 7919) % 1000 - 500} for i in range(300)]
    text = "q1: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 100000 s SLIDE 1000 s;"
    assert _lazy_flags(text) == [1]
    stats: dict[str, Any] = {}
    rows = _run(text, records, strategy, stats=stats)
    total = sum(r["v"] for r in records[1:]) * 2**299  # type: ignore[misc]
    assert [r.values for r in rows] == [{"COUNT(*)": 2**300 - 1, "SUM(B.v)": total}] * 100
    assert stats["kernel"]["lanes"] >= 7


def test_instances_whose_entries_expired_are_freed_and_reused() -> None:
    """A driver's rows are freed once its entries leave the open windows, and a new
    driver reuses them from a clean state (G starts again at the identity)."""
    window = "WITHIN 10 s SLIDE 1 s"
    text = (
        f"q1: RETURN driver, COUNT(*) PATTERN SEQ(A, B+) WHERE [driver] GROUP-BY driver {window};"
    )
    records = []
    for d in range(6):  # each driver alone in its 30 s, after the previous one's windows
        t = 30 * d
        records += [
            {"type": "A", "time": t, "driver": d},
            {"type": "B", "time": t + 1, "driver": d},
            {"type": "B", "time": t + 2, "driver": d},
        ]
    plans = compile_workload(parse(text))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(klazy, "LAZY_MIN_WINDOWS", 10)
        runner = Runner(plans, "hamlet")
        assert runner.compiled.prog.q_lazy.tolist() == [1]
        rows = fed_in_cuts(runner, records, [3, 6, 9, 12, 15])
    assert canon(rows) == canon(_run(text, records, "twostep"))
    assert len(runner.compiled._inst_key) <= 2  # (rows of drivers gone were reused)
    counts = {r.values["COUNT(*)"] for r in rows}
    assert counts == {1, 3}  # SEQ(A, B) in the windows that start after the second B

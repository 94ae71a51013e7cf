"""HAMLET: shared execution equals GRETA and the two-step reference; the paper's numbers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from helpers import canon, run_queries, stream
from trendagg.engine import run_strategy
from trendagg.io import from_records
from trendagg.language import ast, parse
from trendagg.optimizer.candidates import analyze
from trendagg.optimizer.cost import benefit, nonshared_cost, shared_cost
from trendagg.plan.compile import compile_workload
from workloads import shared_cases

SHARING = ["hamlet", "hamlet-static"]


def run(
    text: str, records: list[dict[str, object]], strategy: str, log: bool = False
) -> tuple[list[Any], Any]:
    plans = compile_workload(parse(text))
    stats: dict[str, Any] = {}
    # the Python HAMLET executor and its counters (the kernel has tests of its own)
    rows = run_strategy(
        plans,
        from_records(records).events,
        strategy,
        stats=stats,
        log=log,
        compiled=False,
    )
    compiled = run_strategy(plans, from_records(records).events, strategy)
    assert canon(compiled) == canon(rows)
    return rows, stats.get("hamlet")


def counts(rows: list[Any]) -> dict[str, object]:
    return {r.query: r.values["COUNT(*)"] for r in rows}


@given(shared_cases(min_queries=4, max_queries=8, max_events=40, max_time=30))
def test_hamlet_equals_greta_on_longer_bursts(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    queries, events = case
    expected = canon(run_queries(queries, events, "greta", compiled=False))
    for compiled in (False, True):
        for strategy in ("hamlet-static", "hamlet"):
            rows = run_queries(queries, events, strategy, compiled=compiled)
            assert canon(rows) == expected, (strategy, compiled)


# -- the paper's numbers ---------------------------------------------------------------


def test_benefits_of_equations_8_to_10() -> None:
    assert shared_cost(b=4, n=7, s_p=1, s_c=1, k=2, g=4, t=2) == 44
    assert nonshared_cost(b=4, n=7, k=2) == 56
    assert benefit(b=4, n=7, s_p=1, s_c=1, k=2, g=4, t=2) == 12  # Eq. 8: share
    assert shared_cost(b=4, n=11, s_p=2, s_c=1, k=2, g=8, t=2) == 120
    assert benefit(b=4, n=11, s_p=2, s_c=1, k=2, g=8, t=2) == -32  # Eq. 9: split
    assert benefit(b=4, n=15, s_p=1, s_c=1, k=2, g=4, t=2) == 44  # Eq. 10: merge


FIGURE_4 = """
q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100 s;
q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 100 s;
"""
# graphlets A1 = {a1, a2}, C2 = {c3}, B3 = {b4..b7}, A4 = {a8, a9}, C5 = {c10..c12}, B6 = {b13}
FIGURE_4_STREAM = stream("a1 a2 c3 b4 b5 b6 b7 a8 a9 c10 c11 c12 b13")


@pytest.mark.parametrize("strategy", SHARING)
def test_snapshots_x_and_y_of_tables_3_and_4(strategy: str) -> None:
    rows, stats = run(FIGURE_4, FIGURE_4_STREAM, strategy, log=True)
    shared = [d for d in stats.decisions if d["shared"]]
    assert [d["snapshot"] for d in shared] == [
        {"q1": {0: 2}, "q2": {0: 1}},  # x = sum(A1, q1) = 2, sum(C2, q2) = 1
        {"q1": {0: 34}, "q2": {0: 19}},  # y = x + sum(B3) + sum(A4) = 2 + 15*2 + 2; 1 + 15*1 + 3
    ]
    # Table 3: b4..b7 count x, 2x, 4x, 8x; b13 counts y
    assert counts(rows) == {"q1": 15 * 2 + 34, "q2": 15 * 1 + 19}
    assert stats.shared_bursts == 2 and stats.event_snapshots == 0


def test_event_level_snapshot_z_of_table_5() -> None:
    """The edge (b5, b6) holds for q1 but not for q2 (Figure 5(c)): b6 becomes snapshot z."""
    text = FIGURE_4 + "q2b: RETURN COUNT(*) PATTERN SEQ(C, B+) WHERE B.x < NEXT(B).x WITHIN 100 s;"
    text = text.replace("q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 100 s;", "")
    xs = {"b4": {"x": 1}, "b5": {"x": 3}, "b6": {"x": 2}, "b7": {"x": 4}, "b13": {"x": 9}}
    events = stream("a1 a2 c3 b4 b5 b6 b7 a8 a9 c10 c11 c12 b13", **xs)
    rows, stats = run(text, events, "hamlet-static", log=True)
    first, second = [d for d in stats.decisions if d["shared"]]
    assert first["snapshot"] == {"q1": {0: 2}, "q2b": {0: 1}}  # x
    assert first["event_snapshot_values"] == [
        {"q1": {0: 8}, "q2b": {0: 2}}
    ]  # z = x + b4 + b5; x + b4
    assert second["snapshot"] == {"q1": {0: 34}, "q2b": {0: 15}}  # y of Table 5
    assert counts(rows) == {"q1": 30 + 34, "q2b": (1 + 2 + 2 + 6) + 15}
    assert canon(rows) == canon(run(text, events, "twostep")[0])


# -- the pitfalls found in the authors' code --------------------------------------------


@pytest.mark.parametrize("strategy", SHARING)
def test_kleene_type_first_keeps_trends_across_bursts(strategy: str) -> None:
    text = """
    first: RETURN COUNT(*) PATTERN SEQ(B+, C) WITHIN 100 s;
    other: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100 s;
    """
    rows, stats = run(text, stream("b1 b2 a3 b4 c5"), strategy)
    # first: every non-empty subset of {b1, b2, b4}, then c5; other: (a3, b4)
    assert counts(rows) == {"first": 7, "other": 1}
    assert stats.shared_bursts >= 1


@pytest.mark.parametrize("strategy", SHARING)
def test_sum_counts_the_events_own_value(strategy: str) -> None:
    text = """
    s1: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 100 s;
    s2: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(C, B+) WITHIN 100 s;
    """
    events = stream("a1 c1 b2 b3", b2={"v": 10}, b3={"v": 100})
    rows, _ = run(text, events, strategy)
    # trends (a, b2), (a, b3), (a, b2, b3): SUM = 10 + 100 + 110
    assert {r.query: r.values["SUM(B.v)"] for r in rows} == {"s1": 220, "s2": 220}


@pytest.mark.parametrize("strategy", SHARING)
def test_start_adds_one_only_for_queries_where_the_kleene_type_starts(strategy: str) -> None:
    text = """
    alone: RETURN COUNT(*) PATTERN B+ WITHIN 100 s;
    after: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100 s;
    """
    rows, stats = run(text, stream("a1 b2 b3 b4 b5 b6 b7"), strategy)
    assert counts(rows) == {"alone": 63, "after": 63}
    assert stats.shared_bursts == 1
    rows, stats = run(text, stream("a1 a2 b3 b4 b5 b6"), strategy)
    assert counts(rows) == {"alone": 15, "after": 30}
    assert stats.shared_bursts == 1


@pytest.mark.parametrize("strategy", SHARING)
def test_no_state_leaks_between_windows_or_aliases_between_events(strategy: str) -> None:
    text = """
    w1: RETURN COUNT(*), MIN(B.v), MAX(B.v) PATTERN SEQ(A, B+) WITHIN 10 s;
    w2: RETURN COUNT(*), MIN(B.v), MAX(B.v) PATTERN SEQ(C, B+) WITHIN 10 s SLIDE 5 s;
    """
    events = stream(
        "a1 c1 b2 b3 a11 c11 b12",
        b2={"v": 5},
        b3={"v": 1},
        b12={"v": 9},
    )
    rows, _ = run(text, events, strategy)
    got = sorted(
        (r.query, r.window_start, r.values["COUNT(*)"], r.values["MIN(B.v)"], r.values["MAX(B.v)"])
        for r in rows
    )
    assert got == [
        ("w1", 0, 3, 1, 5),
        ("w1", 10, 1, 9, 9),
        ("w2", -5, 3, 1, 5),
        ("w2", 0, 3, 1, 5),
        ("w2", 5, 1, 9, 9),
        ("w2", 10, 1, 9, 9),
    ]
    again, _ = run(text, events, strategy)
    assert canon(again) == canon(rows)


def test_dynamic_optimizer_stops_sharing_with_a_query_that_multiplies_snapshots() -> None:
    text = """
    p1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100 s;
    p2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 100 s;
    p3: RETURN COUNT(*) PATTERN SEQ(D, B+) WITHIN 100 s;
    picky: RETURN COUNT(*) PATTERN SEQ(E, B+) WHERE B.v % 2 = 0 WITHIN 100 s;
    """
    events = stream("a1 c1 d1 e1") + [{"type": "B", "time": 2 + i, "v": i} for i in range(12)]
    static_rows, static = run(text, events, "hamlet-static", log=True)
    dynamic_rows, dynamic = run(text, events, "hamlet", log=True)
    assert canon(static_rows) == canon(dynamic_rows) == canon(run(text, events, "greta")[0])
    assert static.event_snapshots == 6  # the six odd B events are bound by p1-p3, not by picky
    assert dynamic.event_snapshots == 0
    assert dynamic.decisions[0]["shared"] == ["p1", "p2", "p3"]


def test_workload_analysis_finds_sharable_sets_and_reasons() -> None:
    plans = compile_workload(
        parse(
            """
            a: RETURN COUNT(*) PATTERN SEQ(R, T+) WHERE [driver] WITHIN 10 min;
            b: RETURN COUNT(*) PATTERN SEQ(P, T+, D) WHERE [driver] WITHIN 5 min SLIDE 1 min;
            c: RETURN COUNT(*) PATTERN T+ WHERE [driver] AND T.s < NEXT(T).s WITHIN 10 min;
            d: RETURN COUNT(*) PATTERN SEQ(R, T+) WHERE [rider] WITHIN 10 min;
            e: RETURN COUNT(*) PATTERN SEQ(R, T+) WHERE [T.driver] WITHIN 10 min;
            """
        )
    )
    analysis = analyze(plans)
    assert [(s.type_, s.queries, s.pane) for s in analysis.sets] == [("T", (0, 1, 2), 60)]
    assert analysis.unshared == (3, 4)
    assert analysis.blocked == {(4, "T"): "qualified partition attributes"}
    text = analysis.describe(plans)
    assert "sharable T+ by {a, b, c}" in text
    assert "T -> T (+): {a, b, c, d, e}" in text


@pytest.mark.parametrize("strategy", SHARING)
def test_a_query_with_two_kleene_sub_patterns_shares_each(strategy: str) -> None:
    text = """
    both: RETURN COUNT(*), COUNT(A), SUM(B.v) PATTERN SEQ(A+, B+) WITHIN 100 s;
    on_a: RETURN COUNT(*), MAX(A.v) PATTERN SEQ(C, A+) WITHIN 100 s;
    on_b: RETURN COUNT(*), MIN(B.v) PATTERN SEQ(B+, D) WITHIN 100 s;
    """
    events = stream(
        "c1 a2 a3 a4 b5 b6 b7 d8",
        a2={"v": 1},
        a3={"v": 2},
        a4={"v": 3},
        b5={"v": 4},
        b6={"v": 5},
        b7={"v": 6},
    )
    rows, stats = run(text, events, strategy)
    assert canon(rows) == canon(run(text, events, "twostep")[0])
    assert {r.query: r.values["COUNT(*)"] for r in rows} == {"both": 49, "on_a": 7, "on_b": 7}
    assert stats.shared_bursts == 2  # the A burst with on_a, the B burst with on_b

"""Negation (GRETA Section 5, SEMANTICS "Negation") in the compiled kernel.

A negative sub-pattern runs as a query of its own (its matches' latest start
per window) that signals its parent: leading NOTs block trend starts, trailing
NOTs drop results of their window, NOTs between two items prune the source
vertices of the negated transition through a queue (see
:mod:`trendagg.kernels.lower.negation`). The generated workloads mix the three cases,
nested NOTs, negative sub-patterns with their own sequences, Kleene plus and
predicates, with queries without NOT that share bursts with them; every
strategy on the kernel equals twostep, in one chunk, in chunks of three
events, in Runner cuts with watermarks, and with a pool of queue entries that
starts at one entry and must grow.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_kernels import STRATEGIES, _events, _run, fed_in_cuts

from helpers import canon
from trendagg.engine import Runner
from trendagg.io import from_records
from trendagg.kernels.lower.program import lower
from trendagg.kernels.runtime import arrays
from trendagg.kernels.runtime import executor as kexec
from trendagg.language import parse
from trendagg.optimizer.plan import sharing_plan
from trendagg.plan.compile import compile_workload

NEGATED = [
    "SEQ(A, NOT D, B+)",  # between
    "SEQ(A, B+, NOT D)",  # trailing
    "SEQ(NOT D, A, B+)",  # leading
    "SEQ(NOT D, B+)",  # leading, before a Kleene start
    "SEQ(B+, NOT SEQ(C, D), A)",  # between, a sequence
    "SEQ(A+, NOT SEQ(C, NOT E, D), B)",  # nested
    "(SEQ(A+, NOT SEQ(C, NOT E, D), B))+",  # nested, under +
    "SEQ(A, NOT SEQ(C, D+), B+)",  # a Kleene negative sub-pattern
    "SEQ(B+, NOT C)",  # trailing after a Kleene
    "(SEQ(A, NOT C, B+))+",
]
PLAIN = ["SEQ(A, B+)", "B+", "SEQ(A+, B)", "SEQ(C, B+)"]
AGGREGATES = ["COUNT(B)", "SUM(B.x)", "MIN(B.x)", "MAX(B.x)", "AVG(B.x)", "MIN(A.x)"]


PARTITIONS = [
    ("", ""),
    ("[g]", ""),
    ("[g]", "g"),
    ("[B.g]", ""),  # qualified: the other events (the negated ones too) are wildcards
    ("[g]", "B.h"),
]


@st.composite
def negation_workloads(draw: st.DrawFn) -> tuple[str, list[dict[str, object]]]:
    """Up to four queries, at least one with a NOT, with the same or different
    windows and partitions (so that Kleene bursts are shared with queries without
    NOT), unqualified and qualified partition attributes, local predicates on
    positive and negated variables."""
    lines = []
    n = draw(st.integers(1, 4))
    equivalence, group = draw(st.sampled_from(PARTITIONS))
    same = draw(st.booleans())  # one window for all: the bursts of B are shared
    within = draw(st.integers(3, 12))
    slide = draw(st.integers(1, within))
    for i in range(n):
        pattern = draw(st.sampled_from(NEGATED if i == 0 else NEGATED + PLAIN))
        items = [group] if group else []
        items.append("COUNT(*)")
        for agg in draw(st.lists(st.sampled_from(AGGREGATES), max_size=2, unique=True)):
            if agg[agg.index("(") + 1] in pattern.replace("NOT", ""):
                items.append(agg)
        where = [equivalence] if equivalence else []
        if draw(st.booleans()):
            where.append(f"B.x > {draw(st.integers(0, 3))}")
        negated = [v for v in "CDE" if f"NOT {v}" in pattern or f"NOT SEQ({v}" in pattern]
        if negated and draw(st.booleans()):
            where.append(f"{negated[0]}.x < {draw(st.integers(0, 4))}")
        if not same:
            within = draw(st.integers(3, 12))
            slide = draw(st.integers(1, within))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        by = f" GROUP-BY {group}" if group else ""
        lines.append(
            f"q{i}: RETURN {', '.join(items)} PATTERN {pattern}{clause}{by} "
            f"WITHIN {within} s SLIDE {slide} s;"
        )
        if not same:
            equivalence, group = draw(st.sampled_from(PARTITIONS))
    return "\n".join(lines), _events(draw, "AABBBCDDE", 22, ("g", "h"))


def _assert_compiled_equal_twostep(
    monkeypatch: pytest.MonkeyPatch, text: str, records: list[dict[str, object]]
) -> None:
    plans = compile_workload(parse(text))
    assert sharing_plan(plans, "hamlet").on("python") == []
    expected = canon(_run(text, records, "twostep"))
    for strategy in STRATEGIES:
        assert canon(_run(text, records, strategy)) == expected, strategy
    with monkeypatch.context() as m:
        m.setattr(kexec, "CHUNK", 3)
        m.setattr(arrays, "POOL", 1)  # grows (with a replay) as the queues and logs need
        for strategy in STRATEGIES:
            assert canon(_run(text, records, strategy)) == expected, strategy


@given(negation_workloads())
def test_negation_runs_compiled_and_equals_twostep(
    monkeypatch: pytest.MonkeyPatch, case: tuple[str, list[dict[str, object]]]
) -> None:
    text, records = case
    _assert_compiled_equal_twostep(monkeypatch, text, records)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), cuts=st.lists(st.integers(0, 18), max_size=4))
def test_negation_fed_in_cuts_equals_one_batch(data: st.DataObject, cuts: list[int]) -> None:
    """Watermarks between Runner chunks close windows (a trailing NOT's queued results
    are added to their groups then) and free partitions with their queues."""
    text, records = data.draw(negation_workloads())
    records = sorted(records, key=lambda r: r["time"])  # type: ignore[arg-type, return-value]
    plans = compile_workload(parse(text))
    expected = canon(_run(text, records, "twostep"))
    for strategy in STRATEGIES:
        assert canon(fed_in_cuts(Runner(plans, strategy), records, cuts)) == expected


def _stream(spec: str, **attrs: Any) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for token in spec.split():
        event: dict[str, object] = {"type": token[0].upper(), "time": int(token[1:])}
        event.update(attrs.get(token, {}))
        out.append(event)
    return out


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_between_not_prunes_minimum_and_maximum_as_well(strategy: str) -> None:
    """a1 (x=1) and a5 (x=9) precede b8; d3 lies between a1 and b8 only: the trend
    (a1, b8) is invalid, so MIN(A.x) is a5's 9, not 1; MAX is 9 either way. After the
    prune the minimum is found again from what remains."""
    records = _stream("a1 d3 a5 b8", a1={"x": 1}, a5={"x": 9})
    text = "RETURN COUNT(*), MIN(A.x), MAX(A.x) PATTERN SEQ(A, NOT D, B) WITHIN 10 s"
    (row,) = _run(text, records, strategy)
    assert row.values == {"COUNT(*)": 1, "MIN(A.x)": 9, "MAX(A.x)": 9}
    # without the D, both trends
    (row,) = _run(text, _stream("a1 a5 b8", a1={"x": 1}, a5={"x": 9}), strategy)
    assert row.values == {"COUNT(*)": 2, "MIN(A.x)": 1, "MAX(A.x)": 9}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    ("pattern", "count"),
    [
        # of (a1, b2), (a1, b3), (a2, b3): only d2 lies strictly between a1 and b3
        ("SEQ(A, NOT D, B)", 2),
        ("SEQ(NOT D, A, B)", 3),  # d2 ends at 2: a2 (at 2) may still start
        ("SEQ(A, B, NOT D)", 3),  # d2 starts at b2's time: not after (a1, b2)
    ],
)
def test_ties_with_the_negated_event_do_not_invalidate(
    strategy: str, pattern: str, count: int
) -> None:
    """SEMANTICS: a match must start strictly after the Pi part and end strictly before
    the Pj part (trailing: start strictly after it; leading: end strictly before it)."""
    text = f"RETURN COUNT(*) PATTERN {pattern} WITHIN 10 s"
    records = _stream("a1 a2 d2 b2 b3")
    assert canon(_run(text, records, strategy)) == canon(_run(text, records, "twostep"))
    (row,) = _run(text, records, strategy)
    assert row.values == {"COUNT(*)": count}


def test_negations_of_several_queries_share_registers_and_queues() -> None:
    """The same NOT D (same window, partitioning and predicates) in four queries: one
    register class for their negative queries. q0's and q3's B read A through equal
    queues (same source, negative queries of one class): one class and one queue, and
    one signal per match; q1's trailing NOT changes only its results, so its A and B+
    are q2's; q4's D has a predicate of its own: its B stays apart."""
    patterns = [
        "SEQ(A, NOT D, B+)",
        "SEQ(A, B+, NOT D)",
        "SEQ(A, B+)",
        "SEQ(A, NOT D, B+)",
        "SEQ(A, NOT D, B+) WHERE D.x > 1 AND [g]",
    ]
    text = "\n".join(
        f"q{i}: RETURN COUNT(*) PATTERN {p}{'' if 'WHERE' in p else ' WHERE [g]'} WITHIN 10 s;"
        for i, p in enumerate(patterns)
    )
    plans = compile_workload(parse(text))
    low = lower(plans, sharing_plan(plans, "hamlet"))
    members = sorted(sorted(m) for m in low.class_members)
    assert members == [
        [("q0", "A"), ("q1", "A"), ("q2", "A"), ("q3", "A"), ("q4", "A")],
        [("q0", "B"), ("q3", "B")],
        [("q0", "D"), ("q1", "D"), ("q3", "D")],
        [("q1", "B"), ("q2", "B")],
        [("q4", "B")],
        [("q4", "D")],
    ]
    prog = low.program
    # queues: q0's (read by q0 and q3's B), q1's trailing results, q4's
    assert [plans[q].name for q in prog.nt_q] == ["q0", "q1", "q4"]
    assert int(prog.c_sig_ptr[-1]) == 1 + 1 + 1 + 1  # q0's and q4's D, q1's D and results
    records = _stream("a1 b2 d3 b4 a5 b6 d7 b8")
    for i, r in enumerate(records):
        r["g"] = 0
        r["x"] = i
    expected = canon(_run(text, records, "twostep"))
    assert {r[0] for r in expected} == {"q0", "q1", "q2", "q3", "q4"}
    for strategy in STRATEGIES:
        assert canon(_run(text, records, strategy)) == expected, strategy


def test_the_queue_pool_grows_and_the_results_stay_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many partitions, each with a between-NOT queue of many epochs (a D start between
    every two A's): a pool of one entry grows (replaying the open windows) to hold them."""
    monkeypatch.setattr(arrays, "POOL", 1)
    records: list[dict[str, object]] = []
    for t in range(40):
        for g in range(30):
            records.append({"type": "A", "time": 3 * t, "g": g, "x": (t * g) % 11})
            records.append({"type": "D", "time": 3 * t + 1, "g": g, "x": t % 3})
            records.append({"type": "B", "time": 3 * t + 2, "g": g, "x": g})
    text = (
        "RETURN g, COUNT(*), MIN(A.x), SUM(B.x) PATTERN SEQ(A+, NOT D, B) "
        "WHERE [g] AND D.x > 0 GROUP-BY g WITHIN 30 s SLIDE 10 s"
    )
    expected = canon(_run(text, records, "greta", compiled=False))
    assert len(expected) > 100
    plans = compile_workload(parse(text))
    for strategy in STRATEGIES:
        runner = Runner(plans, strategy)
        rows = runner.feed(from_records(records).events) + runner.finish()
        assert canon(rows) == expected, strategy
        assert runner.compiled is not None and runner.compiled._pool >= 256

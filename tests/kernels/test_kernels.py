"""The compiled engine (numba kernels) equals the two-step reference, exactly.

Workloads here are in the kernel's reach (no NOT, no NEXT predicates;
qualified partition attributes that nest), with several queries sharing a Kleene
type so that HAMLET's shared bursts, its per-burst decisions and the
non-shared replay all run. Counts reach 2**10000: the residue lanes grow by
replaying the open windows. The same checks run with NUMBA_DISABLE_JIT=1 in
a subprocess, so the kernel's Python reading is tested too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import canon
from trendagg.engine import Runner, run_strategy
from trendagg.io import from_records
from trendagg.kernels.lower.program import lower
from trendagg.kernels.runtime import executor as kexec
from trendagg.language import parse
from trendagg.optimizer.plan import sharing_plan
from trendagg.plan.compile import compile_workload

PATTERNS = [
    "SEQ(A, B+)",
    "SEQ(B+, C)",
    "SEQ(A, B+, C)",
    "(SEQ(A+, B))+",
    "B+",
    "SEQ(A+, B+)",
    "(SEQ(C, B+))+",
    "SEQ(A, C)",
]
AGGREGATES = ["COUNT(*)", "COUNT(B)", "SUM(B.x)", "MIN(B.x)", "MAX(B.x)", "AVG(B.x)", "SUM(A.x)"]
STRATEGIES = ["greta", "hamlet", "hamlet-static"]


@st.composite
def workloads(draw: st.DrawFn, decimals: bool = False) -> tuple[str, list[dict[str, object]]]:
    """Up to four queries of PATTERNS and AGGREGATES; with ``decimals``, x holds
    integers and decimals (see :func:`_events`)."""
    n = draw(st.integers(1, 4))
    partition = draw(st.sampled_from(["", "[g]", "[g, h]"]))
    lines = []
    for i in range(n):
        pattern = draw(st.sampled_from(PATTERNS))
        items = ["COUNT(*)"]
        for agg in draw(st.lists(st.sampled_from(AGGREGATES), max_size=3, unique=True)):
            var = agg[agg.index("(") + 1]
            if var in pattern and agg not in items:
                items.append(agg)
        where = [partition] if partition else []
        if "B" in pattern and draw(st.booleans()):
            where.append(f"B.x > {draw(st.integers(0, 3))}")
        group = " GROUP-BY g" if partition and draw(st.booleans()) else ""
        if group:
            items.insert(0, "g")
        within = draw(st.integers(3, 12))
        slide = draw(st.integers(1, within))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        lines.append(
            f"q{i}: RETURN {', '.join(items)} PATTERN {pattern}{clause}{group} "
            f"WITHIN {within} s SLIDE {slide} s;"
        )
    return "\n".join(lines), _events(draw, "ABCD", 16, ("g", "h"), decimals)


def _events(
    draw: st.DrawFn, types: str, most: int, keys: tuple[str, ...], decimals: bool = False
) -> list[dict[str, object]]:
    """Up to ``most`` events of ``types`` at times 0..20, with 0/1 keys and mostly an x;
    with ``decimals``, a third of the x values are decimals (k + 0.5: never equal to an
    integer, so a MIN or MAX is one value of one kind)."""
    events = []
    for _ in range(draw(st.integers(0, most))):
        event: dict[str, object] = {
            "type": draw(st.sampled_from(types)),
            "time": draw(st.integers(0, 20)),
        }
        for key in keys:
            event[key] = draw(st.integers(0, 1))
        if draw(st.integers(0, 5)):
            event["x"] = draw(st.integers(-3, 6))
            if decimals and draw(st.integers(0, 2)) == 0:
                event["x"] += 0.5  # type: ignore[operator]
        events.append(event)
    return events


@st.composite
def merging_workloads(draw: st.DrawFn) -> tuple[str, list[dict[str, object]]]:
    """Queries with one window, partitioning and RETURN clause: states with equal
    prefixes are merged into one register class (hamlet), nested Kleene included."""
    n = draw(st.integers(2, 5))
    partition = draw(st.sampled_from(["", "[g]"]))
    items = ["COUNT(*)", *draw(st.lists(st.sampled_from(AGGREGATES[1:6]), max_size=2, unique=True))]
    within = draw(st.integers(3, 12))
    slide = draw(st.integers(1, within))
    patterns = draw(st.lists(st.sampled_from(PATTERNS[:7]), min_size=n, max_size=n))
    # the same number of registers with different meanings must not be merged
    own = draw(st.booleans())
    predicate = draw(st.sampled_from(["", "B.x > 1", "mixed"]))
    vary = draw(st.booleans())  # windows and partitions that must keep states apart
    lines = []
    for i, pattern in enumerate(patterns):
        if own:
            items = ["COUNT(*)", draw(st.sampled_from(["COUNT(B)", "SUM(B.x)"]))]
        if vary:
            partition = draw(st.sampled_from(["", "[g]"]))
            within = draw(st.integers(3, 4))
            slide = draw(st.integers(1, within))
        where = [partition] if partition else []
        if predicate == "B.x > 1" or (predicate == "mixed" and draw(st.booleans())):
            where.append("B.x > 1")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        lines.append(
            f"q{i}: RETURN {', '.join(items)} PATTERN {pattern}{clause} "
            f"WITHIN {within} s SLIDE {slide} s;"
        )
    return "\n".join(lines), _events(draw, "ABC", 18, ("g",))


QUALIFIED = [
    ("[B.g]", ""),
    ("[g]", "B.h"),
    ("", "B.h"),
    ("[B.g, B.h]", "B.h"),
    ("[g]", ""),  # unqualified, in the same workload
]


@st.composite
def qualified_workloads(draw: st.DrawFn) -> tuple[str, list[dict[str, object]]]:
    """Up to four queries whose partition attributes apply to B only (qualified) or to
    every variable: A and C events are wildcards for the qualified ones, processed in
    a template partition and in every partition that agrees with them."""
    lines = []
    for i in range(draw(st.integers(1, 4))):
        pattern = draw(st.sampled_from(PATTERNS[:7]))
        equivalence, group = draw(st.sampled_from(QUALIFIED))
        items = ["COUNT(*)"]
        for agg in draw(st.lists(st.sampled_from(AGGREGATES), max_size=2, unique=True)):
            if agg[agg.index("(") + 1] in pattern and agg not in items:
                items.append(agg)
        where = [equivalence] if equivalence else []
        if draw(st.booleans()):
            where.append(f"B.x > {draw(st.integers(0, 3))}")
        if group:
            items.insert(0, group)
        within = draw(st.integers(3, 12))
        slide = draw(st.integers(1, within))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        by = f" GROUP-BY {group}" if group else ""
        lines.append(
            f"q{i}: RETURN {', '.join(items)} PATTERN {pattern}{clause}{by} "
            f"WITHIN {within} s SLIDE {slide} s;"
        )
    return "\n".join(lines), _events(draw, "ABCD", 18, ("g", "h"))


def _run(text: str, records: list[dict[str, object]], strategy: str, **kw: Any) -> list[Any]:
    plans = compile_workload(parse(text))
    return run_strategy(plans, from_records(records).events, strategy, **kw)


@settings(max_examples=150, deadline=None)
@given(workloads())
def test_compiled_strategies_equal_twostep(case: tuple[str, list[dict[str, object]]]) -> None:
    text, records = case
    expected = canon(_run(text, records, "twostep"))
    for strategy in STRATEGIES:
        assert canon(_run(text, records, strategy)) == expected, strategy


def assert_equal_twostep_in_chunks(
    monkeypatch: pytest.MonkeyPatch, text: str, records: list[dict[str, object]]
) -> None:
    """Every strategy compiled, and hamlet in Python, equal twostep: in one kernel chunk
    and in kernel chunks of three events (each may bring a kind the others lack)."""
    expected = canon(_run(text, records, "twostep"))
    assert canon(_run(text, records, "hamlet", compiled=False)) == expected
    for strategy in STRATEGIES:
        assert canon(_run(text, records, strategy)) == expected, strategy
    with monkeypatch.context() as m:
        m.setattr(kexec, "CHUNK", 3)
        for strategy in STRATEGIES:
            assert canon(_run(text, records, strategy)) == expected, strategy


@settings(max_examples=150, deadline=None)
@given(workloads(decimals=True))
def test_integers_and_decimals_in_one_attribute_equal_twostep(
    monkeypatch: pytest.MonkeyPatch, case: tuple[str, list[dict[str, object]]]
) -> None:
    """x holds integers and decimals: in one kernel chunk (a mixed column) and, with
    chunks of three events, one kind in a chunk and both across them. Each output keeps
    its kind, as in twostep and the Python engines."""
    text, records = case
    assert_equal_twostep_in_chunks(monkeypatch, text, records)


@settings(max_examples=150, deadline=None)
@given(merging_workloads())
def test_merged_states_equal_twostep(case: tuple[str, list[dict[str, object]]]) -> None:
    text, records = case
    expected = canon(_run(text, records, "twostep"))
    for strategy in STRATEGIES:
        assert canon(_run(text, records, strategy)) == expected, strategy


@settings(max_examples=150, deadline=None)
@given(qualified_workloads())
def test_qualified_partition_attributes_run_compiled_and_equal_twostep(
    monkeypatch: pytest.MonkeyPatch, case: tuple[str, list[dict[str, object]]]
) -> None:
    """Wildcard events (of variables that a qualified attribute does not apply to) go to
    a template partition and to every partition that agrees with them; a partition made
    later starts from the template. In one chunk, and in chunks of three events (new
    partitions born in the middle of a chunk, templates carried across chunks)."""
    text, records = case
    plans = compile_workload(parse(text))
    assert sharing_plan(plans, "hamlet").on("python") == []
    assert_equal_twostep_in_chunks(monkeypatch, text, records)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), cuts=st.lists(st.integers(0, 18), max_size=4))
def test_qualified_partitions_fed_in_cuts_equal_one_batch(
    data: st.DataObject, cuts: list[int]
) -> None:
    """Watermarks between Runner chunks close windows and free partitions and templates
    that no open window needs; a template made again starts empty, as the reference's
    stored events of closed windows are dropped."""
    text, records = data.draw(qualified_workloads())
    records = sorted(records, key=lambda r: r["time"])  # type: ignore[arg-type, return-value]
    plans = compile_workload(parse(text))
    expected = canon(_run(text, records, "twostep"))
    for strategy in STRATEGIES:
        assert canon(fed_in_cuts(Runner(plans, strategy), records, cuts)) == expected


def test_a_wildcard_event_joins_partitions_made_before_and_after_it() -> None:
    """SEQ(A, B+) per B.g: the As have no g. The partition g=1 exists before the A at 1,
    g=2 is made at time 3 (from the template, which saw that A), g=3 at time 9 (its
    window [5, 10) holds only the A at 7)."""
    text = "q: RETURN B.g, COUNT(*) PATTERN SEQ(A, B+) WHERE [B.g] GROUP-BY B.g WITHIN 5 s;"
    records: list[dict[str, object]] = [
        {"type": "B", "time": 0, "g": 1},
        {"type": "A", "time": 1},
        {"type": "B", "time": 2, "g": 1},
        {"type": "B", "time": 3, "g": 2},
        {"type": "B", "time": 4, "g": 2},
        {"type": "A", "time": 7},
        {"type": "B", "time": 8, "g": 1},
        {"type": "B", "time": 9, "g": 3},
    ]
    plans = compile_workload(parse(text))
    assert sharing_plan(plans, "hamlet").routes[0].executor == "compiled"
    rows = [
        (r.window_start, r.group["B.g"], r.values["COUNT(*)"]) for r in _run(text, records, "greta")
    ]
    assert sorted(rows) == [(0, 1, 1), (0, 2, 3), (5, 1, 1), (5, 3, 1)]
    assert canon(_run(text, records, "twostep")) == canon(_run(text, records, "greta"))


def test_states_only_wildcards_reach_are_read_from_the_template() -> None:
    """SEQ(R, P, T+, D) per T.h: R and P (wildcards, before any T) have the same vertices
    in every partition as in their template, which the partitions read (c_tmpl); T and
    D do not (D ends the trends, T binds the qualified variable); a NOT or a NEXT
    condition keeps every class per partition."""
    base = "RETURN T.h, COUNT(*) PATTERN {p} WHERE [g]{w} GROUP-BY T.h WITHIN 5 s"
    cases = [
        ("SEQ(R, P, T+, D)", "", [1, 1, 0, 0]),
        ("SEQ(R+, T+, D)", "", [1, 0, 0]),
        ("SEQ(R, T+, P)", "", [1, 0, 0]),
        ("SEQ(R, NOT X, T+, D)", "", [0, 0, 0, 0]),
        ("SEQ(R, T+, D)", " AND R.x < NEXT(T).x", [0, 0, 0]),
    ]
    for pattern, where, expected in cases:
        plans = compile_workload(parse(base.format(p=pattern, w=where)))
        program = lower(plans, sharing_plan(plans, "greta")).program
        assert program.c_tmpl.tolist()[: len(expected)] == expected, pattern


def test_a_partition_reads_nothing_from_a_freed_template() -> None:
    """The template of g=1 is freed (no A of g=1 in an open window) while the partition
    (g=1, h=5) lives on; the next template, of g=2, takes the freed row. The partition
    must not read the A of g=2 there (a trend A(g=2), B(g=1) would be counted)."""
    text = "q: RETURN B.h, COUNT(*) PATTERN SEQ(A, B+) WHERE [g] GROUP-BY B.h WITHIN 4 s SLIDE 2 s;"
    first: list[dict[str, object]] = [
        {"type": "A", "time": 0, "g": 1},
        {"type": "B", "time": 1, "g": 1, "h": 5},
        {"type": "B", "time": 3, "g": 1, "h": 5},
    ]
    second: list[dict[str, object]] = [
        {"type": "A", "time": 4, "g": 2},
        {"type": "B", "time": 5, "g": 1, "h": 5},
        {"type": "B", "time": 5, "g": 2, "h": 6},
    ]
    plans = compile_workload(parse(text))
    expected = canon(_run(text, first + second, "twostep"))
    assert len(expected) > 0
    for strategy in STRATEGIES:
        runner = Runner(plans, strategy)
        rows = runner.feed(from_records(first).events) + runner.advance(4)
        assert runner.compiled is not None and runner.compiled.low.program.c_tmpl[0] == 1
        rows += runner.feed(from_records(second).events) + runner.finish()
        assert canon(rows) == expected, strategy


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("[A.g, B.g]", "one partition attribute name for two variables"),
        ("[A.g] GROUP-BY B.h", "no positive variable has every partition attribute"),
    ],
)
def test_product_partitions_stay_on_the_reference_engine(where: str, reason: str) -> None:
    """Partitions that are products of values (no positive variable has every attribute)
    are the reference engine's: the plan says why."""
    ret = "B.h, COUNT(*)" if "B.h" in where else "COUNT(*)"
    plans = compile_workload(parse(f"RETURN {ret} PATTERN SEQ(A, B+) WHERE {where} WITHIN 5 s"))
    route = sharing_plan(plans, "hamlet").routes[0]
    assert route.executor == "python" and reason in route.reason


def test_equal_prefixes_share_one_register_class() -> None:
    text = "\n".join(
        f"q{i}: RETURN COUNT(*), SUM(B.x) PATTERN {p} WHERE [g] WITHIN 10 s;"
        for i, p in enumerate(["SEQ(A, B+)", "SEQ(A, B+, C)", "SEQ(A, B+, D)", "(SEQ(A+, B))+"])
    )
    plans = compile_workload(parse(text))
    merged = lower(plans, sharing_plan(plans, "hamlet-static")).program
    alone = lower(plans, sharing_plan(plans, "greta")).program
    # A and B+ of the first three queries: one class each; nested Kleene never merged
    assert len(alone.c_A) == 2 + 3 + 3 + 2
    assert len(merged.c_A) == 2 + 1 + 1 + 2
    assert merged.c_end_ptr[-1] == len(plans)  # every query's END emits its results


@pytest.mark.parametrize("decimals", [False, True])
@settings(max_examples=60, deadline=None)
@given(data=st.data(), cuts=st.lists(st.integers(0, 16), max_size=4))
def test_chunks_and_watermarks_equal_one_batch(
    decimals: bool, data: st.DataObject, cuts: list[int]
) -> None:
    """Any cuts into Runner chunks, with watermarks between them; with ``decimals``, a
    chunk of integers and one of decimals make the kernel lay its program out again."""
    text, records = data.draw(workloads(decimals=decimals))
    records = sorted(records, key=lambda r: r["time"])  # type: ignore[arg-type, return-value]
    plans = compile_workload(parse(text))
    expected = canon(_run(text, records, "twostep"))
    assert canon(fed_in_cuts(Runner(plans, "hamlet"), records, cuts)) == expected


def fed_in_cuts(runner: Runner, records: list[dict[str, object]], cuts: list[int]) -> list[Any]:
    """The rows of ``runner`` fed ``records`` (in time order) in chunks cut at ``cuts``,
    advanced to the next chunk's first time between chunks."""
    rows = []
    bounds = sorted({0, len(records), *[min(c, len(records)) for c in cuts]})
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        rows += runner.feed(from_records(records[lo:hi]).events)
        if hi < len(records):
            rows += runner.advance(records[hi]["time"])
    return rows + runner.finish()


def test_many_partitions_created_at_once_and_their_rows_reused() -> None:
    """Thousands of partition instances are made in one go per chunk, with GROUP-BY groups;
    after their windows close their rows are freed and the next chunk's new keys reuse
    them (and make more): every strategy equals the reference engine."""
    text = (
        "q: RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A a, B+) WHERE [d] GROUP-BY g WITHIN 10 s;\n"
        "r: RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE [d, g] WITHIN 20 s SLIDE 10 s;"
    )
    records: list[dict[str, object]] = []
    for t, drivers in ((0, range(3000)), (30, range(2000, 7000)), (60, range(6000, 6100))):
        for d in drivers:
            records.append({"type": "A", "time": t, "d": d, "g": d % 7})
            records.append({"type": "B", "time": t + 1 + d % 3, "d": d, "g": d % 7, "x": d})
    records.sort(key=lambda r: r["time"])  # type: ignore[arg-type, return-value]
    plans = compile_workload(parse(text))
    expected = canon(_run(text, records, "hamlet", compiled=False))
    assert len(expected) > 20
    cuts = [i for i in range(1, len(records)) if records[i]["time"] != records[i - 1]["time"]]
    for strategy in STRATEGIES:
        assert canon(fed_in_cuts(Runner(plans, strategy), records, cuts)) == expected, strategy


def test_a_queries_kernel_is_used() -> None:
    plans = compile_workload(parse("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s"))
    runner = Runner(plans, "hamlet")
    runner.feed(from_records([{"type": "A", "time": 1}]).events)
    assert runner.compiled is not None and runner.executor is None


def _exact_case(n: int) -> tuple[str, list[dict[str, object]], int, int]:
    records: list[dict[str, object]] = [{"type": "A", "time": 0}]
    records += [{"type": "B", "time": i + 1, "v": (i * 7919) % 1000 - 500} for i in range(n)]
    text = (
        "q1: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 100000 s;\n"
        "q2: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 100000 s;"
    )
    # every B is in half of the 2**n - 1 non-empty subsets
    total = sum(r["v"] for r in records[1:]) * 2 ** (n - 1)  # type: ignore[misc]
    return text, records, 2**n - 1, total


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_two_to_the_300_is_exact(strategy: str) -> None:
    text, records, count, total = _exact_case(300)
    stats: dict[str, Any] = {}
    rows = _run(text, records, strategy, stats=stats)
    assert [r.values for r in rows] == [{"COUNT(*)": count, "SUM(B.v)": total}] * 2
    assert stats["kernel"]["lanes"] >= 7  # 300 bits do not fit fewer primes below 2**50


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_10000_event_burst_is_exact(strategy: str) -> None:
    text, records, count, total = _exact_case(10_000)
    stats: dict[str, Any] = {}
    rows = _run(text, records, strategy, stats=stats)
    assert [r.values for r in rows] == [{"COUNT(*)": count, "SUM(B.v)": total}] * 2
    if strategy == "hamlet-static":
        assert stats["kernel"]["shared_bursts"] >= 1


def test_the_dynamic_optimizer_shares_long_bursts_of_many_queries() -> None:
    prefixes = "ACDEFGHIJK"
    text = "\n".join(
        f"q{i}: RETURN COUNT(*) PATTERN SEQ({p}, B+) WITHIN 1000 s;" for i, p in enumerate(prefixes)
    )
    records: list[dict[str, object]] = [{"type": p, "time": i} for i, p in enumerate(prefixes)]
    records += [{"type": "B", "time": 20 + i} for i in range(30)]
    stats: dict[str, Any] = {}
    rows = _run(text, records, "hamlet", stats=stats)
    assert canon(rows) == canon(_run(text, records, "greta", compiled=False))
    assert rows[0].values["COUNT(*)"] == 2**30 - 1
    # the burst of 29 events is shared (the last event, held back to the end, is its own)
    assert stats["kernel"]["shared_bursts"] >= 1
    # for two queries, a one event burst does not pay for the coefficients: replayed
    two = "\n".join(text.splitlines()[:2])
    sparse = [r for r in records if r["type"] in "AC"] + [{"type": "B", "time": 100}]
    stats = {}
    _run(two, sparse, "hamlet", stats=stats)
    assert stats["kernel"]["shared_bursts"] == 0 < stats["kernel"]["bursts"]
    # for ten it does (the cost model, calibrated on the rideshare benchmark)
    stats = {}
    sparse = [r for r in records if r["type"] != "B"] + [{"type": "B", "time": 100}]
    _run(text, sparse, "hamlet", stats=stats)
    assert stats["kernel"]["shared_bursts"] == stats["kernel"]["bursts"] > 0


REVIEW = """
q1: RETURN COUNT(*), MAX(B.x) PATTERN SEQ(A, B+) WHERE B.x > 1 WITHIN 20 s;
q2: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 20 s;
q3: RETURN SUM(B.x) PATTERN SEQ(C, B+) WITHIN 20 s;
q4: RETURN COUNT(*) PATTERN SEQ(D, B+, E) WITHIN 20 s SLIDE 10 s;
"""


@pytest.mark.parametrize("strategy", ["hamlet", "hamlet-static"])
def test_the_kernel_shares_a_burst_among_queries_whose_predicates_differ(strategy: str) -> None:
    """The review's workload: q1 binds B only where x > 1, q3 only where B has x,
    q2 and q4 every B. The plan shares B+ among all four, and the kernel runs it
    with one set of coefficients per binding rule ({q1}, {q2, q4}, {q3}): each
    counts the events its rule binds, so a B with x <= 1 or without x extends
    q2's coefficients and not q1's."""
    records: list[dict[str, object]] = [
        {"type": "A", "time": 0},
        {"type": "C", "time": 1},
        {"type": "D", "time": 2},
    ]
    xs = [5, 3, 4, 0, 2, 2, None, 7, 1, 9, 9, 9, 3, 2, 6]
    for i, x in enumerate(xs):
        records.append({"type": "B", "time": 3 + i} | ({} if x is None else {"x": x}))
    records += [{"type": "B", "time": 18, "x": 8}, {"type": "B", "time": 18, "x": 0}]
    records += [{"type": "E", "time": 19}, {"type": "B", "time": 25, "x": 4}]
    plans = compile_workload(parse(REVIEW))
    plan = sharing_plan(plans, strategy)
    assert [len(b.members) for b in plan.bursts] == [4]
    low = lower(plans, plan)
    names = [p.name for p in low.plans]
    ptr, members = low.program.set_q_ptr, low.program.set_q
    sets = [{names[q] for q in members[ptr[b] : ptr[b + 1]]} for b in range(len(ptr) - 1)]
    assert sets == [{"q1"}, {"q2", "q4"}, {"q3"}]
    stats: dict[str, Any] = {}
    rows = _run(REVIEW, records, strategy, stats=stats)
    assert canon(rows) == canon(_run(REVIEW, records, "twostep"))
    kernel = stats["kernel"]
    # each class has three bursts (B at 3..9 and 10..18, a pane of 10 s each; B at 25)
    assert kernel["bursts"] == 9
    if strategy == "hamlet-static":
        assert kernel["shared_bursts"] == 9
    else:  # the dynamic optimizer shares where Eq. 7 pays in the kernel's units
        assert kernel["shared_bursts"] >= 1
    # q1 counts only the 13 Bs with x > 1 in its window, each at its own time
    q1 = {r.window_start: r.values["COUNT(*)"] for r in rows if r.query == "q1"}
    assert q1[0] == 2**13 - 1


def test_the_kernel_logs_its_decision_per_burst() -> None:
    """log=True keeps the kernel's per-burst decisions (what explain prints): one per
    burst, each with its coefficient class, first event and the two costs of Eq. 7
    in the kernel's units; a burst is shared exactly when sharing costs less."""
    records: list[dict[str, object]] = [{"type": "A", "time": 0}, {"type": "D", "time": 1}]
    records += [{"type": "B", "time": 2 + i, "x": i % 3} for i in range(12)]
    records.append({"type": "E", "time": 30})  # (the latest time is a chunk of its own)
    stats: dict[str, Any] = {}
    _run(REVIEW, records, "hamlet", stats=stats, log=True)
    kernel = stats["kernel"]
    decisions = kernel["decisions"]
    assert len(decisions) == kernel["bursts"] > 0
    assert sum(d["shared"] for d in decisions) == kernel["shared_bursts"] > 0
    assert all(d["shared"] == (d["shared_cost"] < d["replay_cost"]) for d in decisions)
    assert {tuple(d["members"]) for d in decisions} == {("q1",), ("q2", "q4"), ("q3",)}
    # q1 binds the Bs with x = 2 only: at 4, 7 (pane 0-10), 10, 13 (pane 10-20)
    q1 = [(d["time"], d["events"]) for d in decisions if d["members"] == ["q1"]]
    assert q1 == [(4, 2), (10, 2)]
    stats = {}
    _run(REVIEW, records, "hamlet", stats=stats)
    assert "decisions" not in stats["kernel"]


def test_lanes_grow_across_small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kexec, "CHUNK", 7)
    text, records, count, total = _exact_case(400)
    stats: dict[str, Any] = {}
    rows = _run(text, records, "hamlet", stats=stats)
    assert [r.values for r in rows] == [{"COUNT(*)": count, "SUM(B.v)": total}] * 2
    assert stats["kernel"]["rebuilds"] >= 1


def test_the_events_kept_for_a_rebuild_hold_only_the_columns_the_queries_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kernel keeps the open windows' events for a rebuild, of the columns its queries
    read only (a stream pickles them into its state each micro-batch): a rebuild from
    them gives the exact rows."""
    from trendagg.kernels.runtime.executor import CompiledExecutor
    from trendagg.optimizer.plan import sharing_plan

    monkeypatch.setattr(kexec, "CHUNK", 7)
    text, records, count, total = _exact_case(400)
    for r in records:
        r["note"], r["w"] = "unread", 1  # (columns no query reads)
    plans = compile_workload(parse(text))
    kernel = CompiledExecutor(plans, sharing_plan(plans, "hamlet"))
    events = from_records(records).events
    assert {"v", "note", "w"} <= set(events.columns)
    rows = kernel.feed(events, None)
    assert kernel.rebuilds >= 1 and kernel._retained
    assert all(set(b.columns) == {"v"} for b in kernel._retained)
    rows += kernel.finish()
    assert [r.values for r in rows] == [{"COUNT(*)": count, "SUM(B.v)": total}] * 2


@pytest.mark.parametrize("chunk", [2, 3, 4])
def test_a_time_group_across_a_kernel_chunk_boundary_runs_once(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """The kernel's chunks never split a time group: a group that crosses a multiple of
    CHUNK ends the chunk before it (or the chunk after it), and the next chunk starts
    where that one ended, so no event runs twice or is skipped."""
    monkeypatch.setattr(kexec, "CHUNK", chunk)
    text = "RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 10 s"
    for times in ([0, 0, 0, 0, 1, 2], [0, 1, 1, 1, 2, 3, 3, 3, 3, 4], [0, 1, 2, 2, 2, 2, 2]):
        records: list[dict[str, object]] = [{"type": "A", "time": times[0]}]
        records += [{"type": "B", "time": t, "v": i + 1} for i, t in enumerate(times[1:])]
        expected = canon(_run(text, records, "twostep"))
        for strategy in STRATEGIES:
            assert canon(_run(text, records, strategy)) == expected, (strategy, times)


def test_float_sums_are_exact_and_rounded_once() -> None:
    records: list[dict[str, object]] = [{"type": "A", "time": 0}]
    records += [{"type": "B", "time": i + 1, "v": 0.1 * (i % 7) + 1e-3} for i in range(80)]
    text = "RETURN SUM(B.v), AVG(B.v), MIN(B.v), MAX(B.v) PATTERN SEQ(A, B+) WITHIN 1000 s"
    assert canon(_run(text, records, "hamlet")) == canon(
        _run(text, records, "greta", compiled=False)
    )


_NO_JIT_SCRIPT = """
import sys
sys.path[:0] = {paths!r}
from hypothesis import given, settings, strategies as st
from test_kernels import workloads, _run, STRATEGIES, _exact_case
from helpers import canon

from test_ranked_values import ranked_workloads
from test_kernels import qualified_workloads
from test_negation import negation_workloads
from test_next import next_workloads

def equal_twostep(cases, n):
    @settings(max_examples=n, deadline=None, database=None)
    @given(cases)
    def check(case):
        text, records = case
        expected = canon(_run(text, records, "twostep"))
        for strategy in STRATEGIES:
            assert canon(_run(text, records, strategy)) == expected, strategy

    check()

equal_twostep(st.booleans().flatmap(lambda decimals: workloads(decimals=decimals)), 25)
equal_twostep(st.sampled_from(["big", "words"]).flatmap(ranked_workloads), 15)
equal_twostep(qualified_workloads(), 10)
equal_twostep(negation_workloads(), 25)
equal_twostep(next_workloads(), 25)
text, records, count, total = _exact_case(120)
for strategy in STRATEGIES:
    rows = _run(text, records, strategy)
    assert [r.values for r in rows] == [{{"COUNT(*)": count, "SUM(B.v)": total}}] * 2
print("ok")
"""


def test_same_results_without_the_jit() -> None:
    here = Path(__file__).resolve()
    paths = [str(here.parent), str(here.parents[1])]  # test_kernels, and helpers
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run(
        [sys.executable, "-c", _NO_JIT_SCRIPT.format(paths=paths)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


def test_lanes_follow_the_kleene_events_not_all_events() -> None:
    # 300 A's and 12 B's in one window: fewer than 300 * 2**12 trends, so one
    # prime (49 bits) holds every register, where counting all events would take 7
    text = "q: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 1000 s;"
    records: list[dict[str, object]] = [{"type": "A", "time": i} for i in range(300)]
    records += [{"type": "B", "time": 400 + i, "v": 1000 + i} for i in range(12)]
    stats: dict[str, Any] = {}
    rows = _run(text, records, "hamlet", stats=stats)
    assert stats["kernel"]["lanes"] == 1
    assert rows[0].values["COUNT(*)"] == 300 * (2**12 - 1)
    assert canon(rows) == canon(_run(text, records, "greta", compiled=False))


KINDS = """
q1: RETURN COUNT(*), SUM(B.v), AVG(B.v), MIN(B.v), MAX(B.v) PATTERN SEQ(A, B+) WITHIN 10 s;
q2: RETURN SUM(B.w) PATTERN SEQ(A, B+) WITHIN 10 s;
"""


def _kinds_case(decimals_first: bool) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Three windows of SEQ(A, B+) with three B's each (each B in 4 of the 7 trends):
    v of integers only, of integers and a decimal, of decimals and an integer; w beyond
    int64, beside a decimal in the second window. With ``decimals_first``, the windows
    come in the other order (times 0, 10, 20 either way). Returns the events and the
    values of each window."""
    windows: list[tuple[list[object], list[object], dict[str, object], object]] = [
        ([2, 3, 5], [2**70, 3, 0], {"SUM(B.v)": 40, "MIN(B.v)": 2, "MAX(B.v)": 5}, 2**72 + 12),
        ([1, 2.5, 4], [2**70, 0.5, 0], {"SUM(B.v)": 30.0, "MIN(B.v)": 1, "MAX(B.v)": 4}, None),
        ([0.5, 1.5, 1], [1, 2, 3], {"SUM(B.v)": 12.0, "MIN(B.v)": 0.5, "MAX(B.v)": 1.5}, 24),
    ]
    if decimals_first:
        windows.reverse()
    records: list[dict[str, object]] = []
    expected: list[dict[str, object]] = []
    for k, (vs, ws, values, w_sum) in enumerate(windows):
        records.append({"type": "A", "time": 10 * k})
        for i, (v, w) in enumerate(zip(vs, ws, strict=True)):
            records.append({"type": "B", "time": 10 * k + 1 + i, "v": v, "w": w})
        total = values["SUM(B.v)"]
        avg = float(total) / 12  # type: ignore[arg-type]
        expected.append({"COUNT(*)": 7, "SUM(B.v)": total, "AVG(B.v)": avg} | values)
        expected.append({"SUM(B.w)": float(4 * (2**70 + 0.5)) if w_sum is None else w_sum})
    return records, expected


@pytest.mark.parametrize("decimals_first", [False, True])
def test_integers_and_decimals_keep_each_windows_kind(
    monkeypatch: pytest.MonkeyPatch, decimals_first: bool
) -> None:
    """A window whose summed values are all integers sums to an integer, one with a
    decimal to a decimal; a MIN or MAX shows the extreme value with its own kind; w
    beyond int64 sums exactly. In one batch, in kernel chunks of two events, and fed
    to a Runner at every cut (one kind, then the other: the kernel lays its program
    out again), every strategy equals twostep and the Python engines; nothing moves
    to Python."""
    records, expected = _kinds_case(decimals_first)
    plans = compile_workload(parse(KINDS))
    twostep = canon(_run(KINDS, records, "twostep"))
    assert canon(_run(KINDS, records, "hamlet", compiled=False)) == twostep
    for strategy in STRATEGIES:
        rows = _run(KINDS, records, strategy)
        by_query = sorted(rows, key=lambda r: (r.window_start, r.query))
        assert [repr(r.values) for r in by_query] == [repr(v) for v in expected], strategy
        assert canon(rows) == twostep
        with monkeypatch.context() as m:
            m.setattr(kexec, "CHUNK", 2)
            assert canon(_run(KINDS, records, strategy)) == twostep, strategy
    for cut in range(1, len(records)):
        runner = Runner(plans, "hamlet")
        rows = runner.feed(from_records(records[:cut]).events)
        rows += runner.feed(from_records(records[cut:]).events)
        rows += runner.finish()
        assert canon(rows) == twostep, cut
        assert runner.executor is None and runner.compiled.low.mixed == {"v", "w"}


def test_a_tie_between_an_integer_and_a_decimal_shows_the_integer() -> None:
    """MIN/MAX of 1 and 1.0 (equal numbers of two kinds) is the integer 1 in the
    kernel, in whichever order they come; the Python engines keep the one they
    met first (README, Semantics)."""
    text = "RETURN MIN(B.v), MAX(B.v), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 10 s"
    for vs in ([1, 1.0], [1.0, 1], [1.0, 3, 1], [1, 0.5, 1.0]):
        records: list[dict[str, object]] = [{"type": "A", "time": 0}]
        records += [{"type": "B", "time": 1 + i, "v": v} for i, v in enumerate(vs)]
        for strategy in STRATEGIES:
            (row,) = _run(text, records, strategy)
            low, high = min(vs), max(vs)
            assert repr(row.values["MIN(B.v)"]) == repr(1 if low == 1 else low), vs
            assert repr(row.values["MAX(B.v)"]) == repr(1 if high == 1 else high), vs
            assert isinstance(row.values["SUM(B.v)"], float)


def test_only_an_attribute_of_both_kinds_gets_hidden_registers() -> None:
    """The common case pays nothing: an attribute of one kind has no hidden register.
    One of both kinds has one per SUM (none for an AVG: a decimal anyway) and one per
    MIN or MAX, minima before maxima; each query's readout says where they live."""
    text = (
        "q: RETURN COUNT(*), SUM(B.v), AVG(B.u), MAX(B.v), MIN(B.v) PATTERN SEQ(A, B+) WITHIN 10 s"
    )
    plans = compile_workload(parse(text))
    sharing = sharing_plan(plans, "hamlet")
    lay = plans[0].layout
    plain = lower(plans, sharing)
    assert (plain.program.q_A[0], plain.program.q_M[0], plain.program.q_nmin[0]) == (
        lay.n_additive,
        2,
        1,
    )
    assert plain.weights == ["v", "u"] and plain.extremes == ["v"]
    both = lower(plans, sharing, frozenset({"v", "u"}))
    assert (both.program.q_A[0], both.program.q_M[0], both.program.q_nmin[0]) == (
        lay.n_additive + 1,
        4,
        2,
    )
    assert both.weights == ["v", "v#decimals", "u"] and both.extremes == ["v", "v#integers"]
    # SUM(B.v) at 2 (count, COUNT(B), SUM(B.v), SUM(B.u)), its decimals after the layout's
    assert both.readouts[0].sums == ((2, 0, lay.n_additive), (3, 2, -1))
    # MIN(B.v) at 0, its integers at 1; MAX(B.v) at 2, its integers at 3
    assert both.readouts[0].extremes == ((0, 0, 1), (2, 0, 3))
    runner = Runner(plans, "hamlet")
    records = [{"type": "A", "time": 0}, {"type": "B", "time": 1, "v": 2, "u": 1.5}]
    runner.feed(from_records(records).events)
    runner.finish()
    assert runner.compiled.low.mixed == frozenset() and runner.compiled.rebuilds <= 1


def test_min_max_beyond_2_53_stays_compiled_and_exact() -> None:
    """Integers beyond 2**53 in a MIN or MAX: float64 cannot tell 2**60 + 1 from 2**60.
    In the first events or in later ones (the attribute switches to ranks and the open
    windows are replayed), the query stays compiled and the result is exact."""
    text = "q: RETURN MAX(B.v), MIN(B.v) PATTERN SEQ(A, B+) WITHIN 100 s;"
    plans = compile_workload(parse(text))
    big: list[dict[str, object]] = [
        {"type": "A", "time": 1},
        {"type": "B", "time": 2, "v": 2**60},
        {"type": "B", "time": 3, "v": 2**60 + 1},
    ]
    rows = _run(text, big, "hamlet")
    assert rows[0].values == {"MAX(B.v)": 2**60 + 1, "MIN(B.v)": 2**60}
    runner = Runner(plans, "hamlet")
    rows = runner.feed(from_records([*big[:1], {"type": "B", "time": 2, "v": 5}]).events)
    rows += runner.feed(from_records(big[1:]).events)
    rows += runner.finish()
    assert [r.values for r in rows] == [{"MAX(B.v)": 2**60 + 1, "MIN(B.v)": 5}]
    assert runner.executor is None and set(runner.compiled._ranks) == {"v"}


def test_only_states_something_reads_keep_registers() -> None:
    """An END without successors keeps no registers (its vertices only add to results);
    an END on a cycle (nested Kleene) is read by the start and keeps them."""
    text = (
        "q0: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE [g] WITHIN 10 s;\n"
        "q1: RETURN COUNT(*) PATTERN (SEQ(A, B))+ WHERE [g] WITHIN 10 s"
    )
    plans = compile_workload(parse(text))
    prog = lower(plans, sharing_plan(plans, "greta")).program
    read = {}
    for qi, plan in enumerate(plans):
        for s, var in enumerate(plan.template.states):
            read[(plan.name, var)] = int(prog.c_read[prog.qs_c[prog.q_soff[qi] + s]])
    assert read == {
        ("q0", "A"): 1,
        ("q0", "B"): 1,
        ("q0", "C"): 0,
        ("q1", "A"): 1,
        ("q1", "B"): 1,
    }


def test_values_are_rebuilt_from_one_lane_or_by_the_crt() -> None:
    """Small values (within the first prime, either sign) are read from lane 0, every
    other by the CRT: both give the integer itself."""
    import numpy as np

    from trendagg.kernels._rns import Moduli

    mod = Moduli(3)
    p = [int(q) for q in mod.p]
    edge = [0, 1, -1, p[0] - 1, -(p[0] - 1), p[0], -p[0], min(p), max(p), -max(p)]
    values = [*edge, 2**100 + 7, -(2**90), 3 * 2**61, *range(-50, 50)]
    table = np.array([[v % q for q in p] for v in values], dtype=np.int64)
    assert mod.values(table) == values


def test_residues_of_small_and_large_values() -> None:
    import numpy as np

    from trendagg.kernels._rns import Moduli, residues_of

    mod = Moduli(3)
    rng = np.random.default_rng(5)
    values = np.concatenate(
        [rng.integers(-300, 300, 500), rng.integers(-(2**62), 2**62, 500), [0, -1, 1]]
    ).astype(np.int64)
    p = mod.p.tolist()
    for scale in ([1, 1, 1], [7, 2**45, 1]):
        out = np.zeros((len(values), 3), dtype=np.int64)
        residues_of(values, np.array(scale, dtype=np.int64), mod.p, mod.pinv, out)
        assert out.tolist() == [
            [int(v) * s % q for s, q in zip(scale, p, strict=True)] for v in values.tolist()
        ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(2, 9), st.integers(1, 5)), min_size=1, max_size=3),
    st.lists(
        st.tuples(st.sampled_from("ABBC"), st.integers(0, 2), st.integers(0, 3)),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([3, 7, 1000]),
)
def test_the_lanes_bound_is_the_largest_need_of_any_window(
    specs: list[tuple[int, int]], steps: list[tuple[str, int, int]], chunk: int
) -> None:
    """The kernel counts each event in its open windows for the lanes' bound, and the
    need it keeps (with the executor's estimate of a chunk before it runs) is a brute
    force's over every window and partition: reps (the B's of the Kleene state) + s1 *
    bitlen(events). Windows whose WITHIN is no multiple of the SLIDE included, and
    SLIDEs longer than WITHIN (an event between two windows is in none); chunks cut the
    stream."""
    text = "\n".join(
        f"q{i}: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] WITHIN {w} s SLIDE {s} s;"
        for i, (w, s) in enumerate(specs)
    )
    records: list[dict[str, object]] = []
    t = 0
    for kind, g, dt in steps:
        t += dt
        records.append({"type": kind, "time": t, "g": g})
    plans = compile_workload(parse(text))
    old = kexec.CHUNK
    kexec.CHUNK = chunk
    try:
        ex = kexec.CompiledExecutor(plans, sharing_plan(plans, "hamlet"))
        ex.feed(from_records(records).events, None)
        ex.finish()
    finally:
        kexec.CHUNK = old
    s1 = int(ex.lim[1])
    best = 0
    for w, s in specs:
        for start in range(-(w // s + 1) * s, t + 1, s):  # every window [start, start + w)
            for g in range(3):
                inside = [r for r in records if r["g"] == g and start <= r["time"] < start + w]
                m = sum(r["type"] in "AB" for r in inside)
                reps = sum(r["type"] == "B" for r in inside)
                if m:
                    best = max(best, reps + s1 * m.bit_length())
    assert ex._need == best

"""GLORIA's shared execution: equal to GRETA and the two-step reference under every plan.

The paper's worked example (spec section 4, E3: Fig. 4, Ex. 3.1-3.2) with its exact
counts and counters, non-shared and shared; hypothesis workloads of SEQ, flat and
nested Kleene queries that share sub-patterns, under the optimizer's plan and under
random valid plans (results never depend on the plan: spec 8.3, X2); chunked and
pickled runs (X3); counts beyond 2**64 (X4). Queries outside GLORIA's class run under
the hamlet plan (``tests/engine/test_equivalence.py`` runs gloria on its general cases).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import canon, stream
from trendagg.engine import Runner, run_strategy
from trendagg.errors import InputError
from trendagg.io import from_records
from trendagg.language import ast, parse
from trendagg.optimizer.plan import GloriaQSet, check_qsets, gloria_blocker, sharing_plan
from trendagg.plan.compile import QueryPlan, binding_rule, compile_query, compile_workload
from workloads import gloria_cases

E3 = (
    "q1: RETURN COUNT(*) PATTERN SEQ(C, SEQ(A, B)+, D) WITHIN 10 s;\n"
    "q2: RETURN COUNT(*) PATTERN SEQ(C, SEQ(A, B)+) WITHIN 10 s;"
)
E3_STREAM = "c0 a1 b2 a3 b4 d5"
UNIT = [("C", "A"), ("A", "B"), ("B", "A")]


def _e3_plan(label: str | None) -> list[GloriaQSet]:
    """(1,2)^label on tran(C,A) and the Kleene unit, (1)^label on tran(B,D); every
    query alone (label None)."""
    if label is None:
        qsets = [GloriaQSet(a, b, (q,), None) for a, b in UNIT for q in ("q1", "q2")]
    else:
        qsets = [GloriaQSet(a, b, ("q1", "q2"), label) for a, b in UNIT]
    return [*qsets, GloriaQSet("B", "D", ("q1",), label)]


def _run(
    text: str, records: list[dict[str, object]], qsets: list[GloriaQSet]
) -> tuple[list[Any], dict[str, Any]]:
    """gloria's rows under ``qsets`` and its reference executor's counters, checked
    equal to greta's, twostep's and the compiled kernel's."""
    plans = compile_workload(parse(text))
    events = from_records(records).events
    plan = sharing_plan(plans, "gloria", qsets=qsets, compiled=False)
    stats: dict[str, Any] = {}
    rows = run_strategy(plans, events, "gloria", plan=plan, stats=stats)
    assert canon(rows) == canon(run_strategy(plans, events, "greta"))
    assert canon(rows) == canon(run_strategy(plans, events, "twostep"))
    compiled = sharing_plan(plans, "gloria", qsets=qsets)
    assert canon(run_strategy(plans, events, "gloria", plan=compiled)) == canon(rows)
    return rows, stats["gloria"]


def test_e3_counts_and_counters_shared_and_not() -> None:
    """E3: q1 = q2 = 4 under every strategy. Shared with snapshots of C, (1,2)^C: the A
    events take 3 propagations (a1 one, a3 two: sp_c0 from c0 and b2) and there are 3
    evaluations (b2, b4 for q2, d5 for q1) and one snapshot (c0); non-shared: 6
    propagations into A (a1: c0 per query; a3: c0 and b2 per query), no evaluation."""
    for strategy in ("greta", "twostep", "hamlet"):
        plans = compile_workload(parse(E3))
        rows = run_strategy(plans, from_records(stream(E3_STREAM)).events, strategy)
        assert {r.query: r.values["COUNT(*)"] for r in rows} == {"q1": 4, "q2": 4}
    rows, shared = _run(E3, stream(E3_STREAM), _e3_plan("C"))
    assert {r.query: r.values["COUNT(*)"] for r in rows} == {"q1": 4, "q2": 4}
    assert shared["shared_by_type"]["A"] == 3
    assert shared["nonshared_propagations"] == 0
    assert shared["evaluations"] == 3
    assert shared["snapshots"] == 1
    _, alone = _run(E3, stream(E3_STREAM), _e3_plan(None))
    assert alone["nonshared_by_type"]["A"] == 6
    assert alone["shared_propagations"] == 0
    assert alone["evaluations"] == alone["snapshots"] == 0


@pytest.mark.parametrize("label", ["C", "A", "B", None])
def test_e3_every_aggregate_under_every_label(label: str | None) -> None:
    """Every aggregate on every side of the shared Kleene unit, under snapshots of each
    type (a label inside the cycle takes a snapshot per iteration), in sliding windows."""
    text = (
        "q1: RETURN COUNT(*), COUNT(A), SUM(B.v), MIN(A.v), MAX(D.v), AVG(C.v) "
        "PATTERN SEQ(C, SEQ(A, B)+, D) WITHIN 6 s SLIDE 2 s;\n"
        "q2: RETURN COUNT(*), COUNT(B), SUM(A.v), MIN(B.v), MAX(C.v), AVG(B.v) "
        "PATTERN SEQ(C, SEQ(A, B)+) WITHIN 6 s SLIDE 2 s;"
    )
    events = stream("c0 a1 b2 c2 a3 b4 a5 d5 b6 d7")
    for i, e in enumerate(events):
        e["v"] = [3, -1, 2.5, 7, 0, 4, -2, 9, 1, 5][i]
    rows, _ = _run(text, events, _e3_plan(label))
    assert {r.query for r in rows} == {"q1", "q2"}


def test_the_optimizers_plan_shares_where_the_rates_say_so() -> None:
    """With E3's transitions frequent (|A| = 5, |B| = 10), GLORIA shares the Kleene
    unit of both queries under the paper's model, all or nothing, and the rows are the
    references'; at rate 1 everywhere, or under the kernel's model (a run's), sharing
    saves nothing: no Q-set is shared and the queries follow the hamlet plan."""
    plans = compile_workload(parse(E3))
    events = from_records(stream(E3_STREAM)).events
    rare_c = {"C": 1.0, "A": 5.0, "B": 10.0, "D": 4.0}
    plan = sharing_plan(plans, "gloria", rates=rare_c, compiled=False, cost_model="paper")
    labels = {(s.source, s.target): (s.queries, s.label) for s in plan.qsets}
    assert labels[("A", "B")][0] == labels[("B", "A")][0] == ("q1", "q2")
    assert labels[("A", "B")][1] == labels[("B", "A")][1] is not None
    assert {r.executor for r in plan.routes} == {"python"}
    rows = run_strategy(plans, events, "gloria", plan=plan)
    assert canon(rows) == canon(run_strategy(plans, events, "greta"))
    apart = sharing_plan(plans, "gloria", rates={t: 1.0 for t in "CABD"})
    assert apart.qsets == ()
    assert {r.executor for r in apart.routes} == {"compiled"}
    # the kernel's model (a run's): for two queries a shared context's work per event
    # costs more than the running totals it saves them
    assert sharing_plan(plans, "gloria", rates=rare_c).qsets == ()


def test_counts_beyond_64_bits_are_exact() -> None:
    """SEQ(A, B+) over one a and 300 b's: 2**300 - 1 trends, shared with snapshots of A
    and of B; SEQ(A, B+, C) with one c after them: the same."""
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000 s;\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 1000 s;"
    )
    records = stream("a0 " + " ".join(f"b{i}" for i in range(1, 301)) + " c301")
    plans = compile_workload(parse(text))
    events = from_records(records).events
    for label in ("A", "B"):
        qsets = [GloriaQSet(a, b, ("q1", "q2"), label) for a, b in [("A", "B"), ("B", "B")]]
        qsets.append(GloriaQSet("B", "C", ("q2",), label))
        plan = sharing_plan(plans, "gloria", qsets=qsets)
        rows = run_strategy(plans, events, "gloria", plan=plan)
        assert {r.query: r.values["COUNT(*)"] for r in rows} == {"q1": 2**300 - 1, "q2": 2**300 - 1}


def _random_plan(plans: list[QueryPlan], data: st.DataObject) -> list[GloriaQSet]:
    """A random valid plan over the queries of GLORIA's class: per transition, the
    queries that may share it exactly (partition attributes, binding rules of both
    types) split into random Q-sets, each labelled with a random type of its queries
    (a single query may also stay non-shared)."""
    eligible = [p for p in plans if gloria_blocker(p) is None]
    groups: dict[tuple[object, ...], list[str]] = {}
    for p in eligible:
        typ = {v: info.type for v, info in p.vars.items()}
        names = tuple(sorted(a.name for a in p.partition_attrs))
        for t in p.template.transitions:
            a, b = typ[t.src], typ[t.dst]
            key = (a, b, names, binding_rule(p, a), binding_rule(p, b))
            groups.setdefault(key, []).append(p.name)
    by_name = {p.name: p for p in eligible}
    whole = data.draw(st.booleans())  # (often: every group one Q-set, the most reuse)
    earliest = data.draw(st.booleans())  # (often: the earliest common type, kept along)
    qsets = []
    for key, names in sorted(groups.items(), key=repr):
        blocks: list[list[str]] = []
        for name in names:
            at = 0 if whole and blocks else data.draw(st.integers(0, len(blocks)))
            if at == len(blocks):
                blocks.append([name])
            else:
                blocks[at].append(name)
        for block in blocks:
            first = by_name[block[0]].template.types
            common = set.intersection(*(set(by_name[q].template.types) for q in block))
            options: list[str | None] = [t for t in first if t in common]
            if len(block) == 1:
                options.append(None)
            label = options[0] if earliest else data.draw(st.sampled_from(options))
            qsets.append(GloriaQSet(str(key[0]), str(key[1]), tuple(sorted(block)), label))
    return qsets


def _check_optimizers_plan(case: tuple[list[ast.Query], list[dict[str, object]]]) -> None:
    queries, events = case
    plans = [compile_query(q) for q in queries]
    read = from_records(events).events
    expected = canon(run_strategy(plans, read, "twostep", trend_limit=500_000))
    assert canon(run_strategy(plans, read, "greta")) == expected
    for compiled in (False, True):
        assert canon(run_strategy(plans, read, "gloria", compiled=compiled)) == expected
    # the optimizer's plan under rates that make sharing pay (rare first types), as the
    # kernel's model weighs it (a run's) and as the paper's does (which shares more)
    rates = {t: float(1 + 3 * i) for i, t in enumerate("GFEDCAB")}
    for compiled, model in ((False, "kernel"), (True, "kernel"), (True, "paper")):
        plan = sharing_plan(plans, "gloria", rates=rates, compiled=compiled, cost_model=model)
        check_qsets(plans, plan.qsets)  # (the optimizer's plan is one that runs exactly)
        assert canon(run_strategy(plans, read, "gloria", plan=plan)) == expected


def _check_random_plan(
    case: tuple[list[ast.Query], list[dict[str, object]]], data: st.DataObject
) -> None:
    queries, events = case
    plans = [compile_query(q) for q in queries]
    read = from_records(events).events
    expected = canon(run_strategy(plans, read, "twostep", trend_limit=500_000))
    qsets = _random_plan(plans, data)
    for compiled in (False, True):  # the reference executor, the kernel's snapshots
        plan = sharing_plan(plans, "gloria", qsets=qsets, compiled=compiled)
        assert canon(run_strategy(plans, read, "gloria", plan=plan)) == expected


# (the 500 examples per property, in CI)
@settings(max_examples=500, deadline=None)
@given(gloria_cases())
def test_gloria_equals_greta_and_twostep_under_the_optimizers_plan(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    _check_optimizers_plan(case)


@settings(max_examples=500, deadline=None)
@given(gloria_cases(), st.data())
def test_gloria_equals_twostep_under_random_valid_plans(
    case: tuple[list[ast.Query], list[dict[str, object]]], data: st.DataObject
) -> None:
    _check_random_plan(case, data)


@settings(max_examples=100, deadline=None)
@given(gloria_cases(max_events=20), st.data())
def test_gloria_in_chunks_pickled_and_advanced_equals_one_batch(
    case: tuple[list[ast.Query], list[dict[str, object]]], data: st.DataObject
) -> None:
    """The streaming contract under a random valid plan that runs every query of
    GLORIA's class on its executor: any chunking, the Runner pickled between chunks
    (plans by reference, as a stream keeps it) and advanced to the next chunk's first
    time, gives the rows of one batch."""
    from trendagg.engine.state import dumps, loads

    queries, events = case
    plans = [compile_query(q) for q in queries]
    read = from_records(sorted(events, key=lambda e: e["time"])).events  # type: ignore[arg-type, return-value]
    qsets = _random_plan(plans, data)
    whole = canon(run_strategy(plans, read, "greta"))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(read)), max_size=4)))
    for compiled in (False, True):
        plan = sharing_plan(plans, "gloria", qsets=qsets, compiled=compiled)
        assert canon(run_strategy(plans, read, "gloria", plan=plan)) == whole
        runner = Runner(plans, "gloria", plan=plan)
        rows: list[Any] = []
        for a, b in zip([0, *cuts], [*cuts, len(read)], strict=True):
            rows += runner.feed(read.take(slice(a, b)))
            fresh = [compile_query(q) for q in queries]
            runner, plans = loads(dumps(runner, plans), fresh), fresh
            if b < len(read):
                rows += runner.advance(read.times[b].item())
        rows += runner.finish()
        assert canon(rows) == whole


PARTING = [
    "SEQ(D, E, F, B+)",
    "SEQ(D, E, B+)",
    "SEQ(D, F, B+)",
    "SEQ(D, E, F, SEQ(A, B)+)",
    "SEQ(D, E, SEQ(A, B)+)",
    "SEQ(E, F, B+, G)",
    "SEQ(E, B+, G)",
]


@st.composite
def parting_cases(draw: st.DrawFn) -> tuple[str, list[dict[str, object]]]:
    """Queries that share a start, part and meet again at a shared Kleene unit (the
    case where only a total every query of a Q-set arrives through may be reused),
    alike in how they bind events (no predicates, attribute-free aggregates) so that
    random plans share a lot; streams that walk their patterns, with ties."""
    patterns = draw(st.lists(st.sampled_from(PARTING), min_size=2, max_size=4, unique=True))
    part = draw(st.sampled_from(["", " WHERE [g]"]))
    lines = []
    for i, pattern in enumerate(patterns):
        counted = draw(st.sampled_from([""] + [t for t in "BDE" if f"{t}," in pattern]))
        items = f"COUNT(*), COUNT({counted})" if counted else "COUNT(*)"
        window = draw(st.sampled_from(["WITHIN 6 s", "WITHIN 8 s SLIDE 2 s"]))
        lines.append(f"q{i + 1}: RETURN {items} PATTERN {pattern}{part} {window};")
    events: list[dict[str, object]] = []
    for _ in range(draw(st.integers(1, 3))):
        text = draw(st.sampled_from(patterns))
        walk = [c for c in text if c in "ABDEFG"]
        t = draw(st.integers(0, 2))
        for kind in walk:
            for _ in range(draw(st.integers(1, 3 if kind in "AB" else 1))):
                t += draw(st.integers(0, 1))
                events.append({"type": kind, "time": t, "g": draw(st.integers(0, 1))})
    return "\n".join(lines), events


@settings(max_examples=150, deadline=None)
@given(parting_cases(), st.data())
def test_queries_that_part_and_meet_equal_twostep_under_random_plans(
    case: tuple[str, list[dict[str, object]]], data: st.DataObject
) -> None:
    text, events = case
    plans = compile_workload(parse(text))
    read = from_records(events).events
    expected = canon(run_strategy(plans, read, "twostep", trend_limit=500_000))
    qsets = _random_plan(plans, data)
    for compiled in (False, True):
        plan = sharing_plan(plans, "gloria", qsets=qsets, compiled=compiled)
        assert canon(run_strategy(plans, read, "gloria", plan=plan)) == expected


def test_snapshots_are_dropped_when_their_windows_close() -> None:
    """A long stream in short windows: the executor's state stays small (snapshots and
    totals of closed windows are dropped) and its rows are GRETA's."""
    from trendagg.reference.gloria import GloriaExecutor

    plans = compile_workload(parse(E3.replace("10 s", "4 s")))
    spec = " ".join(f"{'cabd'[i % 4]}{i}" for i in range(400))
    events = from_records(stream(spec)).events
    plan = sharing_plan(plans, "gloria", qsets=_e3_plan("C"), compiled=False)
    runner = Runner(plans, "gloria", plan=plan)
    rows = runner.feed(events)
    executor = runner.executor
    assert isinstance(executor, GloriaExecutor)
    (rt,) = executor.gloria
    snaps = sum(len(p.snaps) for p in rt.parts.values())
    assert snaps <= 3  # (c events of the open windows only: one every 4 s)
    rows += runner.finish()
    expected = canon(run_strategy(plans, events, "greta"))
    assert canon(rows) == expected
    # the compiled kernel's rings: live snapshots are those of the open windows, and a
    # ring of RING slots never fills (no replay)
    plan = sharing_plan(plans, "gloria", qsets=_e3_plan("C"))
    runner = Runner(plans, "gloria", plan=plan)
    rows = runner.feed(events)
    kernel = runner.compiled
    assert kernel is not None and kernel.gp is not None
    live = kernel.gst.meta[:, 1::2] - kernel.gst.meta[:, 0::2]
    assert int(live.max()) <= 3 and kernel.rebuilds == 0
    rows += runner.finish()
    assert canon(rows) == expected


def test_a_full_ring_of_snapshots_grows_and_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's ring holds RING snapshots per instance and snapshot context: with
    one slot, E3's queries under snapshots of A (a snapshot per A event, several in a
    window) fill it; the run doubles it and replays the open windows, until every
    snapshot of a window fits, with GRETA's rows."""
    from trendagg.kernels.runtime import arrays

    monkeypatch.setattr(arrays, "RING", 1)
    plans = compile_workload(parse(E3))
    spec = " ".join(f"{'cabd'[i % 4] if i % 8 else 'c'}{i}" for i in range(60))
    events = from_records(stream(spec)).events
    runner = Runner(plans, "gloria", plan=sharing_plan(plans, "gloria", qsets=_e3_plan("A")))
    rows = runner.feed(events) + runner.finish()
    kernel = runner.compiled
    assert kernel is not None and kernel.rebuilds >= 1 and kernel._ring >= 2
    assert canon(rows) == canon(run_strategy(plans, events, "greta"))


def test_plans_that_cannot_run_exactly_are_refused() -> None:
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B, C) WITHIN 10 s;\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE B.x > 1 WITHIN 10 s;\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, NOT E, B) WITHIN 10 s;\n"
        "q4: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [g] WITHIN 20 s;\n"
        "q5: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 s;"
    )
    plans = compile_workload(parse(text))

    def refused(qsets: list[GloriaQSet], match: str) -> None:
        with pytest.raises(InputError, match=match):
            sharing_plan(plans, "gloria", qsets=qsets)

    whole = [GloriaQSet("B", "C", ("q1",), None)]
    refused([GloriaQSet("A", "B", ("q1", "q2"), "A"), *whole], "how they bind its events")
    refused([GloriaQSet("A", "B", ("q1", "q4"), "A"), *whole], "differ in partition attributes")
    refused([GloriaQSet("A", "B", ("q3", "q5"), "A")], "q3 is not of GLORIA's class \\(a NOT")
    refused([GloriaQSet("A", "B", ("q1", "q5"), None), *whole], "exactly one query")
    refused([GloriaQSet("A", "B", ("q1",), None)], "q1 has no Q-set on its transition B->C")
    refused([GloriaQSet("A", "B", ("q5",), "C")], "C is not a type of q5")
    refused([GloriaQSet("A", "C", ("q1",), None)], "q1 has no transition A->C")
    refused([GloriaQSet("A", "B", ("q9",), None)], "no query is named q9")
    with pytest.raises(InputError, match="a gloria plan's, not greta's"):
        sharing_plan(plans, "greta", qsets=[GloriaQSet("A", "B", ("q5",), None)])
    # windows may differ within a Q-set (spec 3.4): q1 (10 s) and q5 (5 s) share A->B
    ok = sharing_plan(plans, "gloria", qsets=[GloriaQSet("A", "B", ("q1", "q5"), "A"), *whole])
    assert [r.executor for r in ok.routes] == ["compiled"] * 5
    reference = sharing_plan(
        plans, "gloria", qsets=[GloriaQSet("A", "B", ("q1", "q5"), "A"), *whole], compiled=False
    )
    assert [r.executor for r in reference.routes] == ["python"] * 5


def test_the_plan_routes_gloria_queries_and_runs_the_rest_under_hamlet() -> None:
    """The Q-sets' queries on the kernel's snapshots (or GLORIA's reference executor), a
    NOT query under the hamlet plan (compiled), all equal to the references."""
    text = E3 + "\nq3: RETURN COUNT(*) PATTERN SEQ(C, NOT D, B+) WITHIN 10 s;"
    plans = compile_workload(parse(text))
    events = from_records(stream(E3_STREAM + " b6 c7 b8 a9")).events
    expected = canon(run_strategy(plans, events, "twostep"))
    plan = sharing_plan(plans, "gloria", qsets=_e3_plan("C"))
    assert [r.executor for r in plan.routes] == ["compiled"] * 3
    assert "q1: compiled executor (GLORIA's Q-sets, with snapshots" in plan.describe()
    assert "GLORIA Q-set (q1,q2)^C on C->A on the compiled executor" in plan.describe()
    stats: dict[str, Any] = {}
    rows = run_strategy(plans, events, "gloria", plan=plan, stats=stats)
    assert canon(rows) == expected and any(r.query == "q3" for r in rows)
    # c0 snapshots; c7 joins its START group: both start every trend, in window [0, 10)
    assert stats["snapshot_kernel"]["snapshots"] == stats["snapshot_kernel"]["joined"] == 1
    # with the reference engine asked for, the NOT query still runs compiled
    plan = sharing_plan(plans, "gloria", qsets=_e3_plan("C"), compiled=False)
    assert "GLORIA Q-set (q1,q2)^C on C->A on the python executor" in plan.describe()
    assert canon(run_strategy(plans, events, "gloria", plan=plan)) == expected


def test_queries_that_part_and_meet_again_reuse_only_what_all_arrive_with() -> None:
    """q1 = SEQ(D, E, F, B+) and q2 = SEQ(D, E, B+) share D->E and the unit B+ with
    snapshots of D: at B, q1 arrives from F and q2 from E, each in its own Q-set, so
    neither part is reused for both (its coefficients would give q2 q1's F trends:
    SP[d][q2] exists); both are evaluated."""
    text = (
        "q1: RETURN COUNT(*), MAX(B.x) PATTERN SEQ(D, E, F, B+) WITHIN 10 s;\n"
        "q2: RETURN COUNT(*), MAX(B.x) PATTERN SEQ(D, E, B+) WITHIN 10 s;"
    )
    both = ("q1", "q2")
    qsets = [
        GloriaQSet("D", "E", both, "D"),
        GloriaQSet("E", "F", ("q1",), "D"),
        GloriaQSet("F", "B", ("q1",), "D"),
        GloriaQSet("E", "B", ("q2",), "D"),
        GloriaQSet("B", "B", both, "D"),
    ]
    events = stream("d0 e1 f2 b3 e4 b5 f6 b7", b3={"x": 1}, b5={"x": 2}, b7={"x": 3})
    rows, stats = _run(text, events, qsets)
    # q1: (e1, f2) then B+ over b3 b5 b7: 7, (e1, f6) and (e4, f6) then b7: 1 each
    # q2: e1 then B+ over b3 b5 b7: 7, e4 then b5 b7: 3
    assert {r.query: r.values["COUNT(*)"] for r in rows} == {"q1": 9, "q2": 10}
    assert stats["evaluations"] > 0


# -- minima and maxima on both sides of a snapshot

EXTREMES = (
    "q1: RETURN COUNT(*), MIN(A.v), MAX(A.v), MIN(B.v), MAX(B.v), MIN(C.v), MAX(D.v) "
    "PATTERN SEQ(C, SEQ(A, B)+, D) WITHIN 10 s;\n"
    "q2: RETURN COUNT(*), MIN(A.v), MAX(A.v), MIN(B.v), MAX(B.v), MAX(C.v) "
    "PATTERN SEQ(C, SEQ(A, B)+) WITHIN 10 s;"
)
EXTREME_VALUES = {"c0": 5, "a1": 3, "b2": 8, "a3": 1, "b4": 9, "d5": 4}


@pytest.mark.parametrize("label", ["C", "A", "B"])
def test_minima_and_maxima_fold_both_sides_of_a_snapshot(label: str) -> None:
    """E3's stream with values, every Q-set shared with snapshots of ``label``: each row's
    extremes come from both sides of a snapshot. Snapshots of C hold only C (the rest is
    in the coefficient entries); of A, C and the A and B before it (B after it and D in
    the entries); of B, everything but D: q1's extremes of A and B reach d5 only
    through a snapshot of B, its D only through the entry. By hand, q1's trends are
    c0 a1 b2 d5, c0 a1 b4 d5, c0 a3 b4 d5 and c0 a1 b2 a3 b4 d5, q2's the same without
    d5 (and its prefix c0 a1 b2), so: A in {3, 1}, B in {8, 9}, C 5, D 4."""
    records = stream("c0 a1 b2 a3 b4 d5", **{name: {"v": v} for name, v in EXTREME_VALUES.items()})
    rows, counters = _run(EXTREMES, records, _e3_plan(label))
    got = {r.query: r.values for r in rows}
    both = {"COUNT(*)": 4, "MIN(A.v)": 1, "MAX(A.v)": 3, "MIN(B.v)": 8, "MAX(B.v)": 9}
    assert got == {
        "q1": {**both, "MIN(C.v)": 5, "MAX(D.v)": 4},
        "q2": {**both, "MAX(C.v)": 5},
    }
    # (a B event takes one in each of its Q-sets: (q1,q2) on B->A and (q1) on B->D)
    assert counters["snapshots"] == {"C": 1, "A": 2, "B": 4}[label]


def test_the_fold_of_a_snapshot_and_an_entry_keeps_the_extreme_of_either_side() -> None:
    """The fold itself (``apply_q``, spec 3.3), on registers that a stream cannot single
    out: a MIN or MAX over all trends also sees each event on a trend that needs no fold
    (its shortest trend), so a fold that took the wrong side, or swapped MIN and MAX,
    leaves every row above right. Here q1's registers at a snapshot (count 2) meet an
    entry (3 paths on): counts multiply, and each extreme is the smaller (larger) of the
    two sides, or the one side that has a value."""
    from trendagg.reference.gloria import GloriaRuntime, GloriaStats

    plans = compile_workload(parse(EXTREMES))
    runtime = GloriaRuntime(
        plans, sharing_plan(plans, "gloria", qsets=_e3_plan("B")).qsets, GloriaStats({}, {})
    )
    plan = plans[0]
    mine, theirs = plan.layout, runtime.algebra.layout
    var = plan.type_to_var["A"]
    at_min = mine.min_start + mine.mins.index((var, "v"))
    at_max = mine.max_start + mine.maxs.index((var, "v"))
    entry_min = theirs.min_start + theirs.mins.index(("A", "v"))
    entry_max = theirs.max_start + theirs.maxs.index(("A", "v"))

    def fold(snap_side: tuple[Any, Any], entry_side: tuple[Any, Any]) -> tuple[Any, Any]:
        snap, entry = mine.zero(), theirs.zero()
        snap[0], entry[0] = 2, 3
        snap[at_min], snap[at_max] = snap_side
        entry[entry_min], entry[entry_max] = entry_side
        out = runtime.views[plan.name].apply(entry, snap)
        assert out is not None and out[0] == 6
        return out[at_min], out[at_max]

    assert fold((1, 7), (4, 5)) == (1, 7)  # the snapshot's side holds both extremes
    assert fold((4, 5), (1, 7)) == (1, 7)  # the entry's side holds both
    assert fold((1, 5), (4, 7)) == (1, 7)  # one each
    assert fold((4, 7), (1, 5)) == (1, 7)
    assert fold((None, None), (4, 7)) == (4, 7)  # no A before the snapshot
    assert fold((4, 7), (None, None)) == (4, 7)  # no A after it
    assert fold((None, None), (None, None)) == (None, None)

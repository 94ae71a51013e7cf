"""SHARON's shared execution: equal to GRETA and the two-step reference under every plan.

The paper's worked examples (spec section 6: E2's windows, E3's count combination)
under plans forced to share, the traffic workload under the optimal, the greedy and
the empty plan, and hypothesis workloads of fixed-length SEQ queries that share
sub-sequences, under the optimizer's plan and under random valid plans (results
never depend on the plan). Non-SEQ queries in the same workload run under the
hamlet plan (``tests/engine/test_equivalence.py`` runs sharon on its general cases).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import canon, run_queries, stream
from trendagg.engine import Runner, run_strategy
from trendagg.errors import InputError
from trendagg.io import from_records
from trendagg.language import ast, parse
from trendagg.optimizer.plan import SharedSequence, sequence_qsets, sharing_plan
from trendagg.optimizer.sharon import conflict, seq_query, sharable_patterns
from trendagg.plan.compile import QueryPlan, compile_query, compile_workload
from workloads import seq_cases

EX3 = "a1 a2 b2 c3 b4 b5 d6 c7 d8"  # spec section 6, E3: all in one window


def _run(
    text: str, records: list[dict[str, object]], sequences: list[SharedSequence] | None
) -> list[Any]:
    """sharon's rows under the plan that shares ``sequences`` (None: the optimizer's),
    on the reference executor, checked equal to greta's, twostep's and the kernel's."""
    plans = compile_workload(parse(text))
    events = from_records(records).events
    plan = sharing_plan(plans, "sharon", sequences=sequences, compiled=False)
    rows = run_strategy(plans, events, "sharon", plan=plan)
    compiled = sharing_plan(plans, "sharon", sequences=sequences)
    assert canon(run_strategy(plans, events, "sharon", plan=compiled)) == canon(rows)
    assert canon(rows) == canon(run_strategy(plans, events, "greta"))
    assert canon(rows) == canon(run_strategy(plans, events, "twostep"))
    assert canon(rows) == canon(run_strategy(plans, events, "aseq"))
    return rows


def _counts(rows: list[Any]) -> dict[str, object]:
    return {r.query: r.values["COUNT(*)"] for r in rows}


def test_example_3_count_combination_of_a_shared_suffix() -> None:
    """E3: (C, D) shared by SEQ(A, B, C, D) and SEQ(B, C, D): count(A, B) is 1 at c3 and
    5 at c7, times count(c3, D) = 2 and count(c7, D) = 1: 7; SEQ(B, C, D) = 5. Every
    aggregate on both sides of the shared part equals the references too."""
    text = (
        "q1: RETURN COUNT(*), COUNT(A), SUM(C.v), MIN(A.v), MAX(D.v), AVG(B.v) "
        "PATTERN SEQ(A, B, C, D) WITHIN 10 s;\n"
        "q2: RETURN COUNT(*), SUM(B.v), MIN(D.v), MAX(C.v) PATTERN SEQ(B, C, D) WITHIN 10 s;"
    )
    events = stream(EX3)
    for i, e in enumerate(events):
        e["v"] = [3, -1, 2.5, 7, 0, 4, -2, 9, 1][i]
    for shared in [("C", "D"), ("B", "C", "D"), ("B", "C")]:
        rows = _run(text, events, [SharedSequence(shared, ("q1", "q2"), 0.0)])
        assert _counts(rows) == {"q1": 7, "q2": 5}


def test_aseq_keeps_a_record_per_start_event() -> None:
    """A-Seq (spec section 2.2, Ex. 1 and 2): a record per START; E1's count(A, B) goes
    1 -> 3 at b4; in E2's windows a1 has expired when b5 comes."""
    from trendagg.reference.aseq import ASeqRuntime

    (plan,) = compile_workload(parse("q: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 4 s SLIDE 1 s;"))
    rt = ASeqRuntime(plan)
    for t, batch in [(1, "A"), (2, "AB"), (4, "B")]:
        rt.process(t, [(kind, {}) for kind in batch])
    assert [r.time for r in rt.live[()]] == [1, 2]
    assert [r.vecs[1][0] for r in rt.live[()]] == [2, 1]  # (a1: b2, b4; a2: b4): 3 in all
    rows = rt.advance_to(5)  # windows ending by 5 close: [-1, 3), [0, 4), [1, 5)
    assert [(r.window_start, r.values["COUNT(*)"]) for r in rows] == [(-1, 1), (0, 1), (1, 3)]
    assert [r.time for r in rt.live[()]] == [2]  # (a1 is in no open window: expired)


def test_example_2_windows_of_a_shared_sequence() -> None:
    """E2 with windows [k, k+4) sliding by 1 over a1 a2 b2 b4 b5: SEQ(A, B) counts 1, 1,
    3, 2 in windows -1, 0, 1, 2, here shared by two queries that differ after it."""
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 4 s SLIDE 1 s;\n"
        "q2: RETURN COUNT(*), MAX(C.t) PATTERN SEQ(A, B, C) WITHIN 4 s SLIDE 1 s;"
    )
    events = stream("a1 a2 b2 b4 b5 c5", c5={"t": 1})
    rows = _run(text, events, [SharedSequence(("A", "B"), ("q1", "q2"), 0.0)])
    q1 = {r.window_start: r.values["COUNT(*)"] for r in rows if r.query == "q1"}
    assert q1 == {-1: 1, 0: 1, 1: 3, 2: 2}
    q2 = {r.window_start: r.values["COUNT(*)"] for r in rows if r.query == "q2"}
    assert q2 == {2: 1}  # (a2 b4 c5, in [2, 6) only; a1's matches span more than 4 s)


TRAFFIC = """
q1: RETURN COUNT(*) PATTERN SEQ(OakSt, MainSt, StateSt) WHERE [vehicle] WITHIN 10 s SLIDE 2 s;
q2: RETURN COUNT(*), AVG(WestSt.speed) PATTERN SEQ(OakSt, MainSt, WestSt)
    WHERE [vehicle] WITHIN 10 s SLIDE 2 s;
q3: RETURN COUNT(*), MAX(ParkAve.speed) PATTERN SEQ(ParkAve, OakSt, MainSt)
    WHERE [vehicle] WITHIN 10 s SLIDE 2 s;
q4: RETURN COUNT(*), MIN(ParkAve.speed), SUM(WestSt.speed)
    PATTERN SEQ(ParkAve, OakSt, MainSt, WestSt) WHERE [vehicle] WITHIN 10 s SLIDE 2 s;
q5: RETURN COUNT(*) PATTERN SEQ(MainSt, StateSt) WHERE [vehicle] WITHIN 10 s SLIDE 2 s;
q6: RETURN COUNT(*) PATTERN SEQ(ElmSt, ParkAve) WHERE [vehicle] WITHIN 10 s SLIDE 2 s;
q7: RETURN COUNT(*), MAX(LakeSt.speed) PATTERN SEQ(ElmSt, ParkAve, LakeSt)
    WHERE [vehicle] WITHIN 10 s SLIDE 2 s;
"""
# (a query reads an attribute of an event type it shares where the others sharing it do:
# an event without it would bind in one and not in the other)
STREETS = ["OakSt", "MainSt", "StateSt", "WestSt", "ParkAve", "ElmSt", "LakeSt"]


def _traffic(n: int, seed: int) -> list[dict[str, object]]:
    import random

    rnd = random.Random(seed)
    return [
        {
            "type": rnd.choice(STREETS),
            "time": i // 2,
            "vehicle": rnd.randrange(3),
            "speed": rnd.randrange(10, 60),
        }
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "plan",
    [
        # spec E10: the optimal plan {p2, p4, p6, p7}; q4 shares two sub-sequences
        [
            (("ParkAve", "OakSt"), ("q3", "q4")),
            (("MainSt", "WestSt"), ("q2", "q4")),
            (("MainSt", "StateSt"), ("q1", "q5")),
            (("ElmSt", "ParkAve"), ("q6", "q7")),
        ],
        # E12: GWMIN's {p1, p7}
        [(("OakSt", "MainSt"), ("q1", "q2", "q3", "q4")), (("ElmSt", "ParkAve"), ("q6", "q7"))],
        # E13: an option of p1 beside p4
        [(("OakSt", "MainSt"), ("q1", "q3")), (("MainSt", "WestSt"), ("q2", "q4"))],
        # p3 and p5 (three types each), and none at all
        [(("ParkAve", "OakSt", "MainSt"), ("q3", "q4")), (("MainSt", "StateSt"), ("q1", "q5"))],
        [],
    ],
)
def test_traffic_workload_under_the_papers_plans(plan: list[tuple[Any, Any]]) -> None:
    sequences = [SharedSequence(p, q, 0.0) for p, q in plan]
    rows = _run(TRAFFIC, _traffic(400, 7), sequences)
    assert sum(1 for r in rows if r.query == "q4") > 0  # (the stream makes every query match)


@given(seq_cases())
def test_sharon_equals_greta_and_twostep_under_the_optimizers_plan(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    queries, events = case
    expected = canon(run_queries(queries, events, "twostep", trend_limit=500_000))
    assert canon(run_queries(queries, events, "greta")) == expected
    for compiled in (False, True):
        assert canon(run_queries(queries, events, "sharon", compiled=compiled)) == expected
    assert canon(run_queries(queries, events, "aseq")) == expected  # (SHARON's baseline)


def _random_plan(plans: list[QueryPlan], data: st.DataObject) -> list[SharedSequence]:
    """A random valid SHARON plan: candidates (or options of them: two or more of their
    queries) drawn in a random order, each kept if it conflicts with none kept."""
    queries = [q for q in (seq_query(p) for p in plans) if q is not None]
    by_name = {q.name: q for q in queries}
    candidates = sharable_patterns(queries)
    order = data.draw(st.permutations(range(len(candidates))))
    kept: list[Any] = []
    for i in order[: data.draw(st.integers(0, len(candidates)))]:
        c = candidates[i]
        names = data.draw(st.lists(st.sampled_from(c.queries), min_size=2, unique=True))
        option = type(c)(c.pattern, tuple(sorted(names)), c.key)
        if not any(conflict(option, other, by_name) for other in kept):
            kept.append(option)
    return [SharedSequence(c.pattern, c.queries, 0.0) for c in kept]


@given(seq_cases(), st.data())
def test_sharon_equals_greta_under_random_valid_plans(
    case: tuple[list[ast.Query], list[dict[str, object]]], data: st.DataObject
) -> None:
    queries, events = case
    plans = [compile_query(q) for q in queries]
    read = from_records(events).events
    expected = canon(run_strategy(plans, read, "greta"))
    sequences = _random_plan(plans, data)
    for compiled in (False, True):  # the reference executor, the kernel's snapshots
        plan = sharing_plan(plans, "sharon", sequences=sequences, compiled=compiled)
        assert canon(run_strategy(plans, read, "sharon", plan=plan)) == expected


@given(seq_cases(), st.data())
def test_a_sharon_plan_as_gloria_qsets_runs_exactly_on_glorias_executor(
    case: tuple[list[ast.Query], list[dict[str, object]]], data: st.DataObject
) -> None:
    """SHARON's plan lowered to GLORIA's Q-sets (each shared sub-sequence a Q-set
    labelled with its first type on each of its transitions) gives sharon's rows on
    GLORIA's executor, with a snapshot per START: one executor of snapshots runs both
    policies' plans."""
    queries, events = case
    plans = [compile_query(q) for q in queries]
    read = from_records(events).events
    sequences = _random_plan(plans, data)
    plan = sharing_plan(plans, "sharon", sequences=sequences, compiled=False)
    expected = canon(run_strategy(plans, read, "sharon", plan=plan))
    qsets = sequence_qsets(plans, sequences)
    lowered = sharing_plan(plans, "gloria", qsets=qsets, compiled=False)
    assert canon(run_strategy(plans, read, "gloria", plan=lowered)) == expected
    shared = {(s.label, s.queries) for s in qsets if s.label is not None}
    assert shared == {(seq.pattern[0], tuple(sorted(seq.queries))) for seq in sequences}


def test_a_sharon_plan_as_gloria_qsets() -> None:
    """The Q-sets of a plan sharing the suffix (B, C, D) of q1 and q2: one labelled B on
    each of its transitions; the prefixes' transitions non-shared, one Q-set a query."""
    plans = compile_workload(
        parse(
            "q1: RETURN COUNT(*) PATTERN SEQ(A, B, C, D) WITHIN 10 s;"
            "q2: RETURN COUNT(*) PATTERN SEQ(E, B, C, D) WITHIN 10 s;"
            "q3: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s;"
        )
    )
    qsets = sequence_qsets(plans, [SharedSequence(("B", "C", "D"), ("q1", "q2"), 0.0)])
    assert [(s.source, s.target, s.queries, s.label) for s in qsets] == [
        ("B", "C", ("q1", "q2"), "B"),
        ("C", "D", ("q1", "q2"), "B"),
        ("A", "B", ("q1",), None),
        ("E", "B", ("q2",), None),
    ]
    # in the window [0, 10): q1 A0 B2 C4 D8, A0 B2 C7 D8, A0 B5 C7 D8, A3 B5 C7 D8; q2 the
    # three of E1; q3 A0 B2, A0 B5, A0 B9, A3 B5, A3 B9
    read = from_records([{"type": t, "time": i} for i, t in enumerate("AEBACBECDBCD")]).events
    stats: dict[str, Any] = {}
    lowered = sharing_plan(plans, "gloria", qsets=qsets, compiled=False)
    rows = run_strategy(plans, read, "gloria", plan=lowered, stats=stats)
    assert canon(rows) == canon(run_strategy(plans, read, "twostep"))
    # a snapshot at each START (B2, B5, B9), as SHARON keeps a count per START; C and D
    # propagated once for both queries
    assert stats["gloria"]["snapshots"] == 3
    assert stats["gloria"]["shared_by_type"] == {"C": 3, "D": 2}
    # the compiled kernel, the same: and so does sharon under this plan
    for strategy, plan in (
        ("gloria", sharing_plan(plans, "gloria", qsets=qsets)),
        (
            "sharon",
            sharing_plan(
                plans, "sharon", sequences=[SharedSequence(("B", "C", "D"), ("q1", "q2"), 0.0)]
            ),
        ),
    ):
        kernel: dict[str, Any] = {}
        assert canon(run_strategy(plans, read, strategy, plan=plan, stats=kernel)) == canon(rows)
        assert kernel["snapshot_kernel"]["snapshots"] == 3
        assert kernel["snapshot_kernel"]["shared_propagations"] == 5
    assert {(r.query, r.window_start): r.values["COUNT(*)"] for r in rows} == {
        ("q1", 0): 4,
        ("q2", 0): 3,
        ("q3", 0): 5,
    }


@given(seq_cases(max_events=24), st.data())
def test_sharon_in_chunks_pickled_and_advanced_equals_one_batch(
    case: tuple[list[ast.Query], list[dict[str, object]]], data: st.DataObject
) -> None:
    """The streaming contract: any chunking, the Runner pickled between chunks (plans by
    reference, as a stream keeps it) and advanced to the next chunk's first time, gives
    the rows of one batch."""
    from trendagg.engine.state import dumps, loads

    queries, events = case
    plans = [compile_query(q) for q in queries]
    read = from_records(sorted(events, key=lambda e: e["time"])).events  # type: ignore[arg-type, return-value]
    whole = canon(run_strategy(plans, read, "sharon"))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(read)), max_size=4)))
    runner = Runner(plans, "sharon")
    rows: list[Any] = []
    for a, b in zip([0, *cuts], [*cuts, len(read)], strict=True):
        chunk = read.take(slice(a, b))
        rows += runner.feed(chunk)
        fresh = [compile_query(q) for q in queries]
        runner, plans = loads(dumps(runner, plans), fresh), fresh
        if b < len(read):
            rows += runner.advance(read.times[b].item())
    rows += runner.finish()
    assert canon(rows) == whole


def test_plans_that_cannot_share_exactly_are_refused() -> None:
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B, C) WITHIN 10 s;\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE B.x > 1 WITHIN 10 s;\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 10 s;\n"
        "q4: RETURN COUNT(*) PATTERN SEQ(B, C) WITHIN 20 s;\n"
        "q5: RETURN COUNT(*) PATTERN SEQ(C, A, B) WITHIN 10 s;"
    )
    plans = compile_workload(parse(text))

    def refused(sequences: list[tuple[Any, Any]], match: str) -> None:
        given_ = [SharedSequence(p, q, 0.0) for p, q in sequences]
        with pytest.raises(InputError, match=match):
            sharing_plan(plans, "sharon", sequences=given_)

    refused([(("A", "B"), ("q1", "q2"))], "differ in window, partition attributes or how")
    refused([(("B", "C"), ("q1", "q4"))], "differ in window")
    refused([(("A", "B"), ("q1", "q3"))], "q3 is not of SHARON's class \\(a Kleene plus")
    refused([(("A", "C"), ("q1", "q5"))], "does not have it, contiguously")
    refused([(("A", "B"), ("q1", "q9"))], "no query is named q9")
    refused([(("A",), ("q1", "q5"))], "two or more event types and queries")
    refused([(("A", "B"), ("q1", "q5")), (("B", "C"), ("q1", "q5"))], "overlap in q1")
    with pytest.raises(InputError, match="a sharon plan's, not greta's"):
        sharing_plan(plans, "greta", sequences=[SharedSequence(("A", "B"), ("q1", "q5"), 0.0)])


def test_the_plan_names_what_is_shared_and_runs_the_rest_under_hamlet() -> None:
    """explain's plan: the shared sub-sequence and its queries on the reference engine,
    the Kleene query on the compiled kernel with HAMLET's bursts."""
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B, C, E) WITHIN 10 s;\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(D, B, C, E) WITHIN 10 s;\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s;\n"
        "q4: RETURN COUNT(*) PATTERN SEQ(D, B+) WITHIN 10 s;"
    )
    plans = compile_workload(parse(text))
    plan = sharing_plan(plans, "sharon", cost_model="factor-one")
    # (at rate 1 for every type, sharing (B, C, E) saves 8 - 7 updates per window in the
    # paper's model; not on the kernel: 6 - 13, for two queries)
    assert not sharing_plan(plans, "sharon").sequences
    assert [(s.pattern, s.queries) for s in plan.sequences] == [(("B", "C", "E"), ("q1", "q2"))]
    assert [r.executor for r in plan.routes] == ["compiled"] * 4
    text_of = plan.describe()
    assert "q1: compiled executor (SHARON's sub-sequences, with a snapshot per START)" in text_of
    assert "shared sub-sequence (B, C, E) {q1, q2} on the compiled executor; benefit 1" in text_of
    assert "shared B+ on the compiled executor, dynamic: {q3.B, q4.B}" in text_of
    events = stream("a1 d1 b2 b3 c4 e5 a5 b6 c7 e8")
    read = from_records(events).events
    rows = run_strategy(plans, read, "sharon", plan=plan)
    assert canon(rows) == canon(run_strategy(plans, read, "twostep"))
    assert _counts(rows) == {"q1": 8, "q2": 7, "q3": 8, "q4": 7}
    reference = sharing_plan(plans, "sharon", compiled=False, cost_model="factor-one")
    assert "(B, C, E) {q1, q2} on the python executor" in reference.describe()
    assert canon(run_strategy(plans, read, "sharon", plan=reference)) == canon(rows)


def test_starts_join_a_group_while_the_prefixes_and_windows_stay() -> None:
    """Spec section 3.4's START groups on the kernel: a START joins the last snapshot's
    group while no prefix the snapshot read has changed and it falls in the same
    windows; a prefix event (S5) or a new window (A11) opens a new one. The private
    parts after the shared (A, B) evaluate its total at their own events (C, D), not
    per query at B. Joining A6 to A1's group (S5 ignored) or A11 to A6's (the window
    ignored) would lose q2's trends S5 A6 B7 D8 or count window [0, 10)'s in [10, 20)."""
    plans = compile_workload(
        parse(
            "q1: RETURN COUNT(*) PATTERN SEQ(L, A, B, C) WITHIN 10 s;"
            "q2: RETURN COUNT(*) PATTERN SEQ(S, A, B, D) WITHIN 10 s;"
        )
    )
    times = {"L0": 0, "A1": 1, "A2": 2, "B3": 3, "C4": 4, "S5": 5, "A6": 6, "B7": 7, "D8": 8}
    times |= {"L10": 10, "A11": 11, "A12": 12, "B13": 13, "C14": 14, "D15": 15}
    read = from_records([{"type": n[0], "time": t} for n, t in times.items()]).events
    shared = [SharedSequence(("A", "B"), ("q1", "q2"), 0.0)]
    stats: dict[str, Any] = {}
    plan = sharing_plan(plans, "sharon", sequences=shared)
    rows = run_strategy(plans, read, "sharon", plan=plan, stats=stats)
    assert canon(rows) == canon(run_strategy(plans, read, "twostep"))
    assert canon(rows) == canon(run_strategy(plans, read, "greta"))
    # q1: L0 with A1 or A2, B3, C4 (2); q2: S5 A6 B7 D8 (1); q1 in [10, 20): 2 (A11, A12)
    assert {(r.query, r.window_start): r.values["COUNT(*)"] for r in rows} == {
        ("q1", 0): 2,
        ("q2", 0): 1,
        ("q1", 10): 2,
    }
    kernel = stats["snapshot_kernel"]
    assert (kernel["snapshots"], kernel["joined"]) == (3, 2)  # A1, A6, A11; A2, A12
    # B3 extends A1's group, B7 A1's and A6's, B13 A11's; C4, D8 and C14 evaluate one
    # entry each (A1 and A11 hold no prefix of q2's: nothing to apply of them at D8, D15)
    assert (kernel["shared_propagations"], kernel["evaluations"]) == (4, 3)

"""SHARON's optimizer on the paper's worked examples (spec ../shared/specs/sharon.md,
sections 6 and 10.1) and against brute force on random graphs."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trendagg.optimizer.sharon import (
    AUTHORS,
    FACTOR_ONE,
    Candidate,
    Graph,
    SeqQuery,
    candidate_cost,
    conflict,
    exhaustive,
    expanded_candidates,
    find_plan,
    gwmin,
    gwmin_bound,
    next_level,
    optimize,
    options,
    reduce_graph,
    score_max,
    seq_query,
    sharable_patterns,
    sharon_blocker,
)

# the traffic workload that gives Table 1 (spec section 6)
TRAFFIC = [
    SeqQuery("q1", ("OakSt", "MainSt", "StateSt")),
    SeqQuery("q2", ("OakSt", "MainSt", "WestSt")),
    SeqQuery("q3", ("ParkAve", "OakSt", "MainSt")),
    SeqQuery("q4", ("ParkAve", "OakSt", "MainSt", "WestSt")),
    SeqQuery("q5", ("MainSt", "StateSt")),
    SeqQuery("q6", ("ElmSt", "ParkAve")),
    SeqQuery("q7", ("ElmSt", "ParkAve", "LakeSt")),
]
BY_NAME = {q.name: q for q in TRAFFIC}
# Table 1's candidates, by the paper's numbers
TABLE_1 = {
    "p1": (("OakSt", "MainSt"), ("q1", "q2", "q3", "q4")),
    "p2": (("ParkAve", "OakSt"), ("q3", "q4")),
    "p3": (("ParkAve", "OakSt", "MainSt"), ("q3", "q4")),
    "p4": (("MainSt", "WestSt"), ("q2", "q4")),
    "p5": (("OakSt", "MainSt", "WestSt"), ("q2", "q4")),
    "p6": (("MainSt", "StateSt"), ("q1", "q5")),
    "p7": (("ElmSt", "ParkAve"), ("q6", "q7")),
}
WEIGHTS = {"p1": 25, "p2": 9, "p3": 12, "p4": 15, "p5": 20, "p6": 8, "p7": 18}  # Fig. 4


def _paper_graph() -> tuple[Graph, dict[str, int]]:
    """Fig. 4: Table 1's candidates with the paper's weights and Def. 6's conflicts."""
    names = {Candidate(*pq): n for n, pq in TABLE_1.items()}
    graph = Graph.build(
        sorted(names), lambda c: WEIGHTS[names[c]], lambda a, b: conflict(a, b, BY_NAME)
    )
    return graph, {names[c]: i for i, c in enumerate(graph.vertices)}


def _names(graph: Graph, index: dict[str, int], plan: list[int]) -> set[str]:
    back = {i: n for n, i in index.items()}
    return {back[v] for v in plan}


def test_alg7_finds_exactly_table_1() -> None:
    found = sharable_patterns(TRAFFIC)
    assert {(c.pattern, c.queries) for c in found} == set(TABLE_1.values())
    assert all(len(c.pattern) >= 2 and len(c.queries) >= 2 for c in found)
    # q3 is p3 itself: both sides empty
    assert BY_NAME["q3"].types == TABLE_1["p3"][0]


def test_candidates_do_not_depend_on_the_queries_order() -> None:
    assert sharable_patterns(TRAFFIC[::-1]) == sharable_patterns(TRAFFIC)


def test_a_sub_pattern_under_another_binding_rule_is_not_shared() -> None:
    """The same types with another predicate on a position (or another window) are
    another pattern: sharing them would change a result."""
    a = SeqQuery("a", ("A", "B", "C"), ("A", "B", "C"))
    b = SeqQuery("b", ("A", "B", "D"), ("A", ("B", "x > 1"), "D"))
    c = SeqQuery("c", ("A", "B", "E"), signature=("within", "20"))
    d = SeqQuery("d", ("X", "A", "B"))
    found = sharable_patterns([a, b, c, d])
    assert [(f.pattern, f.queries) for f in found] == [(("A", "B"), ("a", "d"))]


def test_the_conflicts_are_figure_4s_ten_edges() -> None:
    graph, index = _paper_graph()
    edges = {frozenset(_names(graph, index, list(e))) for e in graph.edges()}
    want = {"p1p2", "p1p3", "p1p4", "p1p5", "p1p6", "p2p3", "p2p5", "p3p4", "p3p5", "p4p5"}
    assert edges == {frozenset((e[:2], e[2:])) for e in want}
    degrees = {n: len(graph.adjacent[i]) for n, i in index.items()}
    assert degrees == {"p1": 5, "p2": 3, "p3": 4, "p4": 3, "p5": 4, "p6": 1, "p7": 0}


def test_conflicts_are_overlaps_in_a_common_query() -> None:
    q = {"q": SeqQuery("q", ("A", "B", "C", "D")), "r": SeqQuery("r", ("B", "C", "E"))}
    middle = Candidate(("B", "C"), ("q", "r"))
    assert conflict(Candidate(("A", "B", "C", "D"), ("q",)), middle, q)  # contained in it
    assert conflict(middle, Candidate(("A", "B", "C", "D"), ("q",)), q)  # both ways
    assert not conflict(Candidate(("A", "B"), ("q",)), Candidate(("C", "D"), ("q",)), q)
    # p2 and p4 in q4: disjoint positions, no conflict
    p2, p4 = Candidate(*TABLE_1["p2"]), Candidate(*TABLE_1["p4"])
    assert not conflict(p2, p4, BY_NAME)
    # no common query, no conflict
    assert not conflict(Candidate(*TABLE_1["p6"]), Candidate(*TABLE_1["p7"]), BY_NAME)


def test_cost_model_under_both_conventions() -> None:
    """Spec section 4's hand-computed case: NonShared 71; Shared 90 (factor one) or 57
    (the authors' code); with {q1, q2} only, 44 against 50 or 32."""
    rates = {"A": 2, "B": 3, "C": 1, "D": 4, "E": 5}
    qs = {
        "q1": SeqQuery("q1", ("A", "B", "C")),
        "q2": SeqQuery("q2", ("D", "B", "C")),
        "q3": SeqQuery("q3", ("B", "C", "E")),
    }
    every = Candidate(("B", "C"), ("q1", "q2", "q3"))
    one = candidate_cost(every, qs, rates, FACTOR_ONE)
    assert (one.non_shared, one.shared, one.benefit) == (71, 90, -19)
    authors = candidate_cost(every, qs, rates, AUTHORS)
    assert (authors.non_shared, authors.shared, authors.benefit) == (71, 57, 14)
    two = Candidate(("B", "C"), ("q1", "q2"))
    assert candidate_cost(two, qs, rates, FACTOR_ONE).benefit == -6
    assert candidate_cost(two, qs, rates, AUTHORS).benefit == 12
    with pytest.raises(ValueError, match="unknown convention"):
        candidate_cost(two, qs, rates, "paper")


def test_eq_1_to_8_term_by_term_with_both_sides() -> None:
    """q = (A, B, C, D), p = (B, C): prefix (A), suffix (D); rates 1, 2, 3, 4.
    NonShared = 1 * 10; Comp = 1 * 1 + 4 * 4; Comb = 1 * 2 * 4; Shared = 2 * 5 + 25."""
    qs = {"q": SeqQuery("q", ("A", "B", "C", "D")), "r": SeqQuery("r", ("B", "C"))}
    rates = {"A": 1, "B": 2, "C": 3, "D": 4}
    cost = candidate_cost(Candidate(("B", "C"), ("q", "r")), qs, rates, FACTOR_ONE)
    # r = p: NonShared 2 * 5, nothing computed or combined
    assert cost.non_shared == 10 + 10
    assert cost.shared == 2 * 5 + (1 * 1 + 4 * 4 + 1 * 2 * 4) + 0


def test_non_beneficial_candidates_never_enter_the_graph() -> None:
    graph = Graph.build(
        [Candidate(*TABLE_1["p1"]), Candidate(*TABLE_1["p7"])],
        lambda c: -1 if c.pattern == TABLE_1["p1"][0] else 0,
        lambda a, b: False,
    )
    assert graph.vertices == []


def test_gwmin_bound_pruning_and_the_optimal_plan_of_the_paper() -> None:
    graph, index = _paper_graph()
    assert gwmin_bound(graph) == pytest.approx(38.5667, abs=1e-4)
    assert (
        Fraction(gwmin_bound(graph)).limit_denominator(100)
        == Fraction(25, 6) + Fraction(9, 4) + Fraction(12, 5) + Fraction(15, 4) + 4 + 4 + 18
    )
    everyone = set(range(len(graph.vertices)))
    smax = {n: score_max(graph, i, everyone) for n, i in index.items()}
    assert smax == {"p1": 43, "p2": 50, "p3": 38, "p4": 50, "p5": 46, "p6": 82, "p7": 107}
    reduction = reduce_graph(graph)
    assert _names(graph, index, reduction.pruned) == {"p3"}
    assert _names(graph, index, reduction.free) == {"p7"}
    assert _names(graph, index, reduction.remaining) == {"p1", "p2", "p4", "p5", "p6"}
    search = find_plan(graph, reduction.remaining)
    assert search.visited == 10  # Ex. 10: 10 valid non-empty plans of the reduced graph
    plan = search.plan + reduction.free
    assert _names(graph, index, plan) == {"p2", "p4", "p6", "p7"}
    assert graph.score(plan) == 50
    greedy = gwmin(graph)
    assert _names(graph, index, greedy) == {"p1", "p7"} and graph.score(greedy) == 43
    assert graph.score([index["p2"], index["p4"]]) == 24  # Ex. 5
    assert graph.score([index["p1"]]) == 25


def test_the_search_space_counts_of_examples_9_and_10() -> None:
    graph, index = _paper_graph()
    all_plans = 2 ** len(graph.vertices) - 1
    reduced = [index[n] for n in ("p1", "p2", "p4", "p5", "p6")]
    valid = [
        p for size in range(1, 6) for p in itertools.combinations(reduced, size) if graph.valid(p)
    ]
    assert (all_plans, 2**7 - 2**5, len(valid), 2**5 - len(valid) - 1) == (127, 96, 10, 21)


def test_example_11_level_generation() -> None:
    """v1..v6 with conflicts v4v6 and v5v6: six valid plans of four, one of five."""
    n = 6
    graph = Graph(
        [Candidate((f"v{i}", "x"), ("a", "b")) for i in range(n)],
        [1.0] * n,
        [set() for _ in range(n)],
    )
    for a, b in ((3, 5), (4, 5)):
        graph.adjacent[a].add(b)
        graph.adjacent[b].add(a)
    levels = [[(v,) for v in range(n)]]
    while levels[-1]:
        levels.append(next_level(graph, levels[-1]))
    assert len(levels[3]) == 6 and levels[4] == [(0, 1, 2, 3, 4)]
    for level in levels:
        assert len(level) == len(set(level)) and level == sorted(level)


def test_the_reduction_keeps_an_optimal_plan_when_a_vertex_has_no_conflict() -> None:
    """Spec C2: v1 (10) alone, v2 (5) - v3 (1). The literal Alg. 2 returns 10."""
    graph = Graph(
        [Candidate((v, "x"), ("a", "b")) for v in ("v1", "v2", "v3")],
        [10.0, 5.0, 1.0],
        [set(), {2}, {1}],
    )
    reduction = reduce_graph(graph)
    plan = find_plan(graph, reduction.remaining).plan + reduction.free
    assert sorted(plan) == [0, 1] and graph.score(plan) == 15


@st.composite
def _graphs(draw: st.DrawFn) -> Graph:
    n = draw(st.integers(1, 12))
    weights = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    graph = Graph(
        [Candidate((f"v{i:02d}", "x"), ("a", "b")) for i in range(n)],
        [float(w) for w in weights],
        [set() for _ in range(n)],
    )
    for a, b in itertools.combinations(range(n), 2):
        if draw(st.booleans()):
            graph.adjacent[a].add(b)
            graph.adjacent[b].add(a)
    return graph


@settings(max_examples=150, deadline=None)
@given(_graphs())
def test_reduce_then_find_equals_brute_force(graph: Graph) -> None:
    best = graph.score(exhaustive(graph))
    reduction = reduce_graph(graph)
    plan = find_plan(graph, reduction.remaining).plan + reduction.free
    assert graph.valid(plan) and graph.score(plan) == best
    # per connected component, the same score
    parts: list[int] = []
    for component in graph.components():
        r = reduce_graph(graph, component)
        parts += find_plan(graph, r.remaining).plan + r.free
    assert graph.valid(parts) and graph.score(parts) == best
    # GWMIN's plan is valid and reaches its bound (Eq. 10)
    greedy = gwmin(graph)
    assert graph.valid(greedy) and graph.score(greedy) >= gwmin_bound(graph) - 1e-9
    # the levels are exactly the independent sets of each size
    level = [(v,) for v in range(len(graph.vertices))]
    size = 1
    while level:
        independent = [
            p for p in itertools.combinations(range(len(graph.vertices)), size) if graph.valid(p)
        ]
        assert level == independent
        level, size = next_level(graph, level), size + 1


def test_options_of_example_13_to_15() -> None:
    graph, index = _paper_graph()
    counts = {n: len(options(graph, i, BY_NAME)) for n, i in index.items()}
    assert counts == {"p1": 11, "p2": 1, "p3": 1, "p4": 1, "p5": 1, "p6": 1, "p7": 1}
    assert len(expanded_candidates(graph, BY_NAME) or []) == 17
    assert expanded_candidates(graph, BY_NAME, most=16) is None
    p1 = options(graph, index["p1"], BY_NAME)
    assert Candidate(TABLE_1["p1"][0], ("q1", "q2")) in p1  # Ex. 14
    q13 = Candidate(TABLE_1["p1"][0], ("q1", "q3"))  # Ex. 13
    assert q13 in p1
    for other in ("p4", "p5"):
        assert not conflict(q13, Candidate(*TABLE_1[other]), BY_NAME)
    for other in ("p2", "p3", "p6"):
        assert conflict(q13, Candidate(*TABLE_1[other]), BY_NAME)
    # options of one pattern conflict when their queries meet
    assert conflict(q13, Candidate(TABLE_1["p1"][0], ("q3", "q4")), BY_NAME)
    assert not conflict(q13, Candidate(TABLE_1["p1"][0], ("q2", "q4")), BY_NAME)


def test_optimize_is_deterministic_and_expansion_never_loses() -> None:
    rates = {"OakSt": 2, "MainSt": 3, "StateSt": 1, "WestSt": 1, "ParkAve": 1, "ElmSt": 1}
    rates["LakeSt"] = 4
    for convention in (FACTOR_ONE, AUTHORS):
        plain = optimize(TRAFFIC, rates, expand=False, convention=convention)
        expanded = optimize(TRAFFIC, rates, convention=convention)
        again = optimize(TRAFFIC[::-1], rates, convention=convention)
        assert expanded.candidates == again.candidates and expanded.score == again.score
        assert expanded.score >= plain.score
        for result in (plain, expanded):
            assert result.graph.valid(result.chosen)
            assert result.score == result.graph.score(exhaustive(result.graph))
            assert not result.timed_out


def test_a_plan_past_its_budget_is_gwmins() -> None:
    graph, _ = _paper_graph()
    search = find_plan(graph, range(len(graph.vertices)), budget=0.0, started=-1e9)
    assert search.timed_out and search.plan == gwmin(graph, range(len(graph.vertices)))


def test_queries_of_sharons_class() -> None:
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(
        parse(
            "a: RETURN COUNT(*) PATTERN SEQ(A, B x, C) WHERE [g] AND x.v > 1 WITHIN 10 s;"
            "b: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s;"
            "c: RETURN COUNT(*) PATTERN SEQ(A, NOT D, B) WITHIN 10 s;"
            "d: RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE a.v < NEXT(b).v WITHIN 10 s;"
            "e: RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE [b.g] WITHIN 10 s;"
        )
    )
    blockers = {p.name: sharon_blocker(p) for p in plans}
    assert blockers == {
        "a": None,
        "b": "a Kleene plus in the pattern",
        "c": "a NOT in the pattern",
        "d": "a NEXT condition",
        "e": "qualified partition attributes",
    }
    a = seq_query(plans[0])
    assert a is not None and a.types == ("A", "B", "C")
    assert a.rules[1] == ("B", ("g", "v"), ("x.v > 1",))  # (the partition attribute too)
    assert ("partition", ("g",)) in a.signature
    assert seq_query(plans[1]) is None


def test_rates_are_events_per_window_and_partition_of_a_sample() -> None:
    """Rate(E) = events of E x WITHIN / the sample's span / E's partitions, per signature;
    the optimizer weighs each candidate with its own signature's rates."""
    from trendagg.io import from_records
    from trendagg.language import parse
    from trendagg.optimizer.sharon import estimate_rates
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(
        parse(
            "a: RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE [g] WITHIN 10 s;"
            "b: RETURN COUNT(*) PATTERN SEQ(D, B, C) WHERE [g] WITHIN 10 s;"
            "c: RETURN COUNT(*) PATTERN SEQ(B, C, E) WHERE [g] WITHIN 20 s;"
        )
    )
    records = [{"type": "ABCD"[t % 4], "time": t, "g": (t // 4) % 2} for t in range(40)]
    records.append({"type": "A", "time": 39})  # no partition: no query reads it
    events = from_records(records).events
    rates = estimate_rates(plans, events)
    short, long = (seq_query(p).signature for p in (plans[0], plans[2]))  # type: ignore[union-attr]
    # 10 events of each type over 39 s, in 2 partitions each
    assert rates[short] == pytest.approx({t: 10 / 3.9 / 2 for t in "ABCD"})
    assert rates[long] == pytest.approx({"B": 10 / 1.95 / 2, "C": 10 / 1.95 / 2, "E": 0.0})
    head = estimate_rates(plans, events, sample=20)  # 5 of each over 19 s
    assert head[short]["A"] == pytest.approx(5 / 1.9 / 2)

    queries = [q for q in map(seq_query, plans) if q is not None]
    found = sharable_patterns(queries)
    assert [(c.pattern, c.queries) for c in found] == [(("B", "C"), ("a", "b"))]
    by_name = {q.name: q for q in queries}
    # equal rates r: NonShared 2 * r * 3r, Shared 2r * r + 2 * (r * r + r * r): no benefit
    assert candidate_cost(found[0], by_name, rates[short]).benefit == pytest.approx(0)
    result = optimize(queries, rates, expand=False)
    assert result.graph.vertices == [] and result.non_beneficial == found
    # frequent prefixes: NonShared 2 * 5 * 7 = 70, Shared 1 * 2 + 2 * (5 * 5 + 5 * 1) = 62
    flat = {"A": 5, "B": 1, "C": 1, "D": 5, "E": 1}
    result = optimize(queries, flat, expand=False)
    assert result.graph.weights == [8] and result.candidates == found
    # the same rates given for the signature
    assert optimize(queries, {short: flat}, expand=False).graph.weights == [8]


def test_rates_are_counted_per_binding_filter() -> None:
    """A query that binds a type to some of its events only (a local predicate) is
    weighed with the rate of the events that pass its filter, keyed (type, rule); a
    query that binds them all keeps the type's rate. Here the filter passes one B in
    ten: counted per filter, sharing (B, C) behind frequent prefixes pays; by the type's
    rate it would not."""
    from trendagg.io import from_records
    from trendagg.language import parse
    from trendagg.optimizer.sharon import estimate_rates
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(
        parse(
            "a: RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE [g] AND B.x < 1 WITHIN 10 s;"
            "b: RETURN COUNT(*) PATTERN SEQ(D, B, C) WHERE [g] AND B.x < 1 WITHIN 10 s;"
            "c: RETURN COUNT(*) PATTERN SEQ(E, B, C) WHERE [g] WITHIN 10 s;"
        )
    )
    # per 10 s: 5 A, 5 D, 10 B (one with x < 1), 1 C; one partition; 100 s
    records = []
    for w in range(10):
        t0 = 10 * w
        records += [{"type": "A", "time": t0 + i / 10, "g": 0} for i in range(5)]
        records += [{"type": "D", "time": t0 + 0.5 + i / 10, "g": 0} for i in range(5)]
        records += [{"type": "B", "time": t0 + 1 + i / 10, "g": 0, "x": i} for i in range(10)]
        records += [{"type": "C", "time": t0 + 5, "g": 0}]
    records.append({"type": "E", "time": 99.9, "g": 0})
    events = from_records(records).events
    queries = {q.name: q for q in map(seq_query, plans) if q is not None}
    sig = queries["a"].signature
    rates = estimate_rates(plans, events)[sig]
    rule = queries["a"].rules[1]
    assert rule != queries["c"].rules[1]
    span = 99.9 / 10  # windows in the sample
    assert rates["B"] == pytest.approx(100 / span)
    assert rates[("B", rule)] == pytest.approx(10 / span)  # one B in ten passes
    assert ("B", queries["c"].rules[1]) not in rates  # (no filter: the type's rate)
    found = [c for c in sharable_patterns(list(queries.values())) if set(c.queries) == {"a", "b"}]
    assert [c.pattern for c in found] == [("B", "C")]
    # A, D: 5; C: 1; B: 1 where filtered. NonShared 2 * 5 * 7 = 70; Shared: 1 * 2 for
    # (B, C) once, plus per query 5 * 5 + 5 * 1 * 0 (no suffix: factor 1, so 5 * 1 * 1):
    # 2 + 2 * (25 + 5) = 62
    flat = {t: rates[t] for t in "ABCDE"}
    filtered = candidate_cost(found[0], queries, rates)
    assert filtered.non_shared == pytest.approx(2 * 5 * (5 + 1 + 1), rel=0.02)
    assert filtered.shared == pytest.approx(1 * 2 + 2 * (5 * 5 + 5 * 1), rel=0.02)
    # by the type's rate (the old estimate), B at 10: NonShared 2 * 5 * 16 = 160,
    # Shared 10 * 11 + 2 * (25 + 50) = 260
    unfiltered = candidate_cost(found[0], queries, flat)
    assert unfiltered.non_shared == pytest.approx(160, rel=0.02)
    assert unfiltered.shared == pytest.approx(260, rel=0.02)
    assert filtered.benefit > 0 > unfiltered.benefit

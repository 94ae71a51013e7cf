"""GLORIA's optimizer on the paper's worked examples (spec ../shared/specs/gloria.md,
sections 4 and 8.1: O1-O8) and against brute force, NoPrune, Greedy, no sharing and
the exhaustive oracle on random workloads (section 8.2: P1-P5)."""

from __future__ import annotations

import itertools
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trendagg.optimizer.gloria import GloriaPlan, optimize
from trendagg.optimizer.gloria_graph import (
    Graph,
    Node,
    QSet,
    bell,
    build_graph,
    edge_weight,
    generate,
    prune_nodes,
    qset,
    set_partitions,
)
from trendagg.optimizer.gloria_search import brute_force, path_search
from trendagg.optimizer.gloria_template import (
    GloriaQuery,
    KernelCost,
    PaperCost,
    cost_model,
    gloria_query,
    gloria_template,
    shareable_patterns,
    windows_per_event,
)

# Ex. 4.2 / Fig. 5 / Table 3
E4 = [
    GloriaQuery.of("q1", "SEQ(F, A, B, C, D)"),
    GloriaQuery.of("q2", "SEQ(A, B, C, D)"),
    GloriaQuery.of("q3", "SEQ(E, C, D)"),
]
E4_RATES = {"F": 10, "A": 5, "B": 10, "C": 12, "D": 4, "E": 3}
# the paper's node names -> (pool, plan)
TABLE_3 = {
    "n1": ("Pool(F,A)", "(q1)"),
    "n2": ("Pool(A,B)", "(q1,q2)^A"),
    "n3": ("Pool(A,B)", "(q1),(q2)"),
    "n4": ("Pool(B,C)", "(q1,q2)^A"),
    "n5": ("Pool(B,C)", "(q1,q2)^B"),
    "n6": ("Pool(B,C)", "(q1),(q2)"),
    "n7": ("Pool(E,C)", "(q3)"),
    "n8": ("Pool(C,D)", "(q1,q2)^A,(q3)"),
    "n9": ("Pool(C,D)", "(q1,q2)^B,(q3)"),
    "n10": ("Pool(C,D)", "(q1,q2)^C,(q3)"),
    "n11": ("Pool(C,D)", "(q1),(q2),(q3)"),
    "n12": ("Pool(C,D)", "(q1,q2,q3)^C"),
}
TABLE_3_DS = {
    "n1": 10, "n2": 65, "n3": 65, "n4": 70, "n5": 165, "n6": 165,
    "n7": 3, "n8": 159, "n10": 279, "n11": 444, "n12": 279,
}  # fmt: skip


def _nodes(plan: GloriaPlan) -> dict[str, Node]:
    """The graph's plan nodes by the paper's names (Table 3)."""
    found = {(plan.graph.pools[n.pool].name, n.text()): n for n in plan.graph.nodes}
    return {name: found[key] for name, key in TABLE_3.items() if key in found}


def _plan(plan: GloriaPlan) -> dict[str, str]:
    return {pool.name(): ",".join(s.text() for s in q) for pool, q in plan.pools()}


# ----------------------------------------------------------------------------- O1: Table 3


@pytest.mark.parametrize("node_prune", ["safe", "paper"])
def test_o1_table_3_distances_and_pruning_of_figure_7(node_prune: str) -> None:
    """Fig. 7(a) draws NGP 2 without its frequency condition (spec A7): n5 and n10 are
    built, every d_s is Table 3's, and node pruning drops exactly n5 and n10."""
    plan = optimize(E4, E4_RATES, merge="all", local="any", node_prune=node_prune)
    nodes = _nodes(plan)
    assert {n: nodes[n].d_s for n in TABLE_3_DS} == TABLE_3_DS
    assert "n9" not in nodes  # (its only parent, n5, was pruned first: Ex. 5.10)
    pruned = {n for n, node in nodes.items() if node.pruned is not None}
    assert pruned == {"n5", "n10"}
    assert nodes["n5"].pruned == f"by {nodes['n4'].name} (node pruning)"
    assert nodes["n10"].pruned == f"by {nodes['n8'].name} (node pruning)"
    assert plan.nodes == 9 and plan.built == 11


def test_o1_example_5_7_edge_pruning_into_n5() -> None:
    """n5 is reached from n2 (Local snapshot, 170) and from n3 (Merge, 165): the edge
    from n2 goes and n5.d_s is 165."""
    plan = optimize(E4, E4_RATES, merge="all", local="any")
    nodes = _nodes(plan)
    ways = {
        e.source.name: (e.source.d_s + e.weight, e.pruned)
        for e in plan.graph.incoming[nodes["n5"].index]
    }
    assert ways == {nodes["n2"].name: (170, True), nodes["n3"].name: (165, False)}
    # and n12: from (n4, n7) 279, from (n6, n7) 444, pruned
    into_n12 = {
        e.source.name: (e.source.d_s + e.weight, e.pruned)
        for e in plan.graph.incoming[nodes["n12"].index]
        if e.source.kind == "plan" and e.source.pool == nodes["n4"].pool
    }
    assert into_n12 == {nodes["n4"].name: (240, False), nodes["n6"].name: (405, True)}


def test_o1_noprune_has_twelve_nodes_and_gloria_nine() -> None:
    noprune = optimize(E4, E4_RATES, mode="noprune", merge="all")
    nodes = _nodes(noprune)
    assert sorted(nodes, key=lambda n: int(n[1:])) == list(TABLE_3)
    assert noprune.nodes == noprune.built == 12
    assert nodes["n9"].d_s == 214 and nodes["n5"].d_s == 165  # (spec E4: NoPrune's n9)
    assert all(n.pruned is None for n in noprune.graph.nodes)
    # GLORIA with NGP 2's condition (the default) never builds n10 (|C| > |A|) ...
    gloria = optimize(E4, E4_RATES, merge="all")
    built = _nodes(gloria)
    assert set(built) == set(TABLE_3) - {"n9", "n10"}
    # ... builds n5 by merging n3 (not by relabelling n2 to the more frequent B), prunes it
    assert built["n5"].how == "merge" and built["n5"].pruned is not None
    assert gloria.nodes == 9 and gloria.built == 10


def test_o1_plan_weight_307_or_247_and_case_1() -> None:
    for local in ("any", "rarer"):
        for mode in ("gloria", "noprune"):
            plan = optimize(E4, E4_RATES, mode=mode, merge="all", local=local)
            assert plan.cost == 307 and plan.cases == [1] and plan.exact
            assert _plan(plan) == {
                "Pool(F,A)": "(q1)",
                "Pool(A,B)": "(q1,q2)^A",
                "Pool(B,C)": "(q1,q2)^A",
                "Pool(E,C)": "(q3)",
                "Pool(C,D)": "(q1,q2)^A,(q3)",
            }
    authors = optimize(E4, E4_RATES, merge="all", end="eval_only")
    assert authors.cost == 247 and _plan(authors)["Pool(C,D)"] == "(q1,q2)^A,(q3)"
    # the end edges of n8, n11, n12 (spec E4 (f)): 148, 144, 156; eval only 88, 144, 144
    for end, want in (("prop_eval", (148, 144, 156)), ("eval_only", (88, 144, 144))):
        plan = optimize(E4, E4_RATES, mode="noprune", merge="all", end=end)
        nodes = _nodes(plan)
        (end_node,) = [n for n in plan.graph.nodes if n.kind == "end"]
        got = tuple(plan.graph.weight(nodes[n], end_node) for n in ("n8", "n11", "n12"))
        assert got == want
        assert nodes["n11"].d_s + got[1] == {"prop_eval": 588, "eval_only": 588}[end]
        assert nodes["n12"].d_s + got[2] == {"prop_eval": 435, "eval_only": 423}[end]
    # every query shares with another or runs alone: the non-shared plan costs 588
    assert optimize(E4, E4_RATES, mode="none").cost == 588
    with pytest.raises(ValueError, match="unknown end option"):
        optimize(E4, E4_RATES, end="paper")


def test_p4_check_names_what_makes_a_plan_invalid() -> None:
    """Two plans of consecutive pools that no node generation joins need not fit: here
    Pool(B,C) reuses A snapshots that the non-shared queries of Pool(A,B) never made."""
    plan = optimize(E4, E4_RATES, mode="noprune", merge="all")
    assert plan.check() == []
    nodes = _nodes(plan)
    plan.chosen[nodes["n3"].pool] = nodes["n3"]  # (q1),(q2) on A -> B
    assert plan.check() == [
        "Pool(B,C): (q1,q2)^A reuses A snapshots that q1 did not arrive with",
        "Pool(B,C): (q1,q2)^A reuses A snapshots that q2 did not arrive with",
    ]
    plan.chosen[nodes["n4"].pool] = nodes["n6"]  # then (q1),(q2) on B -> C as well
    assert plan.check() == [
        "Pool(C,D): (q1,q2)^A reuses A snapshots that q1 did not arrive with",
        "Pool(C,D): (q1,q2)^A reuses A snapshots that q2 did not arrive with",
    ]
    del plan.chosen[nodes["n7"].pool]
    assert "Pool(E,C): no node chosen" in plan.check()


def test_o1_describe_prints_table_3() -> None:
    text = optimize(E4, E4_RATES, merge="all", local="any").describe()
    assert "Pool(B,C) {q1,q2}:" in text
    assert "n5 (q1,q2)^B [merge]: d_s 165, pruned by n6 (node pruning)" in text
    assert "edge from n3 pruned (Eq. 22: 170)" in text
    assert "n10 (q1,q2)^A,(q3) [reuse]: d_s 159, keep  <- chosen" in text
    assert "n11 (q1,q2)^C,(q3) [local]: d_s 279, pruned by n10 (node pruning)" in text
    assert "nodes: 11 built, 9 kept" in text
    assert "path search: Case 1, one end node" in text
    assert "plan, cost 307:" in text and "tran(C,D): (q1,q2)^A,(q3)" in text


# ----------------------------------------------------------------------------- O2, O3: Kleene


def _kleene_nodes(plan: GloriaPlan) -> dict[str, Node]:
    return {n.text(): n for n in plan.graph.nodes if n.kind == "plan"}


def test_o2_table_4_flat_kleene() -> None:
    """SEQ(A, B)+ for q1, q2 starting with A, |A| = 5, |B| = 10: P1 = 105 and P3 = 200
    (the paper's; P2 derives to 260, not 110, spec A7), P'_i = 10 for all three, so d_s
    115 / 270 / 210; P2 is pruned by P1 and P3 (not comparable) kept."""
    queries = [GloriaQuery.of("q1", "SEQ(A, B)+"), GloriaQuery.of("q2", "SEQ(A, B)+")]
    plan = optimize(queries, {"A": 5, "B": 10})
    nodes = _kleene_nodes(plan)
    assert {t: n.own for t, n in nodes.items()} == {
        "(q1,q2)^A": 105,
        "(q1,q2)^B": 260,
        "(q1),(q2)": 200,
    }
    assert {t: n.d_s for t, n in nodes.items()} == {
        "(q1,q2)^A": 115,
        "(q1,q2)^B": 270,
        "(q1),(q2)": 210,
    }
    assert nodes["(q1,q2)^B"].pruned == f"by {nodes['(q1,q2)^A'].name} (node pruning)"
    assert nodes["(q1,q2)^A"].pruned is None and nodes["(q1),(q2)"].pruned is None
    # the paper's P2 = 110 (d_s 120) leads to the same decision
    nodes["(q1,q2)^B"].pruned = None
    nodes["(q1,q2)^B"].d_s = 120
    pool = plan.graph.pools[nodes["(q1,q2)^B"].pool]
    prune_nodes(plan.graph, pool, {"A": 5, "B": 10}, rule="paper")
    assert nodes["(q1,q2)^B"].pruned is not None and nodes["(q1),(q2)"].pruned is None
    # the safe rule too: no pool follows the cycle, so no propagation from B of length 1
    # can make up for it; were one to follow, B's would save 10 x 5 - 10 = 40 there
    nodes["(q1,q2)^B"].pruned = None
    prune_nodes(plan.graph, pool, {"A": 5, "B": 10}, rule="safe", template=plan.template)
    assert nodes["(q1,q2)^B"].pruned is not None
    nodes["(q1,q2)^B"].pruned = None
    prune_nodes(plan.graph, pool, {"A": 5, "B": 10}, rule="safe")  # (one pool assumed)
    assert nodes["(q1,q2)^B"].pruned is None
    # the end: two evaluations of A snapshots at B (100) against nothing: non-shared wins
    assert plan.cost == 210 and _plan(plan) == {"Kleene SEQ(A, B)+": "(q1),(q2)"}
    assert plan.transitions() == {
        ("A", "B"): [qset(["q1"], None), qset(["q2"], None)],
        ("B", "A"): [qset(["q1"], None), qset(["q2"], None)],
    }


NESTED = [GloriaQuery.of(f"q{i}", "SEQ(C, SEQ(A, B)+, D)+") for i in range(1, 5)]
NESTED_RATES = {"A": 5, "B": 10, "C": 12, "D": 4}


def test_o3_table_5_nested_kleene() -> None:
    """SEQ(C, SEQ(A, B)+, D)+ for q1-q4: k + 2 = 5 candidate cycles (Ex. 6.5), the
    cycle weights derived in spec E7; D, the rarest label, survives with the non-shared
    cycle, and n16-n18 (labels C, A, B) are pruned."""
    plan = optimize(NESTED, NESTED_RATES, mode="noprune")
    nodes = _kleene_nodes(plan)
    shared = "(q1,q2,q3,q4)"
    assert {t: n.own for t, n in nodes.items()} == {
        f"{shared}^C": 936,
        f"{shared}^A": 285,
        f"{shared}^B": 630,
        f"{shared}^D": 216,
        "(q1),(q2),(q3),(q4)": 992,
    }
    gloria = _kleene_nodes(optimize(NESTED, NESTED_RATES))
    assert {t for t, n in gloria.items() if n.pruned is None} == {
        f"{shared}^D",
        "(q1),(q2),(q3),(q4)",
    }
    # Table 5's d_s injected (its P'_i and edges are only in Fig. 9(b)): the same decision
    table_5 = {"C": 492, "A": 252, "B": 292, "D": 140, None: 1204}
    for node in nodes.values():
        node.d_s = table_5[node.qsets[0].label]
    prune_nodes(plan.graph, plan.graph.pools[nodes[f"{shared}^D"].pool], NESTED_RATES)
    assert {t for t, n in nodes.items() if n.pruned is not None} == {
        f"{shared}^C",
        f"{shared}^A",
        f"{shared}^B",
    }


# ----------------------------------------------------------------------------- O4: Eqs. 19-21


def _eq_19_to_21_setting() -> tuple[object, object, Node, dict[str, int]]:
    """Fig. 6: n_k in Pool(Ei, Ej) shares (q1, q2) with snapshots of E0 and (q3, q4) with
    snapshots of E1; |Ej| < |E1| but |Ej| > |E0|: only (q3, q4) may take local ones."""
    queries = [GloriaQuery.of(f"q{i}", f"SEQ({'E0' if i < 3 else 'E1'}, Ei, Ej, Eh)") for i in range(1, 5)]  # fmt: skip
    template = gloria_template(queries)
    (before,) = [p for p in template.pools if p.name() == "Pool(Ei,Ej)"]
    (after,) = [p for p in template.pools if p.name() == "Pool(Ej,Eh)"]
    parent = Node(0, 0, (qset(["q1", "q2"], "E0"), qset(["q3", "q4"], "E1")))
    rates = {"E0": 3, "E1": 9, "Ei": 4, "Ej": 5, "Eh": 2}
    return before, after, parent, rates


def test_o4_equations_19_to_21() -> None:
    before, after, parent, rates = _eq_19_to_21_setting()
    found = list(generate(parent.qsets, "Ej", rates, "gloria", "all", "rarer"))
    assert [(how, ",".join(s.text() for s in q)) for how, q in found] == [
        ("reuse", "(q1,q2)^E0,(q3,q4)^E1"),
        ("local", "(q1,q2)^E0,(q3,q4)^Ej"),
        ("merge", "(q1,q2,q3,q4)^Ej"),
    ]
    cost = PaperCost()
    weights = [
        edge_weight(before, parent, after, Node(1, 1, q), rates, cost)  # type: ignore[arg-type]
        for _, q in found
    ]
    w19 = 4 * 3 + 4 * 9  # Cost_share(Ej, Q1) + Cost_share(Ej, Q2): |Ei| x |label|
    w20 = w19 + 2 * 5 * 9  # + Cost_eval(Ej, Q2): two queries, |Ej| x |E1|
    w21 = w20 + 2 * 5 * 3  # + Cost_eval(Ej, Q1)
    assert weights == [w19, w20, w21] and w19 < w20 < w21
    # NoPrune relabels either Q-set, or both (2^x variants)
    assert len(list(generate(parent.qsets, "Ej", rates, "noprune", "all", "any"))) == 5


@st.composite
def _arriving(draw: st.DrawFn) -> list[QSet]:
    """Random Q-sets arriving at a pool: a partition of 1-6 queries, blocks labelled with
    one of three types, single queries possibly non-shared."""
    names = [f"q{i}" for i in range(draw(st.integers(1, 6)))]
    blocks = draw(st.sampled_from(list(set_partitions(names))))
    out = []
    for block in blocks:
        label = draw(st.sampled_from(["X", "Y", "Z"] + ([None] if len(block) == 1 else [])))
        out.append(qset(block, label))
    return out


@settings(max_examples=150, deadline=None)
@given(
    _arriving(),
    st.sampled_from(["gloria", "noprune"]),
    st.sampled_from(["all", "values"]),
    st.integers(1, 20),
)
def test_o4_generation_never_splits_or_shuffles(
    items: list[QSet], mode: str, merge: str, at: int
) -> None:
    """Lemma 5.2: a generated node never has more Q-sets than arrive, and one with as
    many keeps the arriving partition; every Q-set is a union of arriving ones; NGP 2's
    frequency condition holds outside NoPrune."""
    rates = {"X": 4, "Y": 10, "Z": 16, "J": at}
    local = "any" if mode == "noprune" else "rarer"
    arriving = sorted(tuple(s.queries) for s in items)
    seen = set()
    for how, qsets in generate(items, "J", rates, mode, merge, local):
        assert qsets not in seen  # (no duplicates)
        seen.add(qsets)
        assert len(qsets) <= len(items)
        if len(qsets) == len(items):
            assert sorted(s.queries for s in qsets) == arriving
        for s in qsets:
            assert any(set(a) <= set(s.queries) for a in arriving)
            assert set(s.queries) == {q for a in arriving if set(a) <= set(s.queries) for q in a}
            old = [x for x in items if set(x.queries) == set(s.queries)]
            if s.label == "J" and old and old[0].label not in (None, "J") and how == "local":
                assert mode == "noprune" or rates["J"] < rates[old[0].label]
    assert sum(1 for how, _ in generate(items, "J", rates, mode, merge, local)) == len(seen)


# ----------------------------------------------------------------------------- O5: template


def test_o5_example_2_5_template_and_shareable_patterns() -> None:
    queries = [
        GloriaQuery.of("q1", "SEQ(R, SEQ(P, T)+, D)"),
        GloriaQuery.of("q2", "SEQ(A, R, SEQ(P, T)+, D)"),
        GloriaQuery.of("q3", "SEQ(A, R, SEQ(P, T)+, C)"),
    ]
    template = gloria_template(queries)
    sets = {t: "".join(sorted(q[1:] for q in v)) for t, v in template.query_sets().items()}
    assert sets == {
        ("A", "R"): "23",
        ("R", "P"): "123",
        ("P", "T"): "123",
        ("T", "P"): "123",
        ("T", "D"): "12",
        ("T", "C"): "3",
    }
    patterns = shareable_patterns(queries)
    assert patterns["SEQ(P, T)+"] == {"q1", "q2", "q3"}
    assert patterns["SEQ(R, SEQ(P, T)+, D)"] == {"q1", "q2"}
    assert patterns["SEQ(A, R, SEQ(P, T)+)"] == {"q2", "q3"}
    # with a label of its own the cycle is shared by all three or by none (section 7.1):
    # Fig. 2's plans 2 and 3 are never candidates, in any graph; the Q-sets that arrive
    # with a label from before it may keep it round the cycle (spec A18), whole
    rates = {"A": 3, "R": 5, "P": 7, "T": 2, "D": 4, "C": 6}
    for mode in ("noprune", "exhaustive"):
        plan = optimize(queries, rates, mode=mode)
        (cycle,) = [p for p in plan.graph.pools if p.name == "Kleene SEQ(P, T)+"]
        own = {n.text() for n in cycle.nodes if n.how == "cycle"}
        assert own == {f"(q1,q2,q3)^{t}" for t in "PT"} | {"(q1),(q2),(q3)"}
        carried = {n.text() for n in cycle.nodes if n.how == "carry"}
        assert {"(q1,q2,q3)^R", "(q1),(q2,q3)^R", "(q1),(q2,q3)^A"} <= carried
        labels = {s.label for n in cycle.nodes if n.how == "carry" for s in n.qsets}
        assert labels <= {None, "R", "A"}


def test_o5_example_2_4_overlapping_kleene_units_are_not_shared_across() -> None:
    queries = [
        GloriaQuery.of("q1", "SEQ(A, B)+"),
        GloriaQuery.of("q2", "SEQ(C, SEQ(A, B)+)+"),
        GloriaQuery.of("q3", "SEQ(SEQ(C, SEQ(A, B)+)+, E)"),
    ]
    patterns = shareable_patterns(queries)
    assert patterns["SEQ(A, B)+"] == {"q1", "q2", "q3"}
    assert patterns["SEQ(C, SEQ(A, B)+)+"] == {"q2", "q3"}
    pools = {p.name(): sorted(p.queries) for p in gloria_template(queries).pools}
    assert pools == {
        "Kleene SEQ(A, B)+": ["q1"],
        "Kleene SEQ(C, SEQ(A, B)+)+": ["q2", "q3"],
        "Pool(B,E)": ["q3"],
    }


def test_o5_queries_share_only_what_computes_the_same() -> None:
    """From compiled plans: another window, a predicate on an end of the transition, a
    NEXT condition on it, a NOT or a qualified partition attribute keep queries apart."""
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(
        parse(
            "a: RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE [g] WITHIN 10 s;"
            "b: RETURN SUM(B.v) PATTERN SEQ(A, B, D) WHERE [g] WITHIN 10 s;"
            "c: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [g] WITHIN 20 s;"
            "d: RETURN COUNT(*) PATTERN SEQ(A, B x, C) WHERE [g] AND x.v > 1 WITHIN 10 s;"
            "e: RETURN COUNT(*) PATTERN SEQ(A a, B b, C) WHERE [g] AND a.v < NEXT(b).v "
            "WITHIN 10 s;"
            "f: RETURN COUNT(*) PATTERN SEQ(A, NOT E, B) WHERE [g] WITHIN 10 s;"
            "g: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] WITHIN 10 s;"
            "h: RETURN SUM(a.v), SUM(b.v) PATTERN SEQ(A a, B b, C) WHERE [g] WITHIN 10 s;"
        )
    )
    template = gloria_template([gloria_query(p) for p in plans])
    ab = sorted(sorted(p.queries) for p in template.pools if p.name() == "Pool(A,B)")
    # b reads B.v: B's binding rule requires v, unlike a's; g enters B+ from A as a does
    assert ab == [["a", "g"], ["b"], ["c"], ["d"], ["e"], ["f"], ["h"]]
    assert "NOT" in template.private["f"]
    bc = sorted(sorted(p.queries) for p in template.pools if p.name() == "Pool(B,C)")
    assert bc == [["a"], ["d"], ["e", "h"]]  # (e's NEXT is on A -> B only; h reads A.v, B.v)
    plan = optimize(plans, {t: 5 for t in "ABCDE"})
    assert plan.check() == []


# ----------------------------------------------------------------------------- O6: pruning


def test_o6_edge_pruning_keeps_the_argmin_per_preceding_pool() -> None:
    plan = optimize(E4, E4_RATES, merge="all", local="any")
    graph = plan.graph
    for node in graph.alive():
        if node.kind == "start":
            continue
        by_pool: dict[int, list] = {}
        for e in graph.incoming.get(node.index, ()):
            if e.source.pruned is None:
                by_pool.setdefault(e.source.pool, []).append(e)
        for edges in by_pool.values():
            kept = [e for e in edges if not e.pruned]
            if node.kind == "end":
                continue  # (Case 1's EDGEPRUNE(endNode) is the search's)
            assert len(kept) == 1
            assert kept[0].source.d_s + kept[0].weight == min(
                e.source.d_s + e.weight for e in edges
            )


def test_o6_node_pruning_compares_labels_and_never_values_with_snapshots() -> None:
    """Comparable nodes (Def. 5.9) have the same Q-sets; a non-shared query is compared
    only with a non-shared one, so the all-non-shared node is never pruned."""
    rates = {"A": 2, "B": 5, "C": 9}
    g = Graph()
    pool = g.add_pool("p", "seq")
    alone = g.add_node(pool.index, [qset(["q1"], None), qset(["q2"], None)])
    half = g.add_node(pool.index, [qset(["q1"], "C"), qset(["q2"], None)])
    rare = g.add_node(pool.index, [qset(["q1"], "A"), qset(["q2"], "B")])
    frequent = g.add_node(pool.index, [qset(["q1"], "A"), qset(["q2"], "C")])
    mixed = g.add_node(pool.index, [qset(["q1"], "C"), qset(["q2"], "B")])
    for node, d_s in ((alone, 50), (half, 45), (rare, 20), (frequent, 30), (mixed, 40)):
        node.d_s = d_s
    other = g.add_node(g.add_pool("r", "seq").index, [qset(["q1", "q2"], "C")])
    other.d_s = 99
    prune_nodes(g, pool, rates)
    assert alone.pruned is None and half.pruned is None and rare.pruned is None
    assert frequent.pruned == f"by {rare.name} (node pruning)"
    assert mixed.pruned == f"by {rare.name} (node pruning)"  # (A < C, B = B, 20 < 40)
    # a strictly smaller d_s is needed
    frequent.pruned, frequent.d_s = None, 20
    mixed.pruned = None
    prune_nodes(g, pool, rates)
    assert frequent.pruned is None and mixed.pruned is not None
    assert other.pruned is None


def test_a_q_set_split_over_branches_pays_its_propagation_once() -> None:
    """Spec A6: (q1, q2, q3)^A on A -> B feeds B -> C (q1), B -> D (q2) and the end (q3):
    each carries a third of the one propagation |A| x 1."""
    queries = [
        GloriaQuery.of("q1", "SEQ(A, B, C)"),
        GloriaQuery.of("q2", "SEQ(A, B, D)"),
        GloriaQuery.of("q3", "SEQ(A, B)"),
    ]
    rates = {"A": 6, "B": 4, "C": 3, "D": 5}
    plan = optimize(queries, rates, mode="noprune")
    g = plan.graph
    nodes = {(g.pools[n.pool].name, n.text()): n for n in g.nodes}
    shared = nodes[("Pool(A,B)", "(q1,q2,q3)^A")]
    assert g.weight(shared, nodes[("Pool(B,C)", "(q1)^A")]) == 6 / 3
    assert g.weight(shared, nodes[("Pool(B,D)", "(q2)^A")]) == 6 / 3
    (end,) = [n for n in g.nodes if n.name == "end B"]
    assert g.weight(shared, end) == 6 / 3 + 4 * 6  # (and q3's evaluation at B)
    # relabelled to B at B -> C: q1 evaluates its expression over |A| snapshots
    assert g.weight(shared, nodes[("Pool(B,C)", "(q1)^B")]) == 6 / 3 + 4 * 6
    alone = nodes[("Pool(A,B)", "(q1),(q2),(q3)")]
    assert g.weight(alone, nodes[("Pool(B,C)", "(q1)")]) == 4 * 6  # (Eq. 2)


def test_a_kleene_unit_after_a_shared_prefix() -> None:
    """Entering a cycle evaluates an arriving shared Q-set (the cycle's labels are its
    own types); leaving it pays no propagation (the cycle's weight has it, spec A6),
    only the evaluations where a label changes."""
    queries = [
        GloriaQuery.of("q1", "SEQ(C, SEQ(A, B)+, D)"),
        GloriaQuery.of("q2", "SEQ(C, SEQ(A, B)+)"),
    ]
    rates = {"A": 5, "B": 10, "C": 12, "D": 4}
    plan = optimize(queries, rates, mode="noprune")
    g = plan.graph
    nodes = {(g.pools[n.pool].name, n.text()): n for n in g.nodes}
    prefix, alone = nodes[("Pool(C,A)", "(q1,q2)^C")], nodes[("Pool(C,A)", "(q1),(q2)")]
    cycle = nodes[("Kleene SEQ(A, B)+", "(q1,q2)^A")]
    assert g.weight(prefix, cycle) == 12 * 1 + 2 * 5 * 12
    assert g.weight(alone, cycle) == 2 * 5 * 12
    assert cycle.own == 5 * 1 + 10 * 5 + 2 * 5 * 5
    assert g.weight(cycle, nodes[("Pool(B,D)", "(q1)^A")]) == 0
    assert g.weight(cycle, nodes[("Pool(B,D)", "(q1)^B")]) == 10 * 5
    (end_b,) = [n for n in g.nodes if n.name == "end B"]
    assert g.weight(cycle, end_b) == 10 * 5  # (q2's evaluation only)
    assert g.weight(nodes[("Kleene SEQ(A, B)+", "(q1),(q2)")], end_b) == 0


# ----------------------------------------------------------------------------- O7: search


def _hand_graph(root_nodes: int, branches: int, weights: list[float]) -> Graph:
    """A start, a root pool, ``branches`` pools of two nodes each after it, and an end
    node per branch: ``root_nodes * 2 ** branches`` paths (Algorithm 1, Case 3)."""
    g = Graph()
    start = g.add_node(g.add_pool("start", "start").index, kind="start")
    root = g.add_pool("root", "seq", [0])
    w = iter(weights)
    roots = [g.add_node(root.index, [qset([f"r{i}"], None)]) for i in range(root_nodes)]
    for r in roots:
        g.add_edge(start, r, next(w))
    for b in range(branches):
        pool = g.add_pool(f"b{b}", "seq", [root.index])
        pair = [g.add_node(pool.index, [qset([f"x{b}{i}"], None)]) for i in range(2)]
        for r in roots:
            for x in pair:
                g.add_edge(r, x, next(w))
        end = g.add_node(g.add_pool(f"end{b}", "end", [pool.index]).index, kind="end")
        for x in pair:
            g.add_edge(x, end, next(w))
    return g


def test_o7_case_3_sixteen_paths_reduced_to_at_most_n() -> None:
    weights = [float((7 * i) % 11) for i in range(100)]
    graph = _hand_graph(1, 4, weights)
    _, best, tried = brute_force(graph, bound=False)
    assert tried == 16
    search = path_search(graph)
    assert search.cases == [3] and search.cost == best and search.exact
    assert search.candidates <= sum(1 for n in graph.nodes if n.kind == "plan")


def test_o7_cases_1_and_2() -> None:
    # one end node: a chain with two choices per pool
    g = Graph()
    start = g.add_node(g.add_pool("start", "start").index, kind="start")
    p1, p2 = g.add_pool("p1", "seq", [0]), g.add_pool("p2", "seq", [1])
    a, b = (g.add_node(p1.index, [qset([n], None)]) for n in "ab")
    c, d = (g.add_node(p2.index, [qset([n], None)]) for n in "cd")
    end = g.add_node(g.add_pool("end", "end", [2]).index, kind="end")
    for src, dst, w in ((start, a, 1), (start, b, 5), (a, c, 9), (a, d, 3), (b, c, 1),
                        (b, d, 9), (c, end, 1), (d, end, 4)):  # fmt: skip
        g.add_edge(src, dst, w)
    search = path_search(g)
    assert search.cases == [1] and search.cost == 7  # b c end (5 + 1 + 1) vs a d (1 + 3 + 4)
    assert {n.name for n in search.chosen.values()} == {"start", "n2", "n3", "end"}
    # several end nodes with one way in each: the one path
    g = Graph()
    start = g.add_node(g.add_pool("start", "start").index, kind="start")
    root = g.add_node(g.add_pool("root", "seq", [0]).index, [qset(["r"], None)])
    g.add_edge(start, root, 2)
    for i in range(3):
        leaf = g.add_node(g.add_pool(f"p{i}", "seq", [1]).index, [qset([f"l{i}"], None)])
        g.add_edge(root, leaf, 10 * (i + 1))
        end = g.add_node(g.add_pool(f"end{i}", "end", [leaf.pool]).index, kind="end")
        g.add_edge(leaf, end, 1)
    search = path_search(g)
    assert search.cases == [2] and search.cost == 2 + 10 + 20 + 30 + 3


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.lists(st.integers(0, 30), min_size=80, max_size=80))
def test_o7_path_search_equals_brute_force(roots: int, branches: int, weights: list[int]) -> None:
    graph = _hand_graph(roots, branches, [float(w) for w in weights])
    _, best, tried = brute_force(graph, bound=False)
    assert tried == roots * 2**branches
    search = path_search(graph)
    assert search.cost == best and search.exact


def test_o7_operations_grow_linearly() -> None:
    ratios = []
    for branches in (4, 8, 16, 32, 64):
        graph = _hand_graph(2, branches, [float(i % 13) for i in range(10 * branches + 10)])
        size = len(graph.nodes) + len(graph.edges)
        search = path_search(graph)
        ratios.append(search.operations / size)
    assert max(ratios) <= 3 and max(ratios) - min(ratios) < 0.5, ratios


# ----------------------------------------------------------------------------- O8: Eq. 1


def test_o8_bell_numbers_and_the_exhaustive_space() -> None:
    assert [bell(m) for m in range(1, 7)] == [1, 2, 5, 15, 52, 203]
    assert [len(list(set_partitions(list(range(m))))) for m in range(1, 7)] == [
        1, 2, 5, 15, 52, 203,
    ]  # fmt: skip
    for m in range(1, 6):
        queries = [GloriaQuery.of(f"q{i}", "SEQ(A, B)") for i in range(m)]
        plan = optimize(queries, {"A": 2, "B": 3}, mode="exhaustive")
        _, _, tried = brute_force(plan.graph, bound=False)
        assert tried == bell(m)  # (every partition; a block of two or more labelled A)


# ----------------------------------------------------------------------------- E8


E8 = [
    GloriaQuery.of("q1", "SEQ(E, A, H, G, B)"),
    GloriaQuery.of("q2", "SEQ(C, H, G, B)"),
    GloriaQuery.of("q3", "SEQ(H, G, B)"),
    GloriaQuery.of("q4", "SEQ(A, H, G, B)"),
]
E8_RATES = {"E": 2, "C": 1, "B": 3, "A": 13, "H": 15, "G": 12}


def test_e8_merge_all_misses_a_partial_merge() -> None:
    """Spec E8: NGP 3 merges all Q-sets: 837; the best plan (799) keeps (q1, q4)^A and
    merges the others at H; merge="values" and the exhaustive oracle find it."""
    for mode in ("gloria", "noprune"):
        assert optimize(E8, E8_RATES, mode=mode, merge="all").cost == 837
    assert _plan(optimize(E8, E8_RATES, merge="all"))["Pool(H,G)"] == "(q1,q2,q3,q4)^H"
    best = {"Pool(A,H)": "(q1,q4)^A", "Pool(H,G)": "(q1,q4)^A,(q2,q3)^H"}
    for mode, merge in (("gloria", "values"), ("gloria", "subsets"), ("exhaustive", "all")):
        plan = optimize(E8, E8_RATES, mode=mode, merge=merge)
        assert plan.cost == 799 and {k: _plan(plan)[k] for k in best} == best


def test_greedy_keeps_reusing_a_frequent_snapshot() -> None:
    """Section 8.3: Greedy merges where it costs nothing yet and then reuses the
    snapshots (one node per pool), even of a frequent type: here worse than no sharing
    (as GRETA beats Greedy in Fig. 16); GLORIA takes local snapshots of the rare B."""
    queries = [GloriaQuery.of(f"q{i}", "SEQ(A, B, C, D, E)") for i in range(1, 4)]
    rates = {"A": 20, "B": 1, "C": 10, "D": 10, "E": 10}
    greedy = optimize(queries, rates, mode="greedy")
    assert greedy.cost == 1100 and set(_plan(greedy).values()) == {"(q1,q2,q3)^A"}
    assert greedy.nodes == 4  # (one per pool)
    assert optimize(queries, rates, mode="none").cost == 750
    gloria = optimize(queries, rates)
    assert gloria.cost == 171
    assert _plan(gloria) == {
        "Pool(A,B)": "(q1),(q2),(q3)",
        "Pool(B,C)": "(q1,q2,q3)^B",
        "Pool(C,D)": "(q1,q2,q3)^B",
        "Pool(D,E)": "(q1,q2,q3)^B",
    }
    # on Table 3's workload Greedy happens to find the optimum
    assert optimize(E4, E4_RATES, mode="greedy").cost == 307


def test_rates_are_events_per_window_and_partition_of_a_sample() -> None:
    """|E| (spec A16): events of E x WITHIN / the sample's span / E's partitions, per
    signature; the optimizer weighs each pool with its queries' signature's rates."""
    from trendagg.io import from_records
    from trendagg.language import parse
    from trendagg.optimizer.gloria_template import estimate_rates
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(
        parse(
            "a: RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE [g] WITHIN 10 s;"
            "b: RETURN COUNT(*) PATTERN SEQ(D, B, C) WHERE [g] WITHIN 10 s;"
            "c: RETURN COUNT(*) PATTERN SEQ(B+, C) WITHIN 20 s;"
        )
    )
    queries = [gloria_query(p) for p in plans]
    records = [{"type": "ABCD"[t % 4], "time": t, "g": (t // 4) % 2} for t in range(40)]
    records.append({"type": "A", "time": 39})  # no partition: the queries do not read it
    rates = estimate_rates(queries, plans, from_records(records).events)
    short, long = queries[0].signature, queries[2].signature
    # 10 events of each type over 39 s; in 2 partitions, or in one (c: no partition)
    assert rates[short] == pytest.approx({t: 10 / 3.9 / 2 for t in "ABCD"})
    assert rates[long] == pytest.approx({"B": 10 / 1.95, "C": 10 / 1.95})
    plan = optimize(plans, rates)
    assert plan.check() == [] and plan.cost > 0
    pools = sorted((p.name(), sorted(p.queries)) for p in plan.template.pools)
    assert pools == [
        ("Kleene B+", ["c"]),
        ("Pool(A,B)", ["a"]),
        ("Pool(B,C)", ["a", "b"]),
        ("Pool(B,C)", ["c"]),
        ("Pool(D,B)", ["b"]),
    ]
    # c's cycle is weighed with c's rates: one query, non-shared, |B| x |B|
    (cycle,) = [n for n in plan.graph.nodes if plan.graph.pools[n.pool].name == "Kleene B+"]
    assert cycle.own == pytest.approx((10 / 1.95) ** 2)


# ----------------------------------------------------------------------------- P1-P5


@st.composite
def _in_trees(draw: st.DrawFn) -> tuple[list[GloriaQuery], dict[str, int]]:
    """SEQ workloads whose template is an in-tree (spec 8.2, P1): types on a random tree
    towards one end type, each query the path from a type to it (2-5 queries, <= 8
    types, frequencies 1-20)."""
    k = draw(st.integers(2, 7))
    types = [chr(ord("A") + i) for i in range(k + 1)]
    parent = {types[i]: types[draw(st.integers(0, i - 1))] for i in range(1, k + 1)}
    queries = []
    for i in range(draw(st.integers(2, 5))):
        path = [draw(st.sampled_from(types[1:]))]
        while path[-1] != types[0]:
            path.append(parent[path[-1]])
        queries.append(GloriaQuery.of(f"q{i + 1}", "SEQ(" + ", ".join(path) + ")"))
    rates = {t: draw(st.integers(1, 20)) for t in types}
    return queries, rates


@settings(max_examples=120, deadline=None)
@given(_in_trees(), st.sampled_from(["all", "values"]))
def test_p1_gloria_equals_noprune_on_in_trees(
    workload: tuple[list[GloriaQuery], dict[str, int]], merge: str
) -> None:
    queries, rates = workload
    gloria = optimize(queries, rates, merge=merge)
    noprune = optimize(queries, rates, mode="noprune", merge=merge)
    _, best, _ = brute_force(noprune.graph)
    assert gloria.exact and noprune.exact and gloria.cases == noprune.cases == [1]
    assert gloria.cost == pytest.approx(noprune.cost) == pytest.approx(best)
    assert gloria.nodes <= noprune.nodes


FRAGMENTS = ["A", "SEQ(A, B)", "SEQ(A, B, C)", "SEQ(A, B)+", "B+", "SEQ(C, SEQ(A, B)+, D)+"]


@st.composite
def _workloads(draw: st.DrawFn) -> tuple[list[GloriaQuery], dict[str, int]]:
    """Small SEQ and Kleene workloads (flat and nested, with prefixes and suffixes, so
    that pools branch and join): a middle part shared often, an optional first and last
    type."""
    queries = []
    for i in range(draw(st.integers(1, 4))):
        middle = draw(st.sampled_from(FRAGMENTS))
        items = [middle[4:-1] if middle.startswith("SEQ(") and not middle.endswith("+") else middle]
        first = draw(st.sampled_from(["", "E", "F"]))
        last = draw(st.sampled_from(["", "G", "H"]))
        parts = [p for p in (first, *items, last) if p]
        text = parts[0] if len(parts) == 1 and "+" in parts[0] else "SEQ(" + ", ".join(parts) + ")"
        if text == "SEQ(A)":
            text = "SEQ(A, G)"
        queries.append(GloriaQuery.of(f"q{i + 1}", text))
    rates = {t: draw(st.integers(1, 20)) for t in "ABCDEFGH"}
    return queries, rates


@settings(max_examples=120, deadline=None)
@given(_workloads())
def test_p2_p4_gloria_is_no_worse_than_greedy_or_no_sharing_and_plans_are_valid(
    workload: tuple[list[GloriaQuery], dict[str, int]],
) -> None:
    queries, rates = workload
    plans = {
        mode: optimize(queries, rates, mode=mode)
        for mode in ("gloria", "greedy", "none", "noprune")
    }
    gloria = plans["gloria"].cost
    assert gloria <= plans["greedy"].cost + 1e-9
    assert gloria <= plans["none"].cost + 1e-9
    for plan in plans.values():
        assert plan.check() == []
        # P4: each (query, transition) in exactly one Q-set; a Kleene unit uniform
        for pool, qsets in plan.pools():
            if pool.unit is not None:
                labels = {s.label for s in qsets}
                assert len(qsets) == 1 or labels == {None}
        for qsets in plan.transitions().values():
            names = [q for s in qsets for q in s.queries]
            assert len(names) == len(set(names))
    # node pruning never drops the all-non-shared node (spec O6): GRETA's path stays
    for gpool in plans["gloria"].graph.pools:
        if gpool.template is not None:
            alone = [n for n in gpool.nodes if all(s.label is None for s in n.qsets)]
            assert len(alone) == 1 and alone[0].pruned is None
    # no sharing is GRETA: every query alone everywhere
    assert all(s.label is None for _, q in plans["none"].pools() for s in q)


@settings(max_examples=100, deadline=None)
@given(_workloads())
def test_safe_pruning_loses_nothing_against_noprune(
    workload: tuple[list[GloriaQuery], dict[str, int]],
) -> None:
    """Beyond P1's in-trees: with Kleene units and branches, GLORIA's safe node pruning
    matched NoPrune on 1,500 random workloads (the paper's rule lost 10 times), and
    NoPrune's search matched brute force over its graph."""
    queries, rates = workload
    gloria = optimize(queries, rates)
    noprune = optimize(queries, rates, mode="noprune")
    assert gloria.cost == pytest.approx(noprune.cost)
    _, best, _ = brute_force(noprune.graph)
    assert noprune.cost == pytest.approx(best)


def test_paper_node_pruning_loses_below_a_branch() -> None:
    """A Kleene unit whose queries go on two ways: the paper's rule prunes the cycle
    labelled B for the rarer A, but from B each branch propagates expressions of
    length 1 (spec A9, A11)."""
    queries = [
        GloriaQuery.of("q1", "SEQ(E, A, B)"),
        GloriaQuery.of("q2", "SEQ(SEQ(A, B)+, G)"),
        GloriaQuery.of("q3", "SEQ(SEQ(A, B)+, H)"),
    ]
    rates = {"A": 6, "B": 7, "E": 14, "G": 18, "H": 3}
    costs = {rule: optimize(queries, rates, node_prune=rule).cost for rule in ("safe", "paper")}
    noprune = optimize(queries, rates, mode="noprune").cost
    assert costs["safe"] == noprune < costs["paper"], (costs, noprune)


def test_a_template_that_branches_and_joins_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spec A11: q1 and q2 part after A -> B and meet again at X -> Y, so d_s counts
    Pool(A,B) twice and its back-pointers may disagree. The search fixes a pool on the
    loop, each of its nodes in turn, and solves the rest as a tree: brute force's
    plan. Allowed no such combination, it says that optimality is not proven."""
    from trendagg.optimizer import gloria_search

    queries = [
        GloriaQuery.of("q1", "SEQ(A, B, C, X, Y)"),
        GloriaQuery.of("q2", "SEQ(A, B, D, X, Y)"),
    ]
    rates = {"A": 3, "B": 9, "C": 2, "D": 7, "X": 12, "Y": 4}
    for mode in ("gloria", "noprune"):
        plan = optimize(queries, rates, mode=mode)
        _, best, _ = brute_force(plan.graph)
        assert plan.exact and plan.check() == [] and plan.cost == best == 172
    assert "optimality not proven" not in plan.describe()
    monkeypatch.setattr(gloria_search, "CUT_LIMIT", 1)
    rough = optimize(queries, rates)
    assert not rough.exact and rough.check() == [] and rough.cost >= 172
    assert "optimality not proven" in rough.describe()


def test_a_cycle_of_transitions_across_queries_runs_non_shared() -> None:
    """Spec A12: SEQ(A, B, C), SEQ(C, A, B) and SEQ(B, C, A) chain their pools in a
    circle, which has no order to build it in: those queries share nothing."""
    queries = [
        GloriaQuery.of("q1", "SEQ(A, B, C)"),
        GloriaQuery.of("q2", "SEQ(C, A, B)"),
        GloriaQuery.of("q3", "SEQ(B, C, A)"),
        GloriaQuery.of("q4", "SEQ(E, F)"),
        GloriaQuery.of("q5", "SEQ(E, F)"),
    ]
    template = gloria_template(queries)
    assert sorted(template.private) == ["q1", "q2", "q3"]
    assert all(len(p.queries) == 1 for p in template.pools if p.source != "E")
    plan = optimize(queries, {t: 5 for t in "ABCEF"})
    assert plan.check() == [] and "q1 shares nothing" in plan.describe()


@settings(max_examples=60, deadline=None)
@given(_in_trees())
def test_p3_subsets_equal_the_exhaustive_oracle(
    workload: tuple[list[GloriaQuery], dict[str, int]],
) -> None:
    """merge="subsets" (every plan of Def. 2.6 per pool, pruned and searched) equals the
    exhaustive oracle; "all" and "values" are never below it (their gap frequency is
    counted: rare, spec E8)."""
    queries, rates = workload
    oracle = optimize(queries, rates, mode="exhaustive").cost
    assert optimize(queries, rates, merge="subsets").cost == pytest.approx(oracle)
    for merge in ("all", "values"):
        assert optimize(queries, rates, merge=merge).cost >= oracle - 1e-9


def _seeded_in_trees(count: int) -> list[tuple[list[GloriaQuery], dict[str, int]]]:
    rnd = random.Random(18)
    out = []
    for _ in range(count):
        k = rnd.randint(2, 6)
        types = [chr(ord("A") + i) for i in range(k + 1)]
        parent = {types[i]: types[rnd.randrange(i)] for i in range(1, k + 1)}
        queries = []
        for i in range(rnd.randint(2, 4)):
            path = [rnd.choice(types[1:])]
            while path[-1] != types[0]:
                path.append(parent[path[-1]])
            queries.append(GloriaQuery.of(f"q{i}", "SEQ(" + ", ".join(path) + ")"))
        out.append((queries, {t: rnd.randint(1, 20) for t in types}))
    return out


def test_p3_gap_frequency_on_a_fixed_sample() -> None:
    """How often the exhaustive oracle beats "all" and "values" on 300 seeded in-tree
    workloads. With the authors' end edges (eval_only) the gaps are spec E8's partial
    merges: rare, and "values" closes them (E8: 9 and 1 of 2,679). With prop_eval most
    gaps are a plan that no NGP makes: going back to non-shared values for the last
    transition, which saves the last propagation (see the next test)."""
    sample = _seeded_in_trees(300)
    for end, want in (("prop_eval", {"all": 7, "values": 6}), ("eval_only", {"all": 1, "values": 0})):  # fmt: skip
        gaps = {"all": 0, "values": 0}
        for queries, rates in sample:
            oracle = optimize(queries, rates, mode="exhaustive", end=end).cost
            for merge in gaps:
                cost = optimize(queries, rates, merge=merge, end=end).cost
                assert cost >= oracle - 1e-9
                gaps[merge] += cost > oracle + 1e-9
        assert gaps == want


def test_p3_going_back_to_values_before_the_end() -> None:
    """A gap of the NGP space under prop_eval end edges: the oracle evaluates the shared
    Q-set at B into per-query values (an end edge charges a value |A| x |B|, the same as
    an evaluation, and no propagation), 3 below relabelling it to B."""
    queries = [
        GloriaQuery.of("q1", "SEQ(E, D, C, B, A)"),
        GloriaQuery.of("q2", "SEQ(D, C, B, A)"),
        GloriaQuery.of("q3", "SEQ(D, C, B, A)"),
    ]
    rates = {"A": 15, "B": 3, "C": 4, "D": 11, "E": 15}
    gloria = optimize(queries, rates)
    oracle = optimize(queries, rates, mode="exhaustive")
    assert (gloria.cost, oracle.cost) == (494, 491)
    assert _plan(gloria)["Pool(B,A)"] == "(q1,q2,q3)^B"
    assert _plan(oracle)["Pool(B,A)"] == "(q1),(q2),(q3)"
    assert optimize(queries, rates, merge="subsets").cost == 491
    authors = [optimize(queries, rates, mode=m, end="eval_only").cost for m in ("gloria", "exhaustive")]  # fmt: skip
    assert authors == [491, 491]


@settings(max_examples=60, deadline=None)
@given(_workloads(), st.randoms(use_true_random=False))
def test_p5_the_same_workload_gives_the_same_plan(
    workload: tuple[list[GloriaQuery], dict[str, int]], rnd: random.Random
) -> None:
    queries, rates = workload
    shuffled = list(queries)
    rnd.shuffle(shuffled)
    for mode in ("gloria", "greedy"):
        a, b = optimize(queries, rates, mode=mode), optimize(shuffled, rates, mode=mode)
        assert a.transitions() == b.transitions() and a.cost == b.cost
        assert a.describe() == b.describe()


# ----------------------------------------------------------------------------- scale


def test_two_hundred_queries_are_planned_quickly() -> None:
    """The issue's target is 200 queries in under a second (measured about 0.1 s); the
    bound here is generous so that a loaded machine does not fail it."""
    rnd = random.Random(7)
    types = [f"T{i}" for i in range(40)]
    cores = [rnd.sample(types, 4) for _ in range(20)]
    queries = []
    for i in range(200):
        core = cores[i % 20]
        first, last = rnd.sample([t for t in types if t not in core], 2)
        window = rnd.choice([5, 10, 15, 20])
        pattern = f"SEQ({first}, {', '.join(core)}, {last})"
        queries.append(GloriaQuery.of(f"q{i:03d}", pattern, signature=(("within", window),)))
    rates = {t: rnd.randint(1, 20) for t in types}
    started = time.perf_counter()
    plan = optimize(queries, rates)
    assert time.perf_counter() - started < 5
    assert plan.check() == []
    assert plan.cost < optimize(queries, rates, mode="greedy").cost
    assert plan.cost < optimize(queries, rates, mode="none").cost


def test_unknown_options_are_refused() -> None:
    for kwargs in ({"mode": "fast"}, {"merge": "some"}, {"local": "never"}):
        with pytest.raises(ValueError, match="unknown"):
            optimize(E4, E4_RATES, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no rate for event type 'E' of query q3: rates are"):
        optimize(E4, {t: 1 for t in "ABCDF"})
    with pytest.raises(ValueError, match="unique"):
        gloria_template([E4[0], E4[0]])
    assert list(itertools.islice(set_partitions([]), 2)) == [[]]
    assert build_graph(gloria_template(E4), E4_RATES).mode == "gloria"


def test_a14_rates_are_counted_per_binding_filter() -> None:
    """Spec A14: q1 and q2 bind B only where B.x < 1, which one B event in ten passes:
    their pools weigh B with 10% of B's rate (1 instead of 10), q4's pool, which binds
    every B, with all of it. B is then rarer than A, and the plan shares B->C with
    snapshots of B; counted per type (as before), it is Table 3's plan, snapshots of A.
    Rates given per type name apply as they are. The rows are GRETA's either way."""
    from helpers import canon
    from trendagg.engine import run_strategy
    from trendagg.io import from_records
    from trendagg.language import parse
    from trendagg.optimizer.gloria_template import pool_rates
    from trendagg.optimizer.plan import gloria_rates, sharing_plan
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(
        parse(
            "q1: RETURN COUNT(*) PATTERN SEQ(F, A, B, C, D) WHERE B.x < 1 WITHIN 100 s;\n"
            "q2: RETURN COUNT(*) PATTERN SEQ(A, B, C, D) WHERE B.x < 1 WITHIN 100 s;\n"
            "q3: RETURN COUNT(*) PATTERN SEQ(E, C, D) WITHIN 100 s;\n"
            "q4: RETURN COUNT(*) PATTERN SEQ(A, B, H) WITHIN 100 s;"
        )
    )
    order = [t for t, n in E4_RATES.items() for _ in range(n)]
    random.Random(14).shuffle(order)
    records: list[dict[str, object]] = [{"type": t, "time": i} for i, t in enumerate(order)]
    b_events = [r for r in records if r["type"] == "B"]
    for i, r in enumerate(b_events):
        r["x"] = 0 if i == 0 else 5
    events = from_records(records).events
    rates = gloria_rates(plans, events)
    (signature,) = rates
    rule = gloria_query(plans[0]).rule("B")
    assert rule == gloria_query(plans[1]).rule("B") != gloria_query(plans[3]).rule("B")
    assert rates[signature]["B"] == 10 and rates[signature][("B", rule)] == 1
    assert {t: r for t, r in rates[signature].items() if isinstance(t, str)} == {
        **E4_RATES,
        "H": 0,
    }

    def labels(plan_rates: object) -> dict[tuple[str, str], str | None]:
        plan = sharing_plan(
            plans,
            "gloria",
            rates=plan_rates,  # type: ignore[arg-type]
            compiled=False,
            cost_model="paper",
        )
        by = {(s.source, s.target): s.label for s in plan.qsets if "q1" in s.queries}
        return {t: by.get(t) for t in [("B", "C"), ("C", "D")]}

    assert labels(rates) == {("B", "C"): "B", ("C", "D"): "B"}
    per_type = {signature: {t: r for t, r in rates[signature].items() if isinstance(t, str)}}
    assert labels(per_type) == {("B", "C"): "A", ("C", "D"): "A"}
    # rates given per type name: as they are
    assert labels({**E4_RATES, "H": 1}) == {("B", "C"): "A", ("C", "D"): "A"}
    assert labels({**E4_RATES, "B": 1, "H": 1}) == {("B", "C"): "B", ("C", "D"): "B"}
    # each pool weighs B by its queries' binding of B
    chosen = sharing_plan(plans, "gloria", rates=rates, compiled=False).gloria
    queries = {q.name: q for q in chosen.template.queries}
    weights = {
        (p.name(), tuple(sorted(p.queries))): pool_rates(p, queries, rates[signature])["B"]
        for p in chosen.template.pools
        if "B" in (p.source, p.target)
    }
    assert weights == {
        ("Pool(A,B)", ("q1", "q2")): 1,
        ("Pool(B,C)", ("q1", "q2")): 1,
        ("Pool(A,B)", ("q4",)): 10,
        ("Pool(B,H)", ("q4",)): 10,
    }
    gloria = run_strategy(plans, events, "gloria", plan=sharing_plan(plans, "gloria", rates=rates))
    assert canon(gloria) == canon(run_strategy(plans, events, "greta"))


def test_a_graph_past_the_work_budget_gives_greedys_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph's construction stops past its budget of work (combinations of
    predecessor nodes tried plus edges weighed, which multiply where pools with many
    live nodes meet) and the plan is Greedy's, or no sharing where the model prices that
    lower; explain says so; a run under it is exact."""
    full = optimize(E4, E4_RATES, budget=None)
    assert full.over_budget is None and full.cost == 307 and full.mode == "gloria"
    edges = sum(1 for _ in full.graph.edges)
    assert optimize(E4, E4_RATES, budget=1_000).cost == 307  # (within it: GLORIA's plan)
    stopped = optimize(E4, E4_RATES, budget=edges // 2)
    greedy = optimize(E4, E4_RATES, mode="greedy")
    assert stopped.over_budget is not None and stopped.over_budget.startswith("Pool(")
    assert stopped.mode == "greedy"
    assert _plan(stopped) == _plan(greedy) and stopped.cost == greedy.cost
    assert "past the work budget building Pool(" in stopped.describe()
    assert "past the work budget" not in full.describe()

    # a run's plan (sharing_plan) has the budget: at 0 it is Greedy's, and exact
    import trendagg.optimizer.gloria as gloria_module
    from trendagg.engine import run_strategy
    from trendagg.io import from_records
    from trendagg.language import parse
    from trendagg.optimizer.plan import sharing_plan
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(
        parse(
            "q1: RETURN COUNT(*) PATTERN SEQ(F, A, B, C, D) WITHIN 1 min;"
            "q2: RETURN COUNT(*) PATTERN SEQ(A, B, C, D) WITHIN 1 min;"
            "q3: RETURN COUNT(*) PATTERN SEQ(E, C, D) WITHIN 1 min;"
        )
    )
    monkeypatch.setattr(gloria_module, "BUDGET", 0)
    plan = sharing_plan(plans, "gloria", rates=E4_RATES, cost_model="paper")
    assert plan.gloria.over_budget is not None and plan.gloria.mode == "greedy"
    # past it, the cheaper of Greedy's plan and no sharing
    kernel = sharing_plan(plans, "gloria", rates=E4_RATES).gloria
    assert kernel.over_budget is not None and kernel.mode in ("greedy", "none")
    for mode in ("greedy", "none"):
        assert kernel.cost <= optimize(E4, E4_RATES, mode=mode, cost=KernelCost()).cost
    events = from_records([{"type": t, "time": i} for i, t in enumerate("FAEABCBCDACDD")]).events
    rows = run_strategy(plans, events, "gloria", plan=plan)
    assert sorted((r.query, r.values["COUNT(*)"]) for r in rows) == sorted(
        (r.query, r.values["COUNT(*)"]) for r in run_strategy(plans, events, "twostep")
    )
    assert rows


# ----------------------------------------------------------------------------- the kernel's model


def test_windows_per_event_from_the_signature() -> None:
    """An event falls in WITHIN / SLIDE windows, rounded up; 1 without a window."""

    def sig(within: str, slide: str) -> tuple[object, ...]:
        return (("partition", ("driver",)), ("within", within), ("slide", slide))

    assert windows_per_event(sig("300", "300")) == 1
    assert windows_per_event(sig("600", "300")) == 2
    assert windows_per_event(sig("1000", "300")) == 4
    assert windows_per_event((("partition", ()),)) == 1


def _funnel(k: int, rare: str) -> list[GloriaQuery]:
    """k queries with a private first and last type around a shared core K -> M (the
    mixed workload's SEQ groups); ``rare``: the core's first type."""
    return [GloriaQuery.of(f"q{i}", f"SEQ(F{i}, {rare}, M, L{i})") for i in range(k)]


def test_the_kernels_model_shares_only_where_running_totals_lose() -> None:
    """The compiled GRETA updates a query's register once per event and window, so
    sharing pays only where a frequent type is propagated once for many queries over few
    snapshots: ten queries over a rare K (1 per window) and a frequent M (20) share K ->
    M with K's snapshots; with K as frequent as M (every event a snapshot), or two
    queries, they do not. The paper's model (each event summing its predecessors)
    shares the two."""
    rates = {"K": 1.0, "M": 20.0, **{f"F{i}": 1.0 for i in range(10)}}
    rates |= {f"L{i}": 1.0 for i in range(10)}
    kernel = KernelCost()

    def shared(queries: list[GloriaQuery], r: dict[str, float], cost: object = kernel) -> bool:
        plan = optimize(queries, r, cost=cost)  # type: ignore[arg-type]
        return any(s.label is not None for _, qsets in plan.pools() for s in qsets)

    assert shared(_funnel(10, "K"), rates)
    assert not shared(_funnel(10, "K"), rates | {"K": 20.0})
    assert not shared(_funnel(2, "K"), rates)
    assert shared(_funnel(2, "K"), rates, PaperCost())
    assert optimize(_funnel(10, "K"), rates, cost=kernel).model == "kernel"
    assert optimize(_funnel(10, "K"), rates).model == "paper"
    assert cost_model("kernel") == KernelCost() and cost_model("paper") == PaperCost()
    with pytest.raises(ValueError, match="unknown GLORIA cost model 'greta'"):
        cost_model("greta")


@settings(max_examples=100, deadline=None)
@given(_workloads())
def test_under_the_kernels_model_gloria_is_no_worse_than_greedy_none_or_noprune(
    workload: tuple[list[GloriaQuery], dict[str, int]],
) -> None:
    """The optimizer's guarantees hold for any weights (section 7.3): under the kernel's
    model too, GLORIA's plan is valid, costs no more than Greedy's or no sharing, and
    as little as NoPrune's (safe node pruning loses nothing)."""
    queries, rates = workload
    kernel = KernelCost()
    plans = {
        mode: optimize(queries, rates, mode=mode, cost=kernel)
        for mode in ("gloria", "greedy", "none", "noprune")
    }
    gloria = plans["gloria"].cost
    assert gloria <= plans["greedy"].cost + 1e-9
    assert gloria <= plans["none"].cost + 1e-9
    assert gloria == pytest.approx(plans["noprune"].cost)
    assert all(plan.check() == [] for plan in plans.values())


def test_a18_a_kleene_unit_keeps_the_labels_its_queries_arrive_with() -> None:
    """Fig. 19's complex shape: six queries per first type A1..A3 (rare) enter a
    multi-type unit SEQ(T, X)+ whose T is frequent. A label of the unit's own makes each
    query evaluate at every T (its values from A enter there); keeping each first type's
    snapshots round the cycle (a Q-set per first type, ``carry``) propagates T once per
    Q-set instead. The kernel's model takes it, with the same Q-sets into the unit, and
    the plan is valid."""
    queries = [GloriaQuery.of(f"q{i}", f"SEQ(A{i % 3}, SEQ(T, X)+, C{i // 3})") for i in range(18)]
    rates = {"T": 80.0, "X": 1.0, **{f"A{i}": 5.0 for i in range(3)}}
    rates |= {f"C{i}": 5.0 for i in range(6)}
    plan = optimize(queries, rates, cost=KernelCost())
    assert plan.check() == []
    (unit,) = [(p, q) for p, q in plan.pools() if p.kind == "kleene"]
    assert {(s.queries, s.label) for s in unit[1]} == {
        (tuple(sorted(f"q{i}" for i in range(18) if i % 3 == a)), f"A{a}") for a in range(3)
    }
    for pool, qsets in plan.pools():
        if pool.target == "T":  # (into the unit: each first type's snapshots, shared)
            assert all(s.label == f"A{int(s.queries[0][1:]) % 3}" for s in qsets)
    # under the unit's own labels only (no carry candidate) the plan costs more
    graph = plan.graph
    (gpool,) = [g for g in graph.pools if g.template is not None and g.template.kind == "kleene"]
    best_own = min(n.d_s for n in gpool.nodes if n.how == "cycle")
    chosen = plan.chosen[gpool.index]
    assert chosen.how == "carry" and chosen.d_s < best_own

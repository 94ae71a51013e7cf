"""The plan layer: templates, predicate classes, partition rules, windows and panes."""

from __future__ import annotations

from fractions import Fraction

import pytest

from trendagg.language import parse_query
from trendagg.plan.compile import compile_query
from trendagg.plan.windows import WindowSpec, pane_length


def plan_of(text: str):  # type: ignore[no-untyped-def]
    return compile_query(parse_query(text))


def test_template_of_nested_kleene_with_negation() -> None:
    plan = plan_of("RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+ WITHIN 1 min")
    t = plan.template
    assert (t.start, t.end) == ("A", "B")
    assert {(x.src, x.dst, x.label, x.negation) for x in t.transitions} == {
        ("A", "A", "+", None),
        ("A", "B", "SEQ", 0),
        ("B", "A", "+", None),
    }
    neg = t.negations[0]
    assert (neg.kind, neg.previous, neg.following) == ("between", "A", "B")
    inner = neg.template
    assert (inner.start, inner.end) == ("C", "D")
    assert {(x.src, x.dst, x.negation) for x in inner.transitions} == {("C", "D", 0)}
    assert inner.negations[0].template.states == ("E",)
    assert {x.src for x in t.predecessors("A")} == {"A", "B"}


def test_leading_and_trailing_negation_connections() -> None:
    plan = plan_of("RETURN COUNT(*) PATTERN SEQ(NOT E, A+, B, NOT F) WITHIN 1 min")
    kinds = [(n.kind, n.previous, n.following) for n in plan.template.negations]
    assert kinds == [("leading", None, "A"), ("trailing", "B", None)]


def test_predicates_are_classified_local_edge_or_equivalence() -> None:
    plan = plan_of(
        "RETURN COUNT(*) PATTERN SEQ(R, T+) WHERE [driver, T.district] AND T.speed > 10 "
        "AND T.speed < NEXT(T).speed AND NEXT(T).ok = yes WITHIN 1 min"
    )
    assert [len(plan.vars[v].local) for v in ("R", "T")] == [0, 1]
    assert set(plan.edges) == {("T", "T")}
    assert set(plan.guards) == {"T"}
    assert [a.text for a in plan.partition_attrs] == ["driver", "T.district"]
    # the qualified attribute applies to T only: R is a wildcard for it
    assert plan.vars["R"].partition_positions == (0,)
    assert plan.vars["T"].partition_positions == (0, 1)
    assert plan.vars["T"].required == {"driver", "district", "speed", "ok"}
    assert plan.numeric == {"T": frozenset({"speed"})}


def test_group_by_attributes_are_partition_attributes_named_by_their_alias() -> None:
    plan = plan_of(
        "RETURN T.district AS d, COUNT(*) PATTERN T+ WHERE [driver] GROUP-BY T.district WITHIN 1 min"
    )
    assert [a.text for a in plan.partition_attrs] == ["driver", "T.district"]
    assert plan.group_positions == (1,)
    assert plan.group_names == ("d",)


@pytest.mark.parametrize(
    ("within", "slide", "pane"),
    [(600, 10, 10), (600, 600, 600), (10, 4, 2), (Fraction(3, 2), Fraction(1, 4), Fraction(1, 4))],
)
def test_panes_are_the_gcd_of_within_and_slide(
    within: Fraction, slide: Fraction, pane: Fraction
) -> None:
    assert WindowSpec(Fraction(within), Fraction(slide)).pane == pane


def test_pane_length_of_several_windows() -> None:
    assert pane_length([Fraction(600), Fraction(300), Fraction(45)]) == 15
    assert pane_length([Fraction(1, 2), Fraction(1, 3)]) == Fraction(1, 6)


def test_windows_of_a_time_are_exact() -> None:
    w = WindowSpec(Fraction(1, 2), Fraction(1, 10))
    # exactly 3/10 lies in [-0.1, 0.4) ... [0.3, 0.8); the float 0.3 is a little less than
    # 3/10, so it is not in [0.3, 0.8) but is in [-0.2, 0.3)
    assert list(w.windows_of(Fraction(3, 10))) == [-1, 0, 1, 2, 3]
    assert list(w.windows_of(0.3)) == [-2, -1, 0, 1, 2]
    assert list(WindowSpec(Fraction(10), Fraction(3)).windows_of(9)) == [0, 1, 2, 3]
    assert list(WindowSpec(Fraction(2), Fraction(5)).windows_of(3)) == []
    assert w.pane_of(Fraction(3, 10)) == 3 and w.pane_of(0.3) == 2


def test_attributes_read_are_every_attribute_a_query_names() -> None:
    from trendagg.language import parse
    from trendagg.plan.compile import attributes_read, compile_workload

    text = (
        "a: RETURN district, COUNT(*), SUM(T.duration), MAX(D.fare) "
        "PATTERN SEQ(Request R, Travel T+, Dropoff D) "
        "WHERE [driver, R.rider] AND T.speed < NEXT(T).speed * 2 AND (D.tip > 1 OR D.stars = 5) "
        "GROUP-BY district WITHIN 10 min;\n"
        "b: RETURN COUNT(T) PATTERN SEQ(Travel T+, NOT Cancel C, Pay P) WHERE C.reason = 'x' "
        "WITHIN 1 min"
    )
    got = attributes_read(compile_workload(parse(text)))
    assert got == {
        "district",
        "duration",
        "fare",
        "driver",
        "rider",
        "speed",
        "tip",
        "stars",
        "reason",
    }

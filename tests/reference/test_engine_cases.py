"""Named engine cases: ties at every boundary, windows, wildcards, exactness, limits."""

from __future__ import annotations

from fractions import Fraction

import pytest

from helpers import run_text, stream, values_of
from trendagg.errors import ExecutionError

BOTH = ["greta", "twostep"]


def counts(rows: list) -> list[object]:
    return [r.values["COUNT(*)"] for r in rows]


@pytest.mark.parametrize("strategy", BOTH)
def test_between_not_starting_at_the_same_time_as_the_previous_event_does_not_invalidate(
    strategy: str,
) -> None:
    # N starts at 1, not strictly after a1: (a1, b3) is valid; (a0, b3) is not.
    events = stream("a0 a1 n1 b3", a0={"x": 0}, a1={"x": 0}, b3={"x": 5})
    for where in ("", "WHERE A.x < NEXT(B).x "):
        rows = run_text(
            f"RETURN COUNT(*) PATTERN SEQ(A, NOT N, B) {where}WITHIN 10 s", events, strategy
        )
        assert counts(rows) == [1], where


@pytest.mark.parametrize("strategy", BOTH)
def test_between_not_ending_at_the_same_time_as_the_next_event_does_not_invalidate(
    strategy: str,
) -> None:
    rows = run_text(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT N, B) WITHIN 10 s", stream("a0 n3 b3 b4"), strategy
    )
    assert counts(rows) == [1]  # (a0, b3) valid; (a0, b4) invalid


@pytest.mark.parametrize("strategy", BOTH)
def test_leading_not_blocks_only_later_starts(strategy: str) -> None:
    # e2 ends at 2: a2 may still start a trend, a3 may not, but a3 may extend one.
    rows = run_text(
        "RETURN COUNT(*) PATTERN SEQ(NOT E, A+) WITHIN 10 s", stream("a1 e2 a2 a3"), strategy
    )
    assert counts(rows) == [4 + 2]


@pytest.mark.parametrize("strategy", BOTH)
def test_trailing_not_at_the_same_time_as_the_end_does_not_invalidate(strategy: str) -> None:
    rows = run_text(
        "RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 10 s", stream("a1 a2 e2"), strategy
    )
    assert counts(rows) == [2]


@pytest.mark.parametrize("strategy", BOTH)
def test_trailing_not_depends_on_the_window(strategy: str) -> None:
    # e5 invalidates a1 only in windows that contain e5.
    rows = run_text(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT E) WITHIN 4 s SLIDE 2 s", stream("a1 e5"), strategy
    )
    assert [(r.window_start, r.window_end, r.values["COUNT(*)"]) for r in rows] == [
        (-2, 2, 1),
        (0, 4, 1),
    ]


@pytest.mark.parametrize("strategy", BOTH)
def test_sliding_windows_count_each_window(strategy: str) -> None:
    rows = run_text(
        "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 4 s SLIDE 2 s", stream("a1 b3 b4 b5"), strategy
    )
    assert [(r.window_start, r.values["COUNT(*)"]) for r in rows] == [(0, 1)]
    rows = run_text(
        "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 6 s SLIDE 2 s", stream("a1 b3 b4 b5"), strategy
    )
    assert [(r.window_start, r.values["COUNT(*)"]) for r in rows] == [(-2, 1), (0, 7)]


@pytest.mark.parametrize("strategy", BOTH)
def test_equal_times_are_never_adjacent(strategy: str) -> None:
    rows = run_text("RETURN COUNT(*) PATTERN A+ WITHIN 10 s", stream("a1 a1 a1"), strategy)
    assert counts(rows) == [3]


@pytest.mark.parametrize("strategy", BOTH)
def test_qualified_partition_attribute_makes_other_variables_wildcards(strategy: str) -> None:
    events = stream(
        "r1 t2 t3 t4 t5",
        t2={"driver": 1},
        t3={"driver": 2},
        t4={"driver": 1},
        t5={},  # no driver: takes part in no partition
    )
    text = "RETURN COUNT(*) PATTERN SEQ(R, T+) WHERE [T.driver] WITHIN 10 s"
    assert counts(run_text(text, events, strategy)) == [3 + 1]
    grouped = run_text(
        "RETURN T.driver AS d, COUNT(*) PATTERN SEQ(R, T+) WHERE [T.driver] GROUP-BY T.driver WITHIN 10 s",
        events,
        strategy,
    )
    assert sorted((r.group["d"], r.values["COUNT(*)"]) for r in grouped) == [(1, 3), (2, 1)]


@pytest.mark.parametrize("strategy", BOTH)
def test_leading_negation_reaches_partitions_created_later(strategy: str) -> None:
    """GRETA's Q3 shape: an accident blocks every vehicle of its segment, even one first seen later."""
    events = [
        {"type": "Position", "time": 1, "vehicle": 1, "segment": 1, "speed": 50},
        {"type": "Accident", "time": 2, "segment": 1},
        {"type": "Position", "time": 3, "vehicle": 2, "segment": 1, "speed": 40},
        {"type": "Position", "time": 4, "vehicle": 1, "segment": 1, "speed": 30},
        {"type": "Position", "time": 4, "vehicle": 3, "segment": 2, "speed": 30},
    ]
    rows = run_text(
        "RETURN segment, COUNT(*), AVG(P.speed) PATTERN SEQ(NOT Accident A, Position P+) "
        "WHERE [P.vehicle, segment] AND P.speed > NEXT(P).speed GROUP-BY segment WITHIN 10 s",
        events,
        strategy,
    )
    # segment 1: vehicle 1 has (p1) and (p1, p4); vehicle 2 starts after the accident: nothing.
    assert [(r.group["segment"], r.values["COUNT(*)"], r.values["AVG(P.speed)"]) for r in rows] == [
        (1, 2, 130 / 3),
        (2, 1, 30.0),
    ]


@pytest.mark.parametrize("strategy", BOTH)
def test_event_missing_an_attribute_read_on_its_variable_is_not_bound(strategy: str) -> None:
    events = stream("a1 a2 a3", a1={"v": 1}, a3={"v": 3})
    rows = run_text("RETURN COUNT(*), SUM(A.v) PATTERN A+ WITHIN 10 s", events, strategy)
    assert values_of(rows) == [{"COUNT(*)": 3, "SUM(A.v)": 8}]


@pytest.mark.parametrize("strategy", BOTH)
def test_a_number_never_equals_a_string(strategy: str) -> None:
    events = stream("a1 a2", a1={"v": 3}, a2={"v": "3"})
    rows = run_text("RETURN COUNT(*) PATTERN A+ WHERE A.v = '3' WITHIN 10 s", events, strategy)
    assert counts(rows) == [1]


@pytest.mark.parametrize("strategy", BOTH)
def test_float_sums_are_exact_then_rounded_once(strategy: str) -> None:
    values = {"a1": 1e16, "a2": 1.0, "a3": -1e16}  # float accumulation loses the 1.0 entirely
    events = stream("a1 a2 a3", **{k: {"v": v} for k, v in values.items()})
    rows = run_text("RETURN COUNT(*), SUM(A.v), AVG(A.v) PATTERN A+ WITHIN 10 s", events, strategy)
    # each event occurs in 4 of the 7 trends; the sum of their exact binary values is rounded once
    exact = 4 * sum(Fraction(v) for v in values.values())
    assert values_of(rows) == [
        {"COUNT(*)": 7, "SUM(A.v)": float(exact), "AVG(A.v)": float(exact / 12)}
    ]
    naive = sum(v for v in values.values() for _ in range(4))
    assert float(exact) != naive  # the case tells exact summation from float accumulation


def test_counts_are_exact_beyond_any_fixed_width() -> None:
    events = [{"type": "A", "time": 0}] + [{"type": "B", "time": i, "v": 1} for i in range(1, 301)]
    rows = run_text(
        "RETURN COUNT(*), SUM(B.v), COUNT(B) PATTERN SEQ(A, B+) WITHIN 1000 s", events, "greta"
    )
    assert values_of(rows) == [
        {"COUNT(*)": 2**300 - 1, "SUM(B.v)": 300 * 2**299, "COUNT(B)": 300 * 2**299}
    ]


def test_twostep_stops_at_its_trend_limit_with_a_clear_error() -> None:
    from helpers import run_queries
    from trendagg.language import parse_query

    query = parse_query("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000 s")
    events = [{"type": "A", "time": 0}] + [{"type": "B", "time": i} for i in range(1, 41)]
    with pytest.raises(ExecutionError, match=r"more than 1,000 trends.*--strategy greta"):
        run_queries([query], events, "twostep", trend_limit=1000)


@pytest.mark.parametrize("strategy", BOTH)
def test_windows_do_not_leak_state(strategy: str) -> None:
    events = stream("a1 b2 a11 b12 b13")
    rows = run_text("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s", events, strategy)
    assert [(r.window_start, r.values["COUNT(*)"]) for r in rows] == [(0, 1), (10, 3)]


@pytest.mark.parametrize("strategy", BOTH)
def test_edge_predicate_without_a_plain_variable_constrains_every_pair_into_it(
    strategy: str,
) -> None:
    events = stream("a1 a2 a3", a1={"v": 0}, a2={"v": 5}, a3={"v": 0})
    # NEXT(A).v > 1: a pair (x, y) needs y.v > 1; a lone a1 or a3 is still a trend.
    rows = run_text("RETURN COUNT(*) PATTERN A+ WHERE NEXT(A).v > 1 WITHIN 10 s", events, strategy)
    assert counts(rows) == [4]  # a1, a2, a3, (a1, a2)


@pytest.mark.parametrize("strategy", BOTH)
def test_seq_after_slide_larger_than_within_leaves_gaps(strategy: str) -> None:
    rows = run_text(
        "RETURN COUNT(*) PATTERN A+ WITHIN 2 s SLIDE 5 s", stream("a1 a3 a5 a6"), strategy
    )
    assert [(r.window_start, r.window_end, r.values["COUNT(*)"]) for r in rows] == [
        (0, 2, 1),
        (5, 7, 3),
    ]

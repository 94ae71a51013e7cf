"""The worked examples of ../shared/SEMANTICS.md, by name, with every strategy."""

from __future__ import annotations

import pytest

from helpers import run_text, stream, values_of

STRATEGIES = ["greta", "hamlet", "hamlet-static", "twostep"]  # (NOT included: compiled)
STREAM_11 = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nested_kleene_aggregates_a1_b2_a3_a4_b7(strategy: str) -> None:
    events = stream("a1 b2 a3 a4 b7", a1={"attr": 5}, a3={"attr": 6}, a4={"attr": 4})
    rows = run_text(
        "RETURN COUNT(*), COUNT(A), MIN(A.attr), MAX(A.attr), SUM(A.attr), AVG(A.attr) "
        "PATTERN (SEQ(A+, B))+ WITHIN 100 s",
        events,
        strategy,
    )
    assert values_of(rows) == [
        {
            "COUNT(*)": 11,
            "COUNT(A)": 20,
            "MIN(A.attr)": 4,
            "MAX(A.attr)": 6,
            "SUM(A.attr)": 100,
            "AVG(A.attr)": 5.0,
        }
    ]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    ("pattern", "count"),
    [
        ("(SEQ(A+, B))+", 43),
        ("(SEQ(A+, NOT SEQ(C, NOT E, D), B))+", 13),
        ("SEQ(A+, NOT E)", 14),
        ("SEQ(NOT E, A+)", 12),
    ],
)
def test_eleven_event_stream(strategy: str, pattern: str, count: int) -> None:
    rows = run_text(f"RETURN COUNT(*) PATTERN {pattern} WITHIN 100 s", stream(STREAM_11), strategy)
    assert values_of(rows) == [{"COUNT(*)": count}]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(("pattern", "count"), [("SEQ(A, B+)", 30), ("SEQ(C, B+)", 15)])
def test_seq_with_kleene_a1_a2_c3_b4_to_b7(strategy: str, pattern: str, count: int) -> None:
    rows = run_text(
        f"RETURN COUNT(*) PATTERN {pattern} WITHIN 100 s", stream("a1 a2 c3 b4 b5 b6 b7"), strategy
    )
    assert values_of(rows) == [{"COUNT(*)": count}]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_worked_examples_through_one_workload(strategy: str) -> None:
    """All four patterns over the eleven-event stream as one workload of named queries."""
    text = """
    n43: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 100 s;
    n13: RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+ WITHIN 100 s;
    n14: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 100 s;
    n12: RETURN COUNT(*) PATTERN SEQ(NOT E, A+) WITHIN 100 s;
    """
    rows = run_text(text, stream(STREAM_11), strategy)
    assert {r.query: r.values["COUNT(*)"] for r in rows} == {
        "n43": 43,
        "n13": 13,
        "n14": 14,
        "n12": 12,
    }

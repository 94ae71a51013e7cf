"""NEXT conditions and guards (SEMANTICS "Predicates") in the compiled kernel.

A transition with NEXT conditions reads the log of its source vertices and
tests each with a stack program (:mod:`trendagg.kernels.edges`). The generated
workloads put conditions on Kleene loops, on transitions between variables,
across a NOT, inside a negative sub-pattern and as guards (the next event
alone), with arithmetic (``/`` and ``%`` by zero included), words ordered by
code point, a column that holds words and numbers both, OR and AND; queries
without conditions share bursts beside them. Every strategy on the kernel
equals twostep, in one chunk and in chunks of three events with a pool of
one entry that must grow.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_kernels import STRATEGIES, _run
from test_negation import _assert_compiled_equal_twostep, _stream

from helpers import canon
from trendagg.engine import run_strategy
from trendagg.errors import InputError
from trendagg.io import from_records
from trendagg.io.batch import Column
from trendagg.kernels.lower.program import lower
from trendagg.kernels.runtime import executor as kexec
from trendagg.language import parse
from trendagg.optimizer.plan import sharing_plan
from trendagg.plan.compile import compile_workload

# per pattern, NEXT conditions on its adjacent pairs (and guards)
CONDITIONS = {
    "SEQ(A, B+)": [
        "B.x < NEXT(B).x",
        "A.x <= NEXT(B).x",
        "NEXT(B).x > 1",
        "(B.x + NEXT(B).x) % 3 != 0",
        "B.x / NEXT(B).x > 0",
        "B.s < NEXT(B).s",
        "(B.s = NEXT(B).s OR NEXT(B).x - B.x >= 2)",
        "B.y * 2 > NEXT(B).y",
        "B.s != NEXT(B).x",
        "(B.x - NEXT(B).x) % 4 = 3",
        "B.z < NEXT(B).z",  # numbers, NaN and words in one column
        "B.z != NEXT(B).z",
    ],
    "SEQ(A+, B)": ["A.x > NEXT(A).x", "A.s <= NEXT(B).s", "-A.x < NEXT(B).y", "NEXT(A).s > 'a'"],
    "SEQ(A, B+, C)": ["B.x < NEXT(C).x", "NEXT(C).x % 2 = 0", "A.x != NEXT(B).x"],
    "(SEQ(A, B))+": ["B.x > NEXT(A).x", "A.x <= NEXT(B).x", "B.s >= NEXT(A).s"],
    "SEQ(A, NOT D, B+)": ["A.x < NEXT(B).x", "B.x >= NEXT(B).x", "NEXT(B).x != 0"],
    "SEQ(A+, NOT SEQ(C, D), B)": ["C.x < NEXT(D).x", "A.x - NEXT(B).x < 2", "NEXT(D).s = 'b'"],
    "SEQ(B+, NOT C)": ["B.x <= NEXT(B).x"],
}
PLAIN = ["SEQ(A, B+)", "B+", "SEQ(C, B+)"]
AGGREGATES = ["COUNT(B)", "SUM(B.x)", "MIN(B.x)", "MAX(B.y)", "AVG(B.x)", "MIN(A.x)"]
PARTITIONS = [("", ""), ("[g]", ""), ("[g]", "g"), ("[B.g]", "")]


@st.composite
def next_workloads(draw: st.DrawFn) -> tuple[str, list[dict[str, object]]]:
    """Up to four queries, the first with NEXT conditions, with equal or different
    windows and partitions, beside queries without (which may share bursts)."""
    lines = []
    n = draw(st.integers(1, 4))
    equivalence, group = draw(st.sampled_from(PARTITIONS))
    within = draw(st.integers(3, 12))
    slide = draw(st.integers(1, within))
    same = draw(st.booleans())
    for i in range(n):
        pattern = draw(st.sampled_from(sorted(CONDITIONS) if i == 0 else [*CONDITIONS, *PLAIN]))
        where = [equivalence] if equivalence else []
        if pattern in CONDITIONS:
            where += draw(
                st.lists(st.sampled_from(CONDITIONS[pattern]), min_size=1, max_size=3, unique=True)
            )
        items = [group] if group else []
        items.append("COUNT(*)")
        for agg in draw(st.lists(st.sampled_from(AGGREGATES), max_size=2, unique=True)):
            if agg[agg.index("(") + 1] in pattern.replace("NOT", ""):
                items.append(agg)
        if not same:
            within = draw(st.integers(3, 12))
            slide = draw(st.integers(1, within))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        by = f" GROUP-BY {group}" if group else ""
        lines.append(
            f"q{i}: RETURN {', '.join(items)} PATTERN {pattern}{clause}{by} "
            f"WITHIN {within} s SLIDE {slide} s;"
        )
    return "\n".join(lines), _events(draw)


def _events(draw: st.DrawFn) -> list[dict[str, object]]:
    """Up to 22 events at times 0..20: x an integer (0 included: x / 0), y a decimal, s
    mostly a word and sometimes a number (a column of both kinds), g a key."""
    events = []
    for _ in range(draw(st.integers(0, 22))):
        event: dict[str, object] = {
            "type": draw(st.sampled_from("AABBBCD")),
            "time": draw(st.integers(0, 20)),
            "g": draw(st.integers(0, 1)),
            "x": draw(st.integers(-3, 6)),
            "y": draw(st.sampled_from([-1.5, 0.25, 2.0, 3.5])),
        }
        s = draw(st.sampled_from(["a", "b", "ab", "B", "", 1, None]))
        if s is not None:
            event["s"] = s
        event["z"] = draw(st.sampled_from([1.5, 2, float("nan"), "w"]))
        events.append(event)
    return events


@given(next_workloads())
def test_next_conditions_run_compiled_and_equal_twostep(
    monkeypatch: pytest.MonkeyPatch, case: tuple[str, list[dict[str, object]]]
) -> None:
    text, records = case
    _assert_compiled_equal_twostep(monkeypatch, text, records)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_down_trends_count_only_falling_pairs(strategy: str) -> None:
    """Prices 5, 3, 4, 1 at times 1-4: the falling trends of S+ are the single events
    (4), (5,3), (5,4), (5,1), (3,1), (4,1), (5,3,1), (5,4,1): 11; MIN over them 1."""
    prices = {"s1": 5, "s2": 3, "s3": 4, "s4": 1}
    records = _stream("s1 s2 s3 s4", **{k: {"p": v} for k, v in prices.items()})
    text = "RETURN COUNT(*), MIN(S.p) PATTERN S+ WHERE S.p > NEXT(S).p WITHIN 10 s"
    (row,) = _run(text, records, strategy)
    assert row.values == {"COUNT(*)": 11, "MIN(S.p)": 1}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_guard_leaves_the_event_its_start(strategy: str) -> None:
    """NEXT(B).x > 1 constrains every pair that ends at a B: b3 (x=0) extends nothing
    but still starts trends; (b1), (b3), (b1, b5), (b5), (b3, b5): 5."""
    records = _stream("b1 b3 b5", b1={"x": 2}, b3={"x": 0}, b5={"x": 4})
    text = "RETURN COUNT(*) PATTERN B+ WHERE NEXT(B).x > 1 WITHIN 10 s"
    (row,) = _run(text, records, strategy)
    assert row.values == {"COUNT(*)": 5}
    assert canon(_run(text, records, strategy)) == canon(_run(text, records, "twostep"))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_words_compare_by_code_point_and_never_with_numbers(strategy: str) -> None:
    """'B' < 'a' < 'ab' by code point; a number and a word are only unequal: with
    s = 'ab', 'B', 7, 'a' at times 1-4, rising pairs are ('B','a') only, so S+ has the
    4 single events and (B, a): 5; with != every pair of different values counts."""
    records = _stream("s1 s2 s3 s4", s1={"s": "ab"}, s2={"s": "B"}, s3={"s": 7}, s4={"s": "a"})
    text = "RETURN COUNT(*) PATTERN S+ WHERE S.s < NEXT(S).s WITHIN 10 s"
    (row,) = _run(text, records, strategy)
    assert row.values == {"COUNT(*)": 5}
    text = "RETURN COUNT(*) PATTERN S+ WHERE S.s != NEXT(S).s WITHIN 10 s"
    assert canon(_run(text, records, strategy)) == canon(_run(text, records, "twostep"))
    (row,) = _run(text, records, strategy)
    assert row.values == {"COUNT(*)": 15}  # all values differ: every subsequence


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_division_and_modulo_by_zero_make_the_comparison_false(strategy: str) -> None:
    """x = 4, 0, 2: 4 / 0 and 4 % 0 are undefined (false), 0 / 2 = 0 and 4 / 2 = 2."""
    records = _stream("s1 s2 s3", s1={"x": 4}, s2={"x": 0}, s3={"x": 2})
    for cond, count in (("S.x / NEXT(S).x >= 0", 5), ("S.x % NEXT(S).x = 0", 5)):
        text = f"RETURN COUNT(*) PATTERN S+ WHERE {cond} WITHIN 10 s"
        (row,) = _run(text, records, strategy)
        # singles 3, (s1, s3), (s2, s3); never (s1, s2)
        assert row.values == {"COUNT(*)": count}, cond


VALUE_RULES = [
    "S.x % NEXT(S).x = 1",  # Python's modulo takes the divisor's sign: -3 % 2 = 1
    "(S.x - NEXT(S).x) % 4 = 3",
    "S.y % NEXT(S).x < 0",  # a decimal modulo a negative integer
    "S.x / NEXT(S).x < -0.5",
    "-S.x * 2 >= NEXT(S).y - 1",
    "(S.x > NEXT(S).x OR NEXT(S).s = 'b')",
    "(S.x > NEXT(S).x AND (NEXT(S).s = 'b' OR S.s < NEXT(S).s))",
    "S.s >= NEXT(S).s",
    "S.s = NEXT(S).x",  # a word never equals a number
    "S.y = NEXT(S).x",  # 2.0 equals 2
    "S.x + 0.5 > NEXT(S).y",
    "NEXT(S).x - 1 > S.x",
    "S.z < NEXT(S).z",  # (an ordered index: numbers, words, and NaN and true apart)
    "S.z != NEXT(S).z",
    "S.z = NEXT(S).z",
    "S.z >= NEXT(S).x",
]


@pytest.mark.parametrize("cond", VALUE_RULES)
def test_value_rules_equal_the_python_engine(cond: str) -> None:
    """Each condition over x = -3, 2, 0, 5, -1, 4 (with decimals y and words or numbers s)
    gives the reference engine's counts, every strategy and every window."""
    xs = [-3, 2, 0, 5, -1, 4]
    ys = [2.0, -1.5, 0.25, 3.5, 2.0, -0.75]
    ss: list[object] = ["b", "ab", 2, "B", "b", "a"]
    zs: list[object] = [1.5, float("nan"), "w", True, 2, 1.5]
    records = [
        {"type": "S", "time": t, "x": x, "y": y, "s": s, "z": z}
        for t, (x, y, s, z) in enumerate(zip(xs, ys, ss, zs, strict=True))
    ]
    text = f"RETURN COUNT(*), SUM(S.x) PATTERN S+ WHERE {cond} WITHIN 4 s SLIDE 1 s"
    expected = canon(_run(text, records, "greta", compiled=False))
    assert expected == canon(_run(text, records, "twostep"))
    for strategy in STRATEGIES:
        assert canon(_run(text, records, strategy)) == expected, strategy


def test_integer_arithmetic_beyond_2_53_stops_with_the_reason() -> None:
    records = _stream("s1 s2", s1={"x": 2**52}, s2={"x": 2**52})
    text = "RETURN COUNT(*) PATTERN S+ WHERE S.x + NEXT(S).x > 0 WITHIN 10 s"
    with pytest.raises(InputError, match=r"computes an integer beyond 2\*\*53.*--engine reference"):
        _run(text, records, "greta")
    assert _run(text, records, "greta", compiled=False)[0].values == {"COUNT(*)": 3}
    with pytest.raises(InputError, match=r"beyond 2\*\*53"):
        _run(text, _stream("s1 s2", s1={"x": 2**60}, s2={"x": 1}), "greta")


def test_states_with_next_conditions_share_no_burst_but_keep_their_classes() -> None:
    """q0 and q1 have the same condition on B: one class; q2's B has none and shares
    B's bursts with q3's; a condition's source state (A of q4) is logged and is merged
    only with sources."""
    text = "\n".join(
        [
            "q0: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] AND B.x < NEXT(B).x WITHIN 10 s;",
            "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] AND B.x < NEXT(B).x WITHIN 10 s;",
            "q2: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] WITHIN 10 s;",
            "q3: RETURN COUNT(*) PATTERN SEQ(C, B+) WHERE [g] WITHIN 10 s;",
            "q4: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] AND A.x < NEXT(B).x WITHIN 10 s;",
        ]
    )
    plans = compile_workload(parse(text))
    plan = sharing_plan(plans, "hamlet")
    assert plan.on("python") == []
    (burst,) = plan.bursts
    assert burst.members == (("q2", "B"), ("q3", "B"))
    low = lower(plans, plan)
    members = sorted(sorted(m) for m in low.class_members)
    assert [("q0", "B"), ("q1", "B")] in members
    assert [("q0", "A"), ("q1", "A"), ("q2", "A")] in members  # read from their totals
    assert [("q4", "A")] in members  # logged: its vertices are read one by one


def test_indexable_conditions_read_an_ordered_index_and_the_rest_a_log() -> None:
    """One condition key(x) op query(y) on no NOT: an index (one per source class and
    key, shared by the queries that compare with it); two conditions, or one across
    a NOT, or another shape: the source's log."""
    text = "\n".join(
        [
            "q0: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x < NEXT(B).x WITHIN 10 s;",
            "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x >= NEXT(B).x * 2 WITHIN 10 s;",
            "q2: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x + NEXT(B).x > 0 WITHIN 10 s;",
            "q3: RETURN COUNT(*) PATTERN SEQ(A, NOT D, B) WHERE A.x < NEXT(B).x WITHIN 10 s;",
        ]
    )
    plans = compile_workload(parse(text))
    program = lower(plans, sharing_plan(plans, "hamlet")).program
    assert len(program.ix_q) == 1  # q0 and q1 compare with the key A.x of one class
    assert sum(program.nt_log) == 2  # q2's B (a sum of both), q3's A (across the NOT)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_ranked_extremes_in_logs_and_indexes_follow_new_values(
    monkeypatch: pytest.MonkeyPatch, strategy: str
) -> None:
    """MIN/MAX over words are ranks; log entries and index nodes hold them too, so a
    chunk with new words replays the open windows with every word ranked (rather than
    renumbering registers that the queues hold)."""
    words = ["m", "c", "x", "a", "q", "b", "z", "d"]
    records = [
        {"type": "S", "time": t, "w": w, "x": t % 3} for t, w in enumerate(words + words[::-1])
    ]
    for cond in ("S.x <= NEXT(S).x", "S.x + NEXT(S).x > 1", "S.w < NEXT(S).w"):
        text = f"RETURN COUNT(*), MIN(S.w), MAX(S.w) PATTERN S+ WHERE {cond} WITHIN 6 s SLIDE 2 s"
        expected = canon(_run(text, records, "twostep"))
        with monkeypatch.context() as m:
            m.setattr(kexec, "CHUNK", 3)
            assert canon(_run(text, records, strategy)) == expected, cond


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nan_keys_are_ordered_with_nothing_and_unequal_to_everything(strategy: str) -> None:
    """A float column with NaN (as Parquet may hold): NaN is a number that no comparison
    but != holds for, on either side of the pair; the index keeps such keys apart."""
    zs = [1.5, np.nan, 2.0, np.nan, 0.5, 3.0]
    batch = from_records([{"type": "S", "time": t, "x": 1} for t in range(len(zs))]).events
    z = Column("float", np.array(zs), np.ones(len(zs), dtype=bool), None)
    batch = replace(batch, columns={**batch.columns, "z": z})
    for cond in ("S.z != NEXT(S).z", "S.z < NEXT(S).z", "S.z = NEXT(S).z", "S.z + 1 != NEXT(S).z"):
        plans = compile_workload(parse(f"RETURN COUNT(*) PATTERN S+ WHERE {cond} WITHIN 4 s"))
        expected = canon(run_strategy(plans, batch, "greta", compiled=False))
        assert canon(run_strategy(plans, batch, strategy)) == expected, cond
    plans = compile_workload(parse("RETURN COUNT(*) PATTERN S+ WHERE S.z != NEXT(S).z WITHIN 10 s"))
    (row,) = run_strategy(plans, batch, strategy)
    # every pair differs (NaN equals nothing, no other value repeats): every subsequence
    assert row.values == {"COUNT(*)": 2**6 - 1}

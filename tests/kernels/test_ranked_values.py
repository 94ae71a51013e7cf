"""The compiled engine aggregates what the Python engines do, whatever the values.

MIN and MAX over integers a float64 cannot tell apart (near and beyond 2**53,
beyond int64, negative ones) and over words run in the kernel on ranks
(:mod:`trendagg.kernels.runtime.ranks`): equal to twostep and to the Python engines in
one batch, in kernel chunks of three events (new values renumber the open
windows' registers) and fed to a Runner cut anywhere with watermarks. A SUM
over a word stops the kernel with the Python engines' very error. The route of
a query never changes: before, each of these cases moved the query to the
Python engine on the first chunk, or stopped on a later one.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_kernels import (
    PATTERNS,
    STRATEGIES,
    _run,
    assert_equal_twostep_in_chunks,
    fed_in_cuts,
)

from helpers import canon
from trendagg.engine import Runner
from trendagg.errors import ExecutionError
from trendagg.io import from_records
from trendagg.language import parse
from trendagg.plan.compile import compile_workload

# each plus -3..6: neighbours that one float64 holds as one number (2**53 + 1 is
# 2**53), values beyond int64 (Python ints of a mixed column), negative ones
BIG = [2**53 - 2, 2**53, -(2**53) - 3, 2**62, 2**63 - 4, -(2**63) + 2, 2**64, -(2**70)]
WORDS = ["pear", "apple", "Apple", "fig", "äpfel", "zz", "a b", "fig2"]


def values(kind: str) -> st.SearchStrategy[object]:
    """The x of an event: integers near and beyond 2**53 and int64 (``big``), or words."""
    if kind == "big":
        return st.tuples(st.sampled_from(BIG), st.integers(-3, 6)).map(sum)
    return st.sampled_from(WORDS)


@st.composite
def ranked_workloads(draw: st.DrawFn, kind: str) -> tuple[str, list[dict[str, object]]]:
    """Up to four queries with MIN/MAX over x (``kind``: big integers or words) and over
    a small integer y, partitioned differently (so the registers of x in one
    partitioning's rows share columns with those of y in another's), and their events."""
    aggregates = ["MIN(B.x)", "MAX(B.x)", "MIN(B.y)", "MAX(A.x)", "COUNT(B)", "MAX(B.y)"]
    if kind == "big":
        aggregates += ["SUM(B.x)", "AVG(B.x)"]
    lines = []
    for i in range(draw(st.integers(1, 4))):
        pattern = draw(st.sampled_from(PATTERNS))
        items = ["COUNT(*)"]
        for agg in draw(st.lists(st.sampled_from(aggregates), min_size=1, max_size=3)):
            if agg[agg.index("(") + 1] in pattern and agg not in items:
                items.append(agg)
        partition = draw(st.sampled_from(["", "[g]", "[g, h]"]))
        where = [partition] if partition else []
        if kind == "big" and "B" in pattern and draw(st.booleans()):
            where.append(f"B.x > {2**53}")
        within = draw(st.integers(3, 12))
        slide = draw(st.integers(1, within))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        lines.append(
            f"q{i}: RETURN {', '.join(items)} PATTERN {pattern}{clause} "
            f"WITHIN {within} s SLIDE {slide} s;"
        )
    events = []
    for _ in range(draw(st.integers(0, 16))):
        event: dict[str, object] = {
            "type": draw(st.sampled_from("ABCD")),
            "time": draw(st.integers(0, 20)),
            "g": draw(st.integers(0, 1)),
            "h": draw(st.integers(0, 1)),
            "y": draw(st.integers(-3, 6)),
        }
        if draw(st.integers(0, 5)):
            event["x"] = draw(values(kind))
        events.append(event)
    return "\n".join(lines), events


@pytest.mark.parametrize("kind", ["big", "words"])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_ranked_extremes_equal_twostep(
    monkeypatch: pytest.MonkeyPatch, kind: str, data: st.DataObject
) -> None:
    """In one batch and in kernel chunks of three events (each chunk may bring values
    the ranks lack), every strategy equals twostep and the Python engine."""
    text, records = data.draw(ranked_workloads(kind))
    assert_equal_twostep_in_chunks(monkeypatch, text, records)


@pytest.mark.parametrize("kind", ["big", "words"])
@settings(max_examples=60, deadline=None)
@given(data=st.data(), cuts=st.lists(st.integers(0, 16), max_size=4))
def test_ranked_extremes_fed_in_chunks_equal_one_batch(
    kind: str, data: st.DataObject, cuts: list[int]
) -> None:
    """Any cuts into Runner chunks, with watermarks between them: the first chunk may
    hold small integers only (the attribute switches to ranks later, replaying the
    open windows), and a later one values between those ranked before."""
    text, records = data.draw(ranked_workloads(kind))
    records = sorted(records, key=lambda r: r["time"])  # type: ignore[arg-type, return-value]
    plans = compile_workload(parse(text))
    expected = canon(_run(text, records, "twostep"))
    for strategy in STRATEGIES:
        runner = Runner(plans, strategy)
        assert runner.executor is None  # routed by the plan: every query compiled
        assert canon(fed_in_cuts(runner, records, cuts)) == expected, strategy


EXTREMES = "q: RETURN MIN(B.x), MAX(B.x), COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s"


def _feed(text: str, chunks: list[list[dict[str, object]]], **kw: Any) -> list[Any]:
    runner = Runner(compile_workload(parse(text)), "hamlet", **kw)
    rows = []
    for chunk in chunks:
        rows += runner.feed(from_records(chunk).events)
    return rows + runner.finish()


def test_words_after_numbers_in_a_later_chunk() -> None:
    """Numbers in the first chunk's windows, words in a later one's: each window shows
    its own kind, as in the Python engine (a word never meets a number there)."""
    first: list[dict[str, object]] = [
        {"type": "A", "time": 0},
        {"type": "B", "time": 1, "x": 2**53 + 1},
        {"type": "B", "time": 2, "x": 2**53},
    ]
    later: list[dict[str, object]] = [
        {"type": "A", "time": 20},
        {"type": "B", "time": 21, "x": "pear"},
        {"type": "B", "time": 22, "x": "Apple"},
        {"type": "B", "time": 23, "x": "apple"},
    ]
    expected = [
        {"MIN(B.x)": 2**53, "MAX(B.x)": 2**53 + 1, "COUNT(*)": 3},
        {"MIN(B.x)": "Apple", "MAX(B.x)": "pear", "COUNT(*)": 7},
    ]
    assert [r.values for r in _feed(EXTREMES, [first, later], compiled=False)] == expected
    for chunks in ([first, later], [first + later], [first[:2], first[2:] + later[:2], later[2:]]):
        assert [r.values for r in _feed(EXTREMES, chunks)] == expected


def test_new_words_between_ranked_ones_renumber_open_windows() -> None:
    """Words arriving one per chunk, each between or around the ones before, while the
    windows stay open: the ranks held by the registers move with them. Ranks of closed
    windows are let go, so the ranks held stay few however many words come."""
    records: list[dict[str, object]] = [{"type": "A", "time": 0}]
    for i, word in enumerate(["m", "f", "t", "a", "z", "g", "n", "b"]):
        records.append({"type": "B", "time": 1 + i, "x": word})
    expected = [r.values for r in _run(EXTREMES, records, "twostep")]
    assert expected == [{"MIN(B.x)": "a", "MAX(B.x)": "z", "COUNT(*)": 255}]
    assert [r.values for r in _feed(EXTREMES, [[r] for r in records])] == expected
    runner = Runner(compile_workload(parse(EXTREMES)), "hamlet")
    for k in range(60):  # a new pair of words in each 10 s window
        runner.feed(from_records([{"type": "A", "time": 10 * k}]).events)
        runner.feed(from_records([{"type": "B", "time": 10 * k + 1, "x": f"w{k:03}"}]).events)
    assert len(runner.compiled._ranks["x"]) <= 4


def test_a_sum_over_a_word_stops_with_the_python_engines_error() -> None:
    """In the first chunk or a later one, the kernel stops with the message of the
    Python engines (reference.registers.exact), naming the value."""
    text = "q: RETURN SUM(B.x), COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s"
    numbers: list[dict[str, object]] = [{"type": "A", "time": 0}, {"type": "B", "time": 1, "x": 4}]
    word: list[dict[str, object]] = [{"type": "B", "time": 2, "x": "pear"}]
    for chunks in ([numbers + word], [numbers, word]):
        messages = set()
        for strategy in ("greta", "hamlet", "hamlet-static"):
            for compiled in (True, False):
                runner = Runner(compile_workload(parse(text)), strategy, compiled=compiled)
                assert (runner.compiled is not None) == compiled
                with pytest.raises(ExecutionError) as error:
                    for chunk in chunks:
                        runner.feed(from_records(chunk).events)
                    runner.finish()
                messages.add(str(error.value))
        assert messages == {
            "cannot sum 'pear': it is not a number. Read events with read_events(..., "
            "numeric=...) or the CLI, which reject such rows and can write them out with "
            "--rejects."
        }
    avg = text.replace("SUM", "AVG")
    with pytest.raises(ExecutionError, match="cannot sum 'pear'"):
        _run(avg, numbers + word, "greta")


def test_words_where_no_variable_reads_them_are_no_error() -> None:
    """x holds words on C events and numbers on B events: a SUM and a MIN over B.x
    read numbers only (a column of both kinds), in the kernel as in twostep."""
    text = "q: RETURN SUM(B.x), MIN(B.x), MAX(B.x) PATTERN SEQ(A, B+) WITHIN 10 s"
    records: list[dict[str, object]] = [
        {"type": "A", "time": 0},
        {"type": "C", "time": 1, "x": "pear"},
        {"type": "B", "time": 2, "x": 3},
        {"type": "B", "time": 3, "x": 2**53 + 1},
    ]
    expected = [{"SUM(B.x)": 2 * (3 + 2**53 + 1), "MIN(B.x)": 3, "MAX(B.x)": 2**53 + 1}]
    assert [r.values for r in _run(text, records, "twostep")] == expected
    for strategy in STRATEGIES:
        assert [r.values for r in _run(text, records, strategy)] == expected, strategy


def test_numbers_pay_nothing() -> None:
    """An attribute of numbers a float64 holds exactly is never ranked."""
    runner = Runner(compile_workload(parse(EXTREMES)), "hamlet")
    records = [{"type": "A", "time": 0}, {"type": "B", "time": 1, "x": 2**53}]
    runner.feed(from_records([*records, {"type": "B", "time": 2, "x": -1.5}]).events)
    assert [r.values for r in runner.finish()] == [
        {"MIN(B.x)": -1.5, "MAX(B.x)": 2**53, "COUNT(*)": 3}
    ]
    assert runner.compiled._ranks == {} and runner.compiled.rebuilds <= 1


def test_a_word_meeting_a_number_ranks_after_it() -> None:
    """Where one window's MIN or MAX meets a word and a number, every engine ranks the
    numbers before the words (README, Semantics): the kernel's ranks and the Python
    engines' comparisons (plan.layout.before) agree, and twostep says the same."""
    records: list[dict[str, object]] = [
        {"type": "A", "time": 0},
        {"type": "B", "time": 1, "x": "pear"},
        {"type": "B", "time": 2, "x": 2**60},
        {"type": "B", "time": 3, "x": "apple"},
        {"type": "B", "time": 4, "x": -0.5},
    ]
    expected = [{"MIN(B.x)": -0.5, "MAX(B.x)": "pear", "COUNT(*)": 15}]
    assert [r.values for r in _run(EXTREMES, records, "twostep", compiled=False)] == expected
    for strategy in STRATEGIES:
        for compiled in (False, True):
            rows = _run(EXTREMES, records, strategy, compiled=compiled)
            assert [r.values for r in rows] == expected, (strategy, compiled)

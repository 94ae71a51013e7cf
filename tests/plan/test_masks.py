"""Vertex predicates on whole columns (plan.masks, the compiled engine's filters) bind
exactly the events the predicates' own closures accept, one event at a time: numbers,
words (text columns against words and against each other), a word meeting a number,
arithmetic, AND and OR, mixed columns."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trendagg.io.batch import EventBatch
from trendagg.kernels.lower.builder import Filter
from trendagg.language import parse
from trendagg.plan.compile import compile_workload
from trendagg.plan.masks import filter_mask

CONDITIONS = [
    "a.s = 'b'",
    "a.s != 'b'",
    "a.s < 'c'",
    "a.s >= 'b'",
    "'b' < a.s",
    "a.s <> 'zz'",
    "a.s = a.t",
    "a.s < a.t",
    "a.s != a.x",
    "a.s = a.x",
    "a.x < a.s",
    "a.s = 3",
    "a.s != 3",
    "a.x + 1 > a.s",
    "a.x * 2 = a.y",
    "a.x > 2 AND a.s = 'a'",
    "(a.s = 'a' OR a.x < 0)",
    "a.m = 'b'",
    "a.m > 1",
    "a.f <= a.x",
    "-a.x < a.f",
]
_WORDS = st.sampled_from(["a", "b", "c", "ab", "", "Z"])
_EVENT = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["A", "A", "B"]),
        "s": st.one_of(st.none(), _WORDS),
        "t": _WORDS,
        "x": st.integers(-5, 5),
        "y": st.one_of(st.none(), st.integers(-10, 10)),
        "f": st.floats(-5, 5, allow_nan=False),
        "m": st.one_of(st.none(), _WORDS, st.integers(-3, 3)),
    }
)


@given(st.lists(_EVENT, max_size=30), st.lists(st.sampled_from(CONDITIONS), min_size=1, max_size=3))
def test_columns_bind_what_the_closures_accept(
    events: list[dict[str, object]], conditions: list[str]
) -> None:
    text = f"q: RETURN COUNT(*) PATTERN A a WHERE {' AND '.join(conditions)} WITHIN 10 s;"
    info = compile_workload(parse(text))[0].vars["a"]
    rule = Filter(info.type, tuple(sorted(info.required)), tuple(info.local), None)
    names = ["s", "t", "x", "y", "f", "m"]
    columns = {name: [e[name] for e in events] for name in names}
    batch = EventBatch.of([str(e["type"]) for e in events], list(range(len(events))), columns)
    expected = [
        kind == "A"
        and all(name in attrs for name in info.required)
        and all(p(attrs) for p in info.local)
        for kind, _, attrs in batch.records()
    ]
    assert filter_mask(batch, rule).tolist() == expected


def test_a_word_and_a_number_are_only_unequal() -> None:
    events = EventBatch.of(["A", "A", "A"], [0, 1, 2], {"s": ["3", "b", "3"], "x": [3, 3, 4]})
    for condition, expected in [
        ("a.s = a.x", [False, False, False]),
        ("a.s != a.x", [True, True, True]),
        ("a.s < a.x", [False, False, False]),
        ("a.s = '3'", [True, False, True]),
        ("a.s > 'a'", [False, True, False]),
    ]:
        text = f"q: RETURN COUNT(*) PATTERN A a WHERE {condition} WITHIN 10 s;"
        info = compile_workload(parse(text))[0].vars["a"]
        rule = Filter(info.type, tuple(sorted(info.required)), tuple(info.local), None)
        assert filter_mask(events, rule).tolist() == expected, condition

"""Result rows made many at a time (``RowMaker.rows``, ``io.results.result_rows``)
are the rows made one at a time: equal, with the same registers, window, types and
field order, for every kind of output and window."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from trendagg.io.results import ResultRow, result_rows
from trendagg.language import parse
from trendagg.plan.compile import compile_workload
from trendagg.plan.layout import RowMaker


def _state(row: ResultRow) -> list[tuple[str, object, str]]:
    """Each field's name, value and the repr of its value (1 and 1.0 differ there)."""
    return [(k, v, repr(v)) for k, v in vars(row).items()]


def test_result_rows_are_the_rows_the_constructor_makes() -> None:
    groups = [{"g": 1}, {"g": "x"}]
    values = [{"n": 3, "s": None}, {"n": 1.5, "s": Fraction(1, 3)}]
    made = result_rows("q", [0, 0.5], [1, 1.5], groups, values, [(3,), (1, 2)], [0, 1])
    expected = [
        ResultRow("q", 0, 1, {"g": 1}, {"n": 3, "s": None}, (3,), 0),
        ResultRow("q", 0.5, 1.5, {"g": "x"}, {"n": 1.5, "s": Fraction(1, 3)}, (1, 2), 1),
    ]
    assert made == expected
    assert [_state(r) for r in made] == [_state(r) for r in expected]
    # every field of the class is set (a new field must be added to result_rows)
    names = [f.name for f in dataclasses.fields(ResultRow)]
    assert [list(vars(r)) for r in made] == [names, names]
    assert made[0].group is groups[0]  # the caller's dicts, as the constructor keeps them


def test_rows_equal_one_row_at_a_time() -> None:
    plans = compile_workload(
        parse(
            "q1: RETURN g, COUNT(*) AS n, COUNT(A) AS a, SUM(A.v), AVG(A.v), MIN(A.v), "
            "MAX(A.w) PATTERN SEQ(A+, B) WHERE [g] GROUP-BY g WITHIN 1.5 s SLIDE 0.5 s;\n"
            "q2: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s SLIDE 5 s;\n"
        )
    )
    for plan in plans:
        size = plan.layout.size
        windows = [3, -2, 3, 7]
        groups = [(1,), (2.5,), ("x",), (1,)] if plan.group_names else [()] * 4
        vectors = [
            [5, 2, Fraction(7, 2), 9, 4.5][:size],
            [0, 0, 0, None, None][:size],
            [2**70, 3, -4, -1, "w"][:size],
            [1, 1, Fraction(-1, 3), Fraction(1, 3), 2][:size],
        ]
        vectors = [v + [None] * (size - len(v)) for v in vectors]
        columns = [list(c) for c in zip(*vectors, strict=True)]
        one = RowMaker(plan)
        expected = [one(k, g, list(v)) for k, g, v in zip(windows, groups, vectors, strict=True)]
        made = RowMaker(plan).rows(windows, groups, columns)
        assert made == expected
        assert [_state(r) for r in made] == [_state(r) for r in expected]
